//! The error type of the core: an errno-style code and a message with context.
//!
//! The codes are the contract's `KSYM_ERR_*` values (negative errno numbers);
//! I/O failures carry the negative `errno` of the failing system call. The
//! ffi layer copies the code and message into the thread-local last error.

use std::fmt;

/// `KSYM_ERR_NOT_FOUND`: no such symbol, program, map or file.
pub const NOT_FOUND: i32 = -libc::ENOENT;
/// `KSYM_ERR_INVALID`: bad argument.
pub const INVALID: i32 = -libc::EINVAL;
/// `KSYM_ERR_AMBIGUOUS`: a name matches several symbols at different addresses.
pub const AMBIGUOUS: i32 = -libc::ENOTUNIQ;
/// `KSYM_ERR_RESTRICTED`: the kernel hides addresses.
pub const RESTRICTED: i32 = -libc::EACCES;
/// `KSYM_ERR_FORMAT`: malformed input data.
pub const FORMAT: i32 = -libc::EBADMSG;
/// `KSYM_ERR_UNSUPPORTED`: valid input that libksym does not handle (yet).
pub const UNSUPPORTED: i32 = -libc::EOPNOTSUPP;
/// `KSYM_ERR_NOMEM`: allocation failed.
pub const NOMEM: i32 = -libc::ENOMEM;
/// `KSYM_ERR_INTERNAL`: a bug inside libksym was caught at the boundary.
pub const INTERNAL: i32 = -libc::ENOTRECOVERABLE;

/// A failure: the contract's code plus a message a user can act on.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    code: i32,
    message: String,
}

/// Result with the core's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with an explicit code (one of the constants of this module or
    /// a negative errno).
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(NOT_FOUND, message)
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(INVALID, message)
    }

    pub fn format(message: impl Into<String>) -> Self {
        Self::new(FORMAT, message)
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(UNSUPPORTED, message)
    }

    pub fn nomem(what: &str) -> Self {
        Self::new(NOMEM, format!("out of memory while {what}"))
    }

    /// An I/O error: the code is the negative errno (or `KSYM_ERR_INTERNAL`
    /// when the error has none), the message names what was being done.
    pub fn io(err: &std::io::Error, what: impl fmt::Display) -> Self {
        let code = match err.raw_os_error() {
            Some(errno) if errno > 0 => -errno,
            _ => match err.kind() {
                std::io::ErrorKind::NotFound => NOT_FOUND,
                std::io::ErrorKind::OutOfMemory => NOMEM,
                std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof => FORMAT,
                _ => INTERNAL,
            },
        };
        Self::new(code, format!("{what}: {err}"))
    }

    /// The errno-style code (negative).
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `context: ` in front of its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({}, {:?})", code_name(self.code), self.message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The constant's name for a code (for debugging output).
pub fn code_name(code: i32) -> &'static str {
    match code {
        0 => "OK",
        NOT_FOUND => "KSYM_ERR_NOT_FOUND",
        INVALID => "KSYM_ERR_INVALID",
        AMBIGUOUS => "KSYM_ERR_AMBIGUOUS",
        RESTRICTED => "KSYM_ERR_RESTRICTED",
        FORMAT => "KSYM_ERR_FORMAT",
        UNSUPPORTED => "KSYM_ERR_UNSUPPORTED",
        NOMEM => "KSYM_ERR_NOMEM",
        INTERNAL => "KSYM_ERR_INTERNAL",
        _ => "errno",
    }
}

/// A static description of a code, as `ksym_strerror` returns it.
pub fn describe(code: i32) -> &'static std::ffi::CStr {
    match code {
        0 => c"success",
        NOT_FOUND => c"not found",
        INVALID => c"invalid argument",
        AMBIGUOUS => c"ambiguous name: several symbols at different addresses",
        RESTRICTED => c"kernel addresses are hidden (kptr_restrict / CAP_SYSLOG)",
        FORMAT => c"malformed input data",
        UNSUPPORTED => c"not supported",
        NOMEM => c"out of memory",
        INTERNAL => c"internal error in libksym",
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
