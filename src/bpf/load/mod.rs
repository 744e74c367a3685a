//! The loadable view of an object: what a loader hands `bpf(2)`, once the
//! link wrote the layouts: each program's instructions, relocations, fd
//! array, func_info and line_info, and the object's BTF, rewritten for
//! the kernel's BTF features.

use std::borrow::Cow;
use std::ffi::CStr;

use crate::bpf::insn::Insn;
use crate::bpf::object::externs::ExternKind;
use crate::bpf::object::{nth, Object, Reloc, RelocKind};
use crate::error::{Call, Error, Result, INTERNAL};
use crate::formats::btf::{self, Btf, BtfFeatures, BtfWriter};

impl Object {
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
        if !self.stage.is_relocated() {
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

    /// The loadable BTF ([`Object::btf`]) as a kernel with only `features`
    /// takes it: what libbpf 1.7 hands `BPF_BTF_LOAD` there (its
    /// `bpf_object__sanitize_btf`): kinds the kernel lacks rewritten in
    /// place (`formats::btf::sanitize`), so every type keeps its id and map
    /// key and value types, func_info and BTF ids stay right; at most one
    /// INT added at the end. The loadable BTF itself (borrowed) when
    /// `features` has every kind. Errors: `NotFound` without `.BTF`;
    /// `Unsupported` when `features` lacks [`BtfFeatures::BTF`] (such a
    /// kernel takes no BTF: load the maps and programs without it, as
    /// libbpf does). Pass func_info and line_info to `BPF_PROG_LOAD` only
    /// when `features` has [`BtfFeatures::FUNC`].
    pub fn btf_for(&self, features: BtfFeatures) -> Result<Cow<'_, [u8]>> {
        let loadable = self.btf()?;
        if !features.contains(BtfFeatures::BTF) {
            return Err(Error::unsupported(
                "this kernel takes no BTF (its BTF features lack `btf`): load the maps and \
                 programs without BTF, as libbpf does",
            ));
        }
        if !btf::needs_sanitizing(features) {
            return Ok(Cow::Borrowed(loadable));
        }
        let mut w = BtfWriter::from_btf(&Btf::parse(loadable.to_vec())?)?;
        btf::sanitize(&mut w, features);
        Ok(Cow::Owned(w.to_bytes()))
    }
}

// Per-alias constants (`Object::alias_insns`): one body shared by many
// programs and aliases, and in each copy handed to the kernel the values
// of that one program or alias.
//
// An object marks an immediate as per-alias with an `ld_imm64` of a
// reserved untyped extern (`ksym_alias_value`, `ksym_alias_addr`: see
// `ALIAS_EXTERNS` in object/externs.rs). Any compiler emits that for
// `(__u64)&ksym_alias_value`; libbpf, which does not know the names,
// gives such a weak extern 0, and so does the shared copy
// (`Object::insns`), so the object loads alike with either. On a kernel
// without fentry cookies (before 6.0) or `bpf_get_func_ip` (before
// 5.15), one body still knows which alias runs.
impl Object {
    /// Sets the `ksym_alias_value` of program or alias `prog`: what its
    /// own copy of the instructions loads ([`Object::alias_insns`]). Until
    /// it is set, a program's value is its index in the object.
    pub fn set_alias_value(&mut self, prog: usize, value: u64) -> Result<()> {
        self.program(prog)?;
        self.programs[prog].alias_value = Some(value);
        Ok(())
    }

    /// The `ksym_alias_value` of program or alias `prog`: the value set by
    /// [`Object::set_alias_value`], else its index in the object.
    pub fn alias_value(&self, prog: usize) -> Result<u64> {
        Ok(self.program(prog)?.alias_value.unwrap_or(prog as u64))
    }

    /// Whether `prog`'s instructions load a per-alias constant, so that a
    /// loader must load [`Object::alias_insns`] rather than the shared
    /// [`Object::insns`].
    pub fn uses_alias_values(&self, prog: usize) -> Result<bool> {
        let p = self.program(prog)?;
        Ok(self.layouts[p.layout]
            .relocs
            .iter()
            .any(|r| r.kind == RelocKind::Alias))
    }

    /// The final instructions of program or alias `prog`, with its own
    /// per-alias constants written: `ksym_alias_value` its value
    /// ([`Object::alias_value`]), `ksym_alias_addr` the kernel address of
    /// the function it attaches to ([`super::AttachInfo::addr`]). Borrowed
    /// (the shared copy, [`Object::insns`]) when the program loads none.
    ///
    /// Errors: those of [`Object::insns`]; `KSYM_ERR_NOT_FOUND` when the
    /// program loads `ksym_alias_addr` and has no function address (its
    /// target did not resolve, is not a kernel function, or kallsyms hides
    /// addresses from this reader).
    pub fn alias_insns(&self, prog: usize) -> Result<Cow<'_, [Insn]>> {
        let shared = self.insns(prog)?;
        if !self.uses_alias_values(prog)? {
            return Ok(Cow::Borrowed(shared));
        }
        let p = &self.programs[prog];
        let mut out = shared.to_vec();
        let mut addr = None;
        for r in self.layouts[p.layout]
            .relocs
            .iter()
            .filter(|r| r.kind == RelocKind::Alias)
        {
            let v = match self.externs[r.target].kind {
                ExternKind::AliasAddr => match addr {
                    Some(a) => a,
                    None => *addr.insert(self.alias_addr(prog)?),
                },
                _ => self.alias_value(prog)?,
            };
            let i = r.insn_idx;
            if i + 1 >= out.len() {
                return Err(Error::new(
                    INTERNAL,
                    format!(
                        "program `{}`: per-alias constant at instruction {i}, past its end",
                        p.name.to_string_lossy()
                    ),
                ));
            }
            out[i].imm = v as u32 as i32;
            out[i + 1].imm = (v >> 32) as u32 as i32;
        }
        Ok(Cow::Owned(out))
    }

    /// The value of `prog`'s `ksym_alias_addr`: its function's address.
    fn alias_addr(&self, prog: usize) -> Result<u64> {
        let info = self.attach_info(prog)?;
        if info.addr != 0 {
            return Ok(info.addr);
        }
        let p = &self.programs[prog];
        let extern_name = self
            .externs
            .iter()
            .find(|x| x.kind == ExternKind::AliasAddr)
            .map(|x| x.shown())
            .unwrap_or_default();
        let head = format!(
            "program `{}` (section `{}`) loads `{extern_name}`, the address of the function \
             it attaches to, and ",
            p.name.to_string_lossy(),
            p.section.to_string_lossy()
        );
        Err(match (info.error, info.target) {
            (Some(e), _) => Error::not_found(format!(
                "{head}its attach target did not resolve: {}",
                e.message()
            )),
            (None, Some(t)) => Error::not_found(format!(
                "{head}its target `{}` has none: not a kernel function, or /proc/kallsyms hides \
                 addresses from this reader, or not resolved yet: call ",
                t.to_string_lossy()
            ))
            .then_call(Call::ResolveBtf, " first"),
            (None, None) => Error::not_found(format!("{head}it has no attach target: call "))
                .then_call(Call::SetAttachTarget, ""),
        })
    }
}
