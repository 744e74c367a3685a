//! Reading a BPF object file: only the sections the reader uses.
//!
//! Objects built with `-g` carry DWARF (often several times the size of
//! the code) and every object carries `.rel.BTF.ext` (as large as its
//! `.BTF.ext`); [`super::elf::load`] reads neither. The file is read into
//! a compact ELF image of what the reader uses: the ELF header, the
//! section headers (offsets rewritten to the image's, the unused sections'
//! emptied), then each used section in file order, 8-aligned, read with
//! `pread` straight into the buffer (nothing zeroed first, no byte read
//! twice). The reader sees an ELF file with the same sections, names and
//! contents. Anything unexpected (not 64-bit little-endian ELF, extended
//! section numbering, program headers, a section out of the file) reads
//! the whole file, so that the reader reports it as it would.

use std::path::Path;

use crate::base::read::{self, limits, Pieces};
use crate::error::Result;

const EHDR_SIZE: u64 = 64;
const SHDR_SIZE: u64 = 64;
const SHT_NOBITS: u32 = 8;
/// Offsets in the ELF header and in a section header.
const E_PHNUM: usize = 0x38;
const E_SHOFF: usize = 0x28;
const SH_OFFSET: usize = 24;
const SH_SIZE: usize = 32;

/// Sections [`super::elf::load`] never reads.
pub(super) fn unused(name: &[u8]) -> bool {
    let debug = |p: &[u8]| name.starts_with(p);
    debug(b".debug")
        || debug(b".rel.debug")
        || debug(b".rela.debug")
        || name == b".rel.BTF.ext"
        || name == b".rel.BTF"
        || name == b".llvm_addrsig"
}

fn u16_at(b: &[u8], o: usize) -> u64 {
    u16::from_le_bytes([b[o], b[o + 1]]) as u64
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]))
}
fn set_u64(b: &mut [u8], o: usize, v: u64) {
    b[o..o + 8].copy_from_slice(&v.to_le_bytes());
}

/// The object at `path` as the reader needs it: the compact image, or
/// the whole file.
pub(super) fn read_object(path: &Path) -> Result<Vec<u8>> {
    let what = "a BPF object";
    let Some(f) = Pieces::open(path, limits::BPF_OBJECT, what)? else {
        return read::read_file(path, 0, limits::BPF_OBJECT, what);
    };
    let ctx = |e: crate::error::Error| e.context(path.display());
    match compact(&f).map_err(ctx)? {
        Some(image) => Ok(image),
        None => f.read(0, f.size()).map_err(ctx),
    }
}

/// The compact image; `None` when the file is not laid out as expected
/// (then the caller reads it whole).
fn compact(f: &Pieces) -> Result<Option<Vec<u8>>> {
    let mut h = f.read(0, EHDR_SIZE)?;
    if h.len() < EHDR_SIZE as usize || &h[..4] != b"\x7fELF" || h[4] != 2 || h[5] != 1 {
        return Ok(None);
    }
    let (shoff, shentsize, shnum, shstrndx) = (
        u64_at(&h, E_SHOFF),
        u16_at(&h, 0x3a),
        u16_at(&h, 0x3c),
        u16_at(&h, 0x3e),
    );
    let size = f.size();
    let table = shnum * SHDR_SIZE;
    if shentsize != SHDR_SIZE
        || shnum == 0
        || shstrndx >= shnum
        || u16_at(&h, E_PHNUM) != 0
        || shoff.checked_add(table).is_none_or(|end| end > size)
    {
        return Ok(None);
    }
    let mut shdrs = f.read(shoff, table)?;
    let sec = |shdrs: &[u8], i: u64| {
        let o = (i * SHDR_SIZE) as usize;
        // (name, type, offset, size)
        (
            u32_at(shdrs, o),
            u32_at(shdrs, o + 4),
            u64_at(shdrs, o + SH_OFFSET),
            u64_at(shdrs, o + SH_SIZE),
        )
    };
    let within = |off: u64, len: u64| off.checked_add(len).is_some_and(|end| end <= size);
    let (_, _, str_off, str_size) = sec(&shdrs, shstrndx);
    if !within(str_off, str_size) {
        return Ok(None);
    }
    let names = f.read(str_off, str_size)?;
    // (file offset, length, section) of what is read, in file order.
    let mut keep: Vec<(u64, u64, u64)> = Vec::with_capacity(shnum as usize);
    for i in 0..shnum {
        let (name_off, ty, off, len) = sec(&shdrs, i);
        if ty == SHT_NOBITS {
            continue;
        }
        let name = names
            .get(name_off as usize..)
            .map(|n| &n[..memchr::memchr(0, n).unwrap_or(n.len())])
            .unwrap_or_default();
        if unused(name) && i != shstrndx {
            let o = (i * SHDR_SIZE) as usize;
            set_u64(&mut shdrs, o + SH_OFFSET, 0);
            set_u64(&mut shdrs, o + SH_SIZE, 0);
            continue;
        }
        if !within(off, len) {
            return Ok(None);
        }
        keep.push((off, len, i));
    }
    keep.sort_unstable();
    let mut end = EHDR_SIZE + table;
    for &(_, len, i) in &keep {
        end = end.next_multiple_of(8);
        set_u64(&mut shdrs, (i * SHDR_SIZE) as usize + SH_OFFSET, end);
        end += len;
    }
    set_u64(&mut h, E_SHOFF, EHDR_SIZE);
    let mut image = Vec::new();
    image
        .try_reserve_exact(end as usize)
        .map_err(|_| crate::error::Error::nomem("reading a BPF object"))?;
    image.extend_from_slice(&h);
    image.extend_from_slice(&shdrs);
    for &(off, len, _) in &keep {
        image.resize(image.len().next_multiple_of(8), 0);
        f.append(off, len, &mut image)?;
    }
    Ok(Some(image))
}
