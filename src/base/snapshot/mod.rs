//! The snapshot container: one file format, one set of trust rules and one
//! way to write and map, for what libksym keeps between the processes of
//! one boot. Two payloads use it: the table's snapshot (`table/snapshot.rs`)
//! and the BTF snapshot (`btf/snapshot.rs`); each says what its key holds,
//! what its header's fields and sections are, and how it reads them back.
//!
//! The container's part of every file (native little-endian):
//!
//! ```text
//! 0    the payload's magic (8 bytes), its version u32, header length u32
//!      (= 256)
//! 16   file length u64, checksum u64 (of the header's bytes 32..256 and
//!      the checked part, with the payload's hash)
//! 32   u64 fields: the checked part's start and end, then the key's
//!      (offset, length), which must lie in the checked part; then the
//!      payload's own fields, up to byte 256
//! ...  the checked part (at byte 256 or later) and the payload's other
//!      sections, where its fields say
//! ```
//!
//! Trust ([`trust`]): a private directory and private files of the
//! effective uid, written unnamed (`O_TMPFILE`) and linked or renamed into
//! place whole. A file that fails any check (trust, magic, version,
//! lengths, checksum, key) is not used: the caller reads its sources as
//! without one. Writing off the caller's path: [`background`].

pub mod background;
pub mod trust;

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::hash::hash;
use super::le;
use super::mapped::Mapping;
use trust::{Dir, Opened, Temp};
pub use trust::{SnapshotInfo, DEFAULT_DIR};

/// What the table and the BTF are told of their snapshots: the options
/// both share (`TableOptions::snapshot`, `BtfOptions::snapshot`).
#[derive(Clone, Debug, Default)]
pub struct SnapshotOptions {
    /// Neither read nor write a snapshot (`KSYM_TABLE_NO_SNAPSHOT`,
    /// `KSYM_BTF_NO_SNAPSHOT`).
    pub no_snapshot: bool,
    /// Where snapshots live. Default: /run/ksym.
    pub snapshot_dir: Option<PathBuf>,
    /// The boot id a snapshot is keyed by (tests: a fake one). Default:
    /// /proc/sys/kernel/random/boot_id.
    pub boot_id_path: Option<PathBuf>,
}

/// The header's length; the payload's fields end before it.
pub const HEADER: usize = 256;

/// What tells one payload's files from another's, and how its checksum is
/// made.
pub struct Format {
    pub magic: &'static [u8; 8],
    /// A file of another version is not used (and is replaced).
    pub version: u32,
    /// The hash the checksum is made of: the header's bytes 32..256 and
    /// the checked part are each hashed with it.
    pub sum: fn(&[u8]) -> u64,
}

impl Format {
    /// The checksum of a header (but its checksum field) and checked part.
    fn checksum(&self, header: &[u8], checked: &[u8]) -> u64 {
        (self.sum)(&header[32..HEADER]) ^ (self.sum)(checked).rotate_left(17)
    }

    /// The header of a file of `total` bytes: `fields` from byte 32 (the
    /// checked part's start and end first, then the key's offset and
    /// length), `checked` the checked part's bytes.
    fn header(&self, total: u64, fields: &[u64], checked: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; HEADER];
        h[0..8].copy_from_slice(self.magic);
        h[8..12].copy_from_slice(&self.version.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER as u32).to_le_bytes());
        h[16..24].copy_from_slice(&total.to_le_bytes());
        for (i, v) in fields.iter().enumerate() {
            h[32 + 8 * i..40 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
        let sum = self.checksum(&h, checked);
        h[24..32].copy_from_slice(&sum.to_le_bytes());
        h
    }
}

/// Where one snapshot lives and the key it must match.
#[derive(Clone)]
pub struct Plan {
    dir: PathBuf,
    path: PathBuf,
    key: Vec<u8>,
}

/// A snapshot whose header checked (magic, version, lengths, checksum and
/// key), mapped whole.
pub struct Checked {
    pub map: Arc<Mapping>,
    /// The file's length.
    pub len: usize,
    /// Where the checked part is.
    pub checked: Range<usize>,
}

