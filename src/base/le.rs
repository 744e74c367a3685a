//! Little-endian integers read from byte buffers: the one reader of the
//! formats libksym parses (BTF) and the files it writes (snapshots).
//!
//! Two kinds: `u16`, `u32`, `u64` read bytes already known to be there
//! (a bounds check made once, before a walk) and panic past the end;
//! `get_u16`, `get_u32`, `get_u64` read bytes not yet checked and give
//! `None` past the end.

/// The `u16` at `at`; panics past the end.
#[inline]
pub fn u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The `u32` at `at`; panics past the end.
#[inline]
pub fn u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The `u64` at `at`; panics past the end.
#[inline]
pub fn u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes([
        b[at],
        b[at + 1],
        b[at + 2],
        b[at + 3],
        b[at + 4],
        b[at + 5],
        b[at + 6],
        b[at + 7],
    ])
}

/// The `u16` at `at`, or `None` past the end.
#[inline]
pub fn get_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

/// The `u32` at `at`, or `None` past the end.
#[inline]
pub fn get_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// The `u64` at `at`, or `None` past the end.
#[inline]
pub fn get_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// Reads bytes from the front: little-endian `u64`s, runs of bytes, and
/// strings with their length (a `u64`) in front, as the snapshots' keys
/// and meta hold them. `None` past the end.
pub struct Cursor<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Cursor<'b> {
    pub fn new(bytes: &'b [u8]) -> Cursor<'b> {
        Cursor { bytes, at: 0 }
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'b [u8]> {
        let v = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(v)
    }

    /// The next `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        let v = get_u64(self.bytes, self.at)?;
        self.at += 8;
        Some(v)
    }

    /// The next string: its length, then its bytes.
    pub fn string(&mut self) -> Option<&'b [u8]> {
        let n = self.u64()? as usize;
        self.bytes(n)
    }

    /// Every byte was read.
    pub fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_and_stops_at_the_end() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(u16(&b, 1), 0x0302);
        assert_eq!(u32(&b, 0), 0x0403_0201);
        assert_eq!(u64(&b, 1), 0x0908_0706_0504_0302);
        assert_eq!(get_u16(&b, 7), Some(0x0908));
        assert_eq!(get_u16(&b, 8), None);
        assert_eq!(get_u32(&b, 5), Some(0x0908_0706));
        assert_eq!(get_u32(&b, 6), None);
        assert_eq!(get_u64(&b, 1), Some(0x0908_0706_0504_0302));
        assert_eq!(get_u64(&b, 2), None);
        assert_eq!(get_u64(&b, usize::MAX), None);
    }

    #[test]
    fn a_cursor_reads_from_the_front_and_stops_at_the_end() {
        let mut b = 7u64.to_le_bytes().to_vec();
        b.extend_from_slice(&2u64.to_le_bytes());
        b.extend_from_slice(b"hi!");
        let mut r = Cursor::new(&b);
        assert_eq!(r.u64(), Some(7));
        assert_eq!(r.string(), Some(&b"hi"[..]));
        assert!(!r.at_end());
        assert_eq!(r.u64(), None);
        assert_eq!(r.bytes(2), None);
        assert_eq!(r.bytes(1), Some(&b"!"[..]));
        assert!(r.at_end());
    }
}
