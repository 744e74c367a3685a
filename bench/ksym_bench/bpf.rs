//! The BPF object section.

use std::ffi::{c_char, CStr, CString};
use std::path::Path;

use ksym_capi::ffi::bpf::*;
use ksym_capi::ffi::bpf_maps::*;
use ksym_capi::ffi::resolve::*;
use ksym_capi::ffi::table::*;

use crate::common::*;

pub fn last_error() -> String {
    unsafe { CStr::from_ptr(ksym_capi::ffi::error::ksym_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// Closes a BPF object when dropped.
pub struct ObjGuard(pub *mut ksym_bpf_object);
impl Drop for ObjGuard {
    fn drop(&mut self) {
        unsafe { ksym_bpf_object_free(self.0) }
    }
}

pub fn bpf_open(path: &CStr) -> ObjGuard {
    let o = unsafe { ksym_bpf_object_open(path.as_ptr()) };
    assert!(!o.is_null(), "open: {}", last_error());
    // Relocation writes the fd into the instructions; no map is created.
    for m in 0..unsafe { ksym_bpf_object_map_count(o) } {
        assert_eq!(
            unsafe { ksym_bpf_object_set_map_fd(o, m, 100 + m as i32) },
            0
        );
    }
    ObjGuard(o)
}

pub type Ptr = *mut libc::c_void;
pub type OpenFile = unsafe extern "C" fn(*const c_char, *const libc::c_void) -> Ptr;
pub type Close = unsafe extern "C" fn(Ptr);
pub type NextProgram = unsafe extern "C" fn(*const libc::c_void, Ptr) -> Ptr;
pub type SetPrint = unsafe extern "C" fn(*const libc::c_void) -> *const libc::c_void;

/// libbpf, if installed, through dlopen: the bench neither links nor needs it.
pub struct Libbpf {
    open_file: OpenFile,
    close: Close,
    next_program: NextProgram,
}

pub fn libbpf() -> Option<Libbpf> {
    unsafe {
        let h = libc::dlopen(c"libbpf.so.1".as_ptr(), libc::RTLD_NOW);
        if h.is_null() {
            return None;
        }
        let sym = |n: &CStr| {
            let p = libc::dlsym(h, n.as_ptr());
            (!p.is_null()).then_some(p)
        };
        // SAFETY: the prototypes of libbpf 1.x (bpf/libbpf.h).
        let set_print = std::mem::transmute::<Ptr, SetPrint>(sym(c"libbpf_set_print")?);
        // Silence libbpf's warnings: NULL print callback.
        set_print(std::ptr::null());
        Some(Libbpf {
            open_file: std::mem::transmute::<Ptr, OpenFile>(sym(c"bpf_object__open_file")?),
            close: std::mem::transmute::<Ptr, Close>(sym(c"bpf_object__close")?),
            next_program: std::mem::transmute::<Ptr, NextProgram>(sym(
                c"bpf_object__next_program",
            )?),
        })
    }
}

pub fn bench_bpf(live: &Path) {
    let mut rows = Vec::new();
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("c-tests/bpf/many_aliases.bpf.o");
    let cpath = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let lp = CString::new(live.as_os_str().as_encoded_bytes()).unwrap();
    let probe = bpf_open(&cpath);
    let nprogs = unsafe { ksym_bpf_object_program_count(probe.0) };
    drop(probe);
    let mut buf = vec![0u8; 1 << 20];

    let resolve = |o: &ObjGuard, cache: *mut ksym_cache| {
        let r = unsafe { ksym_bpf_object_resolve_ksyms(o.0, cache) };
        assert_eq!(r, 0, "resolve_ksyms: {}", last_error());
    };
    let relocate = |o: &ObjGuard| {
        let r = unsafe { ksym_bpf_object_relocate(o.0) };
        assert_eq!(r, 0, "relocate: {}", last_error());
    };
    let (mut plain, mut open, mut res, mut rel, mut all, mut scan) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for round in 0..21 {
        plain.push(time(1, || plain_read(live, &mut buf)));
        open.push(time(1, || bpf_open(&cpath)));
        let o = bpf_open(&cpath);
        res.push(time(1, || resolve(&o, std::ptr::null_mut())));
        rel.push(time(1, || relocate(&o)));
        drop(o);
        all.push(time(1, || {
            let o = bpf_open(&cpath);
            resolve(&o, std::ptr::null_mut());
            relocate(&o);
            o
        }));
        if round < 3 {
            scan.push(time(1, || fscanf_loop(live)));
        }
    }
    let ratio = |v: &[f64]| paired_ratio(v, &plain);
    let plain_med = median(plain.clone());
    rows.push(row(
        format!("plain read() of {}", live.display()),
        ms(plain_med),
        "1.00",
        "baseline",
    ));
    let open_med = median(open.clone());
    rows.push(row(
        format!(
            "ksym_bpf_object_open, many_aliases.bpf.o ({nprogs} programs: 1 function + aliases)"
        ),
        short(open_med),
        format!("{:.3}", ratio(&open)),
        "",
    ));
    let r = ratio(&res);
    let label = "ksym_bpf_object_resolve_ksyms, no cache (one streaming pass over kallsyms)";
    rows.push(row(
        label,
        ms(median(res)),
        format!("{r:.3}"),
        at_most(label, r, 1.05, "read"),
    ));
    rows.push(row(
        format!("ksym_bpf_object_relocate, all {nprogs} programs"),
        short(median(rel.clone())),
        format!("{:.4}", ratio(&rel)),
        "",
    ));
    let r = ratio(&all);
    let label = "open + resolve_ksyms + relocate, end to end";
    rows.push(row(
        label,
        ms(median(all)),
        format!("{r:.3}"),
        at_most(label, r, 1.10, "read"),
    ));
    rows.push(row(
        "libbpf's way to resolve __ksym: fscanf over every line (libbpf_kallsyms_parse)",
        ms(median(scan.clone())),
        format!("{:.2}", ratio(&scan)),
        "",
    ));

    // Memory kept by a relocated object, and how many instruction copies.
    let (o, kept) = {
        use std::sync::atomic::Ordering::Relaxed;
        let base = CURRENT.load(Relaxed);
        let o = bpf_open(&cpath);
        resolve(&o, std::ptr::null_mut());
        relocate(&o);
        let kept = CURRENT.load(Relaxed) - base;
        (o, kept)
    };
    let mut copies = std::collections::HashSet::new();
    let mut insns = 0;
    for p in 0..nprogs {
        let mut n = 0usize;
        let i = unsafe { ksym_bpf_program_insns(o.0, p, &mut n) };
        assert!(!i.is_null(), "insns: {}", last_error());
        copies.insert(i as usize);
        insns = n;
    }
    drop(o);
    rows.push(row(
        format!(
            "memory kept by the relocated object ({} instruction copy for {nprogs} programs of {insns} insns)",
            copies.len()
        ),
        format!("{:.1} KiB", kept as f64 / 1024.0),
        "",
        format!(
            "{}; a copy per program would add {:.1} KiB",
            holds(
                "one instruction copy for all aliases",
                format!("{} copies", copies.len()),
                "1 copy",
                copies.len() == 1
            ),
            ((nprogs - 1) * insns * 8) as f64 / 1024.0
        ),
    ));

    // Many objects through one cache: one kallsyms pass for all of them.
    let opts = ksym_table_opts {
        kallsyms_path: lp.as_ptr(),
        builtin_ranges_path: c"".as_ptr(),
        ..Default::default()
    };
    let c = unsafe { ksym_cache_new(&opts) };
    assert!(!c.is_null());
    let o = bpf_open(&cpath);
    resolve(&o, c);
    drop(o);
    let objs: Vec<ObjGuard> = (0..21).map(|_| bpf_open(&cpath)).collect();
    let mut it = objs.iter();
    let warm = time(21, || resolve(it.next().unwrap(), c));
    let mut st = ksym_cache_stats {
        sz: std::mem::size_of::<ksym_cache_stats>(),
        ..Default::default()
    };
    assert_eq!(unsafe { ksym_cache_stats(c, &mut st) }, 0);
    drop(objs);
    unsafe { ksym_cache_free(c) };
    rows.push(row(
        format!(
            "resolve_ksyms of 22 objects through one ksym_cache: {} kallsyms pass(es) in all; warm object",
            st.passes
        ),
        short(warm),
        "",
        holds(
            "resolve_ksyms of 22 objects through one ksym_cache",
            format!("{} passes", st.passes),
            "1 pass",
            st.passes == 1,
        ),
    ));

    match libbpf() {
        None => rows.push(row(
            "libbpf bpf_object__open_file: libbpf.so.1 not installed, not measured",
            "",
            "",
            "",
        )),
        Some(lb) => {
            // Open only, both: each object is closed after the clock stops;
            // rounds alternate the two.
            let (mut ours, mut theirs) = (vec![], vec![]);
            let mut n = 0;
            for _ in 0..41 {
                ours.push(time(1, || bpf_open(&cpath)));
                let mut o = std::ptr::null_mut();
                theirs.push(time(1, || unsafe {
                    o = (lb.open_file)(cpath.as_ptr(), std::ptr::null());
                }));
                assert!(!o.is_null(), "libbpf could not open {}", path.display());
                n = 0;
                let mut p = unsafe { (lb.next_program)(o, std::ptr::null_mut()) };
                while !p.is_null() {
                    n += 1;
                    p = unsafe { (lb.next_program)(o, p) };
                }
                unsafe { (lb.close)(o) };
            }
            rows.push(row(
                format!("libbpf bpf_object__open_file, same object ({n} programs, each its own copy; open only)"),
                short(median(theirs.clone())),
                "1.00",
                "baseline",
            ));
            let r = paired_ratio(&ours, &theirs);
            let label = "ksym_bpf_object_open, same object, rounds alternating with libbpf's";
            rows.push(row(
                label,
                short(median(ours)),
                format!("{r:.3}"),
                at_most(label, r, 0.70, "libbpf's open"),
            ));
        }
    }
    print_table(
        "BPF objects: aliases relocated once, __ksym externs in one pass",
        &rows,
    );
}
