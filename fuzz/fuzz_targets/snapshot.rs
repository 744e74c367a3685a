//! Snapshots (table and BTF) damaged byte by byte: a snapshot written by a
//! real open, then each input's patches applied to it before the next
//! open. The input's first byte picks the snapshot (bit 0: BTF, else the
//! table) and whether to cut it at the first patch (bit 1); then 5-byte
//! patches: a u32 offset (taken modulo the length) and a byte XORed in.
//!
//! Whatever the damage: the open succeeds (a snapshot that does not check
//! is ignored and replaced, never an error), and every answer by name is
//! the undamaged table's (the same kind of answer, module and address) or
//! an error, never another symbol; a BTF type found is one of the name and
//! kind asked. (Symbolizing an address in a table whose unchecksummed
//! entries are damaged may answer wrongly or fail with KSYM_ERR_INTERNAL:
//! docs/snapshots.md, "Trust"; not exercised here.) Needs euid 0
//! (snapshots are root's): otherwise it prints the one line
//! `SKIP kernel fuzz snapshot: ...` (make test-fuzz shows it and adds it to
//! target/tmp/ksym-skipped), and fails when `KSYM_REQUIRE` has `kernel`
//! (or `KSYM_REQUIRE_KERNEL=1`), as tests/common's `skip_need` does.
#![no_main]
use libfuzzer_sys::fuzz_target;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ksym::internals::btf::KernelBtf;
use ksym::internals::table::{Lookup, Table};

const BTF: &[u8] = include_bytes!("../seeds/vmlinux-small.btf");

struct Setup {
    table_opts: ksym::internals::table::Options,
    btf_opts: ksym::internals::btf::Options,
    table_snap: (PathBuf, Vec<u8>),
    btf_snap: (PathBuf, Vec<u8>),
    /// Names the table holds (plain and module`name), each with the
    /// undamaged table's answer: (ambiguous, module, address), or none.
    symbols: Vec<(Vec<u8>, Option<Answer>)>,
    types: Vec<(Vec<u8>, u32)>,
}

/// What a lookup answered: ambiguous or not, the module and address.
type Answer = (bool, Vec<u8>, u64);

fn answer(r: ksym::Result<Lookup<'_>>) -> Option<Answer> {
    match r {
        Ok(Lookup::Found(s)) => Some((false, s.module.to_bytes().to_vec(), s.addr)),
        Ok(Lookup::Ambiguous(s, _)) => Some((true, s.module.to_bytes().to_vec(), s.addr)),
        Err(_) => None,
    }
}

/// tests/common's `Need::Kernel.required()`: is the kernel part required?
fn kernel_required() -> bool {
    std::env::var("KSYM_REQUIRE_KERNEL").as_deref() == Ok("1")
        || std::env::var("KSYM_REQUIRE").is_ok_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|w| w == "all" || w == "kernel")
        })
}

fn snapshot_file(dir: &Path, stem: &str) -> (PathBuf, Vec<u8>) {
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
            let why = "needs euid 0 (snapshots are root's): no input exercised";
            assert!(
                !kernel_required(),
                "KSYM_REQUIRE has kernel, but fuzz snapshot cannot run: {why}"
            );
            eprintln!("SKIP kernel fuzz snapshot: {why}");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("ksym-fuzz-snapshot-{}", std::process::id()));
        let snap = dir.join("snap");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let boot = dir.join("boot_id");
        std::fs::write(&boot, b"00000000-fuzz-0000-0000-000000000000\n").unwrap();
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
        let btf = dir.join("vmlinux.btf");
        std::fs::write(&btf, BTF).unwrap();
        let table_opts = ksym::internals::table::Options {
            kallsyms_path: Some(kallsyms),
            builtin_ranges_path: Some(PathBuf::new()),
            modules_path: Some(dir.join("no-modules")),
            snapshot_dir: Some(snap.clone()),
            boot_id_path: Some(boot.clone()),
            ..Default::default()
        };
        let btf_opts = ksym::internals::btf::Options {
            vmlinux_btf_path: Some(btf),
            module_btf_dir: Some(PathBuf::new()),
            snapshot_dir: Some(snap.clone()),
            boot_id_path: Some(boot),
            ..Default::default()
        };
        let t = Table::open(&table_opts).unwrap();
        assert!(t.info().snapshot.written, "{:?}", t.info().snapshot);
        let mut names = Vec::new();
        let _ = t.for_each_match(b"*", |s| {
            names.push(s.name.to_bytes().to_vec());
            names.push([s.module.to_bytes(), b"`", s.name.to_bytes()].concat());
            std::ops::ControlFlow::<()>::Continue(())
        });
        names.push(b"absent_symbol".to_vec());
        names.sort();
        names.dedup();
        // The oracle: the table read from kallsyms itself, no snapshot.
        let plain = Table::open(&ksym::internals::table::Options {
            no_snapshot: true,
            ..table_opts.clone()
        })
        .unwrap();
        assert!(!plain.info().snapshot.loaded);
        let symbols: Vec<_> = names
            .into_iter()
            .map(|q| {
                let a = answer(plain.lookup(&q));
                (q, a)
            })
            .collect();
        assert!(symbols.iter().filter(|(_, a)| a.is_some()).count() > 600);
        let k = KernelBtf::open(&btf_opts).unwrap();
        assert!(k.snapshot().written, "{:?}", k.snapshot());
        let b = &ksym::internals::btf::vmlinux(&k).btf;
        let mut types: Vec<(Vec<u8>, u32)> = b
            .own_ids()
            .filter_map(|id| {
                let t = b.ty(id)?;
                let name = b.name(id);
                (!name.is_empty()).then(|| (name.to_vec(), t.kind()))
            })
            .collect();
        types.push((b"absent_type".to_vec(), 0));
        Some(Setup {
            table_snap: snapshot_file(&snap, "table-"),
            btf_snap: snapshot_file(&snap, "btf-"),
            table_opts,
            btf_opts,
            symbols,
            types,
        })
    })
    .as_ref()
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

fuzz_target!(|data: &[u8]| {
    let Some(s) = setup() else { return };
    if data.is_empty() {
        return;
    }
    if data[0] & 1 == 0 {
        let (path, good) = &s.table_snap;
        std::fs::write(path, damaged(good, data)).unwrap();
        let t = Table::open(&s.table_opts).expect("a damaged snapshot is ignored, not an error");
        for (q, want) in &s.symbols {
            let Some(got) = answer(t.lookup(q)) else {
                continue;
            };
            assert_eq!(
                Some(&got),
                want.as_ref(),
                "asked {:?}: (ambiguous, module, address)",
                String::from_utf8_lossy(q)
            );
        }
    } else {
        let (path, good) = &s.btf_snap;
        std::fs::write(path, damaged(good, data)).unwrap();
        let k = KernelBtf::open(&s.btf_opts).expect("a damaged snapshot is ignored, not an error");
        let v = ksym::internals::btf::vmlinux(&k);
        for (name, kind) in &s.types {
            if let Some(id) = v.first(name, *kind) {
                assert_eq!(v.btf.name(id), &name[..], "type {id}");
                let t = v.btf.ty(id).expect("a found id is a type");
                assert!(*kind == 0 || t.kind() == *kind);
                let _ = (v.btf.resolve(id), v.btf.size_of(id));
            }
            let _ = v.by_essential_name(name);
        }
    }
});
