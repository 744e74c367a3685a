//! Turning kallsyms text into the table's columns, on both cores.
//!
//! A [`Parser`] is fed chunks of complete lines and appends one packed entry
//! per line ([`Entry`] and name hash), writing a NUL after every name in
//! place. Two drivers use it:
//!
//! - [`super::read::read_and_parse`] for files, parsing while the kernel
//!   prints.
//! - [`parse_buffer`] for text in memory: the two halves are parsed on two
//!   threads and merged.
//!
//! Either way the result is the same columns, in file order.

use std::time::Instant;

use crate::base::hash::NameIndex;
use crate::error::{Error, Result};
use crate::formats::kallsyms::{is_absolute_type, parse_at, Format};
use crate::rules::answer;
use crate::rules::modules::{ModId, ModuleSet, OwnerId, VMLINUX_MOD, VMLINUX_OWNER};

pub(crate) const LEN_MASK: u16 = 0x7fff;
pub(crate) const EXACT_BIT: u16 = 0x8000;
/// Stored size meaning "too large for 32 bits: compute it when asked".
pub(crate) const SIZE_FAR: u32 = u32::MAX;

/// The packed per-symbol record (24 bytes). The address and everything a
/// result needs share one cache line: a lookup or symbolization that finds
/// the record has all it needs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Entry {
    pub addr: u64,
    pub name_off: u32,
    pub size: u32,
    /// Name length; the high bit says the size is exact.
    pub len: u16,
    pub owner: OwnerId,
    /// The nm type letter (also in the buffer, but reading it there would
    /// cost a cache miss per symbolization).
    pub ty: u8,
    /// [`REPEATED`].
    pub flags: u8,
    /// Zero: the two bytes `repr(C)` would pad with, named so that every
    /// byte of an entry is initialised (a snapshot writes them).
    pub pad: [u8; 2],
}

/// `Entry::flags`: another entry's name has this one's hash (in practice:
/// the same name). A lookup that finds an entry without it has found the
/// only one of its name.
pub(crate) const REPEATED: u8 = 1;

const _: () = assert!(std::mem::size_of::<Entry>() == 24 && std::mem::align_of::<Entry>() == 8);

// SAFETY: `repr(C)`, integer fields only, and the would-be padding is the
// named `pad` field (the assertion above checks there is no other): no
// padding bytes, every bit pattern valid.
unsafe impl crate::base::mapped::Plain for Entry {}

impl Entry {
    #[inline]
    pub fn name_len(self) -> usize {
        (self.len & LEN_MASK) as usize
    }
    #[inline]
    pub fn exact(self) -> bool {
        self.len & EXACT_BIT != 0
    }
    #[inline]
    pub fn repeated(self) -> bool {
        self.flags & REPEATED != 0
    }
}

/// The columns parsing produces, in file order.
pub(crate) struct Parsed {
    pub entries: Vec<Entry>,
    pub hashes: Vec<u64>,
    /// The name index, when it was built while parsing (entries numbered in
    /// file order).
    pub index: Option<NameIndex>,
    pub modules: ModuleSet,
    pub format: Format,
    pub lines: usize,
    /// Already in table order (absolute symbols first, then by address).
    pub sorted: bool,
    pub any_addr: bool,
    /// Where the text starts in the buffer (a huge-page boundary for files).
    pub base: usize,
    /// Bytes of text (with the newline appended to a last line without one).
    pub len: usize,
    pub read_ns: u64,
    /// Time spent parsing (on whichever thread did it).
    pub parse_ns: u64,
}

/// A malformed line, before the file name is known to the message.
pub(super) struct LineFailure {
    line: usize,
    code: i32,
    msg: String,
}

impl LineFailure {
    pub(super) fn into_error(self, source: &str) -> Error {
        Error::new(self.code, format!("{source}:{}: {}", self.line, self.msg))
    }
}

