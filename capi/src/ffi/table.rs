//! The kernel symbol table: /proc/kallsyms (or /proc/kallmodsyms, or a file
//! or buffer of either format) read once and indexed. Lookups by `name`,
//! `module`name` or `vmlinux`name`, addresses to symbols, glob patterns.
//! A table is immutable: any number of threads may use it at once. The
//! first open of a boot (as root) writes a snapshot that later opens map
//! instead of reading /proc (docs/symbols.md, docs/snapshots.md).

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::ops::ControlFlow;

use super::{c_bytes, c_path, check_flags, int_call, non_null, ptr_call, read_opts, value_call};
use ksym::{Error, Result};
use ksym::{Lookup, SizeSource, SnapshotOptions, Symbol, Table, TableOptions as Options};

/// Options of `ksym_table_open` and `ksym_cache_new`. Declare with
/// `KSYM_OPTS(ksym_table_opts, opts, .field = value)`; NULL means defaults.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_table_opts {
    /// sizeof(struct ksym_table_opts), set by KSYM_OPTS.
    pub sz: usize,
    /// NULL: /proc/kallmodsyms if it exists, else /proc/kallsyms; either
    /// format, recognised from the content.
    pub kallsyms_path: *const c_char,
    /// NULL: /lib/modules/$(uname -r)/modules.builtin.ranges if it exists
    /// (ksym_table_open only; buffers use none unless named); "": none.
    pub builtin_ranges_path: *const c_char,
    /// NULL: none; path of a vmlinux ELF for exact sizes.
    pub vmlinux_path: *const c_char,
    /// NULL: /proc/modules; what ksym_cache watches to notice module changes.
    pub modules_path: *const c_char,
    /// KSYM_TABLE_* flags (KSYM_TABLE_NO_SNAPSHOT).
    pub flags: c_uint,
    /// Reserved: must be zero (KSYM_OPTS makes it so).
    pub reserved: c_uint,
    /// Where table snapshots live. NULL: /run/ksym. It must be a
    /// directory owned by the effective uid (0) with no group or other
    /// permission, or not exist (it is then made 0700).
    pub snapshot_dir: *const c_char,
}

impl Default for ksym_table_opts {
    fn default() -> Self {
        ksym_table_opts {
            sz: std::mem::size_of::<Self>(),
            kallsyms_path: std::ptr::null(),
            builtin_ranges_path: std::ptr::null(),
            vmlinux_path: std::ptr::null(),
            modules_path: std::ptr::null(),
            flags: 0,
            reserved: 0,
            snapshot_dir: std::ptr::null(),
        }
    }
}

/// ksym_table_opts.flags: neither read nor write a table snapshot.
///
/// By default ksym_table_open, as root reading real addresses, maps a
/// snapshot of the table written by an earlier open in the same boot
/// (checked against the boot id, the kernel, the source file and the
/// loadable modules of /proc/modules) instead of reading /proc/kallsyms,
/// and writes one when there is none. The answers are the same: queries
/// that may involve BPF, ftrace or kprobe symbols (a pseudo-module, their
/// name shapes, a pattern that may match them, an address outside the
/// kernel's and its modules' ranges, the module list) are answered from a
/// fresh read, made when first needed.
pub const KSYM_TABLE_NO_SNAPSHOT: c_uint = 1;

/// All `KSYM_TABLE_*` flags this version knows.
pub const KSYM_TABLE_FLAGS_ALL: c_uint = KSYM_TABLE_NO_SNAPSHOT;

/// `ksym_symbol.flags`: the module is built into the kernel.
pub const KSYM_SYM_BUILTIN: c_uint = 1;
/// `ksym_symbol.flags`: the size is exact (vmlinux ELF or kallmodsyms).
pub const KSYM_SYM_SIZE_EXACT: c_uint = 2;

/// A symbol. Strings are borrowed from the table and live until it is freed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_symbol {
    pub addr: u64,
    /// 0 when unknown; see flags.
    pub size: u64,
    pub name: *const c_char,
    /// "vmlinux" for the core kernel, else the module (loadable, built-in or pseudo).
    pub module: *const c_char,
    /// nm letter as printed by the kernel: 't', 'T', 'd', 'W', ...
    pub r#type: c_char,
    /// Reserved: written zero.
    pub reserved: [u8; 3],
    /// KSYM_SYM_BUILTIN (module is built in), KSYM_SYM_SIZE_EXACT (size from ELF or
    /// kallmodsyms).
    pub flags: c_uint,
}

