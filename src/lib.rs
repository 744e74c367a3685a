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
// What only tests, fuzz targets and the bench use is reachable through
// `internals` alone: without that feature it looks dead (or its `pub use`
// unused) to the compiler (about ten items).
// Dead code is checked with the feature on (`cargo clippy --all-targets`,
// whose tests enable it).
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

mod base;
pub mod bpf;
mod btf;
mod cname;
mod error;
mod formats;
mod resolve;
mod rules;
mod table;

pub use btf::targets::{Target, TargetKind};
pub use btf::{FilterFunctions, Found, KernelBtf, Options as BtfOptions, Stats as BtfStats};
pub use cname::CName;
pub use error::{Call, Error, ErrorKind, Result};
pub use formats::btf::kind_str as btf_kind_name;
pub use formats::kallsyms::Format as KallsymsFormat;
pub use formats::ranges::from_option as builtin_ranges_path;
pub use resolve::cache::Cache;
pub use resolve::{
    parse_queries, resolve, resolve_each, resolve_parsed, Answer, PassStats, Source,
};
pub use rules::modules::ModuleKind;
pub use rules::query::Query;
pub use table::snapshot::SnapshotInfo;
pub use table::{
    Info as TableInfo, Lookup, ModuleInfo, Options as TableOptions, SizeSource, Symbol, Table,
    SYM_BUILTIN, SYM_SIZE_EXACT,
};

/// The core's modules, for the project's own tests, fuzz targets and
/// bench (the `internals` feature, which they enable).
///
/// **Not API**: nothing here is covered by semver or documented for use;
/// it changes with any release. Use the items at the crate's root and
/// [`bpf`].
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    /// `crate::base`.
    pub mod base {
        pub use crate::base::*;
    }
    /// `crate::bpf` with its private modules.
    pub mod bpf {
        pub use crate::bpf::*;
        /// `crate::bpf::btf`.
        pub mod btf {
            pub use crate::bpf::btf::*;
        }
        /// `crate::bpf::btf_ext`.
        pub mod btf_ext {
            pub use crate::bpf::btf_ext::*;
        }
        /// `crate::bpf::insn`.
        pub mod insn {
            pub use crate::bpf::insn::*;
        }
        /// `crate::bpf::kinds`.
        pub mod kinds {
            pub use crate::bpf::kinds::*;
        }
        /// `crate::bpf::section`.
        pub mod section {
            pub use crate::bpf::section::*;
        }
    }
    /// `crate::btf`.
    pub mod btf {
        pub use crate::btf::*;
    }
    /// `crate::error`.
    pub mod error {
        pub use crate::error::*;
    }
    /// `crate::formats`.
    pub mod formats {
        pub use crate::formats::*;
    }
    /// `crate::resolve`.
    pub mod resolve {
        pub use crate::resolve::*;
    }
    /// `crate::rules`.
    pub mod rules {
        pub use crate::rules::*;
    }
    /// `crate::table`.
    pub mod table {
        pub use crate::table::*;
    }
}