/// Accumulates entries from consecutive chunks of complete lines.
pub(super) struct Parser {
    format: Format,
    entries: Vec<Entry>,
    hashes: Vec<u64>,
    /// Built as entries arrive (streaming), or after parsing (buffers).
    pub(super) index: Option<NameIndex>,
    modules: ModuleSet,
    pub(super) lines: usize,
    sorted: bool,
    first_key: Option<(bool, u64)>,
    last_key: (bool, u64),
    any_addr: u64,
    /// The previous line's module column and owner (runs of one module).
    last_col: Vec<u8>,
    last_owner: OwnerId,
    /// The entries a name just indexed repeats (reused).
    repeats: Vec<usize>,
    busy_ns: u64,
}

impl Parser {
    pub(super) fn new(format: Format, expected_lines: usize) -> Result<Parser> {
        let mut p = Parser {
            format,
            entries: Vec::new(),
            hashes: Vec::new(),
            index: None,
            modules: ModuleSet::new(),
            lines: 0,
            sorted: true,
            first_key: None,
            last_key: (false, 0),
            any_addr: 0,
            last_col: Vec::new(),
            last_owner: VMLINUX_OWNER,
            repeats: Vec::new(),
            busy_ns: 0,
        };
        p.entries
            .try_reserve(expected_lines)
            .and_then(|_| p.hashes.try_reserve(expected_lines))
            .map_err(|_| Error::nomem("parsing"))?;
        Ok(p)
    }

    /// Parses `chunk` (complete lines, ending with a newline) which starts
    /// at offset `base` of the final buffer.
    pub(super) fn feed(
        &mut self,
        chunk: &mut [u8],
        base: usize,
    ) -> std::result::Result<(), LineFailure> {
        let t0 = Instant::now();
        let n = chunk.len();
        if base + n > u32::MAX as usize {
            return Err(LineFailure {
                line: self.lines + 1,
                code: crate::error::UNSUPPORTED,
                msg: "the file is larger than 4 GiB".into(),
            });
        }
        let mut pos = 0usize;
        while pos < n {
            self.lines += 1;
            let (meta, addr, hash, next) = {
                let (l, next) = parse_at(chunk, pos, self.format).map_err(|e| {
                    let text = &chunk[pos..e.end];
                    let shown = String::from_utf8_lossy(&text[..text.len().min(100)]);
                    let dots = if text.len() > 100 { "..." } else { "" };
                    LineFailure {
                        line: self.lines,
                        code: crate::error::FORMAT,
                        msg: format!("malformed line ({}): `{shown}{dots}`", e.why),
                    }
                })?;
                let owner = match l.modules {
                    None => VMLINUX_OWNER,
                    Some(col) if col == self.last_col.as_slice() => self.last_owner,
                    Some(col) => {
                        let o = self.modules.owner_of_column(col).map_err(|e| LineFailure {
                            line: self.lines,
                            code: e.code(),
                            msg: e.message().to_string(),
                        })?;
                        self.last_col.clear();
                        self.last_col.extend_from_slice(col);
                        self.last_owner = o;
                        o
                    }
                };
                let mut len = l.name.len() as u16;
                let mut size = 0u32;
                if let Some(s) = l.size {
                    if s > 0 {
                        size = s.min(SIZE_FAR as u64 - 1) as u32;
                        len |= EXACT_BIT;
                    }
                }
                let meta = Entry {
                    addr: l.addr,
                    name_off: (base + pos + l.name_start) as u32,
                    size,
                    len,
                    owner,
                    ty: l.ty,
                    flags: 0,
                    pad: [0; 2],
                };
                (meta, l.addr, l.hash, next)
            };
            let key = (!is_absolute_type(meta.ty), addr);
            if self.first_key.is_none() {
                self.first_key = Some(key);
            } else if key < self.last_key {
                self.sorted = false;
            }
            self.last_key = key;
            self.any_addr |= addr;
            // The byte after the name (newline or TAB) becomes its NUL.
            chunk[meta.name_off as usize - base + meta.name_len()] = 0;
            self.entries.push(meta);
            self.hashes.push(hash);
            if let Some(index) = &mut self.index {
                let entries = &mut self.entries;
                let repeats = &mut self.repeats;
                repeats.clear();
                let ok = index.push(&self.hashes, |j| entries[j].name_off, |r| repeats.push(r));
                for &r in repeats.iter() {
                    entries[r].flags |= REPEATED;
                }
                if !ok {
                    let e = crate::base::hash::crowded();
                    return Err(LineFailure {
                        line: self.lines,
                        code: e.code(),
                        msg: e.message().to_string(),
                    });
                }
            }
            pos = next;
        }
        self.busy_ns += t0.elapsed().as_nanos() as u64;
        Ok(())
    }

