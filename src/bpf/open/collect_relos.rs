//! `collect_relos`: what each relocation points at. `.rel.struct_ops`
//! gives struct_ops maps their programs, `.rel.maps` maps of maps and
//! program arrays their initial slots, and the relocations of code say,
//! per instruction, which map, data section, extern or subprogram it
//! refers to (adding the untyped ksyms the BTF does not describe).

use object::elf as E;

use super::maps;
use super::{Collected, Externs, Maps, Targets};
use crate::bpf::attach::struct_ops;
use crate::bpf::elf::{cstring, Elf, Sym};
use crate::bpf::link::reloc::{self, RelocTarget};
use crate::bpf::object::externs::{Extern, ExternKind};
use crate::bpf::object::Program;
use crate::error::{Error, Result};

/// Every REL section, by what it relocates; the targets of code
/// relocations, one per instruction (the last one read wins).
pub(super) fn collect(
    elf: &Elf<'_>,
    c: &Collected<'_>,
    programs: &mut [Program],
    m: &mut Maps,
    externs: &mut Externs,
) -> Result<Targets> {
    let mut targets = Targets::default();
    for (ri, rs) in elf.secs.iter().enumerate() {
        if rs.sh_type != E::SHT_REL {
            continue;
        }
        let sec = rs.info as usize;
        if m.struct_ops_secs.contains(&sec) {
            struct_ops_relos(elf, c, ri, sec, programs, m)?;
        } else if Some(sec) == c.maps_sec {
            let rels = elf.rels(ri)?.into_iter().map(|(o, s, _)| (o, s)).collect();
            maps::map_slots(
                rels,
                &elf.syms,
                &elf.secs,
                &m.of_symbol,
                &m.values,
                programs,
                &mut m.list,
            )?;
        } else if c.code.contains_key(&sec) {
            for (off, sym_idx, rtype) in elf.rels(ri)? {
                let at = Site {
                    elf,
                    c,
                    programs,
                    sec,
                    idx: (off / 8) as usize,
                };
                if let Some(t) = code_target(&at, off, sym_idx, rtype, m, externs)? {
                    targets.entry(sec).or_default().push((at.idx, t));
                }
            }
        }
        // Others: debug info, .BTF...
    }
    for v in targets.values_mut() {
        // One relocation per instruction: the last one read wins, as it
        // did when this was a map.
        v.reverse();
        v.sort_by_key(|&(i, _)| i);
        v.dedup_by_key(|&mut (i, _)| i);
    }
    Ok(targets)
}

/// `.rel.struct_ops`: the programs of a struct_ops section's variables.
fn struct_ops_relos(
    elf: &Elf<'_>,
    c: &Collected<'_>,
    ri: usize,
    sec: usize,
    programs: &mut [Program],
    m: &mut Maps,
) -> Result<()> {
    let mut rels = Vec::new();
    for (off, si, _) in elf.rels(ri)? {
        let sym = elf.syms.get(si).ok_or_else(|| {
            Error::format(format!("`.rel.struct_ops`: symbol index {si} out of range"))
        })?;
        rels.push(struct_ops::Rel {
            offset: off,
            sym_shndx: sym.shndx,
            sym_value: sym.value,
            sym_name: sym.name,
        });
    }
    let b = c
        .local
        .as_ref()
        .ok_or_else(|| Error::format("struct_ops need BTF"))?;
    struct_ops::collect_relos(b, sec, &rels, &mut m.list, programs)
}

/// Where a code relocation is, for its messages.
struct Site<'e, 'a> {
    elf: &'e Elf<'a>,
    c: &'e Collected<'a>,
    programs: &'e [Program],
    sec: usize,
    idx: usize,
}

impl Site<'_, '_> {
    /// "program `x`, instruction N (section `s`): what" (named on the
    /// error paths only).
    fn at(&self, what: &str) -> String {
        let (secs, syms) = (&self.elf.secs, &self.elf.syms);
        format!(
            "{}, instruction {} (section `{}`): {what}",
            reloc::owner_name(self.programs, syms, self.c.text, secs, self.sec, self.idx),
            self.idx,
            String::from_utf8_lossy(secs[self.sec].name)
        )
    }
}

