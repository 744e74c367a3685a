//! `make bench`: one table per job, every row measured in the same run.
//!
//! Machines are noisy: every figure is a median over repeated runs, and the
//! targets are checked as ratios against a baseline measured right beside
//! them (the plain read of the same file), never as absolute times.
//!
//! Usage: `cargo bench --bench ksym_bench [-- SECTION...]` with sections
//! `table` (default: all). Set `KSYM_BENCH_KALLSYMS` to use another file
//! than /proc/kallsyms.

use std::ffi::{c_char, CStr, CString};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ksym::ffi::table::*;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median wall time of `runs` calls of `f`, in seconds; `f` returns something
/// to keep alive until after the clock stops (dropped untimed).
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut v = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        let keep = f();
        v.push(t0.elapsed().as_secs_f64());
        drop(keep);
    }
    median(v)
}

/// Median per-item time in nanoseconds of `batches` passes of `f` over `n` items.
fn per_item(batches: usize, n: usize, mut f: impl FnMut() -> u64) -> f64 {
    let mut v = Vec::with_capacity(batches);
    let mut sink = 0u64;
    for _ in 0..batches {
        let t0 = Instant::now();
        sink = sink.wrapping_add(f());
        v.push(t0.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    std::hint::black_box(sink);
    median(v)
}

fn plain_read(path: &Path, buf: &mut [u8]) -> usize {
    let mut f = File::open(path).expect("open");
    let mut total = 0;
    loop {
        match f.read(buf) {
            Ok(0) => return total,
            Ok(n) => total += n,
            Err(e) => panic!("read {}: {e}", path.display()),
        }
    }
}

/// libbpf's technique (`libbpf_kallsyms_parse`): fscanf per line.
fn fscanf_loop(path: &Path) -> usize {
    let p = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut n = 0;
    unsafe {
        let f = libc::fopen(p.as_ptr(), c"r".as_ptr());
        assert!(!f.is_null());
        let mut addr: libc::c_ulonglong = 0;
        let mut ty: c_char = 0;
        let mut name = [0 as c_char; 500];
        loop {
            let r = libc::fscanf(
                f,
                c"%llx %c %499s%*[^\n]\n".as_ptr(),
                &mut addr as *mut _,
                &mut ty as *mut _,
                name.as_mut_ptr(),
            );
            if r != 3 {
                break;
            }
            n += 1;
        }
        libc::fclose(f);
    }
    n
}

fn open_table(path: &Path) -> *mut ksym_table {
    let p = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let opts = ksym_table_opts {
        kallsyms_path: p.as_ptr(),
        builtin_ranges_path: c"".as_ptr(),
        ..Default::default()
    };
    let t = unsafe { ksym_table_open(&opts) };
    if t.is_null() {
        let msg = unsafe { CStr::from_ptr(ksym::ffi::error::ksym_last_error_message()) };
        panic!(
            "ksym_table_open({}): {}",
            path.display(),
            msg.to_string_lossy()
        );
    }
    t
}

struct Row {
    what: String,
    value: String,
    ratio: String,
    target: String,
}

fn row(
    what: impl Into<String>,
    value: impl Into<String>,
    ratio: impl Into<String>,
    target: impl Into<String>,
) -> Row {
    Row {
        what: what.into(),
        value: value.into(),
        ratio: ratio.into(),
        target: target.into(),
    }
}

fn print_table(title: &str, rows: &[Row]) {
    println!("\n### {title}\n");
    println!("| measurement | median | ratio | target |");
    println!("|---|---:|---:|---|");
    for r in rows {
        println!("| {} | {} | {} | {} |", r.what, r.value, r.ratio, r.target);
    }
}

fn ms(s: f64) -> String {
    format!("{:.2} ms", s * 1e3)
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// Simple deterministic generator (no dependency).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}

fn readable_kallsyms(path: &Path) -> bool {
    let Ok(mut f) = File::open(path) else {
        return false;
    };
    let mut b = vec![0u8; 4096];
    let Ok(n) = f.read(&mut b) else { return false };
    b[..n]
        .split(|&c| c == b'\n')
        .take(20)
        .any(|l| l.iter().take(16).any(|&c| c != b'0' && c != b' ') && !l.is_empty())
}

fn bench_table(live: &Path, copy: &Path) {
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

    // /proc: the plain read is the floor.
    let runs_proc = 11;
    let read_proc = time(runs_proc, || plain_read(live, &mut buf));
    let scanf_proc = time(5, || fscanf_loop(live));
    let open_proc = time(runs_proc, || Guard(open_table(live)));
    rows.push(row(
        format!("plain read() of {}", live.display()),
        ms(read_proc),
        "1.00",
        "baseline",
    ));
    rows.push(row(
        "fscanf(\"%llx %c %499s%*[^\\n]\") loop (libbpf's way)",
        ms(scanf_proc),
        format!("{:.2}", scanf_proc / read_proc),
        "",
    ));
    let r = open_proc / read_proc;
    rows.push(row(
        format!("ksym_table_open from {}", live.display()),
        ms(open_proc),
        format!("{r:.3}"),
        format!("≤ 1.10 × read: {}", verdict(r <= 1.10)),
    ));

    // Regular file.
    let runs = 31;
    let read_file = time(runs, || plain_read(copy, &mut buf));
    let scanf_file = time(7, || fscanf_loop(copy));
    let open_file = time(runs, || Guard(open_table(copy)));
    let gbs = size / open_file / 1e9;
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
        "ksym_table_open from the regular-file copy",
        format!("{} ({gbs:.2} GB/s)", ms(open_file)),
        format!("{:.2}", open_file / read_file),
        format!("≥ 1 GB/s: {}", verdict(gbs >= 1.0)),
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

struct Guard(*mut ksym_table);
impl Drop for Guard {
    fn drop(&mut self) {
        unsafe { ksym_table_free(self.0) }
    }
}

fn main() {
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
        let snap =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("build/testdata/vm-6.18/kallsyms");
        (snap, Some("/proc/kallsyms hides addresses here: using the bundled vm-6.18 snapshot for every row"))
    };
    let tmp = std::env::temp_dir().join(format!("ksym-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let copy = tmp.join("kallsyms");
    std::fs::write(&copy, std::fs::read(&live).expect("read kallsyms")).unwrap();
    let uname = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!(
        "libksym {} bench: kernel {}, {} CPUs",
        env!("CARGO_PKG_VERSION"),
        uname.trim(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if let Some(n) = note {
        println!("note: {n}");
    }
    if want("table") {
        bench_table(&live, &copy);
    }
    std::fs::remove_dir_all(&tmp).ok();
}
