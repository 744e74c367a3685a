//! Errors and conventions. An `int` result is 0 (or a count) on success
//! and a negative `KSYM_ERR_*` code or `-errno` on failure; a pointer
//! result is NULL on failure. Every failure records a thread-local error,
//! `ksym_last_error()` and `ksym_last_error_message()` (the file, line,
//! symbol, program or instruction and near matches), which the next
//! successful call clears. NULL where a pointer is required is
//! `KSYM_ERR_INVALID`, never a crash. Out-parameters are written only on
//! success, except where stated. Option and output structs start with
//! `size_t sz`: declare them with `KSYM_OPTS` (or set `sz` to their
//! `sizeof`). Strings returned are borrowed from their handle and live
//! until it is freed; `*_free(NULL)` does nothing. docs/c-api.md has the
//! rules in full.
//!
//! Rust side: the error codes and the thread-local last error.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};

use ksym::{Call, Error};

// The header defines these itself, parenthesised (cbindgen would write
// `#define KSYM_ERR_INVALID -22`, and `x-KSYM_ERR_INVALID` would read as
// `x--22`); a test checks that the two agree.

/// No such symbol, program, map or file (`-ENOENT`).
/// cbindgen:ignore
pub const KSYM_ERR_NOT_FOUND: c_int = -2;
/// Bad argument: NULL where not allowed, malformed query, unknown flag,
/// non-zero unknown tail of an opts struct (`-EINVAL`).
/// cbindgen:ignore
pub const KSYM_ERR_INVALID: c_int = -22;
/// A name matches several symbols at different addresses (`-ENOTUNIQ`).
/// cbindgen:ignore
pub const KSYM_ERR_AMBIGUOUS: c_int = -76;
/// The kernel hides addresses: all zero (`kernel.kptr_restrict`, missing
/// `CAP_SYSLOG`) (`-EACCES`).
/// cbindgen:ignore
pub const KSYM_ERR_RESTRICTED: c_int = -13;
/// Malformed input data: kallsyms line, ranges file, ELF, BTF (`-EBADMSG`).
/// cbindgen:ignore
pub const KSYM_ERR_FORMAT: c_int = -74;
/// Valid input that libksym does not handle (yet) (`-EOPNOTSUPP`).
/// cbindgen:ignore
pub const KSYM_ERR_UNSUPPORTED: c_int = -95;
/// Allocation failed (`-ENOMEM`).
/// cbindgen:ignore
pub const KSYM_ERR_NOMEM: c_int = -12;
/// A bug inside libksym was caught at the boundary (`-ENOTRECOVERABLE`).
/// cbindgen:ignore
pub const KSYM_ERR_INTERNAL: c_int = -131;

enum Message {
    None,
    Text(CString),
}

struct Last {
    code: c_int,
    message: Message,
}

thread_local! {
    static LAST: RefCell<Last> = const {
        RefCell::new(Last { code: 0, message: Message::None })
    };
}

/// The C function a message tells the caller to call (the core names it
/// as Rust does: `Object::relocate`).
pub(crate) fn c_name(call: Call) -> &'static str {
    match call {
        Call::LookupAll => "ksym_lookup_all",
        Call::Relocate => "ksym_bpf_object_relocate",
        Call::ResolveBtf => "ksym_bpf_object_resolve_btf",
        Call::ResolveKsyms => "ksym_bpf_object_resolve_ksyms",
        Call::SetMapFd => "ksym_bpf_object_set_map_fd",
        Call::SetAttachTarget => "ksym_bpf_program_set_attach_target",
        // A call added to the core without its C name here: its Rust name
        // still tells the caller what to do.
        c => c.rust_name(),
    }
}

/// The message of `e` as C callers read it: the functions it names
/// spelled as C functions.
pub(crate) fn c_message(e: &Error) -> String {
    e.render(c_name)
}

/// Records `e` as this thread's last error and returns its code.
pub(crate) fn record(e: &Error) -> c_int {
    let text = CString::new(c_message(e).replace('\0', "\\0")).unwrap_or_default();
    LAST.with(|l| {
        let mut l = l.borrow_mut();
        l.code = e.code();
        l.message = Message::Text(text);
    });
    e.code()
}

