//! The last phase of the open: the externs numbered as libbpf numbers
//! them, the loadable BTF, the CO-RE sites of `.BTF.ext`, and each
//! program's layout (its code and the subprograms it calls, shared by its
//! aliases), which libbpf makes at load (`bpf_object__relocate`).

use std::ffi::CString;

use super::fixup_btf::{self, SecVar};
use super::{Collected, Maps, Targets};
use crate::base::hash::KeyMap;
use crate::base::le;
use crate::bpf::core::{self as co_re, CoreRecord};
use crate::bpf::elf::btf_ext::BtfExt;
use crate::bpf::elf::{cstring, Elf, Sec};
use crate::bpf::insn::Insns;
use crate::bpf::link::reloc::{self, Code};
use crate::bpf::object::externs::Extern;
use crate::bpf::object::{CoreSite, Object, Program, RelocKind, Stage, Var};
use crate::error::{Error, Result};
use crate::formats::btf::{Btf, BtfWriter};

/// The object, from what the earlier phases made.
pub(super) fn finish(
    elf: &Elf<'_>,
    c: Collected<'_>,
    ext: Option<&BtfExt<'_>>,
    (mut programs, maps, mut externs, targets): (Vec<Program>, Maps, Vec<Extern>, Targets),
) -> Result<Object> {
    let (secs, syms) = (&elf.secs, &elf.syms);
    super::collect_externs::number_as_libbpf(&mut externs);
    // The BTF a loader gives BPF_BTF_LOAD.
    let (loadable, sec_vars) = match &c.local {
        Some(b) => {
            let (blob, vars) =
                fixup_btf::loadable_btf(BtfWriter::from_btf(b)?, secs, syms, &externs)?;
            (Some(blob), vars)
        }
        None => (None, Vec::new()),
    };
    let (data_maps, vars) = data_vars(secs, &maps, sec_vars);
    let (mut core_sites, core_by_sec) = match (ext, &c.local) {
        (Some(ext), Some(local)) => core_sites(ext, local, secs, &c.code, |sec, idx| {
            reloc::owner_name(&programs, syms, c.text, secs, sec, idx)
        })?,
        _ => Default::default(),
    };
    let code = Code {
        secs,
        syms,
        insns: &c.code,
        text: c.text,
        targets: &targets,
        externs: &externs,
        ext,
        core_sites: &core_sites,
        core_by_sec: &core_by_sec,
    };
    let mut layouts = Vec::new();
    for i in 0..programs.len() {
        if programs[i].alias_of == i {
            programs[i].layout = layouts.len();
            layouts.push(reloc::layout(&code, &programs, i)?);
        } else {
            programs[i].layout = programs[programs[i].alias_of].layout;
        }
    }
    for l in &mut layouts {
        for &(_, site) in &l.core {
            core_sites[site].used = true;
        }
        // Only CO-RE, typed ksym and kfunc patches change what a second
        // relocate would see: other layouts are patched in place, with no
        // pristine copy kept.
        let pristine = !l.core.is_empty()
            || l.relocs
                .iter()
                .any(|r| matches!(r.kind, RelocKind::KsymBtf | RelocKind::Kfunc));
        if !pristine {
            l.insns = std::mem::take(&mut l.base);
        }
    }
    Ok(Object {
        license: c.license,
        programs,
        maps: maps.list,
        externs,
        layouts,
        btf: loadable,
        local_btf: c.local,
        core_sites,
        kconfig_map: maps.kconfig,
        data_maps,
        vars,
        fd_array: Vec::new(),
        stage: Stage::Parsed { ksyms: false },
    })
}

/// The data sections' maps in map order, and their variables by map and
/// offset: each DATASEC variable of a section that has a map and lies
/// inside its value (a variable of an empty section, which makes no map,
/// or past its end, is left out).
fn data_vars(secs: &[Sec<'_>], maps: &Maps, sec_vars: Vec<SecVar>) -> (Vec<usize>, Vec<Var>) {
    let mut by_sec: Vec<(usize, &[u8])> = maps
        .data
        .iter()
        .map(|(&sec, &map)| (map, secs[sec].name))
        .collect();
    by_sec.sort_unstable();
    let mut vars: Vec<Var> = sec_vars
        .into_iter()
        .filter_map(|v| {
            let &(map, _) = by_sec.iter().find(|(_, name)| *name == v.sec.as_slice())?;
            let value_size = maps.list[map].value_size as u64;
            (v.offset as u64 + v.size as u64 <= value_size).then(|| Var {
                name: cstring(&v.name),
                map,
                offset: v.offset as usize,
                size: v.size as usize,
                type_id: v.type_id,
                global: v.global,
            })
        })
        .collect();
    vars.sort_by_key(|v| (v.map, v.offset));
    (by_sec.into_iter().map(|(m, _)| m).collect(), vars)
}

/// The CO-RE records of `.BTF.ext`, each checked to fall on an
/// instruction of a code section and described as libbpf prints it;
/// and per section, (site, instruction) by instruction.
#[allow(clippy::type_complexity)]
fn core_sites(
    ext: &BtfExt<'_>,
    local: &Btf,
    secs: &[Sec<'_>],
    code: &KeyMap<usize, Insns<'_>>,
    owner: impl Fn(usize, usize) -> String,
) -> Result<(Vec<CoreSite>, KeyMap<usize, Vec<(usize, usize)>>)> {
    let mut found: Vec<(usize, usize, CoreRecord)> = Vec::new();
    for (name, recs) in &ext.core_relo {
        let shown = String::from_utf8_lossy(name);
        let sec = secs
            .iter()
            .enumerate()
            .position(|(i, s)| s.name == *name && code.contains_key(&i))
            .ok_or_else(|| {
                Error::format(format!(
                    "malformed .BTF.ext: CO-RE relocations for section `{shown}`, which is not code in the object"
                ))
            })?;
        let n = code[&sec].len();
        for r in recs.records() {
            let w = |k: usize| le::u32(r, 4 * k);
            let rec = CoreRecord {
                insn_off: w(0),
                type_id: w(1),
                access_off: w(2),
                kind: w(3),
            };
            if rec.insn_off % 8 != 0 || (rec.insn_off / 8) as usize >= n {
                return Err(Error::format(format!(
                    "malformed .BTF.ext: a CO-RE relocation at byte {} of section `{shown}` \
                     ({n} instructions) is not on an instruction",
                    rec.insn_off
                )));
            }
            found.push((sec, (rec.insn_off / 8) as usize, rec));
        }
    }
    found.sort_by_key(|&(sec, idx, _)| (sec, idx));
    let mut sites = Vec::with_capacity(found.len());
    let mut by_sec: KeyMap<usize, Vec<(usize, usize)>> = KeyMap::default();
    for (sec, idx, rec) in found {
        let text = co_re::describe(local, &rec);
        by_sec.entry(sec).or_default().push((sites.len(), idx));
        sites.push(CoreSite {
            rec,
            text: CString::new(text).unwrap_or_default(),
            owner: owner(sec, idx),
            used: false,
            res: None,
        });
    }
    Ok((sites, by_sec))
}
