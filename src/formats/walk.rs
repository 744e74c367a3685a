//! Walking the lines of kallsyms text without parsing them: where each line
//! starts and where its name is, so that a streaming pass parses only the
//! few lines whose name it may want.
//!
//! Two walks: [`walk_lines`] checks every line's delimiters and works on
//! any text; [`walk_kallsyms64`] assumes the shape of 64-bit /proc/kallsyms
//! (`ADDR T NAME[\t[mod]]`, 16-digit addresses) and proves it afterwards by
//! counting the delimiters of the whole text: several times faster, and
//! when the proof fails the caller walks the text again with
//! [`walk_lines`].

use super::kallsyms::Format;
use crate::base::bytes::Masks;

/// A line found by [`walk_lines`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineSpan {
    /// Where the line starts, and where the next one does.
    pub start: usize,
    pub next: usize,
    /// Offset and length of the name and whether a module column follows
    /// it; `None` when the line does not have the usual shape.
    pub name: Option<(usize, usize, bool)>,
}

/// Calls `f` with each line of `text` (which ends with a newline) and its
/// name, found without parsing the rest of the line: for streaming passes
/// that want a few names and parse (with [`parse_at`]) only the lines whose
/// name may be one of them. Stops when `f` returns `Ok(false)` (and returns
/// that) or an error.
///
/// The text is looked at 64 bytes at a time: a mask of its delimiters
/// (bytes up to 0x20) and one of its newlines. A line ends at a newline;
/// the delimiters inside it, read from the masks of its block and the one
/// before as one number, must be exactly the usual ones (the spaces after
/// the address, the size in kallmodsyms and the type letter, and the tab
/// before a module column). Lines of another shape (a module column with
/// spaces, a line over two blocks, anything malformed) are given with no
/// name: the caller parses them with [`parse_at`], which says what is
/// wrong.
#[inline(always)]
pub fn walk_lines<E>(
    text: &[u8],
    format: Format,
    mut f: impl FnMut(LineSpan) -> Result<bool, E>,
) -> Result<bool, E> {
    let sized = format == Format::Kallmodsyms;
    let mut base = 0usize;
    let m = crate::base::bytes::Baseline;
    let (mut delims, mut newlines) = block_masks(m, text, 0);
    let mut prev = 0u64;
    let mut start = 0usize;
    loop {
        while newlines == 0 {
            base += 64;
            if base >= text.len() {
                return Ok(true);
            }
            prev = delims;
            (delims, newlines) = block_masks(m, text, base);
        }
        let end = base + newlines.trailing_zeros() as usize;
        newlines &= newlines - 1;
        // Bit i of `window`: byte base - 64 + i is a delimiter.
        let window = (u128::from(delims) << 64) | u128::from(prev);
        let name = match (start + 64).checked_sub(base) {
            Some(rel) => line_name(text, start, end, window >> rel, sized),
            None => None,
        };
        let span = LineSpan {
            start,
            next: end + 1,
            name,
        };
        start = end + 1;
        if !f(span)? {
            return Ok(false);
        }
    }
}

/// The name of the line `start..=end` (`end` its newline) whose delimiters
/// are the bits of `delims` (bit i: byte start + i; bits past the line may
/// be set), if the line has the usual shape.
#[inline(always)]
fn line_name(
    t: &[u8],
    start: usize,
    end: usize,
    delims: u128,
    sized: bool,
) -> Option<(usize, usize, bool)> {
    let len = end - start;
    let mut bits = delims & ((1u128 << len) - 1);
    // The field before the type letter (the address, or the size) ends at
    // `a` and starts at `field`.
    let mut a = bits.trailing_zeros() as usize;
    // The kernel prints addresses with 8 or 16 digits: anything shorter is
    // left to parse_at (which says what is wrong with `not a line`).
    if a < 8 {
        return None;
    }
    let mut field = 0;
    if sized {
        if a >= len || t[start + a] != b' ' {
            return None;
        }
        bits &= bits - 1;
        field = a + 1;
        a = bits.trailing_zeros() as usize;
    }
    if a <= field || a >= len {
        return None;
    }
    bits &= bits - 1;
    // The type letter alone, then the space before the name.
    if bits.trailing_zeros() as usize != a + 2 || t[start + a] != b' ' || t[start + a + 2] != b' ' {
        return None;
    }
    bits &= bits - 1;
    let name = a + 3;
    let name_end = match bits {
        0 => len,
        // A module column: one tab and nothing else after the name.
        _ if bits & (bits - 1) == 0 && t[start + bits.trailing_zeros() as usize] == b'\t' => {
            bits.trailing_zeros() as usize
        }
        _ => return None,
    };
    (name_end > name).then_some((start + name, name_end - name, bits != 0))
}

