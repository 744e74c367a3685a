//! Table snapshots: written by one open, used by the next, with the same
//! answers as a table read from the source, on the three bundled kernels;
//! invalidated by module changes and reboots; BPF symbols never stale;
//! untrusted files ignored and replaced; concurrent writers; non-root
//! processes kept out. Every table here names its own snapshot directory.

mod common;

use std::ops::ControlFlow;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::TempDir;
use ksym::internals::table::{Lookup, Options, Table};

/// A kernel's files in a temp dir: kallsyms, modules, a boot id, and where
/// snapshots go.
struct Setup {
    dir: TempDir,
    kallsyms: PathBuf,
    modules: PathBuf,
    boot: PathBuf,
    snap: PathBuf,
}

impl Setup {
    fn new(kernel: &str) -> Setup {
        let dir = TempDir::new();
        let kallsyms = dir.path().join("kallsyms");
        std::fs::write(&kallsyms, common::data(&format!("{kernel}/kallsyms"))).unwrap();
        let modules = dir.path().join("modules");
        let m = std::panic::catch_unwind(|| common::data(&format!("{kernel}/modules")))
            .unwrap_or_default();
        std::fs::write(&modules, m).unwrap();
        let boot = dir.path().join("boot_id");
        std::fs::write(&boot, "0b7a2f1e-1111-4a4a-9c9c-123456789abc\n").unwrap();
        let snap = dir.path().join("snap");
        Setup {
            dir,
            kallsyms,
            modules,
            boot,
            snap,
        }
    }

