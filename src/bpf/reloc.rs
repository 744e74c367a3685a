//! Program layouts: a program's instructions followed by the subprograms it
//! calls, each relocation recorded in final instruction indices (CO-RE
//! ones included); and the patching of map fds, data-section values,
//! extern addresses and BTF ids.

use crate::base::hash::KeyMap;
use std::ffi::CString;

use super::btf_ext::BtfExt;
use super::elf::{Sec, Sym};
use super::externs::ExternKind;
use super::insn::{self, Insn, Insns};
use super::{
    CoreSite, Extern, Layout, Map, Program, Reloc, RelocKind, FUNC_INFO_SIZE, LINE_INFO_SIZE,
};
use crate::error::{Error, Result};

/// What a relocation of the ELF points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// An extern (index into the object's externs): an untyped or typed
    /// ksym, a `.kconfig` variable.
    Ksym(usize),
    /// A kfunc call (index into the object's externs).
    Kfunc(usize),
    /// A `.maps` map.
    MapFd(usize),
    /// A data-section map and the symbol's offset in the section.
    MapValue(usize, u64),
    /// A `.text` function's address: the symbol's value (bytes).
    Func(u64),
    /// A call into `.text`: the symbol's value (bytes).
    Call(u64),
}

/// Everything layouts are made from.
pub(super) struct Code<'a> {
    pub secs: &'a [Sec<'a>],
    pub syms: &'a [Sym<'a>],
    pub insns: &'a KeyMap<usize, Insns<'a>>,
    pub text: Option<usize>,
    /// Per code section: (instruction, what its relocation points at), by
    /// instruction.
    pub targets: &'a KeyMap<usize, Vec<(usize, Target)>>,
    pub externs: &'a [Extern],
    pub ext: Option<&'a BtfExt<'a>>,
    pub core_sites: &'a [CoreSite],
    /// Per code section: its CO-RE sites (index, instruction), by instruction.
    pub core_by_sec: &'a KeyMap<usize, Vec<(usize, usize)>>,
}

