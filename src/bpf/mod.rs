//! BPF ELF objects: programs with their aliases, maps, externs,
//! relocations applied once per function and shared by every alias.
//!
//! - [`Object::parse`] reads a 64-bit little-endian `EM_BPF` relocatable
//!   object (with the `object` crate; every offset and index checked) and
//!   computes each program's final layout at once: its own instructions,
//!   then the subprograms it calls, appended depth-first, once each, with
//!   calls and callback addresses patched. Symbols at the same section and
//!   offset are aliases of the one with the lowest symbol index: they share
//!   its layout.
//! - [`Object::resolve_ksyms`] resolves every untyped extern in one pass.
//! - [`Object::resolve_btf`] resolves what needs the kernel's BTF: attach
//!   targets, CO-RE relocations (once per instruction, however many
//!   layouts hold it), typed ksyms, kfuncs and `.kconfig` values.
//! - [`Object::relocate`] writes CO-RE results, map fds, data-section
//!   values, kernel addresses and BTF ids into the layouts, from their
//!   pristine copies (so it can run again). An alias's instructions are its
//!   target's: one copy, however many aliases.

mod attach;
pub(crate) mod btf;
pub(crate) mod btf_ext;
pub(crate) mod core;
mod elf;
mod externs;
mod file;
pub(crate) mod insn;
pub(crate) mod kinds;
mod loadable;
mod map_def;
mod maps;
mod reloc;
mod relocate;
pub(crate) mod section;
mod struct_ops;

use std::ffi::{CStr, CString};
use std::sync::Arc;

use crate::btf::KernelBtf;
use crate::error::{Call, Error, Result, AMBIGUOUS, NOT_FOUND, RESTRICTED};
use crate::formats::btf::Btf as LocalBtf;
use crate::resolve::cache::Cache;
use crate::resolve::{not_found_error, resolve_parsed, Source};
use crate::rules::query::Query;
pub use attach::AttachInfo;
pub use externs::{kernel_version_of, running_kernel_version, Extern, ExternKind, Kcfg, KcfgType};
pub use insn::Insn;
pub use kinds::{attach_type_name, map_type_name, prog_type_name};
#[doc(hidden)]
pub use relocate::running_kernel_facts;
pub use section::{OPTIONAL, RETPROBE, SLEEPABLE, TARGET_AT_LOAD, XDP_FRAGS};

/// What a relocation writes (values are the C API's `enum ksym_bpf_reloc_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelocKind {
    /// ld_imm64 ← kernel address of an extern.
    Ksym = 1,
    /// ld_imm64 ← map fd.
    MapFd = 2,
    /// ld_imm64 ← data-section map + offset.
    MapValue = 3,
    /// bpf-to-bpf call.
    Call = 4,
    /// ld_imm64 ← address of a subprogram (callbacks).
    Func = 5,
    /// A CO-RE relocation: the instruction's offset or immediate.
    Core = 6,
    /// ld_imm64 ← BTF id of a typed ksym (`BPF_PSEUDO_BTF_ID`).
    KsymBtf = 7,
    /// call ← BTF id of a kfunc (`BPF_PSEUDO_KFUNC_CALL`).
    Kfunc = 8,
    /// ld_imm64 ← the `.kconfig` map + the extern's offset.
    Kconfig = 9,
}

/// [`Reloc::flags`]: the value is final (after [`Object::resolve_btf`]).
pub const RELOC_RESOLVED: u32 = 1;
/// [`Reloc::flags`]: a CO-RE relocation that poisons its instruction.
pub const RELOC_POISONED: u32 = 2;

