//! Built-in modules: which core-kernel symbols belong to a module built
//! into the image.
//!
//! Two sources:
//! - `modules.builtin.ranges` ([`BuiltinSpans`]): address ranges of the
//!   image, each section's base found from its anchor symbol's address (so
//!   KASLR does not matter). A core symbol inside a range belongs to its
//!   modules (one or several, when they share an object file); ranges
//!   claim symbols in file order.
//! - /proc/kallmodsyms ([`mark_builtin_in_image`]): the module column names
//!   built-in modules too; a module whose symbols lie inside the kernel
//!   image (`_text` to `_end`) is built in.

use super::modules::{ModId, ModuleKind, ModuleSet, OwnerId, VMLINUX_OWNER};
use super::query::normalize_module;
use crate::formats::ranges::Ranges;

/// One range of the image and the owner its symbols get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub lo: u64,
    /// Exclusive.
    pub hi: u64,
    pub owner: OwnerId,
}

/// A ranges file placed at the running kernel's addresses.
#[derive(Clone, Debug, Default)]
pub struct BuiltinSpans {
    /// In file order (the order in which they claim symbols).
    pub spans: Vec<Span>,
    /// Indices into `spans`, by `lo`; `None` when spans overlap (then
    /// [`BuiltinSpans::owner_at`] looks at them in file order).
    by_lo: Option<Vec<u32>>,
    /// Sections skipped, and why.
    pub diagnostics: Vec<String>,
}

impl BuiltinSpans {
    /// The anchor symbols whose addresses [`BuiltinSpans::new`] needs.
    pub fn anchors(r: &Ranges) -> impl Iterator<Item = &[u8]> {
        r.sections
            .iter()
            .map(|s| s.anchor.as_slice())
            .filter(|a| !a.is_empty())
    }

    /// Places `r` at the addresses of its anchors (`anchor(name)`: the
    /// address of the first core-kernel symbol of that name), adding its
    /// modules to `modules` as built-in ones. A section whose anchor is not
    /// found is skipped, with a diagnostic.
    pub fn new(
        r: &Ranges,
        modules: &mut ModuleSet,
        mut anchor: impl FnMut(&[u8]) -> Option<u64>,
    ) -> BuiltinSpans {
        // Named as the kernel names modules (KBUILD_MODNAME: `-` as `_`).
        let owners: Vec<OwnerId> = r
            .groups
            .iter()
            .map(|g| {
                let mods: Vec<ModId> = g
                    .iter()
                    .filter_map(|name| {
                        modules
                            .intern(&normalize_module(name), ModuleKind::Builtin)
                            .ok()
                    })
                    .collect();
                modules.owner_of_set(&mods).unwrap_or(VMLINUX_OWNER)
            })
            .collect();
        let mut out = BuiltinSpans::default();
        for sec in &r.sections {
            let Some(anchor_addr) = anchor(&sec.anchor) else {
                out.diagnostics.push(format!(
                    "{}: section {} skipped: its anchor `{}` is not in the table",
                    r.path.display(),
                    String::from_utf8_lossy(&sec.name),
                    String::from_utf8_lossy(&sec.anchor)
                ));
                continue;
            };
            let base = anchor_addr.wrapping_sub(sec.anchor_offset);
            out.spans.extend(sec.ranges.iter().map(|range| Span {
                lo: base.wrapping_add(range.start),
                hi: base.wrapping_add(range.end),
                owner: owners[range.group],
            }));
        }
        let mut order: Vec<u32> = (0..out.spans.len() as u32).collect();
        order.sort_by_key(|&i| out.spans[i as usize].lo);
        let disjoint = order
            .windows(2)
            .all(|w| out.spans[w[0] as usize].hi <= out.spans[w[1] as usize].lo);
        out.by_lo = disjoint.then_some(order);
        out
    }

    /// The owner a core symbol at `addr` gets: the first span (in file
    /// order) that contains it, `None` outside every span.
    pub fn owner_at(&self, addr: u64) -> Option<OwnerId> {
        let inside = |s: &Span| s.lo <= addr && addr < s.hi;
        match &self.by_lo {
            Some(order) => {
                let k = order.partition_point(|&i| self.spans[i as usize].lo <= addr);
                let s = &self.spans[*order.get(k.checked_sub(1)?)? as usize];
                inside(s).then_some(s.owner)
            }
            None => self.spans.iter().find(|s| inside(s)).map(|s| s.owner),
        }
    }
}

