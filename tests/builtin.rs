//! module`symbol resolution with built-in modules (modules.builtin.ranges and
//! /proc/kallmodsyms), exact sizes from a vmlinux ELF, patterns and near
//! matches. Fixtures: tests/fixtures (see their READMEs) and the bundled
//! real kernels.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ksym::internals::error::{AMBIGUOUS, FORMAT, INVALID, NOT_FOUND};
use ksym::internals::rules::modules::ModuleKind;
use ksym::internals::rules::query::normalize_module;
use ksym::internals::table::{SYM_BUILTIN, SYM_SIZE_EXACT};
use ksym::{Lookup, Symbol, Table, TableOptions as Options};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn ranges_table() -> Table {
    Table::open(&Options {
        kallsyms_path: Some(fixture("builtin/kallsyms")),
        builtin_ranges_path: Some(fixture("builtin/modules.builtin.ranges")),
        ..Default::default()
    })
    .unwrap()
}

fn found<'t>(t: &'t Table, q: &str) -> Symbol<'t> {
    match t.lookup(q.as_bytes()) {
        Ok(Lookup::Found(s)) => s,
        other => panic!("{q}: {other:?}"),
    }
}

fn not_found(t: &Table, q: &str) -> String {
    match t.lookup(q.as_bytes()) {
        Err(e) if e.code() == NOT_FOUND => e.message().to_string(),
        other => panic!("{q}: expected not found, got {other:?}"),
    }
}

fn ambiguous(t: &Table, q: &str) -> u64 {
    match t.lookup(q.as_bytes()) {
        Ok(Lookup::Ambiguous(s, e)) => {
            assert_eq!(e.code(), AMBIGUOUS);
            s.addr
        }
        other => panic!("{q}: expected ambiguous, got {other:?}"),
    }
}

fn matches(t: &Table, pattern: &str) -> Vec<String> {
    let mut v = Vec::new();
    t.for_each_match(pattern.as_bytes(), |s| {
        v.push(format!("{}`{}", s.module, s.name));
        ControlFlow::<()>::Continue(())
    })
    .unwrap();
    v
}

const TEXT: u64 = 0xffffffff81000000;

#[test]
fn ranges_attribute_core_symbols() {
    let t = ranges_table();
    let s = found(&t, "ext4`ext4_file_open");
    assert_eq!(
        (s.addr, s.module.to_bytes(), s.flags & SYM_BUILTIN),
        (TEXT + 0x200, &b"ext4"[..], SYM_BUILTIN)
    );
    // Unqualified names search everything; vmlinux` excludes built-in modules.
    assert_eq!(found(&t, "ext4_file_open").module.to_bytes(), b"ext4");
    let msg = not_found(&t, "vmlinux`ext4_file_open");
    assert!(msg.contains("`ext4`ext4_file_open`"), "{msg}");
    // Duplicates inside one module.
    ambiguous(&t, "ext4`ext4_helper");
    assert_eq!(t.lookup_all(b"ext4`ext4_helper").unwrap().len(), 2);
    assert_eq!(
        t.lookup_all(b"ext4_helper").unwrap().len(),
        3,
        "two in ext4, one in loadmod"
    );
    // One name in vmlinux, a built-in module and a loadable one.
    assert_eq!(found(&t, "vmlinux`common_name").addr, TEXT + 0x180);
    assert_eq!(found(&t, "ext4`common_name").addr, TEXT + 0x2c0);
    assert_eq!(found(&t, "loadmod`common_name").addr, 0xffffffffc0000100);
    assert_eq!(ambiguous(&t, "common_name"), TEXT + 0x180);
    // A range shared by two modules: the symbol belongs to each.
    for q in [
        "mod_a`shared_fn",
        "mod-a`shared_fn",
        "mod_b`shared_fn",
        "mod-b`shared_fn",
    ] {
        let s = found(&t, q);
        assert_eq!(s.addr, TEXT + 0x500, "{q}");
        assert_eq!(
            normalize_module(s.module.to_bytes()),
            normalize_module(&q.as_bytes()[..5]),
            "{q}"
        );
        assert_eq!(s.flags & SYM_BUILTIN, SYM_BUILTIN);
    }
    not_found(&t, "vmlinux`shared_fn");
    // - and _ in module names; a range's end is exclusive.
    assert_eq!(found(&t, "crc_itu_t`crc_itu_t_fn").addr, TEXT + 0x600);
    assert_eq!(found(&t, "vmlinux`after_range").addr, TEXT + 0x700);
    not_found(&t, "crc_itu_t`after_range");
    // Data sections have their own anchor.
    assert_eq!(found(&t, "ext4`ext4_data").addr, 0xffffffff81400040);
    assert_eq!(found(&t, "vmlinux`vmlinux_data").addr, 0xffffffff81400000);
    // A section whose anchor is not in kallsyms is skipped, with a note.
    assert_eq!(
        found(&t, "vmlinux`ext4_rodata").module.to_bytes(),
        b"vmlinux"
    );
    let notes = &t.info().diagnostics;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("__start_rodata_missing") && n.contains(".rodata")),
        "{notes:?}"
    );
    assert_eq!(
        t.info().builtin_ranges.as_deref(),
        Some(fixture("builtin/modules.builtin.ranges").as_path())
    );
}

