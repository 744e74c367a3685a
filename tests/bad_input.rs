//! Bad input on purpose, each case with the exact error code, a message
//! naming the input, and no panic. The table this test writes to
//! target/tmp/bad_input.md is docs/limits.md's ("Bad input"). The C ABI side
//! (NULL for every pointer, every `sz`) is c-tests/test_table.c,
//! test_resolve.c, test_bpf.c, test_btf.c and test_sz.c, under valgrind.

mod common;

use std::path::{Path, PathBuf};

use ksym::internals::error::{Error, FORMAT, NOT_FOUND, RESTRICTED};
use ksym::internals::table::{Options, Table};

struct Case {
    input: String,
    result: String,
}

fn table(path: &Path) -> Result<Table, Error> {
    Table::open(&Options {
        kallsyms_path: Some(path.to_path_buf()),
        builtin_ranges_path: Some(PathBuf::new()),
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..Default::default()
        },
        ..Default::default()
    })
}

fn code_name(c: i32) -> &'static str {
    match c {
        NOT_FOUND => "KSYM_ERR_NOT_FOUND",
        FORMAT => "KSYM_ERR_FORMAT",
        RESTRICTED => "KSYM_ERR_RESTRICTED",
        ksym::internals::error::INVALID => "KSYM_ERR_INVALID",
        ksym::internals::error::UNSUPPORTED => "KSYM_ERR_UNSUPPORTED",
        -21 => "-EISDIR",
        _ => "other",
    }
}

/// Checks that `r` fails with `code` and a message containing `needle`;
/// records the row.
fn expect<T>(rows: &mut Vec<Case>, input: &str, r: Result<T, Error>, code: i32, needle: &str) {
    let e = match r {
        Ok(_) => panic!("{input}: accepted"),
        Err(e) => e,
    };
    assert_eq!(e.code(), code, "{input}: {e}");
    assert!(e.message().contains(needle), "{input}: {e}");
    let m: String = e
        .message()
        .chars()
        .map(|c| {
            if c.is_control() || c == '\u{fffd}' {
                '.'
            } else {
                c
            }
        })
        .collect();
    let m = m.as_str();
    let short = if m.len() > 110 {
        format!(
            "{}...",
            &m[..m.char_indices().nth(107).map_or(m.len(), |c| c.0)]
        )
    } else {
        m.to_string()
    };
    rows.push(Case {
        input: input.into(),
        result: format!(
            "`{}`: {}",
            code_name(code),
            short.replace('|', "\\|").replace('`', "'")
        ),
    });
}

fn ok(rows: &mut Vec<Case>, input: &str, what: &str) {
    rows.push(Case {
        input: input.into(),
        result: what.into(),
    });
}

