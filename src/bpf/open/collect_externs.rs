//! `collect_externs`: the externs the object's BTF describes, the VARs and
//! FUNCs of `.ksyms` and `.kconfig` (untyped ksyms without BTF are found
//! by [`super::collect_relos`], from relocations).

use object::elf as E;

use super::Externs;
use crate::bpf::elf::Elf;
use crate::bpf::externs;
use crate::error::Result;
use crate::formats::btf::Btf as LocalBtf;

pub(super) fn collect(elf: &Elf<'_>, local: Option<&LocalBtf>) -> Result<Externs> {
    let is_weak = |name: &[u8]| {
        elf.syms
            .iter()
            .any(|s| s.name == name && s.shndx == E::SHN_UNDEF && s.bind == E::STB_WEAK)
    };
    let list = match local {
        Some(b) => externs::collect(b, is_weak)?,
        None => Vec::new(),
    };
    let by_name = list
        .iter()
        .enumerate()
        .map(|(i, x)| (x.name.to_bytes().to_vec(), i))
        .collect();
    Ok(Externs { list, by_name })
}
