//! libksym: kernel symbol lookup, `module`symbol` resolution and alias-aware
//! relocation of BPF ELF objects, with a C ABI (`include/ksym.h`).
//!
//! The layers, each importing only the ones above it in this list:
//!
//! - [`error`], [`cname`]: the error type and the borrowed C name.
//! - [`base`]: shared low-level pieces: reading files, the name hash and
//!   index, vector byte masks, advice to the kernel.
//! - [`formats`]: the files libksym reads, parsed without copying:
//!   kallsyms and kallmodsyms lines, `modules.builtin.ranges`, vmlinux
//!   symbol sizes, /proc/modules.
//! - [`rules`]: what a query means and how it is answered, in one place:
//!   the grammar, module ownership and attribution, the match and
//!   ambiguity decision, the restricted check, near-match suggestions.
//! - The consumers: [`table`] (the indexed symbol table), [`resolve`]
//!   (one streaming pass, and the pull-through cache), [`btf`] (the
//!   kernel's BTF and attach targets, with a table for addresses), [`bpf`]
//!   (BPF ELF objects, which resolve their externs through `resolve` and
//!   their BTF needs through `btf`).
//! - The C ABI is a crate of its own on top of this one (`capi/`,
//!   package `ksym-capi`): the only layer that sees raw pointers.
//!
//! The core is safe Rust: two small private modules of `base` wrap what
//! safe Rust cannot say: `sys` (advice to the kernel on huge pages) and
//! `bytes` (vector compares, with run-time CPU detection).

#![forbid(unsafe_op_in_unsafe_fn)]

pub mod base;
pub mod bpf;
pub mod btf;
pub mod cname;
pub mod error;
pub mod formats;
pub mod resolve;
pub mod rules;
pub mod table;

pub use error::{Error, Result};
pub use table::{Lookup, Options, Symbol, Table};
