//! `make bench`: one table per job, every row measured in the same run.
//!
//! Machines are noisy: every figure is a median over repeated runs, and the
//! targets are checked as ratios against a baseline measured right beside
//! them (the plain read of the same file), never as absolute times. Where
//! the rounds alternate baseline and measurement, the ratio is the median
//! of the per-round ratios, so that the machine's drifts cancel out.
//!
//! Usage: `cargo bench -p ksym-bench --bench ksym_bench [-- SECTION...]` with sections
//! `table` (opens, then `symbols`), `symbols` (lookups, addresses, stacks),
//! `modules`, `resolve`, `bpf`, `btf` (default: all). Set `KSYM_BENCH_KALLSYMS` to use another file
//! than /proc/kallsyms.

mod baselines;
mod bpf;
mod btf;
mod common;
mod modules;
mod resolve;
mod symbols;
mod table;

use std::path::PathBuf;

use common::*;

fn main() {
    // Every large allocation gets fresh pages, as in a process that opens
    // the table once: without this, glibc's adaptive mmap threshold lets a
    // loop of opens reuse the previous table's already-faulted memory, and
    // the result depends on what else was allocated in between. Rows marked
    // "memory reused" measure the other extreme on purpose (warm_memory).
    fresh_memory();
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let want = |s: &str| args.is_empty() || args.iter().any(|a| a == s);
    let live = std::env::var_os("KSYM_BENCH_KALLSYMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/proc/kallsyms"));
    let (live, note) = if readable_kallsyms(&live) {
        (live, None)
    } else {
        let snap = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .join("build/testdata/vm-6.18/kallsyms");
        (snap, Some("/proc/kallsyms hides addresses here: using the bundled vm-6.18 snapshot for every row"))
    };
    let tmp = std::env::temp_dir().join(format!("ksym-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let copy = tmp.join("kallsyms");
    std::fs::write(&copy, std::fs::read(&live).expect("read kallsyms")).unwrap();
    let uname = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!(
        "libksym {} bench: kernel {}, {} CPUs",
        // The library's version (ksym_version()), not this bench package's.
        unsafe { std::ffi::CStr::from_ptr(ksym_capi::ffi::version::ksym_version()) }
            .to_string_lossy(),
        uname.trim(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if let Some(n) = note {
        println!("note: {n}");
    }
    if want("table") {
        table::bench_table(&live, &copy);
    }
    if want("table") || want("symbols") {
        symbols::bench_symbols(&copy);
    }
    if want("modules") {
        modules::bench_modules(&copy, &tmp);
    }
    if want("resolve") {
        resolve::bench_resolve(&live, &copy);
    }
    if want("bpf") {
        bpf::bench_bpf(&live);
    }
    if want("btf") {
        btf::bench_btf();
    }
    std::fs::remove_dir_all(&tmp).ok();
    print_verdicts();
}