#[test]
fn symbolize_reports_builtin_modules() {
    let t = ranges_table();
    let (s, off) = t.symbolize(TEXT + 0x204).unwrap();
    assert_eq!(
        (s.name.to_bytes(), s.module.to_bytes(), off),
        (&b"ext4_file_open"[..], &b"ext4"[..], 4)
    );
    assert_eq!(s.flags, SYM_BUILTIN);
    // Sizes are estimated within the core image, across module boundaries.
    let (s, _) = t.symbolize(TEXT + 0x390).unwrap();
    assert_eq!((s.name.to_bytes(), s.size), (&b"ext4_helper"[..], 0x80));
    let (s, _) = t.symbolize(TEXT + 0x510).unwrap();
    assert_eq!(
        s.module.to_bytes(),
        b"mod_a",
        "the first module of a shared range"
    );
    let (s, _) = t.symbolize(TEXT + 0x700).unwrap();
    assert_eq!((s.name.to_bytes(), s.flags), (&b"after_range"[..], 0));
    // Loadable module given out of order, init text in a second run.
    let (s, off) = t.symbolize(0xffffffffc0000304).unwrap();
    assert_eq!(
        (s.name.to_bytes(), s.module.to_bytes(), off),
        (&b"loadmod_exit"[..], &b"loadmod"[..], 4)
    );
    let (s, off) = t.symbolize(0xffffffffc0000400).unwrap();
    assert_eq!(
        (s.name.to_bytes(), s.size, off),
        (&b"loadmod_init_text"[..], 0, 0)
    );
    let e = t.symbolize(0xffffffffc0000404).unwrap_err();
    assert!(
        e.message().contains("past the last symbol of loadmod"),
        "{e}"
    );
    assert_eq!(found(&t, "loadmod`loadmod_init").size, 0x100);
}

#[test]
fn modules_are_listed_with_their_kind() {
    let t = ranges_table();
    let mods: BTreeMap<String, (ModuleKind, usize)> = t
        .modules()
        .map(|m| (m.name.to_string_lossy().into_owned(), (m.kind, m.symbols)))
        .collect();
    assert_eq!(mods["vmlinux"].0, ModuleKind::Vmlinux);
    assert_eq!(mods["ext4"], (ModuleKind::Builtin, 5));
    assert_eq!(
        mods["mod_a"],
        (ModuleKind::Builtin, 2),
        "named as the kernel does: `-` as `_`"
    );
    assert_eq!(mods["mod_b"], (ModuleKind::Builtin, 2));
    assert_eq!(mods["crc_itu_t"], (ModuleKind::Builtin, 1));
    assert_eq!(mods["loadmod"], (ModuleKind::Loadable, 7));
    assert_eq!(mods["bpf"].0, ModuleKind::Pseudo);
    assert_eq!(mods["__builtin__ftrace"].0, ModuleKind::Pseudo);
    let loadmod = t
        .modules()
        .find(|m| m.name.to_bytes() == b"loadmod")
        .unwrap();
    assert_eq!(
        (loadmod.lo, loadmod.hi),
        (0xffffffffc0000000, 0xffffffffc0000400)
    );
}

