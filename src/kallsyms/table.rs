//! The table: one buffer holding the file, two packed arrays describing the
//! symbols in address order, and a name index built once.
//!
//! Layout (for 122k symbols, 5.4 MB of text, about 1.75x the file in all):
//! - `buf`: the file as read; each name is NUL-terminated in place (the byte
//!   after a name, a newline or TAB, is overwritten), so names are handed out
//!   as C strings without a copy.
//! - `entries`: one 24-byte [`Entry`] per symbol (address, name offset and
//!   length, size, owner, type letter), sorted: absolute symbols first, then
//!   by address, kernel order among equals.
//! - `sample`: every 4th address, the cache-resident top level of the
//!   address search; the last step reads one or two lines of `entries`,
//!   which hold the answer.
//! - `index`: `u32` per slot, at most half full (see [`NameIndex`]): a name
//!   lookup reads a slot, the entry, and the name.
//!
//! Every call therefore costs two or three cache misses in series, which is
//! what matters when the table (9 MB) does not fit the cache.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use super::hash::{hash, NameIndex};
use super::line::{is_absolute_type, Format};
use super::parse::{parse_buffer, read_and_parse, Entry, Parsed, EXACT_BIT, SIZE_FAR};
use crate::cname::CName;
use crate::error::{Error, Result, AMBIGUOUS, RESTRICTED};
use crate::modules::{self, ModId, ModuleKind, ModuleSet, OwnerId, VMLINUX_MOD, VMLINUX_OWNER};
use crate::query::{normalize_module, Pattern, Query};

/// `ksym_symbol.flags`: the module is built into the kernel.
pub const SYM_BUILTIN: u32 = 1;
/// `ksym_symbol.flags`: the size is exact (vmlinux ELF or kallmodsyms).
pub const SYM_SIZE_EXACT: u32 = 2;

/// Entries per sample of the address search.
const SAMPLE: usize = 4;
/// Samples per top-level key.
const FANOUT: usize = 16;

/// How far back symbolization looks for an enclosing symbol when the nearest
/// one below an address has an exact size that ends before it.
const ENCLOSING_LOOKBACK: usize = 16;

/// Where the files come from. `None` means the default of each.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Default: /proc/kallmodsyms if it exists, else /proc/kallsyms.
    pub kallsyms_path: Option<PathBuf>,
    /// Default (`None`): /lib/modules/$(uname -r)/modules.builtin.ranges if
    /// it exists, only for tables read from a file; an empty path: none.
    pub builtin_ranges_path: Option<PathBuf>,
    /// A vmlinux ELF for exact sizes. Default: none.
    pub vmlinux_path: Option<PathBuf>,
    /// What the cache watches for module changes. Default: /proc/modules.
    pub modules_path: Option<PathBuf>,
}

/// A symbol as the table hands it out. Strings borrow from the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'t> {
    pub addr: u64,
    /// 0 when unknown (the last symbol of a region, without exact sizes).
    pub size: u64,
    pub name: CName<'t>,
    /// `vmlinux` for the core kernel, else the module.
    pub module: CName<'t>,
    /// The nm letter as the kernel prints it.
    pub ty: u8,
    /// [`SYM_BUILTIN`], [`SYM_SIZE_EXACT`].
    pub flags: u32,
}

/// The answer of [`Table::lookup`].
#[derive(Clone, Debug)]
pub enum Lookup<'t> {
    /// Every match shares one address; the first in address and kernel order.
    Found(Symbol<'t>),
    /// Matches at different addresses: the lowest, and the error to report.
    Ambiguous(Symbol<'t>, Error),
}

impl<'t> Lookup<'t> {
    /// The symbol, or the ambiguity as an error.
    pub fn unique(self) -> Result<Symbol<'t>> {
        match self {
            Lookup::Found(s) => Ok(s),
            Lookup::Ambiguous(_, e) => Err(e),
        }
    }
}

