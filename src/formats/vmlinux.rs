//! Exact symbol sizes from a vmlinux ELF symbol table (read with `object`).
//!
//! Only the symbol table is used, so a vmlinux reduced with
//! `objcopy --extract-symbol` works as well as the full debug image.

use std::path::Path;

use object::{Object, ObjectSymbol, SymbolKind};

use crate::base::read::read_file;
use crate::error::{Error, Result};

/// One sized symbol of the ELF.
#[derive(Clone, Debug)]
pub struct ElfSym {
    pub name: Vec<u8>,
    pub value: u64,
    pub size: u64,
    pub global: bool,
}

/// The defined text and data symbols of a vmlinux.
#[derive(Clone, Debug)]
pub struct ElfSymbols {
    /// The address of `_text` in the ELF (the KASLR slide is measured from it).
    pub text: Option<u64>,
    pub symbols: Vec<ElfSym>,
}

impl ElfSymbols {
    pub fn read(path: &Path) -> Result<ElfSymbols> {
        let data = read_file(path, 0, crate::base::read::limits::ELF, "a vmlinux ELF")?;
        Self::parse(&data).map_err(|e| e.context(path.display()))
    }

    pub fn parse(data: &[u8]) -> Result<ElfSymbols> {
        let file = object::File::parse(data)
            .map_err(|e| Error::format(format!("not a readable ELF file: {e}")))?;
        if file.format() != object::BinaryFormat::Elf {
            return Err(Error::format("not an ELF file"));
        }
        let mut anchors = Vec::new();
        let mut symbols = Vec::new();
        for s in file.symbols() {
            let Ok(name) = s.name_bytes() else { continue };
            if name.is_empty() || s.is_undefined() {
                continue;
            }
            if name == b"_text" {
                anchors.push((s.address(), s.is_global()));
            }
            if !matches!(
                s.kind(),
                SymbolKind::Text | SymbolKind::Data | SymbolKind::Unknown
            ) {
                continue;
            }
            symbols.push(ElfSym {
                name: name.to_vec(),
                value: s.address(),
                size: s.size(),
                global: s.is_global(),
            });
        }
        if symbols.is_empty() {
            return Err(Error::format("no symbol table"));
        }
        let text = anchor(&anchors)?;
        Ok(ElfSymbols { text, symbols })
    }
}

/// The address the KASLR slide is measured from: the global `_text` (as
/// kallsyms lists it), or a local one where there is no global. Two
/// different ones of the same binding make every size a guess.
fn anchor(anchors: &[(u64, bool)]) -> Result<Option<u64>> {
    let any_global = anchors.iter().any(|a| a.1);
    let mut chosen = anchors.iter().filter(|a| a.1 == any_global).map(|a| a.0);
    let Some(first) = chosen.next() else {
        return Ok(None);
    };
    if let Some(other) = chosen.find(|&a| a != first) {
        let binding = if any_global { "global" } else { "local" };
        return Err(Error::format(format!(
            "two {binding} `_text` symbols, at {first:#x} and {other:#x}: the address the \
             KASLR slide is measured from is ambiguous"
        )));
    }
    Ok(Some(first))
}
