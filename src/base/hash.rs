//! A small, fast hash for symbol names and the name index built on it.
//!
//! The hash reads eight bytes at a time and folds a 128-bit multiply per
//! word (the wyhash construction), good enough to spread kernel names, which
//! share long prefixes (`__pfx_`, `__SCT__`, `trace_event_`...).

use super::mapped::Store;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

const K0: u64 = 0xa076_1d64_78bd_642f;
const K1: u64 = 0xe703_7ed1_a0b4_28db;
const K2: u64 = 0x8ebc_6af0_9c88_c6e3;

#[inline(always)]
fn mix(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// Hash of a byte string.
#[inline]
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h = Hasher::new();
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h.word(u64::from_le_bytes([
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
        ]));
    }
    let rem = chunks.remainder();
    let mut tail = [0u8; 8];
    tail[..rem.len()].copy_from_slice(rem);
    h.finish(u64::from_le_bytes(tail), bytes.len())
}

/// A checksum of a long byte string (a snapshot's sections): four
/// independent multiply chains over interleaved words, so that the
/// multiplier is never idle waiting for the previous step (four times the
/// rate of [`hash`], whose chain is serial). Not equal to [`hash`].
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut h = [K0, K1, K2, K0 ^ K2];
    let mut chunks = bytes.chunks_exact(32);
    for c in &mut chunks {
        for (k, lane) in h.iter_mut().enumerate() {
            let w = u64::from_le_bytes([
                c[8 * k],
                c[8 * k + 1],
                c[8 * k + 2],
                c[8 * k + 3],
                c[8 * k + 4],
                c[8 * k + 5],
                c[8 * k + 6],
                c[8 * k + 7],
            ]);
            *lane = mix(*lane ^ w, K1);
        }
    }
    let tail = hash(chunks.remainder());
    let a = mix(h[0] ^ h[1].rotate_left(17), K2);
    let b = mix(h[2] ^ h[3].rotate_left(41), K2);
    mix(a ^ b.rotate_left(29) ^ tail, (bytes.len() as u64) ^ K1)
}

/// A NUL-terminated name at the start of `rest`, read once eight bytes at
/// a time: its length (up to its NUL, or all of `rest`), its [`hash`],
/// and whether it holds three `_` in a row (CO-RE's `___flavor`
/// separator). A BTF index needs all three of every name; finding the NUL,
/// hashing and looking for the separator in three passes cost twice as
/// much.
#[inline]
pub fn hash_cstr(rest: &[u8]) -> (usize, u64, bool) {
    const LO7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HI: u64 = 0x8080_8080_8080_8080;
    // 0x80 in each byte of `x` that is zero, exactly (no carry between
    // bytes: `(b & 0x7f) + 0x7f` is at most 0xfe).
    let zeros = |x: u64| !(((x & LO7).wrapping_add(LO7)) | x) & HI;
    let mut h = Hasher::new();
    // The `_` flags of the previous word, for a run across two words.
    let mut prev = 0u64;
    let mut run3 = false;
    let mut three = |u: u64, prev: u64| {
        let e = ((u as u128) << 16) | (prev >> 48) as u128;
        run3 |= e & (e << 8) & (e << 16) != 0;
    };
    let mut pos = 0;
    loop {
        let w = match rest.get(pos..pos + 8) {
            Some(c) => u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
            None => {
                // The last bytes of `rest`, zero-padded: the padding ends
                // the name as a NUL would.
                let mut tail = [0u8; 8];
                tail[..rest.len() - pos].copy_from_slice(&rest[pos..]);
                u64::from_le_bytes(tail)
            }
        };
        let z = zeros(w);
        if z != 0 {
            let k = z.trailing_zeros() as usize / 8;
            let keep = if k == 0 { 0 } else { u64::MAX >> (64 - 8 * k) };
            let tail = w & keep;
            three(zeros(tail ^ 0x5f5f_5f5f_5f5f_5f5f) & keep, prev);
            let len = pos + k;
            return (len, h.finish(tail, len), run3);
        }
        h.word(w);
        let u = zeros(w ^ 0x5f5f_5f5f_5f5f_5f5f);
        three(u, prev);
        prev = u;
        pos += 8;
    }
}

/// The same hash fed a word at a time, for scanners that read names eight
/// bytes at a time anyway: `word` for every full word from the start of the
/// name, then `finish` with the remaining bytes (zero-padded, little-endian).
#[derive(Clone, Copy)]
pub struct Hasher(u64);