/// A relocation of a program, in final instruction indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    pub insn_idx: usize,
    pub kind: RelocKind,
    /// The subprogram name (Call, Func); for Core, the local type and
    /// access string as libbpf prints them; `None` for the others, whose
    /// name is their target's (map, data section, extern): see
    /// [`Object::reloc_symbol`], which every reader goes through.
    pub name: Option<CString>,
    /// Map index (MapFd, MapValue), extern index (Ksym, KsymBtf, Kfunc,
    /// Kconfig), final instruction index of the callee (Call, Func), or
    /// the CO-RE relocation kind (Core).
    pub target: usize,
    /// MapValue: the offset in the data section; Kconfig: the offset in
    /// the `.kconfig` map; after resolve_btf, Core: the value written,
    /// KsymBtf and Kfunc: the kernel's BTF id.
    pub addend: i64,
    /// RELOC_*.
    pub flags: u32,
}

/// A program: a global or weak function of an executable section other
/// than `.text`.
#[derive(Clone, Debug)]
pub struct Program {
    pub name: CString,
    /// Shared by the program and its aliases.
    pub section: std::sync::Arc<std::ffi::CStr>,
    /// The program whose instructions this one shares (its own index if none).
    pub alias_of: usize,
    /// Offset in the section, in instructions.
    pub insn_off: usize,
    /// Instructions of the function itself.
    pub insn_cnt: usize,
    /// Index of the layout (shared by aliases).
    layout: usize,
    /// ELF section index.
    sec: usize,
    /// Where it attaches: the section's definition, the target it names.
    attach: attach::Attach,
    /// Whether a loader loads it (libbpf's autoload): off for a `?`
    /// section.
    autoload: bool,
}

/// A map: a BTF-defined `.maps` variable or a data section.
#[derive(Clone, Debug)]
pub struct Map {
    pub name: CString,
    pub section: CString,
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    /// The key's and value's types in the object's BTF (0: none); a data
    /// section's value is its DATASEC.
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    pub map_extra: u64,
    pub numa_node: u32,
    /// Maps of maps: the inner map's (template's) type, key and value
    /// sizes, max entries, flags, and BTF key and value type ids.
    pub inner: Option<[u32; 7]>,
    /// struct_ops maps: the kernel's `bpf_struct_ops_<name>` (after
    /// resolve_btf), BPF_MAP_CREATE's btf_vmlinux_value_type_id.
    pub btf_vmlinux_value_type_id: u32,
    /// Initial slots (`.values = { [i] = &map_or_prog }`), by slot; for a
    /// struct_ops map (after resolve_btf), its programs by value offset.
    pub slots: Vec<Slot>,
    /// Data sections: initial contents (`None` for `.bss`).
    pub initial_value: Option<Vec<u8>>,
    /// struct_ops maps: the variable and what resolve_btf made of it.
    pub struct_ops: Option<Box<struct_ops::StructOps>>,
    pub fd: Option<i32>,
}

/// An initial slot of a map of maps (a map) or a program array (a program).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub index: u32,
    pub target: SlotTarget,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotTarget {
    Map(usize),
    Program(usize),
    /// A program whose fd goes, as a u64, at byte `index` of a struct_ops
    /// map's value.
    StructOps(usize),
}

/// A program's final code: its instructions and the subprograms it calls.
#[derive(Clone, Debug, Default)]
struct Layout {
    /// The program the layout was made for (its target, not an alias).
    owner: usize,
    /// The instructions as laid out (calls patched), before relocation,
    /// kept when relocate must start from them again (CO-RE, typed ksyms,
    /// kfuncs); empty otherwise, `insns` then being patched in place.
    base: Vec<Insn>,
    /// The final instructions (after relocate).
    insns: Vec<Insn>,
    relocs: Vec<Reloc>,
    /// CO-RE relocations: (final instruction index, site).
    core: Vec<(usize, usize)>,
    /// `struct bpf_func_info` records (8 bytes), insn_off in final indices.
    func_info: Vec<u8>,
    /// `struct bpf_line_info` records (16 bytes).
    line_info: Vec<u8>,
    /// Why the last relocate left this layout unwritten (only programs
    /// with autoload off use it, and it could not be relocated).
    skipped: Option<Box<Error>>,
}