#[test]
fn patterns_on_names_and_modules() {
    let t = ranges_table();
    assert_eq!(
        matches(&t, "ext4`*"),
        [
            "ext4`ext4_file_open",
            "ext4`ext4_helper",
            "ext4`common_name",
            "ext4`ext4_helper",
            "ext4`ext4_data"
        ]
    );
    assert_eq!(
        matches(&t, "*`common_name"),
        [
            "vmlinux`common_name",
            "ext4`common_name",
            "loadmod`common_name"
        ]
    );
    assert_eq!(
        matches(&t, "mod_?`shared*"),
        ["mod_a`shared_fn", "mod_a`shared_helper"]
    );
    assert_eq!(
        matches(&t, "mod-b`*"),
        ["mod_b`shared_fn", "mod_b`shared_helper"]
    );
    assert_eq!(matches(&t, "[lm]o*`*_api"), ["loadmod`loadmod_api"]);
    assert_eq!(
        matches(&t, "vmlinux`vfs_*"),
        ["vmlinux`vfs_read", "vmlinux`vfs_write"]
    );
    // ext4's text and data are ext4's; its .rodata range is skipped (the
    // section's anchor `__start_rodata_missing` is not in kallsyms), so
    // ext4_rodata alone stays vmlinux's.
    assert_eq!(matches(&t, "vmlinux`ext4_*"), ["vmlinux`ext4_rodata"]);
}

/// The same kernel loaded elsewhere (KASLR): the ranges file is relative to
/// its anchors, so the attributions do not change.
#[test]
fn kaslr_shifted_copy_gives_the_same_attributions() {
    let text = std::fs::read(fixture("builtin/kallsyms")).unwrap();
    let shift = 0x2a00000u64;
    let shifted: String = String::from_utf8(text.clone())
        .unwrap()
        .lines()
        .map(|l| {
            let (addr, rest) = l.split_at(16);
            let a = u64::from_str_radix(addr, 16).unwrap();
            let ty = rest.as_bytes()[1];
            let a = if ty == b'a' || ty == b'A' {
                a
            } else {
                a + shift
            };
            format!("{a:016x}{rest}\n")
        })
        .collect();
    let opts = Options {
        builtin_ranges_path: Some(fixture("builtin/modules.builtin.ranges")),
        ..Default::default()
    };
    let a = Table::from_bytes(&text, &opts).unwrap();
    let b = Table::from_bytes(shifted.as_bytes(), &opts).unwrap();
    let attribution = |t: &Table, delta: u64| -> BTreeSet<(String, u64, String)> {
        let mut out = BTreeSet::new();
        for m in t.modules() {
            let pat = format!("{}`*", m.name);
            t.for_each_match(pat.as_bytes(), |s| {
                let a = if s.ty == b'a' || s.ty == b'A' {
                    s.addr
                } else {
                    s.addr - delta
                };
                out.insert((s.name.to_string(), a, s.module.to_string()));
                ControlFlow::<()>::Continue(())
            })
            .unwrap();
        }
        out
    };
    let (ra, rb) = (attribution(&a, 0), attribution(&b, shift));
    assert_eq!(
        ra.len(),
        a.len() + 2,
        "shared_fn and shared_helper belong to two modules each"
    );
    assert_eq!(ra, rb);
    assert_eq!(found(&b, "ext4`ext4_file_open").addr, TEXT + shift + 0x200);
}

/// Brute-force attribution of every line, from the formats' definitions.
fn reference_attribution(
    kallsyms: &[u8],
    ranges: &str,
) -> BTreeMap<(Vec<u8>, u64), BTreeSet<Vec<u8>>> {
    let refs = common::reference(kallsyms);
    // Anchors: the first core symbol of that name.
    let anchor = |name: &str| {
        refs.iter()
            .find(|r| r.name == name.as_bytes() && r.module == b"vmlinux")
            .map(|r| r.addr)
    };
    let mut bases: BTreeMap<String, Option<u64>> = BTreeMap::new();
    let mut spans: Vec<(String, u64, u64, Vec<Vec<u8>>)> = Vec::new();
    for l in ranges.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (s, e) = f[1].split_once('-').unwrap();
        let (s, e) = (
            u64::from_str_radix(s, 16).unwrap(),
            u64::from_str_radix(e, 16).unwrap(),
        );
        if f[2] == "=" {
            bases.insert(f[0].to_string(), anchor(f[3]).map(|a| a - s));
        } else {
            spans.push((
                f[0].to_string(),
                s,
                e,
                f[2..]
                    .iter()
                    .map(|m| normalize_module(m.as_bytes()))
                    .collect(),
            ));
        }
    }
    let mut out: BTreeMap<(Vec<u8>, u64), BTreeSet<Vec<u8>>> = BTreeMap::new();
    for r in &refs {
        let mut mods: BTreeSet<Vec<u8>> = BTreeSet::new();
        if r.module != b"vmlinux" {
            mods.insert(normalize_module(&r.module));
        } else if r.ty != b'a' && r.ty != b'A' {
            for (sec, s, e, m) in &spans {
                if let Some(Some(base)) = bases.get(sec) {
                    if base + s <= r.addr && r.addr < base + e {
                        mods.extend(m.iter().cloned());
                    }
                }
            }
        }
        if mods.is_empty() {
            mods.insert(b"vmlinux".to_vec());
        }
        out.entry((r.name.clone(), r.addr))
            .or_default()
            .extend(mods);
    }
    out
}

