//! Reading a BPF ELF object into an [`Object`].

use crate::base::hash::KeyMap;
use std::ffi::CString;

use object::elf::{self as E, FileHeader64};
use object::read::elf::{FileHeader, Rel as _, SectionHeader, Sym as _};
use object::LittleEndian as LE;

use super::btf::Btf;
use super::btf_ext::BtfExt;
use super::core::{self as co_re, CoreRecord};
use super::externs::{self, Extern, ExternKind};
use super::insn::Insns;
use super::maps;
use super::reloc::{self, Code, Target};
use super::struct_ops;
use super::{CoreSite, Object, Program, RelocKind};
use crate::error::{Error, Result};
use crate::formats::btf::Btf as LocalBtf;

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

fn format_err(e: object::read::Error) -> Error {
    Error::format(format!("malformed ELF: {e}"))
}

pub(super) fn cstring(b: &[u8]) -> CString {
    CString::new(b.iter().copied().filter(|&c| c != 0).collect::<Vec<u8>>()).unwrap_or_default()
}

pub(super) fn load(data: &[u8]) -> Result<Object> {
    // Check what `object` cannot tell us in its own words first.
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

    let by_name = |n: &[u8]| secs.iter().position(|s| s.name == n);
    let license = by_name(b"license")
        .map(|i| cstring(secs[i].data.split(|&b| b == 0).next().unwrap_or_default()))
        .unwrap_or_default();
    if by_name(b"maps").is_some() {
        return Err(Error::unsupported(
            "legacy map definitions (section `maps`): use BTF-defined maps in `.maps`",
        ));
    }
    let is_code = |i: usize| {
        let s = &secs[i];
        s.sh_type == E::SHT_PROGBITS && s.flags & E::SHF_EXECINSTR as u64 != 0
    };
    let text_idx = by_name(b".text").filter(|&i| is_code(i));
    let maps_idx = by_name(b".maps");
    let btf = match by_name(b".BTF") {
        Some(i) => Some(Btf::parse(secs[i].data)?),
        None => None,
    };
    // The same BTF, zero-copy, for CO-RE and extern types.
    let local = match by_name(b".BTF") {
        Some(i) => Some(LocalBtf::parse(secs[i].data.to_vec())?),
        None => None,
    };
    let btf_ext = match (by_name(b".BTF.ext"), &btf) {
        (Some(i), Some(b)) => Some(BtfExt::parse(secs[i].data, b)?),
        _ => None,
    };

    // Code sections: programs' and .text.
    let mut code: KeyMap<usize, Insns<'_>> = KeyMap::default();
    for (i, s) in secs.iter().enumerate() {
        if is_code(i) {
            if s.data.len() % 8 != 0 {
                return Err(Error::format(format!(
                    "section `{}`: size {} is not a whole number of instructions",
                    String::from_utf8_lossy(s.name),
                    s.data.len()
                )));
            }
            code.insert(i, Insns::new(s.data));
        }
    }

    // Programs: global or weak functions of executable sections but .text.
    let mut progs: Vec<(usize, u64, usize)> = Vec::new(); // (section, offset, symbol)
    for (si, s) in syms.iter().enumerate() {
        let sec = s.shndx as usize;
        if s.ty == E::STT_FUNC
            && (s.bind == E::STB_GLOBAL || s.bind == E::STB_WEAK)
            && s.shndx != E::SHN_UNDEF
            && sec < secs.len()
            && Some(sec) != text_idx
            && is_code(sec)
        {
            progs.push((sec, s.value, si));
        }
    }
    progs.sort();
    let mut programs: Vec<Program> = Vec::new();
    for &(sec, off, si) in &progs {
        let s = &syms[si];
        let n_insns = code[&sec].len();
        if off % 8 != 0 || off / 8 > n_insns as u64 {
            return Err(Error::format(format!(
                "program `{}`: offset {off} is not an instruction of section `{}`",
                String::from_utf8_lossy(s.name),
                String::from_utf8_lossy(secs[sec].name)
            )));
        }
        let start = (off / 8) as usize;
        let alias_of = programs
            .iter()
            .position(|p| p.sec == sec && p.insn_off == start)
            .unwrap_or(programs.len());
        let len = if s.size > 0 {
            (s.size / 8) as usize
        } else {
            // Up to the next function of the section, or its end.
            progs
                .iter()
                .filter(|&&(s2, o2, _)| s2 == sec && o2 > off)
                .map(|&(_, o2, _)| (o2 / 8) as usize)
                .min()
                .unwrap_or(n_insns)
                - start
        };
        if start + len > n_insns || len == 0 {
            return Err(Error::format(format!(
                "program `{}`: {} instructions from {start} do not fit section `{}` ({n_insns})",
                String::from_utf8_lossy(s.name),
                len,
                String::from_utf8_lossy(secs[sec].name)
            )));
        }
        programs.push(Program {
            name: cstring(s.name),
            section: cstring(secs[sec].name).into(),
            alias_of,
            insn_off: start,
            insn_cnt: len,
            layout: 0,
            sec,
            attach: super::attach::Attach::of_section(secs[sec].name),
            autoload: !secs[sec].name.starts_with(b"?"),
        });
    }

    // Maps: BTF-defined ones, then the data sections.
    let (mut maps, map_of_symbol, map_values) = match maps_idx {
        Some(mi) => maps::btf_maps(mi, btf.as_ref(), &syms)?,
        None => Default::default(),
    };
    let data_map = maps::data_maps(&secs, btf.as_ref(), &mut maps)?;

    // Externs described by BTF: the VARs and FUNCs of `.ksyms` and
    // `.kconfig`; untyped ksyms without BTF come from relocations below.
    let is_weak = |name: &[u8]| {
        syms.iter()
            .any(|s| s.name == name && s.shndx == E::SHN_UNDEF && s.bind == E::STB_WEAK)
    };
    let mut externs: Vec<Extern> = match &local {
        Some(b) => externs::collect(b, is_weak)?,
        None => Vec::new(),
    };
    let mut extern_of: KeyMap<Vec<u8>, usize> = externs
        .iter()
        .enumerate()
        .map(|(i, x)| (x.name.to_bytes().to_vec(), i))
        .collect();
    let kconfig_map = externs
        .iter()
        .any(|x| x.kind == ExternKind::Kconfig)
        .then(|| {
            let size = externs::kconfig_size(&externs);
            maps.push(maps::data_map_of(
                b".kconfig",
                size,
                true,
                btf.as_ref(),
                Some(vec![0; size as usize]),
            ));
            maps.len() - 1
        });
    // struct_ops maps, last (as libbpf orders them).
    let mut st_ops_secs: Vec<usize> = Vec::new();
    for (i, s) in secs.iter().enumerate() {
        if struct_ops::section_kind(s.name).is_some() {
            let sym_value = |n: &[u8]| {
                syms.iter()
                    .find(|y| y.shndx as usize == i && y.name == n)
                    .map(|y| y.value)
            };
            maps.extend(struct_ops::maps(
                local.as_ref(),
                i,
                s.name,
                s.data,
                sym_value,
            )?);
            st_ops_secs.push(i);
        }
    }

    // Relocations of the code sections.
    // Per code section: (instruction, what its relocation points at),
    // sorted once all are read.
    let mut targets: KeyMap<usize, Vec<(usize, Target)>> = KeyMap::default();
    for (ri, rs) in secs.iter().enumerate() {
        if rs.sh_type != E::SHT_REL {
            continue;
        }
        let sec = rs.info as usize;
        if st_ops_secs.contains(&sec) {
            let mut rels = Vec::new();
            for (off, si) in rel_list(&table, ri, en, data)? {
                let sym = syms.get(si).ok_or_else(|| {
                    Error::format(format!("`.rel.struct_ops`: symbol index {si} out of range"))
                })?;
                rels.push(struct_ops::Rel {
                    offset: off,
                    sym_shndx: sym.shndx,
                    sym_value: sym.value,
                    sym_name: sym.name,
                });
            }
            let b = local
                .as_ref()
                .ok_or_else(|| Error::format("struct_ops need BTF"))?;
            struct_ops::collect_relos(b, sec, &rels, &mut maps, &mut programs)?;
            continue;
        }
        if Some(sec) == maps_idx {
            maps::map_slots(
                rel_list(&table, ri, en, data)?,
                &syms,
                &secs,
                &map_of_symbol,
                &map_values,
                &programs,
                &mut maps,
            )?;
            continue;
        }
        if !code.contains_key(&sec) {
            continue; // debug info, .BTF...
        }
        let sh = table
            .section(object::SectionIndex(ri))
            .map_err(format_err)?;
        let Some((rels, _)) = sh.rel(en, data).map_err(format_err)? else {
            continue;
        };
        for r in rels {
            let off = r.r_offset(en);
            let sym_idx = r.r_sym(en) as usize;
            let rtype = r.r_type(en);
            let insns = code[&sec];
            let idx = (off / 8) as usize;
            // Named on the error paths only.
            let at = |what: &str| {
                format!(
                    "{}, instruction {idx} (section `{}`): {what}",
                    reloc::owner_name(&programs, &syms, text_idx, &secs, sec, idx),
                    String::from_utf8_lossy(secs[sec].name)
                )
            };
            if off % 8 != 0 || idx >= insns.len() {
                return Err(Error::format(at(&format!(
                    "relocation offset {off} is not an instruction"
                ))));
            }
            let sym = syms.get(sym_idx).ok_or_else(|| {
                Error::format(at(&format!(
                    "symbol index {sym_idx} out of range ({} symbols)",
                    syms.len()
                )))
            })?;
            let sname = crate::cname::Lossy(sym.name);
            let insn = insns.get(idx);
            let target = match rtype {
                E::R_BPF_64_64 => {
                    if !insn.is_ld_imm64() || idx + 1 >= insns.len() {
                        return Err(Error::format(at(&format!(
                            "relocation for `{sname}` on an instruction that is not ld_imm64 (opcode {:#04x})",
                            insn.code
                        ))));
                    }
                    let ssec = sym.shndx as usize;
                    if sym.shndx == E::SHN_UNDEF {
                        let name = sym.name.to_vec();
                        // An ld_imm64 of a kfunc (bpf_ksym_exists) is one
                        // of a typed ksym, as libbpf relocates it.
                        let e = match extern_of.get(&name) {
                            Some(&e) => e,
                            None => {
                                // An extern BTF does not describe (no BTF, or an
                                // asm label): an untyped ksym.
                                if sym.name.is_empty() {
                                    return Err(Error::format(at(
                                        "relocation against an unnamed undefined symbol",
                                    )));
                                }
                                extern_of.insert(name, externs.len());
                                externs.push(Extern::untyped(
                                    cstring(sym.name),
                                    sym.bind == E::STB_WEAK,
                                ));
                                externs.len() - 1
                            }
                        };
                        Target::Ksym(e)
                    } else if Some(ssec) == maps_idx {
                        let m =
                            map_of_symbol
                                .get(&(ssec, sym.value))
                                .copied()
                                .ok_or_else(|| {
                                    Error::format(at(&format!("`{sname}` is not a map of `.maps`")))
                                })?;
                        Target::MapFd(m)
                    } else if let Some(&m) = data_map.get(&ssec) {
                        Target::MapValue(m, sym.value)
                    } else if Some(ssec) == text_idx {
                        Target::Func(sym.value)
                    } else {
                        return Err(Error::unsupported(at(&format!(
                            "ld_imm64 of `{sname}` in section `{}`: not a map, data section or function",
                            String::from_utf8_lossy(secs.get(ssec).map_or(&b"?"[..], |s| s.name))
                        ))));
                    }
                }
                E::R_BPF_64_32 => {
                    if !insn.is_call() {
                        return Err(Error::format(at(&format!(
                            "call relocation for `{sname}` on an instruction that is not a call (opcode {:#04x})",
                            insn.code
                        ))));
                    }
                    if sym.shndx == E::SHN_UNDEF {
                        match extern_of.get(sym.name) {
                            Some(&e) if externs[e].kind == ExternKind::Kfunc => {
                                set_target(&mut targets, sec, idx, Target::Kfunc(e));
                                continue;
                            }
                            _ => {
                                return Err(Error::unsupported(at(&format!(
                                    "a call to extern `{sname}`, which is not a kfunc: declare it \
                                     `extern ... {sname}(...) __ksym;`"
                                ))))
                            }
                        }
                    }
                    if Some(sym.shndx as usize) != text_idx {
                        return Err(Error::unsupported(at(&format!(
                            "call to `{sname}`, outside .text: subprograms must be in .text"
                        ))));
                    }
                    Target::Call(sym.value)
                }
                E::R_BPF_NONE => continue,
                t => {
                    return Err(Error::format(at(&format!(
                        "relocation type {t} for `{sname}` is not supported in code"
                    ))));
                }
            };
            set_target(&mut targets, sec, idx, target);
        }
    }

    for v in targets.values_mut() {
        // One relocation per instruction: the last one read wins, as it
        // did when this was a map.
        v.reverse();
        v.sort_by_key(|&(i, _)| i);
        v.dedup_by_key(|&mut (i, _)| i);
    }

    super::externs::number_as_libbpf(&mut externs);

    // The BTF a loader gives BPF_BTF_LOAD.
    let loadable = match &btf {
        Some(b) => Some(super::loadable::loadable_btf(
            b.clone(),
            &secs,
            &syms,
            &externs,
        )?),
        None => None,
    };

    let (mut core_sites, core_by_sec) = match (&btf_ext, &local) {
        (Some(ext), Some(local)) => core_sites(ext, local, &secs, &code, |sec, idx| {
            reloc::owner_name(&programs, &syms, text_idx, &secs, sec, idx)
        })?,
        _ => Default::default(),
    };

    let code = Code {
        secs: &secs,
        syms: &syms,
        insns: &code,
        text: text_idx,
        targets: &targets,
        externs: &externs,
        ext: btf_ext.as_ref(),
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
        license,
        programs,
        maps,
        externs,
        layouts,
        btf: loadable,
        local_btf: local,
        core_sites,
        kconfig_map,
        fd_array: Vec::new(),
        ksyms_resolved: false,
        btf_kernel: None,
        btf_error: None,
        relocated: false,
    })
}

/// The (offset, symbol index) of each entry of REL section `ri`.
fn rel_list(
    table: &object::read::elf::SectionTable<'_, FileHeader64<LE>>,
    ri: usize,
    en: LE,
    data: &[u8],
) -> Result<Vec<(u64, usize)>> {
    let sh = table
        .section(object::SectionIndex(ri))
        .map_err(format_err)?;
    Ok(match sh.rel(en, data).map_err(format_err)? {
        Some((rels, _)) => rels
            .iter()
            .map(|r| (r.r_offset(en), r.r_sym(en) as usize))
            .collect(),
        None => Vec::new(),
    })
}

fn set_target(
    targets: &mut KeyMap<usize, Vec<(usize, Target)>>,
    sec: usize,
    idx: usize,
    t: Target,
) {
    targets.entry(sec).or_default().push((idx, t));
}

/// The CO-RE records of `.BTF.ext`, each checked to fall on an
/// instruction of a code section and described as libbpf prints it;
/// and per section, (site, instruction) by instruction.
#[allow(clippy::type_complexity)]
fn core_sites(
    ext: &BtfExt<'_>,
    local: &LocalBtf,
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
            let w =
                |k: usize| u32::from_le_bytes([r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]]);
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
