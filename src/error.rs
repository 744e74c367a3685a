//! The error type of the core: a kind, an errno-style code and a message
//! with context.
//!
//! Each [`ErrorKind`] has a code, the C contract's `KSYM_ERR_*` value (a
//! negative errno number); I/O failures carry the negative `errno` of the
//! failing system call ([`ErrorKind::Os`]). A message that tells the caller
//! which function to call records where it names it ([`Call`]), so that
//! each face of the library spells it its own way: Rust's
//! (`Object::relocate`) in [`Error::message`], the C crate's
//! (`ksym_bpf_object_relocate`) through [`Error::render`]. The core names
//! no C function.

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

/// What kind of failure an [`Error`] is: one per C error code.
///
/// ```
/// use ksym::{ErrorKind, Table, TableOptions};
///
/// let Err(e) = Table::open(&TableOptions {
///     kallsyms_path: Some("/nonexistent/kallsyms".into()),
///     ..Default::default()
/// }) else {
///     panic!("a missing file opens");
/// };
/// assert_eq!(e.kind(), ErrorKind::NotFound);
/// assert_eq!(e.kind().code(), -2); // KSYM_ERR_NOT_FOUND, -ENOENT
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No such symbol, program, map or file (`KSYM_ERR_NOT_FOUND`).
    NotFound,
    /// A bad argument: a malformed query, an unknown flag, a call out of
    /// order (`KSYM_ERR_INVALID`).
    Invalid,
    /// A name matches symbols at different addresses (`KSYM_ERR_AMBIGUOUS`).
    Ambiguous,
    /// The kernel hides addresses: `kptr_restrict`, no `CAP_SYSLOG`
    /// (`KSYM_ERR_RESTRICTED`).
    Restricted,
    /// Malformed input: a kallsyms line, a ranges file, ELF, BTF
    /// (`KSYM_ERR_FORMAT`).
    Format,
    /// Valid input libksym does not handle (yet) (`KSYM_ERR_UNSUPPORTED`).
    Unsupported,
    /// An allocation failed (`KSYM_ERR_NOMEM`).
    NoMem,
    /// A bug inside libksym (`KSYM_ERR_INTERNAL`).
    Internal,
    /// Another failure of a system call: its (positive) `errno`.
    Os(i32),
}

impl ErrorKind {
    /// The C contract's code: a `KSYM_ERR_*` value, or `-errno` for
    /// [`ErrorKind::Os`].
    pub fn code(self) -> i32 {
        match self {
            ErrorKind::NotFound => NOT_FOUND,
            ErrorKind::Invalid => INVALID,
            ErrorKind::Ambiguous => AMBIGUOUS,
            ErrorKind::Restricted => RESTRICTED,
            ErrorKind::Format => FORMAT,
            ErrorKind::Unsupported => UNSUPPORTED,
            ErrorKind::NoMem => NOMEM,
            ErrorKind::Internal => INTERNAL,
            ErrorKind::Os(errno) => -errno,
        }
    }

    /// The kind of a code ([`ErrorKind::code`]'s inverse; any other
    /// negative value is an [`ErrorKind::Os`] errno).
    pub fn from_code(code: i32) -> ErrorKind {
        match code {
            NOT_FOUND => ErrorKind::NotFound,
            INVALID => ErrorKind::Invalid,
            AMBIGUOUS => ErrorKind::Ambiguous,
            RESTRICTED => ErrorKind::Restricted,
            FORMAT => ErrorKind::Format,
            UNSUPPORTED => ErrorKind::Unsupported,
            NOMEM => ErrorKind::NoMem,
            INTERNAL => ErrorKind::Internal,
            c => ErrorKind::Os(c.saturating_neg()),
        }
    }
}

