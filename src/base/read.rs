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

/// The most libksym reads of each kind of input, so that a wrong file
/// (`/dev/zero`, a FIFO that never ends, a huge file) is an error, not a
/// process that never returns or runs out of memory. docs/limits.md lists them.
pub mod limits {
    /// kallsyms / kallmodsyms text (a distro kernel with every module
    /// loaded and kallmodsyms: about 30 MB).
    pub const KALLSYMS: usize = 256 << 20;
    /// One kallsyms line (names are at most 32 KiB; kallmodsyms adds
    /// module and object lists).
    pub const LINE: usize = 64 << 10;
    /// modules.builtin.ranges.
    pub const RANGES: usize = 64 << 20;
    /// A vmlinux ELF read for symbol sizes or BTF (with DWARF: ~1 GB).
    pub const ELF: usize = 2 << 30;
    /// A raw BTF file.
    pub const BTF: usize = 1 << 30;
    /// A BPF object file.
    pub const BPF_OBJECT: usize = 256 << 20;
    /// A kernel config (plain or gzip) and what it inflates to.
    pub const CONFIG: usize = 64 << 20;
    /// tracefs' available_filter_functions(_addrs).
    pub const FILTER_FUNCTIONS: usize = 64 << 20;
    /// /proc/modules and other small files.
    pub const SMALL: usize = 16 << 20;
    /// An initial value made for a section the object leaves zero (`.bss`,
    /// when a variable of it is set): the object's own bound (a `.bss`
    /// takes no room in the file, so its size is only the header's word).
    pub const ZERO_SECTION_VALUE: usize = BPF_OBJECT;
    /// The boot id (37 bytes; read at every snapshot open, so with a
    /// buffer its size, not a procfs file's 2 MiB guess).
    pub const BOOT_ID: usize = 4 << 10;
}

/// The error for input past a limit.
pub fn too_large(path: &Path, what: &str, limit: usize) -> Error {
    Error::format(format!(
        "{}: more than {} MiB: too large for {what} (a wrong file, or one that never ends?)",
        path.display(),
        limit >> 20
    ))
}

/// Reads `path` whole, at most `limit` bytes (`what` names the kind of
/// input in the error). `extra` bytes of spare capacity are kept after the
/// data (the table appends a final newline when the file lacks one).
pub fn read_file(path: &Path, extra: usize, limit: usize, what: &str) -> Result<Vec<u8>> {
    let f =
        File::open(path).map_err(|e| Error::io(&e, format!("cannot open {}", path.display())))?;
    let hint = f.metadata().map(|m| m.len() as usize).unwrap_or(0);
    if hint > limit {
        return Err(too_large(path, what, limit));
    }
    let reserve = if hint > 0 {
        hint + extra + 1
    } else {
        UNKNOWN_SIZE_RESERVE.min(limit + 1)
    };
    let mut buf = Vec::new();
    buf.try_reserve_exact(reserve)
        .map_err(|_| Error::nomem(&format!("reading {}", path.display())))?;
    f.take(limit as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(&e, format!("cannot read {}", path.display())))?;
    if buf.len() > limit {
        return Err(too_large(path, what, limit));
    }
    if buf.capacity() - buf.len() < extra {
        buf.try_reserve_exact(extra)
            .map_err(|_| Error::nomem(&format!("reading {}", path.display())))?;
    }
    Ok(buf)
}

/// The most [`gunzip`] inflates: a kernel config is about 250 KiB;
/// anything past this is not one.
pub const MAX_INFLATED: usize = limits::CONFIG;

/// Reads `path` whole, inflating it if it is gzip (`/proc/config.gz`), as
/// zlib's `gzopen` does for libbpf: a plain file is returned as it is.
pub fn read_maybe_gzip(path: &Path) -> Result<Vec<u8>> {
    let data = read_file(path, 0, limits::CONFIG, "a kernel config")?;
    if !data.starts_with(&[0x1f, 0x8b]) {
        return Ok(data);
    }
    gunzip(&data)
        .map_err(|what| Error::format(format!("{}: not valid gzip: {what}", path.display())))
}

