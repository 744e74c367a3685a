//! Reading a BPF object file: only the sections the reader uses.
//!
//! Objects built with `-g` carry DWARF (often several times the size of
//! the code) and every object carries `.rel.BTF.ext` (as large as its
//! `.BTF.ext`); [`elf::Elf::parse`] reads neither. The file is read into
//! a compact ELF image of what the reader uses: the ELF header, the
//! section headers (offsets rewritten to the image's, the unused sections'
//! emptied), then each used section in file order, 8-aligned, read with
//! `pread` straight into the buffer (nothing zeroed first, no byte read
//! twice). The reader sees an ELF file with the same sections, names and
//! contents. Anything unexpected (not 64-bit little-endian ELF, extended
//! section numbering, program headers, a section out of the file) reads
//! the whole file, so that the reader reports it as it would.

use std::path::Path;

use object::elf::{self as E, FileHeader64, SectionHeader64};
use object::read::elf::{FileHeader as _, SectionHeader as _};
use object::{pod, LittleEndian as LE};

use crate::base::read::{self, limits, Pieces};
use crate::bpf::elf;
use crate::error::Result;

const EHDR_SIZE: u64 = 64;
const SHDR_SIZE: u64 = 64;

/// Sections [`elf::Elf::parse`] never reads.
pub(in crate::bpf) fn unused(name: &[u8]) -> bool {
    let debug = |p: &[u8]| name.starts_with(p);
    debug(b".debug")
        || debug(b".rel.debug")
        || debug(b".rela.debug")
        || name == b".rel.BTF.ext"
        || name == b".rel.BTF"
        || name == b".llvm_addrsig"
}

/// The object at `path` as the reader needs it: the compact image, or
/// the whole file.
pub(in crate::bpf) fn read_object(path: &Path) -> Result<Vec<u8>> {
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
/// (then the caller reads it whole, and [`elf::Elf::parse`] says what is wrong).
/// The header is checked by the reader's own [`elf::header`], and the
/// section headers are read and rewritten through `object`'s types.
fn compact(f: &Pieces) -> Result<Option<Vec<u8>>> {
    let mut h = f.read(0, EHDR_SIZE)?;
    let Ok((hdr, en)) = elf::header(&h) else {
        return Ok(None);
    };
    let (shoff, shentsize, shnum, shstrndx, phnum) = (
        hdr.e_shoff(en),
        u64::from(hdr.e_shentsize(en)),
        u64::from(hdr.e_shnum(en)),
        u64::from(hdr.e_shstrndx(en)),
        hdr.e_phnum(en),
    );
    let size = f.size();
    let table = shnum * SHDR_SIZE;
    if shentsize != SHDR_SIZE
        || shnum == 0
        || shstrndx >= shnum
        || phnum != 0
        || shoff.checked_add(table).is_none_or(|end| end > size)
    {
        return Ok(None);
    }
    let mut shdrs = f.read(shoff, table)?;
    let Ok((secs, _)) =
        pod::slice_from_bytes_mut::<SectionHeader64<LE>>(&mut shdrs, shnum as usize)
    else {
        return Ok(None);
    };
    let within = |off: u64, len: u64| off.checked_add(len).is_some_and(|end| end <= size);
    let strtab = &secs[shstrndx as usize];
    let (str_off, str_size) = (strtab.sh_offset(en), strtab.sh_size(en));
    if !within(str_off, str_size) {
        return Ok(None);
    }
    let names = f.read(str_off, str_size)?;
    // (file offset, length, section) of what is read, in file order.
    let mut keep: Vec<(u64, u64, usize)> = Vec::with_capacity(shnum as usize);
    for (i, sh) in secs.iter_mut().enumerate() {
        if sh.sh_type(en) == E::SHT_NOBITS {
            continue;
        }
        let (off, len) = (sh.sh_offset(en), sh.sh_size(en));
        let name = names
            .get(sh.sh_name(en) as usize..)
            .map(|n| &n[..memchr::memchr(0, n).unwrap_or(n.len())])
            .unwrap_or_default();
        if unused(name) && i as u64 != shstrndx {
            sh.sh_offset.set(en, 0);
            sh.sh_size.set(en, 0);
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
        secs[i].sh_offset.set(en, end);
        end += len;
    }
    let Ok((hdr, _)) = pod::from_bytes_mut::<FileHeader64<LE>>(&mut h) else {
        return Ok(None);
    };
    hdr.e_shoff.set(en, EHDR_SIZE);
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
