//! The module`symbol and built-in modules section.

use std::ffi::{c_char, CStr, CString};
use std::path::Path;
use std::time::Instant;

use ksym_capi::ffi::table::*;

use crate::common::*;

/// A modules.builtin.ranges for `kallsyms` shaped like a distro kernel's:
/// 150 built-in modules, each owning a few runs of core text symbols (some
/// runs shared by two modules), plus a data range each where the kernel has
/// a `_sdata` anchor. Returns the text and the number of ranges.
pub fn synthetic_ranges(kallsyms: &[u8]) -> (String, usize) {
    let mut text: Vec<u64> = Vec::new();
    let mut anchor_text = None;
    let mut anchor_data = None;
    let mut data: Vec<u64> = Vec::new();
    for l in kallsyms.split(|&b| b == b'\n') {
        let f: Vec<&[u8]> = l.split(|&b| b == b' ').collect();
        if f.len() != 3 {
            continue; // module lines have a tab-separated fourth field
        }
        let a = u64::from_str_radix(std::str::from_utf8(f[0]).unwrap(), 16).unwrap();
        match (f[1], f[2]) {
            (_, b"_text") => anchor_text = Some(a),
            (_, b"_sdata") => anchor_data = Some(a),
            (t, _) if t == b"t" || t == b"T" => text.push(a),
            (t, _) if t == b"d" || t == b"D" => data.push(a),
            _ => {}
        }
    }
    text.sort_unstable();
    text.dedup();
    data.sort_unstable();
    data.dedup();
    let mut out = String::new();
    let mut n = 0;
    let base = anchor_text.expect("_text");
    out += ".text 00000000-00000000 = _text\n";
    let mods: Vec<String> = (0..150).map(|i| format!("builtin_mod_{i}")).collect();
    let mut i = 200;
    let mut m = 0;
    while i + 120 < text.len() {
        let (s, e) = (text[i] - base, text[i + 100] - base);
        let owners = if m % 17 == 0 {
            format!("{} {}", mods[m % 150], mods[(m + 1) % 150])
        } else {
            mods[m % 150].clone()
        };
        out += &format!(".text {s:08x}-{e:08x} {owners}\n");
        n += 1;
        m += 1;
        i += 100 + 17 + (m % 40);
    }
    if let Some(db) = anchor_data {
        out += ".data 00000000-00000000 = _sdata\n";
        let mut i = 0;
        for md in &mods {
            if i + 20 >= data.len() || data[i] < db {
                i += 20;
                continue;
            }
            out += &format!(
                ".data {:08x}-{:08x} {md}\n",
                data[i] - db,
                data[i + 10] - db
            );
            n += 1;
            i += 20;
        }
    }
    (out, n)
}

pub fn bench_modules(copy: &Path, tmp: &Path) {
    let mut rows = Vec::new();
    let kallsyms = std::fs::read(copy).unwrap();
    let (ranges, nranges) = synthetic_ranges(&kallsyms);
    let rpath = tmp.join("modules.builtin.ranges");
    std::fs::write(&rpath, &ranges).unwrap();

    // Alternate the two opens so that both see the same machine state.
    let mut plain = Vec::new();
    let mut with = Vec::new();
    for i in 0..40 {
        // Alternate which goes first: the first open after a free can reuse
        // its pages and fault less.
        if i % 2 == 0 {
            plain.push(time(1, || Guard(open_table(copy))));
            with.push(time(1, || Guard(open_table_with(copy, Some(&rpath)))));
        } else {
            with.push(time(1, || Guard(open_table_with(copy, Some(&rpath)))));
            plain.push(time(1, || Guard(open_table(copy))));
        }
    }
    let r = paired_ratio(&with, &plain);
    let (plain, with) = (median(plain), median(with));
    let ranges_label =
        format!("ksym_table_open with a modules.builtin.ranges of {nranges} ranges, 150 modules");
    let t = open_table_with(copy, Some(&rpath));
    let mut stats = ksym_table_stats {
        sz: std::mem::size_of::<ksym_table_stats>(),
        ..Default::default()
    };
    assert_eq!(unsafe { ksym_table_stats(t, &mut stats) }, 0);
    assert!(stats.flags & KSYM_STATS_BUILTIN_RANGES != 0);
    rows.push(row(
        "ksym_table_open, regular-file copy, no ranges",
        ms(plain),
        "1.00",
        "baseline",
    ));
    rows.push(row(
        format!(
            "ksym_table_open with a modules.builtin.ranges of {nranges} ranges, 150 modules ({} modules in the table)",
            stats.modules
        ),
        ms(with),
        format!("{r:.3}"),
        at_most(&ranges_label, r, 1.10, "without"),
    ));

    // Plain and qualified lookups of the same symbols.
    let mut rng = Rng(7);
    let mut plain_q: Vec<CString> = Vec::new();
    let mut qual_q: Vec<CString> = Vec::new();
    let mut names: Vec<(String, String)> = Vec::new();
    unsafe extern "C" fn take(s: *const ksym_symbol, ctx: *mut std::ffi::c_void) -> i32 {
        let v = &mut *(ctx as *mut Vec<(String, String)>);
        let s = &*s;
        v.push((
            CStr::from_ptr(s.module).to_string_lossy().into_owned(),
            CStr::from_ptr(s.name).to_string_lossy().into_owned(),
        ));
        0
    }
    unsafe {
        ksym_foreach_match(
            t,
            c"*`*".as_ptr(),
            Some(take),
            &mut names as *mut _ as *mut _,
        )
    };
    while plain_q.len() < 10_000 {
        let (m, n) = &names[(rng.next() % names.len() as u64) as usize];
        let q = CString::new(format!("{m}`{n}")).unwrap();
        let p = CString::new(n.as_str()).unwrap();
        let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
        if unsafe { ksym_lookup(t, q.as_ptr(), s.as_mut_ptr()) } == 0
            && unsafe { ksym_lookup(t, p.as_ptr(), s.as_mut_ptr()) } == 0
        {
            qual_q.push(q);
            plain_q.push(p);
        }
    }
    // Alternate batches of the two kinds, so that both see the same machine.
    let batch = |qs: &[*const c_char]| {
        let t0 = Instant::now();
        let mut acc = 0u64;
        let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
        for &p in qs {
            unsafe { ksym_lookup(t, p, s.as_mut_ptr()) };
            acc = acc.wrapping_add(unsafe { s.assume_init_ref() }.addr);
        }
        std::hint::black_box(acc);
        t0.elapsed().as_secs_f64() * 1e9 / qs.len() as f64
    };
    let pp: Vec<*const c_char> = plain_q.iter().map(|c| c.as_ptr()).collect();
    let qp: Vec<*const c_char> = qual_q.iter().map(|c| c.as_ptr()).collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..41 {
        a.push(batch(&pp));
        b.push(batch(&qp));
    }
    let r = paired_ratio(&b, &a);
    let (a, b) = (median(a), median(b));
    rows.push(row(
        format!("ksym_lookup name, {} names", plain_q.len()),
        format!("{a:.0} ns"),
        "1.00",
        "baseline",
    ));
    let label = "ksym_lookup module`name, the same symbols";
    rows.push(row(
        label,
        format!("{b:.0} ns"),
        format!("{r:.3}"),
        at_most(label, r, 1.05, "name"),
    ));
    unsafe { ksym_table_free(t) };
    print_table("module`symbol resolution and built-in modules", &rows);
}
