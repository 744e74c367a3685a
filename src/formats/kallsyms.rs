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

use crate::base::hash::Hasher;

/// The running kernel's symbols: `/proc/kallmodsyms` where the kernel has
/// it (a few distributions patch it in), else `/proc/kallsyms`.
/// Asked once per process: a kernel has kallmodsyms or not for its whole
/// boot.
pub fn default_path() -> std::path::PathBuf {
    static KALLMODSYMS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *KALLMODSYMS.get_or_init(|| std::path::Path::new("/proc/kallmodsyms").exists()) {
        "/proc/kallmodsyms".into()
    } else {
        "/proc/kallsyms".into()
    }
}

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

    /// The format's name (`kallsyms`, `kallmodsyms`).
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
    Ok((len, crate::base::hash::hash(&rest[..len]), rest[len]))
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
        assert_eq!(l.hash, crate::base::hash::hash(b"_text"));
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
            assert_eq!(l.hash, crate::base::hash::hash(&name));
        }
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
