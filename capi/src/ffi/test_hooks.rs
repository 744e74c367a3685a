//! A way to make the core panic, to prove the boundary: only in builds
//! with the `test-hooks` feature (`make test` turns it on for the Rust
//! tests; release builds and the installed library never have it, and
//! cbindgen leaves it out of the header).

use std::ffi::c_int;

use super::{int_call, ptr_call};

/// Panics inside the boundary when `what` is 1 (an int-returning call);
/// returns 0 otherwise.
#[no_mangle]
pub extern "C" fn ksym_test_panic(what: c_int) -> c_int {
    int_call(|| {
        if what == 1 {
            panic!("ksym_test_panic: a panic on purpose");
        }
        Ok(0)
    })
}

/// Panics inside a pointer-returning call (NULL comes back).
#[no_mangle]
pub extern "C" fn ksym_test_panic_ptr() -> *mut u8 {
    ptr_call(|| -> ksym::Result<*mut u8> {
        let v: Vec<u8> = Vec::new();
        // An index past the end: the kind of bug the boundary is for.
        let i = v.len() + 1;
        Ok(v[i] as usize as *mut u8)
    })
}
