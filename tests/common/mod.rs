//! Helpers shared by the integration tests: the bundled real kernel data.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use ksym::internals::btf::{KernelBtf, Options};

/// The project's top directory, from the core's tests and from capi's.
pub fn repo() -> &'static Path {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    if dir.join("tests/data").is_dir() {
        dir
    } else {
        dir.parent().unwrap()
    }
}

/// The bundled data set `name` (e.g. "linux-6.12-cloud/kallsyms"),
/// decompressed from tests/data/NAME.gz.
pub fn data(name: &str) -> Vec<u8> {
    let path = repo().join("tests/data").join(format!("{name}.gz"));
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(f)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// The data set written to a file in a fresh temporary directory.
pub fn data_file(name: &str) -> (TempDir, PathBuf) {
    let dir = TempDir::new();
    let path = dir.path().join(name.replace('/', "_"));
    std::fs::write(&path, data(name)).unwrap();
    (dir, path)
}

/// Makes a FIFO at `path`, or panics saying why: some filesystems (9p,
/// as a qemu guest shares a directory) have no FIFOs, and the temporary
/// directory (TMPDIR) must then be elsewhere, e.g. a tmpfs.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other precondition.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        let e = std::io::Error::last_os_error();
        panic!(
            "mkfifo {}: {e}: this filesystem has no FIFOs (9p?); point TMPDIR at a tmpfs",
            path.display()
        );
    }
}

/// A temporary directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "ksym-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a kernel-dependent part of a test needs from the running kernel.
/// `KSYM_REQUIRE` (comma-separated names, or `all`) says which of them the
/// machine is expected to have: a skip for one of those is a failure.
/// `KSYM_REQUIRE_KERNEL=1` and `KSYM_REQUIRE_FENTRY=1` are the older
/// spellings of `kernel` and `fentry`. The C tests read the same variable
/// the same way (`c-tests/check.h`: `NEED_SKIP`), with one need more,
/// `data` (their `KSYM_TESTDATA`): these tests read `tests/data` directly
/// and fail when it is missing, so they have no data skip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Root, bpf(), real addresses in /proc/kallsyms, /sys/kernel/btf/vmlinux.
    Kernel,
    /// fentry/fexit programs load and attach.
    Fentry,
    /// Loadable modules (insmod/rmmod).
    Modules,
    /// BTF of modules in /sys/kernel/btf (5.11).
    ModuleBtf,
    /// A BPF cookie on fentry/fexit links (6.0).
    Cookies,
    /// bpf_get_func_ip() in fentry/fexit (5.15).
    FuncIp,
    /// The kprobe PMU (perf_event_open of a kprobe).
    Kprobes,
    /// kprobe_multi links (5.18 with CONFIG_FPROBE).
    KprobeMulti,
    /// Data symbols in kallsyms (CONFIG_KALLSYMS_ALL: typed ksyms).
    KallsymsAll,
    /// tracefs' available_filter_functions readable.
    Tracefs,
    /// struct_ops maps attached as links (BPF_F_LINK, 6.4).
    StructOpsLink,
    /// fentry.multi programs with one tracing_multi link (7.3).
    TracingMulti,
    /// The bpf_loop() helper (5.17).
    BpfLoop,
    /// VARs of per-CPU variables in vmlinux's BTF.
    BtfPercpuVars,
}

impl Need {
    pub fn name(self) -> &'static str {
        match self {
            Need::Kernel => "kernel",
            Need::Fentry => "fentry",
            Need::Modules => "modules",
            Need::ModuleBtf => "module_btf",
            Need::Cookies => "cookies",
            Need::FuncIp => "func_ip",
            Need::Kprobes => "kprobes",
            Need::KprobeMulti => "kprobe_multi",
            Need::KallsymsAll => "kallsyms_all",
            Need::Tracefs => "tracefs",
            Need::StructOpsLink => "struct_ops_link",
            Need::TracingMulti => "tracing_multi",
            Need::BpfLoop => "bpf_loop",
            Need::BtfPercpuVars => "btf_percpu_vars",
        }
    }

    /// The kernel table's column for this need (`None`: the table does
    /// not declare it, as the kernel itself: root, bpf(), addresses).
    pub fn column(self) -> Option<&'static str> {
        match self {
            Need::Kernel => None,
            Need::Tracefs => Some("tracefs_lists"),
            n => Some(n.name()),
        }
    }

    /// Is this feature required by the environment (`KSYM_REQUIRE`)?
    pub fn required(self) -> bool {
        let legacy = |v: &str| std::env::var(v).as_deref() == Ok("1");
        match self {
            Need::Kernel if legacy("KSYM_REQUIRE_KERNEL") => return true,
            Need::Fentry if legacy("KSYM_REQUIRE_FENTRY") => return true,
            _ => {}
        }
        std::env::var("KSYM_REQUIRE").is_ok_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|w| w == "all" || w == self.name())
        })
    }
}

