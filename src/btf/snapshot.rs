//! BTF snapshots: what reading vmlinux's BTF costs beyond the bytes (the
//! one-pass check of its ~130k types, where each starts, and the name
//! index), written once per boot and mapped by every later
//! `ksym_btf_open`: ~0.2 ms instead of ~5 ms. Within one boot the kernel's
//! BTF never changes (modules' BTF does: it is read as without a
//! snapshot, when first needed). A payload of the snapshot container
//! ([`crate::base::snapshot`]), which checks the header, the checksum and
//! the key, and holds the trust rules.
//!
//! Valid for one key: the boot id, the kernel's release and version, the
//! source's path and identity (device, inode, size, mtime), the BTF's
//! length and a hash of its first and last 4 KiB. The bytes themselves are
//! read (or mapped) from the source as without a snapshot; the snapshot
//! gives only what was computed from them.
//!
//! Trust: the private-file rules of [`crate::base::snapshot::trust`] (effective
//! uid 0 only; BTF holds no secret, but only a file that nobody else can
//! write may stand in for the check). `/run/ksym` holds the running
//! kernel's only; a `vmlinux_btf_path` gets one only in a `snapshot_dir`
//! named for it.
//!
//! Format (native little-endian, version 3):
//!
//! ```text
//! 0    "KSYMBTFS", version u32, header length u32 (= 256)
//! 16   file length u64, checksum u64 (of the header's bytes 32..256 and
//!      the checked part)
//! 32   u64s: the checked part's start and end; (offset, count) of the
//!      key (bytes), the flavored names ((hash, id) as two u64s each), the
//!      type offsets (u32), the index slots (u64, each entry a type id);
//!      the index's parts, part length and index bits; the slots' checksum
//! 256  the checked part: key, flavored names; then the type offsets and
//!      slots (~1.3 MB for 6.18, not in the checksum checked at open). The
//!      offsets are checked for order and bounds at every open (0.5 MB
//!      read); the slots are read with bounds checks and each entry must be
//!      a type with the slot's name (never another type), and their own
//!      checksum is checked on the first lookup: when it fails, lookups go
//!      to an index rebuilt from the blob, so a damaged slot loses no
//!      answer ([`NameIndexedBtf`]).
//! ```

use std::path::Path;
use std::sync::Arc;

use super::{NameIndexedBtf, Options};
use crate::base::hash::{hash, NameIndex};
use crate::base::le;
use crate::base::mapped::Store;
use crate::base::snapshot::trust::{self, identity, push_str};
pub use crate::base::snapshot::SnapshotInfo;
use crate::base::snapshot::{Checked, Format, Header, Plan, HEADER};
use crate::formats::btf::Btf;

/// BTF snapshots in the container: the checksum hashes with [`hash`].
const FORMAT: Format = Format {
    magic: b"KSYMBTFS",
    version: 3,
    sum: hash,
};
/// The header's u64 fields after byte 32.
const FIELDS: usize = 14;

fn le(v: u64) -> [u8; 8] {
    v.to_le_bytes()
}

/// What the snapshot is a snapshot of: hashes of the BTF's first and last
/// 4 KiB and its length (the header holds the section lengths; the end,
/// the last strings).
fn content_key(data: &[u8]) -> [u64; 3] {
    let n = data.len();
    [
        n as u64,
        hash(&data[..n.min(4096)]),
        hash(&data[n.saturating_sub(4096)..]),
    ]
}

/// The plan for vmlinux's BTF read from `source` (`data`), or why there
/// is none.
pub fn plan(opts: &Options, source: &Path, data: &[u8]) -> Result<Plan, String> {
    let dir = trust::place(
        opts.snapshot.no_snapshot.then_some("KSYM_BTF_NO_SNAPSHOT"),
        opts.vmlinux_btf_path
            .is_some()
            .then_some("vmlinux_btf_path"),
        opts.snapshot.snapshot_dir.as_deref(),
        || (crate::base::sys::euid() != 0).then_some("needs euid 0"),
    )?;
    let mut what = Vec::new();
    push_str(&mut what, source.as_os_str().as_encoded_bytes());
    let mut key = what.clone();
    key.extend_from_slice(&trust::boot_key(opts.snapshot.boot_id_path.as_deref())?);
    for v in identity(source).into_iter().chain(content_key(data)) {
        key.extend_from_slice(&le(v));
    }
    Ok(Plan::new(dir, "btf", &what, key))
}