impl From<&Symbol<'_>> for ksym_symbol {
    #[inline]
    fn from(s: &Symbol<'_>) -> Self {
        ksym_symbol {
            addr: s.addr,
            size: s.size,
            name: s.name.with_nul().as_ptr().cast(),
            module: s.module.with_nul().as_ptr().cast(),
            r#type: s.ty as c_char,
            reserved: [0; 3],
            flags: s.flags,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksym::{SYM_BUILTIN, SYM_SIZE_EXACT};

    #[test]
    fn flag_values_match_the_core() {
        assert_eq!(KSYM_SYM_BUILTIN, SYM_BUILTIN);
        assert_eq!(KSYM_SYM_SIZE_EXACT, SYM_SIZE_EXACT);
    }
}

/// A kernel symbol table (opaque). Immutable once opened: any number of
/// threads may use it at once.
pub struct ksym_table {
    pub(crate) table: Table,
    /// The table's diagnostics as C strings.
    diagnostics: Vec<CString>,
}

/// # Safety
/// The strings of `o` are NULL or NUL-terminated.
unsafe fn make_options(o: &ksym_table_opts) -> Result<Options> {
    check_flags(o.flags, KSYM_TABLE_FLAGS_ALL, "ksym_table_opts.flags")?;
    super::check_reserved(o.reserved, "ksym_table_opts.reserved")?;
    // SAFETY: NULL or NUL-terminated strings (# Safety).
    unsafe {
        Ok(Options {
            kallsyms_path: c_path(o.kallsyms_path),
            builtin_ranges_path: c_path(o.builtin_ranges_path),
            vmlinux_path: c_path(o.vmlinux_path),
            modules_path: c_path(o.modules_path),
            snapshot: SnapshotOptions {
                no_snapshot: o.flags & KSYM_TABLE_NO_SNAPSHOT != 0,
                snapshot_dir: c_path(o.snapshot_dir),
                boot_id_path: None,
            },
        })
    }
}

/// The core's options from a caller's `ksym_table_opts`.
///
/// # Safety
/// `opts` is NULL or a `ksym_table_opts` of at least `opts->sz` bytes whose
/// strings are NULL or NUL-terminated.
pub(crate) unsafe fn options_from(opts: *const ksym_table_opts) -> Result<Options> {
    // SAFETY: NULL or a versioned struct (# Safety).
    let o = unsafe { read_opts(opts, "ksym_table_opts") }?;
    // SAFETY: the strings of the caller's struct (# Safety).
    unsafe { make_options(&o) }
}

fn boxed(table: Table) -> *mut ksym_table {
    let info = table.info();
    let diagnostics = info
        .diagnostics
        .iter()
        .cloned()
        .chain(info.snapshot.describe("the table"))
        .map(|d| CString::new(d.replace('\0', "\\0")).unwrap_or_default())
        .collect();
    Box::into_raw(Box::new(ksym_table { table, diagnostics }))
}

/// The table behind a handle, or KSYM_ERR_INVALID for NULL.
///
/// # Safety
/// `t` is NULL or a handle from `ksym_table_open`/`_from_buffer`, not yet
/// freed, that lives for `'a`.
#[inline]
pub(crate) unsafe fn table_ref<'a>(t: *const ksym_table) -> Result<&'a ksym_table> {
    non_null(t, "table")?;
    // SAFETY: not NULL, so a live handle (# Safety).
    Ok(unsafe { &*t })
}

/// Reads and indexes the kernel symbol table. NULL on failure (see
/// ksym_last_error): KSYM_ERR_RESTRICTED when addresses are hidden,
/// KSYM_ERR_FORMAT for a malformed line (the message names it), a negative
/// errno for I/O.
///
/// # Safety
/// `opts` is NULL or points to a `struct ksym_table_opts` of at least `opts->sz` bytes whose
/// strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ksym_table_open(opts: *const ksym_table_opts) -> *mut ksym_table {
    ptr_call(|| {
        // SAFETY: `opts` as # Safety says.
        let o = unsafe { options_from(opts) }?;
        Ok(boxed(Table::open(&o)?))
    })
}