/// The kernel table (`tests/kernels.txt`): the row of the running kernel,
/// as column name and yes/no. The row is `$KSYM_KERNEL`'s (the guests set
/// it), else the host row whose release pattern matches `uname -r`;
/// `None` on a machine the table does not describe.
pub fn kernel_row() -> Option<&'static (String, HashMap<String, bool>)> {
    static ROW: OnceLock<Option<(String, HashMap<String, bool>)>> = OnceLock::new();
    ROW.get_or_init(|| {
        let text = std::fs::read_to_string(repo().join("tests/kernels.txt"))
            .expect("tests/kernels.txt: the kernel table");
        let mut rows = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or(""))
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split_whitespace().collect::<Vec<_>>());
        let head = rows.next().expect("the kernel table's header");
        let col = |name: &str| head.iter().position(|&h| h == name).unwrap();
        let (suite, release) = (col("suite"), col("release"));
        let want = std::env::var("KSYM_KERNEL").ok();
        let uname = release_of_running_kernel();
        let row = rows.find(|r| match &want {
            Some(k) => r[0] == k,
            None => r[suite] == "-" && fnmatch(r[release], &uname),
        });
        let row = match (row, &want) {
            (Some(r), _) => r,
            (None, Some(k)) => panic!("KSYM_KERNEL={k}: no such row in tests/kernels.txt"),
            (None, None) => return None,
        };
        let has = head
            .iter()
            .zip(&row)
            .filter(|(_, v)| **v == "yes" || **v == "no")
            .map(|(h, v)| (h.to_string(), *v == "yes"))
            .collect();
        Some((row[0].to_string(), has))
    })
    .as_ref()
}

/// Does the running kernel have `need`, by the kernel table? `None` when
/// the table has no row for it or does not declare that need.
pub fn kernel_has(need: Need) -> Option<bool> {
    let (_, row) = kernel_row()?;
    row.get(need.column()?).copied()
}

fn release_of_running_kernel() -> String {
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid utsname.
    unsafe { libc::uname(&mut u) };
    // SAFETY: release is NUL-terminated by uname.
    unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn fnmatch(pattern: &str, s: &str) -> bool {
    let p = std::ffi::CString::new(pattern).unwrap();
    let s = std::ffi::CString::new(s).unwrap();
    // SAFETY: both are NUL-terminated.
    unsafe { libc::fnmatch(p.as_ptr(), s.as_ptr(), 0) == 0 }
}

/// A part of a test that needs the running kernel and cannot run here.
///
/// Where the kernel table declares the need ([`kernel_has`]): a kernel
/// that has it must not get here (a failure: the test could not use what
/// the kernel has); a kernel that lacks it gets here as the table says,
/// and the caller has checked what such a kernel does (its documented
/// error or fallback): the line `checked: not on this kernel` says so, and
/// the test goes on as passed.
///
/// Elsewhere (a machine the table does not describe, or the kernel itself:
/// root, bpf(), addresses): when the environment requires that feature
/// ([`Need::required`]) it is a failure; otherwise the one line
/// `SKIP <need> <test>: <why>` goes to stderr and to
/// `target/tmp/ksym-skipped`, which `make test` prints after the Rust
/// tests, so that a skip is never silent.
pub fn skip_need(need: Need, why: &str) {
    let test = std::thread::current().name().unwrap_or("?").to_string();
    match (kernel_has(need), kernel_row()) {
        (Some(true), Some((k, _))) => panic!(
            "the kernel table says {k} has {}, but {test} could not use it: {why}",
            need.name()
        ),
        (Some(false), Some((k, _))) => {
            eprintln!(
                "checked: not on this kernel ({k}): {} {test}: {why}",
                need.name()
            );
            return;
        }
        _ => {}
    }
    if need.required() {
        panic!(
            "KSYM_REQUIRE has {}, but {test} cannot run: {why}",
            need.name()
        );
    }
    let line = format!("SKIP {} {test}: {why}", need.name());
    use std::io::Write;
    let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ksym-skipped");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
    {
        let _ = writeln!(f, "{line}");
    }
    eprintln!("{line}");
}

/// [`skip_need`] for the kernel itself ([`Need::Kernel`]).
pub fn skip(why: &str) {
    skip_need(Need::Kernel, why)
}

/// Kernels before 5.11 charge BPF programs and maps to RLIMIT_MEMLOCK
/// (64 KiB by default): a test that loads many raises it first, as every
/// loader does there (libbpf, tools/bpf_loader.h).
pub fn raise_memlock() {
    let r = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: r is a valid rlimit; a failure leaves the limit as it was.
    unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &r) };
}

/// Is this process root (snapshots are root's)? Otherwise a [`skip`] says
/// what needed it.
pub fn root(what: &str) -> bool {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        skip(&format!(
            "{what} are for root only: this test runs as another user"
        ));
    }
    root
}

