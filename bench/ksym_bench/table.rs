//! The kernel symbol table section.

use std::ffi::{c_char, CString};
use std::path::Path;

use ksym_capi::ffi::table::*;

use crate::common::*;

pub fn bench_table(live: &Path, copy: &Path) {
    let mut rows = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    let size = std::fs::metadata(copy).unwrap().len() as f64;
    let lines = std::fs::read(copy)
        .unwrap()
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    println!(
        "\nkallsyms: {} ({:.1} MB, {lines} lines); regular-file copy: {}",
        live.display(),
        size / 1e6,
        copy.display()
    );

    // /proc: the plain read is the floor, measured right before each open.
    let (mut read_proc, mut open_proc, mut open_proc_warm) = (vec![], vec![], vec![]);
    for _ in 0..21 {
        read_proc.push(time(1, || plain_read(live, &mut buf)));
        open_proc.push(time(1, || Guard(open_table(live))));
        open_proc_warm.push(warm_memory(|| time(1, || Guard(open_table(live)))));
    }
    let scanf_proc = time(5, || fscanf_loop(live));
    let read_med = median(read_proc.clone());
    rows.push(row(
        format!("plain read() of {}", live.display()),
        ms(read_med),
        "1.00",
        "baseline",
    ));
    rows.push(row(
        "fscanf(\"%llx %c %499s%*[^\\n]\") loop (libbpf's way)",
        ms(scanf_proc),
        format!("{:.2}", scanf_proc / read_med),
        "",
    ));
    for (what, v) in [
        ("fresh pages (a process's first open)", &open_proc),
        ("memory reused (opens in a loop)", &open_proc_warm),
    ] {
        let r = paired_ratio(v, &read_proc);
        rows.push(row(
            format!("ksym_table_open from {}, {what}", live.display()),
            ms(median(v.clone())),
            format!("{r:.3}"),
            format!("≤ 1.10 × read: {}", verdict(r <= 1.10)),
        ));
    }

    snapshot_rows(live, &mut rows, &mut buf);

    // Regular file.
    let runs = 31;
    let read_file = time(runs, || plain_read(copy, &mut buf));
    let scanf_file = time(7, || fscanf_loop(copy));
    let open_file = time(runs, || Guard(open_table(copy)));
    let open_file_warm = warm_memory(|| time(runs, || Guard(open_table(copy))));
    let gbs = size / open_file / 1e9;
    let gbs_warm = size / open_file_warm / 1e9;
    rows.push(row(
        "plain read() of the regular-file copy",
        ms(read_file),
        "1.00",
        "baseline",
    ));
    rows.push(row(
        "fscanf loop on the regular-file copy",
        ms(scanf_file),
        format!("{:.2}", scanf_file / read_file),
        "",
    ));
    rows.push(row(
        "ksym_table_open from the regular-file copy, fresh pages",
        format!("{} ({gbs:.2} GB/s)", ms(open_file)),
        format!("{:.2}", open_file / read_file),
        format!("≥ 1 GB/s: {}", verdict(gbs >= 1.0)),
    ));
    rows.push(row(
        "ksym_table_open from the regular-file copy, memory reused",
        format!("{} ({gbs_warm:.2} GB/s)", ms(open_file_warm)),
        format!("{:.2}", open_file_warm / read_file),
        format!("≥ 1 GB/s: {}", verdict(gbs_warm >= 1.0)),
    ));

    // blazesym: its kernel source parses kallsyms on first use and caches it.
    let src = blazesym::symbolize::source::Source::Kernel(blazesym::symbolize::source::Kernel {
        kallsyms: blazesym::MaybeDefault::Some(copy.to_path_buf()),
        vmlinux: blazesym::MaybeDefault::None,
        kaslr_offset: Some(0),
        debug_syms: false,
        ..Default::default()
    });

    let t = open_table(copy);
    let mut probe_addrs = Vec::new();
    let mut names: Vec<CString> = Vec::new();
    {
        // Names that resolve to one address (ambiguous names are an error path).
        let text = std::fs::read(copy).unwrap();
        let mut rng = Rng(42);
        let all: Vec<&[u8]> = text
            .split(|&b| b == b'\n')
            .filter_map(|l| l.splitn(3, |&b| b == b' ').nth(2))
            .map(|n| n.split(|&b| b == b'\t').next().unwrap())
            .collect();
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
                    probe_addrs.push(a);
                }
                names.push(c);
            }
        }
    }
    let ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
    let lookup_ns = per_item(31, ptrs.len(), || {
        let mut acc = 0u64;
        let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
        for &p in &ptrs {
            unsafe { ksym_lookup(t, p, s.as_mut_ptr()) };
            acc = acc.wrapping_add(unsafe { s.assume_init_ref() }.addr);
        }
        acc
    });
    let sym_ns = per_item(31, probe_addrs.len(), || {
        let mut acc = 0u64;
        let mut s = std::mem::MaybeUninit::<ksym_symbol>::uninit();
        let mut off = 0u64;
        for &a in &probe_addrs {
            unsafe { ksym_symbolize(t, a, s.as_mut_ptr(), &mut off) };
            acc = acc.wrapping_add(off);
        }
        acc
    });
    let mut stats = ksym_table_stats {
        sz: std::mem::size_of::<ksym_table_stats>(),
        ..Default::default()
    };
    assert_eq!(unsafe { ksym_table_stats(t, &mut stats) }, 0);
    unsafe { ksym_table_free(t) };

    let blaze_open = time(7, || {
        let s = blazesym::symbolize::Symbolizer::new();
        let r = s
            .symbolize_single(&src, blazesym::symbolize::Input::AbsAddr(probe_addrs[0]))
            .is_ok();
        (s, r)
    });
    let symbolizer = blazesym::symbolize::Symbolizer::new();
    let _ = symbolizer.symbolize(&src, blazesym::symbolize::Input::AbsAddr(&probe_addrs[..1]));
    let blaze_ns = per_item(31, probe_addrs.len(), || {
        let r = symbolizer
            .symbolize(&src, blazesym::symbolize::Input::AbsAddr(&probe_addrs))
            .unwrap();
        r.len() as u64
    });

    rows.push(row(
        "blazesym: new Symbolizer + first kernel symbolization (parses the copy)",
        ms(blaze_open),
        format!("{:.2}", blaze_open / read_file),
        "",
    ));
    rows.push(row(
        format!("ksym_lookup, {} random unique names", ptrs.len()),
        format!("{lookup_ns:.0} ns"),
        "",
        format!("≤ 150 ns: {}", verdict(lookup_ns <= 150.0)),
    ));
    rows.push(row(
        format!(
            "ksym_symbolize, {} addresses inside symbols",
            probe_addrs.len()
        ),
        format!("{sym_ns:.0} ns"),
        "",
        format!("≤ 100 ns: {}", verdict(sym_ns <= 100.0)),
    ));
    rows.push(row(
        "blazesym symbolize, same addresses (batch, warm)",
        format!("{blaze_ns:.0} ns"),
        format!("{:.2}", blaze_ns / sym_ns),
        "",
    ));
    let mem = stats.memory_bytes as f64;
    rows.push(row(
        "table memory (buffer + entries + index)",
        format!("{:.1} MB", mem / 1e6),
        format!("{:.2} × file", mem / stats.file_bytes as f64),
        format!(
            "≤ 2 × file: {}",
            verdict(mem <= 2.0 * stats.file_bytes as f64)
        ),
    ));
    print_table("Kernel symbol table", &rows);
}