fn table_attribution(t: &Table) -> BTreeMap<(Vec<u8>, u64), BTreeSet<Vec<u8>>> {
    let mut out: BTreeMap<(Vec<u8>, u64), BTreeSet<Vec<u8>>> = BTreeMap::new();
    for m in t.modules() {
        let pat = [m.name.to_bytes(), b"`*"].concat();
        t.for_each_match(&pat, |s| {
            out.entry((s.name.to_bytes().to_vec(), s.addr))
                .or_default()
                .insert(normalize_module(s.module.to_bytes()));
            ControlFlow::<()>::Continue(())
        })
        .unwrap();
    }
    out
}

#[test]
fn ground_truth_attribution_of_every_symbol() {
    for (kallsyms, ranges) in [
        (
            std::fs::read(fixture("builtin/kallsyms")).unwrap(),
            fixture("builtin/modules.builtin.ranges"),
        ),
        (
            common::data("linux-6.12-cloud/kallsyms"),
            fixture("linux-6.12-cloud/modules.builtin.ranges"),
        ),
    ] {
        let t = Table::from_bytes(
            &kallsyms,
            &Options {
                builtin_ranges_path: Some(ranges.clone()),
                ..Default::default()
            },
        )
        .unwrap();
        let want = reference_attribution(&kallsyms, &std::fs::read_to_string(&ranges).unwrap());
        let got = table_attribution(&t);
        assert_eq!(got.len(), want.len());
        for (k, v) in &want {
            assert_eq!(
                got.get(k),
                Some(v),
                "{} at {:#x}",
                String::from_utf8_lossy(&k.0),
                k.1
            );
        }
        let builtin = want
            .values()
            .filter(|m| !m.contains(&b"vmlinux".to_vec()))
            .count();
        eprintln!(
            "{}: {} symbols attributed, {builtin} outside vmlinux",
            ranges.display(),
            want.len()
        );
    }
}

#[test]
fn real_6_12_kernel_with_builtin_ext4() {
    let t = Table::from_bytes(
        &common::data("linux-6.12-cloud/kallsyms"),
        &Options {
            builtin_ranges_path: Some(fixture("linux-6.12-cloud/modules.builtin.ranges")),
            ..Default::default()
        },
    )
    .unwrap();
    let s = found(&t, "ext4`ext4_file_open");
    assert_eq!((s.addr, s.flags), (0xffffffff8152c4e0, SYM_BUILTIN));
    assert!(not_found(&t, "vmlinux`ext4_file_open").contains("`ext4`ext4_file_open`"));
    assert_eq!(
        found(&t, "jbd2`jbd2_journal_start").addr,
        0xffffffff81595ab0
    );
    assert_eq!(
        found(&t, "mbcache`mb_cache_entry_touch").addr,
        0xffffffff814dfe00
    );
    // The same static name twice inside ext4's rodata.
    ambiguous(&t, "ext4`ext4_filetype_table");
    // Loadable modules keep working next to built-in ones.
    assert_eq!(found(&t, "xfs`xfs_file_open").module.to_bytes(), b"xfs");
    let kinds: Vec<(String, ModuleKind)> = t
        .modules()
        .filter(|m| m.kind == ModuleKind::Builtin)
        .map(|m| (m.name.to_string(), m.kind))
        .collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
}