/// Indexes a copy of `len` bytes of kallsyms (or kallmodsyms) text. The
/// caller's buffer is not kept. opts->kallsyms_path is ignored.
///
/// # Safety
/// `buf` is NULL or readable for `len` bytes; `opts` is NULL or points to a `struct
/// ksym_table_opts` of at least `opts->sz` bytes whose strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ksym_table_from_buffer(
    buf: *const c_char,
    len: usize,
    opts: *const ksym_table_opts,
) -> *mut ksym_table {
    ptr_call(|| {
        non_null(buf, "buf")?;
        // SAFETY: `opts` as # Safety says.
        let o = unsafe { options_from(opts) }?;
        // SAFETY: not NULL, so readable for `len` bytes (# Safety).
        let data = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
        Ok(boxed(Table::from_bytes(data, &o)?))
    })
}

/// Frees a table (NULL is a no-op). Strings it returned become invalid.
///
/// # Safety
/// `table` is NULL or a handle from `ksym_table_open` or `ksym_table_from_buffer`, not freed
/// already; it is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ksym_table_free(table: *mut ksym_table) {
    if !table.is_null() {
        // SAFETY: a handle not freed already (# Safety).
        drop(unsafe { Box::from_raw(table) });
    }
}

/// Number of symbols (lines of the file). 0 for NULL.
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
#[no_mangle]
pub unsafe extern "C" fn ksym_table_count(table: *const ksym_table) -> usize {
    value_call(0, || {
        // SAFETY: `table` as # Safety says.
        Ok(unsafe { table_ref(table) }?.table.len())
    })
}

/// Looks up "name", "module`name" or "vmlinux`name" exactly.
/// 0: found (all matches share one address; out = the first in kernel
/// order); KSYM_ERR_AMBIGUOUS: matches at different addresses (out = the one
/// at the lowest address); KSYM_ERR_NOT_FOUND (the message lists near
/// matches); KSYM_ERR_INVALID for a malformed query.
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
/// `query` is NULL or a NUL-terminated string; `out` is NULL or points to a writable `struct
/// ksym_symbol`.
#[no_mangle]
pub unsafe extern "C" fn ksym_lookup(
    table: *const ksym_table,
    query: *const c_char,
    out: *mut ksym_symbol,
) -> c_int {
    int_call(|| {
        // SAFETY: `table` and `query` as # Safety says.
        let (t, q) = unsafe { (table_ref(table)?, c_bytes(query, "query")?) };
        non_null(out, "out")?;
        let (sym, err) = match t.table.lookup(q)? {
            Lookup::Found(s) => (s, None),
            Lookup::Ambiguous(s, e) => (s, Some(e)),
        };
        // SAFETY: not NULL, so writable (# Safety).
        unsafe { out.write(ksym_symbol::from(&sym)) };
        match err {
            None => Ok(0),
            Some(e) => Err(e),
        }
    })
}

/// Writes up to `cap` matches (ordered by address) and returns the total
/// number of matches, which may exceed `cap`; 0 when none. `out` may be NULL
/// when `cap` is 0. Identical duplicate lines count once.
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
/// `query` is NULL or a NUL-terminated string; `out` is NULL or points to `cap` writable
/// `struct ksym_symbol`.
#[no_mangle]
pub unsafe extern "C" fn ksym_lookup_all(
    table: *const ksym_table,
    query: *const c_char,
    out: *mut ksym_symbol,
    cap: usize,
) -> c_int {
    int_call(|| {
        // SAFETY: `table` and `query` as # Safety says.
        let (t, q) = unsafe { (table_ref(table)?, c_bytes(query, "query")?) };
        if cap > 0 {
            non_null(out, "out")?;
        }
        let all = t.table.lookup_all(q)?;
        for (i, s) in all.iter().take(cap).enumerate() {
            // SAFETY: not NULL, so `cap` writable elements (# Safety).
            unsafe { out.add(i).write(ksym_symbol::from(s)) };
        }
        Ok(c_int::try_from(all.len()).unwrap_or(c_int::MAX))
    })
}

