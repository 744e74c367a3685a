//! Kernel BTF: vmlinux's and modules' split BTF from the Debian 6.1 cloud
//! kernel of tests/data (the kernel the bundled kallsyms comes from), and
//! the running kernel's, checked against bpftool's dump of the same files.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{bpftool_dump, Kernel61, TempDir};
use ksym::internals::btf::targets::TargetKind;
use ksym::internals::btf::{KernelBtf, Options};
use ksym::internals::error::{AMBIGUOUS, FORMAT, NOT_FOUND};
use ksym::internals::formats::btf::{KIND_FUNC, KIND_STRUCT, KIND_TYPEDEF};
use ksym::internals::rules::query::Query;

fn kind_of(name: &str) -> u32 {
    (1..=19)
        .find(|&k| ksym::internals::formats::btf::kind_name(k) == name)
        .unwrap_or_else(|| panic!("kind {name}"))
}

/// Every named (kind, name) of the 6.1 vmlinux, in order: libksym's
/// answer is bpftool's first id of that name and kind.
#[test]
fn vmlinux_lookups_are_bpftools_first_of_each_name_and_kind() {
    let k = Kernel61::new();
    let btf = k.open();
    let dump = bpftool_dump(&k.vmlinux(), None);
    assert!(dump.len() > 50_000, "{}", dump.len());
    let mut first: BTreeMap<(String, String), u32> = BTreeMap::new();
    for (id, kind, name) in &dump {
        first.entry((kind.clone(), name.clone())).or_insert(*id);
    }
    let mut checked = 0;
    for ((kind, name), id) in &first {
        let q = format!("vmlinux`{name}");
        let f = btf.find(q.as_bytes(), kind_of(kind)).unwrap();
        assert_eq!(
            (f.id, f.obj, f.name.to_bytes()),
            (*id, 0, name.as_bytes()),
            "{kind} {name}"
        );
        checked += 1;
    }
    assert_eq!(checked, first.len());
    assert!(checked > 50_000, "{checked}");
    // Any kind: the lowest id of the name (a FWD before its STRUCT...).
    let vfs = btf.find(b"vfs_read", 0).unwrap();
    assert_eq!(
        (vfs.kind, vfs.id),
        (KIND_FUNC, first[&("FUNC".into(), "vfs_read".into())])
    );
}

/// The modules whose BTF is bundled with the 6.1 kernel: every file of
/// tests/data/linux-6.1-cloud/btf but vmlinux's and the README, by name.
fn modules_61() -> Vec<String> {
    let dir = common::repo().join("tests/data/linux-6.1-cloud/btf");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|f| f.strip_suffix(".gz").map(str::to_string))
        .filter(|m| m != "vmlinux")
        .collect();
    names.sort();
    names
}

/// The bundled module files are what their README promises: one per
/// module loaded in ../modules.gz, but for the two it names as having
/// none; and `Kernel61` (tests/common's `MODULES_61`) unpacks each of them.
#[test]
fn bundled_module_btf_is_every_loaded_module_the_readme_names() {
    let files = modules_61();
    assert!(!files.is_empty(), "no module BTF bundled");
    let readme =
        std::fs::read_to_string(common::repo().join("tests/data/linux-6.1-cloud/btf/README.md"))
            .unwrap();
    let without = ["crc_itu_t", "crc32c_intel"];
    assert!(
        readme
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("`crc_itu_t` and `crc32c_intel`"),
        "the README no longer says which modules have no file"
    );
    let modules = common::data("linux-6.1-cloud/modules");
    let promised: Vec<String> = {
        let mut m: Vec<String> = String::from_utf8_lossy(&modules)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|m| !without.contains(m))
            .map(str::to_string)
            .collect();
        m.sort();
        m
    };
    assert!(promised.len() >= 30, "{promised:?}");
    assert_eq!(files, promised, "bundled module BTF vs modules.gz");
    let mut unpacked: Vec<&str> = common::MODULES_61.to_vec();
    unpacked.sort();
    assert_eq!(
        unpacked, files,
        "tests/common's MODULES_61 (what Kernel61 unpacks) vs the files"
    );
}

