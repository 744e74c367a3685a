//! Per-alias constants ([`Object::alias_insns`]): one body shared by many
//! programs and aliases, and in each copy handed to the kernel the values
//! of that one program or alias.
//!
//! An object marks an immediate as per-alias with an `ld_imm64` of a
//! reserved untyped extern (`ksym_alias_value`, `ksym_alias_addr`: see
//! [`super::externs::ALIAS_EXTERNS`]). Any compiler emits that for
//! `(__u64)&ksym_alias_value`; libbpf, which does not know the names,
//! gives such a weak extern 0, and so does the shared copy
//! ([`Object::insns`]), so the object loads alike with either. A kernel
//! without attach cookies (before 5.15 for fentry) or `bpf_get_func_ip`
//! then still lets one body know which alias runs.

use std::borrow::Cow;

use super::externs::ExternKind;
use super::insn::Insn;
use super::object::{Object, RelocKind};
use crate::error::{Call, Error, Result, INTERNAL};

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