/// One CO-RE record of `.BTF.ext`, resolved once for every layout that
/// holds its instruction.
#[derive(Clone, Debug)]
struct CoreSite {
    rec: core::CoreRecord,
    /// The local type and access string as libbpf prints them.
    text: CString,
    /// The program or subprogram it belongs to, for messages.
    owner: String,
    /// In some layout (others, like libbpf's leftovers of overridden weak
    /// subprograms, are not resolved).
    used: bool,
    /// After resolve_btf.
    res: Option<Result<core::Resolved>>,
}

/// A parsed BPF object.
pub struct Object {
    license: CString,
    programs: Vec<Program>,
    maps: Vec<Map>,
    externs: Vec<Extern>,
    layouts: Vec<Layout>,
    /// The object's BTF made loadable (None without .BTF).
    btf: Option<Vec<u8>>,
    /// The object's BTF as written (CO-RE specs, extern types).
    local_btf: Option<LocalBtf>,
    core_sites: Vec<CoreSite>,
    /// The `.kconfig` map, if the object has `.kconfig` externs.
    kconfig_map: Option<usize>,
    /// Module BTF fds of kfunc calls (insn.off indexes it).
    fd_array: Vec<i32>,
    ksyms_resolved: bool,
    /// The kernel BTF of the last resolve_btf, which keeps the module
    /// BTF fds written into instructions open.
    btf_kernel: Option<Arc<KernelBtf>>,
    /// Why the externs of the last resolve_btf failed.
    btf_error: Option<Error>,
    relocated: bool,
}

impl Program {
    /// A new alias of `self` (which must not be an alias itself) at index
    /// `root`, named `name`.
    fn alias(&self, root: usize, name: CString) -> Program {
        Program {
            name,
            alias_of: root,
            ..self.clone()
        }
    }
}

/// `struct bpf_func_info` size.
pub const FUNC_INFO_SIZE: usize = 8;
/// `struct bpf_line_info` size.
pub const LINE_INFO_SIZE: usize = 16;

/// `items[i]`, or KSYM_ERR_NOT_FOUND saying how many `owner` has.
fn nth<'a, T>(items: &'a [T], i: usize, what: &str, owner: &str) -> Result<&'a T> {
    items
        .get(i)
        .ok_or_else(|| Error::not_found(format!("no {what} {i}: {owner} has {}", items.len())))
}

/// The index of the item named `name`, or KSYM_ERR_NOT_FOUND listing them.
fn find_named<T>(
    items: &[T],
    name: &[u8],
    what: &str,
    name_of: fn(&T) -> &CString,
) -> Result<usize> {
    items
        .iter()
        .position(|x| name_of(x).to_bytes() == name)
        .ok_or_else(|| {
            let names: Vec<String> = items
                .iter()
                .map(|x| name_of(x).to_string_lossy().into_owned())
                .collect();
            Error::not_found(format!(
                "no {what} `{}` in the object ({what}s: {})",
                String::from_utf8_lossy(name),
                names.join(", ")
            ))
        })
}

impl Object {
    /// Parses an object file's bytes (copied as needed: nothing borrows them).
    pub fn parse(data: &[u8]) -> Result<Object> {
        elf::load(data)
    }

    /// Reads and parses an object file (only the sections it needs:
    /// DWARF and the relocations of .BTF.ext are left unread).
    pub fn open(path: &std::path::Path) -> Result<Object> {
        let data = file::read_object(path)?;
        Self::parse(&data).map_err(|e| e.context(path.display()))
    }

    /// What relocation `r` of this object is about: extern, map, data
    /// section or subprogram name; for Core, the local type and access
    /// string as libbpf prints them.
    pub fn reloc_symbol<'s>(&'s self, r: &'s Reloc) -> &'s CStr {
        match (&r.name, r.kind) {
            (Some(n), _) => n,
            (None, RelocKind::MapFd | RelocKind::MapValue) => &self.maps[r.target].name,
            (None, _) => &self.externs[r.target].name,
        }
    }