impl Default for Hasher {
    fn default() -> Self {
        Self::new()
    }
}

impl Hasher {
    #[inline(always)]
    pub fn new() -> Hasher {
        Hasher(K0)
    }

    #[inline(always)]
    pub fn word(&mut self, w: u64) {
        self.0 = mix(self.0 ^ w, K1);
    }

    #[inline(always)]
    pub fn finish(self, tail: u64, len: usize) -> u64 {
        let h = if len % 8 != 0 {
            mix(self.0 ^ tail, K2)
        } else {
            self.0
        };
        mix(h ^ (len as u64), K1 ^ K2)
    }
}

/// The `std` hasher of maps keyed by names or by name hashes: a byte
/// string costs one [`hash`], a `u64` (a hash already) passes through.
#[derive(Default)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0 = self.0.rotate_left(5) ^ hash(bytes);
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = self.0.rotate_left(5) ^ v;
    }
}

/// A `HashMap` hashed with [`KeyHasher`].
pub type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// Open-addressing index from names to entries, built once.
///
/// Each slot is a `u64`: 0 when empty, else the entry's name offset in the
/// low half and `(tag << idx_bits) | (entry + 1)` in the high half, where the
/// tag is more bits of the hash. A lookup reads the slot, then the name and
/// the entry at once (both are known from the slot): two cache misses in
/// series rather than three. Probing past other names rarely touches them
/// (the tag). Linear probing at most 70% full, any table size (the slot is
/// picked by multiplying, not masking). The slots form one or two
/// independent parts (the top bit of the hash picks one; probing wraps
/// inside it), so two threads can build the two halves at once. Every entry
/// of a name (a name can have many) is found by probing up to the first
/// empty slot.
pub struct NameIndex {
    /// Owned while building; a view of a snapshot's bytes when loaded.
    slots: Store<u64>,
    /// 1 or 2.
    parts: usize,
    /// Slots of part 0 (part 1 has the rest).
    part_len: usize,
    idx_bits: u32,
}

/// The longest probe an insertion may take: about as many entries of one
/// name (real kernels have a few hundred at most: `__func__.0`). Past it,
/// each insertion would cost more and more (a file repeating one name a
/// million times would take hours): the input is refused instead.
pub const MAX_PROBE: usize = 1 << 13;

/// The error for input that crowds one slot run past [`MAX_PROBE`].
pub fn crowded() -> Error {
    Error::format(format!(
        "more than {MAX_PROBE} entries share one name (or its hash): not a symbol table"
    ))
}

/// Below this many entries one thread builds the index.
const PARALLEL_MIN: usize = 1 << 16;

/// Slots for `n` entries: at most 70% full.
fn capacity_for(n: usize) -> usize {
    (n.max(4) * 10).div_ceil(7)
}

impl NameIndex {
    fn empty(cap: usize, parts: usize) -> Option<NameIndex> {
        // Zero pages from the allocator: the threads that fill the parts
        // fault them in, in parallel, instead of a memset here.
        let slots = vec![0u64; cap];
        Some(NameIndex {
            slots: slots.into(),
            parts,
            part_len: cap / parts,
            idx_bits: bits_for(cap + 1),
        })
    }

    /// Builds the index of entries whose name hashes and name offsets are
    /// `hashes[i]`, `name_off(i)`. An error when memory cannot be allocated
    /// or one name is repeated past [`MAX_PROBE`].
    pub fn build(hashes: &[u64], name_off: impl Fn(usize) -> u32 + Sync) -> Result<NameIndex> {
        Self::build_with(hashes, hashes.len(), |i| i, name_off)
    }

    /// [`NameIndex::build`] with entry `i` stored as `entry(i)` (below
    /// `entries_below`), not `i`: an index whose entries are the ids the
    /// caller looks up (BTF type ids), with no array between.
    pub fn build_with(
        hashes: &[u64],
        entries_below: usize,
        entry: impl Fn(usize) -> usize + Sync,
        name_off: impl Fn(usize) -> u32 + Sync,
    ) -> Result<NameIndex> {
        Self::build_inner(hashes, entries_below, entry, name_off, false).map(|(idx, _)| idx)
    }

