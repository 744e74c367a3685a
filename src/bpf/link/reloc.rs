//! Program layouts: a program's instructions followed by the subprograms it
//! calls, each relocation recorded in final instruction indices (CO-RE
//! ones included); and the patching of map fds, data-section values,
//! extern addresses and BTF ids.

use crate::base::hash::KeyMap;
use std::ffi::CString;

use crate::bpf::elf::btf_ext::BtfExt;
use crate::bpf::elf::{Sec, Sym};
use crate::bpf::insn::{self, Insns};
use crate::bpf::object::externs::{Extern, ExternKind};
use crate::bpf::object::{
    CoreSite, Map, ProgLayout, Program, Reloc, RelocKind, FUNC_INFO_SIZE, LINE_INFO_SIZE,
};
use crate::error::{Error, Result};

/// What a relocation of the ELF points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::bpf) enum RelocTarget {
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
pub(in crate::bpf) struct Code<'a> {
    pub secs: &'a [Sec<'a>],
    pub syms: &'a [Sym<'a>],
    pub insns: &'a KeyMap<usize, Insns<'a>>,
    pub text: Option<usize>,
    /// Per code section: (instruction, what its relocation points at), by
    /// instruction.
    pub targets: &'a KeyMap<usize, Vec<(usize, RelocTarget)>>,
    pub externs: &'a [Extern],
    pub ext: Option<&'a BtfExt<'a>>,
    pub core_sites: &'a [CoreSite],
    /// Per code section: its CO-RE sites (index, instruction), by instruction.
    pub core_by_sec: &'a KeyMap<usize, Vec<(usize, usize)>>,
}

/// "program `x`" or "subprogram `y`" for the code at `sec`/`idx`.
pub(in crate::bpf) fn owner_name(
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
pub(in crate::bpf) fn layout(
    code: &Code<'_>,
    programs: &[Program],
    p: usize,
) -> Result<ProgLayout> {
    let prog = &programs[p];
    let sec = prog.sec;
    let mut out = ProgLayout {
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
            match insn::first_pseudo_call(&out.base[piece.at + i..piece.at + stop]) {
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
                Some(RelocTarget::Call(v)) => {
                    Some(((v / 8) as i64 + insn.imm as i64 + 1, RelocKind::Call))
                }
                Some(RelocTarget::Func(v)) => {
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
                let (text, tinsns, start, len, name) = callee(code, t, &where_)?;
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
                        patch_call(&mut out, fi, at, kind, name);
                        break;
                    }
                };
                patch_call(&mut out, fi, at, kind, name);
                continue;
            }
            if matches!(
                target,
                Some(RelocTarget::MapFd(_) | RelocTarget::MapValue(..) | RelocTarget::Ksym(_))
            ) && i >= piece.len
            {
                return Err(Error::format(format!(
                    "{}: the ld_imm64 is cut by the end of its function",
                    where_()
                )));
            }
            data_reloc(&mut out, code.externs, fi, target);
        }
    }
    if let Some(ext) = code.ext {
        ext_records(code, ext, &pieces, &mut out);
    }
    core_records(code, &pieces, &mut out);
    out.relocs.sort_by_key(|r| r.insn_idx);
    Ok(out)
}

/// The subprogram a call or callback lands on (`t`, an instruction of
/// `.text`): `.text`, its code, the subprogram's start, length and name.
#[allow(clippy::type_complexity)]
fn callee<'a>(
    code: &Code<'a>,
    t: i64,
    where_: &dyn Fn() -> String,
) -> Result<(usize, Insns<'a>, usize, usize, &'a [u8])> {
    let text = code
        .text
        .ok_or_else(|| Error::format(format!("{}: a call but no .text", where_())))?;
    let tinsns = *code
        .insns
        .get(&text)
        .ok_or_else(|| Error::format(format!("{}: .text is not code", where_())))?;
    let sym = usize::try_from(t)
        .ok()
        .filter(|&t| t < tinsns.len())
        .and_then(|t| subprog_at(code.syms, text, t).filter(|s| s.value == (t * 8) as u64))
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
    Ok((text, tinsns, start, len, sym.name))
}