/// The contents of gzip data (RFC 1952): its members one after the other,
/// each checked against its CRC-32 and size, at most [`MAX_INFLATED`] bytes.
pub fn gunzip(mut data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while !data.is_empty() {
        if data.len() < 18 || data[0] != 0x1f || data[1] != 0x8b {
            return Err("bad magic or truncated member".into());
        }
        if data[2] != 8 {
            return Err(format!(
                "compression method {}, expected 8 (deflate)",
                data[2]
            ));
        }
        let flags = data[3];
        let truncated = || "truncated header".to_string();
        let mut pos = 10;
        if flags & 4 != 0 {
            // FEXTRA: a length, then that many bytes.
            let n = data.get(pos..pos + 2).ok_or_else(truncated)?;
            pos += 2 + u16::from_le_bytes([n[0], n[1]]) as usize;
        }
        for bit in [8u8, 16] {
            // FNAME, FCOMMENT: NUL-terminated.
            if flags & bit != 0 {
                let rest = data.get(pos..).ok_or_else(truncated)?;
                pos += memchr::memchr(0, rest).ok_or_else(truncated)? + 1;
            }
        }
        if flags & 2 != 0 {
            pos += 2; // FHCRC
        }
        let body = data.get(pos..).ok_or_else(truncated)?;
        let (member, used) = inflate_raw(body, MAX_INFLATED - out.len())?;
        let trailer = body.get(used..used + 8).ok_or("truncated trailer")?;
        let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if crc32(&member) != word(&trailer[0..4]) || member.len() as u32 != word(&trailer[4..8]) {
            return Err("CRC or size mismatch".into());
        }
        out.extend_from_slice(&member);
        data = &body[used + 8..];
    }
    Ok(out)
}

/// Inflates raw deflate data: (the bytes, how much input they took).
fn inflate_raw(input: &[u8], limit: usize) -> std::result::Result<(Vec<u8>, usize), String> {
    use miniz_oxide::inflate::core::inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
    use miniz_oxide::inflate::TINFLStatus;
    let mut d = DecompressorOxide::new();
    let mut out = vec![0u8; input.len().saturating_mul(4).clamp(4096, limit.max(4096))];
    let (mut in_pos, mut out_pos) = (0, 0);
    loop {
        let (status, used, written) = decompress(
            &mut d,
            &input[in_pos..],
            &mut out,
            out_pos,
            TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
        );
        in_pos += used;
        out_pos += written;
        match status {
            TINFLStatus::Done => {
                out.truncate(out_pos);
                return Ok((out, in_pos));
            }
            TINFLStatus::HasMoreOutput if out.len() < limit => {
                let grown = out.len().saturating_mul(2).min(limit);
                out.resize(grown, 0);
            }
            TINFLStatus::HasMoreOutput => {
                return Err(format!("inflates to more than {limit} bytes"))
            }
            TINFLStatus::NeedsMoreInput | TINFLStatus::FailedCannotMakeProgress => {
                return Err("truncated deflate data".into())
            }
            s => return Err(format!("corrupt deflate data ({s:?})")),
        }
    }
}

/// CRC-32 (IEEE, reflected), as gzip's trailer has it.
pub fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    !data.iter().fold(!0u32, |c, &b| {
        table[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8)
    })
}

/// A regular file of known size read piece by piece (`pread`), each piece
/// appended to a buffer: for formats whose readers need only some of the
/// file (a BPF object's code and BTF, not its DWARF).
pub struct Pieces {
    file: File,
    size: u64,
}

impl Pieces {
    /// Opens `path`; `None` when it is not a regular file with a size
    /// (read those whole with [`read_file`]).
    pub fn open(path: &Path, limit: usize, what: &str) -> Result<Option<Pieces>> {
        let file = File::open(path)
            .map_err(|e| Error::io(&e, format!("cannot open {}", path.display())))?;
        let meta = file
            .metadata()
            .map_err(|e| Error::io(&e, format!("cannot stat {}", path.display())))?;
        if !meta.is_file() || meta.len() == 0 {
            return Ok(None);
        }
        if meta.len() > limit as u64 {
            return Err(too_large(path, what, limit));
        }
        Ok(Some(Pieces {
            file,
            size: meta.len(),
        }))
    }

    /// The file's size when opened.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends bytes `off..off + len` of the file (clamped to its size at
    /// open) to `out`. A file that shrank since [`Pieces::open`] gives
    /// zeros for what it lost: the format's reader finds it malformed.
    pub fn append(&self, off: u64, len: u64, out: &mut Vec<u8>) -> Result<()> {
        let start = off.min(self.size);
        let want = (off.saturating_add(len).min(self.size) - start) as usize;
        let got = super::sys::pread_append(&self.file, start, want, out)
            .map_err(|e| Error::io(&e, "cannot read the file"))?;
        out.resize(out.len() + (want - got), 0);
        Ok(())
    }

    /// Bytes `off..off + len` (clamped as [`Pieces::append`]).
    pub fn read(&self, off: u64, len: u64) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.append(off, len, &mut v)?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::NOT_FOUND;

