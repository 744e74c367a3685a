//! Unit tests of the table's parsing and lookup rules.

use super::*;
use crate::error::{AMBIGUOUS, FORMAT, INVALID, NOT_FOUND, RESTRICTED};
use std::ops::ControlFlow;

fn table(text: &str) -> Table {
    Table::from_bytes(text.as_bytes(), &Options::default()).unwrap()
}

fn err(text: &[u8]) -> Error {
    match Table::from_bytes(text, &Options::default()) {
        Ok(_) => panic!("expected an error for {:?}", String::from_utf8_lossy(text)),
        Err(e) => e,
    }
}

fn found<'t>(t: &'t Table, q: &str) -> Symbol<'t> {
    match t.lookup(q.as_bytes()).unwrap() {
        Lookup::Found(s) => s,
        Lookup::Ambiguous(_, e) => panic!("{q}: {e}"),
    }
}

const SMALL: &str = "\
0000000000000000 A fixed_percpu_data
0000000000001000 A cpu_debug_store
ffffffff81000000 T _text
ffffffff81000000 t __pfx_startup
ffffffff81000000 T _stext
ffffffff81000010 t __pfx_foo
ffffffff81000020 t foo
ffffffff81000040 t foo.cold
ffffffff81000050 t foo.isra.0
ffffffff81000060 T bar
ffffffff81000060 T bar_alias
ffffffff81000080 t dup
ffffffff81000090 t dup
ffffffff810000a0 b __key.0
ffffffff810000a0 b __key.0
ffffffff81000100 T _etext
ffffffffc0002000 t mod_b_fn\t[modb]
ffffffffc0001000 t mod_b_first\t[modb]
ffffffffc0001800 t dup\t[modb]
ffffffffc0000000 t mod_a_fn\t[mod_a]
ffffffffc0000010 T foo\t[mod_a]
0000000000034000 a zs_map_area\t[mod_a]
ffffffffc0000500 t ftrace_trampoline\t[__builtin__ftrace]
ffffffffc0000600 t bpf_prog_0123456789abcdef_x\t[bpf]
";

#[test]
fn counts_and_modules() {
    let t = table(SMALL);
    assert_eq!(t.len(), SMALL.lines().count());
    let mods: Vec<(String, ModuleKind, usize)> = t
        .modules()
        .map(|m| (m.name.to_string_lossy().into_owned(), m.kind, m.symbols))
        .collect();
    assert_eq!(
        mods,
        vec![
            ("vmlinux".into(), ModuleKind::Vmlinux, 16),
            ("modb".into(), ModuleKind::Loadable, 3),
            ("mod_a".into(), ModuleKind::Loadable, 3),
            ("__builtin__ftrace".into(), ModuleKind::Pseudo, 1),
            ("bpf".into(), ModuleKind::Pseudo, 1),
        ]
    );
    let modb = t.modules().nth(1).unwrap();
    assert_eq!((modb.lo, modb.hi), (0xffffffffc0001000, 0xffffffffc0002000));
}

