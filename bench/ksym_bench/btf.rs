//! The kernel BTF and attach targets section.

use std::ffi::{c_char, CStr, CString};
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;

use ksym_capi::ffi::bpf::*;
use ksym_capi::ffi::bpf_attach::*;
use ksym_capi::ffi::btf::*;

use crate::bpf::{bpf_open, last_error};
use crate::common::*;

type Ptr = *mut libc::c_void;
type LoadVmlinux = unsafe extern "C" fn() -> Ptr;
type FindByNameKind = unsafe extern "C" fn(Ptr, *const c_char, u32) -> i32;
type BtfFree = unsafe extern "C" fn(Ptr);

/// libbpf's BTF API, if libbpf.so.1 is installed (dlopen).
struct LibbpfBtf {
    load_vmlinux: LoadVmlinux,
    find: FindByNameKind,
    free: BtfFree,
}

fn libbpf_btf() -> Option<LibbpfBtf> {
    unsafe {
        let h = libc::dlopen(c"libbpf.so.1".as_ptr(), libc::RTLD_NOW);
        if h.is_null() {
            return None;
        }
        let sym = |n: &CStr| {
            let p = libc::dlsym(h, n.as_ptr());
            (!p.is_null()).then_some(p)
        };
        // SAFETY: the prototypes of libbpf 1.x (bpf/btf.h).
        Some(LibbpfBtf {
            load_vmlinux: std::mem::transmute::<Ptr, LoadVmlinux>(sym(c"btf__load_vmlinux_btf")?),
            find: std::mem::transmute::<Ptr, FindByNameKind>(sym(c"btf__find_by_name_kind")?),
            free: std::mem::transmute::<Ptr, BtfFree>(sym(c"btf__free")?),
        })
    }
}

const FUNC: u32 = 12;

/// Snapshots are root's only: without root the snapshot rows are left out.
fn root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `n` FUNC names of the running kernel's BTF, picked at random.
fn func_names(n: usize) -> Vec<CString> {
    let data = std::fs::read("/sys/kernel/btf/vmlinux").expect("read /sys/kernel/btf/vmlinux");
    let btf = ksym::internals::formats::btf::Btf::parse(data).expect("parse vmlinux BTF");
    let funcs: Vec<u32> = (1..btf.end_id())
        .filter(|&id| btf.ty(id).is_some_and(|t| t.kind() == FUNC))
        .collect();
    let mut rng = Rng(42);
    (0..n)
        .map(|_| {
            let id = funcs[(rng.next() % funcs.len() as u64) as usize];
            CString::new(btf.name(id)).unwrap()
        })
        .collect()
}

struct BtfGuard(*mut ksym_btf);
impl Drop for BtfGuard {
    fn drop(&mut self) {
        unsafe { ksym_btf_free(self.0) }
    }
}

fn btf_open() -> BtfGuard {
    let b = unsafe { ksym_btf_open(std::ptr::null()) };
    assert!(!b.is_null(), "ksym_btf_open: {}", last_error());
    BtfGuard(b)
}

