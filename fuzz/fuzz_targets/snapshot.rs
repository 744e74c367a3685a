//! Snapshots (table and BTF) damaged byte by byte: a snapshot written by a
//! real open, then each input's patches applied to it before the next
//! open. The input's first byte picks the snapshot (bit 0: BTF, else the
//! table) and whether to cut it at the first patch (bit 1); then 5-byte
//! patches: a u32 offset (taken modulo the length) and a byte XORed in.
//!
//! Whatever the damage, the open succeeds (a snapshot that does not check
//! is ignored and replaced, never an error), and:
//! - table: every answer is the undamaged table's (the table read from
//!   the source, no snapshot), errors included: every name and
//!   module`name looked up (the symbol, or the ambiguity and its message,
//!   or the error's code and message), every symbol's address and offsets
//!   inside it and addresses outside any symbol symbolized, and patterns
//!   matched (every symbol, in order). No error is a legitimate answer of
//!   its own: damage outside the checksum checked at open (the text,
//!   entries and index) fails the checksum checked on the first query,
//!   which sends every query to a read of the source (docs/snapshots.md),
//!   and the source is there to read.
//! - BTF: every (name, kind) has the undamaged BTF's first id (or none),
//!   so has every name asked with any kind, and every name's CO-RE
//!   candidates (by essential name) are the undamaged list; except, as
//!   docs/snapshots.md says, for the types whose offset the damage changed
//!   while keeping the offsets rising and in the section (checked for that
//!   only): such a type may be lost from an answer or answer in place of
//!   another, and only such a type.
//!
//! Needs euid 0 (snapshots are root's), and, for the table half, real
//! addresses in /proc/kallsyms (table snapshots are only for a process
//! that reads them). Otherwise it prints one line `SKIP kernel fuzz
//! snapshot: ...` (make fuzz and make test-fuzz show it and add it to
//! target/tmp/ksym-skipped; the BTF half still runs when only addresses
//! are hidden) and fails when `KSYM_REQUIRE` has `kernel` (or
//! `KSYM_REQUIRE_KERNEL=1`), as tests/common's `skip_need` does.
#![no_main]
use libfuzzer_sys::fuzz_target;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ksym::internals::btf::KernelBtf;
use ksym::internals::table::{Lookup, Symbol, Table};

const BTF: &[u8] = include_bytes!("../seeds/vmlinux-small.btf");

struct Setup {
    /// `None` where this process reads no real addresses.
    table: Option<TableSetup>,
    btf: BtfSetup,
}

struct TableSetup {
    opts: ksym::internals::table::Options,
    snap: (PathBuf, Vec<u8>),
    /// Names the table holds (plain and module`name) and one it does not,
    /// each with the undamaged table's answer.
    lookups: Vec<(Vec<u8>, Answer)>,
    /// Addresses: of each symbol, inside it, and outside every symbol.
    addrs: Vec<(u64, Answer)>,
    patterns: Vec<(&'static [u8], Matches)>,
}

struct BtfSetup {
    opts: ksym::internals::btf::Options,
    snap: (PathBuf, Vec<u8>),
    /// Every named type's (name, kind) and an absent name's, with the
    /// undamaged BTF's answers.
    types: Vec<TypeAnswers>,
}

/// A (name, kind) and the undamaged BTF's first id of that name and kind,
/// first id of that name, and CO-RE candidates of that name.
struct TypeAnswers {
    name: Vec<u8>,
    kind: u32,
    first: Option<u32>,
    any: Option<u32>,
    cands: Vec<u32>,
}

/// A symbol as owned data: name, module, address, size, type, flags.
type Sym = (String, String, u64, u64, char, u32);
/// An error's code and message.
type Failure = (i32, String);
/// A lookup's (found, or ambiguous with its message) or symbolize's
/// (symbol, offset) answer, or the error.
type Answer = Result<(Sym, u64, Option<String>), Failure>;
/// The symbols a pattern matches, in order, or the error.
type Matches = Result<Vec<Sym>, Failure>;

fn sym(s: &Symbol<'_>) -> Sym {
    (
        s.name.to_string_lossy().into_owned(),
        s.module.to_string_lossy().into_owned(),
        s.addr,
        s.size,
        char::from(s.ty),
        s.flags,
    )
}

fn failure(e: &ksym::Error) -> Failure {
    (e.code(), e.message().to_string())
}

fn lookup(t: &Table, q: &[u8]) -> Answer {
    match t.lookup(q) {
        Ok(Lookup::Found(s)) => Ok((sym(&s), 0, None)),
        Ok(Lookup::Ambiguous(s, e)) => Ok((sym(&s), 0, Some(e.message().to_string()))),
        Err(e) => Err(failure(&e)),
    }
}

fn symbolize(t: &Table, addr: u64) -> Answer {
    t.symbolize(addr)
        .map(|(s, off)| (sym(&s), off, None))
        .map_err(|e| failure(&e))
}

fn matches(t: &Table, pattern: &[u8]) -> Matches {
    let mut out = Vec::new();
    t.for_each_match(pattern, |s| {
        out.push(sym(s));
        ControlFlow::<()>::Continue(())
    })
    .map_err(|e| failure(&e))?;
    Ok(out)
}

/// Patterns: everything, prefixes, classes, one module, any module, none,
/// and a malformed one (the same error both ways).
const PATTERNS: &[&[u8]] = &[
    b"*",
    b"sym_1*",
    b"sym_?",
    b"sym_[0-3]?",
    b"mod_sym_*",
    b"mod1`*",
    b"*`mod_sym_4?",
    b"vmlinux`sym_49*",
    b"nomatch*",
    b"sym_[",
];

/// tests/common's `Need::Kernel.required()`: is the kernel part required?
fn kernel_required() -> bool {
    std::env::var("KSYM_REQUIRE_KERNEL").as_deref() == Ok("1")
        || std::env::var("KSYM_REQUIRE").is_ok_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|w| w == "all" || w == "kernel")
        })
}

