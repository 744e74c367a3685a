//! struct_ops maps: a variable of `SEC(".struct_ops")` (or
//! `".struct_ops.link"`) is a kernel struct of function pointers (a TCP
//! congestion control, `bpf_dummy_ops`...) whose pointers are programs of
//! the object. As libbpf does it:
//! - at parse ([`maps`], [`collect_relos`]): one map per variable
//!   (`BPF_MAP_TYPE_STRUCT_OPS`, key 4, the local struct's size, one
//!   entry), and `.rel.struct_ops` says which program each function
//!   pointer member holds;
//! - against the kernel's BTF ([`resolve`]): the kernel's struct of the
//!   same name and its `bpf_struct_ops_<name>` wrapper (the map's value
//!   type), each local member matched by name to the kernel's, data
//!   members copied to their kernel offsets, and each program given its
//!   attach BTF id (the kernel struct) and expected attach type (the
//!   kernel member's index). The program fds go at the offsets the map's
//!   slots give, when the loader registers the map.

use std::ffi::CString;

use crate::bpf::elf::cstring;
use crate::bpf::object::struct_ops::{OpsMember, StructOps};
use crate::bpf::object::{Map, Program, Slot, SlotTarget};
use crate::btf::KernelBtf;
use crate::error::{Error, Result};
use crate::formats::btf::{self as fbtf, Btf};

/// `BPF_MAP_TYPE_STRUCT_OPS`.
const MAP_STRUCT_OPS: u32 = 26;
/// `BPF_PROG_TYPE_STRUCT_OPS`.
const PROG_STRUCT_OPS: u32 = 27;
/// `BPF_F_LINK`: the map is registered through a link (`.struct_ops.link`).
const BPF_F_LINK: u32 = 1 << 13;
/// libbpf's `STRUCT_OPS_VALUE_PREFIX`.
const VALUE_PREFIX: &[u8] = b"bpf_struct_ops_";

/// Whether section `name` holds struct_ops variables (and whether they
/// register through a link).
pub(in crate::bpf) fn section_kind(name: &[u8]) -> Option<bool> {
    match name {
        b".struct_ops" => Some(false),
        b".struct_ops.link" => Some(true),
        _ => None,
    }
}

fn bad(msg: String) -> Error {
    Error::format(msg)
}

