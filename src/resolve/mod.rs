//! Batch resolution: many queries answered in one streaming pass over
//! kallsyms, keeping no table.
//!
//! Memory is a fixed pool of read buffers plus O(queries): a hash table of
//! the queried names and the matches found for them. Lines go through the
//! table's own line parser; queries through the table's query grammar; the
//! answers follow [`crate::Table::lookup`]'s rules (exact names, qualified
//! names, `vmlinux` excluding built-in modules, ambiguity at different
//! addresses, absolute symbols found by name, restricted files refused).
//!
//! The pass runs on the calling thread with one fixed buffer, scanning
//! what a few reads gave (the kernel returns under 4 KiB per `read()` of
//! /proc/kallsyms) while it is still in the cache. The lines of 64-bit
//! kallsyms take the fast walk ([`walk_usual`]: names where the shape puts
//! them, the read's delimiters counted to prove it); any other read is
//! walked line by line ([`walk_lines`]: each line's delimiters checked). A
//! line is parsed whole only when its name is a wanted one (a filter on its
//! length and first and last eight bytes, then the hash table), so a pass
//! costs little more than reading the file.
//! (Parsing on a second thread was tried: the reader slowed down more than
//! the parsing cost, the buffers bouncing between the cores.)

pub mod cache;

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, AMBIGUOUS, FORMAT, NOT_FOUND, RESTRICTED};
use crate::kallsyms::hash::hash;
use crate::kallsyms::line::{module_names, parse_at, walk_lines, walk_usual, Format, Line};
use crate::modules::is_pseudo_module;
use crate::modules::ranges::{self, Ranges};
use crate::query::{module_eq, normalize_module, Query};

/// One query's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The address (the lowest one when ambiguous), 0 when not found.
    pub addr: u64,
    /// 0, `KSYM_ERR_NOT_FOUND` or `KSYM_ERR_AMBIGUOUS`.
    pub err: i32,
    /// The modules of the matches (normalised names; core symbols outside
    /// every built-in module add none): what a cache must watch.
    pub modules: Vec<Vec<u8>>,
    /// Some match is in a pseudo-module (`bpf`, `__builtin__*`), whose
    /// symbols come and go without /proc/modules knowing.
    pub pseudo: bool,
}

/// Where a pass reads from, and what it did.
#[derive(Clone, Debug, Default)]
pub struct Source {
    /// Default: /proc/kallmodsyms if it exists, else /proc/kallsyms.
    pub kallsyms_path: Option<PathBuf>,
    /// Built-in ranges to attribute core symbols with (none if `None`).
    pub builtin_ranges: Option<PathBuf>,
}

impl Source {
    /// /proc/kallsyms, with the running kernel's modules.builtin.ranges
    /// when it exists: what `ksym_resolve(NULL, ...)` and an object's
    /// externs without a cache read.
    pub fn proc_kallsyms() -> Source {
        Source {
            kallsyms_path: Some("/proc/kallsyms".into()),
            builtin_ranges: ranges::from_option(None),
        }
    }
}

/// Facts about one pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassStats {
    pub bytes: usize,
    pub lines: usize,
    /// Lines walked the fast way ([`walk_usual`]), the others line by line.
    pub fast_lines: usize,
    /// The pass stopped at the first module line (every query `vmlinux`-qualified).
    pub stopped_early: bool,
}

/// The read buffer.
const CHUNK: usize = 32 << 10;
/// Bytes read before they are scanned (the kernel gives under 4 KiB per
/// read of /proc/kallsyms).
const BATCH: usize = 16 << 10;

/// A match of a queried name.
struct Hit {
    addr: u64,
    /// `None` for a core line (no module column).
    column: Option<Vec<u8>>,
}

/// A cheap key of a name: its length and its first and last eight bytes.
fn quick_key(name: &[u8]) -> u64 {
    quick_key_at(name, 0, name.len())
}