    /// Appends the entries of `next`, which parsed the text right after ours.
    fn append(&mut self, next: Parser) -> Result<()> {
        // Module ids and owner ids of `next` are its own: map them into ours.
        let mut owner_map: Vec<OwnerId> = Vec::with_capacity(next.modules.owner_count());
        for o in 0..next.modules.owner_count() {
            let mods: Vec<ModId> = next
                .modules
                .owner_modules(o as OwnerId)
                .iter()
                .map(|&m| {
                    if m == VMLINUX_MOD {
                        Ok(VMLINUX_MOD)
                    } else {
                        let md = next.modules.module(m);
                        self.modules.intern(md.name.to_bytes(), md.kind)
                    }
                })
                .collect::<Result<_>>()?;
            owner_map.push(self.modules.owner_of_set(&mods)?);
        }
        if let Some(first) = next.first_key {
            if !next.sorted || (self.first_key.is_some() && first < self.last_key) {
                self.sorted = false;
            }
            if self.first_key.is_none() {
                self.first_key = Some(first);
            }
            self.last_key = next.last_key;
        }
        self.lines += next.lines;
        self.any_addr |= next.any_addr;
        self.busy_ns = self.busy_ns.max(next.busy_ns);
        self.hashes.extend_from_slice(&next.hashes);
        self.entries.extend(next.entries.iter().map(|m| Entry {
            owner: owner_map[m.owner as usize],
            ..*m
        }));
        Ok(())
    }

    pub(super) fn finish(self, base: usize, len: usize, read_ns: u64) -> Parsed {
        Parsed {
            entries: self.entries,
            hashes: self.hashes,
            index: self.index,
            modules: self.modules,
            format: self.format,
            lines: self.lines,
            sorted: self.sorted,
            any_addr: self.any_addr != 0,
            base,
            len,
            read_ns,
            parse_ns: self.busy_ns,
        }
    }
}

/// Lines are at least 21 bytes in practice (`ADDR t x`); reserving for
/// 1 line per 24 bytes costs only address space (the vectors are shrunk).
pub(super) fn expected_lines(bytes: usize) -> usize {
    bytes / 24 + 16
}

/// Below this, one thread parses a buffer (thread start-up would dominate).
pub(super) const PARALLEL_MIN: usize = 1 << 20;

/// Parses the text in `buf[base..]` (a newline is appended if the last
/// line lacks one). Large buffers are parsed in two halves on two threads.
pub(crate) fn parse_buffer(buf: &mut Vec<u8>, base: usize, source: &str) -> Result<Parsed> {
    if buf[base..].iter().all(|b| b.is_ascii_whitespace()) {
        return Err(answer::empty(source));
    }
    if buf.last() != Some(&b'\n') {
        buf.push(b'\n');
    }
    let format = Format::detect(&buf[base..]);
    let n = buf.len() - base;
    let mid = if n >= PARALLEL_MIN {
        memchr::memchr(b'\n', &buf[base + n / 2..]).map_or(n, |i| n / 2 + i + 1)
    } else {
        n
    };
    let (a, b) = buf[base..].split_at_mut(mid);
    let mut pa = Parser::new(format, expected_lines(n))?;
    if b.is_empty() {
        pa.feed(a, base).map_err(|f| f.into_error(source))?;
        return Ok(pa.finish(base, n, 0));
    }
    let mut pb = Parser::new(format, expected_lines(b.len()))?;
    let (ra, rb) = std::thread::scope(|s| {
        let hb = s.spawn(|| pb.feed(b, base + mid));
        let ra = pa.feed(a, base);
        (ra, hb.join())
    });
    ra.map_err(|f| f.into_error(source))?;
    match rb {
        Ok(Ok(())) => {}
        Ok(Err(mut f)) => {
            f.line += pa.lines;
            return Err(f.into_error(source));
        }
        Err(_) => {
            return Err(Error::new(
                crate::error::INTERNAL,
                "the parser thread panicked",
            ))
        }
    }
    pa.append(pb)?;
    Ok(pa.finish(base, n, 0))
}