/// Every named (kind, name) of every bundled 6.1 module file (the files
/// present: [`modules_61`]), against bpftool's split dump on vmlinux.
#[test]
fn module_lookups_are_bpftools_split_dump() {
    let k = Kernel61::new();
    let btf = k.open();
    let mut checked = 0;
    let modules = modules_61();
    assert!(!modules.is_empty());
    for m in &modules {
        let dump = bpftool_dump(&k.btf_dir().join(m), Some(&k.vmlinux()));
        let mut first: BTreeMap<(String, String), u32> = BTreeMap::new();
        for (id, kind, name) in &dump {
            first.entry((kind.clone(), name.clone())).or_insert(*id);
        }
        let obj = btf.module_object(m.as_bytes()).unwrap();
        for ((kind, name), id) in &first {
            let q = format!("{m}`{name}");
            let f = btf.find(q.as_bytes(), kind_of(kind)).unwrap();
            assert_eq!((f.id, f.obj), (*id, obj), "{q} {kind}");
            assert!(
                f.id >= ksym::internals::btf::vmlinux(&btf).btf.end_id(),
                "module ids continue after vmlinux's"
            );
            checked += 1;
        }
    }
    assert!(checked > 5_000, "{checked}");
}

#[test]
fn names_only_in_modules_duplicates_and_errors() {
    let k = Kernel61::new();
    let btf = k.open();
    // Only in xfs: found unqualified too, and said to be xfs's.
    let f = btf.find(b"xfs_file_open", KIND_FUNC).unwrap();
    assert_eq!(btf.object_name(f.obj).to_bytes(), b"xfs");
    assert_eq!(f.name.to_bytes(), b"xfs_file_open");
    // In fat and vfat: ambiguous unqualified, found qualified.
    let e = btf.find(b"fat_mount_options", KIND_STRUCT).unwrap_err();
    assert_eq!(e.code(), AMBIGUOUS, "{e}");
    assert!(
        e.message().contains("`fat`fat_mount_options`")
            && e.message().contains("`vfat`fat_mount_options`"),
        "{e}"
    );
    let a = btf.find(b"fat`fat_mount_options", KIND_STRUCT).unwrap();
    let b = btf.find(b"vfat`fat_mount_options", KIND_STRUCT).unwrap();
    assert_ne!((a.obj, a.id), (b.obj, b.id));
    // In vmlinux and in a module: vmlinux's first, as libbpf.
    let v = btf.find(b"parse_options", KIND_FUNC).unwrap();
    assert_eq!(v.obj, 0);
    assert!(btf.find(b"fat`parse_options", KIND_FUNC).is_ok());
    // Not found: the kind and the place are named, with where it is.
    let e = btf.find(b"xfs`vfs_read", KIND_FUNC).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(e.message().contains("FUNC `vmlinux`vfs_read`"), "{e}");
    let e = btf.find(b"vfs_read", KIND_STRUCT).unwrap_err();
    assert!(
        e.message().contains("no STRUCT `vfs_read`")
            && e.message().contains("FUNC `vmlinux`vfs_read`"),
        "{e}"
    );
    // A module without BTF: said so.
    let e = btf.find(b"ext4`ext4_file_open", KIND_FUNC).unwrap_err();
    assert!(e.message().contains("no BTF for module `ext4`"), "{e}");
    // A kernel without module BTF (5.10) with xfs loaded: the module is
    // there, its BTF is not, and the message says why and what still works.
    let empty = common::TempDir::new();
    let no_mod_btf = KernelBtf::open(&Options {
        vmlinux_btf_path: Some(k.vmlinux()),
        module_btf_dir: Some(empty.path().to_path_buf()),
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..Default::default()
        },
        kallsyms_path: Some(k.dir.path().join("kallsyms")),
        ..Default::default()
    })
    .unwrap();
    let e = no_mod_btf
        .find(b"xfs`xfs_file_open", KIND_FUNC)
        .unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(
        e.message()
            .contains("module `xfs` is loaded but has no BTF")
            && e.message().contains("no module BTF at all")
            && e.message().contains("kprobe"),
        "{e}"
    );
    // Unqualified, as a tool names a function (fsdist's
    // fentry_can_attach): kallsyms says whose it is.
    let e = no_mod_btf.find(b"xfs_file_open", KIND_FUNC).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(
        e.message().contains(
            "has it in module `xfs`, loaded but without BTF (this kernel has no module BTF at all"
        ),
        "{e}"
    );
    // A name kallsyms does not have either: no such note.
    let e = no_mod_btf.find(b"no_such_function", KIND_FUNC).unwrap_err();
    assert!(!e.message().contains("kallsyms"), "{e}");
    // Module names fold - and _.
    assert!(btf
        .find(b"nf-tables`nft_register_chain_type", KIND_FUNC)
        .is_ok());
    // Bad queries.
    assert_eq!(
        btf.find(b"a`b`c", 0).unwrap_err().code(),
        ksym::internals::error::INVALID
    );
}

