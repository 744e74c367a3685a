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

//!
//! The folders of `bpf/` follow an object's life, and import one another
//! in layers, never in a circle (`tests/layers.rs` checks it): the leaves
//! (`insn`; `elf/`: the file, its header, sections and symbols, and
//! `.BTF.ext`; `section/`: what a section name says; `core/`: CO-RE), the
//! model (`object/`: `Object` and everything it holds), then the phases,
//! each of which adds `Object`'s methods of its own: `open/`, `link/`,
//! `attach/` and `load/`. This file only declares and re-exports.

mod attach;
pub(crate) mod core;
pub(crate) mod elf;
pub(crate) mod insn;
mod link;
mod load;
mod object;
pub(crate) mod open;
pub(crate) mod section;

pub use crate::formats::btf::BtfFeatures;
pub use attach::multi::{MultiFunction, MultiLink, Way};
pub use attach::tracepoints::events_dir as tracefs_events_dir;
pub use insn::Insn;
pub use link::kconfig_values::{kernel_version_of, running_kernel_version};
#[doc(hidden)]
pub use link::relocate::{kernel_version_in, running_kernel_facts};
pub use object::attach::AttachInfo;
pub use object::externs::{Extern, ExternKind, Kcfg, KcfgType};
pub use object::struct_ops::StructOps;
pub use object::{
    Map, Object, Program, Reloc, RelocKind, Slot, SlotTarget, Var, FUNC_INFO_SIZE, LINE_INFO_SIZE,
    RELOC_POISONED, RELOC_RESOLVED,
};
pub use section::kinds::{attach_type_name, map_type_name, prog_type_name};
pub use section::{MULTI, OPTIONAL, RETPROBE, SLEEPABLE, TARGET_AT_LOAD, XDP_FRAGS};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kernel;
