//! Table snapshots: the parsed table written to a file once per boot, and
//! mapped by every later open instead of reading /proc/kallsyms. A payload
//! of the snapshot container ([`crate::base::snapshot`]), which checks the
//! header, the checksum and the key, and holds the trust rules.
//!
//! Valid for one key: the boot id, the kernel's release and version, the
//! source's identity (device, inode, size, mtime: all zero for procfs) and
//! the options' files (ranges, vmlinux), and the loadable modules of
//! /proc/modules (name, size, state, address). Any difference is a miss:
//! the table is read as without a snapshot, and a new snapshot written.
//! Pseudo-module symbols (BPF, ftrace, kprobes) change without any of that
//! changing: the table routes what may touch them to a fresh read (see
//! [`super::Table::fresh`]).
//!
//! Only a process that reads real addresses from /proc/kallsyms and whose
//! effective uid is 0 reads or writes snapshots; the default directory
//! (/run/ksym) holds the default source's only (a table of a file named by
//! `kallsyms_path` gets one only in a `snapshot_dir` named for it). The directory must be a
//! real directory (no symlink) owned by that uid with no group or other
//! permission (made 0700 if missing); a snapshot file must be a regular
//! file owned by it, mode 0600, opened with `O_NOFOLLOW`, written to a
//! temporary file and renamed into place.
//!
//! Format (native little-endian, version 4; 3 from the size estimates that
//! stop at any next symbol, 4 from the entries' repeated-name flag and the
//! sample and top levels checked with the bulk):
//!
//! ```text
//! 0    "KSYMSNAP", version u32, header length u32 (= 256)
//! 16   file length u64, checksum u64 (of the header's bytes 32..256 and
//!      the checked part)
//! 32   the checked part's start and end, then (offset, length) u64 pairs
//!      of: key, meta, sample (u64s), top (u64s), entries (24-byte entries),
//!      index slots (u64s), text; then the text's base u64 and the checksum
//!      of the text, sample, top, entries and slots ([`bulk_sum`])
//! ...  the text, at its base (or 2 MiB after it: a hole), written while
//!      the source is still being read
//! ...  the checked part: key, meta (Info, module set, index parameters);
//!      then sample, top, entries and index slots, bounds-checked where
//!      used, and outside the checksum checked at open (10 MB would cost
//!      what the whole open may): their own checksum, with the text's, is
//!      checked on the first query, and when it fails every query goes to
//!      a fresh read of the source (docs/snapshots.md, "Trust")
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use super::parse::Entry;
use super::{Info, Options, SizeSource, Table};
use crate::base::hash::{checksum as sum_of, NameIndex};
use crate::base::le::Cursor;
use crate::base::mapped::{Mapping, Store};
use crate::base::read::{limits, read_file};
use crate::base::snapshot::trust::{self, identity, push_str, Temp};
use crate::base::snapshot::{Checked, Format as FileFormat, Header, Plan, HEADER};
pub use crate::base::snapshot::{SnapshotInfo, DEFAULT_DIR};
use crate::formats::kallsyms::Format;
use crate::rules::modules::ModuleSet;

/// The table's files in the container: the checksum hashes with
/// [`sum_of`], made for long sections (the text may be in the checked
/// part's place: see [`write_to`]).
const FORMAT: FileFormat = FileFormat {
    magic: b"KSYMSNAP",
    version: 4,
    sum: sum_of,
};

/// Where a table's snapshot lives and what it must match: the container's
/// [`Plan`], and the modules part of its key, checked again after the read
/// (the BTF snapshot has no such second check).
#[derive(Clone)]
pub(super) struct TablePlan {
    file: Plan,
    /// The key's module part, to check again after the read.
    modules: Vec<u8>,
    modules_path: PathBuf,
}

/// A snapshot being written: its temporary file, and how much of the text
/// was written while the source was read.
pub(super) struct Writer {
    temp: Temp,
    streamed: AtomicUsize,
    failed: AtomicBool,
}

impl Writer {
    /// Writes a parsed piece of the text (at `off` in it; `base`: where the
    /// text starts in the table's buffer) where the snapshot keeps it.
    pub(super) fn sink(&self, piece: &[u8], off: usize, base: usize) {
        use std::os::unix::fs::FileExt;
        if self.failed.load(Ordering::Relaxed) || self.streamed.load(Ordering::Relaxed) != off {
            self.failed.store(true, Ordering::Relaxed);
            return;
        }
        match self
            .temp
            .file
            .write_all_at(piece, text_pos(base) + off as u64)
        {
            Ok(()) => {
                self.streamed.fetch_add(piece.len(), Ordering::Relaxed);
            }
            Err(_) => self.failed.store(true, Ordering::Relaxed),
        }
    }
}