    /// [`NameIndex::build`], also returning every entry whose name's hash
    /// another entry has too (so that a lookup can stop at an entry whose
    /// name is its own: [`NameIndex::candidates_while`]). Two names of one
    /// hash count as repeats: a lookup of either then looks further, as it
    /// would without the mark. Costs a compare of hashes only where the
    /// tags agree: the repeats, and about one other pair in 30,000.
    pub fn build_finding_repeats(
        hashes: &[u64],
        name_off: impl Fn(usize) -> u32 + Sync,
    ) -> Result<(NameIndex, Vec<u32>)> {
        Self::build_inner(hashes, hashes.len(), |i| i, name_off, true)
    }

    fn build_inner(
        hashes: &[u64],
        entries_below: usize,
        entry: impl Fn(usize) -> usize + Sync,
        name_off: impl Fn(usize) -> u32 + Sync,
        find_repeats: bool,
    ) -> Result<(NameIndex, Vec<u32>)> {
        let n = hashes.len();
        let parts = if n >= PARALLEL_MIN { 2 } else { 1 };
        let mut idx = Self::empty(capacity_for(n), parts)
            .ok_or_else(|| Error::nomem("building a name index"))?;
        idx.idx_bits = idx.idx_bits.max(bits_for(entries_below + 1));
        let (part_len, idx_bits) = (idx.part_len, idx.idx_bits);
        let idx_mask = mask_of(idx_bits);
        let fill = |part: usize, slots: &mut [u64]| -> Option<Vec<u32>> {
            let len = slots.len();
            let mut repeats = Vec::new();
            for (i, &h) in hashes.iter().enumerate() {
                if Self::part_of(h, parts) != part {
                    continue;
                }
                let value = Self::slot_value(h, entry(i), name_off(i), idx_bits);
                let mut s = Self::position(h, len);
                let mut probes = 0;
                let mut repeated = false;
                while slots[s] != 0 {
                    let v = slots[s];
                    if find_repeats && (v ^ value) >> 32 & !idx_mask as u64 == 0 {
                        // Entries are their own index here (`entry(i) == i`).
                        let old = ((v >> 32) as u32 & idx_mask) - 1;
                        if hashes[old as usize] == h {
                            repeats.push(old);
                            repeated = true;
                        }
                    }
                    s = if s + 1 == len { 0 } else { s + 1 };
                    probes += 1;
                    if probes > MAX_PROBE {
                        return None;
                    }
                }
                if repeated {
                    repeats.push(entry(i) as u32);
                }
                slots[s] = value;
            }
            Some(repeats)
        };
        let slots = idx.owned_slots();
        let repeats = if parts == 1 {
            fill(0, slots)
        } else {
            let (lo, hi) = slots.split_at_mut(part_len);
            std::thread::scope(|s| {
                let other = s.spawn(|| fill(1, hi));
                let mine = fill(0, lo);
                match (mine, other.join().ok().flatten()) {
                    (Some(mut a), Some(b)) => {
                        a.extend(b);
                        Some(a)
                    }
                    _ => None,
                }
            })
        };
        match repeats {
            Some(r) => Ok((idx, r)),
            None => Err(crowded()),
        }
    }

    /// An empty single-part index with room for `expected` entries, to be
    /// filled by [`NameIndex::push`] while parsing (entries in order).
    pub fn incremental(expected: usize) -> NameIndex {
        Self::empty(capacity_for(expected), 1).expect("index allocation")
    }

    /// Adds entry `hashes.len() - 1` (name at `name_off`), whose hash is the
    /// last of `hashes`. Grows the table, rebuilding it with `name_offs`,
    /// when it would become more than 70% full. Calls `repeat` with every
    /// entry whose name's hash the new one has too, and then with the new
    /// one, if there were any (see [`NameIndex::build_finding_repeats`]).
    /// `false` when one name is repeated past [`MAX_PROBE`].
    #[inline]
    pub fn push(
        &mut self,
        hashes: &[u64],
        name_off: impl Fn(usize) -> u32,
        mut repeat: impl FnMut(usize),
    ) -> bool {
        let i = hashes.len() - 1;
        if capacity_for(i + 1) > self.slots.len() {
            *self = Self::incremental(2 * (i + 1));
            // Repeats among the entries before were reported already.
            let all_before = hashes[..i]
                .iter()
                .enumerate()
                .all(|(j, &h)| self.insert(h, j, name_off(j), None, &mut |_| {}));
            return all_before && self.insert(hashes[i], i, name_off(i), Some(hashes), &mut repeat);
        }
        self.insert(hashes[i], i, name_off(i), Some(hashes), &mut repeat)
    }