/// The pre-filter: lines whose name's [`quick_key`] it does not hold cannot
/// be wanted and are not parsed. A blocked Bloom filter of 1024 words (8
/// KiB): a key sets one bit of one word, or two bits of it when there are
/// many names (a line still costs one load); with 1000 names about one line
/// in 300 passes without being wanted, one in 60 with a single bit.
struct Filter {
    words: Vec<u64>,
    /// Two bits per key.
    two: bool,
}

/// Names from which the filter sets two bits per key.
const TWO_BITS_FROM: usize = 256;

impl Filter {
    fn new(names: usize) -> Filter {
        Filter {
            words: vec![0u64; 1024],
            two: names >= TWO_BITS_FROM,
        }
    }

    #[inline(always)]
    fn place<const TWO: bool>(k: u64) -> (usize, u64) {
        let word = (k >> 54) as usize;
        let mut bits = 1u64 << ((k >> 48) & 63);
        if TWO {
            bits |= 1u64 << ((k >> 42) & 63);
        }
        (word, bits)
    }

    fn insert(&mut self, k: u64) {
        let (w, bits) = match self.two {
            true => Filter::place::<true>(k),
            false => Filter::place::<false>(k),
        };
        self.words[w] |= bits;
    }

    /// Whether `k` may be held.
    fn holds(&self, k: u64) -> bool {
        match self.two {
            true => self.may_hold::<true>(k),
            false => self.may_hold::<false>(k),
        }
    }

    /// [`Filter::holds`] for a filter with `TWO == self.two`, for loops
    /// compiled for one kind.
    #[inline(always)]
    fn may_hold<const TWO: bool>(&self, k: u64) -> bool {
        let (w, bits) = Filter::place::<TWO>(k);
        self.words[w] & bits == bits
    }
}