/// A function of the API that an error message tells the caller to call
/// (first, or instead). [`Error::message`] spells it as Rust does
/// ([`Call::rust_name`]); another face renders its own spelling with
/// [`Error::render`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Call {
    /// `Table::lookup_all`: every symbol of an ambiguous name.
    LookupAll,
    /// `Object::relocate`.
    Relocate,
    /// `Object::resolve_btf`.
    ResolveBtf,
    /// `Object::resolve_ksyms`.
    ResolveKsyms,
    /// `Object::set_map_fd`.
    SetMapFd,
    /// `Object::set_attach_target`.
    SetAttachTarget,
}

impl Call {
    /// The Rust spelling, as [`Error::message`] shows it.
    pub fn rust_name(self) -> &'static str {
        match self {
            Call::LookupAll => "Table::lookup_all",
            Call::Relocate => "Object::relocate",
            Call::ResolveBtf => "Object::resolve_btf",
            Call::ResolveKsyms => "Object::resolve_ksyms",
            Call::SetMapFd => "Object::set_map_fd",
            Call::SetAttachTarget => "Object::set_attach_target",
        }
    }
}

/// A failure: its kind (and code) plus a message a user can act on.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    code: i32,
    message: String,
    /// Where the message names a [`Call`] (byte offset of its Rust name),
    /// in ascending order.
    calls: Vec<(usize, Call)>,
}

/// Result with the core's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with an explicit code (one of the constants of this module or
    /// a negative errno).
    pub(crate) fn new(code: i32, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            calls: Vec::new(),
        }
    }

    /// An error of a kind, with a message.
    pub fn with_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self::new(kind.code(), message)
    }

    /// A [`ErrorKind::NotFound`] error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(NOT_FOUND, message)
    }

    /// An [`ErrorKind::Invalid`] error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(INVALID, message)
    }

    /// An [`ErrorKind::Format`] error.
    pub fn format(message: impl Into<String>) -> Self {
        Self::new(FORMAT, message)
    }

    /// An [`ErrorKind::Unsupported`] error.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(UNSUPPORTED, message)
    }

    pub(crate) fn nomem(what: &str) -> Self {
        Self::new(NOMEM, format!("out of memory while {what}"))
    }

    /// An I/O error: the code is the negative errno (or `KSYM_ERR_INTERNAL`
    /// when the error has none), the message names what was being done.
    pub(crate) fn io(err: &std::io::Error, what: impl fmt::Display) -> Self {
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

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from_code(self.code)
    }

    /// The errno-style code (negative): `self.kind().code()`.
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The human-readable message (functions to call named as in Rust).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message with each [`Call`] it names spelled by `name` (the C
    /// crate's function names, say).
    pub fn render(&self, name: impl Fn(Call) -> &'static str) -> String {
        let mut out = String::with_capacity(self.message.len());
        let mut at = 0;
        for &(pos, call) in &self.calls {
            out.push_str(&self.message[at..pos]);
            out.push_str(name(call));
            at = pos + call.rust_name().len();
        }
        out.push_str(&self.message[at..]);
        out
    }

    /// The calls the message names, in order.
    pub fn calls(&self) -> impl Iterator<Item = Call> + '_ {
        self.calls.iter().map(|&(_, c)| c)
    }

    /// Appends `call`'s name, then `rest`, to the message.
    pub(crate) fn then_call(mut self, call: Call, rest: &str) -> Self {
        self.calls.push((self.message.len(), call));
        self.message.push_str(call.rust_name());
        self.message.push_str(rest);
        self
    }

    /// The same error with `context: ` in front of its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        let old = std::mem::take(&mut self.message);
        self.message = format!("{context}: {old}");
        let shift = self.message.len() - old.len();
        for (pos, _) in &mut self.calls {
            *pos += shift;
        }
        self
    }

    /// The same error with `call` and then `rest: ` in front of its
    /// message (`Object::resolve_btf failed: ...`).
    pub(crate) fn context_call(self, call: Call, rest: &str) -> Self {
        let mut e = self.context(format!("{}{rest}", call.rust_name()));
        e.calls.insert(0, (0, call));
        e
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({:?}, {:?})", self.kind(), self.message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