/// The relocation of a map, data section or extern at final instruction
/// `fi` (its ld_imm64 marked as the kernel wants it), if `target` is one.
fn data_reloc(out: &mut ProgLayout, externs: &[Extern], fi: usize, target: Option<RelocTarget>) {
    let insn = out.base[fi];
    match target {
        Some(RelocTarget::MapFd(m)) => {
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
        Some(RelocTarget::MapValue(m, off)) => {
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
        Some(RelocTarget::Ksym(e)) => {
            let x = &externs[e];
            out.base[fi].set_src_reg(0);
            let (kind, addend) = match x.kind {
                ExternKind::KsymBtf | ExternKind::Kfunc => (RelocKind::KsymBtf, 0),
                ExternKind::Kconfig => (RelocKind::Kconfig, x.kcfg.map_or(0, |k| k.off as i64)),
                ExternKind::AliasValue | ExternKind::AliasAddr => (RelocKind::Alias, 0),
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
        Some(RelocTarget::Kfunc(e)) => {
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

fn patch_call(out: &mut ProgLayout, fi: usize, at: usize, kind: RelocKind, name: &[u8]) {
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
fn core_records(code: &Code<'_>, pieces: &[Piece], out: &mut ProgLayout) {
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
fn ext_records(code: &Code<'_>, ext: &BtfExt<'_>, pieces: &[Piece], out: &mut ProgLayout) {
    let (mut funcs, mut lines) = (Records::default(), Records::default());
    for p in pieces {
        let name = code.secs[p.sec].name;
        if let Some(s) = ext.func_info.get(name) {
            funcs.rebase::<FUNC_INFO_SIZE>(s, p);
        }
        if let Some(s) = ext.line_info.get(name) {
            lines.rebase::<LINE_INFO_SIZE>(s, p);
        }
    }
    out.func_info = funcs.sorted::<FUNC_INFO_SIZE>();
    out.line_info = lines.sorted::<LINE_INFO_SIZE>();
}

/// Rebased records of one kind, and whether they are in order so far.
#[derive(Default)]
struct Records {
    bytes: Vec<u8>,
    out_of_order: bool,
}

impl Records {
    /// Appends the records of `s` that fall in piece `p` (an instruction
    /// offset in bytes, aligned, inside it), each `N` bytes with its
    /// offset made the final instruction index.
    fn rebase<const N: usize>(&mut self, s: &crate::bpf::elf::btf_ext::ExtSection<'_>, p: &Piece) {
        let size = s.record_size;
        if size < N {
            return;
        }
        let (lo, hi) = (p.start as u64 * 8, (p.start + p.len) as u64 * 8);
        // final index = idx - start + at, which wraps in u64 when at < start.
        let shift = (p.at as u64).wrapping_sub(p.start as u64);
        let map = |off: u64| {
            let keep = off % 8 == 0 && (lo..hi).contains(&off);
            keep.then_some((off / 8).wrapping_add(shift) as u32)
        };
        for part in &s.parts {
            if size != N || !self.whole::<N>(part, (lo, hi), shift) {
                self.each::<N>(part, size, map);
            }
        }
    }

    /// The last record's instruction (0 when none).
    fn last(&self, n: usize) -> u32 {
        self.bytes
            .len()
            .checked_sub(n)
            .map_or(0, |at| first_u32(&self.bytes[at..]))
    }

    /// All of `part` (records of exactly N bytes), when every record falls
    /// in the piece (byte offsets `lo..hi`): what a compiler writes for a
    /// program's own section. A large program has tens of thousands of
    /// line_info records (pyperf600: 31,838): one copy, then each offset
    /// rewritten in place, in u32 (offsets are) with no branch per record.
    /// False, with nothing added, when a record does not fall in it.
    fn whole<const N: usize>(&mut self, part: &[u8], (lo, hi): (u64, u64), shift: u64) -> bool {
        let (Ok(lo), Ok(hi)) = (u32::try_from(lo), u32::try_from(hi)) else {
            return false;
        };
        let (span, shift) = (hi.wrapping_sub(lo), shift as u32);
        let start = self.bytes.len();
        // The output is in order where the input is (one shift for all),
        // and after what is already there.
        let (mut prev, mut missed, mut unordered) = (lo, false, false);
        let before = self.last(N);
        self.bytes.extend_from_slice(&part[..part.len() / N * N]);
        for rec in self.bytes[start..].chunks_exact_mut(N) {
            let off = first_u32(rec);
            missed |= (off.wrapping_sub(lo) >= span) | (off % 8 != 0);
            unordered |= off < prev;
            prev = off;
            rec[..4].copy_from_slice(&(off / 8).wrapping_add(shift).to_le_bytes());
        }
        if missed {
            self.bytes.truncate(start);
            return false;
        }
        let first = self.bytes.get(start..).map_or(before, first_u32);
        self.out_of_order |= unordered || (start > 0 && first < before);
        true
    }

    /// The records of `part` (`size` bytes each, the first `N` kept) that
    /// fall in the piece, one by one.
    fn each<const N: usize>(&mut self, part: &[u8], size: usize, map: impl Fn(u64) -> Option<u32>) {
        let mut prev = self.last(N);
        for r in part.chunks_exact(size) {
            if let Some(at) = map(first_u32(r) as u64) {
                self.out_of_order |= at < prev;
                prev = at;
                self.bytes.extend_from_slice(&at.to_le_bytes());
                self.bytes.extend_from_slice(&r[4..N]);
            }
        }
    }

    /// The records sorted by their first u32 (the final instruction):
    /// pieces are placed in order and each section's records are sorted
    /// by offset (as the compiler writes them), so most are in order
    /// already; the others are sorted stably, as before.
    fn sorted<const N: usize>(self) -> Vec<u8> {
        if !self.out_of_order {
            return self.bytes;
        }
        let mut v: Vec<&[u8]> = self.bytes.chunks_exact(N).collect();
        v.sort_by_key(|r| first_u32(r));
        v.concat()
    }
}

/// A record's first word (its instruction), read as one load (built from
/// four byte reads, the compiler keeps four).
fn first_u32(r: &[u8]) -> u32 {
    r.first_chunk::<4>().map_or(0, |w| u32::from_le_bytes(*w))
}

/// Writes map fds, map value offsets, extern addresses and BTF ids into
/// `l.insns` (the calls were patched when the layout was made, CO-RE
/// relocations just before), as libbpf's `bpf_object__relocate_data`.
pub(in crate::bpf) fn patch(
    l: &mut ProgLayout,
    maps: &[Map],
    externs: &[Extern],
    kconfig: Option<usize>,
) {
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
            RelocKind::Alias => {
                // The shared copy: 0, what libbpf gives a weak ksym that
                // kallsyms lacks; each alias's value is written in its own
                // copy (Object::alias_insns).
                insns[i].imm = 0;
                insns[i + 1].imm = 0;
            }
            RelocKind::Ksym | RelocKind::KsymBtf => {
                // A weak typed ksym not found takes the untyped way: 0.
                let a = externs[r.target].addr;
                insns[i].imm = a as u32 as i32;
                insns[i + 1].imm = (a >> 32) as u32 as i32;
            }
            RelocKind::Kfunc => {
                let x = &externs[r.target];
                if x.resolved {
                    insns[i].set_src_reg(insn::PSEUDO_KFUNC_CALL);
                    (insns[i].imm, insns[i].off) = (x.btf_id as i32, x.fd_idx);
                } else {
                    // A weak kfunc not found: libbpf's poisoned call, an
                    // invalid helper the verifier rejects only where it is
                    // reachable (bpf_ksym_exists() guards it).
                    insns[i] = insn::poisoned_kfunc_call(x.libbpf_idx);
                }
            }
            RelocKind::Call | RelocKind::Func | RelocKind::Core => {}
        }
    }
}
