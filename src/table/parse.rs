//! Turning kallsyms text into the table's columns, on both cores.
//!
//! A [`Parser`] is fed chunks of complete lines and appends one packed entry
//! per line ([`Entry`] and name hash), writing a NUL after every name in
//! place. Two drivers use it:
//!
//! - [`read_and_parse`] for files. /proc/kallsyms (size unknown) hands out
//!   under 4 KiB per `read()` and costs the kernel tens of milliseconds: the
//!   calling thread reads while a second thread parses what has arrived, so
//!   parsing ends within a chunk of the last read. A regular file (size
//!   known) is read as two halves by two threads with `pread`, then parsed
//!   like a buffer.
//! - [`parse_buffer`] for text in memory: the two halves are parsed on two
//!   threads and merged.
//!
//! Either way the result is the same columns, in file order.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::sync_channel;
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
    /// Zero: the three bytes `repr(C)` would pad with, named so that every
    /// byte of an entry is initialised (a snapshot writes them).
    pub pad: [u8; 3],
}

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
struct LineFailure {
    line: usize,
    code: i32,
    msg: String,
}

impl LineFailure {
    fn into_error(self, source: &str) -> Error {
        Error::new(self.code, format!("{source}:{}: {}", self.line, self.msg))
    }
}

/// Accumulates entries from consecutive chunks of complete lines.
struct Parser {
    format: Format,
    entries: Vec<Entry>,
    hashes: Vec<u64>,
    /// Built as entries arrive (streaming), or after parsing (buffers).
    index: Option<NameIndex>,
    modules: ModuleSet,
    lines: usize,
    sorted: bool,
    first_key: Option<(bool, u64)>,
    last_key: (bool, u64),
    any_addr: u64,
    /// The previous line's module column and owner (runs of one module).
    last_col: Vec<u8>,
    last_owner: OwnerId,
    busy_ns: u64,
}