    pub fn license(&self) -> &CString {
        &self.license
    }

    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    pub fn maps(&self) -> &[Map] {
        &self.maps
    }

    pub fn externs(&self) -> &[Extern] {
        &self.externs
    }

    /// The index of the program named `name` (its symbol name).
    pub fn find_program(&self, name: &[u8]) -> Result<usize> {
        find_named(&self.programs, name, "program", |p| &p.name)
    }

    /// The index of the map named `name`.
    pub fn find_map(&self, name: &[u8]) -> Result<usize> {
        find_named(&self.maps, name, "map", |m| &m.name)
    }

    pub fn program(&self, prog: usize) -> Result<&Program> {
        nth(&self.programs, prog, "program", "the object")
    }

    pub fn map(&self, map: usize) -> Result<&Map> {
        nth(&self.maps, map, "map", "the object")
    }

    pub fn external(&self, ext: usize) -> Result<&Extern> {
        nth(&self.externs, ext, "extern", "the object")
    }

    /// Relocation `i` of a program.
    pub fn reloc(&self, prog: usize, i: usize) -> Result<&Reloc> {
        nth(
            self.relocs(prog)?,
            i,
            "relocation",
            &format!("program {prog}"),
        )
    }

    /// The relocations of a program (an alias reports its target's).
    pub fn relocs(&self, prog: usize) -> Result<&[Reloc]> {
        let p = self.program(prog)?;
        Ok(&self.layouts[p.layout].relocs)
    }

    pub fn set_map_fd(&mut self, map: usize, fd: i32) -> Result<()> {
        self.map(map)?;
        let m = &mut self.maps[map];
        if fd < 0 {
            return Err(Error::invalid(format!(
                "fd {fd} for map `{}` is negative",
                m.name.to_string_lossy()
            )));
        }
        m.fd = Some(fd);
        Ok(())
    }

    /// The object's BTF, made loadable by BPF_BTF_LOAD.
    pub fn btf(&self) -> Result<&[u8]> {
        self.btf
            .as_deref()
            .ok_or_else(|| Error::not_found("the object has no .BTF section (built without -g?)"))
    }

    /// func_info records of a program's final instructions (8 bytes each).
    pub fn func_info(&self, prog: usize) -> Result<&[u8]> {
        let p = self.program(prog)?;
        self.btf()?;
        Ok(&self.layouts[p.layout].func_info)
    }

    /// line_info records of a program's final instructions (16 bytes each).
    pub fn line_info(&self, prog: usize) -> Result<&[u8]> {
        let p = self.program(prog)?;
        self.btf()?;
        Ok(&self.layouts[p.layout].line_info)
    }

    /// The final instructions, after [`Object::relocate`]. Aliases get the
    /// very same slice as their target.
    pub fn insns(&self, prog: usize) -> Result<&[Insn]> {
        let p = self.program(prog)?;
        if !self.relocated {
            return Err(
                Error::invalid(format!("program `{}`: call ", p.name.to_string_lossy()))
                    .then_call(Call::Relocate, " first"),
            );
        }
        let l = &self.layouts[p.layout];
        if let Some(e) = &l.skipped {
            return Err(Error::new(
                e.code(),
                format!(
                    "program `{}`: not relocated: its autoload is off (it need not be), and {}",
                    p.name.to_string_lossy(),
                    e.message()
                ),
            ));
        }
        Ok(&l.insns)
    }

