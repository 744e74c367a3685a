//! `elf_collect`: what the sections say before maps and relocations: the
//! license, the BTF, the code sections, and the programs (global or weak
//! functions of executable sections other than `.text`, aliases included).

use object::elf as E;

use super::Collected;
use crate::base::hash::KeyMap;
use crate::bpf::elf::{cstring, Elf};
use crate::bpf::insn::Insns;
use crate::bpf::object::attach::Attach;
use crate::bpf::object::Program;
use crate::error::{Error, Result};
use crate::formats::btf::Btf;

/// The license, BTF and code of the object, and its programs.
pub(super) fn collect<'a>(elf: &Elf<'a>) -> Result<(Collected<'a>, Vec<Program>)> {
    let secs = &elf.secs;
    let license = elf
        .by_name(b"license")
        .map(|i| cstring(secs[i].data.split(|&b| b == 0).next().unwrap_or_default()))
        .unwrap_or_default();
    if elf.by_name(b"maps").is_some() {
        return Err(Error::unsupported(
            "legacy map definitions (section `maps`): use BTF-defined maps in `.maps`",
        ));
    }
    let text = elf.by_name(b".text").filter(|&i| elf.is_code(i));
    // The object's BTF, read by the one BTF reader (maps, externs, CO-RE,
    // `.BTF.ext` names); the loadable BTF is an edited copy of it.
    let local = match elf.by_name(b".BTF") {
        Some(i) => Some(Btf::parse(secs[i].data.to_vec()).map_err(|e| e.context("section .BTF"))?),
        None => None,
    };
    let mut code: KeyMap<usize, Insns<'_>> = KeyMap::default();
    for (i, s) in secs.iter().enumerate() {
        if elf.is_code(i) {
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
    let c = Collected {
        license,
        text,
        maps_sec: elf.by_name(b".maps"),
        local,
        code,
    };
    let programs = programs(elf, &c)?;
    Ok((c, programs))
}

/// The programs, by section and offset: global or weak functions of
/// executable sections but `.text`. Symbols at the same section and
/// offset are aliases of the first.
fn programs(elf: &Elf<'_>, c: &Collected<'_>) -> Result<Vec<Program>> {
    let (secs, syms) = (&elf.secs, &elf.syms);
    let mut progs: Vec<(usize, u64, usize)> = Vec::new(); // (section, offset, symbol)
    for (si, s) in syms.iter().enumerate() {
        let sec = s.shndx as usize;
        if s.ty == E::STT_FUNC
            && (s.bind == E::STB_GLOBAL || s.bind == E::STB_WEAK)
            && s.shndx != E::SHN_UNDEF
            && sec < secs.len()
            && Some(sec) != c.text
            && elf.is_code(sec)
        {
            progs.push((sec, s.value, si));
        }
    }
    progs.sort();
    let mut programs: Vec<Program> = Vec::with_capacity(progs.len());
    // The section's name and attach definition, made once per section and
    // shared by its programs (hundreds of aliases may share one).
    let mut shared: Option<(usize, std::sync::Arc<std::ffi::CStr>, Attach)> = None;
    for (k, &(sec, off, si)) in progs.iter().enumerate() {
        let s = &syms[si];
        let n_insns = c.code[&sec].len();
        if off % 8 != 0 || off / 8 > n_insns as u64 {
            return Err(Error::format(format!(
                "program `{}`: offset {off} is not an instruction of section `{}`",
                String::from_utf8_lossy(s.name),
                String::from_utf8_lossy(secs[sec].name)
            )));
        }
        let start = (off / 8) as usize;
        // Sorted by section and offset: an alias follows the program it
        // aliases (or another alias of it).
        let alias_of = match programs.last() {
            Some(p) if p.sec == sec && p.insn_off == start => p.alias_of,
            _ => programs.len(),
        };
        let len = if s.size > 0 {
            (s.size / 8) as usize
        } else {
            // Up to the next function of the section, or its end.
            progs[k + 1..]
                .iter()
                .take_while(|&&(s2, _, _)| s2 == sec)
                .map(|&(_, o2, _)| o2)
                .find(|&o2| o2 > off)
                .map_or(n_insns, |o2| (o2 / 8) as usize)
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
        let (section, attach) = match &shared {
            Some((ss, name, attach)) if *ss == sec => (name.clone(), attach.clone()),
            _ => {
                let name: std::sync::Arc<std::ffi::CStr> = cstring(secs[sec].name).into();
                let attach = Attach::of_section(secs[sec].name);
                shared = Some((sec, name.clone(), attach.clone()));
                (name, attach)
            }
        };
        programs.push(Program {
            name: cstring(s.name),
            section,
            alias_of,
            insn_off: start,
            insn_cnt: len,
            layout: 0,
            sec,
            attach,
            autoload: !secs[sec].name.starts_with(b"?"),
            alias_value: None,
        });
    }
    Ok(programs)
}
