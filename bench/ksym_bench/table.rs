//! The kernel symbol table section.

use std::ffi::CString;
use std::path::Path;

use ksym_capi::ffi::table::*;

use crate::baselines;
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
        let label = format!("ksym_table_open from {}, {what}", live.display());
        rows.push(row(
            &label,
            ms(median(v.clone())),
            format!("{r:.3}"),
            at_most(&label, r, 1.10, "read"),
        ));
    }

    snapshot_rows(live, &mut rows, &mut buf);

    // Regular file: the naive C parse is the floor (no index, one thread);
    // the two alternate, round by round.
    let runs = 31;
    let read_file = time(runs, || plain_read(copy, &mut buf));
    let scanf_file = time(7, || fscanf_loop(copy));
    let (mut naive, mut open_file, mut open_file_warm) = (vec![], vec![], vec![]);
    for _ in 0..runs {
        naive.push(time(1, || baselines::parse(copy)));
        open_file.push(time(1, || Guard(open_table(copy))));
        open_file_warm.push(warm_memory(|| time(1, || Guard(open_table(copy)))));
    }
    let naive_med = median(naive.clone());
    rows.push(row(
        "baseline: naive C parse of the regular-file copy (one thread, no index; bench/baselines.c)",
        ms(naive_med),
        "1.00",
        "baseline",
    ));
    rows.push(row(
        "plain read() of the regular-file copy",
        ms(read_file),
        format!("{:.2}", read_file / naive_med),
        "",
    ));
    rows.push(row(
        "fscanf loop on the regular-file copy",
        ms(scanf_file),
        format!("{:.2}", scanf_file / naive_med),
        "",
    ));
    for (what, v) in [
        ("fresh pages", &open_file),
        ("memory reused", &open_file_warm),
    ] {
        let m = median(v.clone());
        let r = paired_ratio(v, &naive);
        let label =
            format!("ksym_table_open from the regular-file copy (read, parse, index), {what}");
        rows.push(row(
            &label,
            format!("{} ({:.2} GB/s)", ms(m), size / m / 1e9),
            format!("{r:.3}"),
            at_most(&label, r, 1.0, "naive C parse"),
        ));
    }
    print_table("Kernel symbol table: opens", &rows);
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
    // Its snapshot may still be being written by the library's thread:
    // finished before the loop removes the files, or the loop's first open
    // would wait for it and then load it instead of writing one.
    ksym::internals::table::wait_for_snapshot_writers();
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
        // The first open returns while a thread of the library finishes
        // the snapshot: wait for it (untimed), as another process's open
        // would find it whole.
        ksym::internals::table::wait_for_snapshot_writers();
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
    let label = "ksym_table_open of the running kernel, first of a boot (writes the snapshot)";
    rows.push(row(
        label,
        ms(median(first.clone())),
        format!("{r1:.3}"),
        at_most(label, r1, 1.10, "read"),
    ));
    let label = format!(
        "ksym_table_open of the running kernel from the snapshot ({:.1} MB)",
        size as f64 / 1e6
    );
    rows.push(row(
        &label,
        short(median(second.clone())),
        format!("{r2:.4}"),
        at_most(&label, r2, 0.01, "read"),
    ));
    let _ = std::fs::remove_dir_all(&dir);
}