/// [`quick_key`] of `text[start..start + len]`, reading whole words from
/// `text` (which goes on past the name: a newline at least).
#[inline(always)]
fn quick_key_at(text: &[u8], start: usize, len: usize) -> u64 {
    let word = |at: usize| match text.get(at..at + 8) {
        Some(c) => u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        None => {
            let mut w = [0u8; 8];
            let tail = &text[at.min(text.len())..];
            w[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(w)
        }
    };
    let mask = if len >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * len)) - 1
    };
    let first = word(start) & mask;
    let last = if len >= 8 {
        word(start + len - 8)
    } else {
        first
    };
    (first ^ last.rotate_left(29) ^ len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// A slot of the hash table of wanted names: the name's hash, where its
/// bytes are in [`Matcher::names`] and its length (0: an empty slot).
#[derive(Clone, Copy, Default)]
struct Slot {
    hash: u64,
    at: u32,
    len: u32,
}

/// The state of a pass: the queried names, hashed, and what was found.
///
/// Laid out for the lines that pass the filter, which come between the
/// kernel's reads and find little in the cache: a slot, then the name's
/// bytes with its index just before them, then an append to `hits`; the
/// fast walk looks up the candidates of a read together, their slots and
/// then their names prefetched.
struct Matcher {
    /// Each distinct wanted name as its index (u32, little-endian) and
    /// its bytes, one after the other.
    names: Vec<u8>,
    distinct: u32,
    /// For each name given to [`Matcher::new`], in order, the index of its
    /// distinct name (names asked twice share one).
    index_of: Vec<u32>,
    /// Open addressing over the distinct names.
    slots: Vec<Slot>,
    /// The [`quick_key`]s of the wanted names.
    filter: Filter,
    /// The matching lines: (index of the distinct name, hit), in file
    /// order.
    hits: Vec<(u32, Hit)>,
    /// Once the pass is over: the hits of name `i` are
    /// `hits[order[starts[i]..starts[i + 1]]]`.
    starts: Vec<u32>,
    order: Vec<u32>,
    /// Working memory of [`walk_usual`] and [`Matcher::feed_usual`].
    scratch: Vec<u32>,
    cands: Vec<(usize, usize, usize)>,
    found: Vec<u64>,
    format: Option<Format>,
    any_addr: u64,
    lines: usize,
    fast_lines: usize,
    /// Every query is `vmlinux`-qualified: the core part is enough.
    core_only: bool,
    stopped_early: bool,
    source: String,
}

impl Matcher {
    fn new<'q>(names: impl Iterator<Item = &'q [u8]>, core_only: bool, source: String) -> Matcher {
        let names: Vec<&'q [u8]> = names.collect();
        let cap = (names.len() * 2).max(8).next_power_of_two();
        let mut m = Matcher {
            names: Vec::with_capacity(names.iter().map(|n| n.len() + 4).sum()),
            distinct: 0,
            index_of: Vec::with_capacity(names.len()),
            slots: vec![Slot::default(); cap],
            filter: Filter::new(names.len()),
            hits: Vec::with_capacity(names.len()),
            starts: Vec::new(),
            order: Vec::new(),
            scratch: Vec::new(),
            cands: Vec::new(),
            found: Vec::new(),
            format: None,
            any_addr: 0,
            lines: 0,
            fast_lines: 0,
            core_only,
            stopped_early: false,
            source,
        };
        for name in names {
            let h = hash(name);
            if let Some(i) = m.find(h, name) {
                m.index_of.push(i);
                continue;
            }
            let i = m.distinct;
            m.distinct += 1;
            m.index_of.push(i);
            let k = quick_key(name);
            m.filter.insert(k);
            let mut s = (h as usize) & (cap - 1);
            while m.slots[s].len != 0 {
                s = (s + 1) & (cap - 1);
            }
            m.names.extend_from_slice(&i.to_le_bytes());
            m.slots[s] = Slot {
                hash: h,
                at: m.names.len() as u32,
                len: name.len() as u32,
            };
            m.names.extend_from_slice(name);
        }
        m
    }

    /// The index of a wanted name.
    #[inline]
    fn find(&self, h: u64, name: &[u8]) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut s = (h as usize) & mask;
        loop {
            let slot = self.slots[s];
            if slot.len == 0 {
                return None;
            }
            if slot.hash == h && slot.len as usize == name.len() {
                let at = slot.at as usize;
                if &self.names[at..at + name.len()] == name {
                    let i = &self.names[at - 4..at];
                    return Some(u32::from_le_bytes([i[0], i[1], i[2], i[3]]));
                }
            }
            s = (s + 1) & mask;
        }
    }

    /// The hits of distinct name `i` (once the pass is over), in file order.
    fn hits_at(&self, i: u32) -> impl Iterator<Item = &Hit> {
        let i = i as usize;
        let range = match self.starts.get(i..i + 2) {
            Some(&[a, b]) => a as usize..b as usize,
            _ => 0..0,
        };
        self.order[range].iter().map(|&h| &self.hits[h as usize].1)
    }

    /// The hits of a name (none if it was not asked for; once the pass is over).
    fn hits_of(&self, name: &[u8]) -> impl Iterator<Item = &Hit> {
        let i = self.find(hash(name), name).unwrap_or(u32::MAX);
        self.hits_at(i)
    }

    /// Ends the pass: the hits grouped by name (a counting sort).
    fn finish(&mut self) {
        let mut starts = vec![0u32; self.distinct as usize + 2];
        for (i, _) in &self.hits {
            starts[*i as usize + 2] += 1;
        }
        for k in 2..starts.len() {
            starts[k] += starts[k - 1];
        }
        // starts[i + 1] is where name i's hits go, moved on as they do.
        let mut order = vec![0u32; self.hits.len()];
        for (h, (i, _)) in self.hits.iter().enumerate() {
            let at = &mut starts[*i as usize + 1];
            order[*at as usize] = h as u32;
            *at += 1;
        }
        starts.pop();
        self.starts = starts;
        self.order = order;
    }

    /// Goes through the complete lines of `text` (which ends with a
    /// newline). Only lines whose name passes the filter are parsed (and so
    /// checked) whole, and every line until an address is not zero (a
    /// restricted file is refused). Returns false to stop the pass.
    fn feed(&mut self, text: &[u8]) -> Result<bool> {
        let format = *self.format.get_or_insert_with(|| Format::detect(text));
        let mut pos = 0;
        while self.any_addr == 0 && pos < text.len() {
            self.lines += 1;
            let (line, next) = self.parse(text, pos, format)?;
            if !self.keep(&line, None, format) {
                return Ok(false);
            }
            pos = next;
        }
        let text = &text[pos..];
        let usual = match self.filter.two {
            true => Matcher::feed_usual::<true>,
            false => Matcher::feed_usual::<false>,
        };
        if format == Format::Kallsyms && usual(self, text) {
            return Ok(true);
        }
        self.feed_lines(text, format)
    }

    /// [`Matcher::feed`] for text of the usual shape ([`walk_usual`]):
    /// false (and nothing done) if it is not.
    fn feed_usual<const TWO: bool>(&mut self, text: &[u8]) -> bool {
        let core_only = self.core_only;
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut cands = std::mem::take(&mut self.cands);
        cands.clear();
        let filter = &self.filter;
        let walked = walk_usual(text, &mut scratch, |start, name, len, module| {
            if module && core_only {
                // Parsed by feed_lines, where it ends the pass.
                return false;
            }
            let k = quick_key_at(text, name, len);
            if filter.may_hold::<TWO>(k) {
                cands.push((start, name, len));
            }
            true
        });
        self.scratch = scratch;
        let Some(n) = walked else {
            self.cands = cands;
            return false;
        };
        // The few lines that may be wanted: their slots and names are
        // fetched for all of them at once, not one cache miss after the
        // other.
        let mask = self.slots.len() - 1;
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        found.extend(cands.iter().map(|&(_, name, len)| {
            let h = hash(&text[name..name + len]);
            crate::bytes::prefetch(&self.slots[(h as usize) & mask]);
            h
        }));
        for &h in &found {
            let slot = self.slots[(h as usize) & mask];
            if let Some(b) = self.names.get(slot.at as usize) {
                crate::bytes::prefetch(b);
            }
        }
        let kept = self.hits.len();
        let mut ok = true;
        for (&(start, name, len), &h) in cands.iter().zip(&found) {
            let Some(i) = self.find(h, &text[name..name + len]) else {
                continue;
            };
            match parse_at(text, start, Format::Kallsyms) {
                Ok((line, _)) => ok &= self.keep(&line, Some(i), Format::Kallsyms),
                Err(_) => ok = false,
            }
            if !ok {
                break;
            }
        }
        self.cands = cands;
        self.found = found;
        if !ok {
            self.hits.truncate(kept);
            return false;
        }
        self.lines += n;
        self.fast_lines += n;
        true
    }

    /// [`Matcher::feed`] line by line, for any text.
    fn feed_lines(&mut self, text: &[u8], format: Format) -> Result<bool> {
        walk_lines(text, format, |span| {
            self.lines += 1;
            // The index of the line's name, when looked up already.
            let mut known = None;
            if let Some((start, len, module_line)) = span.name {
                // The first module line of a vmlinux-only pass is parsed:
                // it ends the pass.
                if !(module_line && self.core_only) {
                    let k = quick_key_at(text, start, len);
                    let name = &text[start..start + len];
                    known = match self.filter.holds(k) {
                        false => None,
                        true => self.find(hash(name), name),
                    };
                    if known.is_none() {
                        return Ok(true);
                    }
                }
            }
            let (line, next) = self.parse(text, span.start, format)?;
            debug_assert!(known.is_none() || known == self.find(line.hash, line.name));
            debug_assert_eq!(next, span.next);
            Ok(self.keep(&line, known, format))
        })
    }

    /// Parses the line at `text[pos]`, the `self.lines`th of the file.
    fn parse<'t>(&self, text: &'t [u8], pos: usize, format: Format) -> Result<(Line<'t>, usize)> {
        parse_at(text, pos, format).map_err(|e| {
            let l = &text[pos..e.end];
            Error::new(
                FORMAT,
                format!(
                    "{}:{}: malformed line ({}): `{}`",
                    self.source,
                    self.lines,
                    e.why,
                    String::from_utf8_lossy(&l[..l.len().min(100)])
                ),
            )
        })
    }

    /// Takes in a parsed line: false if it ends the pass (the first module
    /// line when every query is `vmlinux`-qualified: the core kernel comes
    /// first, nothing after it can match).
    #[inline]
    fn keep(&mut self, line: &Line<'_>, known: Option<u32>, format: Format) -> bool {
        self.any_addr |= line.addr;
        if self.core_only && format == Format::Kallsyms && line.modules.is_some() {
            self.stopped_early = true;
            return false;
        }
        self.take(line, known);
        true
    }

    /// Keeps `line` if its name is a wanted one (`known`: its index, when
    /// already looked up).
    #[inline]
    fn take(&mut self, line: &Line<'_>, known: Option<u32>) {
        if let Some(i) = known.or_else(|| self.find(line.hash, line.name)) {
            let hit = Hit {
                addr: line.addr,
                column: line.modules.map(|m| m.to_vec()),
            };
            self.hits.push((i, hit));
        }
    }
}