/// vmlinux's BTF from `data` with the check and index of a valid
/// snapshot; `data` back with the reason when there is none.
pub fn load(plan: &Plan, data: Store<u8>) -> Result<(NameIndexedBtf, usize), (String, Store<u8>)> {
    let c = match plan.open(&FORMAT) {
        Ok(c) => c,
        Err(why) => return Err((why, data)),
    };
    let map = &c.map;
    let Some(parts) = Parts::read(&c) else {
        return Err((plan.damaged(), data));
    };
    let views = (|| {
        let offsets: Store<u32> = Store::mapped(map, parts.offsets.0, parts.offsets.1)?;
        let slots = Store::mapped(map, parts.slots.0, parts.slots.1)?;
        let index = NameIndex::from_parts(slots, parts.index.0, parts.index.1, parts.index.2)?;
        let own = 1..1 + u32::try_from(offsets.len()).ok()?;
        NameIndexedBtf::fits(own, &parts.flavored).then_some((offsets, index))
    })();
    let Some((offsets, index)) = views else {
        return Err((plan.damaged(), data));
    };
    match Btf::with_offsets(data, offsets) {
        Ok(btf) => Ok((
            NameIndexedBtf::from_parts(Arc::new(btf), index, parts.flavored, parts.slots_sum),
            c.len,
        )),
        Err((e, data)) => Err((
            format!("{}: {}: not used", plan.path().display(), e.message()),
            data,
        )),
    }
}

/// Writes the snapshot of `ix` (vmlinux's BTF, checked and indexed);
/// returns its size.
pub fn write(plan: &Plan, ix: &NameIndexedBtf) -> Result<usize, String> {
    use std::os::unix::fs::FileExt;
    let temp = plan.temp("btf")?;
    let (index, flavored) = ix.parts();
    let (slots, parts, part_len, idx_bits) = index.parts();
    let offsets = ix.btf.type_offsets();
    let mut chk = Vec::new();
    let mut sec = |bytes: &[u8]| -> u64 {
        while chk.len() % 8 != 0 {
            chk.push(0);
        }
        let at = (HEADER + chk.len()) as u64;
        chk.extend_from_slice(bytes);
        at
    };
    let key_at = sec(plan.key());
    let flav: Vec<u8> = flavored
        .iter()
        .flat_map(|&(h, id)| le(h).into_iter().chain(le(id as u64)))
        .collect();
    let flav_at = sec(&flav);
    let chk_end = (HEADER + chk.len()) as u64;
    let offs_at = chk_end.next_multiple_of(8);
    let offs_b = offsets.as_bytes();
    let slots_at = (offs_at + offs_b.len() as u64).next_multiple_of(8);
    let slots_b = slots.as_bytes();
    let total = slots_at + slots_b.len() as u64;
    let fields: [u64; FIELDS] = [
        HEADER as u64,
        chk_end,
        key_at,
        plan.key().len() as u64,
        flav_at,
        flavored.len() as u64,
        offs_at,
        offsets.len() as u64,
        slots_at,
        slots.len() as u64,
        parts as u64,
        part_len as u64,
        idx_bits as u64,
        super::index::slots_sum(index),
    ];
    let header = Header {
        total,
        fields: &fields,
        checked: &chk,
    };
    plan.write(temp, &FORMAT, header, |f| {
        f.write_all_at(&chk, HEADER as u64)?;
        f.write_all_at(offs_b, offs_at)?;
        f.write_all_at(slots_b, slots_at)
    })
}

/// Where the arrays of a snapshot are, read from a header that checked.
struct Parts {
    /// (byte offset, count) of each array.
    offsets: (usize, usize),
    slots: (usize, usize),
    /// The name index's parts, part length and index bits.
    index: (usize, usize, u32),
    flavored: Vec<(u64, u32)>,
    slots_sum: u64,
}

impl Parts {
    /// The parts of a snapshot whose header and key checked
    /// ([`Plan::open`]), if its checked part starts right after the header
    /// and every section is inside the file.
    fn read(c: &Checked) -> Option<Parts> {
        if c.checked.start != HEADER {
            return None;
        }
        let f = |i: usize| c.field(i).map(|v| v as usize);
        let inside = |at: usize, len: usize| c.section(at, len);
        let flav = inside(f(4)?, f(5)?.checked_mul(16)?)?;
        let flavored = flav
            .chunks_exact(16)
            .map(|c| {
                let h = le::get_u64(c, 0)?;
                let id = u32::try_from(le::get_u64(c, 8)?).ok()?;
                Some((h, id))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Parts {
            offsets: (f(6)?, f(7)?),
            slots: (f(8)?, f(9)?),
            index: (f(10)?, f(11)?, u32::try_from(f(12)?).ok()?),
            flavored,
            slots_sum: c.field(13)?,
        })
    }
}