#[test]
fn bad_input_table() {
    let dir = common::TempDir::new();
    let p = |n: &str| dir.path().join(n);
    let mut rows = Vec::new();
    let write = |n: &str, b: &[u8]| {
        std::fs::write(p(n), b).unwrap();
        p(n)
    };

    // kallsyms.
    expect(
        &mut rows,
        "kallsyms: a missing file",
        table(&p("missing")),
        NOT_FOUND,
        "missing",
    );
    expect(
        &mut rows,
        "kallsyms: a directory",
        table(dir.path()),
        -21,
        "cannot read",
    );
    expect(
        &mut rows,
        "kallsyms: an empty file",
        table(&write("empty", b"")),
        FORMAT,
        "empty",
    );
    expect(
        &mut rows,
        "kallsyms: blank lines only",
        table(&write("blank", b"\n\n  \n")),
        FORMAT,
        "blank",
    );
    let elf = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/c-tests/bpf/aliases.bpf.o"
    ))
    .unwrap();
    expect(
        &mut rows,
        "kallsyms: a binary file (an ELF object)",
        table(&write("elf", &elf)),
        FORMAT,
        ":1:",
    );
    expect(
        &mut rows,
        "kallsyms: a NUL inside a line",
        table(&write("nul", b"ffffffff81000000 T a\0b\n")),
        FORMAT,
        ":1:",
    );
    expect(
        &mut rows,
        "kallsyms: /dev/zero (no newline, no end)",
        table(Path::new("/dev/zero")),
        FORMAT,
        "line longer than 64 KiB",
    );
    let big = p("sparse");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    expect(
        &mut rows,
        "kallsyms: a 1 GiB file",
        table(&big),
        FORMAT,
        "more than 256 MiB",
    );
    let name = "n".repeat(10_000);
    let t = table(&write(
        "long10k",
        format!("ffffffff81000000 T {name}\n").as_bytes(),
    ))
    .unwrap();
    assert_eq!(
        t.lookup(name.as_bytes()).unwrap().unique().unwrap().addr,
        0xffffffff81000000
    );
    ok(
        &mut rows,
        "kallsyms: a 10,000-byte name",
        "accepted, found (names up to 32,767 bytes)",
    );
    let name = "n".repeat(40_000);
    expect(
        &mut rows,
        "kallsyms: a 40,000-byte name",
        table(&write(
            "long40k",
            format!("ffffffff81000000 T {name}\n").as_bytes(),
        )),
        FORMAT,
        "32767",
    );
    expect(
        &mut rows,
        "kallsyms: a 17-digit address",
        table(&write("addr17", b"fffffffff81000000 T a\n")),
        FORMAT,
        ":1:",
    );
    let t = table(&write("addr15", b"ffffffff8100000 T a\n")).unwrap();
    assert_eq!(
        t.lookup(b"a").unwrap().unique().unwrap().addr,
        0xffffffff8100000
    );
    ok(
        &mut rows,
        "kallsyms: a 15-digit address",
        "accepted as its value (1 to 16 hex digits: 32-bit kernels print 8)",
    );
    // Every byte value but whitespace and NUL, in names.
    let mut text = Vec::new();
    let bytes: Vec<u8> = (1..=255u8)
        .filter(|&b| !b.is_ascii_whitespace() && b != 0x0b)
        .collect();
    for (i, c) in bytes.chunks(16).enumerate() {
        text.extend_from_slice(format!("ffffffff81{:06x} T ", i * 16).as_bytes());
        text.extend_from_slice(c);
        text.push(b'\n');
    }
    let t = table(&write("bytes", &text)).unwrap();
    for c in bytes.chunks(16) {
        if !c.contains(&b'`') {
            assert!(t.lookup(c).is_ok(), "{c:?}");
        }
    }
    ok(
        &mut rows,
        "kallsyms: every byte value but whitespace (VT included) and NUL in names",
        "accepted, each found (a backtick needs the qualified form)",
    );
    expect(
        &mut rows,
        "kallsyms: every address zero (kptr_restrict)",
        table(&write(
            "zero",
            b"0000000000000000 T a\n0000000000000000 t b\n",
        )),
        RESTRICTED,
        "kptr_restrict",
    );
    let same: Vec<u8> = b"ffffffff81000000 T foo\n".repeat(10_000);
    expect(
        &mut rows,
        "kallsyms: one name 10,000 times",
        table(&write("same", &same)),
        FORMAT,
        "share one name",
    );
    ok(
        &mut rows,
        "kallsyms: a FIFO fed valid lines for ever",
        "`KSYM_ERR_FORMAT` at 256 MiB (src/table/tests.rs `bounds`)",
    );

    // modules.builtin.ranges.
    let r = ksym::internals::formats::ranges::Ranges::read(&write(
        "ranges",
        b"this is not a ranges file\n",
    ));
    expect(
        &mut rows,
        "modules.builtin.ranges: garbage",
        r,
        FORMAT,
        "ranges",
    );
    expect(
        &mut rows,
        "modules.builtin.ranges: /dev/zero",
        ksym::internals::formats::ranges::Ranges::read(Path::new("/dev/zero")),
        FORMAT,
        "MiB",
    );

    // BPF objects: every byte of the ELF header in turn.
    let mut refused = 0;
    for at in 0..64 {
        for v in [0x00u8, 0xff, 0x41] {
            let mut b = elf.clone();
            if b[at] == v {
                continue;
            }
            b[at] = v;
            if let Err(e) = ksym::bpf::Object::parse(&b) {
                assert!(
                    matches!(e.code(), FORMAT | ksym::internals::error::UNSUPPORTED),
                    "byte {at} = {v:#x}: {e}"
                );
                refused += 1;
            }
        }
    }
    ok(&mut rows, "BPF object: each of the 64 ELF header bytes set to 0x00, 0xff, 0x41 in turn", &format!("{refused} of 192 refused (`KSYM_ERR_FORMAT` or `_UNSUPPORTED`), the others harmless (padding, version, flags); no panic"));
    let mut truncated = 0;
    for cut in (0..elf.len()).step_by(61) {
        assert!(ksym::bpf::Object::parse(&elf[..cut]).is_err());
        truncated += 1;
    }
    ok(
        &mut rows,
        "BPF object: truncated at every 61st byte",
        &format!("{truncated} cuts, each `KSYM_ERR_FORMAT`"),
    );
    expect(
        &mut rows,
        "BPF object: a kallsyms file",
        ksym::bpf::Object::parse(b"ffffffff81000000 T a\n"),
        FORMAT,
        "ELF",
    );
    expect(
        &mut rows,
        "BPF object: /dev/zero",
        ksym::bpf::Object::open(Path::new("/dev/zero")),
        FORMAT,
        "MiB",
    );

    // BTF.
    use ksym::internals::formats::btf::Btf;
    let btf = |types: &[u32], strings: &[u8]| {
        let mut b = vec![0x9f, 0xeb, 1, 0];
        for v in [
            24u32,
            0,
            (types.len() * 4) as u32,
            (types.len() * 4) as u32,
            strings.len() as u32,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for t in types {
            b.extend_from_slice(&t.to_le_bytes());
        }
        b.extend_from_slice(strings);
        b
    };
    // [1] typedef -> [2], [2] typedef -> [1]: a loop.
    let looped = Btf::parse(btf(&[1, 8 << 24, 2, 1, 8 << 24, 1], b"\0a\0")).unwrap();
    expect(
        &mut rows,
        "BTF: typedefs in a loop",
        looped.resolve(1),
        FORMAT,
        "loop",
    );
    expect(
        &mut rows,
        "BTF: a pointer to type 99 of 1",
        Btf::parse(btf(&[0, 2 << 24, 99], b"\0")),
        FORMAT,
        "99",
    );
    expect(
        &mut rows,
        "BTF: a name offset past the strings",
        Btf::parse(btf(&[50, 1 << 24, 4, 32], b"\0")),
        FORMAT,
        "name offset",
    );
    expect(
        &mut rows,
        "BTF: truncated header",
        Btf::parse(vec![0x9f, 0xeb, 1]),
        FORMAT,
        "header",
    );
    expect(
        &mut rows,
        "BTF: big-endian",
        Btf::parse(vec![
            0xeb, 0x9f, 1, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ]),
        FORMAT,
        "big-endian",
    );

    // Kernel config.
    let gz = p("config.gz");
    std::fs::write(
        &gz,
        [
            0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9,
        ],
    )
    .unwrap();
    expect(
        &mut rows,
        "kernel config: corrupt gzip",
        ksym::internals::base::read::read_maybe_gzip(&gz),
        FORMAT,
        "gzip",
    );

    let mut md = String::from("| input | result |\n|---|---|\n");
    for r in &rows {
        md += &format!("| {} | {} |\n", r.input, r.result);
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad_input.md");
    std::fs::write(&out, &md).unwrap();
    assert!(rows.len() >= 25, "{}", rows.len());
}