/// The lines of 64-bit /proc/kallsyms, several times faster than
/// [`walk_lines`]: every line of `text` (which ends with a newline) must be
/// `ADDR T NAME` with a 16-digit address, then the newline or a tab and a
/// module column without spaces. Calls `f(start, name, len, module)` for
/// each line: its start, the offset and length of its name, whether it has
/// a module column; `f` returns false to give up.
///
/// The names are where this shape puts them, and the delimiters (bytes up
/// to 0x20) of the whole text are counted 64 bytes at a time: if there are
/// more than the shape has, some line is not what it seemed. Returns the
/// number of lines, or `None` if some line does not have the shape, the
/// count does not match or `f` gave up: then `f` may have been called for
/// lines that are not what they seemed, and the caller must forget what it
/// did and walk the text again with [`walk_lines`].
///
/// `scratch` is working memory, kept by the caller from one text to the next.
#[inline]
pub fn walk_kallsyms64(
    text: &[u8],
    scratch: &mut Vec<u32>,
    f: impl FnMut(usize, usize, usize, bool) -> bool,
) -> Option<usize> {
    scratch.resize(SEGMENT + 4, 0);
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = crate::base::bytes::Avx2::detect() {
        // SAFETY: `detect` found the features `walk_kallsyms64_avx2` is
        // compiled for.
        return unsafe { walk_kallsyms64_avx2(avx2, text, scratch, f) };
    }
    walk_kallsyms64_with(crate::base::bytes::Baseline, text, scratch, f)
}

/// [`walk_kallsyms64_with`] compiled for the CPUs [`Avx2`](crate::base::bytes::Avx2)
/// stands for (its bit counting included).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,bmi1,lzcnt")]
fn walk_kallsyms64_avx2(
    m: crate::base::bytes::Avx2,
    text: &[u8],
    ends: &mut [u32],
    f: impl FnMut(usize, usize, usize, bool) -> bool,
) -> Option<usize> {
    walk_kallsyms64_with(m, text, ends, f)
}

/// Bytes of text [`walk_kallsyms64`] finds the newlines of at once.
const SEGMENT: usize = 1024;

#[inline(always)]
fn walk_kallsyms64_with(
    m: impl Masks,
    text: &[u8],
    ends: &mut [u32],
    mut f: impl FnMut(usize, usize, usize, bool) -> bool,
) -> Option<usize> {
    let t = text;
    let mut count = 0usize;
    let mut expected = 0usize;
    let mut start = 0usize;
    let mut lines = 0usize;
    // The newlines of a segment, found first without a branch per line
    // (`ends` has room for four more, written as scratch).
    let mut seg = 0;
    while seg < t.len() {
        let seg_end = (seg + SEGMENT).min(t.len());
        let mut n = 0;
        for base in (seg..seg_end).step_by(64) {
            let (delims, mut newlines) = block_masks(m, t, base);
            count += delims.count_ones() as usize;
            let found = newlines.count_ones() as usize;
            for end in &mut ends[n..n + 4] {
                *end = (base + newlines.trailing_zeros() as usize) as u32;
                newlines &= newlines.wrapping_sub(1);
            }
            for end in &mut ends[n + 4..n + found.max(4)] {
                *end = (base + newlines.trailing_zeros() as usize) as u32;
                newlines &= newlines - 1;
            }
            n += found;
        }
        seg = seg_end;
        for &end in &ends[..n] {
            let end = end as usize;
            let s = start;
            start = end + 1;
            lines += 1;
            // `ADDR T NAME`: sixteen digits, a space, the type, a space.
            if end < s + 20 || t[s + 16] != b' ' || t[s + 18] != b' ' {
                return None;
            }
            let mut name_end = end;
            if t[end - 1] == b']' {
                if let Some(tab) = memchr::memrchr(b'\t', &t[s + 20..end]) {
                    name_end = s + 20 + tab;
                }
            }
            let module = name_end != end;
            expected += 3 + usize::from(module);
            if !f(s, s + 19, name_end - s - 19, module) {
                return None;
            }
        }
    }
    (count == expected).then_some(lines)
}