/// Where `Symbol::size` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeSource {
    /// Distance to the next distinct address in the same region.
    Estimated,
    /// The size column of /proc/kallmodsyms.
    Kallmodsyms,
    /// The symbol table of a vmlinux ELF.
    Vmlinux,
}

/// Facts about how a table was built.
#[derive(Clone, Debug)]
pub struct Info {
    /// The file read, or `<buffer>`.
    pub source: String,
    pub format: Format,
    pub lines: usize,
    pub file_bytes: usize,
    /// Time to read the file (0 for buffers).
    pub read_ns: u64,
    /// Time spent parsing (overlapping the read, for files) and indexing.
    pub parse_ns: u64,
    /// Time spent attributing symbols to built-in modules and applying sizes.
    pub attribution_ns: u64,
    pub size_source: SizeSource,
    /// Built-in ranges file used, if any.
    pub builtin_ranges: Option<PathBuf>,
    /// Things worth knowing that were not errors (skipped range sections...).
    pub diagnostics: Vec<String>,
}

/// A module as listed by [`Table::modules`].
#[derive(Clone, Copy, Debug)]
pub struct ModuleInfo<'t> {
    pub name: CName<'t>,
    pub kind: ModuleKind,
    pub symbols: usize,
    pub lo: u64,
    pub hi: u64,
}

/// Which symbols a query's module part selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filter {
    Any,
    /// `vmlinux`: the core kernel not attributed to a built-in module.
    Vmlinux,
    Module(ModId),
    /// The query names a module the table does not know.
    Unknown,
}

impl Filter {
    fn module(self) -> Option<ModId> {
        match self {
            Filter::Module(m) => Some(m),
            Filter::Vmlinux => Some(VMLINUX_MOD),
            _ => None,
        }
    }
}

/// The kernel symbol table. Immutable once built; `Sync`.
pub struct Table {
    /// The text is `buf[base..]` (`base` puts it on a huge-page boundary; the
    /// bytes before it are never touched).
    buf: Vec<u8>,
    base: usize,
    entries: Vec<Entry>,
    /// Absolute symbols are `0..n_abs`.
    n_abs: usize,
    /// Every [`SAMPLE`]th address of `entries[n_abs..]` (240 KB for 122k
    /// symbols) and every [`FANOUT`]th of those (15 KB): with `entries`, a
    /// three-level search tree whose top stays in L1 and whose lower levels
    /// cost one or two cache lines each, read in parallel.
    sample: Vec<u64>,
    top: Vec<u64>,
    index: NameIndex,
    modules: ModuleSet,
    /// (hash of the part before the first `.`, entry) of every name with a
    /// compiler suffix, sorted; built on the first "not found".
    suggest: OnceLock<Vec<(u64, u32)>>,
    info: Info,
}

impl Table {
    /// Reads and indexes the kallsyms file named by the options (default
    /// /proc/kallmodsyms or /proc/kallsyms), with built-in module attribution
    /// and exact sizes where the options provide them.
    pub fn open(opts: &Options) -> Result<Table> {
        let path = opts
            .kallsyms_path
            .clone()
            .unwrap_or_else(super::default_kallsyms_path);
        let (buf, parsed) = read_and_parse(&path)?;
        let ranges = modules::ranges::from_option(opts.builtin_ranges_path.as_deref());
        Self::build(
            buf,
            parsed,
            path.display().to_string(),
            ranges,
            opts.vmlinux_path.as_deref(),
        )
    }

    /// Indexes a copy of `data` (kallsyms or kallmodsyms text). The default
    /// built-in ranges file is not consulted for buffers (they need not come
    /// from this machine); name one in the options to use it.
    pub fn from_bytes(data: &[u8], opts: &Options) -> Result<Table> {
        let source = "<buffer>".to_string();
        let mut buf = Vec::new();
        buf.try_reserve_exact(data.len() + 1)
            .map_err(|_| Error::nomem("copying the buffer"))?;
        buf.extend_from_slice(data);
        let parsed = parse_buffer(&mut buf, 0, &source)?;
        let ranges = opts
            .builtin_ranges_path
            .clone()
            .filter(|p| !p.as_os_str().is_empty());
        Self::build(buf, parsed, source, ranges, opts.vmlinux_path.as_deref())
    }

