//! No struct of `include/ksym.h` has implicit padding: every byte is a
//! named field, so that the `sz` rule of versioned structs covers every
//! byte (a field added in a padding hole would be ignored by an older
//! library instead of refused).
//!
//! The check is the C compiler's: this test reads every struct and its
//! members from the header, writes a C file of `_Static_assert`s on
//! `offsetof` and `sizeof` (each member starts where the one before it
//! ends; the struct ends where its last member does) and compiles it.

use std::path::Path;
use std::process::Command;

/// (struct, members) of every struct defined in the header.
fn structs(header: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, Vec<String>)> = None;
    let mut in_comment = false;
    for raw in header.lines() {
        let line = raw.trim();
        if in_comment {
            in_comment = !line.contains("*/");
            continue;
        }
        if line.starts_with("/*") {
            in_comment = !line.contains("*/");
            continue;
        }
        if let Some(name) = line
            .strip_prefix("struct ")
            .and_then(|r| r.strip_suffix(" {"))
        {
            cur = Some((name.to_string(), Vec::new()));
            continue;
        }
        if line == "};" {
            if let Some(s) = cur.take() {
                out.push(s);
            }
            continue;
        }
        if let Some((_, members)) = &mut cur {
            if let Some(decl) = line.strip_suffix(';') {
                let decl = decl.split('[').next().unwrap();
                let name = decl
                    .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap();
                members.push(name.to_string());
            }
        }
    }
    out
}

fn checks(structs: &[(String, Vec<String>)]) -> String {
    let mut c = String::from("#include <stddef.h>\n#include <ksym.h>\n");
    for (s, members) in structs {
        let m = |x: &str| format!("sizeof(((struct {s} *)0)->{x})");
        let off = |x: &str| format!("offsetof(struct {s}, {x})");
        c += &format!(
            "_Static_assert({} == 0, \"{s}: {} is not first\");\n",
            off(&members[0]),
            members[0]
        );
        for w in members.windows(2) {
            c += &format!(
                "_Static_assert({} == {} + {}, \"{s}: padding before {}\");\n",
                off(&w[1]),
                off(&w[0]),
                m(&w[0]),
                w[1]
            );
        }
        let last = members.last().unwrap();
        c += &format!(
            "_Static_assert(sizeof(struct {s}) == {} + {}, \"{s}: padding after {last}\");\n",
            off(last),
            m(last)
        );
    }
    c
}

#[test]
fn no_struct_of_the_header_has_padding() {
    // The project's top directory (this crate is capi/).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let header = std::fs::read_to_string(root.join("include/ksym.h")).unwrap();
    let found = structs(&header);
    let names: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
    for want in ["ksym_table_opts", "ksym_symbol", "ksym_bpf_map_info"] {
        assert!(names.contains(&want), "{want} not found in {names:?}");
    }
    assert!(found.iter().all(|(_, m)| !m.is_empty()));
    let dir = std::env::temp_dir().join(format!("ksym-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    std::fs::write(&src, checks(&found)).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=c11", "-fsyntax-only", "-I"])
        .arg(root.join("include"))
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{} structs checked; the compiler says:\n{}",
        found.len(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_checks_see_padding() {
    let h = "struct s {\n  /** doc; with a semicolon */\n  char a;\n  int b[2];\n};\n";
    let s = structs(h);
    assert_eq!(s, vec![("s".to_string(), vec!["a".into(), "b".into()])]);
    let c = checks(&s);
    assert!(
        c.contains("offsetof(struct s, b) == offsetof(struct s, a) + sizeof(((struct s *)0)->a)")
    );
}

/// The header reads basics first: errors and conventions, the table,
/// resolution and the cache, kernel BTF, BPF objects.
#[test]
fn the_header_is_in_reading_order() {
    let header =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/ksym.h"))
            .unwrap();
    // The line that declares `f` (not a comment that mentions it).
    let at = |f: &str| {
        header
            .lines()
            .position(|l| {
                !l.trim_start().starts_with('*')
                    && !l.trim_start().starts_with("/*")
                    && (l.contains(&format!(" {f}(")) || l.contains(&format!("*{f}(")))
            })
            .unwrap_or_else(|| panic!("{f} not declared"))
    };
    let order = [
        "ksym_last_error",
        "ksym_table_open",
        "ksym_resolve",
        "ksym_cache_new",
        "ksym_btf_open",
        "ksym_bpf_object_open",
        "ksym_bpf_program_expand",
    ];
    for w in order.windows(2) {
        assert!(at(w[0]) < at(w[1]), "{} comes after {}", w[0], w[1]);
    }
}
