//! The steps that finish a table once its lines are parsed: built-in
//! module attribution (ranges, kallmodsyms), exact sizes from a vmlinux
//! ELF, size estimates and per-module counts.

use std::path::Path;

use super::parse::{Entry, EXACT_BIT, SIZE_FAR};
use super::{ModuleFilter, Table};
use crate::error::{Error, Result};
use crate::formats::ranges::Ranges;
use crate::formats::vmlinux::ElfSymbols;
use crate::rules::attribution::{self, BuiltinSpans};
use crate::rules::modules::{ModuleSet, OwnerId, VMLINUX_OWNER};

impl Table {
    /// The entries, while the table is being built (it owns them then; a
    /// table from a snapshot is never changed).
    fn entries_mut(&mut self) -> &mut Vec<super::parse::Entry> {
        self.entries
            .vec_mut()
            .expect("a table being built owns its entries")
    }

    /// Address of the first core-kernel symbol named `name` (section anchors,
    /// `_text`).
    pub(crate) fn core_addr(&self, name: &[u8]) -> Option<u64> {
        let mut best: Option<usize> = None;
        self.for_each_named(name, ModuleFilter::Any, |i| {
            if self.modules.region(self.entries[i].owner) == 0
                && i >= self.n_abs
                && best.is_none_or(|b| i < b)
            {
                best = Some(i);
            }
        });
        best.map(|i| self.entries[i].addr)
    }

    /// Attributes the core symbols inside each built-in range to its
    /// modules ([`BuiltinSpans`]: the first range in file order claims a
    /// symbol).
    pub(super) fn apply_ranges(&mut self, ranges: &Ranges) {
        let anchors: Vec<(&[u8], Option<u64>)> = BuiltinSpans::anchors(ranges)
            .map(|a| (a, self.core_addr(a)))
            .collect();
        let spans = BuiltinSpans::new(ranges, &mut self.modules, |a| {
            anchors
                .iter()
                .find(|(n, _)| *n == a)
                .and_then(|(_, addr)| *addr)
        });
        self.info
            .diagnostics
            .extend(spans.diagnostics.iter().cloned());
        let mut claimed = 0usize;
        for span in &spans.spans {
            // The first entry at or above `lo`, through the cache-resident levels.
            let mut i = self.n_abs
                + match span.lo {
                    0 => 0,
                    lo => self.count_at_or_below(lo - 1),
                };
            while i < self.len() && self.entries[i].addr < span.hi {
                if self.entries[i].owner == VMLINUX_OWNER {
                    self.entries_mut()[i].owner = span.owner;
                    claimed += 1;
                }
                i += 1;
            }
        }
        if claimed == 0 && !ranges.sections.is_empty() {
            self.info.diagnostics.push(format!(
                "{}: no symbol of the table falls in any built-in range",
                ranges.path.display()
            ));
        }
    }

    /// Exact sizes from a vmlinux symbol table, after checking that it is the
    /// running kernel's.
    pub(super) fn apply_vmlinux_sizes(&mut self, elf: &ElfSymbols, path: &Path) -> Result<()> {
        let shown = path.display();
        let Some(k_text) = self.core_addr(b"_text") else {
            return Err(Error::invalid(format!(
                "{shown}: cannot apply vmlinux sizes: `_text` is not in {}",
                self.info.source
            )));
        };
        let Some(e_text) = elf.text else {
            return Err(Error::format(format!(
                "{shown}: no `_text` symbol in the ELF symbol table"
            )));
        };
        let slide = k_text.wrapping_sub(e_text);
        let mut checked = 0usize;
        let mut agree = 0usize;
        let mut updates: Vec<(usize, u32)> = Vec::new();
        for s in &elf.symbols {
            let want = s.value.wrapping_add(slide);
            let mut found_name = false;
            let mut hit = None;
            self.for_each_named(&s.name, ModuleFilter::Any, |i| {
                if self.modules.region(self.entries[i].owner) == 0 {
                    found_name = true;
                    if self.entries[i].addr == want && hit.is_none() {
                        hit = Some(i);
                    }
                }
            });
            if found_name && s.global {
                checked += 1;
                if hit.is_some() {
                    agree += 1;
                }
            }
            if let Some(i) = hit {
                if s.size > 0 {
                    updates.push((i, s.size.min(SIZE_FAR as u64 - 1) as u32));
                }
            }
        }
        // Unique global names are the reliable witnesses; a mismatch on more
        // than 2% of them is another kernel (or another build of it).
        if checked == 0 || agree * 100 < checked * 98 {
            return Err(Error::invalid(format!(
                "{shown} does not match {}: only {agree} of {checked} global symbols agree \
                 (KASLR slide {slide:#x} from `_text`); is it the running kernel's vmlinux?",
                self.info.source
            )));
        }
        let entries = self.entries_mut();
        for (i, size) in updates {
            entries[i].size = size;
            entries[i].len |= EXACT_BIT;
        }
        Ok(())
    }

