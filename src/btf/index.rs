//! A name index over one BTF blob's own types, built once: the table's
//! [`NameIndex`] (open addressing, a tag per slot) keyed by the name's
//! hash, each entry a type id.

use std::sync::Arc;

use crate::base::hash::{hash, NameIndex};
use crate::error::Result;
use crate::formats::btf::Btf;

/// One BTF blob with the index of its named types.
pub struct Indexed {
    pub btf: Arc<Btf>,
    /// The ids of the blob's own named types, in id order.
    ids: Vec<u32>,
    index: NameIndex,
    /// (hash of the essential name, id) of every name with a `___flavor`
    /// suffix, sorted (few: found while hashing the names).
    flavored: Vec<(u64, u32)>,
}

/// The length of a name without its CO-RE flavor: `task_struct___old`
/// is `task_struct` (libbpf's `bpf_core_essential_name_len`: the part
/// before the last `X___Y` separator where neither X nor Y is `_`).
pub fn essential_len(name: &[u8]) -> usize {
    let n = name.len();
    // Most names have no `___` at all: one look at each `_` says so.
    let has_sep = name.windows(3).any(|w| w == b"___");
    if n >= 5 && has_sep {
        for i in (0..=n - 5).rev() {
            let s = &name[i..];
            if s[0] != b'_' && &s[1..4] == b"___" && s[4] != b'_' {
                return i + 1;
            }
        }
    }
    n
}

impl Indexed {
    pub fn new(btf: Arc<Btf>) -> Result<Indexed> {
        let mut ids = Vec::new();
        let mut hashes = Vec::new();
        let mut name_offs = Vec::new();
        let mut flavored = Vec::new();
        for (id, name_off) in btf.own_names() {
            if name_off == 0 {
                continue;
            }
            let name = btf.str(name_off);
            ids.push(id);
            name_offs.push(name_off);
            hashes.push(hash(name));
            let e = essential_len(name);
            if e < name.len() {
                flavored.push((hash(&name[..e]), id));
            }
        }
        flavored.sort_unstable();
        let index = NameIndex::build(&hashes, |i| name_offs[i])
            .map_err(|e| e.context("indexing BTF names"))?;
        Ok(Indexed {
            btf,
            ids,
            index,
            flavored,
        })
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
        self.index.candidates(hash(name), |i, name_off| {
            if self.btf.str(name_off) == name {
                hits.push(self.ids[i]);
            }
        });
        hits.sort_unstable();
        for id in hits {
            f(id);
        }
    }

    /// The first own type named `name` of `kind` (any kind for 0), as
    /// libbpf's `btf__find_by_name_kind` answers: the lowest id.
    pub fn first(&self, name: &[u8], kind: u32) -> Option<u32> {
        let mut best: Option<u32> = None;
        self.index.candidates(hash(name), |i, name_off| {
            let id = self.ids[i];
            if best.is_none_or(|b| id < b)
                && self.btf.str(name_off) == name
                && (kind == 0 || self.btf.ty(id).is_some_and(|t| t.kind() == kind))
            {
                best = Some(id);
            }
        });
        best
    }

    /// Bytes held (the blob and the index).
    pub fn memory(&self) -> usize {
        self.btf.bytes().len()
            + self.ids.capacity() * 4
            + self.flavored.capacity() * 16
            + self.index.memory()
    }
}
