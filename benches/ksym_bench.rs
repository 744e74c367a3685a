//! `make bench`: one table per job, every row measured in the same run.
//!
//! Machines are noisy: every figure is a median over repeated runs, and the
//! targets are checked as ratios against a baseline measured right beside
//! them (the plain read of the same file), never as absolute times. Where
//! the rounds alternate baseline and measurement, the ratio is the median
//! of the per-round ratios, so that the machine's drifts cancel out.
//!
//! Usage: `cargo bench --bench ksym_bench [-- SECTION...]` with sections
//! `table`, `modules`, `resolve`, `bpf` (default: all). Set `KSYM_BENCH_KALLSYMS` to use another file
//! than /proc/kallsyms.

use std::ffi::{c_char, CStr, CString};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ksym::ffi::bpf::*;
use ksym::ffi::resolve::*;
use ksym::ffi::table::*;

/// Counts the bytes allocated, to report the peak extra memory of a call.
struct Counting;
static CURRENT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn note_alloc(n: usize) {
    use std::sync::atomic::Ordering::Relaxed;
    let now = CURRENT.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(now, Relaxed);
}

unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        note_alloc(l.size());
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        note_alloc(l.size());
        unsafe { std::alloc::System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        CURRENT.fetch_sub(l.size(), std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, n: usize) -> *mut u8 {
        CURRENT.fetch_sub(l.size(), std::sync::atomic::Ordering::Relaxed);
        note_alloc(n);
        unsafe { std::alloc::System.realloc(p, l, n) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak bytes allocated above the level at the start, while `f` runs.
fn peak_extra<T>(f: impl FnOnce() -> T) -> (T, usize) {
    use std::sync::atomic::Ordering::Relaxed;
    let base = CURRENT.load(Relaxed);
    PEAK.store(base, Relaxed);
    let r = f();
    (r, PEAK.load(Relaxed) - base)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median of the per-round ratios `a[i] / base[i]`: each pair is measured
/// back to back, so that the machine's slow drifts cancel out.
fn paired_ratio(a: &[f64], base: &[f64]) -> f64 {
    median(a.iter().zip(base).map(|(x, b)| x / b).collect())
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
    open_table_with(path, None)
}

fn open_table_with(path: &Path, ranges: Option<&Path>) -> *mut ksym_table {
    let p = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let r = ranges.map(|r| CString::new(r.as_os_str().as_encoded_bytes()).unwrap());
    let opts = ksym_table_opts {
        kallsyms_path: p.as_ptr(),
        builtin_ranges_path: r.as_ref().map_or(c"".as_ptr(), |r| r.as_ptr()),
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

/// Milliseconds, or microseconds below one millisecond.
fn short(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else {
        ms(s)
    }
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

/// A modules.builtin.ranges for `kallsyms` shaped like a distro kernel's:
/// 150 built-in modules, each owning a few runs of core text symbols (some
/// runs shared by two modules), plus a data range each where the kernel has
/// a `_sdata` anchor. Returns the text and the number of ranges.
fn synthetic_ranges(kallsyms: &[u8]) -> (String, usize) {
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

fn bench_modules(copy: &Path, tmp: &Path) {
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
        format!("≤ 1.10 × without: {}", verdict(r <= 1.10)),
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
    let (a, b) = (median(a), median(b));
    rows.push(row(
        format!("ksym_lookup name, {} names", plain_q.len()),
        format!("{a:.0} ns"),
        "1.00",
        "≤ 150 ns",
    ));
    rows.push(row(
        "ksym_lookup module`name, the same symbols",
        format!("{b:.0} ns"),
        format!("{:.2}", b / a),
        format!("≤ 150 ns: {}", verdict(b <= 150.0)),
    ));
    unsafe { ksym_table_free(t) };
    print_table("module`symbol resolution and built-in modules", &rows);
}

/// libbpf's way for externs: fscanf every line, and compare the name with
/// every wanted name (`find_extern_by_name` is a linear scan).
fn libbpf_style(path: &Path, wanted: &[CString]) -> usize {
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

fn bench_resolve(live: &Path, copy: &Path) {
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
            unsafe { CStr::from_ptr(ksym::ffi::error::ksym_last_error_message()) }
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
        rows.push(row(
            format!("ksym_resolve, {n} name(s), cold (one streaming pass)"),
            ms(median(v)),
            format!("{r:.3}"),
            format!("≤ 1.05 × read: {}", verdict(r <= 1.05)),
        ));
    }
    let ((), peak) = peak_extra(|| run(1000));
    rows.push(row(
        "peak extra memory of ksym_resolve, 1000 names",
        format!("{} KiB", peak / 1024),
        "",
        format!("< 1 MiB: {}", verdict(peak < 1 << 20)),
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
        format!("≤ 100 ns: {}", verdict(warm <= 100.0)),
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

fn last_error() -> String {
    unsafe { CStr::from_ptr(ksym::ffi::error::ksym_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// Closes a BPF object when dropped.
struct ObjGuard(*mut ksym_bpf_object);
impl Drop for ObjGuard {
    fn drop(&mut self) {
        unsafe { ksym_bpf_object_free(self.0) }
    }
}

fn bpf_open(path: &CStr) -> ObjGuard {
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

type Ptr = *mut libc::c_void;
type OpenFile = unsafe extern "C" fn(*const c_char, *const libc::c_void) -> Ptr;
type Close = unsafe extern "C" fn(Ptr);
type NextProgram = unsafe extern "C" fn(*const libc::c_void, Ptr) -> Ptr;
type SetPrint = unsafe extern "C" fn(*const libc::c_void) -> *const libc::c_void;

/// libbpf, if installed, through dlopen: the bench neither links nor needs it.
struct Libbpf {
    open_file: OpenFile,
    close: Close,
    next_program: NextProgram,
}

fn libbpf() -> Option<Libbpf> {
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

fn bench_bpf(live: &Path) {
    let mut rows = Vec::new();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/bpf/many_aliases.bpf.o");
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
    rows.push(row(
        "ksym_bpf_object_resolve_ksyms, no cache (one streaming pass over kallsyms)",
        ms(median(res)),
        format!("{r:.3}"),
        format!("≤ 1.05 × read: {}", verdict(r <= 1.05)),
    ));
    rows.push(row(
        format!("ksym_bpf_object_relocate, all {nprogs} programs"),
        short(median(rel.clone())),
        format!("{:.4}", ratio(&rel)),
        "",
    ));
    let r = ratio(&all);
    rows.push(row(
        "open + resolve_ksyms + relocate, end to end",
        ms(median(all)),
        format!("{r:.3}"),
        format!("≤ 1.10 × read: {}", verdict(r <= 1.10)),
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
            "one copy: {}; a copy per program would add {:.1} KiB",
            verdict(copies.len() == 1),
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
        format!("1 pass: {}", verdict(st.passes == 1)),
    ));

    match libbpf() {
        None => rows.push(row(
            "libbpf bpf_object__open_file: libbpf.so.1 not installed, not measured",
            "",
            "",
            "",
        )),
        Some(lb) => {
            let mut n = 0;
            let t = time(11, || unsafe {
                let o = (lb.open_file)(cpath.as_ptr(), std::ptr::null());
                assert!(!o.is_null(), "libbpf could not open {}", path.display());
                n = 0;
                let mut p = (lb.next_program)(o, std::ptr::null_mut());
                while !p.is_null() {
                    n += 1;
                    p = (lb.next_program)(o, p);
                }
                (lb.close)(o);
            });
            rows.push(row(
                format!("libbpf bpf_object__open_file, same object ({n} programs, each its own copy; open only, no ksym pass)"),
                short(t),
                format!("{:.3}", t / plain_med),
                format!("ours/libbpf open: {:.2}", open_med / t),
            ));
        }
    }
    print_table(
        "BPF objects: aliases relocated once, __ksym externs in one pass",
        &rows,
    );
}

/// Every large allocation gets fresh pages (the default of this bench): a
/// table's memory must be faulted in, as in a process that opens it once.
fn fresh_memory() {
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}

/// Runs `f` with large allocations served from the heap and freed memory
/// kept there, so that a loop of opens reuses the pages of the previous
/// table (no page faults): the cost of parsing and indexing alone.
fn warm_memory<T>(f: impl FnOnce() -> T) -> T {
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 512 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
    let r = f();
    fresh_memory();
    r
}

struct Guard(*mut ksym_table);
impl Drop for Guard {
    fn drop(&mut self) {
        unsafe { ksym_table_free(self.0) }
    }
}

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
    if want("modules") {
        bench_modules(&copy, &tmp);
    }
    if want("resolve") {
        bench_resolve(&live, &copy);
    }
    if want("bpf") {
        bench_bpf(&live);
    }
    std::fs::remove_dir_all(&tmp).ok();
}