/// The snapshot (issue 13): the default source's table, opened with a
/// snapshot being written (a boot's first open) and from the snapshot (every
/// later one), each round after a plain read of the source.
fn snapshot_rows(live: &Path, rows: &mut Vec<Row>, buf: &mut [u8]) {
    let dir = std::env::temp_dir().join(format!("ksym-bench-snap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cdir = CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let opts = ksym_table_opts {
        snapshot_dir: cdir.as_ptr(),
        ..Default::default()
    };
    let open = || {
        let t = unsafe { ksym_table_open(&opts) };
        assert!(!t.is_null());
        let mut st = ksym_table_stats {
            sz: std::mem::size_of::<ksym_table_stats>(),
            ..unsafe { std::mem::zeroed() }
        };
        unsafe { ksym_table_stats(t, &mut st) };
        (Guard(t), st.flags)
    };
    let (_, flags) = open();
    if flags & (KSYM_STATS_SNAPSHOT | KSYM_STATS_SNAPSHOT_WRITTEN) == 0 {
        rows.push(row(
            "table snapshot: not possible here (needs root and real addresses)",
            "",
            "",
            "",
        ));
        return;
    }
    let files = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect()
    };
    let (mut read, mut first, mut second) = (vec![], vec![], vec![]);
    let mut size = 0;
    for _ in 0..21 {
        for f in files() {
            std::fs::remove_file(f).unwrap();
        }
        read.push(time(1, || plain_read(live, buf)));
        first.push(time(1, || {
            let (g, f) = open();
            assert!(f & KSYM_STATS_SNAPSHOT_WRITTEN != 0);
            g
        }));
        size = files()
            .iter()
            .map(|f| std::fs::metadata(f).unwrap().len())
            .sum::<u64>();
        second.push(time(1, || {
            let (g, f) = open();
            assert!(f & KSYM_STATS_SNAPSHOT != 0);
            g
        }));
    }
    let r1 = paired_ratio(&first, &read);
    let r2 = paired_ratio(&second, &read);
    rows.push(row(
        "ksym_table_open of the running kernel, first of a boot (writes the snapshot)",
        ms(median(first.clone())),
        format!("{r1:.3}"),
        format!("≤ 1.10 × read: {}", verdict(r1 <= 1.10)),
    ));
    rows.push(row(
        format!(
            "ksym_table_open of the running kernel from the snapshot ({:.1} MB)",
            size as f64 / 1e6
        ),
        ms(median(second.clone())),
        format!("{r2:.4}"),
        format!("≤ 0.02 × read: {}", verdict(r2 <= 0.02)),
    ));
    let _ = std::fs::remove_dir_all(&dir);
}
