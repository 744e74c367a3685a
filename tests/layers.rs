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

/// The core knows no C face: no string of it (an error message, mostly)
/// names a function of the C API (`ksym_*`); the C crate spells the calls
/// a message names (`error::Call`) as C functions.
#[test]
fn core_strings_name_no_c_function() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        if name.starts_with("tests") {
            continue;
        }
        for lit in literals(&std::fs::read_to_string(f).unwrap()) {
            let named = lit.match_indices("ksym_").any(|(i, _)| {
                lit[i + 5..].starts_with(|c: char| c.is_ascii_lowercase())
                    && (i == 0 || !lit[..i].ends_with(|c: char| c.is_ascii_alphanumeric()))
            });
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
