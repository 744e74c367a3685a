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
}
