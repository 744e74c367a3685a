//! Byte-class masks of 64-byte blocks: the one place with CPU intrinsics.
//!
//! A streaming pass over kallsyms looks at every line but parses few: it
//! needs the delimiters of each line (two spaces, then the newline or the
//! tab before a module column). Finding them one byte or one word at a time
//! costs a data-dependent loop per name; a mask of a whole block costs a few
//! vector instructions, and walking its set bits is cheap.

/// Bit `i` is set when `block[i] <= 0x20`: a space, a tab, a newline, any
/// other control byte or NUL (bytes from 0x80 are never set).
#[inline(always)]
pub fn space_or_control(block: &[u8; 64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU
        // has it, so calling a function that requires it is sound.
        unsafe { sse2::space_or_control(block) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        portable(block)
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_max_epu8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x,
    };

    #[target_feature(enable = "sse2")]
    #[inline]
    pub fn space_or_control(block: &[u8; 64]) -> u64 {
        let limit = _mm_set1_epi8(0x20);
        let word = |i: usize| {
            i64::from_le_bytes([
                block[i],
                block[i + 1],
                block[i + 2],
                block[i + 3],
                block[i + 4],
                block[i + 5],
                block[i + 6],
                block[i + 7],
            ])
        };
        let mut mask = 0u64;
        for k in 0..4 {
            let v = _mm_set_epi64x(word(16 * k + 8), word(16 * k));
            // b <= 0x20 exactly when max(b, 0x20) == 0x20 (unsigned).
            let le = _mm_cmpeq_epi8(_mm_max_epu8(v, limit), limit);
            mask |= u64::from(_mm_movemask_epi8(le) as u16) << (16 * k);
        }
        mask
    }
}

/// [`space_or_control`] eight bytes at a time, for other architectures (and
/// to check the vector version against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn portable(block: &[u8; 64]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut mask = 0u64;
    for (k, chunk) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().unwrap());
        // High bit of each byte: its low seven bits are >= 0x21 (no carry
        // crosses bytes: 0x7f + 0x5f < 0x100), or the byte is >= 0x80.
        let above = ((w & !HIGHS) + ONES * (0x80 - 0x21)) | w;
        let flags = !above & HIGHS;
        // Gather the eight high bits into one byte.
        let byte = ((flags >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
        mask |= byte << (8 * k);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_agree_with_the_definition() {
        let mut block = [0u8; 64];
        for first in 0..=255u8 {
            for (i, b) in block.iter_mut().enumerate() {
                *b = first.wrapping_add((i as u8).wrapping_mul(37));
            }
            let want = block
                .iter()
                .enumerate()
                .fold(0u64, |m, (i, &b)| m | (u64::from(b <= 0x20) << i));
            assert_eq!(space_or_control(&block), want, "{first}");
            assert_eq!(portable(&block), want, "{first}");
        }
    }
}