    /// Resolves every extern in one pass: through `cache` when given (misses
    /// cost one pass, hits none), else over /proc/kallsyms (and the default
    /// built-in ranges file, if any). A strong extern not found is
    /// `KSYM_ERR_NOT_FOUND` naming it and near matches; a weak one gets 0;
    /// an ambiguous one is an error; a restricted kallsyms is an error unless
    /// every extern is weak.
    pub fn resolve_ksyms(&mut self, cache: Option<&Cache>) -> Result<()> {
        let untyped: Vec<usize> = (0..self.externs.len())
            .filter(|&i| self.externs[i].kind == ExternKind::Ksym)
            .collect();
        if untyped.is_empty() {
            self.ksyms_resolved = true;
            return Ok(());
        }
        let names: Vec<&[u8]> = untyped
            .iter()
            .map(|&i| self.externs[i].name.to_bytes())
            .collect();
        let parsed: Vec<Query<'_>> = names
            .iter()
            .map(|n| {
                Query::parse(n)
                    .map_err(|e| e.context(format!("extern `{}`", String::from_utf8_lossy(n))))
            })
            .collect::<Result<_>>()?;
        let default_source;
        let source = match cache {
            Some(c) => c.source(),
            None => {
                default_source = Source::proc_kallsyms();
                &default_source
            }
        };
        let answers: Result<Vec<(u64, i32)>> = match cache {
            Some(c) => c.resolve(&names),
            None => resolve_parsed(source, &parsed)
                .map(|(a, _)| a.iter().map(|a| (a.addr, a.err)).collect()),
        };
        let all_weak = untyped.iter().all(|&i| self.externs[i].weak);
        let answers = match answers {
            Ok(a) => a,
            Err(e) if e.code() == RESTRICTED && all_weak => vec![(0, NOT_FOUND); untyped.len()],
            Err(e) => {
                return Err(e.context(format!(
                    "resolving the {} untyped extern(s) of the object",
                    untyped.len()
                )))
            }
        };
        for ((&i, &(addr, err)), q) in untyped.iter().zip(&answers).zip(&parsed) {
            let x = &self.externs[i];
            let name = x.name.to_string_lossy();
            match err {
                0 => {}
                NOT_FOUND if x.weak => {}
                NOT_FOUND => {
                    // The near matches need one more pass: only on this error path.
                    let hint = not_found_error(source, q)
                        .map(|e| format!(": {}", e.message()))
                        .unwrap_or_default();
                    return Err(Error::not_found(format!(
                        "extern `{name}` (strong __ksym) not found{hint}; declare it __weak if it may be absent"
                    )));
                }
                AMBIGUOUS => {
                    return Err(Error::new(
                        AMBIGUOUS,
                        format!(
                            "extern `{name}` is ambiguous: several kernel symbols at different addresses \
                             (lowest {addr:#x}); name one with an asm label such as \
                             `extern const void x __asm__(\"module`{name}\") __ksym;`"
                        ),
                    ))
                }
                e => return Err(Error::new(e, format!("extern `{name}`: cannot be resolved"))),
            }
        }
        for (&i, &(addr, err)) in untyped.iter().zip(&answers) {
            let x = &mut self.externs[i];
            x.resolved = err == 0;
            x.addr = if err == 0 { addr } else { 0 };
        }
        self.ksyms_resolved = true;
        Ok(())
    }

    /// The fd array of a program's `BPF_PROG_LOAD` (module BTF fds of its
    /// kfunc calls; `insn.off` indexes it): empty when it calls none.
    pub fn fd_array(&self, prog: usize) -> Result<&[i32]> {
        let p = self.program(prog)?;
        let l = &self.layouts[p.layout];
        let uses = l
            .relocs
            .iter()
            .any(|r| r.kind == RelocKind::Kfunc && self.externs[r.target].fd_idx != 0);
        Ok(if uses { &self.fd_array } else { &[] })
    }

    /// Initial slot `i` of map `map`.
    pub fn slot(&self, map: usize, i: usize) -> Result<&Slot> {
        let m = self.map(map)?;
        nth(
            &m.slots,
            i,
            "initial slot",
            &format!("map `{}`", m.name.to_string_lossy()),
        )
    }

    /// The `.kconfig` map, if the object has `.kconfig` externs.
    pub fn kconfig_map(&self) -> Option<usize> {
        self.kconfig_map
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kernel;