/// The masks of `text[base..base + 64]` (a short block padded).
#[inline(always)]
fn block_masks(m: impl Masks, text: &[u8], base: usize) -> (u64, u64) {
    match text.get(base..base + 64) {
        Some(block) => m.delimiters(block.try_into().unwrap()),
        None => {
            let mut block = [b'x'; 64];
            let tail = &text[base.min(text.len())..];
            block[..tail.len()].copy_from_slice(tail);
            m.delimiters(&block)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::kallsyms::parse_at;

    /// Walks `buf` with [`walk_lines`] as a streaming pass does, checking every
    /// name it gives against [`parse_at`]; returns what parse_at said of
    /// the lines the walk left to it.
    fn walk(buf: &[u8], format: Format) -> Vec<Result<usize, &'static str>> {
        let mut left = Vec::new();
        let mut pos = 0;
        let done = walk_lines(buf, format, |span| {
            assert_eq!(span.start, pos);
            let parsed = parse_at(buf, pos, format);
            match span.name {
                Some((start, len, module)) => {
                    let (l, next) = parsed.unwrap();
                    assert_eq!((&buf[start..start + len], next), (l.name, span.next));
                    assert_eq!(module, l.modules.is_some());
                }
                None => {
                    if let Ok((_, next)) = parsed {
                        assert_eq!(next, span.next);
                    }
                    left.push(parsed.map(|_| pos).map_err(|e| e.why));
                }
            }
            pos = span.next;
            Ok::<_, ()>(true)
        });
        assert_eq!((done, pos), (Ok(true), buf.len()));
        left
    }

    /// Lines of shapes neither walk takes (parse_at refuses most).
    const ODD_LINES: &[&[u8]] = &[
        b"ffffffff81000000 T x y\n",
        b"ffffffff81000000 T \n",
        b"ffffffff81000000 TT z\n",
        b" ffffffff81000000 T z\n",
        b"\n",
        b"ffffffff81000000 T ctl\x01name\n",
        b"ffffffff81000000\n",
        b"ffffffff81000000 T z\t[m] [n]\n",
    ];

    type Walker<'a> = dyn Fn(&mut Vec<u32>, &mut dyn FnMut(usize, usize, usize, bool) -> bool) -> Option<usize>
        + 'a;

    /// What [`walk_kallsyms64`] gives for `buf`: each line's (start, name,
    /// module), or `None`; checks that every way of walking (the baseline
    /// masks, AVX2 where the CPU has it) gives the same.
    fn walk_fast(buf: &[u8]) -> Option<Vec<(usize, &[u8], bool)>> {
        let walk = |how: &Walker| {
            let mut got = Vec::new();
            let n = how(&mut Vec::new(), &mut |start, name, len, module| {
                got.push((start, &buf[name..name + len], module));
                true
            });
            if let Some(n) = n {
                assert_eq!(n, got.len());
            }
            n.map(|_| got)
        };
        let dispatched = walk(&|scratch, f| walk_kallsyms64(buf, scratch, f));
        let baseline = walk(&|scratch, f| {
            scratch.resize(SEGMENT + 4, 0);
            walk_kallsyms64_with(crate::base::bytes::Baseline, buf, scratch, f)
        });
        assert_eq!(dispatched, baseline);
        dispatched
    }

    #[test]
    fn usual_lines_are_walked_fast_or_not_at_all() {
        let mut buf =
            b"ffffffff81000000 T a\nffffffffc0000000 t bbbbbbbbbbbbbbbbbbbb\t[m]\n".to_vec();
        for n in 1..200 {
            buf.extend_from_slice(b"ffffffff81000000 t ");
            buf.extend((0..n).map(|i| b'a' + (i % 26) as u8));
            buf.extend_from_slice(if n % 3 == 0 { b"\t[mod]\n" } else { b"\n" });
        }
        let got = walk_fast(&buf).unwrap();
        let mut pos = 0;
        for (start, name, module) in got {
            let (l, next) = parse_at(&buf, pos, Format::Kallsyms).unwrap();
            assert_eq!((start, name, module), (pos, l.name, l.modules.is_some()));
            pos = next;
        }
        assert_eq!(pos, buf.len());
        // Many lines to a block (more than the shape allows): not walked,
        // and no harm done.
        assert!(walk_fast(&[b'\n'; 3000]).is_none());
        // Any other shape, anywhere: not walked.
        let more: &[&[u8]] = &[
            b"ffffffff81000000 T z\t\t[m]\n",
            b"ffffffff81000000 T\tz\n",
            b"ffff\x01fff81000000 T z\n",
            b"c0001000 t c\n",
            b"ffffffff81000000 T \x7fz]\n",
        ];
        for o in ODD_LINES.iter().chain(more) {
            for at in [0, 100, buf.len()] {
                let mut b = buf[..at].to_vec();
                let at = b.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
                b.truncate(at);
                b.extend_from_slice(o);
                b.extend_from_slice(&buf[at..]);
                let fast = walk_fast(&b);
                if o.contains(&0x7f) {
                    // 0x7f is not a delimiter: a name like any other.
                    assert!(fast.is_some());
                } else {
                    assert!(fast.is_none(), "{}", String::from_utf8_lossy(o));
                }
            }
        }
    }

    #[test]
    fn lines_agree_with_parse_at() {
        let mut buf = b"ffffffff81000000 T a\nffffffffc0000000 t bbbbbbbbbbbbbbbbbbbb\t[m]\n\
                        c0001000 t c\nffffffff81000000 T x y\nffffffff81000000 T d\n"
            .to_vec();
        // Lines across the 64-byte blocks, with every name length.
        for n in 1..150 {
            buf.extend_from_slice(b"ffffffff81000000 t ");
            buf.extend((0..n).map(|i| b'a' + (i % 26) as u8));
            buf.extend_from_slice(if n % 3 == 0 { b"\t[mod]\n" } else { b"\n" });
        }
        let left = walk(&buf, Format::Kallsyms);
        // The line with a space in its name is refused; the others left to
        // parse_at are fine (names too long to see in two blocks).
        let refused: Vec<_> = left.iter().filter(|r| r.is_err()).collect();
        assert_eq!(refused, vec![&Err("whitespace in the symbol name")]);
        for &r in &left {
            if let Ok(at) = r {
                let (l, _) = parse_at(&buf, at, Format::Kallsyms).unwrap();
                assert!(l.name.len() > 40, "{}", String::from_utf8_lossy(l.name));
            }
        }
        // Not the usual shape: left to parse_at, which refuses or accepts.
        let more: &[&[u8]] = &[
            b"ffffffff81000000 T\tz\n",
            b"not a line\n",
            b"1234567 t short\n",
        ];
        for o in ODD_LINES.iter().chain(more) {
            let mut b = b"ffffffff81000000 T before\n".to_vec();
            let at = b.len();
            b.extend_from_slice(o);
            b.extend_from_slice(b"ffffffff81000000 T after\n");
            let left = walk(&b, Format::Kallsyms);
            let want = parse_at(&b, at, Format::Kallsyms)
                .map(|_| at)
                .map_err(|e| e.why);
            assert_eq!(left, vec![want], "{}", String::from_utf8_lossy(o));
        }
        let m = b"ffffffff8b014280 13a t rapl_pmu_event_init\t[intel_rapl_perf] {rapl.o}\n\
                  ffffffff8b014300 20 T next\n\
                  ffffffff8b014400 20 t in_mod\t[m]\n";
        assert_eq!(walk(m, Format::Kallmodsyms), vec![Ok(0)]);
    }
}
