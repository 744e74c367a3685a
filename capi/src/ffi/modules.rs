//! Modules of a table: the core kernel (module 0, `vmlinux`), loadable
//! modules, modules built into the kernel image (from /proc/kallmodsyms or
//! modules.builtin.ranges) and pseudo-modules (`[bpf]`,
//! `[__builtin__ftrace]`), each with its kind, symbol count and address
//! range.

use std::ffi::{c_char, c_int, c_uint};

use super::table::{ksym_table, table_ref};
use super::{int_call, value_call};
use ksym::Error;
use ksym::ModuleInfo;
use ksym::ModuleKind;

/// What a module is (ksym_module_info.kind).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ksym_module_kind {
    /// The core kernel.
    KSYM_MODULE_VMLINUX = 0,
    /// A loadable module ([ext4] in /proc/kallsyms).
    KSYM_MODULE_LOADABLE = 1,
    /// Built into the kernel image (kallmodsyms or modules.builtin.ranges).
    KSYM_MODULE_BUILTIN = 2,
    /// [bpf], [__builtin__ftrace], [__builtin__kprobes].
    KSYM_MODULE_PSEUDO = 3,
}

/// A module of a table. Output struct: set `sz`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_module_info {
    /// sizeof(struct ksym_module_info), set by the caller.
    pub sz: usize,
    /// Borrowed from the table.
    pub name: *const c_char,
    /// enum ksym_module_kind.
    pub kind: c_int,
    /// Reserved: written zero.
    pub reserved: c_uint,
    /// Symbols attributed to it.
    pub symbols: usize,
    /// Lowest and highest symbol address (absolute symbols excluded; 0 when none).
    pub lo: u64,
    pub hi: u64,
}

/// Number of modules of a table, `vmlinux` included (it is module 0).
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
#[no_mangle]
pub unsafe extern "C" fn ksym_table_module_count(table: *const ksym_table) -> usize {
    value_call(0, || {
        // SAFETY: `table` as # Safety says.
        Ok(unsafe { table_ref(table) }?
            .table
            .module_table()?
            .module_count())
    })
}

/// Describes module `i` (0 is vmlinux, then in order of appearance).
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_table_module(
    table: *const ksym_table,
    i: usize,
    out: *mut ksym_module_info,
) -> c_int {
    int_call(|| {
        // SAFETY: `table` as # Safety says.
        let t = unsafe { table_ref(table) }?.table.module_table()?;
        let m: ModuleInfo = t.modules().nth(i).ok_or_else(|| {
            Error::not_found(format!("no module {i}: the table has {}", t.module_count()))
        })?;
        let kind = match m.kind {
            ModuleKind::Vmlinux => ksym_module_kind::KSYM_MODULE_VMLINUX,
            ModuleKind::Loadable => ksym_module_kind::KSYM_MODULE_LOADABLE,
            ModuleKind::Builtin => ksym_module_kind::KSYM_MODULE_BUILTIN,
            ModuleKind::Pseudo => ksym_module_kind::KSYM_MODULE_PSEUDO,
        };
        let info = ksym_module_info {
            sz: std::mem::size_of::<ksym_module_info>(),
            name: m.name.with_nul().as_ptr().cast(),
            kind: kind as c_int,
            reserved: 0,
            symbols: m.symbols,
            lo: m.lo,
            hi: m.hi,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { super::write_out(out, info, "out") }?;
        Ok(0)
    })
}
