//! The kernel symbol table: /proc/kallsyms (or /proc/kallmodsyms) read once
//! into one buffer, parsed without copying, indexed by name and by address.

pub mod hash;
pub mod line;
pub(crate) mod parse;
pub mod read;
mod table;

pub use table::{
    Info, Lookup, ModuleInfo, Options, SizeSource, Symbol, Table, SYM_BUILTIN, SYM_SIZE_EXACT,
};

use std::path::PathBuf;

/// `/proc/kallmodsyms` where the kernel has it, else `/proc/kallsyms`.
pub fn default_kallsyms_path() -> PathBuf {
    let kms = PathBuf::from("/proc/kallmodsyms");
    if kms.exists() {
        kms
    } else {
        PathBuf::from("/proc/kallsyms")
    }
}
