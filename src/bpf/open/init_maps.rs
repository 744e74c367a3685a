//! `init_maps`: the object's maps in libbpf's order: the BTF-defined maps
//! of `.maps`, the data sections', `.kconfig`'s, and the struct_ops maps,
//! last.

use super::maps;
use super::{Collected, Maps};
use crate::bpf::attach::struct_ops;
use crate::bpf::elf::Elf;
use crate::bpf::object::externs::{self, Extern, ExternKind};
use crate::error::Result;

pub(super) fn init(elf: &Elf<'_>, c: &Collected<'_>, externs: &[Extern]) -> Result<Maps> {
    let (secs, syms) = (&elf.secs, &elf.syms);
    let btf = c.local.as_ref();
    let mut m = Maps::default();
    if let Some(mi) = c.maps_sec {
        (m.list, m.of_symbol, m.values) = maps::btf_maps(mi, btf, syms)?;
    }
    m.data = maps::data_maps(secs, btf, &mut m.list)?;
    if externs.iter().any(|x| x.kind == ExternKind::Kconfig) {
        let size = externs::kconfig_size(externs);
        m.list.push(maps::data_map_of(
            b".kconfig",
            size,
            true,
            btf,
            Some(vec![0; size as usize]),
        ));
        m.kconfig = Some(m.list.len() - 1);
    }
    for (i, s) in secs.iter().enumerate() {
        if struct_ops::section_kind(s.name).is_some() {
            let sym_value = |n: &[u8]| {
                syms.iter()
                    .find(|y| y.shndx as usize == i && y.name == n)
                    .map(|y| y.value)
            };
            m.list.extend(struct_ops::maps(
                c.local.as_ref(),
                i,
                s.name,
                s.data,
                sym_value,
            )?);
            m.struct_ops_secs.push(i);
        }
    }
    Ok(m)
}
