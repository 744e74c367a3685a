//! libksym: kernel symbol lookup, `module`symbol` resolution, BPF ELF
//! objects relocated once for all their aliases, and the kernel's BTF and
//! attach targets.
//!
//! This crate is the Rust face of libksym; the C face (`libksym.so.0`,
//! `include/ksym.h`) is the crate `ksym-capi` built on this one's public
//! API. What is public here is the API; everything else is private.
//!
//! - [`Table`]: the kernel's symbols indexed ([`TableOptions`]): a name
//!   or `module`name` to a [`Symbol`] ([`Table::lookup`], [`Lookup`]), an
//!   address to a symbol and offset ([`Table::symbolize`]), the modules
//!   ([`ModuleInfo`]).
//! - [`resolve`]: many queries answered in one streaming pass over
//!   kallsyms, keeping no table ([`Source`], [`Answer`]); [`Cache`]: the
//!   same, remembered until the modules change.
//! - [`KernelBtf`]: the kernel's BTF, vmlinux and modules
//!   ([`BtfOptions`]), and attach targets ([`Target`], [`TargetKind`]).
//! - [`bpf::Object`]: a BPF ELF object: its programs (with aliases), maps,
//!   data-section variables ([`bpf::Var`], set before the maps are
//!   created: a tool's options) and externs, resolved and relocated for
//!   loading.
//! - [`Error`]: every failure, with its [`ErrorKind`] (the C error codes)
//!   and a message that says what to do.
//!
//! ```
//! use std::io::Read;
//! use ksym::{Table, TableOptions};
//!
//! // A real kernel's kallsyms (Debian's 6.12 cloud kernel, in tests/data).
//! let gz = std::fs::File::open(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/tests/data/linux-6.12-cloud/kallsyms.gz"
//! ))?;
//! let mut kallsyms = Vec::new();
//! flate2::read::GzDecoder::new(gz).read_to_end(&mut kallsyms)?;
//! let table = Table::from_bytes(&kallsyms, &TableOptions::default())?;
//!
//! // The file says `ffffffff81c9ae40 T schedule`, the next symbol at
//! // ffffffff81c9af00.
//! let s = table.lookup(b"vmlinux`schedule")?.unique()?;
//! assert_eq!(s.addr, 0xffffffff81c9ae40);
//! let (at, off) = table.symbolize(s.addr + 0x10)?;
//! assert_eq!((at.name.to_string_lossy().as_ref(), off, at.size), ("schedule", 0x10, 0xc0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! More in `examples/` (`cargo run --example lookup`, `resolve`,
//! `aliases`, `expand`).
//!
//! `ksym::internals` (the `internals` feature) is for this project's own
//! tests, fuzz targets and bench: it is not API, and no semver promise
//! covers it.

#![forbid(unsafe_op_in_unsafe_fn)]
// Every item of the API is documented (checked without `internals`, which
// makes the undocumented internals reachable: `make test-docs`).
#![cfg_attr(not(feature = "internals"), warn(missing_docs))]
// Nothing of the API is of a type a user cannot name (a core type leaking
// through a public signature or field).
#![cfg_attr(not(feature = "internals"), warn(unnameable_types))]
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

pub use base::snapshot::{SnapshotInfo, SnapshotOptions};
pub use btf::targets::{Target, TargetKind, Text as TargetText};
pub use btf::{FilterFunctions, Found, KernelBtf, Options as BtfOptions, Stats as BtfStats};
pub use cname::CName;
pub use error::{Call, Error, ErrorKind, Result};
pub use formats::addresses::reads_real_addresses as kallsyms_shows_addresses;
pub use formats::btf::kind_str as btf_kind_name;
pub use formats::kallsyms::Format as KallsymsFormat;
pub use formats::ranges::from_option as builtin_ranges_path;
pub use resolve::cache::{Cache, CacheStats};
pub use resolve::{
    parse_queries, resolve, resolve_each, resolve_parsed, Answer, PassStats, Source,
};
pub use rules::modules::ModuleKind;
pub use rules::query::Query;
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
        /// `sys::kernel_release_version`: `uname -r` and `-v`.
        pub fn kernel_release_version() -> (Vec<u8>, Vec<u8>) {
            crate::base::sys::kernel_release_version()
        }
    }
    /// `crate::bpf` with its private modules.
    pub mod bpf {
        pub use crate::bpf::*;
        /// `crate::bpf::btf_ext`.
        pub mod btf_ext {
            pub use crate::bpf::elf::btf_ext::*;
        }
        /// `crate::bpf::insn`.
        pub mod insn {
            pub use crate::bpf::insn::*;
        }
        /// `crate::bpf::map_def`.
        pub mod map_def {
            pub use crate::bpf::open::map_def::*;
        }
        /// `crate::bpf::kinds`.
        pub mod kinds {
            pub use crate::bpf::section::kinds::*;
        }
        /// `crate::bpf::section`.
        pub mod section {
            pub use crate::bpf::section::*;
        }
    }
    /// `crate::btf`.
    pub mod btf {
        pub use crate::btf::*;
        use crate::error::Result;
        use crate::formats::btf::Btf;

        /// `KernelBtf::vmlinux` (crate-private: its type is the core's).
        pub fn vmlinux(k: &KernelBtf) -> &NameIndexedBtf {
            k.vmlinux()
        }
        /// `KernelBtf::object`.
        pub fn object(k: &KernelBtf, obj: usize) -> Result<&NameIndexedBtf> {
            k.object(obj)
        }
        /// `KernelBtf::from_parts`: a kernel BTF from parsed BTF alone.
        pub fn from_parts(vmlinux: Btf, modules: Vec<(Vec<u8>, Btf)>) -> Result<KernelBtf> {
            KernelBtf::from_parts(vmlinux, modules)
        }
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
