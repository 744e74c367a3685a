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

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

mod build;
mod lookup;
pub(crate) mod parse;
mod read;
pub mod snapshot;
mod stack;
mod symbolize;

use crate::base::hash::{hash, NameIndex};
use crate::base::mapped::Store;
use crate::cname::CName;
use crate::error::{Error, Result};
use crate::formats::kallsyms::{is_absolute_type, Format};
use crate::formats::ranges::{self, Ranges};
use crate::formats::vmlinux::ElfSymbols;
use crate::rules::answer::{self, Decision, ModuleFilter};
use crate::rules::modules::{
    pattern_may_match_pseudo, query_may_match_pseudo, ModId, ModuleKind, ModuleSet, OwnerId,
};
use crate::rules::query::{Pattern, Query};
use crate::rules::suggest::Suggest;
use parse::{parse_buffer, Entry, Parsed, SIZE_FAR};
use read::read_and_parse;

/// Waits for the snapshots this process is writing (tests, the bench).
pub use crate::base::snapshot::background::wait as wait_for_snapshot_writers;
use crate::base::snapshot::{background, SnapshotOptions};
pub use crate::formats::kallsyms::default_path as default_kallsyms_path;

/// `ksym_symbol.flags`: the module is built into the kernel.
pub const SYM_BUILTIN: u32 = 1;
/// `ksym_symbol.flags`: the size is exact (vmlinux ELF or kallmodsyms).
pub const SYM_SIZE_EXACT: u32 = 2;

/// Entries per sample of the address search.
const SAMPLE: usize = 4;
/// Samples per top-level key.
const FANOUT: usize = 16;

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
    /// What the cache watches for module changes, and what a snapshot is
    /// checked against. Default: /proc/modules.
    pub modules_path: Option<PathBuf>,
    /// Whether and where the table's snapshot is kept (the options the
    /// BTF's share).
    pub snapshot: SnapshotOptions,
}

/// A symbol as the table hands it out. Strings borrow from the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'t> {
    /// The address (0 when the kernel hides addresses).
    pub addr: u64,
    /// 0 when unknown (the last symbol of a region, without exact sizes).
    pub size: u64,
    /// The symbol's name.
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
    /// The format of the file read.
    pub format: Format,
    /// Lines parsed.
    pub lines: usize,
    /// Bytes read.
    pub file_bytes: usize,
    /// Time to read the file (0 for buffers).
    pub read_ns: u64,
    /// Time spent parsing (overlapping the read, for files) and indexing.
    pub parse_ns: u64,
    /// Time spent attributing symbols to built-in modules and applying sizes.
    pub attribution_ns: u64,
    /// Where symbol sizes came from.
    pub size_source: SizeSource,
    /// Built-in ranges file used, if any.
    pub builtin_ranges: Option<PathBuf>,
    /// Things worth knowing that were not errors (skipped range sections...).
    pub diagnostics: Vec<String>,
    /// What happened with the snapshot.
    pub snapshot: snapshot::SnapshotInfo,
}

/// A module as listed by [`Table::modules`].
#[derive(Clone, Copy, Debug)]
pub struct ModuleInfo<'t> {
    /// The module's name.
    pub name: CName<'t>,
    /// Loadable, built-in or pseudo-module.
    pub kind: ModuleKind,
    /// Symbols the table holds for it.
    pub symbols: usize,
    /// Its lowest symbol address.
    pub lo: u64,
    /// Its highest symbol address.
    pub hi: u64,
}

/// The kernel symbol table. Immutable once built; `Sync`.
pub struct Table {
    /// The text is `buf[base..]` (`base` puts it on a huge-page boundary; the
    /// bytes before it are never touched).
    buf: Store<u8>,
    base: usize,
    entries: Store<Entry>,
    /// Absolute symbols are `0..n_abs`.
    n_abs: usize,
    /// Every [`SAMPLE`]th address of `entries[n_abs..]` (240 KB for 122k
    /// symbols) and every [`FANOUT`]th of those (15 KB): with `entries`, a
    /// three-level search tree whose top stays in L1 and whose lower levels
    /// cost one or two cache lines each, read in parallel.
    sample: Store<u64>,
    top: Store<u64>,
    index: NameIndex,
    modules: ModuleSet,
    /// (hash of the part before the first `.`, entry) of every name with a
    /// compiler suffix, sorted; built on the first "not found".
    suggest: OnceLock<Vec<(u64, u32)>>,
    info: Info,
    /// A table from a snapshot: the table read from its source, for the
    /// queries that may touch pseudo-module symbols (BPF, ftrace), which a
    /// snapshot never serves.
    fresh: Option<Box<Fresh>>,
    /// For a table from a snapshot: the address ranges (lowest to highest
    /// symbol) of the core kernel and the loadable modules, sorted and
    /// merged ([`Table::covered_ranges`]); an address outside them goes to
    /// the fresh read.
    covered: Vec<(u64, u64)>,
}

