//! Byte-class masks of 64-byte blocks: the one place with CPU intrinsics.
//!
//! A streaming pass over kallsyms looks at every line but parses few: it
//! needs where each line ends and whether the line has any delimiter
//! (byte up to 0x20) besides the usual ones. Finding them one byte or one
//! word at a time costs a data-dependent loop per line; masks of a whole
//! block cost a few vector instructions, and walking their set bits is
//! cheap.
//!
//! [`Masks`] is implemented by [`Baseline`] (SSE2 on x86_64, which every
//! x86_64 CPU has; eight bytes at a time elsewhere) and, on x86_64, by
//! [`Avx2`], which exists only once the CPU is known to have AVX2 and the
//! bit-counting instructions. Code generic over `Masks` is compiled once per
//! implementation; callers instantiate it for `Avx2` inside a function
//! compiled with `#[target_feature(enable = "avx2,popcnt,bmi1,lzcnt")]`,
//! so that their own bit counting uses these instructions too.

/// How a walk finds the delimiters and newlines of a 64-byte block.
pub trait Masks: Copy {
    /// Bit `i` of the first mask is set when `block[i] <= 0x20` (a space,
    /// a tab, a newline, any other control byte or NUL; bytes from 0x80
    /// are never set), bit `i` of the second when `block[i]` is a newline.
    fn delimiters(self, block: &[u8; 64]) -> (u64, u64);
}

/// The masks every CPU of the architecture can compute.
#[derive(Clone, Copy, Debug)]
pub struct Baseline;

impl Masks for Baseline {
    #[inline(always)]
    fn delimiters(self, block: &[u8; 64]) -> (u64, u64) {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU
            // has it, so calling a function that requires it is sound.
            unsafe { sse2::delimiters(block) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            portable(block)
        }
    }
}

