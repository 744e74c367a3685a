//! Reading a BPF object file: only the sections the reader uses.
//!
//! Objects built with `-g` carry DWARF (often several times the size of
//! the code) and every object carries `.rel.BTF.ext` (as large as its
//! `.BTF.ext`); [`super::elf::load`] reads neither. The file is read
//! sparsely into a buffer of its size, at the same offsets: the ELF header,
//! the section headers, the section names, then every section but those.
//! Anything unexpected (not 64-bit little-endian ELF, extended section
//! numbering, headers out of the file) reads the whole file, so that the
//! reader reports it as it would.

use std::path::Path;

use crate::base::read::{self, limits, Sparse};
use crate::error::Result;

const EHDR_SIZE: u64 = 64;
const SHDR_SIZE: u64 = 64;
const SHT_NOBITS: u32 = 8;

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

/// The bytes of the object at `path` the reader needs, at their offsets.
pub(super) fn read_object(path: &Path) -> Result<Vec<u8>> {
    let what = "a BPF object";
    let Some(mut f) = Sparse::open(path, limits::BPF_OBJECT, what)? else {
        return read::read_file(path, 0, limits::BPF_OBJECT, what);
    };
    let ctx = |e: crate::error::Error| e.context(path.display());
    if !sparse_sections(&mut f).map_err(ctx)? {
        let n = f.len() as u64;
        f.fill(0, n).map_err(ctx)?;
    }
    Ok(f.into_bytes())
}

/// Fills the header, section headers, names and used sections; false when
/// the file is not laid out as expected (then the caller reads it whole).
fn sparse_sections(f: &mut Sparse) -> Result<bool> {
    let h = f.fill(0, EHDR_SIZE)?.to_vec();
    if h.len() < EHDR_SIZE as usize || &h[..4] != b"\x7fELF" || h[4] != 2 || h[5] != 1 {
        return Ok(false);
    }
    let (shoff, shentsize, shnum, shstrndx) = (
        u64_at(&h, 0x28),
        u16_at(&h, 0x3a),
        u16_at(&h, 0x3c),
        u16_at(&h, 0x3e),
    );
    let size = f.len() as u64;
    let table = shnum * SHDR_SIZE;
    if shentsize != SHDR_SIZE
        || shnum == 0
        || shstrndx >= shnum
        || shoff.checked_add(table).is_none_or(|end| end > size)
    {
        return Ok(false);
    }
    let shdrs = f.fill(shoff, table)?.to_vec();
    let sec = |i: u64| {
        let o = (i * SHDR_SIZE) as usize;
        // (name, type, offset, size)
        (
            u32_at(&shdrs, o),
            u32_at(&shdrs, o + 4),
            u64_at(&shdrs, o + 24),
            u64_at(&shdrs, o + 32),
        )
    };
    let (_, _, str_off, str_size) = sec(shstrndx);
    let names = f.fill(str_off, str_size)?.to_vec();
    for i in 0..shnum {
        let (name_off, ty, off, len) = sec(i);
        if ty == SHT_NOBITS || i == shstrndx {
            continue;
        }
        let name = names
            .get(name_off as usize..)
            .map(|n| &n[..memchr::memchr(0, n).unwrap_or(n.len())])
            .unwrap_or_default();
        if !unused(name) {
            f.fill(off, len)?;
        }
    }
    Ok(true)
}
