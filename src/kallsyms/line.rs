//! One line of /proc/kallsyms or /proc/kallmodsyms, parsed without copying.
//!
//! The kernel prints (`s_show` in kernel/kallsyms.c):
//!
//! ```text
//! kallsyms:     ADDR TYPE NAME            core kernel
//!               ADDR TYPE NAME\t[MODULE]  loadable and pseudo-modules
//! kallmodsyms:  ADDR SIZE TYPE NAME[\t[mod] [mod2] {object.o}]
//! ```
//!
//! `ADDR` and `SIZE` are hex, `TYPE` one nm letter, `NAME` any bytes but
//! whitespace (and NUL, which C strings cannot carry). This parser is the one
//! used by the table, the streaming resolver and the cache.

use super::hash::Hasher;
use crate::bytes::Masks;

/// Which of the two line formats a file uses, recognised from its first line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `/proc/kallsyms`: three fields.
    Kallsyms,
    /// `/proc/kallmodsyms`: four fields, the second the symbol size.
    Kallmodsyms,
}

impl Format {
    /// Detects the format from the first line of `data`: kallmodsyms has four
    /// space-separated fields before the module column, kallsyms three.
    pub fn detect(data: &[u8]) -> Format {
        let end = memchr::memchr2(b'\n', b'\t', data).unwrap_or(data.len());
        let fields = data[..end]
            .split(|&b| b == b' ')
            .filter(|f| !f.is_empty())
            .count();
        if fields == 4 {
            Format::Kallmodsyms
        } else {
            Format::Kallsyms
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Kallsyms => "kallsyms",
            Format::Kallmodsyms => "kallmodsyms",
        }
    }
}

/// A parsed line. Offsets are relative to the start of the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    pub addr: u64,
    /// The size column of kallmodsyms.
    pub size: Option<u64>,
    pub ty: u8,
    /// Offset of the name in the line (the type letter is two bytes before).
    pub name_start: usize,
    pub name: &'a [u8],
    /// [`hash`](super::hash::hash) of the name, computed while scanning it.
    pub hash: u64,
    /// What follows the TAB: `[ext4]`, or for kallmodsyms possibly
    /// `[a] [b] {obj.o}`. `None` when the line has no module column.
    pub modules: Option<&'a [u8]>,
}

impl Line<'_> {
    /// Absolute symbols (`A`/`a`): found by name, never by address.
    pub fn is_absolute(&self) -> bool {
        is_absolute_type(self.ty)
    }
}

/// `A` and `a`: the value is not an address.
#[inline]
pub fn is_absolute_type(ty: u8) -> bool {
    ty | 0x20 == b'a'
}

/// 0..=15 for a hex digit, 0xff otherwise.
static HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Parses hex digits from `s[*i..]` up to the first non-digit; at most 16.
#[inline(always)]
fn hex_field(s: &[u8], i: &mut usize, what: &'static str) -> Result<u64, LineError> {
    // The common case: exactly 16 digits then a space (64-bit addresses).
    if let Some(chunk) = s.get(*i..*i + 17) {
        if chunk[16] == b' ' {
            let mut v: u64 = 0;
            let mut bad = 0u8;
            for &b in &chunk[..16] {
                let d = HEX[b as usize];
                bad |= d;
                v = (v << 4) | (d & 0xf) as u64;
            }
            if bad & 0xf0 == 0 {
                *i += 16;
                return Ok(v);
            }
        }
    }
    let start = *i;
    let mut v: u64 = 0;
    while let Some(&b) = s.get(*i) {
        let d = HEX[b as usize];
        if d == 0xff {
            break;
        }
        v = (v << 4) | d as u64;
        *i += 1;
    }
    let n = *i - start;
    if n == 0 {
        return Err(what);
    }
    if n > 16 {
        return Err("hex value longer than 64 bits");
    }
    Ok(v)
}

/// The reason a line is malformed (the caller adds file and line number).
pub type LineError = &'static str;

/// A malformed line: why, and where the line ends (for the message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadLine {
    pub why: LineError,
    pub end: usize,
}