/// Proof that this CPU has AVX2, POPCNT, BMI1 and LZCNT: only
/// [`Avx2::detect`] makes one.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// `Some` when the CPU has the features (checked once, then cached by
    /// the standard library).
    #[inline]
    pub fn detect() -> Option<Avx2> {
        let has = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("lzcnt");
        has.then_some(Avx2(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Masks for Avx2 {
    #[inline(always)]
    fn delimiters(self, block: &[u8; 64]) -> (u64, u64) {
        // SAFETY: an `Avx2` exists only where `detect` found AVX2.
        unsafe { avx2::delimiters(block) }
    }
}

/// Asks the CPU to bring `x` into the cache (a hint: no effect elsewhere).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults and changes no memory; the
        // address is a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// [`prefetch`] of every cache line `v` touches: for loops that know
/// several places they will read (a stack's addresses), so that their
/// misses overlap instead of following one another.
#[inline(always)]
pub fn prefetch_all<T: super::mapped::Plain>(v: &[T]) {
    let bytes = super::mapped::bytes_of(v);
    let mut off = 0;
    while let Some(b) = bytes.get(off) {
        prefetch(b);
        off += 64 - (b as *const u8 as usize) % 64;
    }
}

/// `b` without its NUL bytes, as a C string, in one allocation of the size
/// it needs (names of programs, maps and sections: thousands per object).
pub fn c_string(b: &[u8]) -> std::ffi::CString {
    let mut v = Vec::with_capacity(b.len() + 1);
    // Names are short: a plain loop beats a vector search's set-up.
    if b.contains(&0) {
        v.extend(b.iter().copied().filter(|&c| c != 0));
    } else {
        v.extend_from_slice(b);
    }
    v.push(0);
    // SAFETY: `v` ends with the NUL just pushed and holds no other: the
    // bytes before it are `b`'s without its NULs.
    unsafe { std::ffi::CString::from_vec_with_nul_unchecked(v) }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_set1_epi8,
    };

    #[target_feature(enable = "sse2")]
    #[inline]
    pub fn delimiters(block: &[u8; 64]) -> (u64, u64) {
        let limit = _mm_set1_epi8(0x20);
        let newline = _mm_set1_epi8(b'\n' as i8);
        let (mut delims, mut newlines) = (0u64, 0u64);
        for (k, part) in block.chunks_exact(16).enumerate() {
            // SAFETY: `part` is 16 readable bytes; the load is unaligned.
            let v = unsafe { _mm_loadu_si128(part.as_ptr().cast::<__m128i>()) };
            // b <= 0x20 exactly when max(b, 0x20) == 0x20 (unsigned).
            let le = _mm_cmpeq_epi8(_mm_max_epu8(v, limit), limit);
            delims |= u64::from(_mm_movemask_epi8(le) as u16) << (16 * k);
            let nl = _mm_cmpeq_epi8(v, newline);
            newlines |= u64::from(_mm_movemask_epi8(nl) as u16) << (16 * k);
        }
        (delims, newlines)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_set1_epi8,
    };

    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn delimiters(block: &[u8; 64]) -> (u64, u64) {
        let limit = _mm256_set1_epi8(0x20);
        let newline = _mm256_set1_epi8(b'\n' as i8);
        let (mut delims, mut newlines) = (0u64, 0u64);
        for (k, part) in block.chunks_exact(32).enumerate() {
            // SAFETY: `part` is 32 readable bytes; the load is unaligned.
            let v = unsafe { _mm256_loadu_si256(part.as_ptr().cast::<__m256i>()) };
            let le = _mm256_cmpeq_epi8(_mm256_max_epu8(v, limit), limit);
            delims |= u64::from(_mm256_movemask_epi8(le) as u32) << (32 * k);
            let nl = _mm256_cmpeq_epi8(v, newline);
            newlines |= u64::from(_mm256_movemask_epi8(nl) as u32) << (32 * k);
        }
        (delims, newlines)
    }
}

/// [`Masks::delimiters`] eight bytes at a time, for other architectures
/// (and to check the vector versions against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn portable(block: &[u8; 64]) -> (u64, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `w` that is below `limit` (<= 0x80):
    // its low seven bits plus 0x80 - limit do not reach 0x80 (no carry
    // crosses bytes: 0x7f + 0x7f < 0x100), and its own high bit is clear.
    let below = |w: u64, limit: u64| !(((w & !HIGHS) + ONES * (0x80 - limit)) | w) & HIGHS;
    // Gather the eight high bits into one byte.
    let gather = |flags: u64| ((flags >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
    let (mut delims, mut newlines) = (0u64, 0u64);
    for (k, chunk) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().unwrap());
        delims |= gather(below(w, 0x21)) << (8 * k);
        // A newline is the byte that xors with 0x0a to zero.
        newlines |= gather(below(w ^ (ONES * 0x0a), 0x01)) << (8 * k);
    }
    (delims, newlines)
}

/// Is every value of `v` greater than the one before it? Without a branch
/// per value (a branch per 64), so that it vectorizes: a snapshot's arrays
/// hold some 100k values, checked at every open. Each value is compared
/// with its neighbour loaded from one further on (no shuffle), as `i32`
/// when the first and last values are below 2^31: SSE2 has no unsigned
/// compare, and then the signed answer is the unsigned one (a strictly
/// rising run of i32 from a non-negative start stays non-negative; an
/// unsigned rising run that ends below 2^31 lies below it).
pub fn strictly_rising(v: &[u32]) -> bool {
    let (Some(&first), Some(&last)) = (v.first(), v.last()) else {
        return true;
    };
    if first <= i32::MAX as u32 && last <= i32::MAX as u32 {
        rising_by(v, |a, b| (b as i32) <= (a as i32))
    } else {
        rising_by(v, |a, b| b <= a)
    }
}

fn rising_by(v: &[u32], not_rising: impl Fn(u32, u32) -> bool) -> bool {
    let (lo, hi) = (&v[..v.len() - 1], &v[1..]);
    lo.chunks(64).zip(hi.chunks(64)).all(|(a, b)| {
        !a.iter()
            .zip(b)
            .fold(false, |bad, (&x, &y)| bad | not_rising(x, y))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_strings_drop_nuls() {
        assert_eq!(c_string(b"vfs_read").as_bytes(), b"vfs_read");
        assert_eq!(c_string(b"a\0b\0").as_bytes(), b"ab");
        assert_eq!(c_string(b"").as_bytes(), b"");
        let long = vec![b'x'; 300];
        assert_eq!(c_string(&long).as_bytes(), &long[..]);
    }

    #[test]
    fn strictly_rising_agrees_with_windows() {
        let mut v: Vec<u32> = (0..300).map(|i| 10 + i * 3).collect();
        assert!(strictly_rising(&v) && strictly_rising(&[]) && strictly_rising(&[7]));
        for at in [1, 63, 64, 65, 128, 299] {
            for bad in [v[at - 1], v[at - 1] - 1] {
                let mut w = v.clone();
                w[at] = bad;
                assert_eq!(
                    strictly_rising(&w),
                    w.windows(2).all(|p| p[0] < p[1]),
                    "{at}"
                );
                assert!(!strictly_rising(&w), "{at}");
            }
        }
        v.reverse();
        assert!(!strictly_rising(&v));
        // Across 2^31, where i32 and u32 disagree: each answer is the
        // definition's.
        let big = 1u32 << 31;
        for w in [
            vec![5, big + 1, 7],
            vec![5, big - 1, big, big + 1],
            vec![big - 2, big - 1],
            vec![big + 1, 3, 4],
            vec![1, u32::MAX, 2],
            vec![0, 1, big + 5, big + 4, 9],
        ] {
            assert_eq!(
                strictly_rising(&w),
                w.windows(2).all(|p| p[0] < p[1]),
                "{w:?}"
            );
        }
    }

    #[test]
    fn masks_agree_with_the_definition() {
        let mut block = [0u8; 64];
        for first in 0..=255u8 {
            for (i, b) in block.iter_mut().enumerate() {
                *b = first.wrapping_add((i as u8).wrapping_mul(37));
            }
            let mask = |f: fn(u8) -> bool| {
                block
                    .iter()
                    .enumerate()
                    .fold(0u64, |m, (i, &b)| m | (u64::from(f(b)) << i))
            };
            let want = (mask(|b| b <= 0x20), mask(|b| b == b'\n'));
            assert_eq!(Baseline.delimiters(&block), want, "{first}");
            assert_eq!(portable(&block), want, "{first}");
            #[cfg(target_arch = "x86_64")]
            if let Some(avx2) = Avx2::detect() {
                assert_eq!(avx2.delimiters(&block), want, "{first}");
            }
        }
    }
}