    /// Inserts entry `i`; with `hashes`, reports the repeats of its hash.
    #[inline(always)]
    fn insert(
        &mut self,
        h: u64,
        i: usize,
        off: u32,
        hashes: Option<&[u64]>,
        repeat: &mut impl FnMut(usize),
    ) -> bool {
        let (base, len) = self.part_range(h);
        let value = Self::slot_value(h, i, off, self.idx_bits);
        let idx_mask = self.idx_mask();
        let slots = self.owned_slots();
        let mut s = Self::position(h, len);
        let mut probes = 0;
        let mut repeated = false;
        loop {
            let v = slots[base + s];
            if v == 0 {
                break;
            }
            if let Some(hashes) = hashes {
                let old = ((v >> 32) as u32 & idx_mask) as usize - 1;
                if (v ^ value) >> 32 & !idx_mask as u64 == 0 && hashes[old] == h {
                    repeat(old);
                    repeated = true;
                }
            }
            s = if s + 1 == len { 0 } else { s + 1 };
            probes += 1;
            if probes > MAX_PROBE {
                return false;
            }
        }
        if repeated {
            repeat(i);
        }
        slots[base + s] = value;
        true
    }

    /// The slots while the index is built (it owns them then).
    fn owned_slots(&mut self) -> &mut Vec<u64> {
        self.slots
            .vec_mut()
            .expect("an index being built owns its slots")
    }

    /// Renumbers the entries: entry `i` becomes `new_of[i]`.
    pub fn renumber(&mut self, new_of: &[u32]) {
        let m = self.idx_mask() as u64;
        for v in self.owned_slots().iter_mut().filter(|v| **v != 0) {
            let hi = *v >> 32;
            let old = (hi & m) as usize - 1;
            *v = (((hi & !m) | (new_of[old] as u64 + 1)) << 32) | (*v & 0xffff_ffff);
        }
    }

    #[inline(always)]
    fn part_of(h: u64, parts: usize) -> usize {
        if parts == 2 {
            (h >> 63) as usize
        } else {
            0
        }
    }

    /// First slot and length of the part `h` belongs to.
    #[inline(always)]
    fn part_range(&self, h: u64) -> (usize, usize) {
        if Self::part_of(h, self.parts) == 0 {
            (0, self.part_len)
        } else {
            (self.part_len, self.slots.len() - self.part_len)
        }
    }

    /// The home slot within a part of `len` slots (bits 32..63 of the hash).
    #[inline(always)]
    fn position(h: u64, len: usize) -> usize {
        ((((h >> 32) as u32 & 0x7fff_ffff) as u64 * len as u64) >> 31) as usize
    }

    #[inline(always)]
    fn slot_value(h: u64, i: usize, off: u32, idx_bits: u32) -> u64 {
        let tag = if idx_bits >= 32 {
            0
        } else {
            (h as u32) << idx_bits
        };
        (((tag | (i as u32 + 1)) as u64) << 32) | off as u64
    }

    /// Calls `f(entry, name_off)` with every entry whose name has hash `h`
    /// (and, rarely, a few others whose tag collides: `f` must compare the
    /// name).
    #[inline]
    pub fn candidates(&self, h: u64, mut f: impl FnMut(usize, u32)) {
        self.candidates_while(h, |i, off| {
            f(i, off);
            true
        })
    }

    /// [`NameIndex::candidates`] until `f` returns false (it found the
    /// last entry of its name).
    #[inline]
    pub fn candidates_while(&self, h: u64, mut f: impl FnMut(usize, u32) -> bool) {
        let idx_mask = self.idx_mask();
        let want_tag = (Self::slot_value(h, 0, 0, self.idx_bits) >> 32) as u32 & !idx_mask;
        let (base, len) = self.part_range(h);
        let slots = &self.slots[base..base + len];
        let mut s = Self::position(h, len);
        // An index always has empty slots; the bound only guards one read
        // from a damaged snapshot against looping for ever.
        for _ in 0..len {
            let v = slots[s];
            if v == 0 {
                return;
            }
            let hi = (v >> 32) as u32;
            if hi & !idx_mask == want_tag
                && hi & idx_mask != 0
                && !f((hi & idx_mask) as usize - 1, v as u32)
            {
                return;
            }
            s = if s + 1 == len { 0 } else { s + 1 };
        }
    }

