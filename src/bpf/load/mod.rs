//! The loadable view of an object: what a loader hands `bpf(2)`, once the
//! link wrote the layouts: each program's instructions, relocations, fd
//! array, func_info and line_info, and the object's BTF, rewritten for
//! the kernel's BTF features.

use std::borrow::Cow;
use std::ffi::CStr;

use crate::bpf::insn::Insn;
use crate::bpf::object::{nth, Object, Reloc, RelocKind};
use crate::error::{Call, Error, Result};
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
