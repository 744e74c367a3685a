//! The architecture as a test: each folder of `src/` imports only the
//! layers below it (HACKING.md, "Architecture"), so no folder imports another
//! that imports it back. Reads the source: every `crate::x` path outside a
//! comment counts.
//!
//! The C ABI on top of them all is a crate of its own (capi/, package
//! ksym-capi, which depends on this one): Cargo enforces that layer, since
//! the core cannot name a crate that depends on it, and capi/ reaches the
//! core through its public API only.

use std::collections::BTreeSet;
use std::path::Path;

/// Folder (or top-level file) -> what it may import besides itself.
const LAYERS: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("cname", &[]),
    ("base", &["error"]),
    ("formats", &["error", "base"]),
    ("rules", &["error", "base", "formats"]),
    ("table", &["error", "cname", "base", "formats", "rules"]),
    ("resolve", &["error", "base", "formats", "rules"]),
    (
        "btf",
        &["error", "cname", "base", "formats", "rules", "table"],
    ),
    (
        "bpf",
        &[
            "error", "cname", "base", "formats", "rules", "table", "resolve", "btf",
        ],
    ),
];

fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let name: String = rest[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
            rest = &rest[i + 7..];
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut checked = 0;
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let layer = first.trim_end_matches(".rs").to_string();
        if layer == "lib" {
            continue;
        }
        let Some((_, allowed)) = LAYERS.iter().find(|(l, _)| *l == layer) else {
            bad.push(format!(
                "{}: folder `{layer}` is not in LAYERS",
                rel.display()
            ));
            continue;
        };
        checked += 1;
        for used in crate_paths(&std::fs::read_to_string(f).unwrap()) {
            if used != layer && !allowed.contains(&used.as_str()) {
                bad.push(format!("{} imports crate::{used}", rel.display()));
            }
        }
    }
    assert!(checked > 30, "only {checked} source files found");
    assert!(bad.is_empty(), "layering broken:\n{}", bad.join("\n"));
}

#[test]
fn the_check_sees_imports() {
    let p = crate_paths(
        "use crate::rules::query::Query;\n// crate::table\nlet x = crate::base::hash::hash(b\"\");",
    );
    assert_eq!(p.into_iter().collect::<Vec<_>>(), ["base", "rules"]);
}

/// The modules of `bpf/` a file's code names (before its `#[cfg(test)]`
/// part, which tests may shape as they like): `crate::bpf::x` and, in a
/// file directly in `bpf/`, `super::x`, each of `super::{x, y}`; a name
/// that is no module of `bpf/` (an item of `bpf/mod.rs`) is `mod`.
/// `super::` from a file deeper down names its own folder's module, which
/// is not another node (a folder is one node: its files share the
/// folder's namespace).
fn bpf_uses(text: &str, depth: usize, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut add = |rest: &str| {
        let names: Vec<String> = match rest.strip_prefix('{') {
            // Top-level names of a group (nested groups stay inside their
            // first name's module).
            Some(group) => {
                let mut names = Vec::new();
                let mut level = 0;
                let mut start = true;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => level += 1,
                        '}' if level == 0 => break,
                        '}' => level -= 1,
                        ',' if level == 0 => start = true,
                        c if start && level == 0 && !c.is_whitespace() => {
                            names.push(ident(&group[i..]));
                            start = false;
                        }
                        _ => {}
                    }
                }
                names
            }
            None => vec![ident(rest)],
        };
        for n in names.into_iter().filter(|n| !n.is_empty() && n != "self") {
            out.insert(if modules.contains(&n) {
                n
            } else {
                "mod".into()
            });
        }
    };
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::bpf::") {
            add(&code[i + 12..]);
        }
        // `super::` from a file directly in bpf/ (depth 1), or
        // `super::super::` from one a folder deeper.
        let sup = "super::".repeat(depth);
        for (i, _) in code.match_indices(&sup) {
            if code[..i].ends_with("super::") {
                continue;
            }
            let rest = &code[i + sup.len()..];
            if rest.starts_with("super::") {
                continue;
            }
            add(rest);
        }
    }
    out
}

/// The string literals of a file's code (not its comments), outside its
/// `#[cfg(test)]` tail and without escapes resolved.
fn literals(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    let mut out = Vec::new();
    for line in code.lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut parts = line.split('"');
        parts.next();
        while let Some(lit) = parts.next() {
            out.push(lit.to_string());
            parts.next();
        }
    }
    out
}

