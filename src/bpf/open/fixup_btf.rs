//! The object's BTF made loadable by `BPF_BTF_LOAD`, as libbpf makes it at
//! open (`bpf_object_fixup_btf`); `load/` rewrites it for a kernel that
//! lacks some of its kinds.

use object::elf as E;

use crate::bpf::elf::{Sec, Sym};
use crate::bpf::object::externs::{self, Extern};
use crate::error::Result;
use crate::formats::btf::{self, BtfWriter, Extra};

/// A variable of a data section's DATASEC, as the loadable BTF places it.
pub(in crate::bpf) struct SecVar {
    /// The DATASEC's (and so the ELF section's) name.
    pub sec: Vec<u8>,
    pub name: Vec<u8>,
    pub offset: u32,
    pub size: u32,
    pub type_id: u32,
    pub global: bool,
}

/// The fixups libbpf makes before BPF_BTF_LOAD: DATASEC sizes and VAR
/// offsets from the ELF (clang leaves them zero), hidden globals made
/// static, the `.ksyms` VARs, which the kernel refuses, turned into
/// allocated VARs of the first 32-bit INT (none is added: void without
/// one, as libbpf) and its kfuncs into global functions (their unnamed
/// parameters named), the `.kconfig` VARs allocated at their
/// offsets in the `.kconfig` map; extern functions made global. `b` is
/// the object's BTF, to edit (the write half of `formats::btf`). Also
/// returns the data sections' variables, where the fixed-up DATASECs put
/// them.
pub(in crate::bpf) fn loadable_btf(
    mut b: BtfWriter,
    secs: &[Sec<'_>],
    syms: &[Sym<'_>],
    externs: &[Extern],
) -> Result<(Vec<u8>, Vec<SecVar>)> {
    let mut data_vars = Vec::new();
    let int = b.int32();
    let mut dummy: Option<u32> = None;
    let datasecs: Vec<u32> = b.ids_of_kind(btf::KIND_DATASEC).collect();
    for ds in datasecs {
        let name = b.name(ds).to_vec();
        let Extra::Datasec(mut vars) = b.types[ds as usize].extra.clone() else {
            continue;
        };
        match name.as_slice() {
            b".kconfig" => kconfig_datasec(&mut b, ds, &mut vars, externs),
            b".ksyms" => ksyms_datasec(&mut b, ds, &mut vars, int, &mut dummy),
            _ => {
                if !data_datasec(&mut b, ds, &name, &mut vars, secs, syms) {
                    continue; // nothing to fix it from: leave it
                }
                data_vars.extend(vars.iter().filter_map(|v| {
                    let t = b.get(v[0])?;
                    let Extra::Var { linkage } = t.extra else {
                        return None;
                    };
                    Some(SecVar {
                        sec: name.clone(),
                        name: b.name(v[0]).to_vec(),
                        offset: v[1],
                        size: v[2],
                        type_id: t.size_type,
                        global: linkage == btf::VAR_GLOBAL_ALLOCATED,
                    })
                }));
            }
        }
        // The kernel wants each DATASEC's entries by offset (libbpf sorts
        // every one, `.kconfig` included).
        vars.sort_by_key(|v| v[1]);
        b.types[ds as usize].extra = Extra::Datasec(vars);
    }
    mark_hidden_static(&mut b, secs, syms);
    // Any extern left (a function declared but never defined): global.
    for t in b.types.iter_mut().skip(1) {
        if t.kind() == btf::KIND_FUNC && t.vlen() == btf::FUNC_EXTERN {
            t.info = (btf::KIND_FUNC << 24) | btf::FUNC_GLOBAL;
        }
        if let Extra::Var { linkage } = &mut t.extra {
            if *linkage == btf::VAR_GLOBAL_EXTERN {
                *linkage = btf::VAR_GLOBAL_ALLOCATED;
            }
        }
    }
    Ok((b.to_bytes(), data_vars))
}

/// `.kconfig`: each VAR at its extern's offset in the `.kconfig` map,
/// allocated; the DATASEC as large as the map's value.
fn kconfig_datasec(b: &mut BtfWriter, ds: u32, vars: &mut [[u32; 3]], externs: &[Extern]) {
    for v in vars.iter_mut() {
        let vname = b.name(v[0]).to_vec();
        let x = externs
            .iter()
            .find(|x| x.name.to_bytes() == vname.as_slice());
        if let Some(k) = x.and_then(|x| x.kcfg) {
            v[1] = k.off;
        }
        if let Some(t) = b.types.get_mut(v[0] as usize) {
            if let Extra::Var { linkage } = &mut t.extra {
                *linkage = btf::VAR_GLOBAL_ALLOCATED;
            }
        }
    }
    b.types[ds as usize].size_type = externs::kconfig_size(externs);
}

/// `.ksyms`, which the kernel refuses as it is: its VARs become allocated
/// VARs of `int` (the first 32-bit INT), its kfuncs global functions,
/// each entry 4 bytes.
fn ksyms_datasec(
    b: &mut BtfWriter,
    ds: u32,
    vars: &mut [[u32; 3]],
    int: u32,
    dummy: &mut Option<u32>,
) {
    for (i, v) in vars.iter_mut().enumerate() {
        let kind = b.types[v[0] as usize].kind();
        if kind == btf::KIND_FUNC {
            // A kfunc: the kernel takes it as a global function and the
            // DATASEC entry points at a dummy VAR, whose name also names
            // the prototype's unnamed parameters.
            b.types[v[0] as usize].info = (btf::KIND_FUNC << 24) | btf::FUNC_GLOBAL;
            let d = *dummy.get_or_insert_with(|| {
                let n = b.find_or_add_string(b"dummy_ksym");
                b.add_type(btf::Type {
                    name_off: n,
                    info: btf::KIND_VAR << 24,
                    size_type: int,
                    extra: Extra::Var {
                        linkage: btf::VAR_GLOBAL_ALLOCATED,
                    },
                })
            });
            let dummy_name = b.types[d as usize].name_off;
            let proto = b.types[v[0] as usize].size_type as usize;
            if let Some(Extra::Params(ps)) = b.types.get_mut(proto).map(|t| &mut t.extra) {
                for p in ps.iter_mut() {
                    if p[1] != 0 && p[0] == 0 {
                        p[0] = dummy_name;
                    }
                }
            }
            v[0] = d;
        } else if kind == btf::KIND_VAR {
            let t = &mut b.types[v[0] as usize];
            t.size_type = int;
            t.extra = Extra::Var {
                linkage: btf::VAR_GLOBAL_ALLOCATED,
            };
        }
        v[1] = (i * 4) as u32;
        v[2] = 4;
    }
    b.types[ds as usize].size_type = (vars.len() * 4) as u32;
}

/// A data section's DATASEC: its size and its VARs' offsets from the ELF
/// when clang left them zero, hidden globals made static. false when it
/// needs the fixup and the ELF has nothing to fix it from.
fn data_datasec(
    b: &mut BtfWriter,
    ds: u32,
    name: &[u8],
    vars: &mut [[u32; 3]],
    secs: &[Sec<'_>],
    syms: &[Sym<'_>],
) -> bool {
    let fixup = b.types[ds as usize].size_type == 0;
    if fixup {
        match secs.iter().find(|s| s.name == name) {
            Some(s) if s.size > 0 => b.types[ds as usize].size_type = s.size as u32,
            _ => return false,
        }
    }
    for v in vars.iter_mut() {
        let Some(t) = b.get(v[0]) else { continue };
        let linkage = match t.extra {
            Extra::Var { linkage } => linkage,
            _ => continue,
        };
        if linkage == btf::VAR_STATIC || linkage == btf::VAR_GLOBAL_EXTERN {
            continue;
        }
        let vname = b.name(v[0]).to_vec();
        let sym = syms.iter().find(|s| {
            s.name == vname.as_slice()
                && secs
                    .get(s.shndx as usize)
                    .is_some_and(|sec| sec.name == name)
        });
        let Some(sym) = sym else { continue };
        if fixup {
            v[1] = sym.value as u32;
        }
        if sym.vis == E::STV_HIDDEN || sym.vis == E::STV_INTERNAL {
            b.types[v[0] as usize].extra = Extra::Var {
                linkage: btf::VAR_STATIC,
            };
        }
    }
    true
}

/// Hidden subprograms (`__hidden`, as in usdt.bpf.h) are static to the
/// verifier: checked with their callers, not alone (libbpf's
/// mark_btf_static).
fn mark_hidden_static(b: &mut BtfWriter, secs: &[Sec<'_>], syms: &[Sym<'_>]) {
    let text = secs.iter().position(|s| s.name == b".text");
    for sym in syms.iter().filter(|s| {
        s.ty == E::STT_FUNC
            && s.bind != E::STB_LOCAL
            && (s.vis == E::STV_HIDDEN || s.vis == E::STV_INTERNAL)
            && Some(s.shndx as usize) == text
    }) {
        let hit = (1..b.types.len()).find(|&i| {
            let t = &b.types[i];
            t.kind() == btf::KIND_FUNC
                && t.vlen() == btf::FUNC_GLOBAL
                && b.str(t.name_off) == sym.name
        });
        if let Some(i) = hit {
            b.types[i].info = (btf::KIND_FUNC << 24) | btf::FUNC_STATIC;
        }
    }
}
