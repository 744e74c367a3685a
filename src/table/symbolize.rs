//! Address to symbol: a three-level search for the highest symbol at or
//! below an address, then the choice among the names at that address.

use super::{Symbol, Table, FANOUT, SAMPLE};
use crate::error::{Error, Result};

/// How far back symbolization looks for an enclosing symbol when the nearest
/// one below an address has an exact size that ends before it.
const ENCLOSING_LOOKBACK: usize = 16;

impl Table {
    /// The symbol containing `addr` and the offset into it.
    ///
    /// The candidate is the highest symbol at or below `addr`; among several
    /// names at that address the choice is: global (upper-case type) before
    /// local, then not a `__pfx_` padding symbol, then kernel order; with
    /// exact sizes, a symbol whose extent contains `addr` first. Absolute
    /// symbols never answer. `KSYM_ERR_NOT_FOUND` below the first symbol, past
    /// the last symbol of a region (a loadable module, a pseudo-module, the
    /// core image), and, with exact sizes, in a gap between symbols.
    ///
    /// A table from a snapshot answers an address inside the core kernel
    /// or a loadable module itself; any other (where BPF programs,
    /// trampolines and ftrace's live) from a fresh read.
    pub fn symbolize(&self, addr: u64) -> Result<(Symbol<'_>, u64)> {
        let t = self.route(|| !self.covers(addr))?;
        t.symbolize_here(addr)
    }

    /// Is `addr` between the lowest and highest symbol of the core kernel
    /// or of a loadable module? (Asked of a table from a snapshot only.)
    pub(super) fn covers(&self, addr: u64) -> bool {
        let c = &self.covered;
        let i = c.partition_point(|&(lo, _)| lo <= addr);
        i > 0 && addr <= c[i - 1].1
    }

    fn symbolize_here(&self, addr: u64) -> Result<(Symbol<'_>, u64)> {
        self.answer(self.count_at_or_below(addr), addr)
    }

    /// The answer for `addr`, `p` entries being at or below it
    /// ([`Table::count_at_or_below`]): the one home of the rules above, for
    /// one address and for stacks.
    #[inline]
    pub(super) fn answer(&self, p: usize, addr: u64) -> Result<(Symbol<'_>, u64)> {
        if p == 0 {
            return Err(Error::not_found(format!(
                "{addr:#x} is below the lowest symbol of {}",
                self.info.source
            )));
        }
        let top = self.n_abs + p - 1;
        let best = self.best_at(top, addr);
        let m = self.entries[best];
        let off = addr - self.entries[best].addr;
        let size = self.size_of(best);
        if m.exact() {
            if off < size || (off == 0 && size == 0) {
                return Ok((self.symbol(best, None), off));
            }
            if let Some(i) = self.enclosing(top, addr) {
                return Ok((self.symbol(i, None), addr - self.entries[i].addr));
            }
            let s = self.symbol(best, None);
            return Err(Error::not_found(format!(
                "{addr:#x} is in a gap after {}`{}+{size:#x} (exact size)",
                s.module.to_string_lossy(),
                s.name.to_string_lossy()
            )));
        }
        if size == 0 && off > 0 {
            let s = self.symbol(best, None);
            return Err(Error::not_found(format!(
                "{addr:#x} is past the last symbol of {} ({} at {:#x})",
                s.module.to_string_lossy(),
                s.name.to_string_lossy(),
                s.addr
            )));
        }
        Ok((self.symbol(best, None), off))
    }

    /// How many non-absolute entries have an address `<= addr` (the index,
    /// from `n_abs`, of the first one above it). Each level narrows to one
    /// block of the level below, whose keys are counted rather than
    /// bisected, so its cache lines load in parallel.
    #[inline]
    pub(super) fn count_at_or_below(&self, addr: u64) -> usize {
        let t = self.top.partition_point(|&x| x <= addr);
        if t == 0 {
            return 0;
        }
        self.count_in_blocks(t - 1, addr)
    }

    /// [`Table::count_at_or_below`] below the top level: `block` is the
    /// block of the sample that holds the answer (its first key is at or
    /// below `addr`, the next block's first above it).
    #[inline(always)]
    fn count_in_blocks(&self, block: usize, addr: u64) -> usize {
        self.entries_count(self.sample_count(block, addr), addr)
    }

    /// The sample level: how many samples are at or below `addr`, `block`
    /// being the sample block that holds the answer.
    #[inline(always)]
    pub(super) fn sample_count(&self, block: usize, addr: u64) -> usize {
        let lo = block * FANOUT;
        lo + count_sorted::<FANOUT, _>(self.sample.get(lo..).unwrap_or_default(), addr, |&x| x)
    }

    /// The entries level: how many entries are at or below `addr`, `s`
    /// samples being so.
    #[inline(always)]
    pub(super) fn entries_count(&self, s: usize, addr: u64) -> usize {
        let a = self.entries.get(self.n_abs..).unwrap_or_default();
        let lo = (s - 1) * SAMPLE;
        lo + count_sorted::<SAMPLE, _>(a.get(lo..).unwrap_or_default(), addr, |e| e.addr)
    }

    /// The preferred entry among those at `addrs[top]`.
    fn best_at(&self, top: usize, addr: u64) -> usize {
        let at = self.entries[top].addr;
        let mut lo = top;
        while lo > self.n_abs && self.entries[lo - 1].addr == at {
            lo -= 1;
        }
        if lo == top {
            return top;
        }
        (lo..=top)
            .min_by_key(|&i| {
                let m = self.entries[i];
                let outside =
                    m.exact() && addr - at >= m.size as u64 && !(addr == at && m.size == 0);
                let local = self.ty(i).is_ascii_lowercase();
                let pfx = self.name_bytes(i).starts_with(b"__pfx_");
                (outside, local, pfx, i)
            })
            .unwrap_or(top)
    }

    /// With exact sizes: a symbol below `top` whose extent contains `addr`.
    fn enclosing(&self, top: usize, addr: u64) -> Option<usize> {
        (self.n_abs..top)
            .rev()
            .take(ENCLOSING_LOOKBACK)
            .filter(|&i| {
                let m = self.entries[i];
                m.exact() && addr - self.entries[i].addr < m.size as u64
            })
            .min_by_key(|&i| {
                let local = self.ty(i).is_ascii_lowercase();
                (std::cmp::Reverse(self.entries[i].addr), local, i)
            })
    }
}

/// How many of the first `N` keys (fewer at the end) are `<= addr`, the
/// first being so: sorted, so a full block is bisected without a branch
/// (`N` a power of two; a block of 16 in four steps on one or two cache
/// lines), a short last block counted.
#[inline(always)]
fn count_sorted<const N: usize, T>(keys: &[T], addr: u64, key: impl Fn(&T) -> u64) -> usize {
    match keys.first_chunk::<N>() {
        Some(k) => {
            let mut c = 1;
            let mut step = N / 2;
            while step > 0 {
                // `c + step - 1 <= N - 1`: c is at most N - 2 * step + 1.
                c += step * (key(&k[c + step - 1]) <= addr) as usize;
                step /= 2;
            }
            c
        }
        None => keys.iter().filter(|k| key(k) <= addr).count(),
    }
}