/// A circle between the modules of `bpf/` (files directly in it, and its
/// folders), if any: `bpf/mod.rs` declares and re-exports them all, so
/// none may name an item of it.
fn bpf_circle(src: &Path) -> Option<Vec<String>> {
    let bpf = src.join("bpf");
    let mut files = Vec::new();
    sources(&bpf, &mut files);
    let mut modules = BTreeSet::new();
    for e in std::fs::read_dir(&bpf).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        if (p.is_dir() || p.extension().is_some_and(|x| x == "rs")) && stem != "mod" {
            modules.insert(stem);
        }
    }
    let mut edges: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for f in &files {
        let rel = f.strip_prefix(&bpf).unwrap();
        let parts: Vec<String> = rel
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect();
        if parts.last().is_some_and(|p| p.starts_with("tests")) {
            continue;
        }
        let node = if parts == ["mod"] {
            "mod".to_string()
        } else {
            parts[0].clone()
        };
        // How many `super::` reach bpf/: one from bpf/x.rs and from a
        // folder's mod.rs, two from the folder's other files.
        let depth = if parts.len() == 1 || parts.last().unwrap() == "mod" {
            1
        } else {
            parts.len()
        };
        let used = bpf_uses(&std::fs::read_to_string(f).unwrap(), depth, &modules);
        let e = edges.entry(node.clone()).or_default();
        e.extend(used.into_iter().filter(|u| *u != node));
    }
    // bpf/mod.rs declares every module: it depends on all of them.
    edges.insert("mod".into(), modules.clone());
    fn visit(
        n: &str,
        edges: &std::collections::BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if let Some(c) = visit(n, &edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_circle_between_the_modules_of_bpf() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    if let Some(c) = bpf_circle(&src) {
        panic!("a circle in bpf/: {}", c.join(" -> "));
    }
}

#[test]
fn the_bpf_check_sees_imports() {
    let modules: BTreeSet<String> = ["elf", "maps", "object"].map(String::from).into();
    let used = |text: &str, depth: usize| bpf_uses(text, depth, &modules);
    let got = used(
        "use super::{elf::{cstring, Sec}, maps, Object};\n// super::x\nlet a = crate::bpf::object::O;",
        1,
    );
    assert_eq!(
        got.into_iter().collect::<Vec<_>>(),
        ["elf", "maps", "mod", "object"]
    );
    // From a folder's file, `super::` is its own folder; `super::super::`
    // and `crate::bpf::` reach bpf/.
    let got = used("use super::Collected;\nuse super::super::elf::Elf;", 2);
    assert_eq!(got.into_iter().collect::<Vec<_>>(), ["elf"]);
    assert!(used("#[cfg(test)]\nuse super::maps;", 1).is_empty());
}

/// The `ksym_*` words of `text` (a word starts where no letter, digit or
/// `_` precedes it), and whether each is followed by `(`.
fn ksym_words(text: &str) -> Vec<(&str, bool)> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices("ksym_")
        .filter(|&(i, _)| !text[..i].ends_with(word))
        .map(|(i, _)| {
            let end = text[i..]
                .find(|c: char| !word(c))
                .map_or(text.len(), |e| i + e);
            (&text[i..end], text[end..].starts_with('('))
        })
        .filter(|(w, _)| w.len() > 5)
        .collect()
}

/// The core knows no C face: no string of it (an error message, mostly)
/// names a function of the C API (a `ksym_*` function the header
/// declares); the C crate spells the calls a message names
/// (`error::Call`) as C functions. Other `ksym_` names (the reserved BPF
/// externs `ksym_alias_value`, `ksym_alias_addr`) are no C function.
#[test]
fn core_strings_name_no_c_function() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("include/ksym.h")).unwrap();
    let functions: BTreeSet<&str> = ksym_words(&header)
        .into_iter()
        .filter(|&(_, call)| call)
        .map(|(w, _)| w)
        .collect();
    assert!(functions.contains("ksym_lookup") && functions.len() > 50);
    let src = root.join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        if name.starts_with("tests") {
            continue;
        }
        for lit in literals(&std::fs::read_to_string(f).unwrap()) {
            let named = ksym_words(&lit).iter().any(|(w, _)| functions.contains(w));
            if named {
                bad.push(format!(
                    "{}: \"{lit}\"",
                    f.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "core strings naming C functions:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_string_check_sees_c_names() {
    let l = literals("let a = \"call ksym_bpf_object_relocate first\";\n// \"ksym_x\"\n");
    assert_eq!(l, ["call ksym_bpf_object_relocate first"]);
}

/// A file says what it imports: no `use super::*;` outside tests (a glob
/// hides where a name comes from, and turns a constant in a `match`
/// pattern that the parent stops exporting into a binding that matches
/// anything).
#[test]
fn no_glob_import_of_the_parent_outside_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let bad: Vec<String> = files
        .iter()
        .filter(|f| {
            !f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("tests")
        })
        .filter(|f| {
            // The file's code before its `#[cfg(test)]` module.
            let text = std::fs::read_to_string(f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
            code.lines().any(|l| l.trim() == "use super::*;")
        })
        .map(|f| f.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    assert!(bad.is_empty(), "`use super::*;` outside tests: {bad:?}");
}
