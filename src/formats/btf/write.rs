//! The write half of the BTF model: an owned, editable copy of a blob's
//! types ([`BtfWriter`], made from the zero-copy reader's [`Btf`] or from
//! nothing), written back with the header [`blob`] lays out. What makes an
//! object's BTF loadable (`bpf::loadable`, the fixups libbpf does) edits
//! one; so do the tests that build BTF by hand ([`Builder`], for raw words).
//!
//! Reading goes through [`Btf`] only: a writer's bytes are parsed again to
//! be read, and every check is the reader's.

use super::{
    le, Btf, Error, Result, KIND_ARRAY, KIND_DATASEC, KIND_DECL_TAG, KIND_ENUM, KIND_ENUM64,
    KIND_FUNC_PROTO, KIND_INT, KIND_STRUCT, KIND_UNION, KIND_VAR, MAGIC,
};

/// A VAR's linkage: static.
pub const VAR_STATIC: u32 = 0;
/// A VAR's linkage: a global the object allocates.
pub const VAR_GLOBAL_ALLOCATED: u32 = 1;
/// A VAR's linkage: an extern.
pub const VAR_GLOBAL_EXTERN: u32 = 2;
/// A FUNC's linkage (its vlen): static.
pub const FUNC_STATIC: u32 = 0;
/// A FUNC's linkage: global.
pub const FUNC_GLOBAL: u32 = 1;
/// A FUNC's linkage: extern.
pub const FUNC_EXTERN: u32 = 2;

/// A BTF blob made of `types` and `strings` (sections laid out as
/// compilers and the kernel write them): the 24-byte header of version 1
/// with `flags`, the types, the strings.
pub fn blob(flags: u8, types: &[u8], strings: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + types.len() + strings.len());
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&[1, flags]);
    // hdr_len, type_off, type_len, str_off, str_len.
    for v in [24, 0, types.len(), types.len(), strings.len()] {
        out.extend_from_slice(&(v as u32).to_le_bytes());
    }
    out.extend_from_slice(types);
    out.extend_from_slice(strings);
    out
}

/// The part of a type that follows its 12-byte header, as raw words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Extra {
    None,
    Int(u32),
    Array {
        ty: u32,
        index_ty: u32,
        nelems: u32,
    },
    /// struct/union members: (name_off, type, offset word).
    Members(Vec<[u32; 3]>),
    /// enum values: (name_off, value).
    Enum(Vec<[u32; 2]>),
    /// enum64 values: (name_off, lo, hi).
    Enum64(Vec<[u32; 3]>),
    /// func_proto params: (name_off, type).
    Params(Vec<[u32; 2]>),
    Var {
        linkage: u32,
    },
    /// datasec entries: (type, offset, size).
    Datasec(Vec<[u32; 3]>),
    DeclTag(u32),
}

/// One type of a [`BtfWriter`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Type {
    pub name_off: u32,
    pub info: u32,
    /// `size` or `type`, depending on the kind.
    pub size_type: u32,
    pub extra: Extra,
}

impl Type {
    pub fn kind(&self) -> u32 {
        (self.info >> 24) & 0x1f
    }
    pub fn vlen(&self) -> u32 {
        self.info & 0xffff
    }
}

/// Base BTF to edit: types (index = type id; id 0 is void) and strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtfWriter {
    pub types: Vec<Type>,
    pub strings: Vec<u8>,
    /// The header's flags byte, written back as it was read.
    pub flags: u8,
}

impl Default for BtfWriter {
    fn default() -> Self {
        Self::new()
    }
}

/// `n`-word groups of `e` (checked by the reader to be whole).
fn groups<const N: usize>(e: &[u8]) -> Vec<[u32; N]> {
    e.chunks_exact(4 * N)
        .map(|c| std::array::from_fn(|k| le::u32(c, 4 * k)))
        .collect()
}

impl BtfWriter {
    /// Nothing but void and the empty string.
    pub fn new() -> BtfWriter {
        BtfWriter {
            types: vec![Type {
                name_off: 0,
                info: 0,
                size_type: 0,
                extra: Extra::None,
            }],
            strings: vec![0],
            flags: 0,
        }
    }

    /// An editable copy of base BTF `btf` (its types and strings as they
    /// are: [`BtfWriter::to_bytes`] gives its bytes back). Split BTF is
    /// refused: its ids and strings continue another blob's.
    pub fn from_btf(btf: &Btf) -> Result<BtfWriter> {
        if btf.base().is_some() {
            return Err(Error::unsupported("a BTF writer edits base BTF only"));
        }
        let mut types = Vec::with_capacity(btf.own_len() + 1);
        types.push(Type {
            name_off: 0,
            info: 0,
            size_type: 0,
            extra: Extra::None,
        });
        for id in btf.own_ids() {
            let t = btf.own(id);
            let e = t.extra;
            let one = || le::u32(e, 0);
            let extra = match t.kind() {
                KIND_INT => Extra::Int(one()),
                KIND_ARRAY => {
                    let (ty, index_ty, nelems) = t.array();
                    Extra::Array {
                        ty,
                        index_ty,
                        nelems,
                    }
                }
                KIND_STRUCT | KIND_UNION => Extra::Members(groups(e)),
                KIND_ENUM => Extra::Enum(groups(e)),
                KIND_ENUM64 => Extra::Enum64(groups(e)),
                KIND_FUNC_PROTO => Extra::Params(groups(e)),
                KIND_VAR => Extra::Var { linkage: one() },
                KIND_DATASEC => Extra::Datasec(groups(e)),
                KIND_DECL_TAG => Extra::DeclTag(one()),
                _ => Extra::None,
            };
            types.push(Type {
                name_off: t.name_off,
                info: t.info,
                size_type: t.size_type,
                extra,
            });
        }
        Ok(BtfWriter {
            types,
            strings: btf.data[btf.strings.clone()].to_vec(),
            flags: btf.data[3],
        })
    }

