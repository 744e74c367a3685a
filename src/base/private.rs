//! Private files: what libksym keeps between processes (the table and
//! BTF snapshots) lives in a directory that one user alone can read and
//! write, in files that user alone owns. The rules, in one place:
//!
//! - the directory must be a directory (not a symlink) owned by the
//!   process's effective uid, with no group or other permission; it is
//!   made 0700 when missing;
//! - a file must be a regular file owned by that uid, with no group or
//!   other permission, opened with `O_NOFOLLOW`;
//! - a file is written under a temporary name in the directory (mode 0600,
//!   `O_CREAT | O_EXCL`) and renamed into place, so a reader sees a whole
//!   file or none.
//!
//! Anything else is not trusted: the caller reads its sources as if there
//! were no file, and replaces it where the directory is trusted.

use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::hash::hash;
use super::mapped::Mapping;

/// Where snapshots live by default: tmpfs, gone at reboot.
pub const DEFAULT_DIR: &str = "/run/ksym";

/// The directory a snapshot lives in, or why none is used: the rules both
/// snapshots follow, in this order. `disabled`: the flag that turned
/// snapshots off, if it is set; `named`: the option naming a source of the
/// caller's, if set (its snapshot lives only in a `snapshot_dir` the caller
/// names: [`DEFAULT_DIR`] holds the running kernel's only); `refused`: why
/// this process may not use one (asked last: it may read a file).
pub fn place(
    disabled: Option<&str>,
    named: Option<&str>,
    dir: Option<&Path>,
    refused: impl FnOnce() -> Option<&'static str>,
) -> Result<PathBuf, String> {
    if let Some(flag) = disabled {
        return Err(format!("disabled ({flag})"));
    }
    if let (Some(option), None) = (named, dir) {
        return Err(format!(
            "not used: a {option} gets a snapshot only in a snapshot_dir named for it"
        ));
    }
    if let Some(why) = refused() {
        return Err(format!("not used: {why}"));
    }
    Ok(dir.map_or_else(|| PathBuf::from(DEFAULT_DIR), Path::to_path_buf))
}

/// `s` with its length in front (8 bytes, little-endian), as keys hold
/// strings.
pub fn push_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

/// What ties a snapshot to one boot of one kernel: the boot id (read from
/// `boot_id_path`, the kernel's by default), `uname -r` and `uname -v`,
/// each with its length in front.
pub fn boot_key(boot_id_path: Option<&Path>) -> Result<Vec<u8>, String> {
    let path = boot_id_path.unwrap_or(Path::new("/proc/sys/kernel/random/boot_id"));
    let boot = super::read::read_file(path, 0, super::read::limits::BOOT_ID, "a boot id")
        .map_err(|e| format!("not used: {}", e.message()))?;
    let (release, version) = super::sys::kernel_release_version();
    let mut key = Vec::new();
    for s in [&boot[..], &release, &version] {
        push_str(&mut key, s);
    }
    Ok(key)
}

/// A file's identity (device, inode, size, mtime in ns), or zeros
/// (procfs, or missing).
pub fn identity(path: &Path) -> [u64; 4] {
    match std::fs::metadata(path) {
        Ok(m) if m.size() > 0 => [
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime() as u64 * 1_000_000_000 + m.mtime_nsec() as u64,
        ],
        _ => [0; 4],
    }
}

/// A directory or file is ours: owned by `uid`, no group or other
/// permission, not a symlink.
pub fn owned_private(m: &Metadata, uid: u32) -> bool {
    m.uid() == uid && m.mode() & 0o077 == 0 && !m.file_type().is_symlink()
}