/// tests/common's `skip`: one line, or a failure when required.
fn skip(why: &str) {
    assert!(
        !kernel_required(),
        "KSYM_REQUIRE has kernel, but fuzz snapshot cannot run: {why}"
    );
    eprintln!("SKIP kernel fuzz snapshot: {why}");
}

/// Does /proc/kallsyms show this process real addresses? The library's
/// one rule (its first lines), which decides whether it keeps snapshots.
fn reads_real_addresses() -> bool {
    ksym::kallsyms_shows_addresses(Path::new("/proc/kallsyms")).unwrap_or(false)
}

fn snapshot_file(dir: &Path, stem: &str) -> (PathBuf, Vec<u8>) {
    // The table's snapshot is finished by a thread of the library.
    ksym::internals::table::wait_for_snapshot_writers();
    let path = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with(stem) && n.ends_with(".snap")
        })
        .unwrap_or_else(|| panic!("no {stem} snapshot written in {}", dir.display()));
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

fn setup() -> Option<&'static Setup> {
    static S: OnceLock<Option<Setup>> = OnceLock::new();
    S.get_or_init(|| {
        // /proc/self belongs to the effective uid.
        use std::os::unix::fs::MetadataExt;
        if std::fs::metadata("/proc/self").map_or(true, |m| m.uid() != 0) {
            skip("needs euid 0 (snapshots are root's): no input exercised");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("ksym-fuzz-snapshot-{}", std::process::id()));
        let snap = dir.join("snap");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let boot = dir.join("boot_id");
        std::fs::write(&boot, b"00000000-fuzz-0000-0000-000000000000\n").unwrap();
        let table = if reads_real_addresses() {
            Some(table_setup(&dir, &snap, &boot))
        } else {
            skip(
                "/proc/kallsyms hides addresses from this process (kptr_restrict, \
                 CAP_SYSLOG): table snapshots not exercised, BTF snapshots are",
            );
            None
        };
        let btf = btf_setup(&dir, &snap, &boot);
        Some(Setup { table, btf })
    })
    .as_ref()
}