/// Feeds `f` the text of `path` in chunks of complete lines (the last line
/// gets a newline if it lacks one), reading with a fixed pool of buffers.
/// Stops when `f` returns `Ok(false)`.
fn stream(
    path: &Path,
    shown: &str,
    f: &mut (dyn FnMut(&[u8]) -> Result<bool> + Send),
) -> Result<usize> {
    let mut file = File::open(path).map_err(|e| Error::io(&e, format!("cannot open {shown}")))?;
    stream_here(&mut file, shown, f)
}

/// Reads `file` into one buffer and hands `f` the complete lines of each
/// read at once, carrying the unfinished last line to the next.
fn stream_here(
    file: &mut impl Read,
    shown: &str,
    f: &mut (dyn FnMut(&[u8]) -> Result<bool> + Send),
) -> Result<usize> {
    let mut buf = vec![0u8; CHUNK];
    let mut filled = 0;
    let mut total = 0;
    loop {
        let n = read_some(file, &mut buf[filled..], shown)?;
        total += n;
        filled += n;
        if n == 0 {
            if filled > 0 {
                if buf[filled - 1] != b'\n' {
                    push_byte(&mut buf, &mut filled, b'\n');
                }
                f(&buf[..filled])?;
            }
            return Ok(total);
        }
        if filled < BATCH && buf.len() - filled >= BATCH {
            // Scanning a few reads at once costs less than one at a time
            // (each read of /proc/kallsyms leaves the caches to the kernel).
            continue;
        }
        if let Some(k) = memchr::memrchr(b'\n', &buf[..filled]) {
            if !f(&buf[..=k])? {
                return Ok(total);
            }
            buf.copy_within(k + 1..filled, 0);
            filled -= k + 1;
        } else if filled == buf.len() {
            // A line longer than the buffer: grow (names are at most 32 KiB).
            buf.resize(buf.len() * 2, 0);
        }
    }
}