/// Parses the line that starts at `buf[pos]`. `buf` must end with a newline
/// (the line's end is found while scanning the name, not by a separate
/// search). Returns the line and the position just past its newline.
#[inline]
pub fn parse_at(buf: &[u8], pos: usize, format: Format) -> Result<(Line<'_>, usize), BadLine> {
    parse_fields(buf, pos, format).map_err(|why| BadLine {
        why,
        end: pos + memchr::memchr(b'\n', &buf[pos..]).unwrap_or(buf.len() - pos),
    })
}

#[inline(always)]
fn parse_fields(buf: &[u8], pos: usize, format: Format) -> Result<(Line<'_>, usize), LineError> {
    let mut i = pos;
    let addr = hex_field(buf, &mut i, "expected a hex address")?;
    if buf.get(i) != Some(&b' ') {
        return Err("expected a space after the address");
    }
    i += 1;
    let size = match format {
        Format::Kallsyms => None,
        Format::Kallmodsyms => {
            let v = hex_field(buf, &mut i, "expected a hex size")?;
            if buf.get(i) != Some(&b' ') {
                return Err("expected a space after the size");
            }
            i += 1;
            Some(v)
        }
    };
    let ty = match buf.get(i) {
        Some(&t) if t.is_ascii_graphic() => t,
        _ => return Err("expected a symbol type letter"),
    };
    i += 1;
    if buf.get(i) != Some(&b' ') {
        return Err("expected a space after the symbol type");
    }
    i += 1;
    let name_start = i;
    let (name_len, hash, term) = scan_name(buf, i)?;
    if name_len == 0 {
        return Err("empty symbol name");
    }
    if name_len > MAX_NAME_LEN {
        return Err("symbol name longer than 32767 bytes");
    }
    let name_end = name_start + name_len;
    let (modules, next) = match term {
        b'\n' => (None, name_end + 1),
        b'\t' => {
            let col_start = name_end + 1;
            let nl = col_start
                + memchr::memchr(b'\n', &buf[col_start..]).ok_or("missing newline at the end")?;
            let col = &buf[col_start..nl];
            check_module_column(col, format)?;
            (Some(col), nl + 1)
        }
        0 => return Err("NUL in the symbol name"),
        _ => return Err("whitespace in the symbol name"),
    };
    Ok((
        Line {
            addr,
            size,
            ty,
            name_start: name_start - pos,
            name: &buf[name_start..name_end],
            hash,
            modules,
        },
        next,
    ))
}

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
    let m = crate::bytes::Baseline;
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
pub fn walk_usual(
    text: &[u8],
    scratch: &mut Vec<u32>,
    f: impl FnMut(usize, usize, usize, bool) -> bool,
) -> Option<usize> {
    scratch.resize(SEGMENT + 4, 0);
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = crate::bytes::Avx2::detect() {
        // SAFETY: `detect` found the features `walk_usual_avx2` is
        // compiled for.
        return unsafe { walk_usual_avx2(avx2, text, scratch, f) };
    }
    walk_usual_with(crate::bytes::Baseline, text, scratch, f)
}

/// [`walk_usual_with`] compiled for the CPUs [`Avx2`](crate::bytes::Avx2)
/// stands for (its bit counting included).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,bmi1,lzcnt")]
fn walk_usual_avx2(
    m: crate::bytes::Avx2,
    text: &[u8],
    ends: &mut [u32],
    f: impl FnMut(usize, usize, usize, bool) -> bool,
) -> Option<usize> {
    walk_usual_with(m, text, ends, f)
}

/// Bytes of text [`walk_usual`] finds the newlines of at once.
const SEGMENT: usize = 1024;