fn table_setup(dir: &Path, snap: &Path, boot: &Path) -> TableSetup {
    // A small kallsyms with modules, names repeated and sizes implied.
    let mut text = String::new();
    for i in 0..600u64 {
        let ty = if i % 7 == 0 { 't' } else { 'T' };
        text += &format!("ffffffff81{:06x} {ty} sym_{}\n", i * 0x40, i % 500);
    }
    for i in 0..100u64 {
        text += &format!("ffffffffc0{:06x} t mod_sym_{i}\t[mod{}]\n", i * 0x20, i % 3);
    }
    let kallsyms = dir.join("kallsyms");
    std::fs::write(&kallsyms, text).unwrap();
    let opts = ksym::internals::table::Options {
        kallsyms_path: Some(kallsyms),
        builtin_ranges_path: Some(PathBuf::new()),
        modules_path: Some(dir.join("no-modules")),
        snapshot: ksym::SnapshotOptions {
            snapshot_dir: Some(snap.to_path_buf()),
            boot_id_path: Some(boot.to_path_buf()),
            ..Default::default()
        },
        ..Default::default()
    };
    let t = Table::open(&opts).unwrap();
    assert!(t.info().snapshot.written, "{:?}", t.info().snapshot);
    // The oracle: the table read from kallsyms itself, no snapshot.
    let plain = Table::open(&ksym::internals::table::Options {
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..opts.snapshot.clone()
        },
        ..opts.clone()
    })
    .unwrap();
    assert!(!plain.info().snapshot.loaded);
    let mut names = Vec::new();
    let mut addrs = vec![0, 1, 0xffffffff80000000, 0xffffffffa0000000, u64::MAX];
    let _ = plain.for_each_match(b"*", |s| {
        names.push(s.name.to_bytes().to_vec());
        names.push([s.module.to_bytes(), b"`", s.name.to_bytes()].concat());
        // The symbol and inside it (sizes are implied: 0x40 and 0x20
        // apart); past the last of a region (0x40 after a module's, 0x80
        // after the core's: not found).
        addrs.extend([s.addr, s.addr + 0x1f, s.addr + 0x40, s.addr + 0x80]);
        ControlFlow::<()>::Continue(())
    });
    names.push(b"absent_symbol".to_vec());
    names.push(b"mod9`sym_1".to_vec());
    names.sort();
    names.dedup();
    addrs.sort();
    addrs.dedup();
    let lookups: Vec<_> = names
        .into_iter()
        .map(|q| {
            let a = lookup(&plain, &q);
            (q, a)
        })
        .collect();
    assert!(lookups.iter().filter(|(_, a)| a.is_ok()).count() > 600);
    assert!(lookups
        .iter()
        .any(|(_, a)| matches!(a, Ok((_, _, Some(_))))));
    let addrs: Vec<_> = addrs
        .into_iter()
        .map(|a| (a, symbolize(&plain, a)))
        .collect();
    assert!(addrs.iter().filter(|(_, a)| a.is_ok()).count() > 1300);
    assert!(addrs.iter().any(|(_, a)| a.is_err()));
    let patterns: Vec<_> = PATTERNS.iter().map(|&p| (p, matches(&plain, p))).collect();
    assert!(patterns[0].1.as_ref().is_ok_and(|v| v.len() == 700));
    TableSetup {
        snap: snapshot_file(snap, "table-"),
        opts,
        lookups,
        addrs,
        patterns,
    }
}

fn btf_setup(dir: &Path, snap: &Path, boot: &Path) -> BtfSetup {
    let btf = dir.join("vmlinux.btf");
    std::fs::write(&btf, BTF).unwrap();
    let opts = ksym::internals::btf::Options {
        vmlinux_btf_path: Some(btf),
        module_btf_dir: Some(PathBuf::new()),
        snapshot: ksym::SnapshotOptions {
            snapshot_dir: Some(snap.to_path_buf()),
            boot_id_path: Some(boot.to_path_buf()),
            ..Default::default()
        },
        ..Default::default()
    };
    let k = KernelBtf::open(&opts).unwrap();
    assert!(k.snapshot().written, "{:?}", k.snapshot());
    // The oracle: this open's, a read of the BTF (it wrote the snapshot).
    let v = ksym::internals::btf::vmlinux(&k);
    let b = &v.btf;
    let mut types: Vec<_> = b
        .own_ids()
        .filter_map(|id| {
            let (name, t) = (b.name(id), b.ty(id)?);
            (!name.is_empty()).then(|| (name.to_vec(), t.kind()))
        })
        .collect();
    types.push((b"absent_type".to_vec(), 0));
    types.push((b"absent_type".to_vec(), 4));
    let types: Vec<_> = types
        .into_iter()
        .map(|(name, kind)| TypeAnswers {
            first: v.first(&name, kind),
            any: v.first(&name, 0),
            cands: v.by_essential_name(&name),
            name,
            kind,
        })
        .collect();
    assert!(types.iter().filter(|t| t.first.is_some()).count() > 10);
    BtfSetup {
        snap: snapshot_file(snap, "btf-"),
        opts,
        types,
    }
}