    /// What a snapshot saves: the slots, the parts, part 0's length and the
    /// bits of an entry number.
    pub fn parts(&self) -> (&Store<u64>, usize, usize, u32) {
        (&self.slots, self.parts, self.part_len, self.idx_bits)
    }

    /// The slots, shared with a thread that writes them while the index is
    /// used ([`Store::share`]).
    pub fn share_slots(&mut self) -> Store<u64> {
        self.slots.share()
    }

    /// An index from what [`NameIndex::parts`] gave (read back from a
    /// snapshot), if the numbers are consistent.
    pub fn from_parts(
        slots: Store<u64>,
        parts: usize,
        part_len: usize,
        idx_bits: u32,
    ) -> Option<NameIndex> {
        let ok = matches!(parts, 1 | 2)
            && !slots.is_empty()
            && (1..=32).contains(&idx_bits)
            && if parts == 1 {
                part_len == slots.len()
            } else {
                part_len > 0 && part_len < slots.len()
            };
        ok.then_some(NameIndex {
            slots,
            parts,
            part_len,
            idx_bits,
        })
    }

    #[inline(always)]
    fn idx_mask(&self) -> u32 {
        mask_of(self.idx_bits)
    }

    /// Bytes of memory held (0 for slots in a mapped snapshot).
    pub fn memory(&self) -> usize {
        self.slots.heap_bytes()
    }
}

/// The entry bits of a slot's high half, for `idx_bits` of them.
#[inline(always)]
fn mask_of(idx_bits: u32) -> u32 {
    if idx_bits >= 32 {
        u32::MAX
    } else {
        (1u32 << idx_bits) - 1
    }
}