/// Where the text goes in the file: at its own `base`, so that the
/// table's view of it (which starts `base` bytes before the text) starts at
/// byte 0; 2 MiB further (a hole, which costs nothing) when that would
/// overlap the header.
fn text_pos(base: usize) -> u64 {
    if base >= HEADER {
        base as u64
    } else {
        (base + (2 << 20)) as u64
    }
}

fn le(v: u64) -> [u8; 8] {
    v.to_le_bytes()
}

/// Is this process one that may use snapshots: effective uid 0, and
/// /proc/kallsyms shows it real addresses?
fn privileged() -> bool {
    crate::base::sys::euid() == 0 && crate::formats::addresses::proc_shows_real_addresses()
}

impl TablePlan {
    /// The snapshot plan for a table opened with `opts`, or why there is
    /// none (disabled, not privileged).
    pub(super) fn new(opts: &Options, source: &Path) -> Result<TablePlan, String> {
        // /run/ksym holds the running kernel's table only: a file named by
        // the caller gets a snapshot in a directory the caller names.
        let dir = trust::place(
            opts.snapshot
                .no_snapshot
                .then_some("KSYM_TABLE_NO_SNAPSHOT"),
            opts.kallsyms_path.is_some().then_some("kallsyms_path"),
            opts.snapshot.snapshot_dir.as_deref(),
            || (!privileged()).then_some("needs euid 0 and real addresses in /proc/kallsyms"),
        )?;
        let boot = trust::boot_key(opts.snapshot.boot_id_path.as_deref())?;
        let ranges = opts.builtin_ranges_path.clone().unwrap_or_default();
        let vmlinux = opts.vmlinux_path.clone().unwrap_or_default();
        // The name: which source and options; the key: which boot and files.
        let mut what = Vec::new();
        for p in [source, &ranges, &vmlinux] {
            push_str(&mut what, p.as_os_str().as_encoded_bytes());
        }
        what.push(opts.builtin_ranges_path.is_none() as u8);
        let mut key = what.clone();
        key.extend_from_slice(&boot);
        for p in [source, &ranges, &vmlinux] {
            for v in identity(p) {
                key.extend_from_slice(&le(v));
            }
        }
        let modules_path = opts
            .modules_path
            .clone()
            .unwrap_or_else(|| PathBuf::from("/proc/modules"));
        let modules = modules_key(&modules_path);
        key.extend_from_slice(&modules);
        Ok(TablePlan {
            file: Plan::new(dir, "table", &what, key),
            modules,
            modules_path,
        })
    }

    /// The table of a valid snapshot, if there is one.
    pub(super) fn load(&self, opts: &Options) -> Result<(Table, usize), String> {
        let c = self.file.open(&FORMAT)?;
        let t = from_file(&c, opts).ok_or_else(|| self.file.damaged())?;
        Ok((t, c.len))
    }

    /// Starts writing a snapshot: the private directory (made if missing)
    /// and a temporary file in it, which the text is streamed into while
    /// the source is read ([`Writer::sink`]).
    pub(super) fn begin(&self) -> Result<Writer, String> {
        let temp = self.file.temp("table")?;
        Ok(Writer {
            temp,
            streamed: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
        })
    }

    /// Finishes the snapshot of a table (its [`Parts`]) and renames it into
    /// place, unless the modules changed while it was read (then the
    /// snapshot could claim symbols it lacks). Returns its size.
    pub(super) fn finish(&self, w: Writer, parts: &Parts) -> Result<usize, String> {
        if modules_key(&self.modules_path) != self.modules {
            w.temp.discard();
            return Err("not written: modules changed while the table was read".to_string());
        }
        write_to(&self.file, w, parts)
    }

    /// [`TablePlan::finish`] on a thread of its own
    /// ([`crate::base::snapshot::background`]): the
    /// caller's open returns without waiting for the write. The table's
    /// arrays are shared with the thread, not copied.
    pub(super) fn finish_later(&self, w: Writer, t: &mut Table) -> Result<(), String> {
        let parts = Parts::of(t);
        let plan = self.clone();
        crate::base::snapshot::background::start(move || {
            let _ = plan.finish(w, &parts);
        })
        .map_err(|e| format!("not written: no thread to write it: {e}"))
    }

    /// Gives up a snapshot begun (the read failed).
    pub(super) fn abandon(&self, w: Writer) {
        w.temp.discard();
    }

    pub(super) fn path(&self) -> &Path {
        self.file.path()
    }
}

