//! The files libksym reads, parsed without copying and without deciding
//! anything about what a symbol means (that is [`crate::rules`]):
//!
//! - [`kallsyms`] parses one line of /proc/kallsyms or /proc/kallmodsyms;
//! - [`addresses`] says whether a reader sees real addresses in kallsyms;
//! - [`walk`] finds the lines of a text without parsing them;
//! - [`ranges`] reads `modules.builtin.ranges`;
//! - [`vmlinux`] reads symbol sizes from a vmlinux ELF;
//! - [`proc_modules`] reads /proc/modules;
//! - [`btf`] reads BTF (base and split) without copying;
//! - [`filter_functions`] reads tracefs' `available_filter_functions(_addrs)`;
//! - [`kconfig`] reads a kernel configuration's `CONFIG_X=value` lines.
//!
//! Imports [`crate::base`] only.

pub mod addresses;
pub mod btf;
pub mod filter_functions;
pub mod kconfig;
pub mod kallsyms;
pub mod proc_modules;
pub mod ranges;
pub mod vmlinux;
pub mod walk;