    /// Size estimates for entries without an exact size (distance to the
    /// next distinct address in the same region, 0 for a region's last
    /// symbol, and never past the next symbol of any region: from Linux
    /// 6.4 a module's text, data and rodata are separate allocations that
    /// other modules' sit between), and the per-module counts and address
    /// ranges.
    pub(super) fn finish_sizes_and_modules(&mut self) {
        const NONE: u64 = u64::MAX;
        let owners = self.modules.owner_count();
        let region: Vec<usize> = (0..owners)
            .map(|o| self.modules.region(o as OwnerId))
            .collect();
        // Per region, walking down: the lowest address seen so far and the
        // next distinct one above it (NONE: not yet).
        let mut cur = vec![NONE; self.modules.len()];
        let mut next = vec![NONE; self.modules.len()];
        // The same over every region.
        let (mut cur_any, mut next_any) = (NONE, NONE);
        // Per owner: symbols, lowest and highest address.
        let mut per_owner: Vec<(usize, u64, u64)> = vec![(0, u64::MAX, 0); owners];
        let n_abs = self.n_abs;
        let entries = self
            .entries
            .vec_mut()
            .expect("a table being built owns its entries");
        for (i, e) in entries.iter_mut().enumerate().rev() {
            let st = &mut per_owner[e.owner as usize];
            st.0 += 1;
            if i < n_abs {
                continue;
            }
            let a = e.addr;
            st.1 = st.1.min(a);
            st.2 = st.2.max(a);
            let r = region[e.owner as usize];
            if a != cur[r] {
                next[r] = cur[r];
                cur[r] = a;
            }
            if a != cur_any {
                next_any = cur_any;
                cur_any = a;
            }
            if !e.exact() {
                e.size = match next[r] {
                    NONE => 0,
                    nx => u32::try_from(nx.min(next_any) - a).unwrap_or(SIZE_FAR),
                };
            }
        }
        for (o, &(count, lo, hi)) in per_owner.iter().enumerate() {
            for mid in self.modules.owner_modules(o as OwnerId).to_vec() {
                let md = self.modules.module_mut(mid);
                md.symbols += count;
                if lo <= hi {
                    if md.lo == 0 && md.hi == 0 {
                        (md.lo, md.hi) = (lo, hi);
                    } else {
                        md.lo = md.lo.min(lo);
                        md.hi = md.hi.max(hi);
                    }
                }
            }
        }
    }
}

/// In kallmodsyms, module names also mark built-in modules
/// ([`attribution::mark_builtin_in_image`]).
pub(super) fn classify_kallmodsyms_modules(entries: &[Entry], buf: &[u8], modules: &mut ModuleSet) {
    let find = |name: &[u8]| {
        entries.iter().find_map(|m| {
            let off = m.name_off as usize;
            (m.owner == VMLINUX_OWNER && &buf[off..off + m.name_len()] == name).then_some(m.addr)
        })
    };
    let (Some(text), Some(end)) = (find(b"_text"), find(b"_end")) else {
        return;
    };
    attribution::mark_builtin_in_image(
        modules,
        (text, end),
        entries.iter().map(|e| (e.owner, e.addr)),
    );
}