/// The struct_ops maps of section `sec` (`name`, contents `data`): one per
/// variable of its DATASEC, as libbpf's `init_struct_ops_maps`. clang
/// leaves the DATASEC's offsets zero: a global variable's is its symbol's
/// value (`sym_value`), as libbpf's `btf_fixup_datasec` makes it.
pub(in crate::bpf) fn maps(
    btf: Option<&Btf>,
    sec: usize,
    name: &[u8],
    data: &[u8],
    sym_value: impl Fn(&[u8]) -> Option<u64>,
) -> Result<Vec<Map>> {
    let shown = String::from_utf8_lossy(name);
    let Some(link) = section_kind(name) else {
        return Ok(Vec::new());
    };
    let btf = btf.ok_or_else(|| {
        bad(format!(
            "section `{shown}` but no .BTF: struct_ops need BTF (-g)"
        ))
    })?;
    let ds = btf
        .own_ids()
        .find(|&id| {
            btf.name(id) == name && btf.ty(id).is_some_and(|t| t.kind() == fbtf::KIND_DATASEC)
        })
        .ok_or_else(|| bad(format!("struct_ops: no DATASEC `{shown}` in .BTF")))?;
    let mut out = Vec::new();
    let Some(dst) = btf.ty(ds) else {
        return Ok(out);
    };
    let fixup = dst.size() == 0;
    for (var, off, _) in dst.datasec() {
        let var_name = btf.name(var).to_vec();
        let vshown = String::from_utf8_lossy(&var_name).into_owned();
        // A DATASEC entry of damaged BTF may name a type that is no VAR
        // (and has no linkage to read).
        let is_static = btf
            .ty(var)
            .is_some_and(|t| t.kind() == fbtf::KIND_VAR && t.var_linkage() == 0);
        let off = if fixup && !is_static {
            let v = sym_value(&var_name).ok_or_else(|| {
                bad(format!(
                    "struct_ops `{vshown}`: no symbol in `{shown}` for it"
                ))
            })?;
            u32::try_from(v)
                .map_err(|_| bad(format!("struct_ops `{vshown}`: offset {v} too large")))?
        } else {
            off
        };
        let ty = btf.resolve(btf.ty(var).map_or(0, |t| t.type_id()))?;
        let t = btf.ty(ty).ok_or_else(|| {
            bad(format!(
                "struct_ops `{vshown}`: its type {ty} is not in .BTF"
            ))
        })?;
        let tname = btf.name(ty).to_vec();
        if tname.is_empty() {
            return Err(Error::unsupported(format!(
                "struct_ops `{vshown}`: an anonymous struct (the kernel's is found by name)"
            )));
        }
        if t.kind() != fbtf::KIND_STRUCT {
            return Err(bad(format!(
                "struct_ops `{vshown}`: `{}` is not a struct",
                String::from_utf8_lossy(&tname)
            )));
        }
        let size = t.size();
        let bytes = (off as usize)
            .checked_add(size as usize)
            .and_then(|end| data.get(off as usize..end))
            .ok_or_else(|| {
                bad(format!(
                    "struct_ops `{vshown}`: {size} bytes at {off} are past the end of `{shown}` ({} bytes)",
                    data.len()
                ))
            })?;
        out.push(Map {
            name: cstring(&var_name),
            section: cstring(name),
            map_type: MAP_STRUCT_OPS,
            key_size: 4,
            value_size: size,
            max_entries: 1,
            map_flags: if link { BPF_F_LINK } else { 0 },
            btf_key_type_id: 0,
            btf_value_type_id: 0,
            btf_vmlinux_value_type_id: 0,
            map_extra: 0,
            numa_node: 0,
            inner: None,
            slots: Vec::new(),
            initial_value: None,
            struct_ops: Some(Box::new(StructOps {
                sec,
                sec_offset: off as u64,
                local_type: ty,
                tname,
                data: bytes.to_vec(),
                funcs: Vec::new(),
                value: None,
            })),
            fd: None,
        });
    }
    Ok(out)
}

/// A relocation of `.rel.struct_ops`: where, and the symbol's section,
/// value and name.
pub(in crate::bpf) struct Rel<'a> {
    pub offset: u64,
    pub sym_shndx: u16,
    pub sym_value: u64,
    pub sym_name: &'a [u8],
}

/// Whether `id` is a pointer to a function prototype (modifiers skipped).
fn is_func_ptr(btf: &Btf, id: u32) -> Result<bool> {
    let p = btf.resolve(id)?;
    match btf.ty(p) {
        Some(t) if t.kind() == fbtf::KIND_PTR => {
            let f = btf.resolve(t.type_id())?;
            Ok(btf.ty(f).is_some_and(|t| t.kind() == fbtf::KIND_FUNC_PROTO))
        }
        _ => Ok(false),
    }
}