fn push_byte(buf: &mut Vec<u8>, filled: &mut usize, b: u8) {
    if *filled == buf.len() {
        buf.push(b);
    } else {
        buf[*filled] = b;
    }
    *filled += 1;
}

fn read_some(file: &mut impl Read, buf: &mut [u8], shown: &str) -> Result<usize> {
    loop {
        match file.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(&e, format!("cannot read {shown}"))),
        }
    }
}

/// Resolves every query in one pass over the source's kallsyms. Returns an
/// answer per query, in order. A malformed query fails the whole call
/// (`KSYM_ERR_INVALID`, naming it), as do I/O errors, a malformed line and a
/// restricted file.
pub fn resolve(source: &Source, queries: &[&[u8]]) -> Result<(Vec<Answer>, PassStats)> {
    resolve_parsed(source, &parse_queries(queries)?)
}

/// Parses queries for [`resolve_parsed`] and [`resolve_each`]; a malformed
/// one is `KSYM_ERR_INVALID`, naming it and its index.
pub fn parse_queries<'q>(queries: &[&'q [u8]]) -> Result<Vec<Query<'q>>> {
    queries
        .iter()
        .enumerate()
        .map(|(i, q)| Query::parse(q).map_err(|e| e.context(format!("query {i}"))))
        .collect()
}

