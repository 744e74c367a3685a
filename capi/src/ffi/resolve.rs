//! Batch resolution and the cache. `ksym_resolve` answers many queries in
//! one streaming pass over kallsyms and keeps nothing; a `ksym_cache`
//! keeps the answers asked for, serves them again without I/O, and drops
//! exactly those a module load or unload affects. A cache is internally
//! synchronised (docs/symbols.md).

use std::ffi::{c_char, c_int, CStr};

use super::table::{ksym_table_opts, options_from};
use super::{c_path, int_call, non_null, ptr_call, value_call};
use ksym::Cache;
use ksym::{parse_queries, resolve_each, Source};
use ksym::{Error, Result};

/// A pull-through cache of resolved names (opaque). Internally synchronised:
/// any number of threads may use one at once.
pub struct ksym_cache {
    pub(crate) cache: Cache,
}

/// The queries of a call as byte strings (each must be non-NULL).
///
/// # Safety
/// `queries` is NULL or points to `n` pointers, each NULL or a
/// NUL-terminated string valid for `'a`.
unsafe fn query_list<'a>(queries: *const *const c_char, n: usize) -> Result<Vec<&'a [u8]>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    non_null(queries, "queries")?;
    // SAFETY: not NULL, so `n` pointers (# Safety).
    let ptrs = unsafe { std::slice::from_raw_parts(queries, n) };
    ptrs.iter()
        .enumerate()
        .map(|(i, &p)| {
            if p.is_null() {
                Err(Error::invalid(format!("queries[{i}] is NULL")))
            } else {
                // SAFETY: not NULL, so a NUL-terminated string (# Safety).
                Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
            }
        })
        .collect()
}

/// The caller's answer arrays of `n` elements each (checked non-NULL when
/// `n > 0`).
///
/// # Safety
/// `addrs` and `errs` are NULL or point to `n` writable elements each,
/// valid and not otherwise used for `'a`.
unsafe fn answer_arrays<'a>(
    addrs: *mut u64,
    errs: *mut c_int,
    n: usize,
) -> Result<(&'a mut [u64], &'a mut [c_int])> {
    if n == 0 {
        return Ok((&mut [], &mut []));
    }
    non_null(addrs, "addrs")?;
    non_null(errs, "errs")?;
    // SAFETY: not NULL, so `n` writable elements each (# Safety).
    Ok(unsafe {
        (
            std::slice::from_raw_parts_mut(addrs, n),
            std::slice::from_raw_parts_mut(errs, n),
        )
    })
}

/// One streaming pass over `kallsyms_path` (NULL: /proc/kallsyms, with
/// /lib/modules/$(uname -r)/modules.builtin.ranges when it exists) for `n`
/// queries, keeping no table. `addrs[i]` and `errs[i]` (0,
/// KSYM_ERR_NOT_FOUND, KSYM_ERR_AMBIGUOUS) are written for every i; a query
/// not found gets address 0, an ambiguous one the lowest address. Returns
/// the number of queries resolved, or a negative code when the whole call
/// failed (I/O, restricted, malformed file, malformed query).
///
/// # Safety
/// `kallsyms_path` is NULL or a NUL-terminated string; `queries` is NULL or points to `n`
/// pointers, each NULL or a NUL-terminated string; `addrs` and `errs` are NULL or point to `n`
/// writable elements each.
#[no_mangle]
pub unsafe extern "C" fn ksym_resolve(
    kallsyms_path: *const c_char,
    queries: *const *const c_char,
    n: usize,
    addrs: *mut u64,
    errs: *mut c_int,
) -> c_int {
    int_call(|| {
        // SAFETY: `queries` as # Safety says.
        let qs = unsafe { query_list(queries, n) }?;
        // SAFETY: `addrs` and `errs` as # Safety says.
        let (addrs, errs) = unsafe { answer_arrays(addrs, errs, n) }?;
        // SAFETY: `kallsyms_path` as # Safety says.
        let path = unsafe { c_path(kallsyms_path) };
        let source = match path {
            None => Source::proc_kallsyms(),
            Some(p) => Source {
                kallsyms_path: Some(p),
                builtin_ranges: None,
            },
        };
        let mut resolved = 0;
        resolve_each(&source, &parse_queries(&qs)?, |i, a| {
            addrs[i] = a.addr;
            errs[i] = a.err;
            resolved += c_int::from(a.err == 0);
        })?;
        Ok(resolved)
    })
}

