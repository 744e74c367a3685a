//! A name index over one BTF blob's own types, built once: the table's
//! [`NameIndex`] (open addressing, a tag per slot) keyed by the name's
//! hash, each entry a type id (no array between: a lookup reads the slot,
//! then the name and the type).
//!
//! An index read back from a snapshot is checked on its first lookup: the
//! checksum of its slots (written with them) must match, or the lookups
//! go to an index rebuilt from the blob (the checked slow path), so a
//! damaged slot loses no answer.

use std::sync::{Arc, OnceLock};

use crate::base::hash::{hash, hash_cstr, NameIndex};
use crate::error::Result;
use crate::formats::btf::Btf;

/// One BTF blob ([`Btf`]: its types by id) with the index of its named
/// types (by name, and by essential name for `___flavor` names): what
/// `KernelBtf` finds types in. [`Btf`] alone is what a BPF object's
/// `.BTF` and a check need.
pub struct NameIndexedBtf {
    pub btf: Arc<Btf>,
    index: NameIndex,
    /// (hash of the essential name, id) of every name with a `___flavor`
    /// suffix, sorted (few: found while hashing the names).
    flavored: Vec<(u64, u32)>,
    /// A snapshot's index: the checksum its slots must have, and (after the
    /// first lookup) the index rebuilt from the blob when they do not.
    loaded: Option<Loaded>,
}

struct Loaded {
    slots_sum: u64,
    rebuilt: OnceLock<Option<Box<NameIndexedBtf>>>,
}

/// The checksum of an index's slots (a snapshot stores it).
pub fn slots_sum(index: &NameIndex) -> u64 {
    crate::base::hash::hash(index.parts().0.as_bytes())
}

/// The length of a name without its CO-RE flavor: `task_struct___old`
/// is `task_struct` (libbpf's `bpf_core_essential_name_len`: the part
/// before the last `X___Y` separator where neither X nor Y is `_`).
pub fn essential_len(name: &[u8]) -> usize {
    let n = name.len();
    if n >= 5 && memchr::memmem::find(name, b"___").is_some() {
        for i in (0..=n - 5).rev() {
            let s = &name[i..];
            if s[0] != b'_' && &s[1..4] == b"___" && s[4] != b'_' {
                return i + 1;
            }
        }
    }
    n
}

/// The named types of part of a blob: their ids, name hashes and name
/// offsets, and (essential hash, id) of the flavored ones.
#[derive(Default)]
struct Names {
    ids: Vec<u32>,
    hashes: Vec<u64>,
    name_offs: Vec<u32>,
    flavored: Vec<(u64, u32)>,
}

impl Names {
    fn scan(btf: &Btf, range: std::ops::Range<usize>) -> Names {
        let mut out = Names::default();
        let cap = range.len();
        out.ids.reserve(cap);
        out.hashes.reserve(cap);
        out.name_offs.reserve(cap);
        for (id, name_off) in btf.own_names_in(range) {
            if name_off == 0 {
                continue;
            }
            let rest = btf.str_from(name_off);
            let (len, h, run3) = hash_cstr(rest);
            out.ids.push(id);
            out.name_offs.push(name_off);
            out.hashes.push(h);
            if run3 {
                let name = &rest[..len];
                let e = essential_len(name);
                if e < name.len() {
                    out.flavored.push((hash(&name[..e]), id));
                }
            }
        }
        out
    }

    fn append(&mut self, other: Names) {
        self.ids.extend(other.ids);
        self.hashes.extend(other.hashes);
        self.name_offs.extend(other.name_offs);
        self.flavored.extend(other.flavored);
    }
}

/// Below this many types one thread names them all (vmlinux: ~140k).
const SPLIT_TYPES: usize = 32 * 1024;

impl NameIndexedBtf {
    pub fn new(btf: Arc<Btf>) -> Result<NameIndexedBtf> {
        // vmlinux's names are hashed on two threads (half the types each),
        // as the index is then filled.
        let n = btf.own_len();
        let Names {
            ids,
            hashes,
            name_offs,
            mut flavored,
        } = if n < SPLIT_TYPES {
            Names::scan(&btf, 0..n)
        } else {
            let b: &Btf = &btf;
            std::thread::scope(|s| {
                let hi = s.spawn(|| Names::scan(b, n / 2..n));
                let mut lo = Names::scan(b, 0..n / 2);
                match hi.join() {
                    Ok(hi) => lo.append(hi),
                    Err(_) => lo.append(Names::scan(b, n / 2..n)),
                }
                lo
            })
        };
        flavored.sort_unstable();
        let end = btf.end_id() as usize;
        let index = NameIndex::build_with(&hashes, end, |i| ids[i] as usize, |i| name_offs[i])
            .map_err(|e| e.context("indexing BTF names"))?;
        Ok(NameIndexedBtf {
            btf,
            index,
            flavored,
            loaded: None,
        })
    }

