//! libksym: kernel symbol lookup, `module`symbol` resolution and alias-aware
//! relocation of BPF ELF objects, with a C ABI (`include/ksym.h`).
//!
//! The core (`kallsyms`, `modules`, `query`, `resolve`, `bpf`) is safe Rust
//! and never sees a raw pointer; the `ffi` module alone converts pointers,
//! catches panics and records the thread-local error. Two small private
//! modules wrap what safe Rust cannot say: `sys` (advice to the kernel on
//! huge pages) and `bytes` (vector compares, with run-time CPU detection).

#![forbid(unsafe_op_in_unsafe_fn)]

pub mod bpf;
mod bytes;
pub mod cname;
pub mod error;
pub mod kallsyms;
pub mod modules;
pub mod query;
pub mod resolve;
mod sys;

#[doc(hidden)]
pub mod ffi;

pub use error::{Error, Result};
pub use kallsyms::{Lookup, Options, Symbol, Table};
