//! The C of this project within the limits its Rust meets (issue 40): in
//! `tools/`, `bcc/`, `c-tests/`, `examples/` and `bench/` (the vendored
//! libbpf source, `c-tests/libbpf/src/`, aside), no C file (`.c`, `.h`,
//! `.cpp`) over 600 lines, no function over 150, and no two C units that
//! use each other. A sibling of tests/layers.rs, which holds the Rust to
//! its layers. Reads the source; nothing is compiled.
//!
//! What counts, after comments, string and character literals and
//! preprocessor lines are blanked out (newlines kept):
//! - a function is a `{` at file level whose last token before it is `)`
//!   (a parameter list): its name is the identifier before the matching
//!   `(`, its lines run from the first line of its declaration (after the
//!   previous `;` or `}` at file level) to its closing `}`; it is `static`
//!   when that declaration says so;
//! - unit A uses unit B (two `.c` or `.cpp` files) when an identifier of A
//!   (called or taken as a value, as in a command table) names a function
//!   that B defines and does not make `static`, and A does not define
//!   itself (every program has its own `main`). BPF programs (the files
//!   of a `bpf/` folder) are built for the kernel and never linked with
//!   the others: they are units among themselves only. No two units may
//!   use each other, directly or through others: a circle is a failure;
//! - the project's own headers (`#include "..."`, resolved against the
//!   including file's folder) may not include each other in a circle
//!   either, whatever their include guards hide.
//!
//! The test needs only the standard library: to check another tree (a
//! commit's, say), build it alone with that tree as its root:
//! `git archive COMMIT tools bcc c-tests examples bench | tar -x -C T`,
//! then `CARGO_MANIFEST_DIR=T rustc --edition 2021 --test tests/c_limits.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const FOLDERS: &[&str] = &["tools", "bcc", "c-tests", "examples", "bench"];
/// Vendored third-party source, held to its own project's rules.
const VENDORED: &[&str] = &["c-tests/libbpf/src"];
const MAX_FILE_LINES: usize = 600;
const MAX_FUNCTION_LINES: usize = 150;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn is_c(p: &Path) -> bool {
    p.extension()
        .is_some_and(|x| x == "c" || x == "h" || x == "cpp")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        let rel = p
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if VENDORED.iter().any(|v| rel == *v) {
            continue;
        }
        if p.is_dir() {
            walk(&p, out);
        } else if is_c(&p) {
            out.push(p);
        }
    }
}

fn c_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in FOLDERS {
        walk(&root().join(f), &mut out);
    }
    out.sort();
    assert!(out.len() > 50, "found only {} C files", out.len());
    out
}

/// A BPF program's source (built for the kernel, not linked with the rest).
fn is_bpf(unit: &str) -> bool {
    unit.split('/').any(|c| c == "bpf")
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The code with comments, literals and preprocessor lines blanked out
/// (each replaced by spaces, newlines kept, so that lines still count).
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if line_start && c == b'#' {
            // A preprocessor line, with its continuations.
            while i < b.len() && !(b[i] == b'\n' && (i == 0 || b[i - 1] != b'\\')) {
                if b[i] != b'\n' {
                    out[i] = b' ';
                }
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            out[i] = b' ';
            out[i + 1] = b' ';
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] != b'\n' {
                    out[i] = b' ';
                }
                i += 1;
            }
            let end = (i + 2).min(b.len());
            out[i..end].fill(b' ');
            i += 2;
            continue;
        }
        if c == b'"' || c == b'\'' {
            out[i] = b' ';
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    out[i] = b' ';
                    i += 1;
                }
                if b[i] != b'\n' {
                    out[i] = b' ';
                }
                i += 1;
            }
            if i < b.len() && b[i] == c {
                out[i] = b' ';
            }
            i += 1;
            continue;
        }
        if c == b'\n' {
            line_start = true;
        } else if !c.is_ascii_whitespace() {
            line_start = false;
        }
        i += 1;
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn line_of(code: &[u8], at: usize) -> usize {
    code[..at].iter().filter(|&&c| c == b'\n').count() + 1
}

struct Function {
    name: String,
    is_static: bool,
    lines: usize,
    first_line: usize,
}

/// The functions a file defines (see the module's doc comment).
fn functions(code: &[u8]) -> Vec<Function> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut decl_start = 0usize;
    let mut i = 0;
    while i < code.len() {
        match code[i] {
            b'{' if depth == 0 => {
                let before = code[decl_start..i]
                    .iter()
                    .rposition(|c| !c.is_ascii_whitespace());
                let body_end = matching_close(code, i);
                if let Some(k) = before.map(|k| decl_start + k).filter(|&k| code[k] == b')') {
                    if let Some(name) = function_name(code, decl_start, k) {
                        let first = decl_start
                            + code[decl_start..]
                                .iter()
                                .position(|c| !c.is_ascii_whitespace())
                                .unwrap();
                        let decl = String::from_utf8_lossy(&code[first..i]);
                        let first_line = line_of(code, first);
                        out.push(Function {
                            name,
                            is_static: decl
                                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                                .any(|w| w == "static"),
                            lines: line_of(code, body_end) - first_line + 1,
                            first_line,
                        });
                    }
                    i = body_end + 1;
                    decl_start = i;
                    continue;
                }
                depth += 1;
            }
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    decl_start = i + 1;
                }
            }
            b';' if depth == 0 => decl_start = i + 1,
            _ => {}
        }
        i += 1;
    }
    out
}