/// addr -> the symbol containing it and the offset into it (`offset` may be
/// NULL). KSYM_ERR_NOT_FOUND below the first symbol, past the last symbol of
/// a region (module, pseudo-module, core image) and, with exact sizes, in a
/// gap between symbols. Among several names at one address: global before
/// local, then not `__pfx_`, then kernel order.
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
/// `out` is NULL or points to a writable `struct ksym_symbol`; `offset` is NULL or points to a
/// writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn ksym_symbolize(
    table: *const ksym_table,
    addr: u64,
    out: *mut ksym_symbol,
    offset: *mut u64,
) -> c_int {
    int_call(|| {
        // SAFETY: `table` as # Safety says.
        let t = unsafe { table_ref(table) }?;
        non_null(out, "out")?;
        let (sym, off) = t.table.symbolize(addr)?;
        // SAFETY: `out` not NULL; `offset` written only if not NULL (# Safety).
        unsafe {
            out.write(ksym_symbol::from(&sym));
            if !offset.is_null() {
                offset.write(off);
            }
        }
        Ok(0)
    })
}

/// A stack: every address of `addrs[0..n]` (any order, repeats allowed)
/// symbolized as ksym_symbolize would, in one call. For each `i`: `errs[i]`
/// is 0 and `out[i]` (and `offsets[i]`, when `offsets` is not NULL) the
/// symbol and offset, or `errs[i]` is the code ksym_symbolize returns for
/// that address (KSYM_ERR_NOT_FOUND below the first symbol, past the end of
/// a region, in a gap) and `out[i]`, `offsets[i]` are left as they were:
/// one bad frame fails no other. Returns how many addresses were found, or
/// a negative code when the call itself fails (NULL `table`, NULL `addrs`,
/// `out` or `errs` with `n` > 0, `n` > INT_MAX: KSYM_ERR_INVALID), then
/// writing nothing. A failed frame records no message: ksym_symbolize of
/// its address gives it. The addresses are searched in groups whose memory
/// loads overlap: a stack costs less than its addresses one call each
/// (docs/performance.md) (0.3).
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed). `addrs` is NULL or readable for `n` values; `out` and `errs` are NULL or writable
/// for `n` elements; `offsets` is NULL or writable for `n` values.
#[no_mangle]
pub unsafe extern "C" fn ksym_symbolize_stack(
    table: *const ksym_table,
    addrs: *const u64,
    n: usize,
    out: *mut ksym_symbol,
    offsets: *mut u64,
    errs: *mut c_int,
) -> c_int {
    int_call(|| {
        // SAFETY: `table` as # Safety says.
        let t = unsafe { table_ref(table) }?;
        if n == 0 {
            return Ok(0);
        }
        non_null(addrs, "addrs")?;
        non_null(out, "out")?;
        non_null(errs, "errs")?;
        if n > c_int::MAX as usize {
            return Err(Error::invalid(format!(
                "n = {n}: at most INT_MAX addresses per call"
            )));
        }
        // SAFETY: not NULL, so readable for `n` values (# Safety).
        let addrs = unsafe { std::slice::from_raw_parts(addrs, n) };
        let mut found = 0;
        t.table.symbolize_stack_with(addrs, |i, r| {
            // SAFETY: `i < n`; `out`, `errs` (and `offsets` if not NULL)
            // are writable for `n` elements (# Safety).
            unsafe {
                match r {
                    Ok((sym, off)) => {
                        out.add(i).write(ksym_symbol::from(&sym));
                        if !offsets.is_null() {
                            offsets.add(i).write(off);
                        }
                        errs.add(i).write(0);
                        found += 1;
                    }
                    Err(e) => errs.add(i).write(e.code()),
                }
            }
        });
        Ok(found)
    })
}

/// Does this process see the kernel's real addresses in `kallsyms_path`
/// (NULL: /proc/kallsyms)? Judged from its first lines, as snapshots are
/// (at most 4 KiB read, and a reader that sees them stops at the first
/// line with a non-zero address): a restricted reader sees every address as
/// zero; the first line alone cannot tell (on x86-64 distribution kernels
/// it is `0000000000000000 A fixed_percpu_data` even for root). 1: real
/// addresses; 0: all zero (kernel.kptr_restrict, no CAP_SYSLOG:
/// ksym_table_open would fail with KSYM_ERR_RESTRICTED); KSYM_ERR_FORMAT
/// when the first line is not a kallsyms line; a negative errno when the
/// file cannot be read. `ksym addresses` is this call on the command line
/// (0.3).
///
/// # Safety
/// `kallsyms_path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ksym_kallsyms_shows_addresses(kallsyms_path: *const c_char) -> c_int {
    int_call(|| {
        // SAFETY: NULL or NUL-terminated (# Safety).
        let path = unsafe { c_path(kallsyms_path) }
            .unwrap_or_else(|| std::path::PathBuf::from("/proc/kallsyms"));
        Ok(ksym::kallsyms_shows_addresses(&path)? as c_int)
    })
}