/// In /proc/kallmodsyms the module column also names built-in modules: a
/// module with a symbol inside the kernel image (`image`: the addresses of
/// `_text` and `_end`) is built in. `symbols` are the (owner, address) of
/// the table's symbols.
pub fn mark_builtin_in_image(
    modules: &mut ModuleSet,
    image: (u64, u64),
    symbols: impl Iterator<Item = (OwnerId, u64)>,
) {
    let mut seen = vec![false; modules.owner_count()];
    for (o, a) in symbols {
        if o != VMLINUX_OWNER && !seen[o as usize] && (image.0..=image.1).contains(&a) {
            seen[o as usize] = true;
            for &mid in modules.owner_modules(o).to_vec().iter() {
                let md = modules.module_mut(mid);
                if md.kind == ModuleKind::Loadable {
                    md.kind = ModuleKind::Builtin;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn ranges(text: &str) -> Ranges {
        Ranges::parse(text.as_bytes(), Path::new("r")).unwrap()
    }

    #[test]
    fn spans_follow_their_anchor() {
        let r = ranges(
            ".text 00000000-00000000 = _text\n\
             .text 00000100-00000200 mod-a\n\
             .text 00000200-00000300 mod_a mod_b\n\
             .data 00000010-00000010 = _sdata\n\
             .data 00000020-00000040 mod_b\n\
             .bss 00000000-00000000 = _missing\n\
             .bss 00000000-00000010 mod_c\n",
        );
        let mut m = ModuleSet::new();
        let anchors: Vec<&[u8]> = BuiltinSpans::anchors(&r).collect();
        assert_eq!(anchors, [&b"_text"[..], b"_sdata", b"_missing"]);
        let s = BuiltinSpans::new(&r, &mut m, |a| match a {
            b"_text" => Some(0xffffffff81000000),
            b"_sdata" => Some(0xffffffff82000010),
            _ => None,
        });
        assert_eq!(s.spans.len(), 3);
        assert_eq!(s.diagnostics.len(), 1);
        assert!(s.diagnostics[0].contains("_missing"), "{:?}", s.diagnostics);
        let a = m.find(b"mod_a").unwrap();
        let b = m.find(b"mod_b").unwrap();
        assert_eq!(m.module(a).kind, ModuleKind::Builtin);
        assert!(
            m.find(b"mod_c").is_some(),
            "interned even if its section is skipped"
        );
        let owner = |addr| s.owner_at(addr).map(|o| m.owner_modules(o).to_vec());
        assert_eq!(owner(0xffffffff810000ff), None);
        assert_eq!(owner(0xffffffff81000100), Some(vec![a]));
        assert_eq!(owner(0xffffffff81000200), Some(vec![a, b]));
        assert_eq!(owner(0xffffffff81000300), None);
        // .data's base is _sdata minus the anchor's offset 0x10.
        assert_eq!(owner(0xffffffff82000020), Some(vec![b]));
        assert_eq!(owner(0xffffffff8200003f), Some(vec![b]));
        assert_eq!(owner(0), None);
        assert_eq!(owner(u64::MAX), None);
    }

    #[test]
    fn overlapping_spans_claim_in_file_order() {
        let r = ranges(
            ".text 00000000-00000000 = _text\n\
             .text 00000100-00000200 first\n\
             .init 00000000-00000000 = _text\n\
             .init 00000180-00000280 second\n",
        );
        let mut m = ModuleSet::new();
        let s = BuiltinSpans::new(&r, &mut m, |_| Some(0x1000));
        let first = m.owner_of(m.find(b"first").unwrap()).unwrap();
        let second = m.owner_of(m.find(b"second").unwrap()).unwrap();
        assert_eq!(s.owner_at(0x1190), Some(first));
        assert_eq!(s.owner_at(0x1210), Some(second));
    }

    #[test]
    fn kallmodsyms_modules_inside_the_image_are_built_in() {
        let mut m = ModuleSet::new();
        let inside = m.owner_of_column(b"[ext4]").unwrap();
        let outside = m.owner_of_column(b"[xfs]").unwrap();
        let pseudo = m.owner_of_column(b"[bpf]").unwrap();
        mark_builtin_in_image(
            &mut m,
            (0x1000, 0x2000),
            [(inside, 0x1800), (outside, 0x9000), (pseudo, 0x1900)].into_iter(),
        );
        let kind = |n: &[u8]| m.module(m.find(n).unwrap()).kind;
        assert_eq!(kind(b"ext4"), ModuleKind::Builtin);
        assert_eq!(kind(b"xfs"), ModuleKind::Loadable);
        assert_eq!(kind(b"bpf"), ModuleKind::Pseudo);
    }
}
