//! BTF from files: raw BTF, an ELF's `.BTF` section, and the running
//! kernel's own BTF mapped in place.

use std::sync::Arc;

use super::MAGIC;
use crate::base::le;
use crate::base::mapped::{Mapping, Store};
use crate::error::{Error, Result};

/// The `.BTF` section of an ELF file (a vmlinux, a `.ko`), copied out.
pub fn elf_section(data: &[u8], name: &str) -> Result<Option<Vec<u8>>> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(data)
        .map_err(|e| Error::format(format!("not a readable ELF file: {e}")))?;
    match file.section_by_name(name) {
        None => Ok(None),
        Some(s) => s
            .data()
            .map(|d| Some(d.to_vec()))
            .map_err(|e| Error::format(format!("ELF section {name}: {e}"))),
    }
}

/// The running kernel's own BTF (`/sys/kernel/btf/vmlinux`), which it
/// lets a process map since Linux 6.16: mapped in place (no copy, no page
/// to fault in on write). Anything else, or a kernel that refuses the
/// mapping, is read as [`read_file`] reads it. Only that file is mapped: it
/// is the kernel's memory and cannot shrink under the mapping, as a
/// regular file could (a read past its end would then be a SIGBUS).
pub fn read_vmlinux(path: &std::path::Path) -> Result<Store<u8>> {
    if path == std::path::Path::new("/sys/kernel/btf/vmlinux") {
        if let Some(map) = map_raw(path) {
            let len = map.bytes().len();
            if let Some(s) = Store::mapped(&Arc::new(map), 0, len) {
                return Ok(s);
            }
        }
    }
    read_file(path).map(Store::from)
}

/// `path` mapped whole, if it can be and starts with the BTF magic.
fn map_raw(path: &std::path::Path) -> Option<Mapping> {
    let file = std::fs::File::open(path).ok()?;
    let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
    if !(24..=crate::base::read::limits::ELF).contains(&len) {
        return None;
    }
    let map = Mapping::new(&file, len).ok()?;
    let b = map.bytes();
    (le::u16(b, 0) == MAGIC).then_some(map)
}

/// BTF from a file: raw BTF (starts with the magic) or an ELF with a
/// `.BTF` section.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>> {
    let data = crate::base::read::read_file(path, 0, crate::base::read::limits::ELF, "BTF")?;
    if data.len() >= 2 && le::u16(&data, 0) == MAGIC {
        return Ok(data);
    }
    if data.starts_with(b"\x7fELF") {
        return elf_section(&data, ".BTF")
            .map_err(|e| e.context(path.display()))?
            .ok_or_else(|| {
                Error::format(format!(
                    "{}: an ELF file without a .BTF section",
                    path.display()
                ))
            });
    }
    Err(Error::format(format!(
        "{}: neither raw BTF (magic 0xeb9f) nor an ELF file",
        path.display()
    )))
}