/// The loadable modules of `path` as the key holds them: name, size,
/// state, address, sorted (refcounts change without anything moving).
fn modules_key(path: &Path) -> Vec<u8> {
    let text = read_file(path, 0, limits::SMALL, "/proc/modules").unwrap_or_default();
    let mut mods = crate::formats::proc_modules::parse(&text);
    mods.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::new();
    out.extend_from_slice(&le(mods.len() as u64));
    for m in mods {
        push_str(&mut out, &m.name);
        push_str(&mut out, &m.state);
        out.extend_from_slice(&le(m.size));
        out.extend_from_slice(&le(m.addr));
    }
    out
}

fn pad_to(out: &mut Vec<u8>, align: usize) {
    while out.len() % align != 0 {
        out.push(0);
    }
}

/// The meta section: what the table needs beyond its arrays.
fn meta(t: &Table) -> Vec<u8> {
    let mut m = Vec::new();
    let (_, parts, part_len, idx_bits) = t.index.parts();
    for v in [
        t.n_abs as u64,
        parts as u64,
        part_len as u64,
        idx_bits as u64,
        t.info.lines as u64,
        t.info.file_bytes as u64,
        match t.info.format {
            Format::Kallsyms => 0,
            Format::Kallmodsyms => 1,
        },
        match t.info.size_source {
            SizeSource::Estimated => 0,
            SizeSource::Kallmodsyms => 1,
            SizeSource::Vmlinux => 2,
        },
    ] {
        m.extend_from_slice(&le(v));
    }
    push_str(&mut m, t.info.source.as_bytes());
    let ranges = t
        .info
        .builtin_ranges
        .as_ref()
        .map(|p| p.as_os_str().as_encoded_bytes().to_vec());
    m.push(ranges.is_some() as u8);
    push_str(&mut m, ranges.as_deref().unwrap_or_default());
    m.extend_from_slice(&le(t.info.diagnostics.len() as u64));
    for d in &t.info.diagnostics {
        push_str(&mut m, d.as_bytes());
    }
    push_str(&mut m, &t.modules.to_bytes());
    m
}

/// What a snapshot holds of a table: its arrays, shared with the table
/// (no copy), and its metadata.
pub(super) struct Parts {
    buf: Store<u8>,
    base: usize,
    sample: Store<u64>,
    top: Store<u64>,
    entries: Store<Entry>,
    slots: Store<u64>,
    meta: Vec<u8>,
}

impl Parts {
    /// `t`'s parts; its arrays become shared (read-only) if they were not.
    fn of(t: &mut Table) -> Parts {
        Parts {
            buf: t.buf.share(),
            base: t.base,
            sample: t.sample.share(),
            top: t.top.share(),
            entries: t.entries.share(),
            slots: t.index.share_slots(),
            meta: meta(t),
        }
    }
}

/// Writes the snapshot of a table (the text too, unless it was all
/// streamed) and puts it in place; returns its size.
fn write_to(file: &Plan, w: Writer, t: &Parts) -> Result<usize, String> {
    use std::os::unix::fs::FileExt;
    let key = file.key();
    let meta = &t.meta;
    let slots = &t.slots;
    let text = &t.buf[t.base..];
    let text_at = text_pos(t.base);
    // The checked part right after the header when it fits before the
    // text (an open then reads it on the header's page), else after the
    // text; the big arrays after both (8-aligned).
    let key_len = key.len().next_multiple_of(8);
    let chk_len = (key_len + meta.len()) as u64;
    let text_end = text_at + text.len() as u64;
    let chk_at = if HEADER as u64 + chk_len <= text_at {
        HEADER as u64
    } else {
        text_end.next_multiple_of(8)
    };
    let mut chk = Vec::with_capacity(chk_len as usize);
    chk.extend_from_slice(key);
    pad_to(&mut chk, 8);
    chk.extend_from_slice(meta);
    let key_s = (chk_at, key.len() as u64);
    let meta_s = (chk_at + key_len as u64, meta.len() as u64);
    // After the text and the checked part: the sample and top levels, the
    // entries and the index slots, checked on the first query ([`bulk_sum`]).
    let sample_at = text_end.max(chk_at + chk_len).next_multiple_of(8);
    let (sample, top) = (t.sample.as_bytes(), t.top.as_bytes());
    let sample_s = (sample_at, sample.len() as u64);
    let top_s = (sample_at + sample.len() as u64, top.len() as u64);
    let entries_at = top_s.0 + top.len() as u64;
    let entries = t.entries.as_bytes();
    let slots_at = entries_at + entries.len() as u64;
    let slots_b = slots.as_bytes();
    let total = slots_at + slots_b.len() as u64;
    let mut fields = vec![chk_at, chk_at + chk.len() as u64];
    for (a, l) in [key_s, meta_s, sample_s, top_s] {
        fields.extend([a, l]);
    }
    fields.extend([
        entries_at,
        t.entries.len() as u64,
        slots_at,
        slots.len() as u64,
    ]);
    fields.extend([
        text_at,
        text.len() as u64,
        t.base as u64,
        bulk_sum(text, [sample, top, entries, slots_b]),
    ]);
    let streamed =
        !w.failed.load(Ordering::Relaxed) && w.streamed.load(Ordering::Relaxed) == text.len();
    let header = Header {
        total,
        fields: &fields,
        checked: &chk,
    };
    file.write(w.temp, &FORMAT, header, |f| {
        if !streamed {
            f.write_all_at(text, text_at)?;
        }
        f.write_all_at(&chk, chk_at)?;
        f.write_all_at(&[sample, top].concat(), sample_at)?;
        f.write_all_at(entries, entries_at)?;
        f.write_all_at(slots_b, slots_at)
    })
}