/// "program `x`" or "subprogram `y`" for the code at `sec`/`idx`.
pub(super) fn owner_name(
    programs: &[Program],
    syms: &[Sym<'_>],
    text: Option<usize>,
    secs: &[Sec<'_>],
    sec: usize,
    idx: usize,
) -> String {
    if Some(sec) == text {
        if let Some(s) = subprog_at(syms, sec, idx) {
            return format!("subprogram `{}`", String::from_utf8_lossy(s.name));
        }
        return "`.text`".into();
    }
    programs
        .iter()
        .find(|p| p.sec == sec && p.insn_off <= idx && idx < p.insn_off + p.insn_cnt)
        .map_or_else(
            || format!("section `{}`", String::from_utf8_lossy(secs[sec].name)),
            |p| format!("program `{}`", p.name.to_string_lossy()),
        )
}

/// The `.text` function containing instruction `idx`.
fn subprog_at<'s>(syms: &'s [Sym<'s>], text: usize, idx: usize) -> Option<&'s Sym<'s>> {
    let at = (idx * 8) as u64;
    syms.iter().find(|s| {
        s.ty == object::elf::STT_FUNC
            && s.shndx as usize == text
            && s.value <= at
            && at < s.value.saturating_add(s.size.max(8))
    })
}

/// A piece of code placed in a layout: `len` instructions of `sec` from
/// `start`, at final index `at`.
#[derive(Clone, Copy)]
struct Piece {
    sec: usize,
    start: usize,
    len: usize,
    at: usize,
}

/// Builds program `p`'s layout: its instructions, then every subprogram it
/// reaches, appended depth-first in the order calls find them, once each
/// (mutual recursion included), with calls and callback addresses patched.
pub(super) fn layout(code: &Code<'_>, programs: &[Program], p: usize) -> Result<Layout> {
    let prog = &programs[p];
    let sec = prog.sec;
    let mut out = Layout {
        owner: p,
        ..Default::default()
    };
    code.insns[&sec].copy_to(prog.insn_off, prog.insn_cnt, &mut out.base);
    let mut pieces = vec![Piece {
        sec,
        start: prog.insn_off,
        len: prog.insn_cnt,
        at: 0,
    }];
    // Subprogram start (in .text) -> final index.
    let mut placed: KeyMap<usize, usize> = KeyMap::default();
    // Depth-first: (piece, next instruction to look at).
    let mut stack: Vec<(Piece, usize)> = vec![(pieces[0], 0)];
    let pname = prog.name.to_string_lossy().into_owned();
    while let Some((piece, mut i)) = stack.pop() {
        // The section's relocations from here on, walked with the code.
        let sec_targets = code
            .targets
            .get(&piece.sec)
            .map_or(&[][..], |v| v.as_slice());
        let mut next = sec_targets.partition_point(|&(k, _)| k < piece.start + i);
        while i < piece.len {
            // Only relocated instructions and calls need a look: skip to
            // the next of either (most of a large program is neither).
            let stop = sec_targets
                .get(next)
                .map_or(piece.len, |&(k, _)| k - piece.start)
                .min(piece.len);
            match out.base[piece.at + i..piece.at + stop]
                .iter()
                .position(Insn::is_pseudo_call)
            {
                Some(skip) => i += skip,
                None if stop == piece.len => break,
                None => i = stop,
            }
            let si = piece.start + i;
            let fi = piece.at + i;
            i += 1;
            let insn = out.base[fi];
            let target = match sec_targets.get(next) {
                Some(&(k, t)) if k == si => {
                    next += 1;
                    Some(t)
                }
                _ => None,
            };
            let where_ = || format!("program `{pname}`, instruction {fi}");
            // A call or callback into .text: where does it land?
            let sub = match target {
                Some(Target::Call(v)) => {
                    Some(((v / 8) as i64 + insn.imm as i64 + 1, RelocKind::Call))
                }
                Some(Target::Func(v)) => {
                    // A symbol value past i64 is no function: out of range below.
                    Some((
                        (v as i64).saturating_add(insn.imm as i64) / 8,
                        RelocKind::Func,
                    ))
                }
                None if insn.is_pseudo_call() => {
                    if Some(piece.sec) != code.text {
                        return Err(Error::unsupported(format!(
                            "{}: a call without relocation outside .text",
                            where_()
                        )));
                    }
                    Some((si as i64 + insn.imm as i64 + 1, RelocKind::Call))
                }
                _ => None,
            };
            if let Some((t, kind)) = sub {
                let text = code
                    .text
                    .ok_or_else(|| Error::format(format!("{}: a call but no .text", where_())))?;
                let tinsns = code
                    .insns
                    .get(&text)
                    .ok_or_else(|| Error::format(format!("{}: .text is not code", where_())))?;
                let sym = usize::try_from(t)
                    .ok()
                    .filter(|&t| t < tinsns.len())
                    .and_then(|t| {
                        subprog_at(code.syms, text, t).filter(|s| s.value == (t * 8) as u64)
                    })
                    .ok_or_else(|| {
                        Error::format(format!(
                            "{}: the call target ({t}) is not the start of a function in .text",
                            where_()
                        ))
                    })?;
                let start = (sym.value / 8) as usize;
                let len = ((sym.size / 8) as usize).min(tinsns.len() - start);
                if len == 0 {
                    return Err(Error::format(format!(
                        "{}: subprogram `{}` has no size",
                        where_(),
                        String::from_utf8_lossy(sym.name)
                    )));
                }
                let at = match placed.get(&start) {
                    Some(&at) => at,
                    None => {
                        let at = out.base.len();
                        tinsns.copy_to(start, len, &mut out.base);
                        placed.insert(start, at);
                        let new = Piece {
                            sec: text,
                            start,
                            len,
                            at,
                        };
                        pieces.push(new);
                        // Finish the callee before going on with the caller.
                        stack.push((piece, i));
                        stack.push((new, 0));
                        patch_call(&mut out, fi, at, kind, sym.name);
                        break;
                    }
                };
                patch_call(&mut out, fi, at, kind, sym.name);
                continue;
            }
            if matches!(
                target,
                Some(Target::MapFd(_) | Target::MapValue(..) | Target::Ksym(_))
            ) && i >= piece.len
            {
                return Err(Error::format(format!(
                    "{}: the ld_imm64 is cut by the end of its function",
                    where_()
                )));
            }
            match target {
                Some(Target::MapFd(m)) => {
                    out.base[fi].set_src_reg(insn::PSEUDO_MAP_FD);
                    out.relocs.push(Reloc {
                        insn_idx: fi,
                        kind: RelocKind::MapFd,
                        name: None,
                        target: m,
                        addend: 0,
                        flags: 0,
                    });
                }
                Some(Target::MapValue(m, off)) => {
                    out.base[fi].set_src_reg(insn::PSEUDO_MAP_VALUE);
                    out.relocs.push(Reloc {
                        insn_idx: fi,
                        kind: RelocKind::MapValue,
                        name: None,
                        target: m,
                        addend: (insn.imm as i64).saturating_add(off as i64),
                        flags: 0,
                    });
                }
                Some(Target::Ksym(e)) => {
                    let x = &code.externs[e];
                    out.base[fi].set_src_reg(0);
                    let (kind, addend) = match x.kind {
                        ExternKind::KsymBtf => (RelocKind::KsymBtf, 0),
                        ExternKind::Kconfig => {
                            (RelocKind::Kconfig, x.kcfg.map_or(0, |k| k.off as i64))
                        }
                        _ => (RelocKind::Ksym, 0),
                    };
                    out.relocs.push(Reloc {
                        insn_idx: fi,
                        kind,
                        name: None,
                        target: e,
                        addend,
                        flags: 0,
                    });
                }
                Some(Target::Kfunc(e)) => {
                    out.relocs.push(Reloc {
                        insn_idx: fi,
                        kind: RelocKind::Kfunc,
                        name: None,
                        target: e,
                        addend: 0,
                        flags: 0,
                    });
                }
                _ => {}
            }
        }
    }
    if let Some(ext) = code.ext {
        ext_records(code, ext, &pieces, &mut out);
    }
    core_records(code, &pieces, &mut out);
    out.relocs.sort_by_key(|r| r.insn_idx);
    Ok(out)
}

fn patch_call(out: &mut Layout, fi: usize, at: usize, kind: RelocKind, name: &[u8]) {
    out.base[fi].imm = at as i32 - (fi as i32 + 1);
    if kind == RelocKind::Func {
        out.base[fi].set_src_reg(insn::PSEUDO_FUNC);
    }
    out.relocs.push(Reloc {
        insn_idx: fi,
        kind,
        name: Some(CString::new(name.to_vec()).unwrap_or_default()),
        target: at,
        addend: 0,
        flags: 0,
    });
}

/// The CO-RE sites of the layout's pieces, in final instruction indices,
/// each also shown as a relocation.
fn core_records(code: &Code<'_>, pieces: &[Piece], out: &mut Layout) {
    for p in pieces {
        let Some(sites) = code.core_by_sec.get(&p.sec) else {
            continue;
        };
        let from = sites.partition_point(|&(_, i)| i < p.start);
        for &(site, i) in sites[from..]
            .iter()
            .take_while(|&&(_, i)| i < p.start + p.len)
        {
            let fi = p.at + i - p.start;
            let s = &code.core_sites[site];
            out.core.push((fi, site));
            out.relocs.push(Reloc {
                insn_idx: fi,
                kind: RelocKind::Core,
                name: Some(s.text.clone()),
                target: s.rec.kind as usize,
                addend: 0,
                flags: 0,
            });
        }
    }
    out.core.sort_by_key(|&(fi, _)| fi);
}

/// func_info and line_info of the layout's pieces, rebased to final
/// instruction indices.
fn ext_records(code: &Code<'_>, ext: &BtfExt<'_>, pieces: &[Piece], out: &mut Layout) {
    let mut funcs: Vec<u8> = Vec::new();
    let mut lines: Vec<u8> = Vec::new();
    for p in pieces {
        let name = code.secs[p.sec].name;
        if let Some(s) = ext.func_info.get(name) {
            rebase::<FUNC_INFO_SIZE>(s, p, &mut funcs);
        }
        if let Some(s) = ext.line_info.get(name) {
            rebase::<LINE_INFO_SIZE>(s, p, &mut lines);
        }
    }
    // Pieces are placed in order and each section's records are sorted by
    // offset (as the compiler writes them): most layouts are in order
    // already; sort the others (stably, as before).
    out.func_info = sorted_records::<FUNC_INFO_SIZE>(funcs);
    out.line_info = sorted_records::<LINE_INFO_SIZE>(lines);
}

/// Appends the records of `s` that fall in piece `p` (an instruction
/// offset in bytes, aligned, inside it), each `N` bytes with its offset
/// made the final instruction index. A large program has tens of
/// thousands of line_info records: one tight loop per part of the
/// section, no per-record closure or bounds check beyond the record's.
fn rebase<const N: usize>(s: &super::btf_ext::ExtSection<'_>, p: &Piece, out: &mut Vec<u8>) {
    let size = s.record_size;
    if size < N {
        return;
    }
    let (lo, hi) = (p.start as u64 * 8, (p.start + p.len) as u64 * 8);
    // final index = idx - start + at, which wraps in u64 when at < start.
    let shift = (p.at as u64).wrapping_sub(p.start as u64);
    out.reserve(s.len() * N);
    for part in &s.parts {
        for r in part.chunks_exact(size) {
            let off = u32::from_le_bytes([r[0], r[1], r[2], r[3]]) as u64;
            if off % 8 != 0 || off < lo || off >= hi {
                continue;
            }
            let mut rec = [0u8; N];
            rec[..4].copy_from_slice(&((off / 8).wrapping_add(shift) as u32).to_le_bytes());
            rec[4..].copy_from_slice(&r[4..N]);
            out.extend_from_slice(&rec);
        }
    }
}

/// Records of `N` bytes sorted by their first u32 (the final instruction).
fn sorted_records<const N: usize>(recs: Vec<u8>) -> Vec<u8> {
    let key = |r: &[u8]| u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
    let mut chunks = recs.chunks_exact(N);
    let mut prev = 0;
    if chunks.all(|r| {
        let k = key(r);
        let ok = k >= prev;
        prev = k;
        ok
    }) {
        return recs;
    }
    let mut v: Vec<&[u8]> = recs.chunks_exact(N).collect();
    v.sort_by_key(|r| key(r));
    v.concat()
}

/// Writes map fds, map value offsets, extern addresses and BTF ids into
/// `l.insns` (the calls were patched when the layout was made, CO-RE
/// relocations just before), as libbpf's `bpf_object__relocate_data`.
pub(super) fn patch(l: &mut Layout, maps: &[Map], externs: &[Extern], kconfig: Option<usize>) {
    for r in &l.relocs {
        let i = r.insn_idx;
        let insns = &mut l.insns;
        match r.kind {
            RelocKind::MapFd => {
                insns[i].imm = maps[r.target].fd.unwrap_or(-1);
                insns[i + 1].imm = 0;
            }
            RelocKind::MapValue => {
                insns[i].imm = maps[r.target].fd.unwrap_or(-1);
                insns[i + 1].imm = r.addend as i32;
            }
            RelocKind::Kconfig => {
                insns[i].set_src_reg(insn::PSEUDO_MAP_VALUE);
                insns[i].imm = kconfig.and_then(|m| maps[m].fd).unwrap_or(-1);
                insns[i + 1].imm = r.addend as i32;
            }
            RelocKind::KsymBtf if externs[r.target].resolved => {
                let x = &externs[r.target];
                insns[i].set_src_reg(insn::PSEUDO_BTF_ID);
                insns[i].imm = x.btf_id as i32;
                insns[i + 1].imm = x.btf_obj_fd;
            }
            RelocKind::Ksym | RelocKind::KsymBtf => {
                // A weak typed ksym not found takes the untyped way: 0.
                let a = externs[r.target].addr;
                insns[i].imm = a as u32 as i32;
                insns[i + 1].imm = (a >> 32) as u32 as i32;
            }
            RelocKind::Kfunc => {
                let x = &externs[r.target];
                insns[i].set_src_reg(insn::PSEUDO_KFUNC_CALL);
                (insns[i].imm, insns[i].off) = if x.resolved {
                    (x.btf_id as i32, x.fd_idx)
                } else {
                    (0, 0) // a weak kfunc not found, as libbpf
                };
            }
            RelocKind::Call | RelocKind::Func | RelocKind::Core => {}
        }
    }
}
