//! The C ABI: the only place that sees raw pointers.
//!
//! Every exported function runs its body through `int_call` or
//! `ptr_call`: a panic is caught (it never unwinds into C) and reported as
//! `KSYM_ERR_INTERNAL`; an error is recorded as the thread-local last error;
//! success clears it. This layer converts arguments and results and holds no
//! logic of its own.
//!
//! Conventions (also in docs/c-api.md and the header):
//! - NULL where a pointer is required → `KSYM_ERR_INVALID`, never a crash.
//! - Out-parameters are written only on success, except where documented.
//! - Option structs start with `size_t sz`; a smaller `sz` (an older caller)
//!   is zero-extended, a larger one accepted only if the extra tail is zero.
//!
//! Every exported function says in its `# Safety` section what the caller
//! must guarantee: what the C contract asks of any C caller (a pointer is
//! NULL or valid for what its type says, a handle is live, a string is
//! NUL-terminated). The unsafe blocks in the bodies rely on exactly that.
//!
//! The modules are declared in the order `include/ksym.h` shows them, each
//! a section of the header opened by the first paragraph of its `//!`
//! documentation (tools/header_layout.rs; HACKING.md, "The header"): errors
//! and conventions, version, the table, modules, resolution and the cache,
//! kernel BTF, BPF objects, their BTF for older kernels, their maps and
//! externs, attach targets, multi links. This file declares no C item of its own.

#![allow(non_camel_case_types)]

pub mod error;
pub mod version;
pub mod table;
pub mod modules;
pub mod resolve;
pub mod btf;
pub mod bpf;
pub mod bpf_btf;
pub mod bpf_maps;
pub mod bpf_vars;
pub mod bpf_attach;
pub mod bpf_multi;
pub mod bpf_alias;
pub mod kinds;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;

use std::ffi::{c_char, c_int, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use ksym::{Error, ErrorKind, Result};

/// Runs an `int`-returning body at the boundary: `Ok(n)` returns `n`
/// (clearing the last error), `Err(e)` records `e` and returns its code, a
/// panic records `KSYM_ERR_INTERNAL`.
#[inline]
pub(crate) fn int_call(f: impl FnOnce() -> Result<c_int>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => {
            error::clear();
            v
        }
        Ok(Err(e)) => error::record(&e),
        Err(p) => error::record(&panic_error(p)),
    }
}

/// Runs a pointer-returning body: `Err` or a panic record the error and
/// return NULL.
#[inline]
pub(crate) fn ptr_call<T>(f: impl FnOnce() -> Result<*mut T>) -> *mut T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => {
            error::clear();
            v
        }
        Ok(Err(e)) => {
            error::record(&e);
            std::ptr::null_mut()
        }
        Err(p) => {
            error::record(&panic_error(p));
            std::ptr::null_mut()
        }
    }
}

/// Runs a body whose result cannot carry an error (a count, a borrowed
/// string): `fail` is returned on error, the error still recorded.
#[inline]
pub(crate) fn value_call<T>(fail: T, f: impl FnOnce() -> Result<T>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => {
            error::clear();
            v
        }
        Ok(Err(e)) => {
            error::record(&e);
            fail
        }
        Err(p) => {
            error::record(&panic_error(p));
            fail
        }
    }
}

fn panic_error(p: Box<dyn std::any::Any + Send>) -> Error {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::with_kind(
        ErrorKind::Internal,
        format!("internal error in libksym (please report): {what}"),
    )
}

/// `arg` must not be NULL.
#[inline]
pub(crate) fn non_null<T>(p: *const T, what: &str) -> Result<*const T> {
    if p.is_null() {
        Err(Error::invalid(format!("{what} is NULL")))
    } else {
        Ok(p)
    }
}