    fn build(
        mut buf: Vec<u8>,
        parsed: Parsed,
        source: String,
        ranges: Option<PathBuf>,
        vmlinux: Option<&Path>,
    ) -> Result<Table> {
        let t0 = Instant::now();
        let Parsed {
            mut entries,
            mut hashes,
            index,
            mut modules,
            format,
            lines,
            sorted,
            any_addr,
            base,
            len: file_bytes,
            read_ns,
            parse_ns,
        } = parsed;
        if !any_addr {
            return Err(Error::new(
                RESTRICTED,
                format!(
                    "{source}: every address is zero: the kernel hides them from this process \
                     (kernel.kptr_restrict is set, or the process lacks CAP_SYSLOG); \
                     run as root or set `sysctl kernel.kptr_restrict=0`"
                ),
            ));
        }
        if format == Format::Kallmodsyms {
            classify_kallmodsyms_modules(&entries, &buf, &mut modules);
        }
        // Table order: absolute symbols first, then by address, kernel order
        // among equals. The core kernel part is already sorted; module
        // parts are not, and then a stable sort of the indices reorders.
        let mut index = index;
        if !sorted {
            let mut order: Vec<u32> = (0..lines as u32).collect();
            order.sort_by_key(|&i| {
                let e = &entries[i as usize];
                (!is_absolute_type(e.ty), e.addr)
            });
            entries = order.iter().map(|&i| entries[i as usize]).collect();
            match &mut index {
                Some(index) => {
                    let mut new_of = vec![0u32; lines];
                    for (new, &old) in order.iter().enumerate() {
                        new_of[old as usize] = new as u32;
                    }
                    index.renumber(&new_of);
                }
                None => hashes = order.iter().map(|&i| hashes[i as usize]).collect(),
            }
        }
        let n_abs = entries.partition_point(|m| is_absolute_type(m.ty));
        let index = match index {
            Some(index) => index,
            None => NameIndex::build(&hashes, |i| entries[i].name_off)
                .ok_or_else(|| Error::nomem("building the name index"))?,
        };
        drop(hashes);
        entries.shrink_to_fit();
        buf.shrink_to_fit();

        let sample: Vec<u64> = entries[n_abs..]
            .iter()
            .step_by(SAMPLE)
            .map(|e| e.addr)
            .collect();
        let top = sample.iter().step_by(FANOUT).copied().collect();
        let mut table = Table {
            buf,
            base,
            entries,
            n_abs,
            sample,
            top,
            index,
            modules,
            suggest: OnceLock::new(),
            info: Info {
                source,
                format,
                lines,
                file_bytes,
                read_ns,
                parse_ns,
                attribution_ns: 0,
                size_source: if format == Format::Kallmodsyms {
                    SizeSource::Kallmodsyms
                } else {
                    SizeSource::Estimated
                },
                builtin_ranges: None,
                diagnostics: Vec::new(),
            },
        };
        // Parser time (overlapping the read for files) plus indexing.
        table.info.parse_ns = parse_ns + t0.elapsed().as_nanos() as u64;
        let t1 = Instant::now();
        if let Some(path) = ranges {
            if format == Format::Kallmodsyms {
                table.info.diagnostics.push(format!(
                    "{}: not used: the table comes from kallmodsyms, which names built-in modules itself",
                    path.display()
                ));
            } else {
                let r = modules::ranges::Ranges::read(&path)?;
                table.apply_ranges(&r);
                table.info.builtin_ranges = Some(path);
            }
        }
        if let Some(path) = vmlinux {
            let elf = modules::vmlinux::ElfSymbols::read(path)?;
            table.apply_vmlinux_sizes(&elf, path)?;
            table.info.size_source = SizeSource::Vmlinux;
        }
        table.finish_sizes_and_modules();
        table.info.attribution_ns = t1.elapsed().as_nanos() as u64;
        Ok(table)
    }