/// Which program each function pointer of the struct_ops maps of section
/// `sec` holds (libbpf's `collect_st_ops_relos`).
pub(in crate::bpf) fn collect_relos(
    btf: &Btf,
    sec: usize,
    rels: &[Rel<'_>],
    maps: &mut [Map],
    programs: &mut [Program],
) -> Result<()> {
    for r in rels {
        let sname = String::from_utf8_lossy(r.sym_name);
        let st = maps
            .iter_mut()
            .filter_map(|m| m.struct_ops.as_deref_mut())
            .find(|s| {
                s.sec == sec
                    && r.offset >= s.sec_offset
                    && r.offset - s.sec_offset < s.data.len() as u64
            })
            .ok_or_else(|| {
                bad(format!(
                    "struct_ops: a relocation for `{sname}` at {:#x} is in no struct_ops variable",
                    r.offset
                ))
            })?;
        let moff = r.offset - st.sec_offset;
        let at = || format!("struct_ops `{}`", String::from_utf8_lossy(&st.tname));
        if r.sym_shndx == 0 || r.sym_shndx >= object::elf::SHN_LORESERVE {
            return Err(Error::unsupported(format!(
                "{}: `{sname}` at offset {moff} is not a function of the object",
                at()
            )));
        }
        if r.sym_value % 8 != 0 {
            return Err(bad(format!(
                "{}: `{sname}` is at {}, not an instruction",
                at(),
                r.sym_value
            )));
        }
        let t = btf
            .ty(st.local_type)
            .ok_or_else(|| bad(format!("{}: type missing", at())))?;
        let (idx, member) = t
            .members()
            .enumerate()
            .find(|(_, mb)| mb.bit_offset as u64 == moff * 8)
            .ok_or_else(|| bad(format!("{}: no member at byte {moff} for `{sname}`", at())))?;
        let mname = String::from_utf8_lossy(btf.str(member.name_off)).into_owned();
        if !is_func_ptr(btf, member.ty)? {
            return Err(bad(format!(
                "{}: member `{mname}` holds `{sname}` but is not a function pointer",
                at()
            )));
        }
        let insn = (r.sym_value / 8) as usize;
        let in_sec = |p: &Program| {
            p.sec == r.sym_shndx as usize && insn >= p.insn_off && insn < p.insn_off + p.insn_cnt
        };
        let prog = programs
            .iter()
            .position(|p| in_sec(p) && p.name.to_bytes() == r.sym_name)
            .or_else(|| programs.iter().position(in_sec))
            .ok_or_else(|| {
                bad(format!(
                    "{}: member `{mname}`: `{sname}` is not a program of the object",
                    at()
                ))
            })?;
        let p = &mut programs[prog];
        let pname = p.name.to_string_lossy().into_owned();
        if p.attach.prog_type() != PROG_STRUCT_OPS {
            return Err(Error::invalid(format!(
                "{}: member `{mname}`: program `{pname}` (section `{}`) is not a struct_ops program",
                at(),
                p.section.to_string_lossy()
            )));
        }
        let text = format!("{}.{mname}", String::from_utf8_lossy(&st.tname));
        match &p.attach.struct_ops {
            None => {
                p.attach.struct_ops = Some(Box::new(OpsMember {
                    local_type: st.local_type,
                    local_member: idx as u32,
                    text: CString::new(text).unwrap_or_default(),
                    kernel: None,
                }))
            }
            // One program may serve several maps: as the same member of the
            // same struct only.
            Some(o) if o.local_type == st.local_type && o.local_member == idx as u32 => {}
            Some(o) => {
                return Err(Error::invalid(format!(
                    "{}: member `{mname}`: program `{pname}` is already `{}`; a program serves one member of one struct",
                    at(),
                    o.text.to_string_lossy()
                )))
            }
        }
        st.funcs.retain(|&(i, _)| i != idx as u32);
        st.funcs.push((idx as u32, prog));
    }
    Ok(())
}

/// Resolves struct_ops map `map` against the kernel's BTF (libbpf's
/// `bpf_map__init_kern_struct_ops`): the map's value becomes the kernel's
/// `bpf_struct_ops_<name>`, its slots say where each program's fd goes,
/// and each program gets its attach BTF id and member index.
pub(in crate::bpf) fn resolve(
    map: &mut Map,
    local: &Btf,
    kernel: &KernelBtf,
    programs: &mut [Program],
) -> Result<()> {
    let Some(st) = map.struct_ops.as_deref_mut() else {
        return Ok(());
    };
    st.value = None;
    map.slots.clear();
    let tname = String::from_utf8_lossy(&st.tname).into_owned();
    let at = || {
        format!(
            "struct_ops map `{}` (struct {tname})",
            map.name.to_string_lossy()
        )
    };
    let vm = kernel.vmlinux();
    let kb = &vm.btf;
    let kid = vm.first(&st.tname, fbtf::KIND_STRUCT).ok_or_else(|| {
        Error::not_found(format!(
            "{}: the kernel's BTF has no struct {tname}: this kernel cannot take it",
            at()
        ))
    })?;
    let wrapper = [VALUE_PREFIX, &st.tname].concat();
    let vid = vm.first(&wrapper, fbtf::KIND_STRUCT).ok_or_else(|| {
        Error::not_found(format!(
            "{}: the kernel's BTF has no struct bpf_struct_ops_{tname}: struct {tname} is not a \
             struct_ops type of this kernel",
            at()
        ))
    })?;
    let (Some(kt), Some(vt)) = (kb.ty(kid), kb.ty(vid)) else {
        return Err(bad(format!("{}: kernel BTF type missing", at())));
    };
    let data_off = vt
        .members()
        .find(|m| m.ty == kid)
        .map(|m| m.bit_offset / 8)
        .ok_or_else(|| {
            bad(format!(
                "{}: struct bpf_struct_ops_{tname} has no member of type struct {tname}",
                at()
            ))
        })? as usize;
    let mut value = vec![0u8; vt.size() as usize];
    let mut slots = Vec::new();
    let mut attach: Vec<(usize, u32)> = Vec::new();
    let lt = local
        .ty(st.local_type)
        .ok_or_else(|| bad(format!("{}: local type missing", at())))?;
    for (i, m) in lt.members().enumerate() {
        let mname = local.str(m.name_off);
        let shown = String::from_utf8_lossy(mname);
        let (ki, km) = kt
            .members()
            .enumerate()
            .find(|(_, km)| kb.str(km.name_off) == mname)
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "{}: member `{shown}` is not in the kernel's struct {tname}",
                    at()
                ))
            })?;
        if m.bitfield_size != 0 || km.bitfield_size != 0 {
            return Err(Error::unsupported(format!(
                "{}: member `{shown}` is a bitfield (libbpf refuses them too)",
                at()
            )));
        }
        let (moff, kmoff) = ((m.bit_offset / 8) as usize, (km.bit_offset / 8) as usize);
        let lty = local.resolve(m.ty)?;
        let kty = kb.resolve(km.ty)?;
        let lkind = local.ty(lty).map_or(0, |t| t.kind());
        let kkind = kb.ty(kty).map_or(0, |t| t.kind());
        if lkind != kkind {
            return Err(Error::unsupported(format!(
                "{}: member `{shown}` is a {} here but a {} in the kernel",
                at(),
                fbtf::kind_name(lkind),
                fbtf::kind_name(kkind)
            )));
        }
        if lkind == fbtf::KIND_PTR {
            let Some(&(_, prog)) = st.funcs.iter().find(|&&(mi, _)| mi == i as u32) else {
                continue;
            };
            let target = kb.resolve(kb.ty(kty).map_or(0, |t| t.type_id()))?;
            if kb.ty(target).map(|t| t.kind()) != Some(fbtf::KIND_FUNC_PROTO) {
                return Err(Error::unsupported(format!(
                    "{}: member `{shown}` is not a function pointer in the kernel",
                    at()
                )));
            }
            let off = data_off + kmoff;
            if off + 8 > value.len() {
                return Err(bad(format!(
                    "{}: member `{shown}` is past the kernel's value",
                    at()
                )));
            }
            slots.push(Slot {
                index: off as u32,
                target: SlotTarget::StructOps(prog),
            });
            attach.push((prog, ki as u32));
            continue;
        }
        let lsize = local.size_of(lty)?;
        let ksize = kb.size_of(kty)?;
        let size = match (lsize, ksize) {
            (Some(a), Some(b)) if a == b => a as usize,
            _ => {
                return Err(Error::unsupported(format!(
                    "{}: member `{shown}` is {} bytes here but {} in the kernel",
                    at(),
                    lsize.map_or("?".into(), |s| s.to_string()),
                    ksize.map_or("?".into(), |s| s.to_string())
                )))
            }
        };
        let (Some(src), Some(dst)) = (
            st.data.get(moff..moff + size),
            value.get_mut(data_off + kmoff..data_off + kmoff + size),
        ) else {
            return Err(bad(format!(
                "{}: member `{shown}` lies outside the struct",
                at()
            )));
        };
        dst.copy_from_slice(src);
    }
    for (prog, ki) in attach {
        if let Some(o) = programs[prog].attach.struct_ops.as_deref_mut() {
            o.kernel = Some((kid, ki));
        }
    }
    slots.sort_by_key(|s| s.index);
    map.value_size = vt.size();
    map.btf_vmlinux_value_type_id = vid;
    map.slots = slots;
    st.value = Some(value);
    Ok(())
}