/// For a table from a snapshot: the table read from the source when first
/// needed, and the check of the snapshot's unchecksummed sections.
pub(crate) struct Fresh {
    opts: Options,
    table: OnceLock<Result<Table>>,
    /// The checksum the text, entries and index slots must have
    /// ([`snapshot::bulk_sum`]), and whether they have it (known after the
    /// first query; when not, every query goes to the fresh read).
    bulk_sum: u64,
    intact: OnceLock<bool>,
}

impl Fresh {
    pub(crate) fn new(opts: &Options, bulk_sum: u64) -> Fresh {
        let mut opts = opts.clone();
        opts.snapshot.no_snapshot = true;
        Fresh {
            opts,
            table: OnceLock::new(),
            bulk_sum,
            intact: OnceLock::new(),
        }
    }

    /// Do `t`'s text, entries and index slots (mapped from the snapshot)
    /// have the checksum written with them? Hashed once, on first use.
    pub(super) fn intact(&self, t: &Table) -> bool {
        *self.intact.get_or_init(|| {
            snapshot::bulk_sum(
                &t.buf[t.base..],
                [
                    t.sample.as_bytes(),
                    t.top.as_bytes(),
                    t.entries.as_bytes(),
                    t.index.parts().0.as_bytes(),
                ],
            ) == self.bulk_sum
        })
    }
}

impl Table {
    /// Reads and indexes the kallsyms file named by the options (default
    /// /proc/kallmodsyms or /proc/kallsyms), with built-in module attribution
    /// and exact sizes where the options provide them.
    ///
    /// For the running kernel (as root, reading real addresses) a snapshot
    /// of the table is tried first (see HACKING.md, snapshots); on a miss the file is
    /// read and a snapshot written for the next open. The answers are the
    /// same either way.
    pub fn open(opts: &Options) -> Result<Table> {
        // A snapshot this process is writing is in place before it looks.
        background::wait();
        let path = opts
            .kallsyms_path
            .clone()
            .unwrap_or_else(default_kallsyms_path);
        let ranges = ranges::from_option(opts.builtin_ranges_path.as_deref());
        let plan = snapshot::TablePlan::new(
            &Options {
                builtin_ranges_path: Some(ranges.clone().unwrap_or_default()),
                ..opts.clone()
            },
            &path,
        );
        let note = match &plan {
            Ok(p) => match p.load(opts) {
                Ok((mut t, bytes)) => {
                    t.info.snapshot = snapshot::SnapshotInfo {
                        path: Some(p.path().to_path_buf()),
                        loaded: true,
                        written: false,
                        background: false,
                        bytes,
                        write_ns: 0,
                        note: None,
                    };
                    return Ok(t);
                }
                Err(why) => why,
            },
            Err(why) => why.clone(),
        };
        // Writing the snapshot starts before the read: its text goes to the
        // file while the kernel prints the rest.
        let writer = plan.as_ref().ok().map(|p| p.begin());
        let sink = |piece: &[u8], off: usize, base: usize| {
            if let Some(Ok(w)) = &writer {
                w.sink(piece, off, base)
            }
        };
        let opened = Self::open_file(opts, &path, ranges, Some(&sink));
        let mut t = match opened {
            Ok(t) => t,
            Err(e) => {
                if let (Ok(p), Some(Ok(w))) = (&plan, writer) {
                    p.abandon(w);
                }
                return Err(e);
            }
        };
        t.info.snapshot.note = Some(note);
        if let (Ok(p), Some(w)) = (&plan, writer) {
            t.info.snapshot.path = Some(p.path().to_path_buf());
            // The rest of the snapshot is written by a thread of its own
            // ([`background`]): this open returns now.
            match w.and_then(|w| p.finish_later(w, &mut t)) {
                Ok(()) => {
                    t.info.snapshot.written = true;
                    t.info.snapshot.background = true;
                }
                Err(why) => t.info.snapshot.note = Some(why),
            }
        }
        Ok(t)
    }

    /// Reads and indexes the file (no snapshot).
    fn open_file(
        opts: &Options,
        path: &Path,
        ranges: Option<PathBuf>,
        sink: Option<read::TextSink<'_>>,
    ) -> Result<Table> {
        let (buf, parsed) = read_and_parse(path, sink)?;
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
            return Err(answer::restricted(&source));
        }
        if format == Format::Kallmodsyms {
            build::classify_kallmodsyms_modules(&entries, &buf, &mut modules);
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
            None => {
                let (index, repeats) =
                    NameIndex::build_finding_repeats(&hashes, |i| entries[i].name_off)
                        .map_err(|e| e.context(&source))?;
                for r in repeats {
                    entries[r as usize].flags |= parse::REPEATED;
                }
                index
            }
        };
        drop(hashes);
        entries.shrink_to_fit();
        buf.shrink_to_fit();

