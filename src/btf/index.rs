//! A name index over one BTF blob's own types, built once: the table's
//! [`NameIndex`] (open addressing, a tag per slot) keyed by the name's
//! hash, each entry a type id.

use std::sync::Arc;

use crate::base::hash::{hash, NameIndex};
use crate::error::{Error, Result};
use crate::formats::btf::Btf;

/// One BTF blob with the index of its named types.
pub struct Indexed {
    pub btf: Arc<Btf>,
    /// The ids of the blob's own named types, in id order.
    ids: Vec<u32>,
    index: NameIndex,
}

impl Indexed {
    pub fn new(btf: Arc<Btf>) -> Result<Indexed> {
        let mut ids = Vec::new();
        let mut hashes = Vec::new();
        for id in btf.own_ids() {
            let Some(t) = btf.ty(id) else { continue };
            if t.name_off == 0 {
                continue;
            }
            ids.push(id);
            hashes.push(hash(btf.str(t.name_off)));
        }
        let index = NameIndex::build(&hashes, |i| btf.ty(ids[i]).map_or(0, |t| t.name_off))
            .ok_or_else(|| Error::nomem("indexing BTF names"))?;
        Ok(Indexed { btf, ids, index })
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
        self.btf.bytes().len() + self.ids.capacity() * 4 + self.index.memory()
    }
}
