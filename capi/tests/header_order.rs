//! The layout of include/ksym.h (tools/header_layout.rs, run by build.rs):
//! sections by src/ffi file in mod.rs order, items placed by the file that
//! declares them, types before their users, flags after their struct, and
//! an error (never a silent drop) for what cannot be placed.
//!
//! The committed header is checked without cbindgen: its items, laid out
//! again from the current src/ffi, must give the same header (a function
//! added to src/ffi without `make header` fails here as it does in
//! `make check-header`).

#[path = "../tools/header_layout.rs"]
mod header_layout;

use header_layout::{layout, modules, Frame, Source};

fn src(path: &str, text: &str) -> Source {
    Source {
        path: path.into(),
        text: text.into(),
    }
}

fn frame() -> Frame<'static> {
    Frame {
        top: "/* top */",
        guard: "T_H",
        includes: &[],
        prelude: "/* prelude */",
    }
}

/// The names of the items of a laid-out header, in order, and the
/// section banners' first lines.
fn names(h: &str) -> (Vec<String>, Vec<String>) {
    let mut items = Vec::new();
    let mut banners = Vec::new();
    let mut lines = h.lines().peekable();
    while let Some(l) = lines.next() {
        if l.starts_with("/* ====") {
            banners.push(lines.next().unwrap().trim_start_matches(" * ").to_string());
        } else if let Some(r) = l.strip_prefix("#define ") {
            if r != "T_H" {
                items.push(r.split(' ').next().unwrap().to_string());
            }
        } else if l.starts_with(|c: char| c.is_ascii_alphabetic())
            && l.contains('(')
            && !l.starts_with("typedef")
        {
            let head = &l[..l.find('(').unwrap()];
            items.push(head.rsplit([' ', '*']).next().unwrap().to_string());
        } else if let Some(r) = l
            .strip_prefix("struct ")
            .or_else(|| l.strip_prefix("enum "))
        {
            items.push(format!("type {}", r.trim_end_matches([' ', '{', ';'])));
        }
    }
    (items, banners)
}

const A: &str = "//! Things: the first topic.\n//!\n//! Rust-only notes.\n
pub struct thing_opts {\n    pub sz: usize,\n}\n
/// thing_opts.flags: a flag.\npub const THING_FLAG: u32 = 1;\n
pub struct thing;\n
#[no_mangle]\npub extern \"C\" fn thing_count() -> usize { 0 }\n
#[no_mangle]\npub unsafe extern \"C\" fn thing_open(o: *const thing_opts) -> *mut thing { todo!() }\n
pub struct thing_stats {\n    pub sz: usize,\n}\n
#[no_mangle]\npub unsafe extern \"C\" fn thing_stats(t: *const thing, out: *mut thing_stats) -> i32 { 0 }\n";

const B: &str = "//! Others: the second topic.\n
#[no_mangle]\npub unsafe extern \"C\" fn other_new(t: *const thing) -> i32 { 0 }\n";

/// cbindgen's order: constants, then types, then functions.
const ITEMS: &str = "/**\n * thing_opts.flags: a flag.\n */\n#define THING_FLAG 1\n
struct thing;\n
struct thing_opts {\n    size_t sz;\n};\n
struct thing_stats {\n    size_t sz;\n};\n
size_t thing_count(void);\n
struct thing *thing_open(const struct thing_opts *o);\n
int thing_stats(const struct thing *t, struct thing_stats *out);\n
int other_new(const struct thing *t);\n";

#[test]
fn items_by_file_types_before_use_flags_after_their_struct() {
    let h = layout(
        ITEMS,
        &[src("src/ffi/a.rs", A), src("src/ffi/b.rs", B)],
        &[],
        &frame(),
    )
    .unwrap();
    let (items, banners) = names(&h);
    assert_eq!(
        banners,
        ["Things: the first topic.", "Others: the second topic."]
    );
    assert_eq!(
        items,
        [
            "thing_count",
            "type thing",
            "type thing_opts",
            "THING_FLAG",
            "thing_open",
            "type thing_stats",
            "thing_stats",
            "other_new",
        ],
        "{h}"
    );
    // The prelude follows the first banner; the Rust-only paragraph is not in the header.
    assert!(h.find("/* prelude */").unwrap() < h.find("thing_count").unwrap());
    assert!(!h.contains("Rust-only"));
    assert!(h.contains("#ifndef T_H") && h.contains("extern \"C\" {"));
}

#[test]
fn a_new_file_gets_its_own_section_in_mod_rs_order() {
    let c = "//! Third: added later.\n\n#[no_mangle]\npub extern \"C\" fn third(t: *const thing) -> i32 { 0 }\n";
    let items = format!("{ITEMS}\nint third(const struct thing *t);\n");
    let order = modules("pub mod a;\n#[cfg(x)]\npub mod c;\nmod b;\n");
    assert_eq!(order, ["a", "c", "b"]);
    let h = layout(
        &items,
        &[src("a.rs", A), src("c.rs", c), src("b.rs", B)],
        &[],
        &frame(),
    )
    .unwrap();
    let (items, banners) = names(&h);
    assert_eq!(
        banners,
        [
            "Things: the first topic.",
            "Third: added later.",
            "Others: the second topic."
        ]
    );
    assert_eq!(&items[items.len() - 2..], ["third", "other_new"]);
}

