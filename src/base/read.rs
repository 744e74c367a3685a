//! Reading a whole file into one buffer.
//!
//! A read of /proc/kallsyms returns under 4 KiB each time (one seq_file
//! page), so the file costs about 1,300 `read()` calls whatever the buffer
//! size; what matters is not to copy or reallocate per call. Regular files
//! are read with their size reserved up front.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Reserved up front when the size is unknown (procfs reports 0). Growth past
/// it doubles; large buffers are reallocated with `mremap`, without copying.
const UNKNOWN_SIZE_RESERVE: usize = 2 << 20;

/// Reads `path` whole. `extra` bytes of spare capacity are kept after the
/// data (the table appends a final newline when the file lacks one).
pub fn read_file(path: &Path, extra: usize) -> Result<Vec<u8>> {
    let mut f =
        File::open(path).map_err(|e| Error::io(&e, format!("cannot open {}", path.display())))?;
    let hint = f.metadata().map(|m| m.len() as usize).unwrap_or(0);
    let reserve = if hint > 0 {
        hint + extra + 1
    } else {
        UNKNOWN_SIZE_RESERVE
    };
    let mut buf = Vec::new();
    buf.try_reserve_exact(reserve)
        .map_err(|_| Error::nomem(&format!("reading {}", path.display())))?;
    f.read_to_end(&mut buf)
        .map_err(|e| Error::io(&e, format!("cannot read {}", path.display())))?;
    if buf.capacity() - buf.len() < extra {
        buf.try_reserve_exact(extra)
            .map_err(|_| Error::nomem(&format!("reading {}", path.display())))?;
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::NOT_FOUND;

    #[test]
    fn missing_file_is_not_found_with_path() {
        let e = read_file(Path::new("/nonexistent/kallsyms"), 1).unwrap_err();
        assert_eq!(e.code(), NOT_FOUND);
        assert!(e.message().contains("/nonexistent/kallsyms"));
    }

    #[test]
    fn directory_is_an_io_error() {
        let e = read_file(Path::new("/"), 1).unwrap_err();
        assert_eq!(e.code(), -libc::EISDIR, "{e:?}");
    }

    #[test]
    fn reads_proc_files_whole() {
        let b = read_file(Path::new("/proc/self/maps"), 1).unwrap();
        assert!(b.ends_with(b"\n"));
        assert!(b.capacity() > b.len());
    }
}
