//! Helpers shared by the integration tests: the bundled real kernel data.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    /// Loadable modules (insmod/rmmod, module BTF).
    Modules,
    /// The kprobe PMU (perf_event_open of a kprobe).
    Kprobes,
    /// Data symbols in kallsyms (CONFIG_KALLSYMS_ALL: typed ksyms).
    KallsymsAll,
    /// tracefs' available_filter_functions readable.
    Tracefs,
}

impl Need {
    pub fn name(self) -> &'static str {
        match self {
            Need::Kernel => "kernel",
            Need::Fentry => "fentry",
            Need::Modules => "modules",
            Need::Kprobes => "kprobes",
            Need::KallsymsAll => "kallsyms_all",
            Need::Tracefs => "tracefs",
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

/// A part of a test that needs the running kernel and cannot run here.
/// When the environment requires that feature ([`Need::required`]) it is a
/// failure; otherwise the one line `SKIP <need> <test>: <why>` goes to
/// stderr and to `target/tmp/ksym-skipped`, which `make test` prints after
/// the Rust tests, so that a skip is never silent.
pub fn skip_need(need: Need, why: &str) {
    let test = std::thread::current().name().unwrap_or("?").to_string();
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
    match std::fs::read("/proc/kallsyms") {
        Ok(b)
            if b.split(|&c| c == b'\n')
                .take(50)
                .any(|l| l.len() > 16 && l[..16].iter().any(|&c| c != b'0')) =>
        {
            Some(b)
        }
        Ok(_) => {
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