/// The checksum of the sections not checked at open: the text, the
/// sample and top levels, the entries and the index slots (checked on a
/// table's first query).
pub(super) fn bulk_sum(text: &[u8], arrays: [&[u8]; 4]) -> u64 {
    arrays.iter().enumerate().fold(sum_of(text), |acc, (i, a)| {
        acc ^ sum_of(a).rotate_left(11 + 13 * i as u32)
    })
}

/// The table in a snapshot whose header and key checked
/// ([`Plan::open`]), if every count and offset the header gives is
/// consistent.
fn from_file(c: &Checked, opts: &Options) -> Option<Table> {
    let map: &Arc<Mapping> = &c.map;
    let f = |i: usize| c.field(i).map(|v| v as usize);
    // The meta section lies in the checked part (the key, checked by the
    // container, before it).
    let meta = c.section(f(4)?, f(5)?)?;
    let (sample_at, sample_len) = (f(6)?, f(7)? / 8);
    let (top_at, top_len) = (f(8)?, f(9)? / 8);
    let (entries_at, n_entries) = (f(10)?, f(11)?);
    let (slots_at, n_slots) = (f(12)?, f(13)?);
    let (text_at, text_len) = (f(14)?, f(15)?);
    let base = f(16)?;
    let bulk = c.field(17)?;
    let sample: Store<u64> = Store::mapped(map, sample_at, sample_len)?;
    let top: Store<u64> = Store::mapped(map, top_at, top_len)?;
    let entries: Store<Entry> = Store::mapped(map, entries_at, n_entries)?;
    let slots: Store<u64> = Store::mapped(map, slots_at, n_slots)?;
    // The text as the table indexes it: `base` bytes before it (never
    // read: every name offset is past them) belong to the file before.
    let buf: Store<u8> =
        Store::mapped(map, text_at.checked_sub(base)?, base.checked_add(text_len)?)?;

    // Meta.
    let mut r = Cursor::new(meta);
    let nums: Vec<u64> = (0..8).map(|_| r.u64()).collect::<Option<_>>()?;
    let source = String::from_utf8(r.string()?.to_vec()).ok()?;
    let has_ranges = r.bytes(1)?[0] == 1;
    let ranges = r.string()?;
    let nd = r.u64()? as usize;
    let mut diagnostics = Vec::new();
    for _ in 0..nd.min(1 << 12) {
        diagnostics.push(String::from_utf8_lossy(r.string()?).into_owned());
    }
    let modules = ModuleSet::from_bytes(r.string()?)?;
    let n_abs = nums[0] as usize;
    let index = NameIndex::from_parts(slots, nums[1] as usize, nums[2] as usize, nums[3] as u32)?;
    if n_abs > entries.len()
        || entries
            .iter()
            .take(1)
            .any(|e| e.owner as usize >= modules.owner_count())
    {
        return None;
    }
    let format = match nums[6] {
        0 => Format::Kallsyms,
        1 => Format::Kallmodsyms,
        _ => return None,
    };
    let size_source = match nums[7] {
        0 => SizeSource::Estimated,
        1 => SizeSource::Kallmodsyms,
        2 => SizeSource::Vmlinux,
        _ => return None,
    };
    use std::os::unix::ffi::OsStrExt;
    let covered = Table::covered_ranges(&modules);
    Some(Table {
        covered,
        buf,
        base,
        entries,
        n_abs,
        sample,
        top,
        index,
        modules,
        suggest: Default::default(),
        info: Info {
            source,
            format,
            lines: nums[4] as usize,
            file_bytes: nums[5] as usize,
            read_ns: 0,
            parse_ns: 0,
            attribution_ns: 0,
            size_source,
            builtin_ranges: has_ranges.then(|| PathBuf::from(std::ffi::OsStr::from_bytes(ranges))),
            diagnostics,
            snapshot: SnapshotInfo::default(),
        },
        fresh: Some(Box::new(super::Fresh::new(opts, bulk))),
    })
}