/// A required C string argument as bytes (NULL: `KSYM_ERR_INVALID`).
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string valid for `'a`.
#[inline]
pub(crate) unsafe fn c_bytes<'a>(p: *const c_char, what: &str) -> Result<&'a [u8]> {
    non_null(p, what)?;
    // SAFETY: not NULL, so a NUL-terminated string (# Safety).
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// An optional path argument: NULL is `None`.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
pub(crate) unsafe fn c_path(p: *const c_char) -> Option<PathBuf> {
    if p.is_null() {
        None
    } else {
        // SAFETY: not NULL, so a NUL-terminated string (# Safety).
        let b = unsafe { CStr::from_ptr(p) }.to_bytes();
        Some(PathBuf::from(OsStr::from_bytes(b)))
    }
}

/// Reads a versioned input struct whose first field is `size_t sz`.
///
/// NULL gives `T::default()` (with `sz` set). `sz` smaller than the size
/// field itself is invalid; smaller than `T` zero-extends (older callers);
/// larger is accepted only if every byte past `T` is zero.
///
/// # Safety
/// `p` is NULL or points to a struct whose first field is a `size_t` and
/// which is readable for that many bytes. `T` is plain old data (every
/// byte pattern, zeroes included, is a valid `T`).
pub(crate) unsafe fn read_opts<T: Copy + Default>(p: *const T, what: &str) -> Result<T> {
    if p.is_null() {
        return Ok(T::default());
    }
    // SAFETY: not NULL: the struct starts with a size_t (# Safety).
    let sz = unsafe { (p as *const usize).read_unaligned() };
    let ours = std::mem::size_of::<T>();
    if sz < std::mem::size_of::<usize>() {
        return Err(Error::invalid(format!(
            "{what}.sz is {sz}: set it to sizeof(struct {what}) (KSYM_OPTS does)"
        )));
    }
    let bytes = p as *const u8;
    if sz > ours {
        // SAFETY: the caller says the struct is `sz` bytes long.
        let tail = unsafe { std::slice::from_raw_parts(bytes.add(ours), sz - ours) };
        if let Some(i) = tail.iter().position(|&b| b != 0) {
            return Err(Error::invalid(format!(
                "{what}.sz is {sz}, larger than this libksym's {ours}, and byte {} of the extra \
                 tail is not zero: the caller uses a newer libksym's fields",
                ours + i
            )));
        }
    }
    let mut out = T::default();
    let n = sz.min(ours);
    // SAFETY: both regions are valid for `n` bytes; T is plain old data.
    unsafe { std::ptr::copy_nonoverlapping(bytes, &mut out as *mut T as *mut u8, n) };
    Ok(out)
}

/// Writes `val` to an output struct whose first field is `size_t sz`, at
/// most `sz` bytes of it (an older caller gets the fields it knows).
///
/// # Safety
/// `p` is NULL or points to a struct whose first field is a `size_t` and
/// which is writable for that many bytes.
pub(crate) unsafe fn write_out<T: Copy>(p: *mut T, val: T, what: &str) -> Result<()> {
    non_null(p, what)?;
    // SAFETY: not NULL: the struct starts with a size_t (# Safety).
    let sz = unsafe { (p as *const usize).read_unaligned() };
    if sz < std::mem::size_of::<usize>() {
        return Err(Error::invalid(format!(
            "{what}->sz is {sz}: set it to sizeof(*{what})"
        )));
    }
    let n = sz.min(std::mem::size_of::<T>());
    let src = &val as *const T as *const u8;
    // SAFETY: copy the part both sides know, keeping the caller's sz.
    unsafe {
        std::ptr::copy_nonoverlapping(
            src.add(std::mem::size_of::<usize>()),
            (p as *mut u8).add(std::mem::size_of::<usize>()),
            n - std::mem::size_of::<usize>(),
        )
    };
    Ok(())
}

/// Checks `flags` against the known bits.
pub(crate) fn check_flags(flags: u32, known: u32, what: &str) -> Result<()> {
    if flags & !known != 0 {
        return Err(Error::with_kind(
            ErrorKind::Invalid,
            format!("{what}: unknown flag bits {:#x}", flags & !known),
        ));
    }
    Ok(())
}

/// A reserved field of an input struct must be zero.
pub(crate) fn check_reserved(v: u32, what: &str) -> Result<()> {
    if v != 0 {
        return Err(Error::invalid(format!(
            "{what} is {v:#x}: reserved fields must be zero (declare the struct with KSYM_OPTS)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::error::{KSYM_ERR_INTERNAL as INTERNAL, KSYM_ERR_INVALID as INVALID};
    use super::*;

    #[derive(Clone, Copy, Debug, Default)]
    #[repr(C)]
    struct Opts {
        sz: usize,
        a: u64,
        b: u32,
    }

    #[test]
    fn versioned_opts() {
        let o = unsafe { read_opts::<Opts>(std::ptr::null(), "o") }.unwrap();
        assert_eq!(o.a, 0);
        // An older, smaller caller struct: zero-extended.
        let small: [usize; 2] = [16, 7];
        let o = unsafe { read_opts::<Opts>(small.as_ptr().cast(), "o") }.unwrap();
        assert_eq!((o.a, o.b), (7, 0));
        // A newer caller with a zero tail is fine, a non-zero tail is not.
        let mut big = [0u64; 6];
        big[0] = 48;
        big[1] = 9;
        let o = unsafe { read_opts::<Opts>(big.as_ptr().cast(), "o") }.unwrap();
        assert_eq!(o.a, 9);
        big[5] = 1;
        let e = unsafe { read_opts::<Opts>(big.as_ptr().cast(), "o") }.unwrap_err();
        assert_eq!(e.code(), INVALID);
        let zero = [0usize; 3];
        let e = unsafe { read_opts::<Opts>(zero.as_ptr().cast(), "o") }.unwrap_err();
        assert!(e.message().contains("sizeof"), "{e}");
    }

    #[test]
    fn boundary_catches_panics() {
        let r = int_call(|| panic!("boom"));
        assert_eq!(r, INTERNAL);
        assert_eq!(error::ksym_last_error(), INTERNAL);
        let msg = unsafe { CStr::from_ptr(error::ksym_last_error_message()) };
        assert!(msg.to_str().unwrap().contains("boom"));
        let p: *mut u8 = ptr_call(|| panic!("again"));
        assert!(p.is_null());
        assert_eq!(int_call(|| Ok(3)), 3);
        assert_eq!(error::ksym_last_error(), 0);
    }
}