/// A table walk's visitor that calls the C callback: non-zero stops the
/// walk with that value.
///
/// # Safety
/// `cb` may be called with `ctx` and a symbol valid during the call.
unsafe fn visit_with(
    cb: unsafe extern "C" fn(*const ksym_symbol, *mut c_void) -> c_int,
    ctx: *mut c_void,
) -> impl FnMut(&Symbol<'_>) -> ControlFlow<c_int> {
    move |s| {
        let cs = ksym_symbol::from(s);
        // SAFETY: as this function's # Safety says; `cs` lives during the call.
        match unsafe { cb(&cs, ctx) } {
            0 => ControlFlow::Continue(()),
            v => ControlFlow::Break(v),
        }
    }
}

/// The callback of ksym_foreach_match: return non-zero to stop.
pub type ksym_match_cb =
    Option<unsafe extern "C" fn(sym: *const ksym_symbol, ctx: *mut c_void) -> c_int>;

/// Calls `cb` for every symbol matching `pattern` ("glob" or
/// "modglob`glob", with * ? [...]), absolute symbols first, then in address
/// order. Stops early and returns cb's value when cb returns non-zero;
/// returns 0 after the last one.
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
/// `pattern` is NULL or a NUL-terminated string; `cb`, if not NULL, may be called with `ctx`
/// and a symbol valid during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_foreach_match(
    table: *const ksym_table,
    pattern: *const c_char,
    cb: ksym_match_cb,
    ctx: *mut c_void,
) -> c_int {
    int_call(|| {
        // SAFETY: `table` and `pattern` as # Safety says.
        let (t, p) = unsafe { (table_ref(table)?, c_bytes(pattern, "pattern")?) };
        let cb = cb.ok_or_else(|| Error::invalid("cb is NULL"))?;
        // SAFETY: the caller's callback and context (# Safety).
        let r = t.table.for_each_match(p, unsafe { visit_with(cb, ctx) })?;
        Ok(r.unwrap_or(0))
    })
}

/// ksym_table_foreach flags: the order of the source file (the kernel's
/// order) instead of the table's (absolute symbols first, then by address)
/// (0.3).
pub const KSYM_FOREACH_FILE_ORDER: c_uint = 1;
/// ksym_table_foreach flags: without the pseudo-module symbols (BPF
/// programs, ftrace trampolines, kprobe pages), which come and go while the
/// system runs; a table from a snapshot then answers itself, with no read
/// (0.3).
pub const KSYM_FOREACH_NO_PSEUDO: c_uint = 2;
/// All `KSYM_FOREACH_*` flags this version knows.
pub const KSYM_FOREACH_FLAGS_ALL: c_uint = KSYM_FOREACH_FILE_ORDER | KSYM_FOREACH_NO_PSEUDO;

/// Calls `cb` for every symbol of the table (0.3): in table order, or with
/// KSYM_FOREACH_FILE_ORDER in the order of the lines of the source file,
/// which is what an unstable sort by address (bcc's) needs to be reproduced.
/// A table from a snapshot calls it with a fresh read's symbols (made when
/// first needed) unless KSYM_FOREACH_NO_PSEUDO leaves out the only ones a
/// snapshot cannot vouch for. Stops early and returns cb's value when cb
/// returns non-zero; returns 0 after the last one. KSYM_ERR_INVALID for
/// unknown flags.
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed); `cb`, if not NULL, may be called with `ctx` and a symbol valid during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_table_foreach(
    table: *const ksym_table,
    flags: c_uint,
    cb: ksym_match_cb,
    ctx: *mut c_void,
) -> c_int {
    int_call(|| {
        // SAFETY: `table` as # Safety says.
        let t = unsafe { table_ref(table) }?;
        let cb = cb.ok_or_else(|| Error::invalid("cb is NULL"))?;
        check_flags(flags, KSYM_FOREACH_FLAGS_ALL, "ksym_table_foreach")?;
        let file_order = flags & KSYM_FOREACH_FILE_ORDER != 0;
        let skip_pseudo = flags & KSYM_FOREACH_NO_PSEUDO != 0;
        // SAFETY: the caller's callback and context (# Safety).
        let r = t
            .table
            .for_each_symbol(file_order, skip_pseudo, unsafe { visit_with(cb, ctx) })?;
        Ok(r.unwrap_or(0))
    })
}

