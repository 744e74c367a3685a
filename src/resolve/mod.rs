//! Batch resolution: many queries answered in one streaming pass over
//! kallsyms, keeping no table.
//!
//! Memory is a fixed pool of read buffers plus O(queries): a hash table of
//! the queried names and the matches found for them. Lines go through the
//! table's own line parser; queries, module ownership, built-in
//! attribution, the answer and the errors through [`crate::rules`], as the
//! table's do.
//!
//! The pass runs on the calling thread with one fixed buffer, scanning
//! what a few reads gave (the kernel returns under 4 KiB per `read()` of
//! /proc/kallsyms) while it is still in the cache. The lines of 64-bit
//! kallsyms take the fast walk ([`walk_kallsyms64`]: names where the shape
//! puts them, the read's delimiters counted to prove it); any other read is
//! walked line by line ([`walk_lines`]: each line's delimiters checked). A
//! line is parsed whole only when its name is a wanted one (a filter on its
//! length and first and last eight bytes, then the hash table), so a pass
//! costs little more than reading the file.
//! (Parsing on a second thread was tried: the reader slowed down more than
//! the parsing cost, the buffers bouncing between the cores.)

pub mod cache;
mod matcher;
mod stream;

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::formats::kallsyms::{parse_at, Format};
use crate::formats::ranges::{self, Ranges};
#[cfg(doc)]
use crate::formats::walk::walk_kallsyms64;
use crate::formats::walk::walk_lines;
use crate::rules::answer::{self, Decision, ModuleFilter};
use crate::rules::attribution::BuiltinSpans;
use crate::rules::modules::{ModuleSet, OwnerId, VMLINUX_OWNER};
use crate::rules::query::Query;
use crate::rules::suggest::Suggest;
use matcher::{Hit, Matcher};
use stream::stream;

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
    /// The kallsyms file read.
    fn path(&self) -> PathBuf {
        self.kallsyms_path
            .clone()
            .unwrap_or_else(crate::formats::kallsyms::default_path)
    }

    /// The built-in ranges, read.
    fn ranges(&self) -> Result<Option<Ranges>> {
        self.builtin_ranges.as_deref().map(Ranges::read).transpose()
    }

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
    /// Bytes read.
    pub bytes: usize,
    /// Lines read.
    pub lines: usize,
    /// Lines walked the fast way (`walk_kallsyms64`), the others line by line.
    pub fast_lines: usize,
    /// The pass stopped at the first module line (every query `vmlinux`-qualified).
    pub stopped_early: bool,
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
    let path = source.path();
    let shown = path.display().to_string();
    let ranges = source.ranges()?;
    let core_only = !queries.is_empty() && queries.iter().all(|q| q.is_vmlinux());
    // Anchors of the ranges file are looked for as if they were queried.
    let anchors: Vec<&[u8]> = ranges.iter().flat_map(BuiltinSpans::anchors).collect();
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
            return Err(answer::empty(&shown));
        }
        return Err(answer::restricted(&shown));
    }
    m.finish();
    let spans = ranges.as_ref().map(|r| {
        let mut modules = std::mem::take(&mut m.modules);
        let spans = BuiltinSpans::new(r, &mut modules, |a| {
            m.hits_of(a)
                .find(|h| h.owner == VMLINUX_OWNER && !h.absolute)
                .map(|h| h.addr)
        });
        m.modules = modules;
        spans
    });
    for (k, (q, &i)) in queries.iter().zip(&m.index_of).enumerate() {
        each(k, answer(q, m.hits_at(i), &m.modules, spans.as_ref()));
    }
    Ok(m.stats(bytes))
}

/// The owner of a hit once built-in ranges are known.
#[inline]
fn owner(h: &Hit, spans: Option<&BuiltinSpans>) -> OwnerId {
    match (h.owner, spans) {
        (VMLINUX_OWNER, Some(s)) => s.owner_at(h.addr).unwrap_or(VMLINUX_OWNER),
        (o, _) => o,
    }
}