/// How vmlinux's BTF is opened: read and checked (no snapshot), the first
/// open of a boot (writing the snapshot to `dir`), or from the snapshot.
#[derive(Clone, Copy, PartialEq)]
enum Open<'d> {
    Read,
    Writing(&'d CStr),
    Snapshot(&'d CStr),
}

fn btf_open_as(how: Open<'_>) -> BtfGuard {
    let mut o = ksym_btf_opts::default();
    match how {
        Open::Read => o.flags = KSYM_BTF_NO_SNAPSHOT,
        Open::Writing(d) | Open::Snapshot(d) => o.snapshot_dir = d.as_ptr(),
    }
    if let Open::Writing(d) = how {
        // The first open of a boot: no snapshot there yet.
        let dir = Path::new(std::ffi::OsStr::new(d.to_str().unwrap()));
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
    let b = unsafe { ksym_btf_open(&o) };
    assert!(!b.is_null(), "ksym_btf_open: {}", last_error());
    let mut st = ksym_btf_stats {
        sz: std::mem::size_of::<ksym_btf_stats>(),
        ..Default::default()
    };
    unsafe { ksym_btf_stats(b, &mut st) };
    let want = match how {
        Open::Read => 0,
        Open::Writing(_) => KSYM_BTF_STATS_SNAPSHOT_WRITTEN,
        Open::Snapshot(_) => KSYM_BTF_STATS_SNAPSHOT,
    };
    assert_eq!(
        st.flags & (KSYM_BTF_STATS_SNAPSHOT | KSYM_BTF_STATS_SNAPSHOT_WRITTEN),
        want,
        "snapshot state (root is needed for snapshots)"
    );
    BtfGuard(b)
}

fn find_all(b: &BtfGuard, names: &[CString]) -> u32 {
    let mut sum = 0u32;
    for n in names {
        let mut t = ksym_btf_type {
            sz: std::mem::size_of::<ksym_btf_type>(),
            type_id: 0,
            obj_id: 0,
            obj_fd: 0,
            kind: 0,
            name: std::ptr::null(),
            module: std::ptr::null(),
        };
        let r = unsafe { ksym_btf_find(b.0, n.as_ptr(), FUNC, &mut t) };
        assert_eq!(r, 0, "{n:?}: {}", last_error());
        sum = sum.wrapping_add(t.type_id);
    }
    sum
}

pub fn bench_btf() {
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        println!("\n(kernel BTF section skipped: no /sys/kernel/btf/vmlinux)");
        return;
    }
    let mut rows = Vec::new();
    let names = func_names(1000);
    let rounds = 15;

    // ksym_btf_open + 1000 finds, against libbpf's load + 1000 finds: read
    // and checked (no snapshot), and from the snapshot a first open of the
    // boot wrote (in a private directory of the bench's).
    let dir = std::env::temp_dir().join(format!("ksym-bench-btf-{}", std::process::id()));
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
    }
    let cdir = CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let snap = root();
    let lib = libbpf_btf();
    let (mut read, mut from_snap, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    let mut check = (0u32, 0u32, 0u32);
    if snap {
        drop(btf_open_as(Open::Writing(&cdir)));
    }
    for _ in 0..rounds {
        read.push(time(1, || {
            // Freed inside the clock, as libbpf's btf__free is.
            let b = btf_open_as(Open::Read);
            check.0 = find_all(&b, &names);
            drop(b);
        }));
        if snap {
            from_snap.push(time(1, || {
                let b = btf_open_as(Open::Snapshot(&cdir));
                check.2 = find_all(&b, &names);
                drop(b);
            }));
        }
        if let Some(l) = &lib {
            theirs.push(time(1, || unsafe {
                let b = (l.load_vmlinux)();
                assert!(!b.is_null());
                let mut sum = 0u32;
                for n in &names {
                    let id = (l.find)(b, n.as_ptr(), FUNC);
                    assert!(id > 0, "libbpf: {n:?} not found");
                    sum = sum.wrapping_add(id as u32);
                }
                check.1 = sum;
                (l.free)(b);
            }));
        }
    }
    match &lib {
        Some(_) => {
            assert_eq!(check.0, check.1, "libksym and libbpf found different ids");
            rows.push(row(
                "libbpf: btf__load_vmlinux_btf + btf__find_by_name_kind, 1000 FUNC names",
                ms(median(theirs.clone())),
                "1.00",
                "baseline",
            ));
            let ratio = paired_ratio(&read, &theirs);
            let label = "ksym_btf_open (read, check, index; no snapshot) + ksym_btf_find, the same 1000 names (same ids)";
            rows.push(row(
                label,
                ms(median(read.clone())),
                format!("{ratio:.3}"),
                at_most(label, ratio, 0.5, "libbpf"),
            ));
            if snap {
                assert_eq!(check.2, check.1, "the snapshot's ids differ from libbpf's");
                let ratio = paired_ratio(&from_snap, &theirs);
                let label = "ksym_btf_open from the BTF snapshot + ksym_btf_find, the same 1000 names (same ids)";
                rows.push(row(
                    label,
                    ms(median(from_snap.clone())),
                    format!("{ratio:.4}"),
                    at_most(label, ratio, 0.5, "libbpf"),
                ));
            }
        }
        None => rows.push(row(
            "ksym_btf_open + ksym_btf_find, 1000 FUNC names (libbpf not installed: no baseline)",
            ms(median(read.clone())),
            "",
            "",
        )),
    }
    rows.push(row(
        "ksym_btf_open alone: read, check and index vmlinux's BTF (no snapshot)",
        ms(time(rounds, || btf_open_as(Open::Read))),
        "",
        "",
    ));
    if snap {
        rows.push(row(
            "ksym_btf_open alone, first of a boot (also writes the snapshot)",
            ms(time(rounds, || btf_open_as(Open::Writing(&cdir)))),
            "",
            "",
        ));
        let size = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.metadata().map_or(0, |m| m.len()))
            .sum::<u64>();
        rows.push(row(
            format!(
                "ksym_btf_open alone, from the snapshot ({:.1} MB)",
                size as f64 / 1e6
            ),
            ms(time(rounds, || btf_open_as(Open::Snapshot(&cdir)))),
            "",
            "",
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let b = btf_open();
    find_all(&b, &names);
    let warm = per_item(rounds, names.len(), || find_all(&b, &names) as u64);
    rows.push(row(
        "ksym_btf_find, warm, per name",
        format!("{warm:.0} ns"),
        "",
        "",
    ));
    drop(b);

    // Expanding a program over every traceable function.
    let obj_path =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tools/bpf/count.bpf.o");
    let cobj = CString::new(obj_path.as_os_str().as_encoded_bytes()).unwrap();
    let prog = |o: &crate::bpf::ObjGuard| {
        let mut p = 0usize;
        let r = unsafe { ksym_bpf_object_find_program(o.0, c"count_fentry".as_ptr(), &mut p) };
        assert_eq!(r, 0, "{}", last_error());
        p
    };
    let mut count = 0;
    let cold = time(5, || {
        let b = btf_open();
        let o = bpf_open(&cobj);
        let p = prog(&o);
        count = unsafe { ksym_bpf_program_expand(o.0, p, c"vmlinux`*".as_ptr(), b.0) };
        assert!(count > 0, "expand: {}", last_error());
        (o, b)
    });
    let b = btf_open();
    {
        // Read kallsyms and tracefs once, untimed.
        let o = bpf_open(&cobj);
        unsafe { ksym_bpf_program_expand(o.0, prog(&o), c"vmlinux`schedule".as_ptr(), b.0) };
    }
    let mut kept = 0usize;
    let warm = time(7, || {
        let o = bpf_open(&cobj);
        let p = prog(&o);
        let base = CURRENT.load(Relaxed);
        let n = unsafe { ksym_bpf_program_expand(o.0, p, c"vmlinux`*".as_ptr(), b.0) };
        assert_eq!(n, count);
        kept = CURRENT.load(Relaxed) - base;
        o
    });
    let mut st = ksym_btf_stats {
        sz: std::mem::size_of::<ksym_btf_stats>(),
        ..Default::default()
    };
    unsafe { ksym_btf_stats(b.0, &mut st) };
    let filter = if st.flags & KSYM_BTF_STATS_FILTER_FUNCTIONS != 0 {
        "checked against tracefs' filter functions"
    } else {
        "tracefs unreadable here: BTF and kallsyms only"
    };
    rows.push(row(
        format!("ksym_bpf_program_expand over vmlinux`*: {count} fentry aliases ({filter}), fresh ksym_btf (from the snapshots)"),
        ms(cold),
        "",
        holds(
            "ksym_bpf_program_expand over vmlinux`*, fresh ksym_btf",
            ms(cold),
            "≤ 50 ms",
            cold <= 0.050,
        ),
    ));
    rows.push(row(
        "the same with a ksym_btf that has read BTF, kallsyms and tracefs already",
        ms(warm),
        "",
        "",
    ));
    rows.push(row(
        format!("memory of those {count} aliases (one instruction copy)"),
        format!("{:.1} MiB", kept as f64 / (1 << 20) as f64),
        "",
        format!("{:.0} bytes per alias", kept as f64 / count as f64),
    ));
    print_table("Kernel BTF and attach targets", &rows);
}