#[test]
fn kallmodsyms_names_builtin_modules_and_exact_sizes() {
    let t = Table::open(&Options {
        kallsyms_path: Some(fixture("builtin/kallmodsyms")),
        // Ignored, with a note: kallmodsyms names built-in modules itself.
        builtin_ranges_path: Some(fixture("builtin/modules.builtin.ranges")),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        t.info().format,
        ksym::internals::formats::kallsyms::Format::Kallmodsyms
    );
    assert!(
        t.info().diagnostics.iter().any(|d| d.contains("not used")),
        "{:?}",
        t.info().diagnostics
    );
    let s = found(&t, "ext4`ext4_file_open");
    assert_eq!((s.size, s.flags), (0x80, SYM_BUILTIN | SYM_SIZE_EXACT));
    assert_eq!(
        found(&t, "ext4`ext4_rodata").addr,
        0xffffffff81200010,
        "kallmodsyms knows it is ext4"
    );
    not_found(&t, "vmlinux`ext4_rodata");
    assert_eq!(
        found(&t, "mod_b`shared_helper").flags & SYM_BUILTIN,
        SYM_BUILTIN
    );
    let s = found(&t, "loadmod`loadmod_api");
    assert_eq!((s.size, s.flags), (0x100, SYM_SIZE_EXACT));
    let kinds: BTreeMap<String, ModuleKind> =
        t.modules().map(|m| (m.name.to_string(), m.kind)).collect();
    assert_eq!(kinds["ext4"], ModuleKind::Builtin);
    assert_eq!(kinds["crc_itu_t"], ModuleKind::Builtin);
    assert_eq!(kinds["loadmod"], ModuleKind::Loadable);
    assert_eq!(kinds["bpf"], ModuleKind::Pseudo);
    // Exact sizes: vfs_read is 0x60 long, then nothing until 0x180.
    let (s, off) = t.symbolize(TEXT + 0x15f).unwrap();
    assert_eq!(
        (s.name.to_bytes(), off, s.flags & SYM_SIZE_EXACT),
        (&b"vfs_read"[..], 0x5f, SYM_SIZE_EXACT)
    );
    let e = t.symbolize(TEXT + 0x160).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(e.message().contains("gap after vmlinux`vfs_read"), "{e}");
    assert!(
        t.symbolize(TEXT + 0x6a0).is_err(),
        "after crc_itu_t_fn (0xa0 long)"
    );
    // Size 0 in the column: estimated, as without kallmodsyms.
    let (s, _) = t.symbolize(TEXT + 0x10).unwrap();
    assert_eq!(
        (s.name.to_bytes(), s.size, s.flags),
        (&b"_stext"[..], 0x100, 0)
    );
}

#[test]
fn vmlinux_elf_gives_exact_sizes() {
    let (_dir, elf) = common::data_file("linux-6.1-cloud/vmlinux.symbols");
    let text = common::data("linux-6.1-cloud/kallsyms");
    let t = Table::from_bytes(
        &text,
        &Options {
            vmlinux_path: Some(elf.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        t.info().size_source,
        ksym::internals::table::SizeSource::Vmlinux
    );
    let s = found(&t, "vmlinux`schedule");
    assert_eq!(
        (s.addr, s.size, s.flags),
        (0xffffffff81a114f0, 199, SYM_SIZE_EXACT)
    );
    let (x, off) = t.symbolize(s.addr + 198).unwrap();
    assert_eq!((x.name.to_bytes(), off), (&b"schedule"[..], 198));
    // Every global function of the ELF with a unique name: the table agrees
    // with the ELF's own size, and the byte after it is not in it.
    let data = std::fs::read(&elf).unwrap();
    let file = object::File::parse(&*data).unwrap();
    use object::{Object, ObjectSymbol};
    let mut count: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    for sym in file.symbols() {
        *count.entry(sym.name_bytes().unwrap().to_vec()).or_default() += 1;
    }
    let mut checked = 0;
    let mut gaps = 0;
    for sym in file.symbols() {
        let name = sym.name_bytes().unwrap();
        if sym.kind() != object::SymbolKind::Text
            || !sym.is_global()
            || sym.size() == 0
            || count[name] != 1
        {
            continue;
        }
        let q = [b"vmlinux`", name].concat();
        let Ok(Lookup::Found(s)) = t.lookup(&q) else {
            continue;
        };
        assert_eq!(
            (s.addr, s.size, s.flags & SYM_SIZE_EXACT),
            (sym.address(), sym.size(), SYM_SIZE_EXACT)
        );
        let past = s.addr + s.size;
        match t.symbolize(past) {
            Ok((n, _)) => assert!(
                n.addr > s.addr || n.name != s.name,
                "{} ends at {past:#x}",
                s.name
            ),
            Err(e) => {
                assert_eq!(e.code(), NOT_FOUND);
                gaps += 1;
            }
        }
        checked += 1;
    }
    assert!(checked > 10_000, "{checked}");
    assert!(gaps > 0, "padding between functions shows up as gaps");
}

#[test]
fn vmlinux_of_another_kernel_is_refused() {
    let (_dir, elf) = common::data_file("linux-6.1-cloud/vmlinux.symbols");
    let e = Table::from_bytes(
        &common::data("linux-6.12-cloud/kallsyms"),
        &Options {
            vmlinux_path: Some(elf),
            ..Default::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.code(), INVALID);
    assert!(e.message().contains("does not match"), "{e}");
    // Not an ELF at all.
    let e = Table::from_bytes(
        &common::data("linux-6.1-cloud/kallsyms"),
        &Options {
            vmlinux_path: Some(fixture("builtin/kallsyms")),
            ..Default::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.code(), FORMAT);
    assert!(e.message().contains("builtin/kallsyms"), "{e}");
}

#[test]
fn vmlinux_with_two_text_anchors() {
    // kallsyms of that ELF's kernel, moved by a KASLR slide of 0x80000000:
    // `_text` and f1 and f2 at their ELF addresses (0x1000000..) + slide.
    let text = b"0000000081000000 T _text\n0000000081000001 T f1\n0000000081000002 T f2\n";
    let open = |elf: &str| {
        Table::from_bytes(
            text,
            &Options {
                vmlinux_path: Some(fixture(&format!("vmlinux-two-text/{elf}"))),
                ..Default::default()
            },
        )
    };
    // A linker's: the global `_text` is the anchor, the local one is not.
    let t = open("local-and-global.elf").unwrap();
    for (name, size) in [("f1", 1), ("f2", 2)] {
        let s = found(&t, name);
        assert_eq!(
            (s.size, s.flags & SYM_SIZE_EXACT),
            (size, SYM_SIZE_EXACT),
            "{name}"
        );
    }
    // Two global ones: which slide is meant cannot be known.
    let e = open("two-global.elf").err().unwrap();
    assert_eq!(e.code(), FORMAT, "{e}");
    assert!(
        e.message()
            .contains("two global `_text` symbols, at 0x1000006 and 0x1000000"),
        "{e}"
    );
    assert!(e.message().contains("two-global.elf"), "{e}");
}

#[test]
fn bad_ranges_files() {
    let dir = common::TempDir::new();
    let p = dir.path().join("ranges");
    std::fs::write(&p, ".text 00000000-00000000 = _text\n.text 200-100 ext4\n").unwrap();
    let e = Table::open(&Options {
        kallsyms_path: Some(fixture("builtin/kallsyms")),
        builtin_ranges_path: Some(p.clone()),
        ..Default::default()
    })
    .err()
    .unwrap();
    assert_eq!(e.code(), FORMAT);
    assert!(e.message().contains(":2:"), "{e}");
    let e = Table::open(&Options {
        kallsyms_path: Some(fixture("builtin/kallsyms")),
        builtin_ranges_path: Some(dir.path().join("missing")),
        ..Default::default()
    })
    .err()
    .unwrap();
    assert_eq!(e.code(), NOT_FOUND);
    // "" means: no ranges file.
    let t = Table::open(&Options {
        kallsyms_path: Some(fixture("builtin/kallsyms")),
        builtin_ranges_path: Some("".into()),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(found(&t, "vmlinux`ext4_file_open").flags, 0);
}

#[test]
fn near_matches_in_not_found_messages() {
    let t = Table::from_bytes(
        &common::data("linux-6.12-cloud/kallsyms"),
        &Options::default(),
    )
    .unwrap();
    // Compiler-suffixed variants of the name.
    let mut with_suffix = None;
    t.for_each_match(b"vmlinux`*.isra.0", |s| {
        with_suffix = Some(s.name.to_string());
        ControlFlow::Break(())
    })
    .unwrap();
    let full = with_suffix.unwrap();
    let stem = full.strip_suffix(".isra.0").unwrap();
    let msg = not_found(&t, stem);
    assert!(msg.contains(&format!("`{full}`")), "{msg}");
    // The same name in other modules.
    let msg = not_found(&t, "xfs`nft_register_chain_type");
    assert!(msg.contains("`nf_tables`nft_register_chain_type`"), "{msg}");
    let msg = not_found(&t, "ext4`xfs_file_open");
    assert!(msg.contains("no module `ext4`"), "{msg}");
    assert!(msg.contains("`xfs`xfs_file_open`"), "{msg}");
}