/// Facts about a table. Output struct: set `sz`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ksym_table_stats {
    /// sizeof(struct ksym_table_stats), set by the caller.
    pub sz: usize,
    pub symbols: usize,
    pub modules: usize,
    /// Bytes of kallsyms text.
    pub file_bytes: usize,
    /// Bytes of memory the table holds.
    pub memory_bytes: usize,
    /// Time to read the file (0 for buffers).
    pub read_ns: u64,
    /// Time spent parsing (overlapping the read, for files) and indexing.
    pub parse_ns: u64,
    /// Time spent on built-in module attribution and sizes.
    pub attribution_ns: u64,
    /// KSYM_STATS_* bits.
    pub flags: c_uint,
    /// Reserved: written zero.
    pub reserved: c_uint,
}

/// ksym_table_stats.flags: the table was read from /proc/kallmodsyms text.
pub const KSYM_STATS_KALLMODSYMS: c_uint = 1;
/// ksym_table_stats.flags: a modules.builtin.ranges file was applied.
pub const KSYM_STATS_BUILTIN_RANGES: c_uint = 2;
/// ksym_table_stats.flags: sizes come from a vmlinux ELF.
pub const KSYM_STATS_VMLINUX_SIZES: c_uint = 4;
/// ksym_table_stats.flags: this table came from a snapshot.
pub const KSYM_STATS_SNAPSHOT: c_uint = 8;
/// ksym_table_stats.flags: this open writes a new snapshot: its text while
/// the source was read, the rest in a thread of the library after the open
/// returned, done before the process's next ksym_table_open and before it
/// exits.
pub const KSYM_STATS_SNAPSHOT_WRITTEN: c_uint = 16;

/// Fills `out` (set out->sz first) with counts, memory and timings.
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_table_stats(
    table: *const ksym_table,
    out: *mut ksym_table_stats,
) -> c_int {
    int_call(|| {
        // SAFETY: `table` as # Safety says.
        let t = unsafe { table_ref(table) }?;
        let i = t.table.info();
        let mut flags = 0;
        if i.format == ksym::KallsymsFormat::Kallmodsyms {
            flags |= KSYM_STATS_KALLMODSYMS;
        }
        if i.builtin_ranges.is_some() {
            flags |= KSYM_STATS_BUILTIN_RANGES;
        }
        if i.size_source == SizeSource::Vmlinux {
            flags |= KSYM_STATS_VMLINUX_SIZES;
        }
        if i.snapshot.loaded {
            flags |= KSYM_STATS_SNAPSHOT;
        }
        if i.snapshot.written {
            flags |= KSYM_STATS_SNAPSHOT_WRITTEN;
        }
        let s = ksym_table_stats {
            sz: std::mem::size_of::<ksym_table_stats>(),
            symbols: t.table.len(),
            modules: t.table.module_count(),
            file_bytes: i.file_bytes,
            memory_bytes: t.table.memory(),
            read_ns: i.read_ns,
            parse_ns: i.parse_ns,
            attribution_ns: i.attribution_ns,
            flags,
            reserved: 0,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { super::write_out(out, s, "out") }?;
        Ok(0)
    })
}

/// Number of diagnostics: notes about the table that were not errors (a
/// built-in ranges section skipped because its anchor is missing, ...).
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
#[no_mangle]
pub unsafe extern "C" fn ksym_table_diagnostic_count(table: *const ksym_table) -> usize {
    value_call(0, || {
        // SAFETY: `table` as # Safety says.
        Ok(unsafe { table_ref(table) }?.diagnostics.len())
    })
}

/// Diagnostic `i`, borrowed from the table; NULL when out of range.
///
/// # Safety
/// `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
/// freed).
#[no_mangle]
pub unsafe extern "C" fn ksym_table_diagnostic(
    table: *const ksym_table,
    i: usize,
) -> *const c_char {
    value_call(std::ptr::null(), || {
        // SAFETY: `table` as # Safety says.
        let t = unsafe { table_ref(table) }?;
        t.diagnostics.get(i).map(|d| d.as_ptr()).ok_or_else(|| {
            Error::not_found(format!(
                "no diagnostic {i}: the table has {}",
                t.diagnostics.len()
            ))
        })
    })
}
