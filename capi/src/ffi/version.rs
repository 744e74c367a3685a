//! Versions: `KSYM_VERSION_MAJOR`, `_MINOR` and `_PATCH` are the version of
//! the header, `ksym_version()` the version of the library the program
//! runs with. The soname (`libksym.so.0`) changes only when the ABI breaks;
//! while it only grows, a program built against an older header runs with
//! a newer library (see docs/c-api.md, "Versions and the soname").

use std::ffi::{c_char, c_int};

/// Version of the header: Cargo.toml's (a build fails when they differ).
pub const KSYM_VERSION_MAJOR: c_int = 0;
pub const KSYM_VERSION_MINOR: c_int = 2;
pub const KSYM_VERSION_PATCH: c_int = 0;

/// A decimal number of Cargo's version, at compile time.
const fn number(s: &str) -> c_int {
    let b = s.as_bytes();
    let mut v = 0;
    let mut i = 0;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as c_int;
        i += 1;
    }
    v
}

// The macros follow Cargo.toml: a version bump that forgets them fails here.
const _: () = assert!(KSYM_VERSION_MAJOR == number(env!("CARGO_PKG_VERSION_MAJOR")));
const _: () = assert!(KSYM_VERSION_MINOR == number(env!("CARGO_PKG_VERSION_MINOR")));
const _: () = assert!(KSYM_VERSION_PATCH == number(env!("CARGO_PKG_VERSION_PATCH")));

/// Version string "MAJOR.MINOR.PATCH" of the library. Static.
#[no_mangle]
pub extern "C" fn ksym_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn version_matches_cargo() {
        let v = unsafe { CStr::from_ptr(ksym_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        let macros = format!("{KSYM_VERSION_MAJOR}.{KSYM_VERSION_MINOR}.{KSYM_VERSION_PATCH}");
        assert_eq!(macros, env!("CARGO_PKG_VERSION"));
        assert_eq!(number("0"), 0);
        assert_eq!(number("120"), 120);
    }
}
