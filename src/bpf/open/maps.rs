//! The maps of an object as libbpf makes them: BTF-defined maps of
//! `.maps`, one array map per data section (`.data*`, `.rodata*`, `.bss*`)
//! and for `.kconfig`, and the initial slots `.rel.maps` gives maps of maps
//! and program arrays.

use crate::base::hash::KeyMap;
use crate::error::{Error, Result};
use crate::formats::btf::Btf;
use object::elf as E;

use crate::bpf::elf::{cstring, Sec, Sym};
use crate::bpf::object::{Map, Program, Slot, SlotTarget};
use crate::bpf::open::map_def::map_def;

/// `BPF_F_RDONLY_PROG`: the program cannot write the map (`.rodata`).
const BPF_F_RDONLY_PROG: u32 = 1 << 7;
/// `BPF_F_MMAPABLE`: user space can mmap the map. libbpf gives it to a
/// data-section map or `.kconfig` whose DATASEC has a global variable
/// (skeletons read globals through it).
const BPF_F_MMAPABLE: u32 = 1 << 10;
/// `BPF_MAP_TYPE_ARRAY`.
const MAP_ARRAY: u32 = 2;

/// BTF-defined maps: per map of `.maps` (section `mi`), in DATASEC order;
/// with the map of each (section, symbol value), and for maps with
/// `values`: (symbol value, size, offset of `values`, map).
#[allow(clippy::type_complexity)]
pub(in crate::bpf) fn btf_maps(
    mi: usize,
    btf: Option<&Btf>,
    syms: &[Sym<'_>],
) -> Result<(
    Vec<Map>,
    KeyMap<(usize, u64), usize>,
    Vec<(u64, u64, u64, usize)>,
)> {
    let b = btf.ok_or_else(|| {
        Error::format("a `.maps` section but no .BTF: BTF-defined maps need BTF (-g)")
    })?;
    let ds = b
        .find_datasec(b".maps")
        .and_then(|id| b.ty(id))
        .ok_or_else(|| Error::format("no `.maps` DATASEC in .BTF"))?;
    let mut maps: Vec<Map> = Vec::new();
    let mut map_of_symbol: KeyMap<(usize, u64), usize> = KeyMap::default();
    let mut map_values: Vec<(u64, u64, u64, usize)> = Vec::new();
    for (var, _, _) in ds.datasec() {
        let name = b.name(var);
        let def = map_def(b, var)?;
        let sym = syms
            .iter()
            .find(|s| s.shndx as usize == mi && s.name == name)
            .ok_or_else(|| {
                Error::format(format!(
                    "map `{}`: no ELF symbol in `.maps`",
                    String::from_utf8_lossy(name)
                ))
            })?;
        map_of_symbol.insert((mi, sym.value), maps.len());
        if let Some(vo) = def.values_offset {
            map_values.push((sym.value, sym.size, vo as u64, maps.len()));
        }
        maps.push(Map {
            name: cstring(name),
            section: cstring(b".maps"),
            map_type: def.map_type,
            key_size: def.key_size,
            value_size: def.value_size,
            max_entries: def.max_entries,
            map_flags: def.map_flags,
            btf_key_type_id: def.key_type_id,
            btf_value_type_id: def.value_type_id,
            map_extra: def.map_extra,
            numa_node: def.numa_node,
            inner: def.inner.as_ref().map(|i| {
                [
                    i.map_type,
                    i.key_size,
                    i.value_size,
                    i.max_entries,
                    i.map_flags,
                    i.key_type_id,
                    i.value_type_id,
                ]
            }),
            btf_vmlinux_value_type_id: 0,
            slots: Vec::new(),
            struct_ops: None,
            initial_value: None,
            fd: None,
        });
    }
    Ok((maps, map_of_symbol, map_values))
}

fn is_data_section(name: &[u8]) -> bool {
    let base = |p: &[u8]| name == p || (name.starts_with(p) && name.get(p.len()) == Some(&b'.'));
    base(b".data") || base(b".rodata") || base(b".bss")
}

/// One array map per allocated, non-empty data section, appended to
/// `maps`; returns the map of each such section.
pub(in crate::bpf) fn data_maps(
    secs: &[Sec<'_>],
    btf: Option<&Btf>,
    maps: &mut Vec<Map>,
) -> Result<KeyMap<usize, usize>> {
    let mut data_map: KeyMap<usize, usize> = KeyMap::default();
    for (i, s) in secs.iter().enumerate() {
        if is_data_section(s.name) && s.flags & E::SHF_ALLOC as u64 != 0 && s.size > 0 {
            let value_size = u32::try_from(s.size).map_err(|_| {
                Error::unsupported(format!(
                    "section `{}` is larger than 4 GiB",
                    String::from_utf8_lossy(s.name)
                ))
            })?;
            data_map.insert(i, maps.len());
            maps.push(data_map_of(
                s.name,
                value_size,
                s.name.starts_with(b".rodata"),
                btf,
                (s.sh_type != E::SHT_NOBITS).then(|| s.data.to_vec()),
            ));
        }
    }
    Ok(data_map)
}

/// The array map of a data section or `.kconfig` (`name`), as libbpf
/// makes it: one entry of the section's size, its DATASEC as value type.
pub(in crate::bpf) fn data_map_of(
    name: &[u8],
    value_size: u32,
    read_only: bool,
    btf: Option<&Btf>,
    initial_value: Option<Vec<u8>>,
) -> Map {
    let datasec = btf.and_then(|b| b.find_datasec(name)).unwrap_or(0);
    Map {
        name: cstring(name),
        section: cstring(name),
        map_type: MAP_ARRAY,
        key_size: 4,
        value_size,
        max_entries: 1,
        map_flags: data_map_flags(read_only, btf, datasec),
        btf_key_type_id: 0,
        btf_value_type_id: datasec,
        map_extra: 0,
        numa_node: 0,
        inner: None,
        btf_vmlinux_value_type_id: 0,
        slots: Vec::new(),
        struct_ops: None,
        initial_value,
        fd: None,
    }
}

/// A data section's (or `.kconfig`'s) map flags, as libbpf sets them.
fn data_map_flags(read_only: bool, btf: Option<&Btf>, datasec: u32) -> u32 {
    let ro = if read_only { BPF_F_RDONLY_PROG } else { 0 };
    let mmap = match btf {
        Some(b) if datasec != 0 && b.datasec_has_global(datasec) => BPF_F_MMAPABLE,
        _ => 0,
    };
    ro | mmap
}

/// The initial slots `.rel.maps` gives maps of maps and program arrays
/// (libbpf's `bpf_object__collect_map_relos`): each relocation, at an
/// offset inside a map's `values`, names a map of `.maps` or a program.
pub(in crate::bpf) fn map_slots(
    rels: Vec<(u64, usize)>,
    syms: &[Sym<'_>],
    secs: &[Sec<'_>],
    map_of_symbol: &KeyMap<(usize, u64), usize>,
    map_values: &[(u64, u64, u64, usize)],
    programs: &[Program],
    maps: &mut [Map],
) -> Result<()> {
    for (off, sym_idx) in rels {
        let sym = syms.get(sym_idx).ok_or_else(|| {
            Error::format(format!("`.rel.maps`: symbol index {sym_idx} out of range"))
        })?;
        let sname = String::from_utf8_lossy(sym.name);
        let &(base, _, vo, m) = map_values
            .iter()
            .find(|&&(v, sz, _, _)| off >= v && off < v.saturating_add(sz.max(1)))
            .ok_or_else(|| {
                Error::format(format!(
                    "`.rel.maps`: a relocation for `{sname}` at {off:#x} is in no map with `values`"
                ))
            })?;
        let at = off - base;
        if at < vo || (at - vo) % 8 != 0 || ((at - vo) / 8) > u32::MAX as u64 {
            return Err(Error::format(format!(
                "`.rel.maps`: map `{}`: a relocation for `{sname}` at {at:#x} is not a slot of `values`",
                maps[m].name.to_string_lossy()
            )));
        }
        let target = if let Some(&t) = map_of_symbol.get(&(sym.shndx as usize, sym.value)) {
            SlotTarget::Map(t)
        } else if let Some(p) = programs.iter().position(|p| {
            p.sec == sym.shndx as usize
                && p.insn_off as u64 * 8 == sym.value
                && p.name.to_bytes() == sym.name
        }) {
            SlotTarget::Program(p)
        } else {
            return Err(Error::format(format!(
                "`.rel.maps`: map `{}`: `{sname}` (section {}) is neither a map of `.maps` nor a program",
                maps[m].name.to_string_lossy(),
                secs.get(sym.shndx as usize).map_or("?".into(), |s| String::from_utf8_lossy(s.name))
            )));
        };
        maps[m].slots.push(Slot {
            index: ((at - vo) / 8) as u32,
            target,
        });
    }
    for m in maps.iter_mut() {
        m.slots.sort_by_key(|s| s.index);
    }
    Ok(())
}
