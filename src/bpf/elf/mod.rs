//! The ELF layer of an object (libbpf's `bpf_object__elf_init`): the
//! header checked, the sections and symbols read, with what the loader
//! needs of them. Nothing here knows programs or maps: the phases of
//! [`crate::bpf::open`] and the files they use build on it.

pub(crate) mod btf_ext;
pub(in crate::bpf) mod file;

use std::ffi::CString;

use object::elf::{self as E, FileHeader64};
use object::read::elf::{FileHeader, Rel as _, SectionHeader, SectionTable, Sym as _};
use object::LittleEndian as LE;

use crate::error::{Error, Result};

/// A section, with what the loader needs.
pub(super) struct Sec<'a> {
    pub name: &'a [u8],
    pub sh_type: u32,
    pub flags: u64,
    pub size: u64,
    /// Contents (empty for NOBITS).
    pub data: &'a [u8],
    pub info: u32,
}

/// A symbol.
pub(super) struct Sym<'a> {
    pub name: &'a [u8],
    pub value: u64,
    pub size: u64,
    pub shndx: u16,
    pub bind: u8,
    pub ty: u8,
    pub vis: u8,
}

/// An object's ELF: its sections and symbols, and the section table for
/// the relocations read later.
pub(super) struct Elf<'a> {
    data: &'a [u8],
    en: LE,
    table: SectionTable<'a, FileHeader64<LE>>,
    pub secs: Vec<Sec<'a>>,
    pub syms: Vec<Sym<'a>>,
}

pub(super) fn format_err(e: object::read::Error) -> Error {
    Error::format(format!("malformed ELF: {e}"))
}

pub(super) fn cstring(b: &[u8]) -> CString {
    crate::base::bytes::c_string(b)
}

/// The header of a 64-bit little-endian `EM_BPF` relocatable object,
/// checked in its own words before `object` reads it.
pub(super) fn header(data: &[u8]) -> Result<(&FileHeader64<LE>, LE)> {
    if data.len() < 20 || &data[..4] != b"\x7fELF" {
        return Err(Error::format("not an ELF file"));
    }
    if data[4] != E::ELFCLASS64 {
        return Err(Error::unsupported("a 32-bit ELF: BPF objects are 64-bit"));
    }
    if data[5] != E::ELFDATA2LSB {
        return Err(Error::unsupported(
            "a big-endian ELF: only little-endian BPF objects are supported",
        ));
    }
    let hdr = FileHeader64::<LE>::parse(data).map_err(format_err)?;
    let en = hdr.endian().map_err(format_err)?;
    let machine = hdr.e_machine(en);
    if machine != E::EM_BPF {
        return Err(Error::unsupported(format!(
            "not a BPF object: ELF machine {machine}, expected EM_BPF (247)"
        )));
    }
    if hdr.e_type(en) != E::ET_REL {
        return Err(Error::unsupported("not a relocatable object (ET_REL)"));
    }
    Ok((hdr, en))
}

impl<'a> Elf<'a> {
    /// `elf_init`: the header checked, every section and symbol read
    /// (offsets and indices checked by `object`).
    pub fn parse(data: &'a [u8]) -> Result<Elf<'a>> {
        let (hdr, en) = header(data)?;
        let table = hdr.sections(en, data).map_err(format_err)?;
        let mut secs: Vec<Sec<'_>> = Vec::with_capacity(table.len());
        for (i, sh) in table.iter().enumerate() {
            let name = table.section_name(en, sh).map_err(format_err)?;
            let sh_type = sh.sh_type(en);
            let body = if sh_type == E::SHT_NOBITS {
                &[][..]
            } else {
                sh.data(en, data).map_err(|_| {
                    Error::format(format!(
                        "section {i} (`{}`) lies outside the file",
                        String::from_utf8_lossy(name)
                    ))
                })?
            };
            secs.push(Sec {
                name,
                sh_type,
                flags: sh.sh_flags(en),
                size: sh.sh_size(en),
                data: body,
                info: sh.sh_info(en),
            });
        }
        let symtab = table.symbols(en, data, E::SHT_SYMTAB).map_err(format_err)?;
        if symtab.is_empty() {
            return Err(Error::format("no symbol table (a stripped object?)"));
        }
        let strings = symtab.strings();
        let mut syms: Vec<Sym<'_>> = Vec::with_capacity(symtab.len());
        for s in symtab.symbols() {
            syms.push(Sym {
                name: s.name(en, strings).map_err(format_err)?,
                value: s.st_value(en),
                size: s.st_size(en),
                shndx: s.st_shndx(en),
                bind: s.st_bind(),
                ty: s.st_type(),
                vis: s.st_visibility(),
            });
        }
        Ok(Elf {
            data,
            en,
            table,
            secs,
            syms,
        })
    }

    /// The index of the section named `name`.
    pub fn by_name(&self, name: &[u8]) -> Option<usize> {
        self.secs.iter().position(|s| s.name == name)
    }

    /// Whether section `i` holds code.
    pub fn is_code(&self, i: usize) -> bool {
        let s = &self.secs[i];
        s.sh_type == E::SHT_PROGBITS && s.flags & E::SHF_EXECINSTR as u64 != 0
    }

    /// The (offset, symbol index, type) of each entry of REL section `ri`.
    pub fn rels(&self, ri: usize) -> Result<Vec<(u64, usize, u32)>> {
        let sh = self
            .table
            .section(object::SectionIndex(ri))
            .map_err(format_err)?;
        let en = self.en;
        Ok(match sh.rel(en, self.data).map_err(format_err)? {
            Some((rels, _)) => rels
                .iter()
                .map(|r| (r.r_offset(en), r.r_sym(en) as usize, r.r_type(en)))
                .collect(),
            None => Vec::new(),
        })
    }
}
