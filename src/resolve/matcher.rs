//! The state of one streaming pass: the wanted names, a prefilter that
//! rejects almost every other line without parsing it, and the lines found.

use super::PassStats;
use crate::base::hash::hash;
use crate::error::{Error, Result, FORMAT};
use crate::formats::kallsyms::{parse_at, Format, Line};
use crate::formats::walk::{walk_kallsyms64, walk_lines};
use crate::rules::modules::{ModuleSet, OwnerId, VMLINUX_OWNER};

/// A line whose name is a wanted one.
pub(super) struct Hit {
    pub addr: u64,
    /// Its module column's owner in [`Matcher::modules`] (the core kernel,
    /// before built-in attribution, for a line without one).
    pub owner: OwnerId,
    /// An absolute symbol (`A`/`a`): found by name, never an anchor.
    pub absolute: bool,
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
struct Prefilter {
    words: Vec<u64>,
    /// Two bits per key.
    two: bool,
}

/// Names from which the filter sets two bits per key.
const TWO_BITS_FROM: usize = 256;

impl Prefilter {
    fn new(names: usize) -> Prefilter {
        Prefilter {
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
            true => Prefilter::place::<true>(k),
            false => Prefilter::place::<false>(k),
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

    /// [`Prefilter::holds`] for a prefilter with `TWO == self.two`, for loops
    /// compiled for one kind.
    #[inline(always)]
    fn may_hold<const TWO: bool>(&self, k: u64) -> bool {
        let (w, bits) = Prefilter::place::<TWO>(k);
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
pub(super) struct Matcher {
    /// Each distinct wanted name as its index (u32, little-endian) and
    /// its bytes, one after the other.
    names: Vec<u8>,
    distinct: u32,
    /// For each name given to [`Matcher::new`], in order, the index of its
    /// distinct name (names asked twice share one).
    pub index_of: Vec<u32>,
    /// Open addressing over the distinct names.
    slots: Vec<Slot>,
    /// The [`quick_key`]s of the wanted names.
    prefilter: Prefilter,
    /// The matching lines: (index of the distinct name, hit), in file
    /// order.
    hits: Vec<(u32, Hit)>,
    /// Once the pass is over: the hits of name `i` are
    /// `hits[order[starts[i]..starts[i + 1]]]`.
    starts: Vec<u32>,
    order: Vec<u32>,
    /// Working memory of [`walk_kallsyms64`] and [`Matcher::feed_kallsyms64`].
    scratch: Vec<u32>,
    cands: Vec<(usize, usize, usize)>,
    found: Vec<u64>,
    format: Option<Format>,
    /// The addresses of every line parsed, or-ed (0: restricted so far).
    pub any_addr: u64,
    pub lines: usize,
    fast_lines: usize,
    /// Every query is `vmlinux`-qualified: the core part is enough.
    core_only: bool,
    stopped_early: bool,
    source: String,
    /// The modules of the hits' columns.
    pub modules: ModuleSet,
    /// The last column interned, and its owner (modules come in runs).
    last_col: Vec<u8>,
    last_owner: OwnerId,
}

impl Matcher {
    pub fn new<'q>(
        names: impl Iterator<Item = &'q [u8]>,
        core_only: bool,
        source: String,
    ) -> Matcher {
        let names: Vec<&'q [u8]> = names.collect();
        let cap = (names.len() * 2).max(8).next_power_of_two();
        let mut m = Matcher {
            names: Vec::with_capacity(names.iter().map(|n| n.len() + 4).sum()),
            distinct: 0,
            index_of: Vec::with_capacity(names.len()),
            slots: vec![Slot::default(); cap],
            prefilter: Prefilter::new(names.len()),
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
            modules: ModuleSet::new(),
            last_col: Vec::new(),
            last_owner: VMLINUX_OWNER,
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
            m.prefilter.insert(k);
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
    pub fn hits_at(&self, i: u32) -> impl Iterator<Item = &Hit> {
        let i = i as usize;
        let range = match self.starts.get(i..i + 2) {
            Some(&[a, b]) => a as usize..b as usize,
            _ => 0..0,
        };
        self.order[range].iter().map(|&h| &self.hits[h as usize].1)
    }

    /// The hits of a name (none if it was not asked for; once the pass is over).
    pub fn hits_of(&self, name: &[u8]) -> impl Iterator<Item = &Hit> {
        let i = self.find(hash(name), name).unwrap_or(u32::MAX);
        self.hits_at(i)
    }

    /// Ends the pass: the hits grouped by name (a counting sort).
    pub fn finish(&mut self) {
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
    pub fn feed(&mut self, text: &[u8]) -> Result<bool> {
        let format = *self.format.get_or_insert_with(|| Format::detect(text));
        let mut pos = 0;
        while self.any_addr == 0 && pos < text.len() {
            self.lines += 1;
            let (line, next) = self.parse(text, pos, format)?;
            if !self.keep(&line, None, format)? {
                return Ok(false);
            }
            pos = next;
        }
        let text = &text[pos..];
        let kallsyms64 = match self.prefilter.two {
            true => Matcher::feed_kallsyms64::<true>,
            false => Matcher::feed_kallsyms64::<false>,
        };
        if format == Format::Kallsyms && kallsyms64(self, text) {
            return Ok(true);
        }
        self.feed_lines(text, format)
    }

    /// [`Matcher::feed`] for text of the usual shape ([`walk_kallsyms64`]):
    /// false (and nothing done) if it is not.
    fn feed_kallsyms64<const TWO: bool>(&mut self, text: &[u8]) -> bool {
        let core_only = self.core_only;
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut cands = std::mem::take(&mut self.cands);
        cands.clear();
        let prefilter = &self.prefilter;
        let walked = walk_kallsyms64(text, &mut scratch, |start, name, len, module| {
            if module && core_only {
                // Parsed by feed_lines, where it ends the pass.
                return false;
            }
            let k = quick_key_at(text, name, len);
            if prefilter.may_hold::<TWO>(k) {
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
            crate::base::bytes::prefetch(&self.slots[(h as usize) & mask]);
            h
        }));
        for &h in &found {
            let slot = self.slots[(h as usize) & mask];
            if let Some(b) = self.names.get(slot.at as usize) {
                crate::base::bytes::prefetch(b);
            }
        }
        let kept = self.hits.len();
        let mut ok = true;
        for (&(start, name, len), &h) in cands.iter().zip(&found) {
            let Some(i) = self.find(h, &text[name..name + len]) else {
                continue;
            };
            match parse_at(text, start, Format::Kallsyms) {
                // A line that cannot be taken (a bad module column) is
                // reported by the walk line by line.
                Ok((line, _)) => ok &= self.keep(&line, Some(i), Format::Kallsyms) == Ok(true),
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
                    known = match self.prefilter.holds(k) {
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
            self.keep(&line, known, format)
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
    fn keep(&mut self, line: &Line<'_>, known: Option<u32>, format: Format) -> Result<bool> {
        self.any_addr |= line.addr;
        if self.core_only && format == Format::Kallsyms && line.modules.is_some() {
            self.stopped_early = true;
            return Ok(false);
        }
        self.take(line, known)?;
        Ok(true)
    }

    /// Keeps `line` if its name is a wanted one (`known`: its index, when
    /// already looked up).
    #[inline]
    fn take(&mut self, line: &Line<'_>, known: Option<u32>) -> Result<()> {
        let Some(i) = known.or_else(|| self.find(line.hash, line.name)) else {
            return Ok(());
        };
        let owner = match line.modules {
            None => VMLINUX_OWNER,
            Some(col) if col == self.last_col.as_slice() => self.last_owner,
            Some(col) => {
                let o = self.modules.owner_of_column(col).map_err(|e| {
                    Error::new(e.code(), format!("{}:{}: {e}", self.source, self.lines))
                })?;
                self.last_col.clear();
                self.last_col.extend_from_slice(col);
                self.last_owner = o;
                o
            }
        };
        self.hits.push((
            i,
            Hit {
                addr: line.addr,
                owner,
                absolute: line.is_absolute(),
            },
        ));
        Ok(())
    }

    /// What the pass did.
    pub fn stats(&self, bytes: usize) -> PassStats {
        PassStats {
            bytes,
            lines: self.lines,
            fast_lines: self.fast_lines,
            stopped_early: self.stopped_early,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(m.prefilter.two, n >= TWO_BITS_FROM);
            let holds = |name: &str| m.prefilter.holds(quick_key(name.as_bytes()));
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
}
