//! The pull-through cache: answers already known cost no read of kallsyms,
//! the misses of one call are resolved in one pass, only requested names
//! are kept, and no answer outlives what it depends on.
//!
//! What an answer depends on:
//! - `vmlinux`x`: the core kernel, which never changes while the system
//!   runs: kept until [`Cache::invalidate`].
//! - `mod`x`: module `mod` (loaded, unloaded or reloaded elsewhere drops it).
//! - `x`: any module that appears (it may define `x` too) and the modules
//!   its matches are in (one that goes away may leave a different answer).
//! - Anything found in a pseudo-module (`bpf`, `__builtin__ftrace`,
//!   `__builtin__kprobes`), or a name only such a module makes
//!   (`bpf_prog_*`, trampolines, kprobe pages): never kept, since those
//!   come and go without /proc/modules changing.
//!
//! Module changes are seen by reading /proc/modules (or `modules_path`) at
//! the start of each call that has a query other than `vmlinux`x`: names,
//! sizes and load addresses, compared with the previous read.
//!
//! Thread-safety: the state is behind a mutex, never held during a pass.
//! A pass's answers are stored only if no invalidation happened since the
//! call began; the /proc/modules read happens before the pass, so a change
//! that the pass might have missed is seen by the next call.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;

use super::{parse_queries, resolve_parsed, Answer, Source};
use crate::base::hash::KeyMap;
use crate::error::Result;
use crate::formats::proc_modules;
use crate::rules::modules::{is_pseudo_module, is_pseudo_name};
use crate::rules::query::{normalize_module, Query};

/// Counters of a cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Queries answered from the cache.
    pub hits: u64,
    /// Queries that needed a pass.
    pub misses: u64,
    /// Passes over kallsyms.
    pub passes: u64,
    /// Answers held now.
    pub entries: u64,
    /// Answers dropped because modules changed (not counting `invalidate`).
    pub dropped: u64,
    /// Reads of /proc/modules.
    pub module_checks: u64,
}

/// What invalidates a cached answer.
#[derive(Clone, Debug)]
enum Dep {
    /// `vmlinux`x`.
    Core,
    /// `mod`x` (normalised module name).
    Module(Vec<u8>),
    /// `x`: the modules of its matches.
    Any(Vec<Vec<u8>>),
}

#[derive(Clone, Debug)]
struct Cached {
    addr: u64,
    err: i32,
    dep: Dep,
}

/// `name -> (size, load address)` from /proc/modules.
type Modules = HashMap<Vec<u8>, (u64, u64)>;

struct State {
    answers: KeyMap<Vec<u8>, Cached>,
    modules: Option<Modules>,
    generation: u64,
    stats: CacheStats,
}

/// A thread-safe pull-through cache of query answers.
pub struct Cache {
    source: Source,
    modules_path: PathBuf,
    state: Mutex<State>,
}

