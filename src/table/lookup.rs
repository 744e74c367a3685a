//! Lookups and patterns: a name (or `module`name`) to its symbols through
//! the name index, and globs walked over the names, answered by the rules
//! of [`crate::rules::answer`]; a table from a snapshot routes what may
//! touch pseudo-modules to a fresh read.

use std::ops::ControlFlow;

use super::{
    answer, hash, pattern_may_match_pseudo, query_may_match_pseudo, Decision, Entry, Error, Lookup,
    ModId, ModuleFilter, ModuleKind, OwnerId, Pattern, Query, Result, Suggest, Symbol, Table,
};
use crate::rules::modules::VMLINUX_OWNER;
use crate::rules::query::module_eq;

impl Table {
    /// Calls `f` with every entry named `name` that the filter accepts.
    #[inline]
    pub(super) fn for_each_named(&self, name: &[u8], filter: ModuleFilter, f: impl FnMut(usize)) {
        if filter == ModuleFilter::Unknown {
            return;
        }
        self.for_each_named_owned(name, |o| filter.accepts(&self.modules, o), f)
    }

    /// Calls `f` with every entry named `name` whose owner `accepts`.
    /// Stops at an entry whose name no other entry has ([`Entry::repeated`]):
    /// a name seen once costs one probe of the index, one entry and one
    /// compare of the name.
    #[inline]
    fn for_each_named_owned(
        &self,
        name: &[u8],
        accepts: impl Fn(OwnerId) -> bool,
        mut f: impl FnMut(usize),
    ) {
        let (entries, buf) = (&*self.entries, &*self.buf);
        self.index.candidates_while(hash(name), |i, off| {
            // The entry's load is issued before the name is compared: the
            // two cache misses overlap. A slot's entry has the slot's name
            // and its length (always, but in a damaged snapshot: then the
            // slot is a name not found, never another symbol).
            let Some(&e) = entries.get(i) else {
                return true;
            };
            let off_u = off as usize;
            let same = buf.get(off_u..off_u + name.len()) == Some(name)
                && buf.get(off_u + name.len()) == Some(&0);
            if !same || (e.name_off, e.name_len()) != (off, name.len()) {
                return true;
            }
            if accepts(e.owner) {
                f(i)
            }
            e.repeated()
        });
    }

    // ----- name -> symbol --------------------------------------------------