#[test]
fn attach_targets_from_btf_and_kallsyms() {
    let k = Kernel61::new();
    let btf = k.open();
    let kallsyms = common::reference(&common::data("linux-6.1-cloud/kallsyms"));
    let addr_of = |module: &str, name: &str| {
        kallsyms
            .iter()
            .filter(|r| r.name == name.as_bytes() && r.module == module.as_bytes())
            .map(|r| r.addr)
            .min()
            .unwrap()
    };
    let q = |s: &'static str| Query::parse(s.as_bytes()).unwrap();
    let t = btf.target(TargetKind::Function, &q("vfs_read")).unwrap();
    assert_eq!(t.obj, Some(0));
    assert_eq!(
        t.btf_id,
        btf.find(b"vmlinux`vfs_read", KIND_FUNC).unwrap().id
    );
    // The address is looked up when asked (resolving needs no kallsyms).
    assert_eq!(t.addr, 0);
    assert_eq!(
        btf.function_addr(b"vmlinux", b"vfs_read"),
        addr_of("vmlinux", "vfs_read")
    );
    let t = btf
        .target(TargetKind::Function, &q("xfs`xfs_file_open"))
        .unwrap();
    assert_eq!(btf.text(&t.module).to_bytes(), b"xfs");
    assert_eq!(
        btf.function_addr(b"xfs", b"xfs_file_open"),
        addr_of("xfs", "xfs_file_open")
    );
    let t = btf
        .target(TargetKind::Tracepoint, &q("sched_switch"))
        .unwrap();
    assert_eq!(
        t.btf_id,
        btf.find(b"btf_trace_sched_switch", KIND_TYPEDEF)
            .unwrap()
            .id
    );
    assert_eq!(t.addr, 0);
    let t = btf.target(TargetKind::Lsm, &q("file_open")).unwrap();
    assert_eq!(
        t.btf_id,
        btf.find(b"bpf_lsm_file_open", KIND_FUNC).unwrap().id
    );
    assert_eq!(
        btf.function_addr(b"vmlinux", b"bpf_lsm_file_open"),
        addr_of("vmlinux", "bpf_lsm_file_open")
    );
    let e = btf
        .target(TargetKind::Function, &q("no_such_function_here"))
        .unwrap_err();
    assert!(
        e.message()
            .contains("kernel function `no_such_function_here`"),
        "{e}"
    );
}