#[test]
fn exact_name_lookup() {
    let t = table(SMALL);
    let s = found(&t, "vmlinux`foo");
    assert_eq!(s.addr, 0xffffffff81000020);
    assert_eq!(s.name.to_bytes(), b"foo");
    assert_eq!(s.module.to_bytes(), b"vmlinux");
    assert_eq!(s.ty, b't');
    // `foo` is in vmlinux and in mod_a at different addresses.
    match t.lookup(b"foo").unwrap() {
        Lookup::Ambiguous(s, e) => {
            assert_eq!(s.addr, 0xffffffff81000020, "the lowest address");
            assert_eq!(e.code(), AMBIGUOUS);
            assert!(e.message().contains("vmlinux`foo"), "{e}");
            assert!(e.message().contains("mod_a`foo"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // No prefix/suffix matching.
    assert_eq!(found(&t, "foo.cold").addr, 0xffffffff81000040);
    assert_eq!(t.lookup(b"fo").unwrap_err().code(), NOT_FOUND);
    assert_eq!(t.lookup(b"oo").unwrap_err().code(), NOT_FOUND);
    assert_eq!(t.lookup(b"foo.").unwrap_err().code(), NOT_FOUND);
    let s = found(&t, "mod_a`foo");
    assert_eq!(
        (s.addr, s.module.to_bytes(), s.ty),
        (0xffffffffc0000010, &b"mod_a"[..], b'T')
    );
    // Module names compare with - and _ equal.
    assert_eq!(found(&t, "mod-a`foo").addr, 0xffffffffc0000010);
}

#[test]
fn duplicates_at_one_address_are_one_answer() {
    let t = table(SMALL);
    assert_eq!(found(&t, "__key.0").addr, 0xffffffff810000a0);
    assert_eq!(t.lookup_all(b"__key.0").unwrap().len(), 1);
    // `dup` twice in vmlinux at different addresses and once in modb.
    let all = t.lookup_all(b"dup").unwrap();
    let addrs: Vec<u64> = all.iter().map(|s| s.addr).collect();
    assert_eq!(
        addrs,
        vec![0xffffffff81000080, 0xffffffff81000090, 0xffffffffc0001800]
    );
    assert_eq!(all[2].module.to_bytes(), b"modb");
    assert!(matches!(
        t.lookup(b"vmlinux`dup").unwrap(),
        Lookup::Ambiguous(..)
    ));
    assert_eq!(found(&t, "modb`dup").addr, 0xffffffffc0001800);
    assert_eq!(t.lookup_all(b"vmlinux`dup").unwrap().len(), 2);
    assert!(t.lookup_all(b"nothing").unwrap().is_empty());
}

#[test]
fn absolute_symbols_by_name_not_by_address() {
    let t = table(SMALL);
    let s = found(&t, "fixed_percpu_data");
    assert_eq!((s.addr, s.ty), (0, b'A'));
    let s = found(&t, "mod_a`zs_map_area");
    assert_eq!((s.addr, s.ty), (0x34000, b'a'));
    assert_eq!(t.symbolize(0).unwrap_err().code(), NOT_FOUND);
    assert_eq!(t.symbolize(0x34000).unwrap_err().code(), NOT_FOUND);
    assert_eq!(t.symbolize(0x1000).unwrap_err().code(), NOT_FOUND);
}

#[test]
fn symbolize_rules() {
    let t = table(SMALL);
    // Three names at _text: global before local, not __pfx_, kernel order.
    let (s, off) = t.symbolize(0xffffffff81000004).unwrap();
    assert_eq!((s.name.to_bytes(), off, s.size), (&b"_text"[..], 4, 0x10));
    // bar and bar_alias: both global, kernel order.
    let (s, _) = t.symbolize(0xffffffff81000061).unwrap();
    assert_eq!(s.name.to_bytes(), b"bar");
    let (s, off) = t.symbolize(0xffffffff81000020).unwrap();
    assert_eq!((s.name.to_bytes(), off, s.size), (&b"foo"[..], 0, 0x20));
    // The last core symbol has size 0 and nothing past it answers.
    let (s, off) = t.symbolize(0xffffffff81000100).unwrap();
    assert_eq!((s.name.to_bytes(), off, s.size), (&b"_etext"[..], 0, 0));
    let e = t.symbolize(0xffffffff81000101).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(
        e.message().contains("past the last symbol of vmlinux"),
        "{e}"
    );
    // Module symbols, given out of order in the file.
    let (s, off) = t.symbolize(0xffffffffc0001010).unwrap();
    assert_eq!(
        (s.name.to_bytes(), s.module.to_bytes(), off, s.size),
        (&b"mod_b_first"[..], &b"modb"[..], 0x10, 0x800)
    );
    let (s, _) = t.symbolize(0xffffffffc0000004).unwrap();
    assert_eq!((s.name.to_bytes(), s.size), (&b"mod_a_fn"[..], 0x10));
    // Past mod_a's last symbol: not found, even though other modules follow.
    let e = t.symbolize(0xffffffffc0000100).unwrap_err();
    assert!(e.message().contains("mod_a"), "{e}");
    // Pseudo-modules are regions too.
    let (s, _) = t.symbolize(0xffffffffc0000500).unwrap();
    assert_eq!(s.module.to_bytes(), b"__builtin__ftrace");
    assert!(t.symbolize(0xffffffffc0000501).is_err());
    assert!(t.symbolize(0xffffffff80000000).is_err());
    assert!(t.symbolize(u64::MAX).is_err());
}

#[test]
fn not_found_suggests_near_matches() {
    let t = table(SMALL);
    let e = t.lookup(b"foo.constprop.0").unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(e.message().contains("`foo.cold`"), "{e}");
    assert!(e.message().contains("`foo.isra.0`"), "{e}");
    let e = t.lookup(b"modb`foo").unwrap_err();
    assert!(
        e.message().contains("no symbol `foo` in module `modb`"),
        "{e}"
    );
    assert!(e.message().contains("`mod_a`foo`"), "{e}");
    assert!(e.message().contains("`vmlinux`foo`"), "{e}");
    let e = t.lookup(b"ext4`foo").unwrap_err();
    assert!(e.message().contains("no module `ext4`"), "{e}");
    assert!(e.message().contains("`mod_a`foo`"), "{e}");
    let e = t.lookup(b"nothing_like_it").unwrap_err();
    assert!(!e.message().contains("did you mean"), "{e}");
    assert!(e.message().contains("<buffer>"), "{e}");
}

#[test]
fn invalid_queries() {
    let t = table(SMALL);
    for q in ["", "a`b`c", "`foo", "foo`", "fo o"] {
        assert_eq!(t.lookup(q.as_bytes()).unwrap_err().code(), INVALID, "{q}");
    }
}

#[test]
fn names_are_c_strings_in_the_buffer() {
    let t = table(SMALL);
    let s = found(&t, "bar");
    assert_eq!(s.name.with_nul(), b"bar\0");
    let s = found(&t, "modb`mod_b_fn");
    assert_eq!(s.name.with_nul(), b"mod_b_fn\0");
    assert_eq!(s.module.with_nul(), b"modb\0");
}

#[test]
fn last_line_without_newline_and_non_utf8_names() {
    let t = table("ffffffff81000000 T _text\nffffffff81000010 t last");
    assert_eq!(found(&t, "last").addr, 0xffffffff81000010);
    let t = Table::from_bytes(b"ffffffff81000000 T caf\xe9\n", &Options::default()).unwrap();
    let s = match t.lookup(b"caf\xe9").unwrap() {
        Lookup::Found(s) => s,
        _ => panic!(),
    };
    assert_eq!(s.name.to_bytes(), b"caf\xe9");
}

#[test]
fn long_names() {
    let name = "x".repeat(511);
    let t = table(&format!(
        "ffffffff81000000 T {name}\nffffffff81000010 T y\n"
    ));
    assert_eq!(found(&t, &name).addr, 0xffffffff81000000);
}

#[test]
fn malformed_input_names_the_line_and_builds_nothing() {
    let e = err(b"ffffffff81000000 T a\nffffffff81000010 T b\nffffffff81000020 T c d\n");
    assert_eq!(e.code(), FORMAT);
    assert!(e.message().contains("<buffer>:3:"), "{e}");
    assert!(e.message().contains("c d"), "{e}");
    let e = err(b"ffffffff81000000 T a\n\nffffffff81000010 T b\n");
    assert!(e.message().contains(":2:"), "{e}");
    let e = err(b"ffffffff81000000 T a\nnot a kallsyms line at all\n");
    assert!(e.message().contains(":2:"), "{e}");
    let e = err(b"ffffffff81000000 T a\tmod\n");
    assert!(e.message().contains(":1:"), "{e}");
    let e = err(b"ffffffff81000000 T a\t[vmlinux]\n");
    assert_eq!(e.code(), FORMAT);
    assert!(e.message().contains(":1"), "{e}");
}

#[test]
fn empty_input_is_an_error() {
    for text in [&b""[..], b"\n", b"  \n\n"] {
        let e = err(text);
        assert_eq!(e.code(), FORMAT);
        assert!(e.message().contains("empty"), "{e}");
    }
}

#[test]
fn all_zero_addresses_are_restricted() {
    let text = "0000000000000000 A fixed_percpu_data\n0000000000000000 T _text\n0000000000000000 t foo\t[ext4]\n";
    let e = err(text.as_bytes());
    assert_eq!(e.code(), RESTRICTED);
    assert!(e.message().contains("kptr_restrict"), "{e}");
    assert!(e.message().contains("CAP_SYSLOG"), "{e}");
}

#[test]
fn patterns() {
    let t = table(SMALL);
    let collect = |p: &str| -> Vec<String> {
        let mut v = Vec::new();
        t.for_each_match(p.as_bytes(), |s| {
            v.push(format!(
                "{}`{}",
                s.module.to_string_lossy(),
                s.name.to_string_lossy()
            ));
            ControlFlow::<()>::Continue(())
        })
        .unwrap();
        v
    };
    assert_eq!(
        collect("foo*"),
        [
            "vmlinux`foo",
            "vmlinux`foo.cold",
            "vmlinux`foo.isra.0",
            "mod_a`foo"
        ]
    );
    assert_eq!(
        collect("mod_a`*"),
        ["mod_a`zs_map_area", "mod_a`mod_a_fn", "mod_a`foo"]
    );
    assert_eq!(collect("mod-?`*fn"), ["mod_a`mod_a_fn"]);
    assert_eq!(collect("*`foo"), ["vmlinux`foo", "mod_a`foo"]);
    assert_eq!(collect("mod*`dup"), ["modb`dup"]);
    assert_eq!(collect("vmlinux`dup"), ["vmlinux`dup", "vmlinux`dup"]);
    assert_eq!(
        collect("__builtin__*`*"),
        ["__builtin__ftrace`ftrace_trampoline"]
    );
    assert!(collect("nomatch*").is_empty());
    // Early stop returns the callback's value.
    let mut n = 0;
    let r = t
        .for_each_match(b"*", |_| {
            n += 1;
            if n == 3 {
                ControlFlow::Break(42)
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
    assert_eq!((r, n), (Some(42), 3));
    assert_eq!(
        t.for_each_match(b"[", |_| ControlFlow::<()>::Continue(()))
            .unwrap_err()
            .code(),
        INVALID
    );
}

#[test]
fn memory_is_accounted() {
    let t = table(SMALL);
    assert!(t.memory() >= SMALL.len());
    assert!(t.info().parse_ns > 0);
    assert_eq!(t.info().lines, t.len());
    assert_eq!(t.info().format, Format::Kallsyms);
}

/// Bad input on purpose: every kallsyms source has a bound, and crossing
/// it is an error naming the file, quickly and in bounded memory.
mod bounds {
    use super::*;
    use crate::base::read::limits;

    /// The error of opening `p` (panics if it opens).
    fn open_path(p: &std::path::Path) -> Result<()> {
        Table::open(&Options {
            kallsyms_path: Some(p.to_path_buf()),
            builtin_ranges_path: Some(PathBuf::new()),
            snapshot: crate::base::snapshot::SnapshotOptions {
                no_snapshot: true,
                ..Default::default()
            },
            ..Default::default()
        })
        .map(|_| panic!("{} opened", p.display()))
    }

    /// A FIFO in a fresh directory, fed by `feed` on a thread.
    fn fifo(
        feed: impl FnOnce(std::fs::File) + Send + 'static,
    ) -> (PathBuf, std::thread::JoinHandle<()>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ksym-fifo-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("fifo");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid path; mkfifo has no other precondition.
        let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0;
        assert!(
            made,
            "mkfifo {}: {}: this filesystem has no FIFOs (9p?); point TMPDIR at a tmpfs",
            p.display(),
            std::io::Error::last_os_error()
        );
        let q = p.clone();
        let h = std::thread::spawn(move || {
            if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&q) {
                feed(f); // ends with EPIPE once the reader gives up
            }
        });
        (p, h)
    }

    #[test]
    fn dev_zero_is_one_endless_line() {
        let e = open_path(std::path::Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.code(), FORMAT);
        assert!(
            e.message().contains("/dev/zero") && e.message().contains("line longer than"),
            "{e}"
        );
    }

    #[test]
    fn one_name_repeated_without_end() {
        let (p, h) = fifo(|mut f| {
            use std::io::Write;
            let line = b"ffffffff81000000 T foo\n".repeat(1000);
            while f.write_all(&line).is_ok() {}
        });
        let e = open_path(&p).unwrap_err();
        assert_eq!(e.code(), FORMAT);
        assert!(e.message().contains("share one name"), "{e}");
        h.join().unwrap(); // the writer stops on EPIPE
    }

    #[test]
    fn valid_lines_without_end() {
        let (p, h) = fifo(|mut f| {
            use std::io::Write;
            let mut i = 0u64;
            let mut block = Vec::with_capacity(1 << 16);
            loop {
                block.clear();
                for _ in 0..2000 {
                    writeln!(block, "ffffffff{:08x} T s{i}", i & 0xffff_ffff).unwrap();
                    i += 1;
                }
                if f.write_all(&block).is_err() {
                    break;
                }
            }
        });
        let e = open_path(&p).unwrap_err();
        assert_eq!(e.code(), FORMAT);
        assert!(
            e.message()
                .contains(&format!("{} MiB", limits::KALLSYMS >> 20)),
            "{e}"
        );
        h.join().unwrap();
    }

    #[test]
    fn a_long_line_in_a_regular_file() {
        let dir = std::env::temp_dir().join(format!("ksym-longline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("k");
        let mut text = b"ffffffff81000000 T a\nffffffff81000010 T ".to_vec();
        text.extend(std::iter::repeat_n(b'x', 40_000));
        text.push(b'\n');
        std::fs::write(&p, &text).unwrap();
        let e = open_path(&p).unwrap_err();
        assert_eq!(e.code(), FORMAT);
        assert!(
            e.message().contains(":2:") && e.message().contains("32767"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// From Linux 6.4 a module's text, data and rodata are separate
/// allocations, and other modules' lie between them (seen in the 6.12
/// guest: 9p's .exit.text before another module's text). A size estimate
/// stops at the next symbol of any module, not only at its own module's
/// next one. Values worked out by hand.
#[test]
fn module_sizes_stop_at_an_interleaved_module() {
    let t = table(
        "\
ffffffffc0001000 t a_init\t[a]
ffffffffc0001100 t a_exit\t[a]
ffffffffc0002000 t b_func\t[b]
ffffffffc0002080 t b_more\t[b]
ffffffffc0003000 d a_data\t[a]
ffffffffc0003040 d a_more\t[a]
",
    );
    let size = |name: &str| found(&t, name).size;
    assert_eq!(size("a`a_init"), 0x100);
    // Its own module's next symbol is a_data (0x1f00 away); b_func is first.
    assert_eq!(size("a`a_exit"), 0xf00);
    assert_eq!(size("b`b_func"), 0x80);
    // b's last symbol: a's data comes next; nothing of b follows.
    assert_eq!(size("b`b_more"), 0);
    assert_eq!(size("a`a_data"), 0x40);
    let (s, off) = t.symbolize(0xffffffffc0001f00).unwrap();
    assert_eq!((s.name.to_bytes(), off), (&b"a_exit"[..], 0xe00));
}