    /// Looks up `name`, `module`name` or `vmlinux`name` exactly (`foo` does
    /// not match `foo.cold` or `__pfx_foo`), as `rules::answer`
    /// says.
    pub fn lookup(&self, query: &[u8]) -> Result<Lookup<'_>> {
        // Whitespace is checked only when nothing matched: no name or module
        // of the table contains any, so a query with some cannot match.
        let q = Query::split(query)?;
        match self.lookup_query(&q) {
            Err(e) if e.code() == crate::error::NOT_FOUND => {
                Query::parse(query)?;
                Err(e)
            }
            r => r,
        }
    }

    /// [`Table::lookup`] for a parsed query.
    pub fn lookup_query(&self, q: &Query) -> Result<Lookup<'_>> {
        self.route(|| query_may_match_pseudo(q))?.lookup_here(q)
    }

    fn lookup_here(&self, q: &Query) -> Result<Lookup<'_>> {
        let mut d = Decision::default();
        let mut push = |i: usize| d.push(self.entries[i].addr, i);
        // The module a qualified answer reports (a symbol can belong to
        // several built-in modules): the one named.
        let mut named: Option<ModId> = None;
        match q.module {
            None => self.for_each_named_owned(q.name, |_| true, &mut push),
            Some(_) if q.is_vmlinux() => {
                named = Some(crate::rules::modules::VMLINUX_MOD);
                self.for_each_named_owned(q.name, |o| o == VMLINUX_OWNER, &mut push)
            }
            // Each candidate's modules are compared with the one named:
            // no search of the module set, so that `module`name` costs
            // what `name` does.
            Some(m) => {
                let found = std::cell::Cell::new(None);
                self.for_each_named_owned(
                    q.name,
                    |o| {
                        let hit = self
                            .modules
                            .owner_modules(o)
                            .iter()
                            .copied()
                            .find(|&mid| module_eq(self.modules.key(mid), m));
                        if hit.is_some() {
                            found.set(hit);
                        }
                        hit.is_some()
                    },
                    &mut push,
                );
                named = found.get();
            }
        }
        let Some(b) = d.best() else {
            let filter = ModuleFilter::of(q, &self.modules);
            return Err(self.not_found(q, filter));
        };
        let sym = self.symbol(b, named);
        if d.is_ambiguous() {
            let filter = ModuleFilter::of(q, &self.modules);
            Ok(Lookup::Ambiguous(sym, self.ambiguity(q, filter)))
        } else {
            Ok(Lookup::Found(sym))
        }
    }

    /// Every match of a query, ordered by address (kernel order among
    /// equals). Entries identical in address, module and type (the kernel
    /// prints a few such lines twice) are reported once.
    pub fn lookup_all(&self, query: &[u8]) -> Result<Vec<Symbol<'_>>> {
        let q = Query::parse(query)?;
        let t = self.route(|| query_may_match_pseudo(&q))?;
        t.lookup_all_here(&q)
    }

    fn lookup_all_here(&self, q: &Query) -> Result<Vec<Symbol<'_>>> {
        let q = *q;
        let filter = ModuleFilter::of(&q, &self.modules);
        let mut out: Vec<Symbol<'_>> = Vec::new();
        for i in self.matches(&q, filter) {
            let s = self.symbol(i, filter.module());
            if !out
                .iter()
                .any(|o| o.addr == s.addr && o.module == s.module && o.ty == s.ty)
            {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// The entries a query matches, by address, kernel order among equals.
    fn matches(&self, q: &Query, filter: ModuleFilter) -> Vec<usize> {
        let mut hits = Vec::new();
        self.for_each_named(q.name, filter, |i| hits.push(i));
        hits.sort_unstable_by_key(|&i| (self.entries[i].addr, i));
        hits
    }

    fn ambiguity(&self, q: &Query, filter: ModuleFilter) -> Error {
        let mut hits = self.matches(q, filter);
        hits.dedup_by_key(|i| self.entries[*i].addr);
        let syms: Vec<Symbol<'_>> = hits
            .iter()
            .map(|&i| self.symbol(i, filter.module()))
            .collect();
        answer::ambiguous(
            q,
            syms.iter()
                .map(|s| (s.module.to_bytes(), s.name.to_bytes(), s.addr)),
        )
    }

    /// "not found", with the near matches [`Suggest`] picks among the
    /// entries named like the query, its base, or its base and a suffix.
    fn not_found(&self, q: &Query, filter: ModuleFilter) -> Error {
        let mut s = Suggest::new(*q);
        let base = s.base();
        let mut offer = |i: usize| {
            let e = self.entries[i];
            s.offer(self.name_bytes(i), e.addr, e.owner);
        };
        self.for_each_named(q.name, ModuleFilter::Any, &mut offer);
        self.for_each_named(base, ModuleFilter::Any, &mut offer);
        for i in self.suffixed_variants(base) {
            offer(i);
        }
        let near = s.finish(&self.modules, filter);
        answer::not_found(q, filter, &self.info.source, &near)
    }

    /// Entries named `base.<suffix>`.
    fn suffixed_variants(&self, base: &[u8]) -> Vec<usize> {
        let idx = self.suggest.get_or_init(|| {
            let mut v: Vec<(u64, u32)> = (0..self.len())
                .filter_map(|i| {
                    let name = self.name_bytes(i);
                    let p = memchr::memchr(b'.', name)?;
                    (p > 0).then(|| (hash(&name[..p]), i as u32))
                })
                .collect();
            v.sort_unstable();
            v
        });
        let h = hash(base);
        let start = idx.partition_point(|&(k, _)| k < h);
        idx[start..]
            .iter()
            .take_while(|&&(k, _)| k == h)
            .map(|&(_, i)| i as usize)
            .filter(|&i| {
                let n = self.name_bytes(i);
                n.len() > base.len() && n.starts_with(base) && n[base.len()] == b'.'
            })
            .collect()
    }

    // ----- patterns and modules -------------------------------------------

    /// Calls `f` for every symbol matching `glob` or `modglob`glob`, in table
    /// order (absolute symbols first, then by address). Stops when `f` breaks
    /// and returns its value.
    pub fn for_each_match<B>(
        &self,
        pattern: &[u8],
        f: impl FnMut(&Symbol<'_>) -> ControlFlow<B>,
    ) -> Result<Option<B>> {
        let p = Pattern::parse(pattern)?;
        let t = self.route(|| pattern_may_match_pseudo(&p))?;
        t.for_each_match_here(&p, f)
    }

    fn for_each_match_here<B>(
        &self,
        p: &Pattern,
        mut f: impl FnMut(&Symbol<'_>) -> ControlFlow<B>,
    ) -> Result<Option<B>> {
        // Which module of each owner the module glob selects (computed once per owner).
        let owner_module: Vec<Option<ModId>> = (0..self.modules.owner_count())
            .map(|o| {
                let mods = self.modules.owner_modules(o as OwnerId);
                match &p.module {
                    None => Some(mods[0]),
                    Some(g) => mods
                        .iter()
                        .copied()
                        .find(|&m| g.matches(self.modules.name(m).to_bytes())),
                }
            })
            .collect();
        let mut visit = |i: usize| -> ControlFlow<B> {
            match owner_module[self.entries[i].owner as usize] {
                Some(m) => f(&self.symbol(i, Some(m))),
                None => ControlFlow::Continue(()),
            }
        };
        if let Some(lit) = p.name.literal() {
            let mut hits = Vec::new();
            self.for_each_named(lit, ModuleFilter::Any, |i| hits.push(i));
            hits.sort_unstable();
            for i in hits {
                if let ControlFlow::Break(b) = visit(i) {
                    return Ok(Some(b));
                }
            }
        } else {
            for i in 0..self.len() {
                if p.name.matches(self.name_bytes(i)) {
                    if let ControlFlow::Break(b) = visit(i) {
                        return Ok(Some(b));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Calls `f` for every symbol, in the order of the source file (the
    /// kernel's order) when `file_order`, else in table order (absolute
    /// symbols first, then by address); without the pseudo-module symbols
    /// (BPF, ftrace, kprobes) when `skip_pseudo`. A table from a snapshot
    /// answers from a fresh read (made when first needed) unless they are
    /// skipped. Stops when `f` breaks and returns its value.
    ///
    /// The file's order is what an unstable sort of the lines by address
    /// (bcc's, for one) needs to be reproduced: it decides which of several
    /// names at one address comes last.
    pub fn for_each_symbol<B>(
        &self,
        file_order: bool,
        skip_pseudo: bool,
        mut f: impl FnMut(&Symbol<'_>) -> ControlFlow<B>,
    ) -> Result<Option<B>> {
        let t = self.route(|| !skip_pseudo)?;
        let mut visit = |i: usize| -> ControlFlow<B> {
            let owner = t.entries[i].owner;
            if skip_pseudo && t.modules.module(t.modules.primary(owner)).kind == ModuleKind::Pseudo
            {
                return ControlFlow::Continue(());
            }
            f(&t.symbol(i, None))
        };
        // Every line's name lies in the text, in the order of the lines:
        // the name offsets give the file's order back.
        let in_file_order = |a: &Entry, b: &Entry| a.name_off < b.name_off;
        if file_order && !t.entries.windows(2).all(|w| in_file_order(&w[0], &w[1])) {
            let mut order: Vec<u32> = (0..t.len() as u32).collect();
            order.sort_by_key(|&i| t.entries[i as usize].name_off);
            for i in order {
                if let ControlFlow::Break(b) = visit(i as usize) {
                    return Ok(Some(b));
                }
            }
            return Ok(None);
        }
        for i in 0..t.len() {
            if let ControlFlow::Break(b) = visit(i) {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}
