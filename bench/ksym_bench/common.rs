//! What every section of the bench shares: timing, medians, the table format,
//! the counting allocator, memory modes.

#![allow(dead_code)]

use std::ffi::{c_char, CStr, CString};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

use ksym_capi::ffi::table::*;

/// Counts the bytes allocated, to report the peak extra memory of a call.
pub struct Counting;
pub static CURRENT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
pub static PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub fn note_alloc(n: usize) {
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
pub fn peak_extra<T>(f: impl FnOnce() -> T) -> (T, usize) {
    use std::sync::atomic::Ordering::Relaxed;
    let base = CURRENT.load(Relaxed);
    PEAK.store(base, Relaxed);
    let r = f();
    (r, PEAK.load(Relaxed) - base)
}

pub fn median(mut v: Vec<f64>) -> f64 {
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
pub fn paired_ratio(a: &[f64], base: &[f64]) -> f64 {
    median(a.iter().zip(base).map(|(x, b)| x / b).collect())
}

/// Median wall time of `runs` calls of `f`, in seconds; `f` returns something
/// to keep alive until after the clock stops (dropped untimed).
pub fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
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
pub fn per_item(batches: usize, n: usize, mut f: impl FnMut() -> u64) -> f64 {
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

pub fn plain_read(path: &Path, buf: &mut [u8]) -> usize {
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
pub fn fscanf_loop(path: &Path) -> usize {
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

pub fn open_table(path: &Path) -> *mut ksym_table {
    open_table_with(path, None)
}

pub fn open_table_with(path: &Path, ranges: Option<&Path>) -> *mut ksym_table {
    let p = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let r = ranges.map(|r| CString::new(r.as_os_str().as_encoded_bytes()).unwrap());
    let opts = ksym_table_opts {
        kallsyms_path: p.as_ptr(),
        builtin_ranges_path: r.as_ref().map_or(c"".as_ptr(), |r| r.as_ptr()),
        ..Default::default()
    };
    let t = unsafe { ksym_table_open(&opts) };
    if t.is_null() {
        let msg = unsafe { CStr::from_ptr(ksym_capi::ffi::error::ksym_last_error_message()) };
        panic!(
            "ksym_table_open({}): {}",
            path.display(),
            msg.to_string_lossy()
        );
    }
    t
}

pub struct Row {
    pub what: String,
    pub value: String,
    pub ratio: String,
    pub target: String,
}

pub fn row(
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

pub fn print_table(title: &str, rows: &[Row]) {
    println!("\n### {title}\n");
    println!("| measurement | median | ratio | target |");
    println!("|---|---:|---:|---|");
    for r in rows {
        println!("| {} | {} | {} | {} |", r.what, r.value, r.ratio, r.target);
    }
}

pub fn ms(s: f64) -> String {
    format!("{:.2} ms", s * 1e3)
}

/// Milliseconds, or microseconds below one millisecond.
pub fn short(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else {
        ms(s)
    }
}

pub fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// Every target's verdict of this run, in order: (what, value, target,
/// met), printed together at the end (`print_verdicts`).
pub static VERDICTS: std::sync::Mutex<Vec<(String, String, String, bool)>> =
    std::sync::Mutex::new(Vec::new());

/// The target column of a row whose `ratio` must be at most `limit` (the
/// baseline named by `of`), recorded for the summary: `≤ 1.30 × FNV: met`.
pub fn at_most(what: &str, ratio: f64, limit: f64, of: &str) -> String {
    let ok = ratio <= limit;
    let target = format!("≤ {limit:.2} × {of}");
    VERDICTS
        .lock()
        .unwrap()
        .push((what.to_string(), format!("{ratio:.3}"), target.clone(), ok));
    format!("{target}: {}", verdict(ok))
}

/// A target that is not a ratio (memory, counts), recorded likewise.
pub fn holds(what: &str, value: String, target: &str, ok: bool) -> String {
    VERDICTS
        .lock()
        .unwrap()
        .push((what.to_string(), value, target.to_string(), ok));
    format!("{target}: {}", verdict(ok))
}

/// The verdicts of every target measured, one table.
pub fn print_verdicts() {
    let v = VERDICTS.lock().unwrap();
    if v.is_empty() {
        return;
    }
    let missed = v.iter().filter(|x| !x.3).count();
    println!(
        "
### Targets: {} met, {missed} missed
",
        v.len() - missed
    );
    println!("| target | measured | limit | verdict |");
    println!("|---|---:|---|---|");
    for (what, value, target, ok) in v.iter() {
        println!("| {what} | {value} | {target} | {} |", verdict(*ok));
    }
}

/// Simple deterministic generator (no dependency).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}

/// Does `path` show this process real addresses? The library's rule
/// (`ksym::kallsyms_shows_addresses`: its first lines).
pub fn readable_kallsyms(path: &Path) -> bool {
    ksym::kallsyms_shows_addresses(path).unwrap_or(false)
}

/// Every large allocation gets fresh pages (the default of this bench): a
/// table's memory must be faulted in, as in a process that opens it once.
pub fn fresh_memory() {
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}

/// Runs `f` with large allocations served from the heap and freed memory
/// kept there, so that a loop of opens reuses the pages of the previous
/// table (no page faults): the cost of parsing and indexing alone.
pub fn warm_memory<T>(f: impl FnOnce() -> T) -> T {
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 512 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
    let r = f();
    fresh_memory();
    r
}

pub struct Guard(pub *mut ksym_table);
impl Drop for Guard {
    fn drop(&mut self) {
        unsafe { ksym_table_free(self.0) }
    }
}