/// Bits needed to store values below `n`.
fn bits_for(n: usize) -> u32 {
    usize::BITS - (n.max(2) - 1).leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_spreads_similar_names() {
        let names: Vec<String> = (0..20000)
            .map(|i| format!("__pfx_trace_event_raw_{i}"))
            .collect();
        let mut hs: Vec<u64> = names.iter().map(|n| hash(n.as_bytes())).collect();
        hs.sort_unstable();
        hs.dedup();
        assert_eq!(hs.len(), names.len());
        // Every length of tail handled, and length matters.
        assert_ne!(hash(b""), hash(b"\0"));
        assert_ne!(hash(b"abcdefgh"), hash(b"abcdefgh\0"));
        assert_ne!(hash(b"abcdefgh"), hash(b"abcdefghabcdefgh"));
    }

    #[test]
    fn checksum_sees_every_byte_and_the_length() {
        let base: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        let sum = checksum(&base);
        for at in [0, 1, 7, 8, 31, 32, 33, 500, 990, 999] {
            for bit in [0x01, 0x80] {
                let mut b = base.clone();
                b[at] ^= bit;
                assert_ne!(checksum(&b), sum, "byte {at} bit {bit:#x}");
            }
        }
        for len in 0..base.len() {
            assert_ne!(checksum(&base[..len]), sum, "{len}");
        }
        // Words swapped between lanes change it too.
        let mut b = base.clone();
        b.copy_within(0..8, 8);
        b[..8].copy_from_slice(&base[8..16]);
        assert_ne!(checksum(&b), sum);
        assert_ne!(checksum(&[0u8; 64]), checksum(&[0u8; 65]));
    }

    #[test]
    fn hash_cstr_matches_hash_and_a_byte_scan() {
        // Every length around the word size, the name at every offset of a
        // longer buffer, with and without a NUL, runs of `_` at every place.
        let mut names: Vec<Vec<u8>> = Vec::new();
        for len in 0..40usize {
            names.push((0..len).map(|i| b'a' + (i % 26) as u8).collect());
            for at in 0..len.saturating_sub(2) {
                for run in 1..=4 {
                    let mut n: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                    for b in n.iter_mut().skip(at).take(run) {
                        *b = b'_';
                    }
                    names.push(n);
                }
            }
        }
        for name in &names {
            let want_run = name.windows(3).any(|w| w == b"___");
            for junk in [&b""[..], b"\0", b"\0___", b"\0abc___xyz\0", b"_"] {
                let mut buf = name.clone();
                buf.extend_from_slice(junk);
                let (len, h, run) = hash_cstr(&buf);
                let nul = junk.first() == Some(&0);
                let want = if nul { name.clone() } else { buf.clone() };
                assert_eq!(len, want.len(), "{buf:?}");
                assert_eq!(h, hash(&want), "{buf:?}");
                assert_eq!(run, want.windows(3).any(|w| w == b"___"), "{buf:?}");
                if nul {
                    assert_eq!(run, want_run);
                }
            }
        }
    }

    #[test]
    fn incremental_hasher_matches() {
        for len in 0..30 {
            let name: Vec<u8> = (0..len as u8).map(|b| b'a' + b).collect();
            let mut h = Hasher::new();
            let mut i = 0;
            while i + 8 <= name.len() {
                h.word(u64::from_le_bytes(name[i..i + 8].try_into().unwrap()));
                i += 8;
            }
            let mut tail = [0u8; 8];
            tail[..name.len() - i].copy_from_slice(&name[i..]);
            assert_eq!(
                h.finish(u64::from_le_bytes(tail), name.len()),
                hash(&name),
                "{len}"
            );
        }
    }

    #[test]
    fn index_finds_every_entry_of_every_name() {
        let names: Vec<String> = (0..5000).map(|i| format!("name{}", i % 1700)).collect();
        let hs: Vec<u64> = names.iter().map(|n| hash(n.as_bytes())).collect();
        let idx = NameIndex::build(&hs, |i| i as u32 * 3).unwrap();
        for probe in ["name0", "name1699", "name42", "absent"] {
            let mut got = vec![];
            idx.candidates(hash(probe.as_bytes()), |i, off| {
                assert_eq!(off, i as u32 * 3);
                if names[i] == probe {
                    got.push(i)
                }
            });
            got.sort();
            let want: Vec<usize> = (0..names.len()).filter(|&i| names[i] == probe).collect();
            assert_eq!(got, want, "{probe}");
        }
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(2), 1);
        assert_eq!(bits_for(3), 2);
        assert_eq!(bits_for(122_166), 17);
        assert!(capacity_for(122_166) * 7 >= 122_166 * 10);
    }

    #[test]
    fn parallel_build_finds_everything() {
        let n = PARALLEL_MIN * 2 + 17;
        let names: Vec<String> = (0..n).map(|i| format!("sym{}", i % (n / 3))).collect();
        let hs: Vec<u64> = names.iter().map(|n| hash(n.as_bytes())).collect();
        let idx = NameIndex::build(&hs, |i| i as u32).unwrap();
        for k in [0usize, 1, 77, n / 3 - 1] {
            let probe = format!("sym{k}");
            let mut got = vec![];
            idx.candidates(hash(probe.as_bytes()), |i, _| {
                if names[i] == probe {
                    got.push(i)
                }
            });
            got.sort();
            let want: Vec<usize> = (0..n).filter(|&i| names[i] == probe).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn incremental_index_grows_and_renumbers() {
        let names: Vec<String> = (0..3000).map(|i| format!("n{}", i % 1000)).collect();
        let mut hs = Vec::new();
        let mut idx = NameIndex::incremental(10);
        for n in &names {
            hs.push(hash(n.as_bytes()));
            idx.push(&hs, |i| i as u32 + 100, |_| {});
        }
        let find = |idx: &NameIndex, names: &[String], probe: &str| {
            let mut got = vec![];
            idx.candidates(hash(probe.as_bytes()), |i, _| {
                if names[i] == probe {
                    got.push(i)
                }
            });
            got.sort();
            got
        };
        assert_eq!(find(&idx, &names, "n7"), vec![7, 1007, 2007]);
        let mut offs = vec![];
        idx.candidates(hash(b"n7"), |_, off| offs.push(off));
        offs.sort();
        assert_eq!(
            offs,
            vec![107, 1107, 2107],
            "the name offsets travel with the entries"
        );
        // Reverse the order of the entries.
        let new_of: Vec<u32> = (0..3000u32).map(|i| 2999 - i).collect();
        idx.renumber(&new_of);
        let reversed: Vec<String> = names.iter().rev().cloned().collect();
        assert_eq!(find(&idx, &reversed, "n7"), vec![992, 1992, 2992]);
    }

    #[test]
    fn empty_index() {
        let idx = NameIndex::build(&[], |_| 0).unwrap();
        let mut n = 0;
        idx.candidates(hash(b"x"), |_, _| n += 1);
        assert_eq!(n, 0);
    }
}