#[cfg(test)]
mod tests {
    use super::super::read::read_and_parse;
    use super::*;
    use crate::error::FORMAT;

    fn sample(lines: usize) -> Vec<u8> {
        let mut t = String::new();
        for i in 0..lines {
            if i % 1000 == 999 {
                t += &format!("ffffffffc0{:06x} t m{i}\t[mod{}]\n", i, i % 3);
            } else {
                t += &format!("ffffffff81{:06x} T sym_{i}\n", i * 16);
            }
        }
        t.into_bytes()
    }

    fn columns(p: &Parsed) -> Vec<(u64, u32, u16, Vec<u8>)> {
        p.entries
            .iter()
            .map(|m| {
                let a = m.addr;
                let mods: Vec<u8> = p
                    .modules
                    .owner_modules(m.owner)
                    .iter()
                    .flat_map(|&x| p.modules.name(x).to_bytes().to_vec())
                    .collect();
                (a, m.name_off, m.len, mods)
            })
            .collect()
    }

    #[test]
    fn halves_and_single_thread_agree() {
        let text = sample(60_000);
        assert!(text.len() > PARALLEL_MIN);
        let mut two = text.clone();
        let p2 = parse_buffer(&mut two, 0, "t").unwrap();
        // One parser over the whole text, for reference.
        let mut one = text.clone();
        let mut p = Parser::new(Format::Kallsyms, 10).unwrap();
        p.feed(&mut one, 0).map_err(|f| f.msg).unwrap();
        let p1 = p.finish(0, one.len(), 0);
        assert_eq!(p2.lines, 60_000);
        assert_eq!(columns(&p1), columns(&p2));
        assert_eq!(p1.hashes, p2.hashes);
        assert_eq!(one, two, "the same NULs were written");
        assert!(!p2.sorted, "module lines go back in address");
    }

    #[test]
    fn error_line_numbers_count_both_halves() {
        let mut text = sample(60_000);
        // Break line 50,001 (in the second half).
        let mut line = 0;
        let mut at = 0;
        for (i, &b) in text.iter().enumerate() {
            if b == b'\n' {
                line += 1;
                if line == 50_000 {
                    at = i + 1;
                    break;
                }
            }
        }
        text[at] = b'X';
        let e = parse_buffer(&mut text, 0, "file").err().unwrap();
        assert_eq!(e.code(), FORMAT);
        assert!(e.message().starts_with("file:50001: malformed line"), "{e}");
    }

    #[test]
    fn streaming_read_matches_buffer_parse() {
        let dir = std::env::temp_dir().join(format!("ksym-parse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kallsyms");
        let mut text = sample(30_000);
        text.pop(); // no final newline
        std::fs::write(&path, &text).unwrap();
        let (buf, p) = read_and_parse(&path, None).unwrap();
        let mut copy = text.clone();
        let q = parse_buffer(&mut copy, 0, "x").unwrap();
        assert_eq!(buf[p.base..], copy[..]);
        // The same entries, the names at the same place in the text.
        let shift =
            |c: Vec<(u64, u32, u16, Vec<u8>)>, by: usize| -> Vec<(u64, u32, u16, Vec<u8>)> {
                c.into_iter()
                    .map(|(a, off, l, m)| (a, off - by as u32, l, m))
                    .collect()
            };
        assert_eq!(shift(columns(&p), p.base), columns(&q));
        assert_eq!(p.len, text.len() + 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
