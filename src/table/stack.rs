//! Stacks: many addresses symbolized in one call, each answered exactly as
//! [`Table::symbolize`] answers it. The addresses go through the search in
//! groups, level by level, with the next level's cache lines fetched for
//! the whole group before any is read: the misses of a group overlap
//! instead of following one another (a 32-frame kernel stack touches 32
//! unrelated places of a 9 MB table).

use super::{Symbol, Table, FANOUT, SAMPLE};
use crate::base::bytes::prefetch_all;
use crate::error::Result;

/// Addresses in flight at once (the loads a core keeps outstanding).
const GROUP: usize = 16;

impl Table {
    /// Symbolizes every address of `addrs` (any order, repeats allowed),
    /// each as [`Table::symbolize`] would: `f(i, answer)` for each `i` in
    /// order, errors included (one address's error is its own).
    pub fn symbolize_stack_with<'t>(
        &'t self,
        addrs: &[u64],
        mut f: impl FnMut(usize, Result<(Symbol<'t>, u64)>),
    ) {
        // A table from a snapshot: an address outside the core kernel and
        // loadable modules, or any address when the snapshot's checksum
        // fails, is answered by the fresh read (as `symbolize` does).
        let here = |a: u64| match &self.fresh {
            None => true,
            Some(fresh) => fresh.intact(self) && self.covers(a),
        };
        for (g, group) in addrs.chunks(GROUP).enumerate() {
            let first = g * GROUP;
            // Top level (cache-resident): the sample block of each address.
            let mut block = [usize::MAX; GROUP];
            for (k, &a) in group.iter().enumerate() {
                if !here(a) {
                    continue;
                }
                let t = self.top.partition_point(|&x| x <= a);
                if t > 0 {
                    block[k] = t - 1;
                    let lo = (t - 1) * FANOUT;
                    if let Some(s) = self.sample.get(lo..lo + FANOUT) {
                        prefetch_all(s);
                    }
                } else {
                    block[k] = usize::MAX - 1;
                }
            }
            // Sample level: the entries block of each; fetch its lines.
            let entries = self.entries.get(self.n_abs..).unwrap_or_default();
            let mut count = [0usize; GROUP];
            for (k, &a) in group.iter().enumerate() {
                if block[k] >= usize::MAX - 1 {
                    continue;
                }
                let s = self.sample_count(block[k], a);
                count[k] = s;
                if let Some(e) = entries.get((s - 1) * SAMPLE..(s - 1) * SAMPLE + SAMPLE) {
                    prefetch_all(e);
                }
            }
            // Entries level and the answers.
            for (k, &a) in group.iter().enumerate() {
                let answer = match block[k] {
                    usize::MAX => self.symbolize(a),
                    b if b == usize::MAX - 1 => self.answer(0, a),
                    _ => self.answer(self.entries_count(count[k], a), a),
                };
                f(first + k, answer);
            }
        }
    }

    /// [`Table::symbolize_stack_with`] into a vector: `out[i]` answers
    /// `addrs[i]`.
    pub fn symbolize_stack(&self, addrs: &[u64]) -> Vec<Result<(Symbol<'_>, u64)>> {
        let mut out = Vec::with_capacity(addrs.len());
        self.symbolize_stack_with(addrs, |_, r| out.push(r));
        out
    }
}
