//! The batch resolution and cache section.

use std::ffi::{c_char, CStr, CString};
use std::path::Path;

use ksym_capi::ffi::resolve::*;
use ksym_capi::ffi::table::*;

use crate::common::*;

/// libbpf's way for externs: fscanf every line, and compare the name with
/// every wanted name (`find_extern_by_name` is a linear scan).
pub fn libbpf_style(path: &Path, wanted: &[CString]) -> usize {
    let p = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut found = 0;
    unsafe {
        let f = libc::fopen(p.as_ptr(), c"r".as_ptr());
        assert!(!f.is_null());
        let mut addr: libc::c_ulonglong = 0;
        let mut ty: c_char = 0;
        let mut name = [0 as c_char; 500];
        while libc::fscanf(
            f,
            c"%llx %c %499s%*[^\n]\n".as_ptr(),
            &mut addr as *mut _,
            &mut ty as *mut _,
            name.as_mut_ptr(),
        ) == 3
        {
            for w in wanted {
                if libc::strcmp(w.as_ptr(), name.as_ptr()) == 0 {
                    found += 1;
                }
            }
        }
        libc::fclose(f);
    }
    found
}

pub fn bench_resolve(live: &Path, copy: &Path) {
    let mut rows = Vec::new();
    // Unique names of this kernel, as a loader would ask for them.
    let t = open_table(copy);
    let text = std::fs::read(copy).unwrap();
    let all: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.contains(&b'\t'))
        .filter_map(|l| l.splitn(3, |&b| b == b' ').nth(2))
        .collect();
    let mut rng = Rng(99);
    let mut names: Vec<CString> = Vec::new();
    while names.len() < 1000 {
        let c = CString::new(all[(rng.next() % all.len() as u64) as usize]).unwrap();
        let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
        if unsafe { ksym_lookup(t, c.as_ptr(), s.as_mut_ptr()) } == 0 && !names.contains(&c) {
            names.push(c);
        }
    }
    unsafe { ksym_table_free(t) };
    let ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
    let lp = CString::new(live.as_os_str().as_encoded_bytes()).unwrap();
    let mut addrs = vec![0u64; 1000];
    let mut errs = vec![0i32; 1000];
    let mut buf = vec![0u8; 1 << 20];
    let mut run = |n: usize| {
        let r = unsafe {
            ksym_resolve(
                lp.as_ptr(),
                ptrs.as_ptr(),
                n,
                addrs.as_mut_ptr(),
                errs.as_mut_ptr(),
            )
        };
        assert_eq!(
            r,
            n as i32,
            "{}",
            unsafe { CStr::from_ptr(ksym_capi::ffi::error::ksym_last_error_message()) }
                .to_string_lossy()
        );
    };
    let (mut plain, mut r1, mut r10, mut r1000, mut lb10, mut lb1000) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for round in 0..21 {
        plain.push(time(1, || plain_read(live, &mut buf)));
        r1.push(time(1, || run(1)));
        r10.push(time(1, || run(10)));
        r1000.push(time(1, || run(1000)));
        if round < 3 {
            lb10.push(time(1, || libbpf_style(live, &names[..10])));
            lb1000.push(time(1, || libbpf_style(live, &names)));
        }
    }
    let plain_med = median(plain.clone());
    rows.push(row(
        format!("plain read() of {}", live.display()),
        ms(plain_med),
        "1.00",
        "baseline",
    ));
    for (n, v) in [(1, r1), (10, r10), (1000, r1000)] {
        let r = paired_ratio(&v, &plain);
        let label = format!("ksym_resolve, {n} name(s), cold (one streaming pass)");
        rows.push(row(
            &label,
            ms(median(v)),
            format!("{r:.3}"),
            at_most(&label, r, 1.05, "read"),
        ));
    }
    let ((), peak) = peak_extra(|| run(1000));
    rows.push(row(
        "peak extra memory of ksym_resolve, 1000 names",
        format!("{} KiB", peak / 1024),
        "",
        holds(
            "peak extra memory of ksym_resolve, 1000 names",
            format!("{} KiB", peak / 1024),
            "< 1 MiB",
            peak < 1 << 20,
        ),
    ));
    for (n, v) in [(10, lb10), (1000, lb1000)] {
        rows.push(row(
            format!("libbpf-style: fscanf per line + linear scan of {n} wanted names"),
            ms(median(v.clone())),
            format!("{:.2}", paired_ratio(&v, &plain)),
            "",
        ));
    }

    // Warm hits through a cache.
    let opts = ksym_table_opts {
        kallsyms_path: lp.as_ptr(),
        builtin_ranges_path: c"".as_ptr(),
        ..Default::default()
    };
    let c = unsafe { ksym_cache_new(&opts) };
    assert!(!c.is_null());
    let cold = time(1, || unsafe {
        ksym_cache_resolve(
            c,
            ptrs.as_ptr(),
            1000,
            addrs.as_mut_ptr(),
            errs.as_mut_ptr(),
        )
    });
    let warm = per_item(51, 1000, || unsafe {
        ksym_cache_resolve(
            c,
            ptrs.as_ptr(),
            1000,
            addrs.as_mut_ptr(),
            errs.as_mut_ptr(),
        )
    } as u64);
    let one = per_item(51, 1000, || {
        let mut acc = 0u64;
        for p in &ptrs {
            acc += unsafe { ksym_cache_resolve(c, p, 1, addrs.as_mut_ptr(), errs.as_mut_ptr()) }
                as u64;
        }
        acc
    });
    let mut st = ksym_cache_stats {
        sz: std::mem::size_of::<ksym_cache_stats>(),
        ..Default::default()
    };
    assert_eq!(unsafe { ksym_cache_stats(c, &mut st) }, 0);
    unsafe { ksym_cache_free(c) };
    rows.push(row(
        "ksym_cache_resolve, 1000 names, cold (one pass)",
        ms(cold),
        format!("{:.3}", cold / plain_med),
        "",
    ));
    rows.push(row(
        "ksym_cache_resolve, 1000 cached names per call",
        format!("{warm:.0} ns/name"),
        "",
        holds(
            "ksym_cache_resolve, 1000 cached names per call",
            format!("{warm:.0} ns/name"),
            "≤ 100 ns",
            warm <= 100.0,
        ),
    ));
    rows.push(row(
        "ksym_cache_resolve, 1 cached name per call (includes reading /proc/modules)",
        format!("{one:.0} ns/call"),
        "",
        "",
    ));
    rows.push(row(
        format!(
            "cache counters after all that: {} passes, {} misses, {} hits, {} entries",
            st.passes, st.misses, st.hits, st.entries
        ),
        "",
        "",
        "",
    ));
    print_table("Batch resolution and the pull-through cache", &rows);
}