/// The answer to one query from the hits of its name, as
/// [`crate::rules::answer`] decides it.
fn answer<'h>(
    q: &Query<'_>,
    hits: impl Iterator<Item = &'h Hit>,
    modules: &ModuleSet,
    spans: Option<&BuiltinSpans>,
) -> Answer {
    let filter = ModuleFilter::of(q, modules);
    let mut d = Decision::default();
    let mut out = Answer {
        addr: 0,
        err: 0,
        modules: Vec::new(),
        pseudo: false,
    };
    for (k, h) in hits.enumerate() {
        let o = owner(h, spans);
        if !filter.accepts(modules, o) {
            continue;
        }
        d.push(h.addr, k);
        if o != VMLINUX_OWNER {
            out.pseudo |= modules.is_pseudo(o);
            for &mid in modules.owner_modules(o) {
                let key = modules.key(mid);
                if !out.modules.iter().any(|x| x == key) {
                    out.modules.push(key.to_vec());
                }
            }
        }
    }
    out.addr = d.addr().unwrap_or(0);
    out.err = d.code();
    out
}

/// The "not found" error of `q` in `source`, with the near matches
/// [`Suggest`] picks: one more pass (without a table), walked line by
/// line, parsing only the lines whose name it wants. For the error paths
/// of callers that resolved `q` through a pass or a cache.
pub fn not_found_error(source: &Source, q: &Query<'_>) -> Result<Error> {
    let path = source.path();
    let shown = path.display().to_string();
    let ranges = source.ranges()?;
    let anchors: Vec<&[u8]> = ranges.iter().flat_map(BuiltinSpans::anchors).collect();
    let mut anchor_addr: Vec<Option<u64>> = vec![None; anchors.len()];
    let mut suggest = Suggest::new(*q);
    let mut modules = ModuleSet::new();
    let mut format = None;
    let mut lines = 0usize;
    stream(&path, &shown, &mut |text| {
        let format = *format.get_or_insert_with(|| Format::detect(text));
        walk_lines(text, format, |span| {
            lines += 1;
            if let Some((start, len, _)) = span.name {
                let name = &text[start..start + len];
                if !suggest.wants(name) && !anchors.contains(&name) {
                    return Ok(true);
                }
            }
            let (line, _) = parse_at(text, span.start, format).map_err(|e| {
                Error::format(format!("{shown}:{lines}: malformed line ({})", e.why))
            })?;
            let owner = match line.modules {
                Some(col) => modules.owner_of_column(col)?,
                None => VMLINUX_OWNER,
            };
            if let Some(k) = anchors.iter().position(|a| *a == line.name) {
                if owner == VMLINUX_OWNER && !line.is_absolute() && anchor_addr[k].is_none() {
                    anchor_addr[k] = Some(line.addr);
                }
            }
            suggest.offer(line.name, line.addr, owner);
            Ok(true)
        })
    })?;
    if let Some(r) = &ranges {
        let spans = BuiltinSpans::new(r, &mut modules, |a| {
            anchors
                .iter()
                .position(|x| *x == a)
                .and_then(|k| anchor_addr[k])
        });
        suggest.reattribute(|o, addr| match o {
            VMLINUX_OWNER => spans.owner_at(addr).unwrap_or(o),
            o => o,
        });
    }
    let filter = ModuleFilter::of(q, &modules);
    let near = suggest.finish(&modules, filter);
    Ok(answer::not_found(q, filter, &shown, &near))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{AMBIGUOUS, NOT_FOUND};

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

    #[test]
    fn invalid_query_fails_the_call() {
        let e = resolve(&Source::default(), &[b"ok", b"a`b`c"]).unwrap_err();
        assert_eq!(e.code(), crate::error::INVALID);
        assert!(e.message().contains("query 1"), "{e}");
    }
}