fn damaged(good: &[u8], data: &[u8]) -> Vec<u8> {
    let mut b = good.to_vec();
    let mut cut = None;
    for p in data[1..].chunks_exact(5) {
        let at = u32::from_le_bytes([p[0], p[1], p[2], p[3]]) as usize % b.len().max(1);
        cut.get_or_insert(at);
        if let Some(x) = b.get_mut(at) {
            *x ^= p[4];
        }
    }
    if data[0] & 2 != 0 {
        b.truncate(cut.unwrap_or(0));
    }
    b
}

fn table_input(s: &TableSetup, data: &[u8]) {
    let (path, good) = &s.snap;
    std::fs::write(path, damaged(good, data)).unwrap();
    let t = Table::open(&s.opts).expect("a damaged snapshot is ignored, not an error");
    for (q, want) in &s.lookups {
        assert_eq!(
            &lookup(&t, q),
            want,
            "lookup {:?}",
            String::from_utf8_lossy(q)
        );
    }
    for (addr, want) in &s.addrs {
        assert_eq!(&symbolize(&t, *addr), want, "symbolize {addr:#x}");
    }
    for (p, want) in &s.patterns {
        assert_eq!(
            &matches(&t, p),
            want,
            "pattern {:?}",
            String::from_utf8_lossy(p)
        );
    }
}

/// The type ids whose offset differs between the undamaged snapshot and
/// `bad` (src/btf/snapshot.rs: the offsets array's position and count are
/// the header's u64s at 80 and 88; entry i is type i + 1 of vmlinux).
fn moved_types(good: &[u8], bad: &[u8]) -> Vec<u32> {
    let word = |at: usize| u64::from_le_bytes(good[at..at + 8].try_into().unwrap()) as usize;
    let (at, n) = (word(80), word(88));
    (0..n)
        .filter(|i| good.get(at + 4 * i..at + 4 * i + 4) != bad.get(at + 4 * i..at + 4 * i + 4))
        .map(|i| i as u32 + 1)
        .collect()
}

fn btf_input(s: &BtfSetup, data: &[u8]) {
    let (path, good) = &s.snap;
    let bad = damaged(good, data);
    std::fs::write(path, &bad).unwrap();
    let k = KernelBtf::open(&s.opts).expect("a damaged snapshot is ignored, not an error");
    // Types read from a damaged offset, if the damaged offsets were used.
    let moved = if k.snapshot().loaded {
        moved_types(good, &bad)
    } else {
        Vec::new()
    };
    let moved = |id: &u32| moved.contains(id);
    let v = ksym::internals::btf::vmlinux(&k);
    // An answer other than the undamaged one is a moved type answering, or
    // a moved type lost.
    let same = |got: Option<u32>, want: Option<u32>| {
        got == want || got.map_or_else(|| want.is_some_and(|w| moved(&w)), |g| moved(&g))
    };
    for TypeAnswers {
        name,
        kind,
        first,
        any,
        cands,
    } in &s.types
    {
        let n = String::from_utf8_lossy(name);
        let got = v.first(name, *kind);
        assert!(
            same(got, *first),
            "{n} kind {kind}: {got:?}, undamaged {first:?}"
        );
        let got_any = v.first(name, 0);
        assert!(same(got_any, *any), "{n}: {got_any:?}, undamaged {any:?}");
        let got = v.by_essential_name(name);
        let differ = got
            .iter()
            .filter(|id| !cands.contains(id))
            .chain(cands.iter().filter(|id| !got.contains(id)));
        for id in differ {
            assert!(moved(id), "{n}: candidates {got:?}, undamaged {cands:?}");
        }
        if let Some(id) = got_any {
            // Views of a type: never a crash, whatever it reads.
            let _ = (v.btf.ty(id), v.btf.resolve(id), v.btf.size_of(id));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(s) = setup() else { return };
    if data.is_empty() {
        return;
    }
    if data[0] & 1 == 0 {
        if let Some(t) = &s.table {
            table_input(t, data);
        }
    } else {
        btf_input(&s.btf, data);
    }
});
