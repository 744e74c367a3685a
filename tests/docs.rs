//! The docs as a manual (`make test-docs` runs this file; so does `cargo
//! test`):
//!
//! - every name of this project a page gives exists: files and folders
//!   (paths under the repository's own top-level entries, relative links),
//!   make targets (`make X`), the C API (`ksym_*`, `KSYM_*`: include/ksym.h
//!   or, for environment variables, the sources), the bundled loader's
//!   `kl_*` (tools/bpf_loader.h, tools/bpf_multi.h), the Rust API (`ksym::x`, `Type::member`),
//!   the CLI's options (`ksym ... --x`: tools/cli.c's table), other options
//!   (`--x`) and variables (`NAME=`) in the sources. Other projects' names
//!   (libbpf's, the kernel's, bcc's) are quotations and not checked.
//!   CHANGELOG.md is history: it may name what is gone.
//! - every measured figure (a number with a unit of time, size or rate, or
//!   a ratio written with x or ×) appears on one page only (README.md,
//!   HACKING.md, CHANGELOG.md, docs/*.md): docs/performance.md holds them,
//!   but for the bpftrace fork's and libksym-bcc's own pages, and other
//!   pages link to it. Not figures: the bounds of docs/limits.md's "Bounds
//!   on input" table (defined there, quoted where they apply) and the
//!   kernel's constants in `CONSTANTS`.
//!
//! Each failure names the page, the line and what is wrong.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// Kernel constants pages quote, not measurements: the largest struct the
/// BPF trampoline passes by value, and a page.
const CONSTANTS: &[&str] = &["16 B", "4 KiB"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pages: the README, HACKING.md, c-tests/README.md, docs/*.md and,
/// for figures only, CHANGELOG.md.
fn pages(with_changelog: bool) -> Vec<PathBuf> {
    let r = root();
    let mut v = vec![
        r.join("README.md"),
        r.join("HACKING.md"),
        r.join("c-tests/README.md"),
    ];
    if with_changelog {
        v.push(r.join("CHANGELOG.md"));
    }
    let mut docs: Vec<PathBuf> = std::fs::read_dir(r.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The repository's files (relative paths), without what is built or
/// generated (target/, build/, .git/).
fn repo_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.parent() == Some(&root()) && matches!(name.as_str(), "target" | "build" | ".git") {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                walk(&p, out);
            } else {
                out.push(rel(&p));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &mut out);
    out.sort();
    out
}

/// Every word (letters, digits, `_`, `-`) of the repository's text files
/// that are not pages: where a name must occur to exist.
fn source_words(files: &[String]) -> HashSet<String> {
    let mut words = HashSet::new();
    for f in files {
        if f.ends_with(".md") || f.starts_with("tests/data/") {
            continue;
        }
        let Ok(bytes) = std::fs::read(root().join(f)) else {
            continue;
        };
        if bytes.iter().take(8192).any(|&b| b == 0) {
            continue; // binary
        }
        for w in String::from_utf8_lossy(&bytes)
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| !w.is_empty())
        {
            words.insert(w.trim_start_matches('-').to_string());
            words.insert(w.to_string());
        }
    }
    words
}

/// The text of a page as (line number, text, is inline code or code block),
/// prose included as (line, text, false).
struct Piece {
    line: usize,
    text: String,
    code: bool,
}

fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            out.push(Piece {
                line: n,
                text: line.to_string(),
                code: true,
            });
            continue;
        }
        // Inline code: a run of backticks opens, the same run closes.
        let b = line.as_bytes();
        let mut k = 0;
        let mut prose = String::new();
        while k < b.len() {
            if b[k] == b'`' {
                let run = b[k..].iter().take_while(|&&c| c == b'`').count();
                let fence = &line[k..k + run];
                if let Some(end) = line[k + run..].find(fence) {
                    let inner = &line[k + run..k + run + end];
                    out.push(Piece {
                        line: n,
                        text: inner.trim().to_string(),
                        code: true,
                    });
                    k += run + end + run;
                    continue;
                }
                k += run;
                continue;
            }
            prose.push(b[k] as char);
            k += 1;
        }
        out.push(Piece {
            line: n,
            text: prose,
            code: false,
        });
    }
    out
}

/// Inline code spanning a line break is two pieces; the spans of a page are
/// also taken whole across lines for `Type::member` and options.
fn identifiers(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

struct Project {
    files: Vec<String>,
    top: BTreeSet<String>,
    words: HashSet<String>,
    header: HashSet<String>,
    loader: HashSet<String>,
    cli_options: HashSet<String>,
    fork_files: HashSet<String>,
    make_targets: HashSet<String>,
    rust_root: HashSet<String>,
    rust_items: HashSet<String>,
    rust_members: HashSet<String>,
}

fn word_set(path: &str) -> HashSet<String> {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    identifiers(&text).map(String::from).collect()
}

fn project() -> Project {
    let files = repo_files();
    let top = std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !matches!(n.as_str(), "target" | "build" | ".git"))
        .collect();
    let words = source_words(&files);
    // The CLI's options: every "--name" of tools/cli.c (its option table,
    // and --help and --help-markdown, which it handles itself).
    let cli = std::fs::read_to_string(root().join("tools/cli.c")).unwrap();
    let cli_options = cli
        .match_indices("\"--")
        .map(|(i, _)| {
            let s = &cli[i + 1..];
            s[..s.find('"').unwrap()].to_string()
        })
        .collect();
    // The bpftrace fork's files: what its patches create or change (in
    // bpftrace's tree, not this one).
    let mut fork_files = HashSet::new();
    for f in files.iter().filter(|f| f.starts_with("bpftrace/patches/")) {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        for line in text.lines() {
            if let Some(path) = line.strip_prefix("+++ b/") {
                fork_files.insert(path.split_whitespace().next().unwrap().to_string());
            }
        }
    }
    // Make's targets, as make reads the Makefile and mk/*.mk.
    let out = std::process::Command::new("make")
        .args(["-pRrq", "-f", "Makefile", "--no-print-directory", ":"])
        .current_dir(root())
        .output()
        .expect("make -p");
    let db = String::from_utf8_lossy(&out.stdout);
    let mut make_targets = HashSet::new();
    let mut not_target = false;
    for line in db.lines() {
        if line.starts_with("# Not a target") {
            not_target = true;
            continue;
        }
        if line.is_empty() || line.starts_with('#') || line.starts_with('\t') {
            not_target &= !line.is_empty();
            continue;
        }
        if let Some((names, rest)) = line.split_once(':') {
            if !rest.starts_with('=') && !not_target && !names.contains('=') {
                make_targets.extend(names.split_whitespace().map(String::from));
            }
        }
        not_target = false;
    }
    assert!(
        make_targets.contains("test-docs"),
        "make -p listed no targets:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The Rust API: the crate root's public names, every public item and
    // member of src/.
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let mut rust_root = HashSet::new();
    for line in lib.lines() {
        if let Some(m) = line.strip_prefix("pub mod ") {
            rust_root.insert(identifiers(m).next().unwrap().to_string());
        }
    }
    for stmt in lib.split(';') {
        if let Some(u) = stmt.split("pub use ").nth(1) {
            let u = u.replace(['{', '}', '\n'], " ");
            for part in u.split(',') {
                let name = part.split(" as ").last().unwrap().trim();
                let name = name.rsplit("::").next().unwrap().trim();
                if !name.is_empty() {
                    rust_root.insert(name.to_string());
                }
            }
        }
    }
    let (mut rust_items, mut rust_members) = (HashSet::new(), HashSet::new());
    for f in files
        .iter()
        .filter(|f| f.starts_with("src/") && f.ends_with(".rs"))
    {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        for line in text.lines() {
            let t = line.trim_start();
            let Some(rest) = t
                .strip_prefix("pub ")
                .or_else(|| t.strip_prefix("pub(crate) "))
            else {
                continue;
            };
            let mut w = identifiers(rest);
            match w.next() {
                Some("fn" | "struct" | "enum" | "mod" | "type" | "trait" | "const" | "static") => {
                    if let Some(name) = w.next() {
                        rust_items.insert(name.to_string());
                        rust_members.insert(name.to_string());
                    }
                }
                Some("use") => rust_items.extend(identifiers(rest).map(String::from)),
                Some(field) if rest[field.len()..].trim_start().starts_with(':') => {
                    rust_members.insert(field.to_string());
                }
                _ => {}
            }
        }
    }
    Project {
        files,
        top,
        words,
        header: word_set("include/ksym.h"),
        loader: ["tools/bpf_loader.h", "tools/bpf_multi.h"]
            .iter()
            .flat_map(|p| word_set(p))
            .collect(),
        cli_options,
        fork_files,
        make_targets,
        rust_root,
        rust_items,
        rust_members,
    }
}

/// Does a path (relative to the repository; `*` and `<...>` match any
/// part of a name) name a file or folder of the repository?
fn path_exists(p: &Project, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    if !path.contains('*') && !path.contains('<') {
        return root().join(path).exists();
    }
    fn matches(pat: &[u8], s: &[u8]) -> bool {
        match pat.first() {
            None => s.is_empty(),
            Some(b'*') => (0..=s.len()).any(|k| matches(&pat[1..], &s[k..])),
            Some(b'<') => {
                let close = pat.iter().position(|&c| c == b'>').unwrap_or(pat.len() - 1);
                (1..=s.len())
                    .any(|k| !s[..k].contains(&b'/') && matches(&pat[close + 1..], &s[k..]))
            }
            Some(&c) => s.first() == Some(&c) && matches(&pat[1..], &s[1..]),
        }
    }
    p.files.iter().any(|f| {
        let f = f.as_bytes();
        (0..=f.len())
            .filter(|&k| k == f.len() || f[k] == b'/')
            .any(|k| matches(path.as_bytes(), &f[..k]))
    })
}

/// The problems with the names one piece of a page gives.
fn check_names(p: &Project, page: &Path, piece: &Piece, out: &mut Vec<String>) {
    let at = format!("{}:{}", rel(page), piece.line);
    let text = &piece.text;
    let mut bad = |what: String| out.push(format!("{at}: {what}"));
    // Relative links of the prose: [text](target).
    if !piece.code {
        for (i, _) in text.match_indices("](") {
            let target = &text[i + 2..];
            let target = &target[..target.find(')').unwrap_or(target.len())];
            let target = target.split('#').next().unwrap();
            if target.is_empty() || target.contains("://") {
                continue;
            }
            let base = page.parent().unwrap();
            if !base.join(target).exists() {
                bad(format!("link `{target}`: no such file"));
            }
        }
        return;
    }
    // Paths under the repository's own top-level entries.
    for tok in text.split(|c: char| c.is_whitespace() || "(),;\"'=$`|".contains(c)) {
        let tok = tok.trim_end_matches(['.', ':']);
        let tok = tok.split(':').next().unwrap();
        let first = tok.split('/').next().unwrap();
        if !tok.contains('/') || !p.top.contains(first) || tok.contains("...") {
            continue;
        }
        if !path_exists(p, tok) && !p.fork_files.contains(tok) {
            bad(format!("`{tok}`: no such file or folder"));
        }
    }
    // Make targets.
    for (i, _) in text.match_indices("make ") {
        if i > 0 && !text[..i].ends_with([' ', '(', '$', '`', '\'']) {
            continue;
        }
        // A make whose first argument is an option builds some tree the
        // span does not name (bpftrace's `make -j2 bpftrace` in its cmake
        // build): not this project's targets.
        if text[i + 5..].trim_start().starts_with('-') {
            continue;
        }
        for w in text[i + 5..].split_whitespace() {
            if w.contains('=') {
                continue;
            }
            let w = w.trim_end_matches([',', '.', ';', ')', '`', '\'']);
            if w.is_empty()
                || !w
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                break;
            }
            if !p.make_targets.contains(w) {
                bad(format!("`make {w}`: no such make target"));
            }
        }
    }
    for w in identifiers(text) {
        // `ksym_bpf_*`: a prefix of some name.
        let prefix = w.ends_with('_') && text.contains(&format!("{w}*"));
        let in_set = |set: &HashSet<String>| {
            set.contains(w) || prefix && set.iter().any(|n| n.starts_with(w))
        };
        let known = if w.starts_with("ksym_") || w.starts_with("KSYM_") {
            in_set(&p.header) || in_set(&p.words)
        } else if w.starts_with("kl_") {
            in_set(&p.loader)
        } else {
            true
        };
        if !known {
            bad(format!(
                "`{w}`: in neither include/ksym.h, tools/bpf_loader.h, tools/bpf_multi.h nor the sources"
            ));
        }
    }
    // Options and variables.
    // The CLI's options where the command is ksym (`ksym obj --load`,
    // `$ ksym ...`, `build/ksym ...`).
    let first = text
        .trim_start_matches("$ ")
        .split_whitespace()
        .next()
        .unwrap_or("");
    let cli = first == "ksym" || first.ends_with("/ksym");
    for tok in text.split(|c: char| c.is_whitespace() || "(),;\"'`|[]".contains(c)) {
        if let Some(opt) = tok.strip_prefix("--").map(|o| o.split('=').next().unwrap()) {
            if opt.is_empty() || !opt.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                continue;
            }
            let known = if cli {
                p.cli_options.contains(&format!("--{opt}"))
            } else {
                p.words.contains(&format!("--{opt}")) || p.words.contains(opt)
            };
            if !known {
                bad(format!(
                    "`--{opt}`: {}",
                    if cli {
                        "no such option of ksym (tools/cli.c)"
                    } else {
                        "in no source file"
                    }
                ));
            }
        }
        if let Some((name, _)) = tok.split_once('=') {
            let var = name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            if var && name.contains('_') && !p.words.contains(name) {
                bad(format!("`{name}=`: a variable no source file reads"));
            }
        }
    }
    // The Rust API: ksym::a::b and Type::member.
    for (i, _) in text.match_indices("::") {
        let before: String = text[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if before.contains("::") {
            continue; // a later `::` of the same path
        }
        let after: String = text[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let segs: Vec<&str> = after.split("::").filter(|s| !s.is_empty()).collect();
        if segs.is_empty() {
            continue;
        }
        if before == "ksym" {
            if !p.rust_root.contains(segs[0]) {
                bad(format!(
                    "`ksym::{}`: not public at the crate's root (src/lib.rs)",
                    segs[0]
                ));
            } else if segs.len() > 1 && !p.rust_items.contains(*segs.last().unwrap()) {
                bad(format!("`ksym::{after}`: no such public item in src/"));
            }
        } else if p.rust_root.contains(before.as_str()) || p.rust_items.contains(before.as_str()) {
            let ty_api = before
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_uppercase());
            if ty_api && !p.rust_members.contains(segs[0]) && !p.rust_items.contains(segs[0]) {
                bad(format!(
                    "`{before}::{}`: no such public member in src/",
                    segs[0]
                ));
            }
        }
    }
}

#[test]
fn every_name_a_page_gives_exists() {
    let p = project();
    let mut out = Vec::new();
    for page in pages(false) {
        let text = std::fs::read_to_string(&page).unwrap();
        for piece in pieces(&text) {
            check_names(&p, &page, &piece, &mut out);
        }
    }
    assert!(
        out.is_empty(),
        "names the docs give that do not exist:\n{}",
        out.join("\n")
    );
}

/// The measured figures of a text: (line, figure normalised: "1.23 ms",
/// "32767 B", "0.18 ×").
fn figures(text: &str) -> Vec<(usize, String)> {
    const UNITS: &[&str] = &[
        "ns/name", "ns/call", "GB/s", "MB/s", "bytes", "KiB", "MiB", "GiB", "min", "ns", "µs",
        "us", "ms", "KB", "kB", "MB", "GB", "s", "B", "×", "x",
    ];
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let b: Vec<char> = line.chars().collect();
        let mut k = 0;
        while k < b.len() {
            let starts = b[k].is_ascii_digit()
                && (k == 0 || !(b[k - 1].is_alphanumeric() || b[k - 1] == '.' || b[k - 1] == '_'));
            if !starts {
                k += 1;
                continue;
            }
            let mut e = k;
            while e < b.len()
                && (b[e].is_ascii_digit()
                    || (b[e] == ',' || b[e] == '.')
                        && b.get(e + 1).is_some_and(char::is_ascii_digit))
            {
                e += 1;
            }
            let num: String = b[k..e].iter().filter(|&&c| c != ',').collect();
            let mut u = e;
            if b.get(u) == Some(&' ') {
                u += 1;
            }
            let rest: String = b[u..].iter().collect();
            let unit = UNITS.iter().find(|un| {
                rest.starts_with(**un)
                    && !rest[un.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '/' || c == '_')
            });
            // A target ("≤ 1.05 × read") is a bound, not a measurement.
            let mut p = k;
            while p > 0 && b[p - 1] == ' ' {
                p -= 1;
            }
            let target = p > 0 && matches!(b[p - 1], '≤' | '≥' | '<' | '>');
            if let Some(un) = unit {
                let hex = *un == "x" && num == "0" && u == e;
                if !hex && !target {
                    let norm = match *un {
                        "bytes" => "B",
                        "us" => "µs",
                        "x" => "×",
                        other => other,
                    };
                    out.push((i + 1, format!("{num} {norm}")));
                }
            }
            k = e;
        }
    }
    out
}

/// The bounds of docs/limits.md's "Bounds on input" table: its rows'
/// figures.
fn bounds() -> HashSet<String> {
    let text = std::fs::read_to_string(root().join("docs/limits.md")).unwrap();
    let table = text
        .split("## Bounds on input")
        .nth(1)
        .expect("docs/limits.md has its bounds table")
        .split("\n## ")
        .next()
        .unwrap();
    let rows: String = table
        .lines()
        .filter(|l| l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n");
    figures(&rows).into_iter().map(|(_, f)| f).collect()
}

#[test]
fn every_measured_figure_is_on_one_page() {
    let exempt: HashSet<String> = bounds()
        .into_iter()
        .chain(CONSTANTS.iter().map(|s| s.to_string()))
        .collect();
    let mut seen: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for page in pages(true) {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, f) in figures(&text) {
            if !exempt.contains(&f) {
                seen.entry(f).or_default().entry(rel(&page)).or_insert(line);
            }
        }
    }
    let twice: Vec<String> = seen
        .iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(f, at)| {
            let at: Vec<String> = at.iter().map(|(p, l)| format!("{p}:{l}")).collect();
            format!("`{f}` on {}", at.join(", "))
        })
        .collect();
    assert!(
        twice.is_empty(),
        "measured figures on more than one page (keep each on one, docs/performance.md, and link to it):\n{}",
        twice.join("\n")
    );
}

/// The extraction itself, on a text whose figures are worked out by hand.
#[test]
fn figures_are_read_as_written() {
    let text = "opens in 0.78 ms (12.1 MB), 1.05 × the read; 0.18x; 32,767 bytes\n\
                0x10 is hex, v1.2 no unit, 4 KiB page, 1.3 GB/s, 77 ns/name, 2 min 29 s\n\
                a target, ≤ 1.05 × the read, or < 10 ms, is not a figure";
    let got: Vec<String> = figures(text).into_iter().map(|(_, f)| f).collect();
    assert_eq!(
        got,
        [
            "0.78 ms",
            "12.1 MB",
            "1.05 ×",
            "0.18 ×",
            "32767 B",
            "4 KiB",
            "1.3 GB/s",
            "77 ns/name",
            "2 min",
            "29 s"
        ]
    );
}

/// docs/limits.md shows the kernel table as `tools/guest/kernels.sh
/// markdown` prints it from tests/kernels.txt: a row or column changed
/// there and not on the page fails here.
#[test]
fn limits_shows_the_kernel_table() {
    let out = std::process::Command::new("sh")
        .arg(root().join("tools/guest/kernels.sh"))
        .arg("markdown")
        .output()
        .expect("sh runs");
    assert!(out.status.success(), "kernels.sh markdown failed");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.lines().count() >= 4,
        "a header, a rule and rows: {table}"
    );
    let limits = std::fs::read_to_string(root().join("docs/limits.md")).unwrap();
    let section = limits
        .split("## Tested kernels")
        .nth(1)
        .expect("docs/limits.md has its Tested kernels section");
    assert!(
        section.contains(&table),
        "docs/limits.md's Tested kernels section lacks the table of \
         `sh tools/guest/kernels.sh markdown`:\n{table}"
    );
}
