//! BTF snapshots: vmlinux's checked and indexed BTF written by one open and
//! used by the next, with the same answers as a read (every named type of
//! the bundled 6.1 kernel, against bpftool's dump, and every FUNC of the
//! running kernel's); invalidated by another boot and by a changed file;
//! damaged, truncated, foreign, world-readable and symlinked files ignored
//! and replaced; non-root processes kept out. Every open here names its own
//! snapshot directory.

mod common;

use std::collections::HashMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::{bpftool_dump, Kernel61, TempDir};
use ksym::internals::btf::{KernelBtf, Options};

/// Snapshots are for root only.
fn root() -> bool {
    common::root("BTF snapshots")
}

/// The bundled 6.1 kernel's BTF files, a boot id and a snapshot directory.
struct Setup {
    k: Kernel61,
    dir: TempDir,
    boot: PathBuf,
    snap: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = TempDir::new();
        let boot = dir.path().join("boot_id");
        std::fs::write(&boot, "7d2b0c3e-2222-4b4b-8d8d-abcdefabcdef\n").unwrap();
        let snap = dir.path().join("snap");
        Setup {
            k: Kernel61::new(),
            dir,
            boot,
            snap,
        }
    }

    fn opts(&self) -> Options {
        Options {
            vmlinux_btf_path: Some(self.k.vmlinux()),
            module_btf_dir: Some("".into()),
            filter_functions_path: Some("".into()),
            snapshot: ksym::SnapshotOptions {
                snapshot_dir: Some(self.snap.clone()),
                boot_id_path: Some(self.boot.clone()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn open(&self) -> KernelBtf {
        KernelBtf::open(&self.opts()).unwrap()
    }

    fn read(&self) -> KernelBtf {
        KernelBtf::open(&Options {
            snapshot: ksym::SnapshotOptions {
                no_snapshot: true,
                ..self.opts().snapshot
            },
            ..self.opts()
        })
        .unwrap()
    }

    fn snapshot_file(&self) -> PathBuf {
        common::only_snapshot(&self.snap)
    }
}

/// The kind number of a kind as bpftool prints it (written out here, not
/// the reader's names: an oracle of its own).
fn kind_of(name: &str) -> u32 {
    const KINDS: [&str; 20] = [
        "UNKN",
        "INT",
        "PTR",
        "ARRAY",
        "STRUCT",
        "UNION",
        "ENUM",
        "FWD",
        "TYPEDEF",
        "VOLATILE",
        "CONST",
        "RESTRICT",
        "FUNC",
        "FUNC_PROTO",
        "VAR",
        "DATASEC",
        "FLOAT",
        "DECL_TAG",
        "TYPE_TAG",
        "ENUM64",
    ];
    KINDS.iter().position(|k| *k == name).unwrap() as u32
}

/// bpftool's first id of each (name, kind) of a BTF file.
fn first_ids(file: &Path) -> HashMap<(String, u32), u32> {
    let mut first = HashMap::new();
    for (id, kind, name) in bpftool_dump(file, None) {
        first.entry((name, kind_of(&kind))).or_insert(id);
    }
    first
}

/// Every (name, kind) gets bpftool's id from `b`, and the same CO-RE
/// candidates (by essential name) as from `read`.
fn same_answers(b: &KernelBtf, read: &KernelBtf, oracle: &HashMap<(String, u32), u32>) {
    let mut essentials = std::collections::HashSet::new();
    for ((name, kind), &id) in oracle {
        assert_eq!(
            ksym::internals::btf::vmlinux(b).first(name.as_bytes(), *kind),
            Some(id),
            "{name} kind {kind}"
        );
        let e = &name.as_bytes()[..ksym::internals::btf::index::essential_len(name.as_bytes())];
        essentials.insert(e.to_vec());
    }
    for e in &essentials {
        assert_eq!(
            ksym::internals::btf::vmlinux(b).by_essential_name(e),
            ksym::internals::btf::vmlinux(read).by_essential_name(e),
            "{}",
            String::from_utf8_lossy(e)
        );
    }
    assert_eq!(
        ksym::internals::btf::vmlinux(b).first(b"no_such_type_anywhere", 0),
        None
    );
}

#[test]
fn snapshot_answers_equal_a_read_and_bpftool() {
    if !root() {
        return;
    }
    let s = Setup::new();
    let oracle = first_ids(&s.k.vmlinux());
    assert!(oracle.len() > 50_000, "{} names", oracle.len());
    let read = s.read();
    assert!(!read.snapshot().loaded && !read.snapshot().written);
    let first = s.open();
    assert!(first.snapshot().written, "{:?}", first.snapshot());
    assert!(!first.snapshot().loaded);
    let second = s.open();
    assert!(second.snapshot().loaded, "{:?}", second.snapshot());
    assert!(!second.snapshot().written);
    assert_eq!(
        second.snapshot().bytes,
        std::fs::metadata(s.snapshot_file()).unwrap().len() as usize
    );
    assert_eq!(
        ksym::internals::btf::vmlinux(&second).btf.end_id(),
        ksym::internals::btf::vmlinux(&read).btf.end_id()
    );
    same_answers(&second, &read, &oracle);
    // Types read through the snapshot's offsets are the read's, byte for
    // byte, for every id.
    for id in 1..ksym::internals::btf::vmlinux(&read).btf.end_id() {
        let (a, b) = (
            ksym::internals::btf::vmlinux(&second).btf.ty(id).unwrap(),
            ksym::internals::btf::vmlinux(&read).btf.ty(id).unwrap(),
        );
        let members = |t: &ksym::internals::formats::btf::Ty<'_>| match t.kind() {
            4 | 5 => t.members().collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        assert_eq!(
            (a.kind(), a.name_off, a.vlen(), a.size(), members(&a)),
            (b.kind(), b.name_off, b.vlen(), b.size(), members(&b)),
            "type {id}"
        );
    }
}

#[test]
fn another_boot_or_a_changed_file_invalidates() {
    if !root() {
        return;
    }
    let s = Setup::new();
    s.open();
    assert!(s.open().snapshot().loaded);
    // Another boot.
    std::fs::write(&s.boot, "7d2b0c3e-3333-4b4b-8d8d-abcdefabcdef\n").unwrap();
    let b = s.open();
    assert!(
        !b.snapshot().loaded && b.snapshot().written,
        "{:?}",
        b.snapshot()
    );
    assert!(s.open().snapshot().loaded);
    // The same file rewritten (a new mtime and inode).
    let data = std::fs::read(s.k.vmlinux()).unwrap();
    std::fs::remove_file(s.k.vmlinux()).unwrap();
    std::fs::write(s.k.vmlinux(), &data).unwrap();
    let b = s.open();
    assert!(
        !b.snapshot().loaded && b.snapshot().written,
        "{:?}",
        b.snapshot()
    );
    // Another BTF under the same name: a module's BTF is no base BTF, so
    // the open fails as a read does, and the old snapshot is not used.
    let other = Setup::new();
    std::fs::copy(other.k.btf_dir().join("xfs"), s.k.vmlinux()).unwrap();
    assert!(KernelBtf::open(&s.opts()).is_err());
    // No snapshot without a snapshot_dir for a named file, none at all
    // with no_snapshot.
    let o = Options {
        snapshot: ksym::SnapshotOptions {
            snapshot_dir: None,
            ..other.opts().snapshot
        },
        ..other.opts()
    };
    let b = KernelBtf::open(&o).unwrap();
    assert!(!b.snapshot().loaded && !b.snapshot().written);
    assert!(
        b.snapshot()
            .note
            .as_deref()
            .unwrap()
            .contains("snapshot_dir"),
        "{:?}",
        b.snapshot()
    );
    let b = other.read();
    assert!(b.snapshot().note.as_deref().unwrap().contains("disabled"));
    assert!(!other.snap.exists());
}

#[test]
fn untrusted_or_damaged_snapshots_are_ignored_and_replaced() {
    if !root() {
        return;
    }
    let s = Setup::new();
    let oracle = first_ids(&s.k.vmlinux());
    let read = s.read();
    s.open();
    let file = s.snapshot_file();
    let good = std::fs::read(&file).unwrap();
    let reopen = |what: &str| {
        let b = s.open();
        assert!(!b.snapshot().loaded, "{what}: used");
        assert!(
            b.snapshot().written,
            "{what}: not replaced: {:?}",
            b.snapshot()
        );
        // Spot checks: the answers are a read's (the full comparison is
        // above).
        for ((name, kind), &id) in oracle.iter().step_by(97) {
            assert_eq!(
                ksym::internals::btf::vmlinux(&b).first(name.as_bytes(), *kind),
                Some(id),
                "{what}: {name}"
            );
        }
        assert!(
            s.open().snapshot().loaded,
            "{what}: the replacement is not used"
        );
    };
    let u64_at = |at: usize| u64::from_le_bytes(good[at..at + 8].try_into().unwrap()) as usize;
    // A byte of the checked part, and one of the header (see the format in
    // src/btf/snapshot.rs: the checked part starts at the u64 at 32).
    for at in [u64_at(32) + 3, 100] {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        std::fs::write(&file, &bad).unwrap();
        reopen("corrupt");
    }
    // Two type offsets swapped (the offsets start at the u64 at 80): not
    // checksummed, but they must rise.
    let offs = u64_at(80);
    let mut bad = good.clone();
    bad.copy_within(offs + 400..offs + 404, offs + 800);
    std::fs::write(&file, &bad).unwrap();
    reopen("offsets out of order");
    // The last offset past the type section.
    let n = u64_at(88);
    let mut bad = good.clone();
    bad[offs + 4 * (n - 1)..offs + 4 * n].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&file, &bad).unwrap();
    reopen("offset out of range");
    // Index slots damaged (they start at the u64 at 96, their count at
    // 104): not checked at open (0.8 MB), so the snapshot is used; but
    // their checksum is checked on the first lookup, and the lookups go to
    // an index rebuilt from the blob: every answer is bpftool's, none lost.
    let (slots, nslots) = (u64_at(96), u64_at(104));
    let mut bad = good.clone();
    for k in (0..nslots).step_by(3) {
        // The high half of a slot: its tag and entry (the type id + 1).
        let at = slots + 8 * k + 4;
        let v = u32::from_le_bytes(bad[at..at + 4].try_into().unwrap());
        if v != 0 {
            bad[at..at + 4].copy_from_slice(&(v ^ 0x15).to_le_bytes());
        }
    }
    std::fs::write(&file, &bad).unwrap();
    let b = s.open();
    assert!(b.snapshot().loaded, "{:?}", b.snapshot());
    let mut lost = Vec::new();
    for ((name, kind), &id) in &oracle {
        let got = ksym::internals::btf::vmlinux(&b).first(name.as_bytes(), *kind);
        if got != Some(id) {
            lost.push(format!("{name} kind {kind}: {got:?}, bpftool {id}"));
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {} answers lost or wrong, e.g. {:?}",
        lost.len(),
        oracle.len(),
        &lost[..lost.len().min(5)]
    );
    // CO-RE's candidates (every type of an essential name, flavors
    // dropped) go through the same slots: the undamaged read's answer for
    // every essential name.
    let mut essentials: Vec<&[u8]> = oracle
        .keys()
        .map(|(n, _)| &n.as_bytes()[..ksym::internals::btf::index::essential_len(n.as_bytes())])
        .collect();
    essentials.sort();
    essentials.dedup();
    let wrong: Vec<String> = essentials
        .iter()
        .filter_map(|e| {
            let got = ksym::internals::btf::vmlinux(&b).by_essential_name(e);
            let want = ksym::internals::btf::vmlinux(&read).by_essential_name(e);
            (got != want).then(|| format!("{}: {got:?}, read {want:?}", String::from_utf8_lossy(e)))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} CO-RE candidate lists differ, e.g. {:?}",
        wrong.len(),
        essentials.len(),
        &wrong[..wrong.len().min(5)]
    );
    assert!(
        ksym::internals::btf::vmlinux(&b).rebuilt(),
        "the damaged index was used"
    );
    // The undamaged snapshot's index is used as it is.
    std::fs::write(&file, &good).unwrap();
    let g = s.open();
    assert!(g.snapshot().loaded);
    let (name, kind) = oracle.keys().next().unwrap();
    assert!(ksym::internals::btf::vmlinux(&g)
        .first(name.as_bytes(), *kind)
        .is_some());
    assert!(!ksym::internals::btf::vmlinux(&g).rebuilt());
    drop(g);
    drop(b);
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    reopen("truncated");
    std::fs::write(&file, b"").unwrap();
    reopen("empty");
    std::fs::write(&file, &good).unwrap();
    std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
    reopen("foreign owner");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    reopen("world-readable");
    let elsewhere = s.dir.path().join("elsewhere.snap");
    std::fs::copy(&file, &elsewhere).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    reopen("symlink");
    assert!(!std::fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_symlink());
    // A directory others may enter: neither read nor written.
    std::fs::set_permissions(&s.snap, std::fs::Permissions::from_mode(0o755)).unwrap();
    let b = s.open();
    assert!(
        !b.snapshot().loaded && !b.snapshot().written,
        "{:?}",
        b.snapshot()
    );
    assert!(
        b.snapshot().note.as_deref().unwrap().contains("not"),
        "{:?}",
        b.snapshot()
    );
    same_answers(&b, &read, &oracle);
}

#[test]
fn the_running_kernels_btf_from_a_snapshot() {
    let sys = Path::new("/sys/kernel/btf/vmlinux");
    if !sys.exists() {
        common::skip("this kernel has no BTF (/sys/kernel/btf/vmlinux)");
        return;
    }
    if !root() {
        return;
    }
    let dir = TempDir::new();
    let o = Options {
        module_btf_dir: Some("".into()),
        filter_functions_path: Some("".into()),
        snapshot: ksym::SnapshotOptions {
            snapshot_dir: Some(dir.path().join("snap")),
            ..Default::default()
        },
        ..Default::default()
    };
    let first = KernelBtf::open(&o).unwrap();
    assert!(first.snapshot().written, "{:?}", first.snapshot());
    let b = KernelBtf::open(&o).unwrap();
    assert!(b.snapshot().loaded, "{:?}", b.snapshot());
    let funcs: Vec<(u32, String)> = bpftool_dump(sys, None)
        .into_iter()
        .filter(|(_, k, _)| k == "FUNC")
        .map(|(id, _, n)| (id, n))
        .collect();
    assert!(funcs.len() > 10_000, "{} FUNCs", funcs.len());
    let mut seen = HashMap::new();
    for (id, name) in &funcs {
        let want = *seen.entry(name.clone()).or_insert(*id);
        assert_eq!(
            ksym::internals::btf::vmlinux(&b).first(name.as_bytes(), 12),
            Some(want),
            "{name}"
        );
        let f = b.find(name.as_bytes(), 12).unwrap();
        assert_eq!(f.id, want, "{name}");
    }
}

/// Run as a child process by the test below (does nothing otherwise).
#[test]
fn btf_snapshot_child() {
    let (Ok(v), Ok(d), Ok(b)) = (
        std::env::var("KSYM_BTF_SNAP_VMLINUX"),
        std::env::var("KSYM_BTF_SNAP_DIR"),
        std::env::var("KSYM_BTF_SNAP_BOOT"),
    ) else {
        return;
    };
    let o = Options {
        vmlinux_btf_path: Some(v.into()),
        module_btf_dir: Some("".into()),
        filter_functions_path: Some("".into()),
        snapshot: ksym::SnapshotOptions {
            snapshot_dir: Some(d.into()),
            boot_id_path: Some(b.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    match KernelBtf::open(&o) {
        Ok(k) => {
            let i = k.snapshot();
            println!(
                "CHILD loaded={} written={} note={:?} types={}",
                i.loaded,
                i.written,
                i.note,
                ksym::internals::btf::vmlinux(&k).btf.end_id()
            );
        }
        Err(e) => println!("CHILD error {e}"),
    }
}

#[test]
fn non_root_neither_reads_nor_writes() {
    use std::os::unix::process::CommandExt;
    if !root() {
        return;
    }
    let s = Setup::new();
    s.open();
    let file = s.snapshot_file();
    let before = std::fs::read(&file).unwrap();
    for p in [s.k.vmlinux(), s.boot.clone()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    for d in [
        s.dir.path().to_path_buf(),
        s.k.btf_dir(),
        s.k.vmlinux()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf(),
    ] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let reachable = |p: &Path| {
        p.ancestors()
            .all(|a| std::fs::metadata(a).is_ok_and(|m| m.mode() & 0o005 == 0o005 || a == p))
    };
    if !reachable(&exe) || !reachable(&s.k.vmlinux()) {
        common::skip("the test binary or its data is not reachable by uid 65534");
        return;
    }
    let out = std::process::Command::new(&exe)
        .args([
            "--exact",
            "btf_snapshot_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("KSYM_BTF_SNAP_VMLINUX", s.k.vmlinux())
        .env("KSYM_BTF_SNAP_DIR", &s.snap)
        .env("KSYM_BTF_SNAP_BOOT", &s.boot)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.find("CHILD").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("no CHILD line in: {text}"));
    assert!(line.contains("loaded=false written=false"), "{line}");
    assert!(line.contains("needs euid 0"), "{line}");
    assert!(
        line.contains(&format!(
            "types={}",
            ksym::internals::btf::vmlinux(&s.read()).btf.end_id()
        )),
        "{line}"
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the snapshot changed"
    );
}