impl Cache {
    /// A cache over `source`, watching `modules_path` (default /proc/modules).
    pub fn new(source: Source, modules_path: Option<PathBuf>) -> Cache {
        Cache {
            source,
            modules_path: modules_path.unwrap_or_else(|| PathBuf::from("/proc/modules")),
            state: Mutex::new(State {
                answers: KeyMap::default(),
                modules: None,
                generation: 0,
                stats: CacheStats::default(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a torn answer (entries
        // are inserted whole), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Answers every query (same contract as [`super::resolve`]): cached
    /// answers cost no read of kallsyms; all misses are resolved in one pass.
    pub fn resolve(&self, queries: &[&[u8]]) -> Result<Vec<(u64, i32)>> {
        let parsed = parse_queries(queries)?;
        let snapshot = if parsed.iter().any(|q| !q.is_vmlinux()) {
            Some(self.read_modules()?)
        } else {
            None
        };
        let mut out: Vec<Option<(u64, i32)>> = vec![None; queries.len()];
        let mut misses: Vec<usize> = Vec::new();
        let generation = {
            let mut st = self.lock();
            if let Some(snap) = snapshot {
                st.stats.module_checks += 1;
                st.apply_modules(snap);
            }
            for (i, q) in queries.iter().enumerate() {
                match st.answers.get(*q) {
                    Some(c) => {
                        out[i] = Some((c.addr, c.err));
                        st.stats.hits += 1;
                    }
                    None => {
                        misses.push(i);
                        st.stats.misses += 1;
                    }
                }
            }
            st.generation
        };
        if !misses.is_empty() {
            // One pass for the distinct missing queries; `slot[k]` is the
            // answer of miss k among them.
            let mut distinct: Vec<usize> = Vec::new();
            let mut seen: HashMap<&[u8], usize> = HashMap::with_capacity(misses.len());
            let slot: Vec<usize> = misses
                .iter()
                .map(|&i| {
                    *seen.entry(queries[i]).or_insert_with(|| {
                        distinct.push(i);
                        distinct.len() - 1
                    })
                })
                .collect();
            let want: Vec<Query<'_>> = distinct.iter().map(|&i| parsed[i]).collect();
            let (answers, _) = resolve_parsed(&self.source, &want)?;
            let mut st = self.lock();
            st.stats.passes += 1;
            // Kept only if nothing was invalidated during the pass.
            if st.generation == generation {
                for (&i, a) in distinct.iter().zip(&answers) {
                    if let Some(dep) = dependency(&parsed[i], a) {
                        st.answers.insert(
                            queries[i].to_vec(),
                            Cached {
                                addr: a.addr,
                                err: a.err,
                                dep,
                            },
                        );
                    }
                }
            }
            for (&j, &k) in misses.iter().zip(&slot) {
                out[j] = Some((answers[k].addr, answers[k].err));
            }
            st.stats.entries = st.answers.len() as u64;
        }
        Ok(out
            .into_iter()
            .map(|o| o.unwrap_or((0, crate::error::INTERNAL)))
            .collect())
    }

    /// Drops every answer.
    pub fn invalidate(&self) {
        let mut st = self.lock();
        st.answers.clear();
        st.generation += 1;
        st.stats.entries = 0;
    }

    /// Where the cache reads kallsyms from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The cache's counters so far.
    pub fn stats(&self) -> CacheStats {
        self.lock().stats
    }

    fn read_modules(&self) -> Result<Modules> {
        let limit = crate::base::read::limits::SMALL;
        let text = match crate::base::read::read_file(&self.modules_path, 0, limit, "/proc/modules")
        {
            Ok(t) => t,
            // No module support at all: nothing can change.
            Err(e) if e.code() == crate::error::NOT_FOUND => Vec::new(),
            Err(e) => return Err(e),
        };
        Ok(proc_modules::parse(&text)
            .into_iter()
            .map(|m| (normalize_module(&m.name), (m.size, m.addr)))
            .collect())
    }
}

/// What a cached answer depends on; `None`: do not keep it.
fn dependency(q: &Query<'_>, a: &Answer) -> Option<Dep> {
    if a.pseudo || is_pseudo_name(q.name) {
        return None;
    }
    match q.module {
        Some(_) if q.is_vmlinux() => Some(Dep::Core),
        Some(m) if is_pseudo_module(&normalize_module(m)) => None,
        Some(m) => Some(Dep::Module(normalize_module(m))),
        None => Some(Dep::Any(a.modules.clone())),
    }
}

impl State {
    /// Drops the answers a change of modules may have made wrong.
    fn apply_modules(&mut self, now: Modules) {
        let Some(before) = self.modules.take() else {
            // The first read: the answers held (none yet) came after it.
            self.modules = Some(now);
            return;
        };
        if before == now {
            self.modules = Some(before);
            return;
        }
        let appeared: HashSet<&Vec<u8>> = now
            .iter()
            .filter(|(k, v)| before.get(*k) != Some(v))
            .map(|(k, _)| k)
            .collect();
        let gone: HashSet<&Vec<u8>> = before
            .iter()
            .filter(|(k, v)| now.get(*k) != Some(v))
            .map(|(k, _)| k)
            .collect();
        let n = self.answers.len();
        self.answers.retain(|_, c| match &c.dep {
            Dep::Core => true,
            Dep::Module(m) => !appeared.contains(m) && !gone.contains(m),
            Dep::Any(mods) => appeared.is_empty() && !mods.iter().any(|m| gone.contains(m)),
        });
        self.stats.dropped += (n - self.answers.len()) as u64;
        self.stats.entries = self.answers.len() as u64;
        self.generation += 1;
        self.modules = Some(now);
    }
}
