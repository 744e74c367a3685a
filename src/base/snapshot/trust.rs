//! The snapshot container's trust rules: what libksym keeps between
//! processes (the table and BTF snapshots) lives in a directory that one
//! user alone can read and write, in files that user alone owns. The
//! rules, in one place:
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

use crate::base::hash::hash;
use crate::base::mapped::Mapping;

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
/// each with its length in front. The kernel's is read once per process
/// (a process does not outlive its boot; the five system calls are a
/// tenth of a snapshot's open).
pub fn boot_key(boot_id_path: Option<&Path>) -> Result<Vec<u8>, String> {
    static KERNEL: std::sync::OnceLock<Result<Vec<u8>, String>> = std::sync::OnceLock::new();
    match boot_id_path {
        None => KERNEL
            .get_or_init(|| read_boot_key(Path::new("/proc/sys/kernel/random/boot_id")))
            .clone(),
        Some(p) => read_boot_key(p),
    }
}

fn read_boot_key(path: &Path) -> Result<Vec<u8>, String> {
    let boot =
        crate::base::read::read_file(path, 0, crate::base::read::limits::BOOT_ID, "a boot id")
            .map_err(|e| format!("not used: {}", e.message()))?;
    let (release, version) = crate::base::sys::kernel_release_version();
    let mut key = Vec::new();
    for s in [&boot[..], &release, &version] {
        push_str(&mut key, s);
    }
    Ok(key)
}

/// A file's identity (device, inode, size, mtime in ns), or zeros
/// (procfs, whose files have no size, or missing, or no path). A path under
/// /proc is looked at too: a file bind-mounted over /proc/kallsyms (a
/// test's, a container's) has an identity, and its snapshot must not be
/// the kernel's.
pub fn identity(path: &Path) -> [u64; 4] {
    if path.as_os_str().is_empty() {
        return [0; 4];
    }
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

/// A private file being written: unnamed (`O_TMPFILE`, so that a process
/// that dies while writing leaves nothing behind), or under a temporary
/// name where the filesystem cannot make unnamed files.
pub struct Temp {
    pub file: File,
    /// The temporary name; `None` for an unnamed file.
    pub path: Option<PathBuf>,
}

impl Dir {
    /// `path`, if it is a trusted directory; the error says why not
    /// ("none yet" when it does not exist).
    pub fn trusted(path: &Path) -> Result<Dir, String> {
        let uid = crate::base::sys::euid();
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
                crate::base::sys::euid()
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

    /// A new private file for `stem`, to be put in place by [`Dir::commit`]:
    /// unnamed where the filesystem can (tmpfs and the usual local ones),
    /// else under a temporary name.
    pub fn temp(&self, stem: &str) -> Result<Temp, String> {
        let unnamed = OpenOptions::new()
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
            .open(&self.path);
        if let Ok(file) = unnamed {
            return Ok(Temp { file, path: None });
        }
        let path = self.temp_name(stem);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Temp {
            file,
            path: Some(path),
        })
    }

    fn temp_name(&self, stem: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        self.path.join(format!(
            ".{stem}-{}-{:x}.tmp",
            std::process::id(),
            hash(&nanos.to_le_bytes())
        ))
    }

    /// Puts a finished temporary file in place of `path` (atomically: a
    /// reader sees the old file or the new one). An unnamed file is linked
    /// at `path` itself when no file has that name (`linkat` through
    /// /proc/self/fd: a process that dies at any point leaves either
    /// nothing or the whole file); over an existing file it gets a
    /// temporary name first, then is renamed.
    pub fn commit(&self, t: Temp, path: &Path) -> std::io::Result<()> {
        let cpath = |p: &Path| {
            std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
        };
        let named = match t.path {
            Some(p) => p,
            None => {
                use std::os::fd::AsRawFd;
                let fd = format!("/proc/self/fd/{}\0", t.file.as_raw_fd());
                match crate::base::sys::link_fd_path(fd.as_bytes(), &cpath(path)?) {
                    Ok(()) => return Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(e),
                }
                let name = self.temp_name("link");
                crate::base::sys::link_fd_path(fd.as_bytes(), &cpath(&name)?)?;
                name
            }
        };
        let r = std::fs::rename(&named, path);
        if r.is_err() {
            let _ = std::fs::remove_file(&named);
        }
        r
    }
}

impl Temp {
    /// Gives it up (an unnamed file goes with its descriptor).
    pub fn discard(self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
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
    /// It is being written by a thread of the library, done before the
    /// next open of the process or its exit (`bytes` and `write_ns` are 0).
    pub background: bool,
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
        } else if self.written && self.background {
            Some(format!(
                "snapshot: being written to {path} by a thread of the library (done before the next open or exit){}",
                self.note
                    .as_ref()
                    .map(|n| format!("; none used: {n}"))
                    .unwrap_or_default()
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
