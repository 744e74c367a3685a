//! [`CName`]: a borrowed byte string known to end with a NUL byte.

use std::borrow::Cow;
use std::ffi::CStr;
use std::fmt;

/// A name handed out by the table: its bytes followed by a NUL, borrowed from
/// the table. Made in O(1) (no scan): the parsers reject NUL inside names, so
/// the only NUL is the last byte, and C callers can use it as a C string.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CName<'a>(&'a [u8]);

impl<'a> CName<'a> {
    /// `with_nul` must end with a NUL byte; `None` otherwise.
    #[inline]
    pub fn new(with_nul: &'a [u8]) -> Option<CName<'a>> {
        (with_nul.last() == Some(&0)).then_some(CName(with_nul))
    }

    /// A name whose owner guarantees the NUL at its end (the table's, whose
    /// parser wrote it and whose snapshot is checked before use): made
    /// without reading the name, whose cache line may be far. A slice
    /// without it still makes a `CName` (no memory is read past it in
    /// Rust), but C callers would read past its end: never pass one.
    #[inline]
    pub(crate) fn trusted(with_nul: &'a [u8]) -> CName<'a> {
        debug_assert_eq!(with_nul.last(), Some(&0));
        CName(with_nul)
    }

    /// A name borrowed from a C string.
    #[inline]
    pub fn from_cstr(c: &'a CStr) -> CName<'a> {
        CName(c.to_bytes_with_nul())
    }

    /// The bytes without the NUL.
    #[inline]
    pub fn to_bytes(self) -> &'a [u8] {
        &self.0[..self.0.len() - 1]
    }

    /// The bytes with the NUL (what a C caller receives).
    #[inline]
    pub fn with_nul(self) -> &'a [u8] {
        self.0
    }

    /// The name as UTF-8 (invalid bytes replaced).
    pub fn to_string_lossy(self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.to_bytes())
    }
}

impl fmt::Debug for CName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

impl fmt::Display for CName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

/// Bytes shown as text (invalid UTF-8 replaced), converted only when
/// formatted: for names that appear in error messages and nowhere else,
/// so that the paths that succeed never convert them.
#[derive(Clone, Copy)]
pub struct Lossy<'a>(pub &'a [u8]);

impl fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.0))
    }
}

impl PartialEq<[u8]> for CName<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        self.to_bytes() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cname() {
        assert!(CName::new(b"abc").is_none());
        assert!(CName::new(b"").is_none());
        let c = CName::new(b"abc\0").unwrap();
        assert_eq!(c.to_bytes(), b"abc");
        assert_eq!(c.with_nul(), b"abc\0");
        assert_eq!(format!("{c}"), "abc");
        assert_eq!(CName::from_cstr(c"x").to_bytes(), b"x");
    }
}