#[test]
fn expanding_patterns() {
    let k = Kernel61::new();
    let btf = k.open();
    let names = |ts: &[ksym::internals::btf::targets::Target]| -> Vec<String> {
        ts.iter()
            .map(|t| {
                format!(
                    "{}`{}",
                    btf.text(&t.module).to_string_lossy(),
                    btf.text(&t.name).to_string_lossy()
                )
            })
            .collect()
    };
    let vfs = btf.expand(TargetKind::Function, b"vmlinux`vfs_*").unwrap();
    assert!(vfs.len() > 20, "{:?}", names(&vfs));
    assert!(
        vfs.windows(2).all(|w| w[0].addr < w[1].addr),
        "in address order"
    );
    for t in &vfs {
        let n = btf.text(&t.name).to_bytes();
        assert!(n.starts_with(b"vfs_") && !n.contains(&b'.'), "{t:?}");
        assert_eq!(
            t.btf_id,
            btf.find(&[b"vmlinux`", n].concat(), KIND_FUNC).unwrap().id
        );
    }
    let xfs = btf.expand(TargetKind::Function, b"xfs`xfs_file_*").unwrap();
    assert!(
        !xfs.is_empty()
            && xfs
                .iter()
                .all(|t| btf.text(&t.module).to_bytes() == b"xfs" && t.obj.is_some())
    );
    let tps = btf
        .expand(TargetKind::Tracepoint, b"sched_process_*")
        .unwrap();
    let tp_names = names(&tps);
    assert!(
        tp_names.contains(&"vmlinux`sched_process_fork".to_string()),
        "{tp_names:?}"
    );
    assert!(
        tp_names.contains(&"vmlinux`sched_process_exec".to_string()),
        "{tp_names:?}"
    );
    assert!(btf
        .expand(TargetKind::Function, b"nothing_matches_this_*")
        .unwrap()
        .is_empty());
    // Artifacts only when named exactly.
    let isra = btf.expand(TargetKind::Kprobe, b"*.isra.0").unwrap();
    assert!(isra.is_empty(), "{:?}", names(&isra));
    let bad = btf.expand(TargetKind::Function, b"[x").unwrap_err();
    assert_eq!(bad.code(), ksym::internals::error::INVALID);
    // A kernel without module BTF (5.10), xfs loaded: a glob of its
    // functions says why it has no BTF targets; kprobes still expand, and
    // a glob over vmlinux too keeps vmlinux's.
    let empty = TempDir::new();
    let no_mod_btf = KernelBtf::open(&Options {
        vmlinux_btf_path: Some(k.vmlinux()),
        module_btf_dir: Some(empty.path().to_path_buf()),
        filter_functions_path: Some("".into()),
        kallsyms_path: Some(k.dir.path().join("kallsyms")),
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let e = no_mod_btf
        .expand(TargetKind::Function, b"xfs`xfs_file_*")
        .unwrap_err();
    assert_eq!(e.code(), ksym::internals::error::NOT_FOUND);
    assert!(
        e.message().contains("module `xfs`, loaded but without BTF")
            && e.message().contains("no module BTF at all"),
        "{e}"
    );
    let kp = no_mod_btf
        .expand(TargetKind::Kprobe, b"xfs`xfs_file_*")
        .unwrap();
    assert_eq!(kp.len(), xfs.len(), "{:?}", names(&kp));
    assert!(!no_mod_btf
        .expand(TargetKind::Function, b"*vfs_read*")
        .unwrap()
        .is_empty());
}

#[test]
fn module_btf_as_an_elf_and_bad_files() {
    let k = Kernel61::new();
    let dir = TempDir::new();
    std::fs::write(
        dir.path().join("xfs"),
        common::data("linux-6.1-cloud/xfs.ko"),
    )
    .unwrap();
    let btf = KernelBtf::open(&Options {
        vmlinux_btf_path: Some(k.vmlinux()),
        module_btf_dir: Some(dir.path().to_path_buf()),
        filter_functions_path: Some("".into()),
        ..Default::default()
    })
    .unwrap();
    let f = btf.find(b"xfs`xfs_file_open", KIND_FUNC).unwrap();
    assert_eq!(btf.object_name(f.obj).to_bytes(), b"xfs");
    // Split BTF on the wrong base: refused with the file named.
    std::fs::write(
        dir.path().join("xfs"),
        common::data("linux-6.1-cloud/btf/xfs"),
    )
    .unwrap();
    let running = KernelBtf::open(&Options {
        module_btf_dir: Some(dir.path().to_path_buf()),
        filter_functions_path: Some("".into()),
        ..Default::default()
    });
    match running {
        Ok(running) => {
            let e = running.find(b"xfs`xfs_file_open", KIND_FUNC).unwrap_err();
            assert_eq!(e.code(), FORMAT, "{e}");
            assert!(e.message().contains("split BTF on"), "{e}");
        }
        Err(e) => common::skip_need(
            common::Need::Kernel,
            &format!("split BTF on the wrong base needs the running kernel's BTF: {e}"),
        ),
    }
    // A module BTF that went away after open.
    let btf = KernelBtf::open(&Options {
        vmlinux_btf_path: Some(k.vmlinux()),
        module_btf_dir: Some(dir.path().to_path_buf()),
        filter_functions_path: Some("".into()),
        ..Default::default()
    })
    .unwrap();
    std::fs::remove_file(dir.path().join("xfs")).unwrap();
    let e = btf.find(b"xfs`xfs_file_open", KIND_FUNC).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(e.message().contains("gone"), "{e}");
    // Not BTF at all.
    std::fs::write(dir.path().join("junk"), b"hello").unwrap();
    let e = KernelBtf::open(&Options {
        vmlinux_btf_path: Some(dir.path().join("junk")),
        module_btf_dir: Some("".into()),
        ..Default::default()
    })
    .err()
    .unwrap();
    assert_eq!(e.code(), FORMAT, "{e}");
    let e = KernelBtf::open(&Options {
        vmlinux_btf_path: Some(dir.path().join("missing")),
        ..Default::default()
    })
    .err()
    .unwrap();
    assert_eq!(e.code(), NOT_FOUND, "{e}");
}

#[test]
fn the_running_kernels_btf() {
    let Ok(btf) = KernelBtf::open(&Options::default()) else {
        return common::skip("no readable /sys/kernel/btf/vmlinux");
    };
    let dump = bpftool_dump(Path::new("/sys/kernel/btf/vmlinux"), None);
    let want = dump
        .iter()
        .find(|(_, k, n)| k == "FUNC" && n == "vfs_read")
        .unwrap()
        .0;
    assert_eq!(btf.find(b"vfs_read", KIND_FUNC).unwrap().id, want);
    let tp = dump
        .iter()
        .find(|(_, k, n)| k == "TYPEDEF" && n == "btf_trace_sched_switch")
        .unwrap()
        .0;
    assert_eq!(
        btf.find(b"btf_trace_sched_switch", KIND_TYPEDEF)
            .unwrap()
            .id,
        tp
    );
}