#[inline(always)]
fn walk_usual_with(
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

/// Longest name the table stores (the kernel's own limit is 511 bytes).
pub const MAX_NAME_LEN: usize = 0x7fff;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Flags (in the high bit of its byte) the first byte of `w` below 0x21;
/// bytes above a flagged one may be flagged spuriously, never below it.
#[inline(always)]
fn below_0x21(w: u64) -> u64 {
    w.wrapping_sub(ONES * 0x21) & !w & HIGHS
}

/// Scans the name starting at `buf[start]` to its terminator (the first
/// whitespace or NUL byte), eight bytes at a time, hashing as it goes.
/// Returns (length, hash, terminator byte). `buf` ends with a newline.
#[inline(always)]
fn scan_name(buf: &[u8], start: usize) -> Result<(usize, u64, u8), LineError> {
    let mut h = Hasher::new();
    let mut i = start;
    while let Some(chunk) = buf.get(i..i + 8) {
        let w = u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
        let m = below_0x21(w);
        if m == 0 {
            h.word(w);
            i += 8;
            continue;
        }
        let k = (m.trailing_zeros() / 8) as usize;
        let b = chunk[k];
        if !is_terminator(b) {
            // A control byte that is not whitespace: legal, but rare enough
            // to take the byte-by-byte path.
            return scan_name_slow(buf, start);
        }
        let tail = if k == 0 {
            0
        } else {
            w & ((1u64 << (8 * k)) - 1)
        };
        let len = i + k - start;
        return Ok((len, h.finish(tail, len), b));
    }
    scan_name_slow(buf, start)
}

#[cold]
fn scan_name_slow(buf: &[u8], start: usize) -> Result<(usize, u64, u8), LineError> {
    let rest = &buf[start..];
    let len = rest
        .iter()
        .position(|&b| is_terminator(b))
        .ok_or("missing newline at the end")?;
    Ok((len, super::hash::hash(&rest[..len]), rest[len]))
}

/// Whitespace (including vertical tab) and NUL end a name.
#[inline(always)]
fn is_terminator(b: u8) -> bool {
    matches!(b, 0 | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// No byte is whitespace or NUL (module names).
fn name_is_clean(name: &[u8]) -> bool {
    !name.iter().any(|&b| is_terminator(b))
}

/// kallsyms: exactly `[name]`. kallmodsyms: one or more `[name]` separated by
/// single spaces, optionally followed by ` {object}` (or only `{object}`).
fn check_module_column(col: &[u8], format: Format) -> Result<(), LineError> {
    let mut groups = 0;
    let mut rest = col;
    loop {
        match rest.first() {
            Some(b'[') => {
                let close =
                    memchr::memchr(b']', rest).ok_or("unterminated `[` in the module column")?;
                let name = &rest[1..close];
                if name.is_empty() || !name_is_clean(name) || name.contains(&b'[') {
                    return Err("bad module name in the module column");
                }
                groups += 1;
                rest = &rest[close + 1..];
            }
            Some(b'{') if format == Format::Kallmodsyms => {
                let close =
                    memchr::memchr(b'}', rest).ok_or("unterminated `{` in the module column")?;
                if close == 1 || !name_is_clean(&rest[1..close]) || close + 1 != rest.len() {
                    return Err("bad object name in the module column");
                }
                return Ok(());
            }
            _ => return Err("expected `[module]` after the TAB"),
        }
        match rest.first() {
            None => break,
            Some(b' ') if format == Format::Kallmodsyms => rest = &rest[1..],
            Some(_) => return Err("unexpected text after `[module]`"),
        }
    }
    if groups > 1 && format == Format::Kallsyms {
        return Err("several modules on one kallsyms line");
    }
    Ok(())
}

/// The module names of a checked module column (`{object}` is skipped).
pub fn module_names(col: &[u8]) -> impl Iterator<Item = &[u8]> {
    col.split(|&b| b == b' ')
        .filter(|g| g.len() >= 2 && g[0] == b'[' && g[g.len() - 1] == b']')
        .map(|g| &g[1..g.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line parsed from a copy with a newline appended; the fields owned.
    #[derive(Debug)]
    struct Owned {
        addr: u64,
        size: Option<u64>,
        ty: u8,
        name_start: usize,
        name: Vec<u8>,
        hash: u64,
        modules: Option<Vec<u8>>,
    }

    impl Owned {
        fn is_absolute(&self) -> bool {
            is_absolute_type(self.ty)
        }
        fn module_names(&self) -> Vec<Vec<u8>> {
            module_names(self.modules.as_deref().unwrap())
                .map(|m| m.to_vec())
                .collect()
        }
    }

    fn parse_line(line: &[u8], format: Format) -> Result<Owned, LineError> {
        let mut buf = line.to_vec();
        buf.push(b'\n');
        let (l, next) = parse_at(&buf, 0, format).map_err(|e| e.why)?;
        if next != buf.len() {
            return Err("newline inside the line");
        }
        Ok(Owned {
            addr: l.addr,
            size: l.size,
            ty: l.ty,
            name_start: l.name_start,
            name: l.name.to_vec(),
            hash: l.hash,
            modules: l.modules.map(|m| m.to_vec()),
        })
    }

    fn ok(s: &str) -> Owned {
        parse_line(s.as_bytes(), Format::Kallsyms).unwrap()
    }

    fn bad(s: &str) -> LineError {
        parse_line(s.as_bytes(), Format::Kallsyms).unwrap_err()
    }

    #[test]
    fn core_line() {
        let l = ok("ffffffff81000000 T _text");
        assert_eq!(l.addr, 0xffffffff81000000);
        assert_eq!(l.ty, b'T');
        assert_eq!(l.name, b"_text");
        assert_eq!(l.name_start, 19);
        assert_eq!(l.modules, None);
        assert_eq!(l.size, None);
        assert_eq!(l.hash, crate::kallsyms::hash::hash(b"_text"));
        assert!(!l.is_absolute());
    }

    #[test]
    fn module_line() {
        let l = ok("ffffffffc0a01000 t xfs_foo\t[xfs]");
        assert_eq!(l.name, b"xfs_foo");
        assert_eq!(l.modules.as_deref(), Some(&b"[xfs]"[..]));
        assert_eq!(l.module_names(), vec![b"xfs".to_vec()]);
        let l = ok("ffffffffc08ef000 t ftrace_trampoline\t[__builtin__ftrace]");
        assert_eq!(l.module_names(), vec![b"__builtin__ftrace".to_vec()]);
    }

    #[test]
    fn any_type_letter_and_absolute() {
        for t in b"aAbBdDrRtTwWvVuUiNn?".iter() {
            let s = format!("0000000000001000 {} x", *t as char);
            assert_eq!(ok(&s).ty, *t);
        }
        assert!(ok("0000000000000000 A fixed_percpu_data").is_absolute());
        assert!(ok("0000000000034000 a zs_map_area\t[zsmalloc]").is_absolute());
    }

    #[test]
    fn short_addresses_and_long_names() {
        assert_eq!(ok("c0001000 T x").addr, 0xc0001000);
        let long = "n".repeat(511);
        let s = format!("ffffffff81000000 t {long}");
        assert_eq!(ok(&s).name.len(), 511);
        // Not UTF-8: still a name.
        let raw = b"ffffffff81000000 t caf\xe9";
        assert_eq!(parse_line(raw, Format::Kallsyms).unwrap().name, b"caf\xe9");
    }

    #[test]
    fn malformed_lines() {
        assert!(bad("").contains("address"));
        assert!(bad("xyz T a").contains("address"));
        assert!(bad("ffffffff81000000").contains("space"));
        assert!(bad("ffffffff81000000  T a").contains("type"));
        assert!(bad("ffffffff81000000 T").contains("space"));
        assert!(bad("ffffffff81000000 T ").contains("empty"));
        assert!(bad("ffffffff81000000 TT a").contains("space"));
        assert!(bad("ffffffff81000000 T a b").contains("whitespace"));
        assert!(bad("ffffffff81000000 T a\r").contains("whitespace"));
        assert!(bad("ffffffff81000000 T a\0b").contains("NUL"));
        assert!(bad("ffffffff81000000 T abcdefghijk\0b").contains("NUL"));
        assert!(bad("ffffffff81000000 T a\t").contains("module"));
        assert!(bad("ffffffff81000000 T a\txfs").contains("module"));
        assert!(bad("ffffffff81000000 T a\t[xfs").contains("unterminated"));
        assert!(bad("ffffffff81000000 T a\t[]").contains("module name"));
        assert!(bad("ffffffff81000000 T a\t[xfs] [y]").contains("after"));
        assert!(bad("1ffffffff81000000 T a").contains("64 bits"));
        let long = "n".repeat(MAX_NAME_LEN + 1);
        assert!(bad(&format!("ffffffff81000000 t {long}")).contains("longer"));
    }

    #[test]
    fn whitespace_found_in_every_position_of_a_long_name() {
        for pos in 0..40 {
            let mut name = vec![b'x'; 40];
            name[pos] = b'\x0b';
            let mut line = b"ffffffff81000000 t ".to_vec();
            line.extend_from_slice(&name);
            assert!(parse_line(&line, Format::Kallsyms).is_err(), "{pos}");
            name[pos] = 0x80 | b'x';
            let mut line = b"ffffffff81000000 t ".to_vec();
            line.extend_from_slice(&name);
            assert!(parse_line(&line, Format::Kallsyms).is_ok(), "{pos}");
            // A control byte that is not whitespace is part of the name.
            name[pos] = 0x01;
            let mut line = b"ffffffff81000000 t ".to_vec();
            line.extend_from_slice(&name);
            let l = parse_line(&line, Format::Kallsyms).unwrap();
            assert_eq!(l.name, name);
            assert_eq!(l.hash, crate::kallsyms::hash::hash(&name));
        }
    }

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

    /// What [`walk_usual`] gives for `buf`: each line's (start, name,
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
        let dispatched = walk(&|scratch, f| walk_usual(buf, scratch, f));
        let baseline = walk(&|scratch, f| {
            scratch.resize(SEGMENT + 4, 0);
            walk_usual_with(crate::bytes::Baseline, buf, scratch, f)
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

    #[test]
    fn parse_at_walks_a_buffer() {
        let buf = b"ffffffff81000000 T a\nffffffffc0000000 t b\t[m]\nc0001000 t c\n";
        let (l, next) = parse_at(buf, 0, Format::Kallsyms).unwrap();
        assert_eq!((l.name, next), (&b"a"[..], 21));
        let (l, next) = parse_at(buf, next, Format::Kallsyms).unwrap();
        assert_eq!(
            (l.name, l.modules, l.name_start),
            (&b"b"[..], Some(&b"[m]"[..]), 19)
        );
        let (l, next) = parse_at(buf, next, Format::Kallsyms).unwrap();
        assert_eq!((l.addr, l.name, next), (0xc0001000, &b"c"[..], buf.len()));
        let bad = b"ffffffff81000000 T a b\nnext\n";
        let e = parse_at(bad, 0, Format::Kallsyms).unwrap_err();
        assert_eq!(e.end, 22);
    }

    #[test]
    fn kallmodsyms_lines() {
        let f = Format::Kallmodsyms;
        assert_eq!(
            Format::detect(b"ffffffff8b013d20 409 t pt_buffer_setup_aux\n"),
            f
        );
        assert_eq!(
            Format::detect(b"ffffffff8b013d20 t pt_buffer_setup_aux\n"),
            Format::Kallsyms
        );
        assert_eq!(Format::detect(b"ffffffff8b013d20 a t x\t[m]\n"), f);
        let l = parse_line(
            b"ffffffff8b014280 13a t rapl_pmu_event_init\t[intel_rapl_perf]",
            f,
        )
        .unwrap();
        assert_eq!(l.size, Some(0x13a));
        assert_eq!(l.name, b"rapl_pmu_event_init");
        let l = parse_line(
            b"ffffffffa22b9850 d2 t lio_ethtool_get_channels\t[liquidio] [liquidio_vf]",
            f,
        )
        .unwrap();
        assert_eq!(
            l.module_names(),
            vec![b"liquidio".to_vec(), b"liquidio_vf".to_vec()]
        );
        let l = parse_line(b"ffffffffa22b9850 d2 t x\t[a] {drivers/a.o}", f).unwrap();
        assert_eq!(l.module_names().len(), 1);
        let l = parse_line(b"ffffffffa22b9850 d2 t x\t{kernel/sched/core.o}", f).unwrap();
        assert_eq!(l.module_names().len(), 0);
        assert!(parse_line(b"ffffffffa22b9850 t x", f).is_err());
        assert!(parse_line(b"ffffffffa22b9850 d2 t x\t[a] {b.o} [c]", f).is_err());
        assert!(parse_line(b"ffffffffa22b9850 d2 t x\t[a]  [c]", f).is_err());
    }
}