        let sample: Vec<u64> = entries[n_abs..]
            .iter()
            .step_by(SAMPLE)
            .map(|e| e.addr)
            .collect();
        let top: Vec<u64> = sample.iter().step_by(FANOUT).copied().collect();
        let mut table = Table {
            buf: buf.into(),
            base,
            entries: entries.into(),
            n_abs,
            sample: sample.into(),
            top: top.into(),
            index,
            modules,
            suggest: OnceLock::new(),
            fresh: None,
            covered: Vec::new(),
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
                snapshot: Default::default(),
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
                let r = Ranges::read(&path)?;
                table.apply_ranges(&r);
                table.info.builtin_ranges = Some(path);
            }
        }
        if let Some(path) = vmlinux {
            let elf = ElfSymbols::read(path)?;
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

    /// The table holds no symbol.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How the table was built.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// Bytes of memory the table holds.
    pub fn memory(&self) -> usize {
        self.buf.heap_bytes().saturating_sub(self.base)
            + self.entries.heap_bytes()
            + self.index.memory()
            + self.sample.heap_bytes()
            + self.top.heap_bytes()
            + self.modules.memory()
            + self.suggest.get().map_or(0, |s| s.capacity() * 16)
            + std::mem::size_of::<Table>()
    }

    // ----- entries -------------------------------------------------------

    /// The entry's name (empty for an entry whose name lies outside the
    /// text: only in a damaged snapshot, whose entries are not checksummed).
    #[inline]
    fn name_bytes(&self, i: usize) -> &[u8] {
        let m = self.entries[i];
        let off = m.name_off as usize;
        self.buf.get(off..off + m.name_len()).unwrap_or_default()
    }

    #[inline]
    fn ty(&self, i: usize) -> u8 {
        self.entries[i].ty
    }

    /// The entry's size: stored, or computed for a far next symbol.
    #[inline]
    fn size_of(&self, i: usize) -> u64 {
        let m = self.entries[i];
        if m.size != SIZE_FAR || m.exact() {
            return m.size as u64;
        }
        self.far_size(i)
    }

    /// The distance to the next symbol of the region, past 32 bits.
    #[cold]
    fn far_size(&self, i: usize) -> u64 {
        let m = self.entries[i];
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
    #[inline]
    fn symbol(&self, i: usize, module: Option<ModId>) -> Symbol<'_> {
        let m = self.entries[i];
        let off = m.name_off as usize;
        // The parser wrote a NUL after every name, and a snapshot's text
        // and entries are checked before the first answer (`route`): the
        // name is not read here (its cache line is the caller's to load).
        // Out of the text (a damaged snapshot not yet checked): empty.
        let name = match self.buf.get(off..=off + m.name_len()) {
            Some(b) => CName::trusted(b),
            None => CName::from_cstr(c""),
        };
        let mid = module.unwrap_or_else(|| self.modules.primary(m.owner));
        let mut flags = 0;
        if self.modules.module(mid).kind == ModuleKind::Builtin {
            flags |= SYM_BUILTIN;
        }
        if m.exact() {
            flags |= SYM_SIZE_EXACT;
        }
        Symbol {
            addr: m.addr,
            size: self.size_of(i),
            name,
            module: CName::from_cstr(self.modules.name(mid)),
            ty: m.ty,
            flags,
        }
    }

    /// The ranges [`Table::covered`] holds, from the module set.
    fn covered_ranges(modules: &ModuleSet) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = modules
            .iter()
            .filter(|m| {
                matches!(m.kind, ModuleKind::Vmlinux | ModuleKind::Loadable) && m.symbols > 0
            })
            .map(|m| (m.lo, m.hi))
            .collect();
        v.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
        for (lo, hi) in v {
            match out.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        out
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

    /// The table whose module list is current: this one, or for a table
    /// from a snapshot the fresh read (pseudo-modules come and go).
    pub fn module_table(&self) -> Result<&Table> {
        self.route(|| true)
    }

    /// The table to answer from: this one, or, for a table from a snapshot
    /// and a query that may touch pseudo-module symbols, or whose text,
    /// entries or index do not check, the table read from the source
    /// (once, when first needed).
    /// `may_touch_pseudo` is asked only of a table from a snapshot.
    #[inline]
    fn route(&self, may_touch_pseudo: impl FnOnce() -> bool) -> Result<&Table> {
        match &self.fresh {
            None => Ok(self),
            Some(f) if may_touch_pseudo() || !f.intact(self) => f
                .table
                .get_or_init(|| Table::open(&f.opts))
                .as_ref()
                .map_err(Clone::clone),
            _ => Ok(self),
        }
    }

    /// Did this table come from a snapshot?
    pub fn from_snapshot(&self) -> bool {
        self.fresh.is_some()
    }

    /// For a table from a snapshot: has a query needed the fresh read?
    pub fn fresh_read(&self) -> bool {
        self.fresh.as_ref().is_some_and(|f| f.table.get().is_some())
    }

    /// The number of modules ([`Table::modules`]).
    pub fn module_count(&self) -> usize {
        self.modules.len()
    }
}

#[cfg(test)]
mod tests;