/// A successful call: no last error.
#[inline]
pub(crate) fn clear() {
    LAST.with(|l| {
        let mut l = l.borrow_mut();
        if l.code != 0 {
            l.code = 0;
            l.message = Message::None;
        }
    });
}

/// The code of the last failing call on this thread, 0 if the last call
/// succeeded.
#[no_mangle]
pub extern "C" fn ksym_last_error() -> c_int {
    LAST.with(|l| l.borrow().code)
}

/// A human-readable message for the last error on this thread (with file,
/// line, symbol, program, instruction index, near matches as they apply);
/// "no error" after a successful call. Valid until the next libksym call on
/// this thread (other than ksym_last_error and this function).
#[no_mangle]
pub extern "C" fn ksym_last_error_message() -> *const c_char {
    LAST.with(|l| match &l.borrow().message {
        Message::Text(t) => t.as_ptr(),
        Message::None => c"no error".as_ptr(),
    })
}

/// A static description of an error code (any negative errno works too).
#[no_mangle]
pub extern "C" fn ksym_strerror(err: c_int) -> *const c_char {
    describe(err).as_ptr()
}

/// A static description of a code, as `ksym_strerror` returns it.
fn describe(code: c_int) -> &'static std::ffi::CStr {
    match code {
        0 => c"success",
        KSYM_ERR_NOT_FOUND => c"not found",
        KSYM_ERR_INVALID => c"invalid argument",
        KSYM_ERR_AMBIGUOUS => c"ambiguous name: several symbols at different addresses",
        KSYM_ERR_RESTRICTED => c"kernel addresses are hidden (kptr_restrict / CAP_SYSLOG)",
        KSYM_ERR_FORMAT => c"malformed input data",
        KSYM_ERR_UNSUPPORTED => c"not supported",
        KSYM_ERR_NOMEM => c"out of memory",
        KSYM_ERR_INTERNAL => c"internal error in libksym",
        -1 => c"operation not permitted",
        -4 => c"interrupted system call",
        -5 => c"input/output error",
        -9 => c"bad file descriptor",
        -16 => c"device or resource busy",
        -20 => c"not a directory",
        -21 => c"is a directory",
        -24 => c"too many open files",
        -27 => c"file too large",
        -28 => c"no space left on device",
        -36 => c"file name too long",
        -40 => c"too many levels of symbolic links",
        _ => c"unknown error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn codes_are_the_errno_values() {
        assert_eq!(KSYM_ERR_NOT_FOUND, -libc::ENOENT);
        assert_eq!(KSYM_ERR_INVALID, -libc::EINVAL);
        assert_eq!(KSYM_ERR_AMBIGUOUS, -libc::ENOTUNIQ);
        assert_eq!(KSYM_ERR_RESTRICTED, -libc::EACCES);
        assert_eq!(KSYM_ERR_FORMAT, -libc::EBADMSG);
        assert_eq!(KSYM_ERR_UNSUPPORTED, -libc::EOPNOTSUPP);
        assert_eq!(KSYM_ERR_NOMEM, -libc::ENOMEM);
        assert_eq!(KSYM_ERR_INTERNAL, -libc::ENOTRECOVERABLE);
    }

    /// Each kind of the core's errors is its C code (the constants above,
    /// checked against libc's errno values and the header's macros), and a
    /// code is read back as its kind.
    #[test]
    fn error_kinds_are_the_c_codes() {
        use ksym::ErrorKind as K;
        let pairs = [
            (K::NotFound, KSYM_ERR_NOT_FOUND),
            (K::Invalid, KSYM_ERR_INVALID),
            (K::Ambiguous, KSYM_ERR_AMBIGUOUS),
            (K::Restricted, KSYM_ERR_RESTRICTED),
            (K::Format, KSYM_ERR_FORMAT),
            (K::Unsupported, KSYM_ERR_UNSUPPORTED),
            (K::NoMem, KSYM_ERR_NOMEM),
            (K::Internal, KSYM_ERR_INTERNAL),
            (K::Os(libc::EPERM), -libc::EPERM),
            (K::Os(libc::EBUSY), -libc::EBUSY),
        ];
        for (kind, code) in pairs {
            assert_eq!(kind.code(), code, "{kind:?}");
            assert_eq!(K::from_code(code), kind, "{code}");
            assert_eq!(Error::with_kind(kind, "x").code(), code);
        }
    }

    /// The C message names C functions, byte for byte where the Rust one
    /// names Rust's: the core's real error for an object relocated before
    /// its maps have fds.
    #[test]
    fn c_messages_name_c_functions() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../c-tests/bpf/aliases.bpf.o");
        let mut o = ksym::bpf::Object::open(std::path::Path::new(path)).unwrap();
        let e = o.relocate().unwrap_err();
        let rust = e.message();
        assert!(
            rust.contains("create it and call Object::set_map_fd"),
            "{rust}"
        );
        assert!(!rust.contains("ksym_"), "{rust}");
        record(&e);
        // SAFETY: ksym_last_error_message returns a valid C string.
        let c = unsafe { CStr::from_ptr(ksym_last_error_message()) };
        assert_eq!(
            c.to_str().unwrap(),
            rust.replace("Object::set_map_fd", "ksym_bpf_object_set_map_fd")
        );
        assert_eq!(e.calls().collect::<Vec<_>>(), [Call::SetMapFd]);
        // Context in front keeps the call where it is.
        let e = e.context("loading");
        record(&e);
        // SAFETY: as above.
        let c = unsafe { CStr::from_ptr(ksym_last_error_message()) };
        let c = c.to_str().unwrap();
        assert!(c.starts_with("loading: program `"), "{c}");
        assert!(
            c.ends_with("create it and call ksym_bpf_object_set_map_fd"),
            "{c}"
        );
    }

    #[test]
    fn header_defines_the_same_values() {
        let h = include_str!("../../../include/ksym.h");
        for (name, v) in [
            ("KSYM_ERR_NOT_FOUND", KSYM_ERR_NOT_FOUND),
            ("KSYM_ERR_INVALID", KSYM_ERR_INVALID),
            ("KSYM_ERR_AMBIGUOUS", KSYM_ERR_AMBIGUOUS),
            ("KSYM_ERR_RESTRICTED", KSYM_ERR_RESTRICTED),
            ("KSYM_ERR_FORMAT", KSYM_ERR_FORMAT),
            ("KSYM_ERR_UNSUPPORTED", KSYM_ERR_UNSUPPORTED),
            ("KSYM_ERR_NOMEM", KSYM_ERR_NOMEM),
            ("KSYM_ERR_INTERNAL", KSYM_ERR_INTERNAL),
        ] {
            let line = format!("#define {name} ({v})");
            assert!(
                h.lines()
                    .any(|l| l.split("/*").next().unwrap().trim_end() == line),
                "{line} not in include/ksym.h"
            );
        }
    }

    #[test]
    fn strerror_is_static_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for code in [0, -2, -22, -76, -13, -74, -95, -12, -131] {
            let s = unsafe { CStr::from_ptr(ksym_strerror(code)) };
            assert!(seen.insert(s.to_str().unwrap().to_string()), "{code}");
        }
        let s = unsafe { CStr::from_ptr(ksym_strerror(-12345)) };
        assert_eq!(s.to_str().unwrap(), "unknown error");
    }

    #[test]
    fn last_error_is_per_thread() {
        record(&Error::invalid("here"));
        let other = std::thread::spawn(|| ksym_last_error()).join().unwrap();
        assert_eq!(other, 0);
        assert_eq!(ksym_last_error(), KSYM_ERR_INVALID);
        let m = unsafe { CStr::from_ptr(ksym_last_error_message()) };
        assert_eq!(m.to_str().unwrap(), "here");
        clear();
        let m = unsafe { CStr::from_ptr(ksym_last_error_message()) };
        assert_eq!(m.to_str().unwrap(), "no error");
    }
}