    /// What [`NameIndexedBtf::from_parts`] takes again (a snapshot writes them).
    pub fn parts(&self) -> (&NameIndex, &[(u64, u32)]) {
        (&self.index, &self.flavored)
    }

    /// Do the flavored names read back (a snapshot's) fit a blob whose own
    /// types are `own`? (The name index is probed with bounds checks, and
    /// each entry must be an own type with the slot's name: a damaged slot
    /// is a name not found, never another type.)
    pub fn fits(own: std::ops::Range<u32>, flavored: &[(u64, u32)]) -> bool {
        flavored.iter().all(|(_, i)| own.contains(i))
    }

    /// An index from parts that [`NameIndexedBtf::fits`] accepted, whose slots'
    /// checksum ([`slots_sum`]) must be `slots_sum`: checked on the first
    /// lookup, not here (hashing ~1 MB would cost most of what a snapshot
    /// saves an open that looks nothing up).
    pub fn from_parts(
        btf: Arc<Btf>,
        index: NameIndex,
        flavored: Vec<(u64, u32)>,
        slots_sum: u64,
    ) -> NameIndexedBtf {
        NameIndexedBtf {
            btf,
            index,
            flavored,
            loaded: Some(Loaded {
                slots_sum,
                rebuilt: OnceLock::new(),
            }),
        }
    }

    /// The index to answer from: this one, or for a snapshot's whose slots
    /// do not have their checksum, one rebuilt from the blob (once).
    fn checked(&self) -> &NameIndexedBtf {
        let Some(l) = &self.loaded else {
            return self;
        };
        l.rebuilt
            .get_or_init(|| {
                (slots_sum(&self.index) != l.slots_sum)
                    .then(|| NameIndexedBtf::new(self.btf.clone()).ok().map(Box::new))
                    .flatten()
            })
            .as_deref()
            .unwrap_or(self)
    }

    /// Did a snapshot's index fail its check, so that lookups use one
    /// rebuilt from the blob? (Known after the first lookup.)
    pub fn rebuilt(&self) -> bool {
        self.loaded
            .as_ref()
            .is_some_and(|l| l.rebuilt.get().is_some_and(|r| r.is_some()))
    }

    /// Calls `f(id, type)` with each own type the index holds under
    /// `name`'s hash whose name is `name`. The entry must be an own type
    /// whose name offset is the slot's (always so but in a damaged
    /// snapshot).
    fn each_candidate(&self, name: &[u8], mut f: impl FnMut(u32, crate::formats::btf::Ty<'_>)) {
        let ix = self.checked();
        let own = ix.btf.own_ids();
        ix.index.candidates(hash(name), |i, name_off| {
            let Ok(id) = u32::try_from(i) else {
                return;
            };
            if !own.contains(&id) {
                return;
            }
            if let Some(t) = ix.btf.ty(id) {
                if t.name_off == name_off && ix.btf.str(name_off) == name {
                    f(id, t);
                }
            }
        });
    }

    /// The own types whose essential name (flavor dropped) is `essential`,
    /// in id order: CO-RE's candidates, as libbpf's linear scan finds them.
    pub fn by_essential_name(&self, essential: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        self.each_named(essential, |id| out.push(id));
        let flavored = &self.flavored;
        let h = hash(essential);
        let start = flavored.partition_point(|&(k, _)| k < h);
        out.extend(
            flavored[start..]
                .iter()
                .take_while(|&&(k, _)| k == h)
                .map(|&(_, id)| id)
                .filter(|&id| {
                    let name = self.btf.name(id);
                    &name[..essential_len(name)] == essential
                }),
        );
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Calls `f` with every own type named `name`, in id order.
    pub fn each_named(&self, name: &[u8], mut f: impl FnMut(u32)) {
        let mut hits: Vec<u32> = Vec::new();
        self.each_candidate(name, |id, _| hits.push(id));
        hits.sort_unstable();
        for id in hits {
            f(id);
        }
    }

    /// The first own type named `name` of `kind` (any kind for 0), as
    /// libbpf's `btf__find_by_name_kind` answers: the lowest id.
    pub fn first(&self, name: &[u8], kind: u32) -> Option<u32> {
        let mut best: Option<u32> = None;
        self.each_candidate(name, |id, t| {
            if best.is_none_or(|b| id < b) && (kind == 0 || t.kind() == kind) {
                best = Some(id);
            }
        });
        best
    }

    /// Bytes held (the blob and the index, and an index rebuilt).
    pub fn memory(&self) -> usize {
        let rebuilt = self
            .loaded
            .as_ref()
            .and_then(|l| l.rebuilt.get()?.as_ref())
            .map_or(0, |r| r.index.memory());
        self.btf.bytes().len() + self.flavored.capacity() * 16 + self.index.memory() + rebuilt
    }
}
