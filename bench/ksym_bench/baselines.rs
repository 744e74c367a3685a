//! The C baselines (bench/baselines.c): what a C programmer would write,
//! measured in the same run, on the same file and queries, as the rows
//! they are the baseline of.

use std::ffi::{c_char, c_long, CStr, CString};
use std::path::Path;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct NSym {
    pub addr: u64,
    pub name: *const c_char,
    pub ty: c_char,
}

#[repr(C)]
struct Fnv {
    slot: *mut libc::c_void,
    mask: usize,
}

extern "C" {
    fn naive_parse(path: *const c_char, out: *mut *mut NSym, text: *mut *mut c_char) -> c_long;
    fn fnv_build(t: *mut Fnv, s: *const NSym, n: usize);
    fn fnv_lookup(t: *const Fnv, name: *const c_char) -> u64;
    fn fnv_free(t: *mut Fnv);
    fn bs_build(s: *const NSym, n: usize, addrs: *mut *mut u64, names: *mut *mut *const c_char);
    fn bs_find(
        addrs: *const u64,
        names: *const *const c_char,
        n: usize,
        a: u64,
        off: *mut u64,
    ) -> *const c_char;
}

/// The naive parse's result (freed on drop).
pub struct Parsed {
    pub syms: *mut NSym,
    pub text: *mut c_char,
    pub n: usize,
}

impl Drop for Parsed {
    fn drop(&mut self) {
        unsafe {
            libc::free(self.syms.cast());
            libc::free(self.text.cast());
        }
    }
}

/// Parses `path` the naive way (one thread, strtoull and strcspn per line).
pub fn parse(path: &Path) -> Parsed {
    let p = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let (mut syms, mut text) = (std::ptr::null_mut(), std::ptr::null_mut());
    let n = unsafe { naive_parse(p.as_ptr(), &mut syms, &mut text) };
    assert!(n > 0, "naive_parse({}) failed", path.display());
    Parsed {
        syms,
        text,
        n: n as usize,
    }
}

/// The FNV-1a table over a parse's names (which it borrows).
pub struct FnvTable<'p>(Fnv, std::marker::PhantomData<&'p Parsed>);

impl<'p> FnvTable<'p> {
    pub fn new(p: &'p Parsed) -> Self {
        let mut t = Fnv {
            slot: std::ptr::null_mut(),
            mask: 0,
        };
        unsafe { fnv_build(&mut t, p.syms, p.n) };
        FnvTable(t, std::marker::PhantomData)
    }
    /// The address of the first line named `name`; 0 when none.
    #[inline]
    pub fn lookup(&self, name: &CStr) -> u64 {
        unsafe { fnv_lookup(&self.0, name.as_ptr()) }
    }
}

impl Drop for FnvTable<'_> {
    fn drop(&mut self) {
        unsafe { fnv_free(&mut self.0) }
    }
}

/// The sorted addresses and their names.
pub struct Sorted<'p> {
    addrs: *mut u64,
    names: *mut *const c_char,
    n: usize,
    _p: std::marker::PhantomData<&'p Parsed>,
}

impl<'p> Sorted<'p> {
    pub fn new(p: &'p Parsed) -> Self {
        let (mut addrs, mut names) = (std::ptr::null_mut(), std::ptr::null_mut());
        unsafe { bs_build(p.syms, p.n, &mut addrs, &mut names) };
        Sorted {
            addrs,
            names,
            n: p.n,
            _p: std::marker::PhantomData,
        }
    }
    /// The last symbol at or below `a`: its address and name.
    #[inline]
    pub fn find(&self, a: u64) -> Option<(u64, *const c_char)> {
        let mut off = 0u64;
        let name = unsafe { bs_find(self.addrs, self.names, self.n, a, &mut off) };
        (!name.is_null()).then_some((a - off, name))
    }
}

impl Drop for Sorted<'_> {
    fn drop(&mut self) {
        unsafe {
            libc::free(self.addrs.cast());
            libc::free(self.names.cast());
        }
    }
}
