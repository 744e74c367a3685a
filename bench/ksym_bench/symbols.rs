//! The symbol rows: lookups by name, addresses to symbols, stacks, each
//! against its C baseline (bench/baselines.c) in the same run, batches of
//! the two alternating, and the table's memory.

use std::ffi::{c_char, CStr, CString};
use std::path::Path;

use ksym_capi::ffi::table::*;

use crate::baselines;
use crate::common::*;

/// Frames per stack of the stack rows (a deep kernel stack).
pub const FRAMES: usize = 32;

/// The queries: names that resolve (unique, or duplicates at one address)
/// and addresses inside symbols, picked at random from the file's lines.
pub struct Probes {
    pub names: Vec<CString>,
    pub addrs: Vec<u64>,
}

pub fn probes(t: *mut ksym_table, copy: &Path) -> Probes {
    let text = std::fs::read(copy).unwrap();
    let mut rng = Rng(42);
    let all: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .filter_map(|l| l.splitn(3, |&b| b == b' ').nth(2))
        .map(|n| n.split(|&b| b == b'\t').next().unwrap())
        .collect();
    let (mut names, mut addrs) = (Vec::new(), Vec::new());
    while names.len() < 10_000 {
        let n = all[(rng.next() % all.len() as u64) as usize];
        let c = CString::new(n).unwrap();
        let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
        if unsafe { ksym_lookup(t, c.as_ptr(), s.as_mut_ptr()) } == 0 {
            let s = unsafe { s.assume_init() };
            let mut out = std::mem::MaybeUninit::<ksym_symbol>::uninit();
            let mut off = 0u64;
            let a = s.addr + if s.size > 0 { rng.next() % s.size } else { 0 };
            if unsafe { ksym_symbolize(t, a, out.as_mut_ptr(), &mut off) } == 0 {
                addrs.push(a);
            }
            names.push(c);
        }
    }
    Probes { names, addrs }
}

/// Alternates `batches` passes of `base` and `ours` over the same items;
/// returns their median ns per item and the median of the per-pass ratios.
fn alternate(
    batches: usize,
    n: usize,
    mut base: impl FnMut() -> u64,
    mut ours: impl FnMut() -> u64,
) -> (f64, f64, f64) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..batches {
        a.push(per_item(1, n, &mut base));
        b.push(per_item(1, n, &mut ours));
    }
    (median(a.clone()), median(b.clone()), paired_ratio(&b, &a))
}

