//! The kernel BTF and attach targets section.

use std::ffi::{c_char, CStr, CString};
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;

use ksym::ffi::bpf::*;
use ksym::ffi::btf::*;

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

/// `n` FUNC names of the running kernel's BTF, picked at random.
fn func_names(n: usize) -> Vec<CString> {
    let data = std::fs::read("/sys/kernel/btf/vmlinux").expect("read /sys/kernel/btf/vmlinux");
    let btf = ksym::formats::btf::Btf::parse(data).expect("parse vmlinux BTF");
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

    // ksym_btf_open + 1000 finds, against libbpf's load + 1000 finds.
    let lib = libbpf_btf();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut check = (0u32, 0u32);
    for _ in 0..rounds {
        ours.push(time(1, || {
            let b = btf_open();
            check.0 = find_all(&b, &names);
            b
        }));
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
    let ours_m = median(ours.clone());
    match &lib {
        Some(_) => {
            assert_eq!(check.0, check.1, "libksym and libbpf found different ids");
            let ratio = paired_ratio(&ours, &theirs);
            rows.push(row(
                "libbpf: btf__load_vmlinux_btf + btf__find_by_name_kind, 1000 FUNC names",
                ms(median(theirs)),
                "1.00",
                "baseline",
            ));
            rows.push(row(
                "ksym_btf_open + ksym_btf_find, the same 1000 names (same ids)",
                ms(ours_m),
                format!("{ratio:.3}"),
                format!("≤ 0.5 × libbpf: {}", verdict(ratio <= 0.5)),
            ));
        }
        None => rows.push(row(
            "ksym_btf_open + ksym_btf_find, 1000 FUNC names (libbpf not installed: no baseline)",
            ms(ours_m),
            "",
            "",
        )),
    }
    let open_only = time(rounds, btf_open);
    rows.push(row(
        "of which ksym_btf_open (read, check, index vmlinux BTF)",
        ms(open_only),
        "",
        "",
    ));
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
        format!("ksym_bpf_program_expand over vmlinux`*: {count} fentry aliases ({filter}), fresh ksym_btf"),
        ms(cold),
        "",
        format!("≤ 50 ms: {}", verdict(cold <= 0.050)),
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