impl Checked {
    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        self.map.bytes()
    }

    /// The header's u64 field `i` (0 at byte 32).
    pub fn field(&self, i: usize) -> Option<u64> {
        le::get_u64(self.bytes(), 32 + 8 * i)
    }

    /// The `len` bytes at `at`, if they lie in the checked part.
    pub fn section(&self, at: usize, len: usize) -> Option<&[u8]> {
        section(self.bytes(), &self.checked, at, len)
    }
}

fn section<'b>(b: &'b [u8], checked: &Range<usize>, at: usize, len: usize) -> Option<&'b [u8]> {
    (at >= checked.start && at.checked_add(len)? <= checked.end).then(|| &b[at..at + len])
}

/// The header's sections and what it says of them, for
/// [`Plan::write`].
pub struct Header<'a> {
    /// The file's length.
    pub total: u64,
    /// The u64 fields from byte 32: the checked part's start and end, the
    /// key's offset and length, then the payload's own.
    pub fields: &'a [u64],
    /// The checked part's bytes.
    pub checked: &'a [u8],
}

impl Plan {
    /// The plan for a snapshot in `dir`, named `{stem}-{hash of what}.snap`
    /// (`what`: which source and options), valid for `key` alone.
    pub fn new(dir: PathBuf, stem: &str, what: &[u8], key: Vec<u8>) -> Plan {
        Plan {
            path: dir.join(format!("{stem}-{:016x}.snap", hash(what))),
            dir,
            key,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The snapshot, if it is trusted and its header checks with `format`
    /// and the key; else why not.
    pub fn open(&self, format: &Format) -> Result<Checked, String> {
        let dir = Dir::trusted(&self.dir)?;
        let Opened { map, len } = dir.open(&self.path, HEADER)?;
        check(map, len, format, &self.key).ok_or_else(|| self.damaged())
    }

    /// Why a file that was opened is not used.
    pub fn damaged(&self) -> String {
        format!(
            "{}: stale, foreign or damaged: not used",
            self.path.display()
        )
    }

    /// A new file for the snapshot (`stem`: what it is, for a temporary
    /// name), in the directory, which is made if missing.
    pub fn temp(&self, stem: &str) -> Result<Temp, String> {
        Dir::make(&self.dir)?.temp(stem)
    }

    /// Finishes the snapshot begun in `temp`: `sections` writes the
    /// payload's sections (the checked part too), then the header goes at
    /// byte 0, and the file is put in place (atomically: a reader sees the
    /// old file, the new one or none). Returns its size; on failure the
    /// file is given up.
    pub fn write(
        &self,
        temp: Temp,
        format: &Format,
        header: Header<'_>,
        sections: impl FnOnce(&File) -> std::io::Result<()>,
    ) -> Result<usize, String> {
        use std::os::unix::fs::FileExt;
        let dir = match Dir::trusted(&self.dir) {
            Ok(dir) => dir,
            Err(e) => {
                temp.discard();
                return Err(e);
            }
        };
        let h = format.header(header.total, header.fields, header.checked);
        let f = &temp.file;
        let written = sections(f)
            .and_then(|_| f.write_all_at(&h, 0))
            .and_then(|_| f.set_len(header.total));
        match written {
            Ok(()) => dir.commit(temp, &self.path).map(|_| header.total as usize),
            Err(e) => {
                temp.discard();
                Err(e)
            }
        }
        .map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

/// `map` as a snapshot of `format` for `key`: magic, version, header and
/// file length, checksum, and the key in the checked part.
fn check(map: Arc<Mapping>, len: usize, format: &Format, key: &[u8]) -> Option<Checked> {
    let b = map.bytes();
    if b.get(0..8)? != format.magic
        || le::get_u32(b, 8)? != format.version
        || le::get_u32(b, 12)? as usize != HEADER
        || le::get_u64(b, 16)? as usize != b.len()
    {
        return None;
    }
    let f = |i: usize| le::get_u64(b, 32 + 8 * i).map(|v| v as usize);
    let checked = f(0)?..f(1)?;
    let chk = b.get(checked.clone())?;
    if checked.start < HEADER || format.checksum(&b[..HEADER], chk) != le::get_u64(b, 24)? {
        return None;
    }
    if section(b, &checked, f(2)?, f(3)?)? != key {
        return None;
    }
    Some(Checked { map, len, checked })
}