/// /proc/kallsyms when this process can read real addresses; otherwise
/// `None`, after reporting a [`skip`].
pub fn live_kallsyms() -> Option<Vec<u8>> {
    let path = Path::new("/proc/kallsyms");
    // The library's one rule for "does this process see addresses".
    match ksym::kallsyms_shows_addresses(path).and_then(|real| {
        std::fs::read(path)
            .map(|b| real.then_some(b))
            .map_err(|e| ksym::Error::not_found(e.to_string()))
    }) {
        Ok(Some(b)) => Some(b),
        Ok(None) => {
            skip("/proc/kallsyms hides addresses (kptr_restrict / CAP_SYSLOG)");
            None
        }
        Err(e) => {
            skip(&format!("cannot read /proc/kallsyms: {e}"));
            None
        }
    }
}

/// One line of kallsyms as an independent, naive reader sees it.
#[derive(Clone, Debug)]
pub struct RefSym {
    pub addr: u64,
    pub ty: u8,
    pub name: Vec<u8>,
    /// "vmlinux" when the line has no module column.
    pub module: Vec<u8>,
    pub line: usize,
}

/// Splits kallsyms text with `split_whitespace`-style logic (no shared code
/// with the library's parser).
pub fn reference(text: &[u8]) -> Vec<RefSym> {
    let s = String::from_utf8_lossy(text);
    s.lines()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let module = f
                .get(3)
                .map(|m| {
                    m.trim_start_matches('[')
                        .trim_end_matches(']')
                        .as_bytes()
                        .to_vec()
                })
                .unwrap_or_else(|| b"vmlinux".to_vec());
            RefSym {
                addr: u64::from_str_radix(f[0], 16).unwrap(),
                ty: f[1].as_bytes()[0],
                name: f[2].as_bytes().to_vec(),
                module,
                line: i,
            }
        })
        .collect()
}

/// The 6.1 kernel's BTF unpacked as /sys/kernel/btf lays it out: `vmlinux`
/// and one file per module.
pub struct Kernel61 {
    pub dir: TempDir,
}

pub const MODULES_61: &[&str] = &[
    "af_key",
    "blake2b_generic",
    "bridge",
    "btrfs",
    "cdrom",
    "crc7",
    "dummy",
    "fat",
    "fuse",
    "isofs",
    "libcrc32c",
    "llc",
    "loop",
    "nf_tables",
    "nfnetlink",
    "nls_utf8",
    "overlay",
    "raid6_pq",
    "squashfs",
    "stp",
    "tun",
    "udf",
    "veth",
    "vfat",
    "xfrm_algo",
    "xfs",
    "xor",
    "zram",
    "zsmalloc",
    "zstd_compress",
];

impl Kernel61 {
    pub fn new() -> Kernel61 {
        let dir = TempDir::new();
        std::fs::create_dir(dir.path().join("btf")).unwrap();
        for m in MODULES_61.iter().chain(&["vmlinux"]) {
            let data = data(&format!("linux-6.1-cloud/btf/{m}"));
            std::fs::write(dir.path().join("btf").join(m), data).unwrap();
        }
        std::fs::write(
            dir.path().join("kallsyms"),
            data("linux-6.1-cloud/kallsyms"),
        )
        .unwrap();
        Kernel61 { dir }
    }
    pub fn btf_dir(&self) -> PathBuf {
        self.dir.path().join("btf")
    }
    pub fn vmlinux(&self) -> PathBuf {
        self.btf_dir().join("vmlinux")
    }
    pub fn open(&self) -> KernelBtf {
        KernelBtf::open(&Options {
            vmlinux_btf_path: Some(self.vmlinux()),
            module_btf_dir: Some(self.btf_dir()),
            filter_functions_path: Some("".into()),
            kallsyms_path: Some(self.dir.path().join("kallsyms")),
            ..Default::default()
        })
        .unwrap()
    }
}

/// bpftool's dump of a BTF file (split on `base` when given): (id, kind,
/// name) of every named type.
pub fn bpftool_dump(file: &Path, base: Option<&Path>) -> Vec<(u32, String, String)> {
    let mut cmd = Command::new("bpftool");
    if let Some(b) = base {
        cmd.arg("-B").arg(b);
    }
    let out =
        cmd.args(["btf", "dump", "file"]).arg(file).output().expect(
            "bpftool is needed by this test (.ci/run installs it: apt-get install bpftool)",
        );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut types = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        // [95266] TYPEDEF 'xfs_ino_t' type_id=34
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let (id, rest) = rest.split_once("] ").unwrap();
        let (kind, rest) = rest.split_once(' ').unwrap();
        let name = rest.split('\'').nth(1).unwrap_or("");
        if !name.is_empty() && name != "(anon)" {
            types.push((id.parse().unwrap(), kind.to_string(), name.to_string()));
        }
    }
    types
}

/// The one snapshot file (`*.snap`) in `dir`: a test fails if there are
/// none or several.
pub fn only_snapshot(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "snap"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}