    fn opts(&self) -> Options {
        Options {
            kallsyms_path: Some(self.kallsyms.clone()),
            builtin_ranges_path: Some(PathBuf::new()),
            modules_path: Some(self.modules.clone()),
            snapshot: ksym::SnapshotOptions {
                snapshot_dir: Some(self.snap.clone()),
                boot_id_path: Some(self.boot.clone()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn open(&self) -> Table {
        Table::open(&self.opts()).unwrap()
    }

    fn read(&self) -> Table {
        Table::open(&Options {
            snapshot: ksym::SnapshotOptions {
                no_snapshot: true,
                ..self.opts().snapshot
            },
            ..self.opts()
        })
        .unwrap()
    }

    /// The snapshot file (after the writer this process started, if any,
    /// has put it in place).
    fn snapshot_file(&self) -> PathBuf {
        ksym::internals::table::wait_for_snapshot_writers();
        common::only_snapshot(&self.snap)
    }
}

/// Snapshots need root and real addresses in /proc/kallsyms.
fn privileged() -> bool {
    common::root("snapshots") && common::live_kallsyms().is_some()
}

fn shown(r: ksym::internals::error::Result<Lookup<'_>>) -> String {
    match r {
        Ok(Lookup::Found(s)) => format!("found {s:?}"),
        Ok(Lookup::Ambiguous(s, e)) => format!("ambiguous {s:?} {e}"),
        Err(e) => format!("error {} {}", e.code(), e.message()),
    }
}

fn matches(t: &Table, pattern: &str) -> Vec<String> {
    let mut out = Vec::new();
    t.for_each_match(pattern.as_bytes(), |s| {
        out.push(format!("{s:?}"));
        ControlFlow::<()>::Continue(())
    })
    .unwrap();
    out
}

#[test]
fn snapshot_answers_equal_a_read_on_three_kernels() {
    if !privileged() {
        return;
    }
    for kernel in ["linux-6.1-cloud", "linux-6.12-cloud", "vm-6.18"] {
        let s = Setup::new(kernel);
        let first = s.open();
        assert!(
            first.info().snapshot.written && !first.from_snapshot(),
            "{kernel}"
        );
        let t = s.open();
        assert!(
            t.from_snapshot() && t.info().snapshot.loaded,
            "{kernel}: {:?}",
            t.info().snapshot
        );
        let fresh = s.read();
        assert_eq!(t.len(), fresh.len());
        let text = common::data(&format!("{kernel}/kallsyms"));
        let refs = common::reference(&text);
        let mut names: Vec<&[u8]> = refs.iter().map(|r| r.name.as_slice()).collect();
        names.sort_unstable();
        names.dedup();
        // Names of the shapes only pseudo-modules make (`bpf_prog_<tag>`,
        // `bpf_dispatcher_*`...) are answered from a fresh read; the others
        // from the snapshot alone.
        let (pseudo, plain): (Vec<&[u8]>, Vec<&[u8]>) = names
            .iter()
            .partition(|n| ksym::internals::rules::modules::is_pseudo_name(n));
        for n in &plain {
            assert_eq!(
                shown(t.lookup(n)),
                shown(fresh.lookup(n)),
                "{kernel} {}",
                String::from_utf8_lossy(n)
            );
        }
        assert!(
            !t.fresh_read(),
            "{kernel}: a plain name needed the fresh read"
        );
        for n in &pseudo {
            assert_eq!(
                shown(t.lookup(n)),
                shown(fresh.lookup(n)),
                "{kernel} {}",
                String::from_utf8_lossy(n)
            );
        }
        assert_eq!(t.fresh_read(), !pseudo.is_empty(), "{kernel}");
        for r in refs.iter().step_by(7) {
            let q = [r.module.as_slice(), b"`", r.name.as_slice()].concat();
            assert_eq!(shown(t.lookup(&q)), shown(fresh.lookup(&q)));
            for a in [r.addr, r.addr + 1] {
                let x = t.symbolize(a).map(|(s, o)| format!("{s:?}+{o}"));
                let y = fresh.symbolize(a).map(|(s, o)| format!("{s:?}+{o}"));
                assert_eq!(
                    x.map_err(|e| e.message().to_string()),
                    y.map_err(|e| e.message().to_string()),
                    "{kernel} {a:#x}"
                );
            }
        }
        for p in [
            "vfs_*",
            "*`*read*",
            "xfs`*",
            "bpf_prog_*",
            "*`*",
            "__x64_sys_*",
        ] {
            assert_eq!(matches(&t, p), matches(&fresh, p), "{kernel} {p}");
        }
        let listed: Vec<String> = t
            .module_table()
            .unwrap()
            .modules()
            .map(|m| format!("{m:?}"))
            .collect();
        let want: Vec<String> = fresh.modules().map(|m| format!("{m:?}")).collect();
        assert_eq!(listed, want);
        drop(first);
    }
}

#[test]
fn modules_changes_and_reboots_invalidate() {
    if !privileged() {
        return;
    }
    let s = Setup::new("linux-6.12-cloud");
    s.open();
    assert!(s.open().from_snapshot());
    let orig = std::fs::read_to_string(&s.modules).unwrap();
    let lines: Vec<&str> = orig.lines().collect();
    assert!(lines.len() > 2);
    // A refcount changes: nothing moved, the snapshot holds.
    let mut f: Vec<String> = lines[0].split(' ').map(String::from).collect();
    f[2] = "7".into();
    let bumped = [f.join(" ")]
        .iter()
        .map(String::as_str)
        .chain(lines[1..].iter().copied())
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&s.modules, &bumped).unwrap();
    assert!(
        s.open().from_snapshot(),
        "a refcount is not a module change"
    );
    // Unloaded: a miss, and a new snapshot for the new state.
    std::fs::write(&s.modules, lines[1..].join("\n")).unwrap();
    let t = s.open();
    assert!(!t.from_snapshot() && t.info().snapshot.written);
    assert!(s.open().from_snapshot());
    // Moved (another load address).
    let moved = orig.replacen("0xffffffffc", "0xffffffffd", 1);
    std::fs::write(&s.modules, &moved).unwrap();
    assert!(!s.open().from_snapshot());
    assert!(s.open().from_snapshot());
    // A reboot: another boot id.
    std::fs::write(&s.boot, "99999999-2222-4b4b-8d8d-cba987654321\n").unwrap();
    assert!(!s.open().from_snapshot());
    assert!(s.open().from_snapshot());
    // The source rewritten (another size): a miss.
    let mut text = std::fs::read(&s.kallsyms).unwrap();
    text.extend_from_slice(b"ffffffff81000000 T libksym_added\n");
    std::fs::write(&s.kallsyms, &text).unwrap();
    let t = s.open();
    assert!(!t.from_snapshot());
    assert!(t.lookup(b"libksym_added").is_ok());
}

#[test]
fn bpf_symbols_are_never_served_stale() {
    if !privileged() {
        return;
    }
    let s = Setup::new("vm-6.18");
    s.open();
    // A BPF program appears after the snapshot, in place of a core line of
    // the same length: the file's identity (inode, size, mtime) stays, so
    // the snapshot is still used, as for /proc/kallsyms.
    let meta = std::fs::metadata(&s.kallsyms).unwrap();
    let mtime = meta.modified().unwrap();
    let text = String::from_utf8(std::fs::read(&s.kallsyms).unwrap()).unwrap();
    let victim = text
        .lines()
        .find(|l| {
            l.ends_with(" T xen_dummy_shutdown")
                || (l.len() > 60 && l.contains(" t ") && !l.contains('['))
        })
        .unwrap()
        .to_string();
    let addr = "ffffffffc0abc000";
    let mut bpf = format!("{addr} t bpf_prog_0123456789abcdef_new\t[bpf]");
    assert!(bpf.len() <= victim.len(), "{victim}");
    while bpf.len() < victim.len() {
        bpf.insert(bpf.len() - "\t[bpf]".len(), 'x');
    }
    let new = text.replacen(&victim, &bpf, 1);
    assert_eq!(new.len(), text.len());
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&s.kallsyms)
            .unwrap();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.write_all(new.as_bytes()).unwrap();
        f.set_modified(mtime).unwrap();
    }
    assert_eq!(std::fs::metadata(&s.kallsyms).unwrap().ino(), meta.ino());
    let t = s.open();
    assert!(t.from_snapshot(), "{:?}", t.info().snapshot);
    assert!(!t.fresh_read());
    let name = bpf.split_whitespace().nth(2).unwrap().to_string();
    let found = t.lookup(name.as_bytes()).unwrap().unique().unwrap();
    assert_eq!(found.addr, u64::from_str_radix(addr, 16).unwrap());
    assert!(t.fresh_read(), "a BPF name is answered from a fresh read");
    let (sym, off) = t.symbolize(found.addr).unwrap();
    assert_eq!((sym.name.to_bytes(), off), (name.as_bytes(), 0));
    assert!(matches(&t, "bpf_prog_0123*").len() == 1);
    assert!(t.lookup(format!("bpf`{name}").as_bytes()).is_ok());
}

#[test]
fn untrusted_snapshots_are_ignored_and_replaced() {
    if !privileged() {
        return;
    }
    let s = Setup::new("linux-6.1-cloud");
    s.open();
    let file = s.snapshot_file();
    let good = std::fs::read(&file).unwrap();
    let reopen = |what: &str| {
        let t = s.open();
        assert!(!t.from_snapshot(), "{what}: used");
        assert!(
            t.info().snapshot.written,
            "{what}: not replaced: {:?}",
            t.info().snapshot
        );
        assert!(
            s.open().from_snapshot(),
            "{what}: the replacement is not used"
        );
    };
    // A byte of the checked part flipped (it starts where the u64 at 32
    // says: see the format in src/table/snapshot.rs), and one of the header.
    let chk_at = u64::from_le_bytes(good[32..40].try_into().unwrap()) as usize;
    for at in [chk_at + 10, 120] {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        std::fs::write(&file, &bad).unwrap();
        reopen("corrupt");
    }
    // Truncated.
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    reopen("truncated");
    // Empty.
    std::fs::write(&file, b"").unwrap();
    reopen("empty");
    // Owned by someone else.
    std::fs::write(&file, &good).unwrap();
    std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
    reopen("foreign owner");
    // Readable by others.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    reopen("world-readable");
    // A symlink to a valid snapshot.
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
    // Another kernel's snapshot under this name.
    let other = Setup::new("linux-6.12-cloud");
    other.open();
    std::fs::copy(other.snapshot_file(), &file).unwrap();
    reopen("foreign snapshot");
    // A directory others may enter: neither read nor written.
    std::fs::set_permissions(&s.snap, std::fs::Permissions::from_mode(0o755)).unwrap();
    let t = s.open();
    assert!(!t.from_snapshot() && !t.info().snapshot.written);
    assert!(
        t.info()
            .snapshot
            .note
            .as_deref()
            .unwrap_or("")
            .contains("not"),
        "{:?}",
        t.info().snapshot
    );
}

/// The answers of `t` to every name of `read` (plain and module`name) and
/// to every symbol's address and the byte after it, as text.
fn all_answers(t: &Table, read: &Table) -> Vec<String> {
    let mut queries = Vec::new();
    read.for_each_match(b"*", |s| {
        queries.push((format!("{}`{}", s.module, s.name), s.addr));
        queries.push((s.name.to_string(), s.addr + 1));
        ControlFlow::<()>::Continue(())
    })
    .unwrap();
    queries
        .iter()
        .map(|(q, addr)| {
            let sym = match t.symbolize(*addr) {
                Ok((s, off)) => format!("{s:?}+{off}"),
                Err(e) => format!("error {}", e.code()),
            };
            format!("{q}: {} / {addr:x}: {sym}", shown(t.lookup(q.as_bytes())))
        })
        .collect()
}

/// The text, the address-search levels, the entries and the index slots
/// are outside the checksum checked at open (10 MB), so a snapshot
/// damaged there is used; but their own
/// checksum is checked on the first query, which then goes to a fresh read
/// of the source: every answer, by name and by address, is a read's.
#[test]
fn damaged_entries_index_or_text_fall_back_to_a_read() {
    if !privileged() {
        return;
    }
    let s = Setup::new("linux-6.1-cloud");
    let read = s.read();
    let want = all_answers(&read, &read);
    assert!(want.len() > 100_000, "{}", want.len());
    let t = s.open();
    assert!(t.info().snapshot.written);
    let t = s.open();
    assert!(t.from_snapshot());
    // A core kernel name, no pseudo-module: answered from the snapshot.
    assert_eq!(
        shown(t.lookup(b"vfs_read")),
        shown(read.lookup(b"vfs_read"))
    );
    assert!(!t.fresh_read(), "an intact snapshot was not used");
    assert_eq!(all_answers(&t, &read), want);
    drop(t);
    let file = s.snapshot_file();
    let good = std::fs::read(&file).unwrap();
    let u64_at = |at: usize| u64::from_le_bytes(good[at..at + 8].try_into().unwrap()) as usize;
    // (offset, count, element size) of the address-search levels (their
    // lengths in bytes), the entries, the index slots and the text (the
    // u64 pairs at 80, 96, 112, 128, 144: src/table/snapshot.rs).
    for (what, field, size) in [
        ("sample level", 80, 1),
        ("top level", 96, 1),
        ("entries", 112, 24),
        ("index slots", 128, 8),
        ("text", 144, 1),
    ] {
        let (at, n) = (u64_at(field), u64_at(field + 8));
        let mut bad = good.clone();
        // Every 5th element: one byte of it, flipped (for the slots, the
        // high half: tag and entry).
        for k in (0..n).step_by(5) {
            bad[at + size * k + size / 2] ^= 0x15;
        }
        std::fs::write(&file, &bad).unwrap();
        let t = s.open();
        assert!(t.from_snapshot(), "{what}: the open did not use it");
        assert_eq!(
            shown(t.lookup(b"vfs_read")),
            shown(read.lookup(b"vfs_read"))
        );
        assert!(t.fresh_read(), "{what}: the damage went unseen");
        assert_eq!(all_answers(&t, &read), want, "{what} damaged");
    }
}

/// Run as a child process by the tests below (does nothing otherwise):
/// opens the table of $KSYM_SNAP_KALLSYMS with snapshots in $KSYM_SNAP_DIR
/// and prints what happened.
#[test]
fn snapshot_child() {
    let (Ok(k), Ok(d), Ok(m), Ok(b)) = (
        std::env::var("KSYM_SNAP_KALLSYMS"),
        std::env::var("KSYM_SNAP_DIR"),
        std::env::var("KSYM_SNAP_MODULES"),
        std::env::var("KSYM_SNAP_BOOT"),
    ) else {
        return;
    };
    let o = Options {
        kallsyms_path: Some(k.into()),
        builtin_ranges_path: Some(PathBuf::new()),
        modules_path: Some(m.into()),
        snapshot: ksym::SnapshotOptions {
            snapshot_dir: Some(d.into()),
            boot_id_path: Some(b.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    match Table::open(&o) {
        Ok(t) => {
            let i = &t.info().snapshot;
            println!(
                "CHILD loaded={} written={} note={:?} symbols={}",
                i.loaded,
                i.written,
                i.note,
                t.len()
            );
        }
        Err(e) => println!("CHILD error {e}"),
    }
}

fn child(s: &Setup, uid: Option<u32>) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "snapshot_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("KSYM_SNAP_KALLSYMS", &s.kallsyms)
    .env("KSYM_SNAP_DIR", &s.snap)
    .env("KSYM_SNAP_MODULES", &s.modules)
    .env("KSYM_SNAP_BOOT", &s.boot)
    .stdout(std::process::Stdio::piped());
    if let Some(u) = uid {
        c.uid(u).gid(u);
    }
    c.spawn().unwrap()
}

fn child_line(c: std::process::Child) -> String {
    let out = c.wait_with_output().unwrap();
    // libtest prints the test's name on the same line.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|l| l.find("CHILD").map(|i| l[i..].to_string()))
        .unwrap_or_else(|| format!("no CHILD line in: {text}"))
}

#[test]
fn concurrent_writers_leave_one_valid_file() {
    if !privileged() {
        return;
    }
    let s = Setup::new("linux-6.12-cloud");
    let kids: Vec<_> = (0..8).map(|_| child(&s, None)).collect();
    let lines: Vec<String> = kids.into_iter().map(child_line).collect();
    for l in &lines {
        assert!(l.starts_with("CHILD loaded="), "{l}");
    }
    assert!(
        lines.iter().any(|l| l.contains("written=true")),
        "{lines:?}"
    );
    // One snapshot, no temporary file left, and it is used.
    let _ = s.snapshot_file();
    let left: Vec<_> = std::fs::read_dir(&s.snap)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let t = s.open();
    assert!(t.from_snapshot());
    assert_eq!(t.len(), s.read().len());
}

#[test]
fn non_root_neither_reads_nor_writes() {
    if !privileged() {
        return;
    }
    let s = Setup::new("linux-6.12-cloud");
    // The files readable by anyone; a valid snapshot in place (root's).
    for p in [&s.kallsyms, &s.modules, &s.boot] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(s.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    s.open();
    let before = std::fs::read(s.snapshot_file()).unwrap();
    let exe = std::env::current_exe().unwrap();
    let reachable = Path::new(&exe).ancestors().all(|a| {
        std::fs::metadata(a).is_ok_and(|m| m.mode() & 0o005 == 0o005 || a == Path::new(&exe))
    });
    if !reachable {
        common::skip(
            "the test binary is not reachable by uid 65534 (a private directory above it)",
        );
        return;
    }
    let line = child_line(child(&s, Some(65534)));
    assert!(line.contains("loaded=false written=false"), "{line}");
    assert!(line.contains("needs euid 0"), "{line}");
    assert_eq!(
        std::fs::read(s.snapshot_file()).unwrap(),
        before,
        "the snapshot changed"
    );
}