/// The `}` that closes the `{` at `open` (the end of the code if none).
fn matching_close(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, &c) in code.iter().enumerate().skip(open) {
        if c == b'{' {
            depth += 1;
        } else if c == b'}' {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    code.len() - 1
}

/// The name before the parameter list that ends at `close` (a `)`).
fn function_name(code: &[u8], from: usize, close: usize) -> Option<String> {
    let mut depth = 0usize;
    let mut k = close;
    loop {
        match code[k] {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        if k == from {
            return None;
        }
        k -= 1;
    }
    let mut end = k;
    while end > from && code[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let mut start = end;
    while start > from && is_ident(code[start - 1]) {
        start -= 1;
    }
    (start < end).then(|| String::from_utf8_lossy(&code[start..end]).into_owned())
}

fn identifiers(code: &[u8]) -> BTreeSet<String> {
    code.split(|&c| !is_ident(c))
        .filter(|w| !w.is_empty() && !w[0].is_ascii_digit())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

/// The project headers a file includes with `#include "..."`.
fn includes(file: &Path, text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start().strip_prefix('#')?.trim_start();
            let rest = l.strip_prefix("include")?.trim_start().strip_prefix('"')?;
            let name = &rest[..rest.find('"')?];
            let p = file.parent().unwrap().join(name);
            p.exists().then(|| p.canonicalize().unwrap())
        })
        .collect()
}

/// Every circle of `graph` (a node that reaches itself), as the path of
/// one of its strongly connected components.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = graph.get(from).into_iter().flatten().collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n.clone()) {
                todo.extend(graph.get(n).into_iter().flatten());
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|n| (n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (n, r) in &reached {
        if !r.contains(*n) {
            continue;
        }
        let component: Vec<String> = reached
            .iter()
            .filter(|(m, rm)| r.contains(**m) && rm.contains(*n))
            .map(|(m, _)| (*m).clone())
            .collect();
        if !out.contains(&component) {
            out.push(component);
        }
    }
    out
}

#[test]
fn c_files_and_functions_are_within_the_limits() {
    let mut bad = Vec::new();
    let mut nfunctions = 0;
    let files = c_files();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            bad.push(format!("{}: {n} lines (at most {MAX_FILE_LINES})", rel(f)));
        }
        for func in functions(&code_only(&text)) {
            nfunctions += 1;
            if func.lines > MAX_FUNCTION_LINES {
                bad.push(format!(
                    "{}:{}: {} has {} lines (at most {MAX_FUNCTION_LINES})",
                    rel(f),
                    func.first_line,
                    func.name,
                    func.lines
                ));
            }
        }
    }
    assert!(nfunctions > 500, "found only {nfunctions} C functions");
    assert!(bad.is_empty(), "C over its limits:\n  {}", bad.join("\n  "));
    println!(
        "{} C files, {nfunctions} functions, all within the limits",
        files.len()
    );
}

#[test]
fn no_two_c_units_use_each_other() {
    let files = c_files();
    // Units: what each .c (or .cpp) defines (non-static) and names.
    let mut defines: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut names: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut own: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut headers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let code = code_only(&text);
        let unit = rel(f);
        if unit.ends_with(".h") {
            let inc = includes(f, &text)
                .iter()
                .map(|p| rel(p))
                .filter(|p| p.ends_with(".h"))
                .collect();
            headers.insert(unit, inc);
            continue;
        }
        let fs = functions(&code);
        own.insert(unit.clone(), fs.iter().map(|f| f.name.clone()).collect());
        defines.insert(
            unit.clone(),
            fs.iter()
                .filter(|f| !f.is_static)
                .map(|f| f.name.clone())
                .collect(),
        );
        names.insert(unit, identifiers(&code));
    }
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut nedges = 0;
    for (a, words) in &names {
        let mine = &own[a];
        let edges: BTreeSet<String> = defines
            .iter()
            .filter(|(b, defs)| {
                *b != a
                    && is_bpf(b) == is_bpf(a)
                    && defs.iter().any(|d| words.contains(d) && !mine.contains(d))
            })
            .map(|(b, _)| b.clone())
            .collect();
        nedges += edges.len();
        uses.insert(a.clone(), edges);
    }
    assert!(nedges > 5, "found only {nedges} uses between C units");
    let mut bad = Vec::new();
    for c in circles(&uses) {
        bad.push(format!("C units that use each other: {}", c.join(", ")));
    }
    for c in circles(&headers) {
        bad.push(format!("headers that include each other: {}", c.join(", ")));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    println!(
        "{} C units ({nedges} uses between them), {} headers: no circle",
        uses.len(),
        headers.len()
    );
}