    #[test]
    fn missing_file_is_not_found_with_path() {
        let e = read_file(Path::new("/nonexistent/kallsyms"), 1, 1 << 20, "t").unwrap_err();
        assert_eq!(e.code(), NOT_FOUND);
        assert!(e.message().contains("/nonexistent/kallsyms"));
    }

    #[test]
    fn directory_is_an_io_error() {
        let e = read_file(Path::new("/"), 1, 1 << 20, "t").unwrap_err();
        assert_eq!(e.code(), -libc::EISDIR, "{e:?}");
    }

    #[test]
    fn reads_proc_files_whole() {
        let b = read_file(Path::new("/proc/self/maps"), 1, 1 << 20, "t").unwrap();
        assert!(b.ends_with(b"\n"));
        assert!(b.capacity() > b.len());
    }

    #[test]
    fn gzip_as_gzip_writes_it() {
        // Oracle: the gzip(1) tool. Two members, a file name, and the
        // empty input.
        let dir = std::env::temp_dir().join(format!("ksym-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plain: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("CONFIG_{i}=y\n").into_bytes())
            .collect();
        let p = dir.join("config");
        std::fs::write(&p, &plain).unwrap();
        let st = std::process::Command::new("gzip")
            .arg("-kf")
            .arg(&p)
            .status();
        if !st.is_ok_and(|s| s.success()) {
            panic!("gzip(1) is needed by this test");
        }
        let gz = dir.join("config.gz");
        assert_eq!(read_maybe_gzip(&gz).unwrap(), plain);
        // A plain file is returned as it is.
        assert_eq!(read_maybe_gzip(&p).unwrap(), plain);
        // Two members concatenated, as `cat a.gz b.gz` makes.
        let one = std::fs::read(&gz).unwrap();
        let two = [one.clone(), one.clone()].concat();
        assert_eq!(
            gunzip(&two).unwrap(),
            [plain.clone(), plain.clone()].concat()
        );
        // Every truncation is an error, never a panic.
        for cut in [1, 10, 17, one.len() / 2, one.len() - 8, one.len() - 1] {
            assert!(gunzip(&one[..cut]).is_err(), "cut at {cut}");
        }
        // A flipped byte in the data fails the CRC or the inflate.
        let mut bad = one.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x55;
        assert!(gunzip(&bad).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn crc32_of_known_strings() {
        // The check value of CRC-32/ISO-HDLC (the catalogue of Greg Cook).
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn endless_and_huge_inputs_stop_at_the_limit() {
        // /dev/zero never ends and has no size: the limit stops it.
        let e = read_file(Path::new("/dev/zero"), 0, 1 << 20, "a test input").unwrap_err();
        assert_eq!(e.code(), crate::error::FORMAT);
        assert!(
            e.message().contains("/dev/zero") && e.message().contains("1 MiB"),
            "{e}"
        );
        // A regular file larger than the limit: refused from its size.
        let e = read_file(Path::new("/proc/self/exe"), 0, 4096, "a test input").unwrap_err();
        assert!(e.message().contains("too large"), "{e}");
    }

    /// Pieces are appended as asked, clamped to the file, and a file that
    /// shrank gives zeros. Oracle: the bytes written to the file.
    #[test]
    fn pieces_append_what_is_asked() {
        let dir = std::env::temp_dir().join(format!("ksym-pieces-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8 + 1).collect();
        std::fs::write(&path, &data).unwrap();
        let f = Pieces::open(&path, 1 << 20, "a test file")
            .unwrap()
            .unwrap();
        assert_eq!(f.size(), data.len() as u64);
        let mut out = b"xy".to_vec();
        f.append(100, 50, &mut out).unwrap();
        f.append(9_990, 100, &mut out).unwrap();
        f.append(20_000, 10, &mut out).unwrap();
        f.append(u64::MAX - 1, 10, &mut out).unwrap();
        let want: Vec<u8> = [&b"xy"[..], &data[100..150], &data[9_990..]].concat();
        assert_eq!(out, want);
        assert_eq!(f.read(0, 3).unwrap(), &data[..3]);
        // Shrunk under the reader: the lost bytes read as zeros.
        std::fs::write(&path, &data[..5_000]).unwrap();
        let got = f.read(4_990, 20).unwrap();
        assert_eq!(&got[..10], &data[4_990..5_000]);
        assert_eq!(&got[10..], &[0u8; 10]);
        // Over the limit: refused; a directory or an empty file: none.
        assert!(Pieces::open(&path, 100, "a test file").is_err());
        assert!(Pieces::open(&dir, 1 << 20, "a test file")
            .unwrap()
            .is_none());
        std::fs::write(&path, b"").unwrap();
        assert!(Pieces::open(&path, 1 << 20, "a test file")
            .unwrap()
            .is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