impl Parser {
    fn new(format: Format, expected_lines: usize) -> Result<Parser> {
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
    fn feed(&mut self, chunk: &mut [u8], base: usize) -> std::result::Result<(), LineFailure> {
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
                    pad: [0; 3],
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
                let entries = &self.entries;
                if !index.push(&self.hashes, |j| entries[j].name_off) {
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

    fn finish(self, base: usize, len: usize, read_ns: u64) -> Parsed {
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
fn expected_lines(bytes: usize) -> usize {
    bytes / 24 + 16
}

/// Below this, one thread parses a buffer (thread start-up would dominate).
const PARALLEL_MIN: usize = 1 << 20;

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

/// What is reserved when the size is unknown (procfs files report 0). The
/// pages are not touched until read into; a larger file still works (the
/// rest is read after the overlap).
const UNKNOWN_SIZE_RESERVE: usize = 32 << 20;
/// The most text and the longest line read (see `base::read::limits`).
const MAX_TEXT: usize = crate::base::read::limits::KALLSYMS;
const MAX_LINE: usize = crate::base::read::limits::LINE;

fn line_too_long(shown: &str, at: usize) -> Error {
    Error::format(format!(
        "{shown}: a line longer than {} KiB at byte {at}: not a kallsyms file",
        MAX_LINE >> 10
    ))
}
/// Lines of a typical /proc/kallsyms (the index grows past it).
const EXPECTED_PROC_LINES: usize = 128 << 10;
/// A parser wakes for at least this much new text.
const BATCH: usize = 64 << 10;
/// Largest single `read()` of a regular file, so that parsing starts early.
const READ_SLICE: usize = 256 << 10;

/// Reads `path` and parses it at the same time. Returns the text (names
/// NUL-terminated in place, a newline appended if missing) and its columns.
/// Called with each piece of the text once it is parsed (final: names
/// NUL-terminated), its offset in the text, and the text's `base` in the
/// buffer: a snapshot writes the text while the kernel is still printing
/// the rest. Pieces come in order; a piece not given (the file outgrew the
/// reservation) is the caller's to write.
pub(crate) type TextSink<'a> = &'a (dyn Fn(&[u8], usize, usize) + Sync);

pub(crate) fn read_and_parse(path: &Path, sink: Option<TextSink<'_>>) -> Result<(Vec<u8>, Parsed)> {
    let shown = path.display().to_string();
    let t0 = Instant::now();
    let mut f = File::open(path).map_err(|e| Error::io(&e, format!("cannot open {shown}")))?;
    let meta = f
        .metadata()
        .map_err(|e| Error::io(&e, format!("cannot stat {shown}")))?;
    let hint = meta.len() as usize;
    let too_large = || crate::base::read::too_large(path, "a kallsyms file", MAX_TEXT);
    if hint > MAX_TEXT {
        return Err(too_large());
    }
    if meta.is_file() && hint > 0 {
        let (mut buf, base) = read_regular(&mut f, hint)
            .map_err(|e| Error::io(&e, format!("cannot read {shown}")))?;
        if buf.len() - base > MAX_TEXT {
            return Err(too_large()); // it grew while being read
        }
        let read_ns = t0.elapsed().as_nanos() as u64;
        let mut parsed = parse_buffer(&mut buf, base, &shown)?;
        parsed.read_ns = read_ns;
        return Ok((buf, parsed));
    }
    let reserve = if hint > 0 {
        hint + 64
    } else {
        UNKNOWN_SIZE_RESERVE
    };
    // Zeroed by fresh pages, not by a memset; the text starts on a huge-page
    // boundary, so the reader faults a few huge pages instead of 4 KiB ones.
    let (mut buf, base) = crate::base::sys::huge_buffer(reserve);
    let read_err = |e: std::io::Error| Error::io(&e, format!("cannot read {shown}"));

    // Read the first line whole: the format is recognised from it.
    let mut filled = 0usize;
    let text = &mut buf[base..];
    while memchr::memchr(b'\n', &text[..filled]).is_none() && filled < text.len() {
        if filled > MAX_LINE {
            return Err(line_too_long(&shown, 0));
        }
        let end = text.len().min(filled + READ_SLICE);
        match f.read(&mut text[filled..end]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(read_err(e)),
        }
    }
    let format = Format::detect(&text[..filled]);
    // Room for as many lines as the reservation can hold: address space
    // only, and the vectors never move (a move would stall the reader).
    let mut parser = Parser::new(format, expected_lines(reserve))?;
    // The parser thread waits for the kernel most of the time: it indexes
    // names as they come, leaving nothing but sizes to do after the last read.
    parser.index = Some(NameIndex::incremental(EXPECTED_PROC_LINES));

    // `sent`: bytes handed to the parser; `filled`: bytes read after them.
    let mut sent = 0usize;
    let mut eof = false;
    let mut io_error = None;
    let mut read_ns = 0u64;
    let mut limit_error = None;
    let outcome = std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<(&mut [u8], usize)>(256);
        let parser = &mut parser;
        let text_base = base;
        let worker = s.spawn(move || {
            for (chunk, at) in rx {
                parser.feed(chunk, at)?;
                if let Some(sink) = sink {
                    sink(chunk, at - text_base, text_base);
                }
            }
            Ok::<(), LineFailure>(())
        });
        let mut region: &mut [u8] = &mut buf[base..];
        loop {
            if filled >= BATCH || (eof && filled > 0) {
                let cut = if eof {
                    Some(filled - 1)
                } else {
                    memchr::memrchr(b'\n', &region[..filled])
                };
                if cut.is_none() && filled > MAX_LINE {
                    limit_error = Some(line_too_long(&shown, sent));
                    break;
                }
                if let Some(k) = cut {
                    let (done, rest) = std::mem::take(&mut region).split_at_mut(k + 1);
                    let len = done.len();
                    if tx.send((done, base + sent)).is_err() {
                        break; // the parser stopped on an error
                    }
                    region = rest;
                    sent += len;
                    filled -= len;
                }
            }
            if eof || filled == region.len() {
                break;
            }
            if sent + filled > MAX_TEXT {
                limit_error = Some(too_large());
                break;
            }
            let end = region.len().min(filled + READ_SLICE);
            match f.read(&mut region[filled..end]) {
                Ok(0) => {
                    eof = true;
                    // A last line without its newline gets one.
                    if filled > 0 && region[filled - 1] != b'\n' {
                        if filled < region.len() {
                            region[filled] = b'\n';
                            filled += 1;
                        } else {
                            eof = false; // no room: finished below, after the overlap
                            break;
                        }
                    }
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    io_error = Some(e);
                    break;
                }
            }
        }
        read_ns = t0.elapsed().as_nanos() as u64;
        drop(tx);
        worker.join()
    });
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(fail)) => {
            if buf[base..base + sent]
                .iter()
                .all(|b| b.is_ascii_whitespace())
            {
                return Err(answer::empty(&shown));
            }
            return Err(fail.into_error(&shown));
        }
        Err(_) => {
            return Err(Error::new(
                crate::error::INTERNAL,
                "the parser thread panicked",
            ))
        }
    }
    if let Some(e) = io_error {
        return Err(read_err(e));
    }
    if let Some(e) = limit_error {
        return Err(e);
    }
    if !eof {
        // The file outgrew the reservation: read the rest (up to the
        // limit), then parse it.
        buf.truncate(base + sent + filled);
        let room = (MAX_TEXT + 1).saturating_sub(sent + filled) as u64;
        (&mut f)
            .take(room)
            .read_to_end(&mut buf)
            .map_err(read_err)?;
        if buf.len() - base > MAX_TEXT {
            return Err(too_large());
        }
        read_ns = t0.elapsed().as_nanos() as u64;
        if buf.last() != Some(&b'\n') {
            buf.push(b'\n');
        }
        let len = buf.len();
        parser
            .feed(&mut buf[base + sent..len], base + sent)
            .map_err(|f| f.into_error(&shown))?;
        sent = len - base;
    }
    buf.truncate(base + sent);
    if parser.lines == 0 {
        return Err(answer::empty(&shown));
    }
    Ok((buf, parser.finish(base, sent, read_ns)))
}

/// Reads a regular file of `size` bytes into `buf[base..]`: two halves by
/// two threads with `pread` when it is large (the copy out of the page cache
/// and the page faults are the cost), a plain read otherwise or when the
/// size changed under us. Returns the buffer and `base`.
fn read_regular(f: &mut File, size: usize) -> std::io::Result<(Vec<u8>, usize)> {
    if size < PARALLEL_MIN {
        let mut buf = Vec::new();
        buf.try_reserve_exact(size + 1)
            .map_err(|_| std::io::Error::from(ErrorKind::OutOfMemory))?;
        f.read_to_end(&mut buf)?;
        return Ok((buf, 0));
    }
    // One spare byte for a final newline.
    let (mut buf, base) = crate::base::sys::huge_buffer(size + 1);
    buf.truncate(base + size);
    let mid = size / 2;
    let (a, b) = buf[base..].split_at_mut(mid);
    let file = &*f;
    let (ra, rb) = std::thread::scope(|s| {
        let hb = s.spawn(|| file.read_exact_at(b, mid as u64));
        (file.read_exact_at(a, 0), hb.join())
    });
    let mut probe = [0u8; 1];
    let complete = ra.is_ok()
        && matches!(rb, Ok(Ok(())))
        && matches!(file.read_at(&mut probe, size as u64), Ok(0));
    if !complete {
        // Shorter or longer than its size said (or a thread failed): start over.
        buf.truncate(base);
        let mut f2 = file;
        std::io::Seek::seek(&mut f2, std::io::SeekFrom::Start(0))?;
        f2.read_to_end(&mut buf)?;
    }
    Ok((buf, base))
}

#[cfg(test)]
mod tests {
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