    /// The string at `off` (empty when out of range).
    pub fn str(&self, off: u32) -> &[u8] {
        let Some(rest) = self.strings.get(off as usize..) else {
            return b"";
        };
        &rest[..memchr::memchr(0, rest).unwrap_or(rest.len())]
    }

    /// The name of type `id` (empty for anonymous types and void).
    pub fn name(&self, id: u32) -> &[u8] {
        self.types
            .get(id as usize)
            .map_or(&b""[..], |t| self.str(t.name_off))
    }

    /// Type `id` (`None` for void and past the end).
    pub fn get(&self, id: u32) -> Option<&Type> {
        self.types.get(id as usize).filter(|_| id != 0)
    }

    /// Type ids of every type of `kind`.
    pub fn ids_of_kind(&self, kind: u32) -> impl Iterator<Item = u32> + '_ {
        (1..self.types.len() as u32).filter(move |&i| self.types[i as usize].kind() == kind)
    }

    /// Appends a string, returning its offset.
    pub fn add_string(&mut self, s: &[u8]) -> u32 {
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(s);
        self.strings.push(0);
        off
    }

    /// The offset of the first string equal to `s`, which is appended when
    /// there is none (libbpf's `btf__add_str`, which deduplicates).
    pub fn find_or_add_string(&mut self, s: &[u8]) -> u32 {
        let mut off = 0;
        while let Some(rest) = self.strings.get(off..).filter(|r| !r.is_empty()) {
            let end = memchr::memchr(0, rest).unwrap_or(rest.len());
            if &rest[..end] == s {
                return off as u32;
            }
            off += end + 1;
        }
        self.add_string(s)
    }

    /// Appends a type, returning its id.
    pub fn add_type(&mut self, t: Type) -> u32 {
        self.types.push(t);
        (self.types.len() - 1) as u32
    }

    /// The first INT of 32 bits, for the VARs of extern sections (libbpf's
    /// `find_int_btf_id`); 0 (void) when there is none: libbpf adds none.
    pub fn int32(&self) -> u32 {
        self.ids_of_kind(KIND_INT)
            .find(|&i| matches!(self.types[i as usize].extra, Extra::Int(e) if e & 0xff == 32))
            .unwrap_or(0)
    }

    /// Serialises to the wire format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut tb: Vec<u8> = Vec::with_capacity(16 * self.types.len());
        let mut put = |v: u32| tb.extend_from_slice(&v.to_le_bytes());
        for t in self.types.iter().skip(1) {
            put(t.name_off);
            put(t.info);
            put(t.size_type);
            match &t.extra {
                Extra::None => {}
                Extra::Int(v) | Extra::Var { linkage: v } | Extra::DeclTag(v) => put(*v),
                Extra::Array {
                    ty,
                    index_ty,
                    nelems,
                } => [*ty, *index_ty, *nelems].into_iter().for_each(&mut put),
                Extra::Members(v) | Extra::Enum64(v) | Extra::Datasec(v) => {
                    v.iter().flatten().copied().for_each(&mut put)
                }
                Extra::Enum(v) | Extra::Params(v) => v.iter().flatten().copied().for_each(&mut put),
            }
        }
        blob(self.flags, &tb, &self.strings)
    }
}

/// Builds BTF by hand for tests: types as raw words, strings appended;
/// base or split (ids and string offsets after a base's).
#[cfg(test)]
#[derive(Default)]
pub struct Builder {
    pub types: Vec<u32>,
    pub strings: Vec<u8>,
    pub count: u32,
    /// For split BTF: the base's type count + 1 and string size.
    pub first_id: u32,
    pub first_str: u32,
}

#[cfg(test)]
impl Builder {
    pub fn new() -> Builder {
        Builder {
            strings: vec![0],
            first_id: 1,
            ..Default::default()
        }
    }
    pub fn split(base: &Btf) -> Builder {
        Builder {
            first_id: base.end_id(),
            first_str: base.str_end(),
            ..Default::default()
        }
    }
    pub fn s(&mut self, s: &str) -> u32 {
        let off = self.first_str + self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        off
    }
    /// Adds a type; returns its id.
    pub fn t(
        &mut self,
        name: &str,
        kind: u32,
        vlen: u32,
        kflag: bool,
        st: u32,
        extra: &[u32],
    ) -> u32 {
        let n = if name.is_empty() { 0 } else { self.s(name) };
        self.types.push(n);
        self.types
            .push((kind << 24) | vlen | ((kflag as u32) << 31));
        self.types.push(st);
        self.types.extend_from_slice(extra);
        self.count += 1;
        self.first_id + self.count - 1
    }
    pub fn bytes(&self) -> Vec<u8> {
        let tb: Vec<u8> = self.types.iter().flat_map(|w| w.to_le_bytes()).collect();
        blob(0, &tb, &self.strings)
    }
}