    /// Number of symbols (lines of the file).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn info(&self) -> &Info {
        &self.info
    }

    /// Bytes of memory the table holds.
    pub fn memory(&self) -> usize {
        self.buf.capacity() - self.base
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.index.memory()
            + (self.sample.capacity() + self.top.capacity()) * std::mem::size_of::<u64>()
            + self.modules.memory()
            + self.suggest.get().map_or(0, |s| s.capacity() * 16)
            + std::mem::size_of::<Table>()
    }

    // ----- entries -------------------------------------------------------

    #[inline]
    fn name_bytes(&self, i: usize) -> &[u8] {
        let m = self.entries[i];
        let off = m.name_off as usize;
        &self.buf[off..off + m.name_len()]
    }

    #[inline]
    fn ty(&self, i: usize) -> u8 {
        self.entries[i].ty
    }

    /// The entry's size: stored, or computed for a far next symbol.
    fn size_of(&self, i: usize) -> u64 {
        let m = self.entries[i];
        if m.size != SIZE_FAR || m.exact() {
            return m.size as u64;
        }
        let region = self.modules.region(m.owner);
        let a = self.entries[i].addr;
        (i + 1..self.len())
            .find(|&j| {
                self.entries[j].addr > a && self.modules.region(self.entries[j].owner) == region
            })
            .map_or(0, |j| self.entries[j].addr - a)
    }

    /// The entry as a [`Symbol`], reporting module `module` if given (a
    /// symbol can belong to several built-in modules), else its first.
    fn symbol(&self, i: usize, module: Option<ModId>) -> Symbol<'_> {
        let m = self.entries[i];
        let off = m.name_off as usize;
        // The parser wrote a NUL after every name.
        let name = CName::new(&self.buf[off..=off + m.name_len()]).unwrap_or(CName::from_cstr(c""));
        let mid = module.unwrap_or_else(|| self.modules.primary(m.owner));
        let mut flags = 0;
        if self.modules.module(mid).kind == ModuleKind::Builtin {
            flags |= SYM_BUILTIN;
        }
        if m.exact() {
            flags |= SYM_SIZE_EXACT;
        }
        Symbol {
            addr: self.entries[i].addr,
            size: self.size_of(i),
            name,
            module: CName::from_cstr(self.modules.name(mid)),
            ty: self.ty(i),
            flags,
        }
    }

    fn filter(&self, q: &Query) -> Filter {
        match q.module {
            None => Filter::Any,
            Some(_) if q.is_vmlinux() => Filter::Vmlinux,
            Some(m) => self.modules.find(m).map_or(Filter::Unknown, Filter::Module),
        }
    }

    #[inline]
    fn accepts(&self, filter: Filter, owner: OwnerId) -> bool {
        match filter {
            Filter::Any => true,
            Filter::Vmlinux => owner == VMLINUX_OWNER,
            Filter::Module(m) => self.modules.owner_modules(owner).contains(&m),
            Filter::Unknown => false,
        }
    }

    /// Calls `f` with every entry named `name` that the filter accepts.
    #[inline]
    fn for_each_named(&self, name: &[u8], filter: Filter, mut f: impl FnMut(usize)) {
        if filter == Filter::Unknown {
            return;
        }
        self.index.candidates(hash(name), |i, off| {
            // The entry's load is issued before the name is compared: the
            // two cache misses overlap.
            let owner = self.entries[i].owner;
            let off = off as usize;
            let same = self.buf.get(off..off + name.len()) == Some(name)
                && self.buf.get(off + name.len()) == Some(&0);
            if same && self.accepts(filter, owner) {
                f(i)
            }
        });
    }

    // ----- name -> symbol --------------------------------------------------

    /// Looks up `name`, `module`name` or `vmlinux`name` exactly (`foo` does
    /// not match `foo.cold` or `__pfx_foo`).
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
        let filter = self.filter(q);
        let mut best: Option<usize> = None;
        let mut distinct = false;
        self.for_each_named(q.name, filter, |i| match best {
            None => best = Some(i),
            Some(b) => {
                if self.entries[i].addr != self.entries[b].addr {
                    distinct = true;
                }
                if (self.entries[i].addr, i) < (self.entries[b].addr, b) {
                    best = Some(i);
                }
            }
        });
        let Some(b) = best else {
            return Err(self.not_found(q, filter));
        };
        let sym = self.symbol(b, filter.module());
        if distinct {
            let err = self.ambiguity(q, filter);
            Ok(Lookup::Ambiguous(sym, err))
        } else {
            Ok(Lookup::Found(sym))
        }
    }

    /// Every match of a query, ordered by address (kernel order among
    /// equals). Entries identical in address, module and type (the kernel
    /// prints a few such lines twice) are reported once.
    pub fn lookup_all(&self, query: &[u8]) -> Result<Vec<Symbol<'_>>> {
        let q = Query::parse(query)?;
        let filter = self.filter(&q);
        let mut hits = Vec::new();
        self.for_each_named(q.name, filter, |i| hits.push(i));
        hits.sort_unstable_by_key(|&i| (self.entries[i].addr, i));
        let mut out: Vec<Symbol<'_>> = Vec::with_capacity(hits.len());
        for i in hits {
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

    fn ambiguity(&self, q: &Query, filter: Filter) -> Error {
        let mut hits = Vec::new();
        self.for_each_named(q.name, filter, |i| hits.push(i));
        hits.sort_unstable_by_key(|&i| (self.entries[i].addr, i));
        hits.dedup_by_key(|i| self.entries[*i].addr);
        let shown: Vec<String> = hits
            .iter()
            .take(4)
            .map(|&i| {
                let s = self.symbol(i, filter.module());
                format!(
                    "{}`{} at {:#x}",
                    s.module.to_string_lossy(),
                    s.name.to_string_lossy(),
                    s.addr
                )
            })
            .collect();
        let more = if hits.len() > 4 {
            format!(", and {} more", hits.len() - 4)
        } else {
            String::new()
        };
        Error::new(
            AMBIGUOUS,
            format!(
                "`{q}` is ambiguous: symbols at {} different addresses ({}{more}); \
                 qualify it as module`name, or list them all with ksym_lookup_all",
                hits.len(),
                shown.join(", ")
            ),
        )
    }

    /// "not found", with up to five near matches: compiler-suffixed variants
    /// (`.isra.0`, `.constprop.0`, `.part.0`, `.cold`, `.llvm.N`) and the same
    /// name in other modules.
    fn not_found(&self, q: &Query, filter: Filter) -> Error {
        let mut near: Vec<String> = Vec::new();
        let mut push = |table: &Table, i: usize, qualify: bool| {
            let m = table.modules.primary(table.entries[i].owner);
            let name = String::from_utf8_lossy(table.name_bytes(i));
            let s = if qualify {
                format!("`{}`{}`", table.modules.name(m).to_string_lossy(), name)
            } else {
                format!("`{name}`")
            };
            if !near.contains(&s) {
                near.push(s);
            }
        };
        let base = match q.name.iter().position(|&b| b == b'.') {
            Some(p) if p > 0 => &q.name[..p],
            _ => q.name,
        };
        let qualified = q.module.is_some();
        // Variants in the same module(s) first.
        if base != q.name {
            self.for_each_named(base, filter, |i| push(self, i, qualified));
        }
        for i in self.suffixed_variants(base) {
            if self.name_bytes(i) != q.name && self.accepts(filter, self.entries[i].owner) {
                push(self, i, qualified);
            }
        }
        // Then the same name (and its variants) in other modules.
        if qualified {
            self.for_each_named(q.name, Filter::Any, |i| push(self, i, true));
            for i in self.suffixed_variants(base) {
                push(self, i, true);
            }
        }
        near.truncate(5);
        let what = match (filter, q.module) {
            (Filter::Unknown, Some(m)) => format!(
                "no module `{}` in {} (not loaded, and not known as built-in)",
                String::from_utf8_lossy(m),
                self.info.source
            ),
            (_, Some(m)) => format!(
                "no symbol `{}` in module `{}` in {}",
                String::from_utf8_lossy(q.name),
                String::from_utf8_lossy(m),
                self.info.source
            ),
            (_, None) => format!("no symbol `{q}` in {}", self.info.source),
        };
        if near.is_empty() {
            Error::not_found(what)
        } else {
            Error::not_found(format!("{what}; did you mean {}?", near.join(", ")))
        }
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

    // ----- address -> symbol ----------------------------------------------

    /// The symbol containing `addr` and the offset into it.
    ///
    /// The candidate is the highest symbol at or below `addr`; among several
    /// names at that address the choice is: global (upper-case type) before
    /// local, then not a `__pfx_` padding symbol, then kernel order; with
    /// exact sizes, a symbol whose extent contains `addr` first. Absolute
    /// symbols never answer. `KSYM_ERR_NOT_FOUND` below the first symbol, past
    /// the last symbol of a region (a loadable module, a pseudo-module, the
    /// core image), and, with exact sizes, in a gap between symbols.
    pub fn symbolize(&self, addr: u64) -> Result<(Symbol<'_>, u64)> {
        let p = self.count_at_or_below(addr);
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
    fn count_at_or_below(&self, addr: u64) -> usize {
        let t = self.top.partition_point(|&x| x <= addr);
        if t == 0 {
            return 0;
        }
        // Block `t - 1` of the sample holds the answer: the next starts above `addr`.
        let lo = (t - 1) * FANOUT;
        let hi = (lo + FANOUT).min(self.sample.len());
        let s = lo
            + self.sample[lo..hi]
                .iter()
                .map(|&x| (x <= addr) as usize)
                .sum::<usize>();
        let a = &self.entries[self.n_abs..];
        let lo = (s - 1) * SAMPLE;
        let hi = (lo + SAMPLE).min(a.len());
        lo + a[lo..hi]
            .iter()
            .map(|e| (e.addr <= addr) as usize)
            .sum::<usize>()
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

    // ----- patterns and modules -------------------------------------------

    /// Calls `f` for every symbol matching `glob` or `modglob`glob`, in table
    /// order (absolute symbols first, then by address). Stops when `f` breaks
    /// and returns its value.
    pub fn for_each_match<B>(
        &self,
        pattern: &[u8],
        mut f: impl FnMut(&Symbol<'_>) -> ControlFlow<B>,
    ) -> Result<Option<B>> {
        let p = Pattern::parse(pattern)?;
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
            self.for_each_named(lit, Filter::Any, |i| hits.push(i));
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

    /// The modules: `vmlinux` first, then in order of appearance.
    pub fn modules(&self) -> impl Iterator<Item = ModuleInfo<'_>> {
        self.modules.iter().map(|m| ModuleInfo {
            name: CName::from_cstr(&m.name),
            kind: m.kind,
            symbols: m.symbols,
            lo: m.lo,
            hi: m.hi,
        })
    }

    pub fn module_count(&self) -> usize {
        self.modules.len()
    }

    // ----- build steps ------------------------------------------------------

    /// Address of the first core-kernel symbol named `name` (section anchors,
    /// `_text`).
    pub(crate) fn core_addr(&self, name: &[u8]) -> Option<u64> {
        let mut best: Option<usize> = None;
        self.for_each_named(name, Filter::Any, |i| {
            if self.modules.region(self.entries[i].owner) == 0
                && i >= self.n_abs
                && best.is_none_or(|b| i < b)
            {
                best = Some(i);
            }
        });
        best.map(|i| self.entries[i].addr)
    }

    /// Attributes core symbols inside each built-in range to its modules.
    fn apply_ranges(&mut self, ranges: &modules::ranges::Ranges) {
        let mut owners: Vec<OwnerId> = Vec::with_capacity(ranges.groups.len());
        let mut claimed = 0usize;
        for g in &ranges.groups {
            // Named as the kernel names modules (KBUILD_MODNAME: `-` as `_`).
            let mods: Vec<ModId> = g
                .iter()
                .filter_map(|name| {
                    self.modules
                        .intern(&normalize_module(name), ModuleKind::Builtin)
                        .ok()
                })
                .collect();
            owners.push(self.modules.owner_of_set(&mods).unwrap_or(VMLINUX_OWNER));
        }
        for sec in &ranges.sections {
            let Some(anchor_addr) = self.core_addr(&sec.anchor) else {
                self.info.diagnostics.push(format!(
                    "{}: section {} skipped: its anchor `{}` is not in the table",
                    ranges.path.display(),
                    String::from_utf8_lossy(&sec.name),
                    String::from_utf8_lossy(&sec.anchor)
                ));
                continue;
            };
            let base = anchor_addr.wrapping_sub(sec.anchor_offset);
            for r in &sec.ranges {
                let lo = base.wrapping_add(r.start);
                let hi = base.wrapping_add(r.end);
                let owner = owners[r.group];
                // The first entry at or above `lo`, through the cache-resident levels.
                let mut i = self.n_abs
                    + if lo == 0 {
                        0
                    } else {
                        self.count_at_or_below(lo - 1)
                    };
                while i < self.len() && self.entries[i].addr < hi {
                    if self.entries[i].owner == VMLINUX_OWNER {
                        self.entries[i].owner = owner;
                        claimed += 1;
                    }
                    i += 1;
                }
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
    fn apply_vmlinux_sizes(
        &mut self,
        elf: &modules::vmlinux::ElfSymbols,
        path: &Path,
    ) -> Result<()> {
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
            self.for_each_named(&s.name, Filter::Any, |i| {
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
        for (i, size) in updates {
            self.entries[i].size = size;
            self.entries[i].len |= EXACT_BIT;
        }
        Ok(())
    }

    /// Size estimates for entries without an exact size (distance to the
    /// next distinct address in the same region, 0 for a region's last
    /// symbol), and the per-module counts and address ranges.
    fn finish_sizes_and_modules(&mut self) {
        const NONE: u64 = u64::MAX;
        let owners = self.modules.owner_count();
        let region: Vec<usize> = (0..owners)
            .map(|o| self.modules.region(o as OwnerId))
            .collect();
        // Per region, walking down: the lowest address seen so far and the
        // next distinct one above it (NONE: not yet).
        let mut cur = vec![NONE; self.modules.len()];
        let mut next = vec![NONE; self.modules.len()];
        // Per owner: symbols, lowest and highest address.
        let mut per_owner: Vec<(usize, u64, u64)> = vec![(0, u64::MAX, 0); owners];
        let n_abs = self.n_abs;
        for (i, e) in self.entries.iter_mut().enumerate().rev() {
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
            if !e.exact() {
                e.size = match next[r] {
                    NONE => 0,
                    nx => u32::try_from(nx - a).unwrap_or(SIZE_FAR),
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

/// In kallmodsyms, module names also mark built-in modules: a module whose
/// symbols lie inside the kernel image (`_text` to `_end`) is built in.
fn classify_kallmodsyms_modules(entries: &[Entry], buf: &[u8], modules: &mut ModuleSet) {
    let find = |name: &[u8]| {
        entries.iter().find_map(|m| {
            let off = m.name_off as usize;
            (m.owner == VMLINUX_OWNER && &buf[off..off + m.name_len()] == name).then_some(m.addr)
        })
    };
    let (Some(text), Some(end)) = (find(b"_text"), find(b"_end")) else {
        return;
    };
    let mut seen = vec![false; modules.owner_count()];
    for m in entries {
        let (o, a) = (m.owner, m.addr);
        if o != VMLINUX_OWNER && !seen[o as usize] && (text..=end).contains(&a) {
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
mod tests;
