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
//! The files of `bpf/` import one another in layers, never in a circle
//! (`tests/layers.rs` checks it): the leaves (`insn`, `kinds`, `section`,
//! `btf_ext`, `map_def`, `core`, `externs`, `elf`, `file`), the
//! model (`object` and the types it holds: `attach`, `struct_ops_types`),
//! what fills the model in (`maps`, `reloc`, `loadable`, `struct_ops`),
//! the phases of the open (`open`), the later steps (`ksyms`,
//! `relocate`, `programs`, `multi`, `vars`), and this file, which only declares and
//! re-exports.

mod alias_values;
mod attach;
pub(crate) mod btf_ext;
pub(crate) mod core;
mod elf;
mod externs;
mod file;
pub(crate) mod insn;
mod kconfig_values;
pub(crate) mod kinds;
mod ksyms;
mod loadable;
pub(crate) mod map_def;
mod maps;
mod multi;
mod object;
mod open;
mod programs;
mod reloc;
mod relocate;
pub(crate) mod section;
mod section_defs;
mod struct_ops;
mod struct_ops_types;
mod tracepoints;
mod vars;

pub use crate::formats::btf::BtfFeatures;
pub use attach::AttachInfo;
pub use externs::{Extern, ExternKind, Kcfg, KcfgType};
pub use insn::Insn;
pub use kconfig_values::{kernel_version_of, running_kernel_version};
pub use kinds::{attach_type_name, map_type_name, prog_type_name};
pub use multi::{MultiFunction, MultiLink, Way};
pub use object::{
    Map, Object, Program, Reloc, RelocKind, Slot, SlotTarget, Var, FUNC_INFO_SIZE, LINE_INFO_SIZE,
    RELOC_POISONED, RELOC_RESOLVED,
};
#[doc(hidden)]
pub use relocate::{kernel_version_in, running_kernel_facts};
pub use section::{MULTI, OPTIONAL, RETPROBE, SLEEPABLE, TARGET_AT_LOAD, XDP_FRAGS};
pub use struct_ops_types::StructOps;
pub use tracepoints::events_dir as tracefs_events_dir;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kernel;