/// What the relocation at byte `off` of a code section points at (`None`:
/// nothing, `R_BPF_NONE`).
fn code_target(
    at: &Site<'_, '_>,
    off: u64,
    sym_idx: usize,
    rtype: u32,
    m: &Maps,
    externs: &mut Externs,
) -> Result<Option<RelocTarget>> {
    let insns = at.c.code[&at.sec];
    let idx = at.idx;
    if off % 8 != 0 || idx >= insns.len() {
        return Err(Error::format(
            at.at(&format!("relocation offset {off} is not an instruction")),
        ));
    }
    let syms = &at.elf.syms;
    let sym = syms.get(sym_idx).ok_or_else(|| {
        Error::format(at.at(&format!(
            "symbol index {sym_idx} out of range ({} symbols)",
            syms.len()
        )))
    })?;
    let sname = crate::cname::Lossy(sym.name);
    let insn = insns.get(idx);
    match rtype {
        E::R_BPF_64_64 => {
            if !insn.is_ld_imm64() || idx + 1 >= insns.len() {
                return Err(Error::format(at.at(&format!(
                    "relocation for `{sname}` on an instruction that is not ld_imm64 (opcode {:#04x})",
                    insn.code
                ))));
            }
            ld_imm64_target(at, sym, m, externs).map(Some)
        }
        E::R_BPF_64_32 => {
            if !insn.is_call() {
                return Err(Error::format(at.at(&format!(
                    "call relocation for `{sname}` on an instruction that is not a call (opcode {:#04x})",
                    insn.code
                ))));
            }
            if sym.shndx == E::SHN_UNDEF {
                return match externs.by_name.get(sym.name) {
                    Some(&e) if externs.list[e].kind == ExternKind::Kfunc => {
                        Ok(Some(RelocTarget::Kfunc(e)))
                    }
                    _ => Err(Error::unsupported(at.at(&format!(
                        "a call to extern `{sname}`, which is not a kfunc: declare it \
                         `extern ... {sname}(...) __ksym;`"
                    )))),
                };
            }
            if Some(sym.shndx as usize) != at.c.text {
                return Err(Error::unsupported(at.at(&format!(
                    "call to `{sname}`, outside .text: subprograms must be in .text"
                ))));
            }
            Ok(Some(RelocTarget::Call(sym.value)))
        }
        E::R_BPF_NONE => Ok(None),
        t => Err(Error::format(at.at(&format!(
            "relocation type {t} for `{sname}` is not supported in code"
        )))),
    }
}

/// What an ld_imm64 relocation against `sym` loads: an extern (an
/// untyped ksym if BTF does not describe it), a map, a data section's
/// value, or a subprogram's address.
fn ld_imm64_target(
    at: &Site<'_, '_>,
    sym: &Sym<'_>,
    m: &Maps,
    externs: &mut Externs,
) -> Result<RelocTarget> {
    let sname = crate::cname::Lossy(sym.name);
    let ssec = sym.shndx as usize;
    if sym.shndx == E::SHN_UNDEF {
        // An ld_imm64 of a kfunc (bpf_ksym_exists) is one of a typed
        // ksym, as libbpf relocates it.
        if let Some(&e) = externs.by_name.get(sym.name) {
            return Ok(RelocTarget::Ksym(e));
        }
        // An extern BTF does not describe (no BTF, or an asm label): an
        // untyped ksym.
        if sym.name.is_empty() {
            return Err(Error::format(
                at.at("relocation against an unnamed undefined symbol"),
            ));
        }
        let e = externs.list.len();
        externs.by_name.insert(sym.name.to_vec(), e);
        externs
            .list
            .push(Extern::untyped(cstring(sym.name), sym.bind == E::STB_WEAK));
        Ok(RelocTarget::Ksym(e))
    } else if Some(ssec) == at.c.maps_sec {
        m.of_symbol
            .get(&(ssec, sym.value))
            .copied()
            .map(RelocTarget::MapFd)
            .ok_or_else(|| Error::format(at.at(&format!("`{sname}` is not a map of `.maps`"))))
    } else if let Some(&mi) = m.data.get(&ssec) {
        Ok(RelocTarget::MapValue(mi, sym.value))
    } else if Some(ssec) == at.c.text {
        Ok(RelocTarget::Func(sym.value))
    } else {
        let secs = &at.elf.secs;
        Err(Error::unsupported(at.at(&format!(
            "ld_imm64 of `{sname}` in section `{}`: not a map, data section or function",
            String::from_utf8_lossy(secs.get(ssec).map_or(&b"?"[..], |s| s.name))
        ))))
    }
}