/// Does /proc/kallsyms show this process real addresses? (Kernel
/// addresses are secrets: only a process that may read them may keep
/// them.) Judged by [`shows_real_addresses`] on its first 64 KiB.
pub fn reads_real_addresses() -> bool {
    let Ok(mut f) = File::open("/proc/kallsyms") else {
        return false;
    };
    let mut head = vec![0u8; 64 << 10];
    let mut n = 0;
    while n < head.len() {
        match std::io::Read::read(&mut f, &mut head[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    shows_real_addresses(&head[..n])
}

/// Does this beginning of a kallsyms text show real addresses: is any
/// address in it non-zero? A reader the kernel restricts sees every
/// address as zero. The first line alone cannot tell: on x86-64 SMP
/// kernels it is a per-CPU symbol at 0 (`0000000000000000 A
/// fixed_percpu_data`) for every reader, followed by more per-CPU offsets
/// and the text, which are non-zero only for a reader allowed to see them.
pub fn shows_real_addresses(head: &[u8]) -> bool {
    head.split(|&c| c == b'\n').any(|line| {
        let hex = line.iter().take_while(|c| c.is_ascii_hexdigit()).count();
        hex > 0 && line.get(hex) == Some(&b' ') && line[..hex].iter().any(|&c| c != b'0')
    })
}

/// A directory trusted to hold private files of the effective uid.
pub struct Dir {
    path: PathBuf,
    uid: u32,
}

/// A private file opened for reading, mapped whole.
pub struct Opened {
    pub map: Arc<Mapping>,
    pub len: usize,
}

/// A private file being written under a temporary name.
pub struct Temp {
    pub file: File,
    pub path: PathBuf,
}

impl Dir {
    /// `path`, if it is a trusted directory; the error says why not
    /// ("none yet" when it does not exist).
    pub fn trusted(path: &Path) -> Result<Dir, String> {
        let uid = super::sys::euid();
        let m = std::fs::symlink_metadata(path).map_err(|e| none_yet(e, path))?;
        if !m.is_dir() || !owned_private(&m, uid) {
            return Err(format!(
                "{}: not a private directory of uid {uid}: not trusted",
                path.display()
            ));
        }
        Ok(Dir {
            path: path.to_path_buf(),
            uid,
        })
    }

    /// `path`, made 0700 if missing, if it is (then) a trusted directory.
    pub fn make(path: &Path) -> Result<Dir, String> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .create(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
            Ok(_) => {}
        }
        Dir::trusted(path).map_err(|_| {
            format!(
                "{}: not a private directory of uid {}: not written",
                path.display(),
                super::sys::euid()
            )
        })
    }

    /// Opens the private file `path` (in this directory) and maps it, if
    /// it is one and holds at least `min` bytes. Pages are mapped as they
    /// are read (the kernel maps 16 at a fault): a snapshot's open reads
    /// about half of it, and `MAP_POPULATE` measured slower (mapping and
    /// unmapping pages nobody reads).
    pub fn open(&self, path: &Path, min: usize) -> Result<Opened, String> {
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| none_yet(e, path))?;
        let m = f.metadata().map_err(|e| e.to_string())?;
        if !m.is_file() || !owned_private(&m, self.uid) {
            return Err(format!(
                "{}: not a private file of uid {}: not trusted",
                path.display(),
                self.uid
            ));
        }
        let len = m.len() as usize;
        if len < min.max(1) {
            return Err(format!("{}: truncated", path.display()));
        }
        let map = Arc::new(Mapping::new(&f, len).map_err(|e| e.to_string())?);
        Ok(Opened { map, len })
    }

    /// A new private file named after `stem`, to be renamed into place by
    /// [`Dir::commit`].
    pub fn temp(&self, stem: &str) -> Result<Temp, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let path = self.path.join(format!(
            ".{stem}-{}-{:x}.tmp",
            std::process::id(),
            hash(&nanos.to_le_bytes())
        ));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Temp { file, path })
    }

    /// Puts a finished temporary file in place of `path` (atomically: a
    /// reader sees the old file or the new one).
    pub fn commit(&self, t: Temp, path: &Path) -> std::io::Result<()> {
        let r = std::fs::rename(&t.path, path);
        if r.is_err() {
            let _ = std::fs::remove_file(&t.path);
        }
        r
    }
}

impl Temp {
    /// Gives it up.
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn none_yet(e: std::io::Error, p: &Path) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        "none yet".to_string()
    } else {
        format!("{}: {e}", p.display())
    }
}

/// What happened with the snapshot, for the stats and the CLI.
#[derive(Clone, Debug, Default)]
pub struct SnapshotInfo {
    /// The snapshot file, when one was looked for.
    pub path: Option<PathBuf>,
    /// What was asked for came from it.
    pub loaded: bool,
    /// A new one was written.
    pub written: bool,
    /// Its size in bytes.
    pub bytes: usize,
    /// Time spent writing it (0 if none was written).
    pub write_ns: u64,
    /// Why none was used or written, when that is worth saying.
    pub note: Option<String>,
}

impl SnapshotInfo {
    /// One line for diagnostics; `what`: what came from the snapshot
    /// ("the table").
    pub fn describe(&self, what: &str) -> Option<String> {
        let path = self.path.as_ref().map(|p| p.display().to_string());
        let path = path.as_deref().unwrap_or("-");
        if self.loaded {
            Some(format!(
                "snapshot: {what} comes from {path} ({} bytes)",
                self.bytes
            ))
        } else if self.written {
            Some(format!(
                "snapshot: written to {path} ({} bytes, {:.3} ms){}",
                self.bytes,
                self.write_ns as f64 / 1e6,
                self.note
                    .as_ref()
                    .map(|n| format!("; none used: {n}"))
                    .unwrap_or_default()
            ))
        } else {
            self.note.as_ref().map(|n| format!("snapshot: {n}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shows_real_addresses;
    use std::io::Read;

    fn kallsyms(kernel: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(kernel)
            .join("kallsyms.gz");
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&p).unwrap())
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    /// Real kernels as root: the distro kernels start with per-CPU symbols
    /// at 0, the 6.18 VM with text. Their first 64 KiB show real addresses;
    /// the same text as a restricted reader sees it (every address zero)
    /// does not.
    #[test]
    fn real_addresses_are_seen_past_the_per_cpu_zeros() {
        for kernel in ["linux-6.1-cloud", "linux-6.12-cloud", "vm-6.18"] {
            let text = kallsyms(kernel);
            let head = &text[..64 << 10];
            assert!(shows_real_addresses(head), "{kernel}");
            let zeroed: Vec<u8> = text
                .split(|&c| c == b'\n')
                .flat_map(|l| {
                    let hex = l.iter().take_while(|c| c.is_ascii_hexdigit()).count();
                    let mut l = l.to_vec();
                    l[..hex].fill(b'0');
                    l.push(b'\n');
                    l
                })
                .collect();
            assert!(
                !shows_real_addresses(&zeroed[..64 << 10]),
                "{kernel} zeroed"
            );
            assert!(!shows_real_addresses(&zeroed), "{kernel} zeroed, whole");
        }
        // The first line of the distro kernels is a per-CPU symbol at 0.
        let t = kallsyms("linux-6.1-cloud");
        assert!(t.starts_with(b"0000000000000000 A fixed_percpu_data\n"));
        assert!(!shows_real_addresses(&t[..37]));
        assert!(!shows_real_addresses(b""));
    }
}