#[test]
fn what_cannot_be_placed_is_an_error() {
    let files = [src("src/ffi/a.rs", A), src("src/ffi/b.rs", B)];
    let err = |items: &str, files: &[Source]| layout(items, files, &[], &frame()).unwrap_err();

    // An item no file declares.
    let e = err(&format!("{ITEMS}\nint stray(void);\n"), &files);
    assert!(
        e.contains("`stray`") && e.contains("cannot be placed"),
        "{e}"
    );

    // An exported function cbindgen did not write.
    let b2 = format!("{B}\n#[no_mangle]\npub extern \"C\" fn other_lost() -> i32 {{ 0 }}\n");
    let e = err(ITEMS, &[src("src/ffi/a.rs", A), src("src/ffi/b.rs", &b2)]);
    assert!(
        e.contains("left out `other_lost`") && e.contains("src/ffi/b.rs"),
        "{e}"
    );
    // ... unless the configuration excludes it.
    layout(
        ITEMS,
        &[src("a.rs", A), src("b.rs", &b2)],
        &["other_lost".into()],
        &frame(),
    )
    .unwrap();

    // A type of a later section used by an earlier one.
    let e = err(ITEMS, &[src("src/ffi/b.rs", B), src("src/ffi/a.rs", A)]);
    assert!(
        e.contains("`other_new`") && e.contains("later section"),
        "{e}"
    );

    // A file without the paragraph that opens its section.
    let e = err(
        ITEMS,
        &[
            src("src/ffi/a.rs", &A.replace("//! ", "// ")),
            src("src/ffi/b.rs", B),
        ],
    );
    assert!(e.contains("src/ffi/a.rs: no //! documentation"), "{e}");

    // One name declared by two files.
    let b3 = format!("{B}\npub struct thing_opts {{\n    pub sz: usize,\n}}\n");
    let e = err(ITEMS, &[src("src/ffi/a.rs", A), src("src/ffi/b.rs", &b3)]);
    assert!(e.contains("`thing_opts` is declared by both"), "{e}");

    // Output cbindgen's way that the layout cannot read.
    let e = err(&format!("{ITEMS}\n}}\n"), &files);
    assert!(e.contains("cannot tell what"), "{e}");
}

/// The string value of `key = """..."""` in cbindgen.toml.
fn toml_string(toml: &str, key: &str) -> String {
    let start = toml.find(&format!("{key} = \"\"\"")).unwrap() + key.len() + 6;
    let len = toml[start..].find("\"\"\"").unwrap();
    toml[start..start + len].to_string()
}

#[test]
fn the_committed_header_is_the_layout_of_the_current_source() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap();
    let header = read("../include/ksym.h");
    let toml = read("cbindgen.toml");
    let (top, prelude) = (
        toml_string(&toml, "header"),
        toml_string(&toml, "after_includes"),
    );
    let sources: Vec<Source> = modules(&read("src/ffi/mod.rs"))
        .iter()
        .map(|m| {
            src(
                &format!("src/ffi/{m}.rs"),
                &read(&format!("src/ffi/{m}.rs")),
            )
        })
        .collect();

    // The items: the body without the frame, the banners and the prelude.
    let body_start = header.find("extern \"C\" {\n#endif\n").unwrap() + 20;
    let body_end = header.rfind("\n#ifdef __cplusplus\n}").unwrap();
    let body = header[body_start..body_end].replacen(prelude.trim_matches('\n'), "", 1);
    let items: Vec<&str> = body
        .split("\n\n")
        .filter(|b| !b.trim_start().starts_with("/* ===="))
        .collect();
    let includes = [
        "stddef.h".to_string(),
        "stdint.h".into(),
        "stdbool.h".into(),
    ];
    let frame = Frame {
        top: &top,
        guard: "KSYM_H",
        includes: &includes,
        prelude: &prelude,
    };
    let excluded = ["ksym_test_panic".to_string(), "ksym_test_panic_ptr".into()];
    let again = layout(&items.join("\n\n"), &sources, &excluded, &frame)
        .unwrap_or_else(|e| panic!("include/ksym.h against src/ffi: {e} (run `make header`)"));
    assert!(
        again == header,
        "include/ksym.h is not laid out from the current src/ffi: run `make header`"
    );

    // Sections in mod.rs order, errors and conventions first.
    let (_, banners) = names(&header);
    assert!(
        banners[0].starts_with("Errors and conventions."),
        "{banners:?}"
    );
    let expected: Vec<String> = sources
        .iter()
        .filter(|s| s.text.contains("extern \"C\" fn"))
        .filter(|s| {
            !excluded
                .iter()
                .any(|x| s.text.contains(&format!("fn {x}(")))
        })
        .map(|s| {
            s.text
                .lines()
                .next()
                .unwrap()
                .trim_start_matches("//! ")
                .to_string()
        })
        .collect();
    assert_eq!(banners, expected);
}