/// A cache reading what `opts` names (NULL: defaults): kallsyms_path,
/// builtin_ranges_path and modules_path (what it watches to notice module
/// changes); vmlinux_path is not used. Reads nothing until the first call.
///
/// # Safety
/// `opts` is NULL or points to a `struct ksym_table_opts` of at least `opts->sz` bytes whose
/// strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_new(opts: *const ksym_table_opts) -> *mut ksym_cache {
    ptr_call(|| {
        // SAFETY: `opts` as # Safety says.
        let o = unsafe { options_from(opts) }?;
        let source = Source {
            kallsyms_path: o.kallsyms_path,
            builtin_ranges: ksym::builtin_ranges_path(o.builtin_ranges_path.as_deref()),
        };
        Ok(Box::into_raw(Box::new(ksym_cache {
            cache: Cache::new(source, o.modules_path),
        })))
    })
}

/// Frees a cache (NULL is a no-op).
///
/// # Safety
/// `cache` is NULL or a handle from `ksym_cache_new`, not freed already; it is not used
/// afterwards.
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_free(cache: *mut ksym_cache) {
    if !cache.is_null() {
        // SAFETY: a handle not freed already (# Safety).
        drop(unsafe { Box::from_raw(cache) });
    }
}

/// The cache behind a handle, or KSYM_ERR_INVALID for NULL.
///
/// # Safety
/// `c` is NULL or a live handle from `ksym_cache_new` that lives for `'a`.
unsafe fn cache_ref<'a>(c: *const ksym_cache) -> Result<&'a ksym_cache> {
    non_null(c, "cache")?;
    // SAFETY: not NULL, so a live handle (# Safety).
    Ok(unsafe { &*c })
}

/// Same contract as ksym_resolve. Answers already cached cost no read of
/// kallsyms; the misses of one call are resolved in one pass; only
/// requested names are kept, and only as long as the modules they depend on
/// do not change (checked against /proc/modules on each call).
///
/// # Safety
/// `cache` is NULL or a live handle from `ksym_cache_new`, not freed.
/// `queries` is NULL or points to `n` pointers, each NULL or a NUL-terminated string; `addrs`
/// and `errs` are NULL or point to `n` writable elements each.
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_resolve(
    cache: *mut ksym_cache,
    queries: *const *const c_char,
    n: usize,
    addrs: *mut u64,
    errs: *mut c_int,
) -> c_int {
    int_call(|| {
        // SAFETY: `cache`, `queries` as # Safety says.
        let c = unsafe { cache_ref(cache) }?;
        let qs = unsafe { query_list(queries, n) }?;
        // SAFETY: `addrs` and `errs` as # Safety says.
        let (addrs, errs) = unsafe { answer_arrays(addrs, errs, n) }?;
        let mut resolved = 0;
        for (i, (addr, err)) in c.cache.resolve(&qs)?.into_iter().enumerate() {
            addrs[i] = addr;
            errs[i] = err;
            resolved += c_int::from(err == 0);
        }
        Ok(resolved)
    })
}

/// Drops every cached answer (NULL is a no-op).
///
/// # Safety
/// `cache` is NULL or a live handle from `ksym_cache_new`, not freed.
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_invalidate(cache: *mut ksym_cache) {
    value_call((), || {
        if cache.is_null() {
            return Ok(());
        }
        // SAFETY: `cache` as # Safety says.
        unsafe { cache_ref(cache) }?.cache.invalidate();
        Ok(())
    })
}

/// Counters of a cache. Output struct: set `sz`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ksym_cache_stats {
    /// sizeof(struct ksym_cache_stats), set by the caller.
    pub sz: usize,
    /// Queries answered from the cache.
    pub hits: u64,
    /// Queries that needed a pass over kallsyms.
    pub misses: u64,
    /// Passes over kallsyms.
    pub passes: u64,
    /// Answers held now.
    pub entries: u64,
    /// Answers dropped because modules changed.
    pub dropped: u64,
    /// Reads of the modules file.
    pub module_checks: u64,
}

/// Fills `out` (set out->sz first) with the cache's counters.
///
/// # Safety
/// `cache` is NULL or a live handle from `ksym_cache_new`, not freed.
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_stats(
    cache: *const ksym_cache,
    out: *mut ksym_cache_stats,
) -> c_int {
    int_call(|| {
        // SAFETY: `cache` as # Safety says.
        let c = unsafe { cache_ref(cache) }?;
        let s = c.cache.stats();
        let v = ksym_cache_stats {
            sz: std::mem::size_of::<ksym_cache_stats>(),
            hits: s.hits,
            misses: s.misses,
            passes: s.passes,
            entries: s.entries,
            dropped: s.dropped,
            module_checks: s.module_checks,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { super::write_out(out, v, "out") }?;
        Ok(0)
    })
}
