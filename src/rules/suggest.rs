//! Near matches for a query that found nothing: compiler-suffixed
//! variants of the name (`foo.isra.0`, `foo.constprop.0`, `foo.part.0`,
//! `foo.cold`, `foo.llvm.123`), the name without its suffix, and the same
//! name in other modules.
//!
//! [`Suggest`] works from any stream of symbols: the table offers it what
//! its name index finds, a streaming pass every line whose name
//! [`Suggest::wants`]. The choice and the order depend only on the symbols
//! offered, so both give the same suggestions.

use super::answer::ModuleFilter;
use super::modules::{ModuleSet, OwnerId};
use super::query::Query;

/// How many near matches a message lists.
pub const MAX_SUGGESTIONS: usize = 5;

/// Collects the near matches of one query.
#[derive(Clone, Debug)]
pub struct Suggest<'q> {
    q: Query<'q>,
    /// The name up to its first `.` (the whole name if it has none).
    base: &'q [u8],
    /// (name, address, owner) of what was offered and wanted.
    seen: Vec<(Vec<u8>, u64, OwnerId)>,
}

impl<'q> Suggest<'q> {
    pub fn new(q: Query<'q>) -> Suggest<'q> {
        let base = match memchr::memchr(b'.', q.name) {
            Some(p) if p > 0 => &q.name[..p],
            _ => q.name,
        };
        Suggest {
            q,
            base,
            seen: Vec::new(),
        }
    }

    /// The query's name without its compiler suffix.
    pub fn base(&self) -> &'q [u8] {
        self.base
    }

    /// Is a symbol named `name` a possible near match: the query's name,
    /// its base, or its base with a suffix?
    #[inline]
    pub fn wants(&self, name: &[u8]) -> bool {
        name == self.q.name || self.is_variant(name)
    }

    /// The base, or the base and a `.suffix`.
    #[inline]
    fn is_variant(&self, name: &[u8]) -> bool {
        let b = self.base;
        name.starts_with(b) && (name.len() == b.len() || name[b.len()] == b'.')
    }

    /// Offers a symbol (kept if wanted; the same one offered twice counts
    /// once).
    pub fn offer(&mut self, name: &[u8], addr: u64, owner: OwnerId) {
        if self.wants(name)
            && !self
                .seen
                .iter()
                .any(|(n, a, o)| (n.as_slice(), *a, *o) == (name, addr, owner))
        {
            self.seen.push((name.to_vec(), addr, owner));
        }
    }

    /// Changes the owner of every symbol kept (built-in attribution known
    /// only after a streaming pass).
    pub fn reattribute(&mut self, mut owner: impl FnMut(OwnerId, u64) -> OwnerId) {
        for (_, addr, o) in &mut self.seen {
            *o = owner(*o, *addr);
        }
    }

    /// The near matches, as a message shows them (`` `name` `` or
    /// `` `module`name` `` for a qualified query), at most
    /// [`MAX_SUGGESTIONS`]. First the base and the suffixed variants among
    /// the symbols the filter takes; then, for a qualified query, the name
    /// and its suffixed variants in every module. Within each, the base
    /// (or the name) first, then by address.
    pub fn finish(self, modules: &ModuleSet, filter: ModuleFilter) -> Vec<String> {
        let qualified = self.q.module.is_some();
        let base_len = self.base.len();
        // (tier, not the base or the name itself, address, text)
        let mut ranked: Vec<(u8, bool, u64, String)> = Vec::new();
        for (name, addr, owner) in &self.seen {
            let is_query = name.as_slice() == self.q.name;
            let suffixed = name.len() > base_len;
            let tier = if !is_query && filter.accepts(modules, *owner) {
                0
            } else if qualified && (is_query || suffixed) {
                1
            } else {
                continue;
            };
            let shown = String::from_utf8_lossy(name);
            let text = if qualified {
                let m = modules.name(modules.primary(*owner)).to_string_lossy();
                format!("`{m}`{shown}`")
            } else {
                format!("`{shown}`")
            };
            ranked.push((tier, suffixed, *addr, text));
        }
        ranked.sort();
        let mut out: Vec<String> = Vec::new();
        for (_, _, _, text) in ranked {
            if out.len() == MAX_SUGGESTIONS {
                break;
            }
            if !out.contains(&text) {
                out.push(text);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::modules::{ModuleKind, VMLINUX_OWNER};

    fn run(q: &str, syms: &[(&str, u64, OwnerId)], modules: &ModuleSet) -> Vec<String> {
        let q = Query::parse(q.as_bytes()).unwrap();
        let mut s = Suggest::new(q);
        for (n, a, o) in syms {
            if s.wants(n.as_bytes()) {
                s.offer(n.as_bytes(), *a, *o);
            }
        }
        let filter = ModuleFilter::of(&q, modules);
        s.finish(modules, filter)
    }

    #[test]
    fn variants_then_other_modules() {
        let mut m = ModuleSet::new();
        let a = m.intern(b"mod_a", ModuleKind::Loadable).unwrap();
        let oa = m.owner_of(a).unwrap();
        let v = VMLINUX_OWNER;
        let syms = [
            ("foo.isra.0", 0x30, v),
            ("foo", 0x10, v),
            ("foo.cold", 0x20, v),
            ("foobar", 0x40, v),
            ("foo", 0x50, oa),
            ("unrelated", 0x60, v),
        ];
        // Unqualified: the base first, then the variants by address.
        assert_eq!(
            run("foo.constprop.0", &syms, &m),
            ["`foo`", "`foo.cold`", "`foo.isra.0`"]
        );
        // Qualified: variants in the module first, then the name and its
        // variants anywhere.
        assert_eq!(
            run("mod_a`foo.cold", &syms, &m),
            ["`mod_a`foo`", "`vmlinux`foo.cold`", "`vmlinux`foo.isra.0`"]
        );
        // A module that does not exist: the name and variants anywhere.
        assert_eq!(
            run("modb`foo", &syms, &m),
            [
                "`vmlinux`foo`",
                "`mod_a`foo`",
                "`vmlinux`foo.cold`",
                "`vmlinux`foo.isra.0`"
            ]
        );
        assert!(run("nothing_like_it", &syms, &m).is_empty());
        // At most five.
        let many: Vec<(String, u64, OwnerId)> =
            (0..9).map(|i| (format!("x.part.{i}"), i, v)).collect();
        let many: Vec<(&str, u64, OwnerId)> =
            many.iter().map(|(n, a, o)| (n.as_str(), *a, *o)).collect();
        assert_eq!(run("x", &many, &m).len(), MAX_SUGGESTIONS);
        assert!(!Suggest::new(Query::parse(b"foo").unwrap()).wants(b"foobar"));
    }
}
