//! `ksym_resolve` and `ksym_cache_*`.

use std::ffi::{c_char, c_int, CStr};

use super::table::{ksym_table_opts, options_from};
use super::{c_path, int_call, non_null, ptr_call, value_call};
use crate::error::{Error, Result};
use crate::modules::ranges;
use crate::resolve::cache::Cache;
use crate::resolve::{parse_queries, resolve_each, Source};

/// A pull-through cache of resolved names (opaque). Internally synchronised:
/// any number of threads may use one at once.
pub struct ksym_cache {
    pub(crate) cache: Cache,
}

/// The queries of a call as byte strings (each must be non-NULL).
unsafe fn query_list<'a>(queries: *const *const c_char, n: usize) -> Result<Vec<&'a [u8]>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    non_null(queries, "queries")?;
    // SAFETY: the caller passes an array of `n` pointers.
    let ptrs = unsafe { std::slice::from_raw_parts(queries, n) };
    ptrs.iter()
        .enumerate()
        .map(|(i, &p)| {
            if p.is_null() {
                Err(Error::invalid(format!("queries[{i}] is NULL")))
            } else {
                // SAFETY: a NUL-terminated string, per the contract.
                Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
            }
        })
        .collect()
}

/// The caller's answer arrays of `n` elements each (checked non-NULL when
/// `n > 0`).
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
    // SAFETY: non-NULL, and the caller's arrays hold `n` elements each.
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
#[no_mangle]
pub unsafe extern "C" fn ksym_resolve(
    kallsyms_path: *const c_char,
    queries: *const *const c_char,
    n: usize,
    addrs: *mut u64,
    errs: *mut c_int,
) -> c_int {
    int_call(|| {
        // SAFETY: per the contract.
        let qs = unsafe { query_list(queries, n) }?;
        // SAFETY: per the contract.
        let (addrs, errs) = unsafe { answer_arrays(addrs, errs, n) }?;
        // SAFETY: NULL or a NUL-terminated path.
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
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_new(opts: *const ksym_table_opts) -> *mut ksym_cache {
    ptr_call(|| {
        // SAFETY: per the contract.
        let o = unsafe { options_from(opts) }?;
        let source = Source {
            kallsyms_path: o.kallsyms_path,
            builtin_ranges: ranges::from_option(o.builtin_ranges_path.as_deref()),
        };
        Ok(Box::into_raw(Box::new(ksym_cache {
            cache: Cache::new(source, o.modules_path),
        })))
    })
}

/// Frees a cache (NULL is a no-op).
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_free(cache: *mut ksym_cache) {
    if !cache.is_null() {
        // SAFETY: a handle from ksym_cache_new, freed once.
        drop(unsafe { Box::from_raw(cache) });
    }
}

unsafe fn cache_ref<'a>(c: *const ksym_cache) -> Result<&'a ksym_cache> {
    non_null(c, "cache")?;
    // SAFETY: a live handle from ksym_cache_new.
    Ok(unsafe { &*c })
}

/// Same contract as ksym_resolve. Answers already cached cost no read of
/// kallsyms; the misses of one call are resolved in one pass; only
/// requested names are kept, and only as long as the modules they depend on
/// do not change (checked against /proc/modules on each call).
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_resolve(
    cache: *mut ksym_cache,
    queries: *const *const c_char,
    n: usize,
    addrs: *mut u64,
    errs: *mut c_int,
) -> c_int {
    int_call(|| {
        // SAFETY: per the contract.
        let c = unsafe { cache_ref(cache) }?;
        let qs = unsafe { query_list(queries, n) }?;
        // SAFETY: per the contract.
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
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_invalidate(cache: *mut ksym_cache) {
    value_call((), || {
        if cache.is_null() {
            return Ok(());
        }
        // SAFETY: a live handle.
        unsafe { cache_ref(cache) }?.cache.invalidate();
        Ok(())
    })
}

/// Counters of a cache (added to the contract). Output struct: set `sz`.
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
#[no_mangle]
pub unsafe extern "C" fn ksym_cache_stats(
    cache: *const ksym_cache,
    out: *mut ksym_cache_stats,
) -> c_int {
    int_call(|| {
        // SAFETY: per the contract.
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
        // SAFETY: per the contract.
        unsafe { super::write_out(out, v, "out") }?;
        Ok(0)
    })
}