/// [`resolve`] for parsed queries.
pub fn resolve_parsed(source: &Source, queries: &[Query<'_>]) -> Result<(Vec<Answer>, PassStats)> {
    let mut answers = Vec::with_capacity(queries.len());
    let stats = resolve_each(source, queries, |_, a| answers.push(a))?;
    Ok((answers, stats))
}

/// [`resolve_parsed`] handing each answer to `each` (with the query's
/// index), in order, once the pass has succeeded: nothing is handed over
/// when the call fails.
pub fn resolve_each(
    source: &Source,
    queries: &[Query<'_>],
    mut each: impl FnMut(usize, Answer),
) -> Result<PassStats> {
    let path = source
        .kallsyms_path
        .clone()
        .unwrap_or_else(crate::kallsyms::default_kallsyms_path);
    let shown = path.display().to_string();
    let ranges = match &source.builtin_ranges {
        Some(p) => Some(Ranges::read(p)?),
        None => None,
    };
    let core_only = !queries.is_empty() && queries.iter().all(|q| q.is_vmlinux());
    // Anchors of the ranges file are looked for as if they were queried.
    let anchors: Vec<&[u8]> = ranges
        .iter()
        .flat_map(|r| r.sections.iter().map(|s| s.anchor.as_slice()))
        .filter(|a| !a.is_empty())
        .collect();
    let mut m = Matcher::new(
        queries
            .iter()
            .map(|q| q.name)
            .chain(anchors.iter().copied()),
        core_only,
        shown.clone(),
    );
    let bytes = if queries.is_empty() {
        0
    } else {
        stream(&path, &shown, &mut |text| m.feed(text))?
    };
    if !queries.is_empty() && m.any_addr == 0 {
        if m.lines == 0 {
            return Err(Error::new(FORMAT, format!("{shown}: empty, no symbols")));
        }
        return Err(Error::new(
            RESTRICTED,
            format!(
                "{shown}: every address is zero: the kernel hides them from this process \
                 (kernel.kptr_restrict is set, or the process lacks CAP_SYSLOG)"
            ),
        ));
    }
    m.finish();
    let attribution = ranges.as_ref().map(|r| Attribution::new(r, &m));
    for (k, (q, &i)) in queries.iter().zip(&m.index_of).enumerate() {
        each(k, answer(q, m.hits_at(i), attribution.as_ref()));
    }
    Ok(PassStats {
        bytes,
        lines: m.lines,
        fast_lines: m.fast_lines,
        stopped_early: m.stopped_early,
    })
}

/// Built-in ranges with their bases, from the anchors found in the pass.
struct Attribution {
    /// (start, end, modules) in absolute addresses.
    spans: Vec<(u64, u64, Vec<Vec<u8>>)>,
}

impl Attribution {
    fn new(r: &Ranges, m: &Matcher) -> Attribution {
        let mut spans = Vec::new();
        for sec in &r.sections {
            let base = m
                .hits_of(&sec.anchor)
                .find(|h| h.column.is_none())
                .map(|h| h.addr.wrapping_sub(sec.anchor_offset));
            let Some(base) = base else { continue };
            for range in &sec.ranges {
                let mods = r.groups[range.group]
                    .iter()
                    .map(|n| normalize_module(n))
                    .collect();
                spans.push((
                    base.wrapping_add(range.start),
                    base.wrapping_add(range.end),
                    mods,
                ));
            }
        }
        Attribution { spans }
    }

    fn modules_of(&self, addr: u64) -> Option<&[Vec<u8>]> {
        self.spans
            .iter()
            .find(|(s, e, _)| *s <= addr && addr < *e)
            .map(|(_, _, m)| m.as_slice())
    }
}

/// The module list of a core symbol outside every built-in range.
static VMLINUX: std::sync::LazyLock<Vec<Vec<u8>>> =
    std::sync::LazyLock::new(|| vec![b"vmlinux".to_vec()]);

/// The answer to one query from the hits of its name.
fn answer<'h>(
    q: &Query<'_>,
    hits: impl Iterator<Item = &'h Hit>,
    attr: Option<&Attribution>,
) -> Answer {
    let mut out = Answer {
        addr: 0,
        err: NOT_FOUND,
        modules: Vec::new(),
        pseudo: false,
    };
    let mut first: Option<u64> = None;
    for h in hits {
        // The modules this line belongs to: its column (loadable, pseudo,
        // or built-in in kallmodsyms), else a built-in range, else vmlinux
        // (the common case, kept free of allocation).
        let owned: Vec<Vec<u8>>;
        let mods: &[Vec<u8>] = match &h.column {
            Some(col) => {
                owned = module_names(col).map(normalize_module).collect();
                &owned
            }
            None => attr.and_then(|a| a.modules_of(h.addr)).unwrap_or(&[]),
        };
        let core = mods.is_empty();
        let mods = if core { VMLINUX.as_slice() } else { mods };
        let accepted = match q.module {
            None => true,
            Some(_) if q.is_vmlinux() => mods.len() == 1 && mods[0] == b"vmlinux",
            Some(want) => mods.iter().any(|x| module_eq(x, want)),
        };
        if !accepted {
            continue;
        }
        match first {
            None => {
                first = Some(h.addr);
                out.addr = h.addr;
                out.err = 0;
            }
            Some(a) => {
                if h.addr != a {
                    out.err = AMBIGUOUS;
                }
                out.addr = out.addr.min(h.addr);
            }
        }
        if !core {
            for x in mods {
                out.pseudo |= is_pseudo_module(x);
                if !out.modules.contains(x) {
                    out.modules.push(x.clone());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(text: &str, queries: &[&str]) -> Vec<(u64, i32)> {
        let dir = std::env::temp_dir().join(format!(
            "ksym-resolve-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("kallsyms");
        std::fs::write(&p, text).unwrap();
        let q: Vec<&[u8]> = queries.iter().map(|q| q.as_bytes()).collect();
        let (a, _) = resolve(
            &Source {
                kallsyms_path: Some(p),
                builtin_ranges: None,
            },
            &q,
        )
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        a.into_iter().map(|a| (a.addr, a.err)).collect()
    }

    const TEXT: &str = "0000000000000000 A fixed_percpu_data\n\
                        ffffffff81000000 T _text\n\
                        ffffffff81000010 t foo\n\
                        ffffffff81000020 t dup\n\
                        ffffffff81000030 t dup\n\
                        ffffffff81000040 b key\n\
                        ffffffff81000040 b key\n\
                        ffffffffc0000010 t foo\t[mod_a]\n\
                        ffffffffc0000020 t only_mod\t[mod_a]";

    #[test]
    fn same_rules_as_the_table() {
        let got = answers(
            TEXT,
            &[
                "foo",
                "vmlinux`foo",
                "mod-a`foo",
                "dup",
                "key",
                "only_mod",
                "vmlinux`only_mod",
                "nope",
                "fixed_percpu_data",
                "foo",
            ],
        );
        assert_eq!(
            got,
            vec![
                (0xffffffff81000010, AMBIGUOUS),
                (0xffffffff81000010, 0),
                (0xffffffffc0000010, 0),
                (0xffffffff81000020, AMBIGUOUS),
                (0xffffffff81000040, 0),
                (0xffffffffc0000020, 0),
                (0, NOT_FOUND),
                (0, NOT_FOUND),
                (0, 0),
                (0xffffffff81000010, AMBIGUOUS),
            ]
        );
    }

    /// Hands out `step` bytes per read, like /proc does with its pages.
    struct Dribble<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn lines_cut_by_reads_anywhere_arrive_whole() {
        let text = b"line one\nline two\nthe third line\nno newline at the end";
        for step in 1..text.len() + 1 {
            let mut chunks: Vec<Vec<u8>> = Vec::new();
            let n = stream_here(&mut Dribble { data: text, step }, "t", &mut |t: &[u8]| {
                assert!(t.ends_with(b"\n"));
                chunks.push(t.to_vec());
                Ok(true)
            })
            .unwrap();
            assert_eq!(n, text.len());
            let mut want = text.to_vec();
            want.push(b'\n');
            assert_eq!(chunks.concat(), want, "{step} bytes per read");
        }
        // A line longer than the buffer.
        let long = [vec![b'x'; CHUNK + 100], b"\nshort\n".to_vec()].concat();
        let mut got = Vec::new();
        stream_here(
            &mut Dribble {
                data: &long,
                step: 4096,
            },
            "t",
            &mut |t: &[u8]| {
                got.extend_from_slice(t);
                Ok(true)
            },
        )
        .unwrap();
        assert_eq!(got, long);
    }

    /// `first` and then 50 lines of other names.
    fn text_with(first: &[u8]) -> Vec<u8> {
        let mut text = first.to_vec();
        for i in 0..50 {
            text.extend_from_slice(format!("ffffffff81001{i:03x} t other_{i}\n").as_bytes());
        }
        text
    }

    #[test]
    fn a_chunk_walked_twice_keeps_its_hits_once() {
        let mut m = Matcher::new([&b"want"[..]].into_iter(), false, "test".into());
        let mut text = text_with(b"ffffffff81000000 T _text\nffffffff81000010 t want\n");
        // Walked the fast way: one hit.
        assert!(m.feed(&text).unwrap());
        assert_eq!((m.hits.len(), m.fast_lines, m.lines), (1, 51, 52));
        // The same lines and then one the fast way does not take: given up
        // after the hit, and walked again line by line; still one hit more.
        text.extend_from_slice(b"81000080 t short_addr\n");
        assert!(m.feed(&text).unwrap());
        assert_eq!((m.hits.len(), m.fast_lines, m.lines), (2, 51, 105));
        m.finish();
        assert_eq!(m.hits_of(b"want").count(), 2);
    }

    #[test]
    fn a_bad_line_that_is_wanted_is_reported() {
        // The fast walk takes the shape; the wanted line's address is not
        // hex: parsed whole, it fails the call, with its line number.
        let mut m = Matcher::new([&b"want"[..]].into_iter(), false, "k".into());
        let mut text = text_with(b"ffffffff81000000 T _text\n");
        text.extend_from_slice(b"ffffffffg1000000 T want\n");
        let e = m.feed(&text).unwrap_err();
        assert_eq!(e.code(), FORMAT);
        assert!(e.message().starts_with("k:52: malformed line"), "{e}");
    }

    #[test]
    fn the_filter_holds_every_wanted_key_and_few_others() {
        for n in [1, 10, TWO_BITS_FROM - 1, TWO_BITS_FROM, 1000, 5000] {
            let names: Vec<String> = (0..n).map(|i| format!("wanted_symbol_{i}")).collect();
            let m = Matcher::new(names.iter().map(|s| s.as_bytes()), false, "test".into());
            assert_eq!(m.filter.two, n >= TWO_BITS_FROM);
            let holds = |name: &str| m.filter.holds(quick_key(name.as_bytes()));
            assert!(names.iter().all(|s| holds(s)), "{n}");
            let others = (0..100_000)
                .filter(|i| holds(&format!("other_symbol_{i}")))
                .count();
            // 1000 names: about 0.3 % with two bits (1.5 % with one).
            let limit = if n <= 1000 { 600 } else { 20_000 };
            assert!(others < limit, "{n} names: {others} of 100000 others pass");
        }
    }

    #[test]
    fn quick_keys_agree() {
        let text = b"xx short\nxx a_much_longer_name_here\n";
        assert_eq!(quick_key_at(text, 3, 5), quick_key(b"short"));
        assert_eq!(
            quick_key_at(text, 12, 23),
            quick_key(b"a_much_longer_name_here")
        );
        assert_eq!(quick_key_at(b"ab", 0, 2), quick_key(b"ab"));
    }

    #[test]
    fn invalid_query_fails_the_call() {
        let e = resolve(&Source::default(), &[b"ok", b"a`b`c"]).unwrap_err();
        assert_eq!(e.code(), crate::error::INVALID);
        assert!(e.message().contains("query 1"), "{e}");
    }
}