pub fn bench_symbols(copy: &Path) {
    let mut rows = Vec::new();
    let t = open_table(copy);
    let _g = Guard(t);
    let p = probes(t, copy);
    let parsed = baselines::parse(copy);
    let fnv = baselines::FnvTable::new(&parsed);
    let sorted = baselines::Sorted::new(&parsed);

    // Same answers: the baseline's address of each name, and the address
    // of the symbol each address falls in.
    for c in &p.names {
        let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
        assert_eq!(unsafe { ksym_lookup(t, c.as_ptr(), s.as_mut_ptr()) }, 0);
        let ours = unsafe { s.assume_init() }.addr;
        assert_eq!(fnv.lookup(c), ours, "{c:?}: FNV and ksym_lookup disagree");
    }
    for &a in &p.addrs {
        let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
        let mut off = 0;
        assert_eq!(unsafe { ksym_symbolize(t, a, s.as_mut_ptr(), &mut off) }, 0);
        let ours = unsafe { s.assume_init() }.addr;
        assert_eq!(sorted.find(a).map(|x| x.0), Some(ours), "{a:#x}");
    }

    let ptrs: Vec<*const c_char> = p.names.iter().map(|c| c.as_ptr()).collect();
    let (fnv_ns, lookup_ns, r) = alternate(
        31,
        ptrs.len(),
        || {
            let mut acc = 0u64;
            for &q in &ptrs {
                acc = acc.wrapping_add(fnv.lookup(unsafe { CStr::from_ptr(q) }));
            }
            acc
        },
        || {
            let mut acc = 0u64;
            let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
            for &q in &ptrs {
                unsafe { ksym_lookup(t, q, s.as_mut_ptr()) };
                acc = acc.wrapping_add(unsafe { s.assume_init_ref() }.addr);
            }
            acc
        },
    );
    rows.push(row(
        format!(
            "baseline: FNV-1a open-addressing table, {} random names (the same answers as ksym_lookup's, checked)",
            ptrs.len()
        ),
        format!("{fnv_ns:.0} ns"),
        "1.00",
        "baseline",
    ));
    // The row names of the lookup and symbolize rows are those of earlier
    // versions of this bench (make bench-compare matches rows by name).
    let label = format!("ksym_lookup, {} random unique names", ptrs.len());
    let label = label.as_str();
    rows.push(row(
        label,
        format!("{lookup_ns:.0} ns"),
        format!("{r:.2}"),
        at_most(label, r, 1.30, "FNV"),
    ));

    let (bs_ns, sym_ns, r) = alternate(
        31,
        p.addrs.len(),
        || {
            let mut acc = 0u64;
            for &a in &p.addrs {
                acc = acc.wrapping_add(sorted.find(a).map_or(0, |x| x.1 as u64));
            }
            acc
        },
        || {
            let mut acc = 0u64;
            let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
            let mut off = 0u64;
            for &a in &p.addrs {
                unsafe { ksym_symbolize(t, a, s.as_mut_ptr(), &mut off) };
                acc = acc.wrapping_add(off);
            }
            acc
        },
    );
    rows.push(row(
        format!(
            "baseline: binary search over the sorted addresses, {} addresses inside symbols (the same answers as ksym_symbolize's, checked)",
            p.addrs.len()
        ),
        format!("{bs_ns:.0} ns"),
        "1.00",
        "baseline",
    ));
    let label = format!("ksym_symbolize, {} addresses inside symbols", p.addrs.len());
    let label = label.as_str();
    rows.push(row(
        label,
        format!("{sym_ns:.0} ns"),
        format!("{r:.2}"),
        at_most(label, r, 1.30, "binary search"),
    ));

    // Stacks of FRAMES addresses (the probes, in their random order: no
    // two frames near each other, the case without locality), one call per
    // stack, against one ksym_symbolize per frame.
    let stacks: Vec<&[u64]> = p.addrs.chunks_exact(FRAMES).collect();
    let n_frames = stacks.len() * FRAMES;
    let mut out = vec![
        ksym_symbol {
            addr: 0,
            size: 0,
            name: std::ptr::null(),
            module: std::ptr::null(),
            r#type: 0,
            reserved: [0; 3],
            flags: 0,
        };
        FRAMES
    ];
    let (mut offs, mut errs) = (vec![0u64; FRAMES], vec![0i32; FRAMES]);
    // Same answers, frame by frame.
    for st in &stacks {
        let found = unsafe {
            ksym_symbolize_stack(
                t,
                st.as_ptr(),
                FRAMES,
                out.as_mut_ptr(),
                offs.as_mut_ptr(),
                errs.as_mut_ptr(),
            )
        };
        assert_eq!(found, FRAMES as i32);
        for (i, &a) in st.iter().enumerate() {
            let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
            let mut off = 0;
            assert_eq!(unsafe { ksym_symbolize(t, a, s.as_mut_ptr(), &mut off) }, 0);
            let s = unsafe { s.assume_init() };
            assert_eq!(
                (s.addr, s.name, s.size, off),
                (out[i].addr, out[i].name, out[i].size, offs[i])
            );
        }
    }
    let (one_ns, stack_ns, r) = alternate(
        31,
        n_frames,
        || {
            let mut acc = 0u64;
            let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
            let mut off = 0u64;
            for st in &stacks {
                for &a in st.iter() {
                    unsafe { ksym_symbolize(t, a, s.as_mut_ptr(), &mut off) };
                    acc = acc.wrapping_add(off);
                }
            }
            acc
        },
        || {
            let mut acc = 0u64;
            for st in &stacks {
                unsafe {
                    ksym_symbolize_stack(
                        t,
                        st.as_ptr(),
                        FRAMES,
                        out.as_mut_ptr(),
                        offs.as_mut_ptr(),
                        errs.as_mut_ptr(),
                    )
                };
                acc = acc.wrapping_add(offs[FRAMES - 1]);
            }
            acc
        },
    );
    rows.push(row(
        format!(
            "ksym_symbolize, frame by frame, {} stacks of {FRAMES} random addresses",
            stacks.len()
        ),
        format!("{one_ns:.0} ns"),
        "1.00",
        "baseline",
    ));
    let label = format!("ksym_symbolize_stack, one call per {FRAMES}-frame stack, per frame (answers checked equal)");
    rows.push(row(
        &label,
        format!("{stack_ns:.0} ns"),
        format!("{r:.2}"),
        at_most(&label, r, 0.30, "ksym_symbolize"),
    ));

    // blazesym: its kernel source parses kallsyms on first use and caches it.
    let src = blazesym::symbolize::source::Source::Kernel(blazesym::symbolize::source::Kernel {
        kallsyms: blazesym::MaybeDefault::Some(copy.to_path_buf()),
        vmlinux: blazesym::MaybeDefault::None,
        kaslr_offset: Some(0),
        debug_syms: false,
        ..Default::default()
    });
    let blaze_open = time(7, || {
        let s = blazesym::symbolize::Symbolizer::new();
        let r = s
            .symbolize_single(&src, blazesym::symbolize::Input::AbsAddr(p.addrs[0]))
            .is_ok();
        (s, r)
    });
    let symbolizer = blazesym::symbolize::Symbolizer::new();
    let _ = symbolizer.symbolize(&src, blazesym::symbolize::Input::AbsAddr(&p.addrs[..1]));
    let blaze_ns = per_item(31, p.addrs.len(), || {
        let r = symbolizer
            .symbolize(&src, blazesym::symbolize::Input::AbsAddr(&p.addrs))
            .unwrap();
        r.len() as u64
    });
    rows.push(row(
        "blazesym: new Symbolizer + first kernel symbolization (parses the copy)",
        ms(blaze_open),
        "",
        "",
    ));
    rows.push(row(
        "blazesym symbolize, same addresses (batch, warm)",
        format!("{blaze_ns:.0} ns"),
        format!("{:.2}", blaze_ns / bs_ns),
        "",
    ));

    let mut stats = ksym_table_stats {
        sz: std::mem::size_of::<ksym_table_stats>(),
        ..Default::default()
    };
    assert_eq!(unsafe { ksym_table_stats(t, &mut stats) }, 0);
    let mem = stats.memory_bytes as f64;
    let r = mem / stats.file_bytes as f64;
    let label = "table memory (buffer + entries + index)";
    rows.push(row(
        label,
        format!("{:.1} MB", mem / 1e6),
        format!("{r:.2} × file"),
        at_most(label, r, 2.0, "file"),
    ));
    print_table("Kernel symbol table: lookups and addresses", &rows);
}
