//! A small BTF reader and writer for an object's own BTF: enough to read
//! BTF-defined maps (`map_def`) and `.ksyms` externs, to make it loadable
//! (the fixups libbpf does), and to name `.BTF.ext`'s sections (`btf_ext`).
//!
//! Format: `Documentation/bpf/btf.rst`. Every offset and index is checked;
//! malformed BTF is `KSYM_ERR_FORMAT`, never a panic.

use crate::error::{Error, Result};

// The format's numbers, from the kernel-BTF reader (one copy of them).
use crate::formats::btf::{follow_chain, is_modifier};
pub use crate::formats::btf::{
    KIND_ARRAY, KIND_CONST, KIND_DATASEC, KIND_DECL_TAG, KIND_ENUM, KIND_ENUM64, KIND_FLOAT,
    KIND_FUNC, KIND_FUNC_PROTO, KIND_FWD, KIND_INT, KIND_PTR, KIND_RESTRICT, KIND_STRUCT,
    KIND_TYPEDEF, KIND_TYPE_TAG, KIND_UNION, KIND_VAR, KIND_VOLATILE, MAGIC,
};

pub const VAR_STATIC: u32 = 0;
pub const VAR_GLOBAL_ALLOCATED: u32 = 1;
pub const VAR_GLOBAL_EXTERN: u32 = 2;
pub const FUNC_STATIC: u32 = 0;
pub const FUNC_GLOBAL: u32 = 1;
pub const FUNC_EXTERN: u32 = 2;

/// The part of a type that follows its 12-byte header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Extra {
    None,
    Int(u32),
    Array {
        ty: u32,
        index_ty: u32,
        nelems: u32,
    },
    /// struct/union members: (name_off, type, offset).
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

/// Parsed BTF: types (index = type id; id 0 is void) and strings.
#[derive(Clone, Debug)]
pub struct Btf {
    pub types: Vec<Type>,
    pub strings: Vec<u8>,
    flags: u8,
}

pub(super) fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

pub(super) fn bad(what: impl std::fmt::Display) -> Error {
    Error::format(format!("malformed .BTF: {what}"))
}

impl Btf {
    pub fn parse(data: &[u8]) -> Result<Btf> {
        if data.len() < 24 {
            return Err(bad("shorter than its header"));
        }
        let magic = data.get(0..2).map(|m| u16::from_le_bytes([m[0], m[1]]));
        if magic != Some(MAGIC) {
            return Err(bad("bad magic (not little-endian BTF?)"));
        }
        let version = data.get(2).copied().unwrap_or(0);
        if version != 1 {
            return Err(bad(format!("version {version}, expected 1")));
        }
        let flags = data[3];
        let field = |o: usize| u32_at(data, o).ok_or_else(|| bad("truncated header"));
        let hdr_len = field(4)? as usize;
        let (type_off, type_len, str_off, str_len) =
            (field(8)?, field(12)?, field(16)?, field(20)?);
        if hdr_len < 24 {
            return Err(bad("header too short"));
        }
        let section = |off: u32, len: u32, what: &str| {
            let start = hdr_len.checked_add(off as usize).ok_or_else(|| bad(what))?;
            let end = start.checked_add(len as usize).ok_or_else(|| bad(what))?;
            data.get(start..end)
                .ok_or_else(|| bad(format!("{what} section out of bounds")))
        };
        let tdata = section(type_off, type_len, "type")?;
        let strings = section(str_off, str_len, "string")?.to_vec();
        if strings.first().is_some_and(|&b| b != 0) {
            return Err(bad("string section does not start with NUL"));
        }
        let mut types = vec![Type {
            name_off: 0,
            info: 0,
            size_type: 0,
            extra: Extra::None,
        }];
        let mut pos = 0;
        while pos < tdata.len() {
            let id = types.len();
            let get =
                |o: usize| u32_at(tdata, o).ok_or_else(|| bad(format!("type {id} truncated")));
            let (name_off, info, size_type) = (get(pos)?, get(pos + 4)?, get(pos + 8)?);
            pos += 12;
            let vlen = (info & 0xffff) as usize;
            let kind = (info >> 24) & 0x1f;
            let mut words = |n: usize| -> Result<Vec<u32>> {
                let need = n.checked_mul(4).ok_or_else(|| bad("overflow"))?;
                if tdata.len() - pos < need {
                    return Err(bad(format!("type {id} truncated")));
                }
                let v = (0..n)
                    .map(|k| u32_at(tdata, pos + 4 * k).unwrap_or(0))
                    .collect();
                pos += need;
                Ok(v)
            };
            let extra = match kind {
                KIND_INT => Extra::Int(words(1)?[0]),
                KIND_ARRAY => {
                    let w = words(3)?;
                    Extra::Array {
                        ty: w[0],
                        index_ty: w[1],
                        nelems: w[2],
                    }
                }
                KIND_STRUCT | KIND_UNION => Extra::Members(
                    words(3 * vlen)?
                        .chunks(3)
                        .map(|c| [c[0], c[1], c[2]])
                        .collect(),
                ),
                KIND_ENUM => {
                    Extra::Enum(words(2 * vlen)?.chunks(2).map(|c| [c[0], c[1]]).collect())
                }
                KIND_ENUM64 => Extra::Enum64(
                    words(3 * vlen)?
                        .chunks(3)
                        .map(|c| [c[0], c[1], c[2]])
                        .collect(),
                ),
                KIND_FUNC_PROTO => {
                    Extra::Params(words(2 * vlen)?.chunks(2).map(|c| [c[0], c[1]]).collect())
                }
                KIND_VAR => Extra::Var {
                    linkage: words(1)?[0],
                },
                KIND_DATASEC => Extra::Datasec(
                    words(3 * vlen)?
                        .chunks(3)
                        .map(|c| [c[0], c[1], c[2]])
                        .collect(),
                ),
                KIND_DECL_TAG => Extra::DeclTag(words(1)?[0]),
                KIND_PTR | KIND_FWD | KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT
                | KIND_FUNC | KIND_FLOAT | KIND_TYPE_TAG => Extra::None,
                k => return Err(bad(format!("type {id} has unknown kind {k}"))),
            };
            types.push(Type {
                name_off,
                info,
                size_type,
                extra,
            });
        }
        let btf = Btf {
            types,
            strings,
            flags,
        };
        btf.check_references()?;
        Ok(btf)
    }

    /// Every type id and string offset used points inside the BTF.
    fn check_references(&self) -> Result<()> {
        let n = self.types.len() as u32;
        let s = self.strings.len() as u32;
        for (id, t) in self.types.iter().enumerate().skip(1) {
            let ty_ok = |x: u32| x < n;
            if t.name_off >= s && t.name_off != 0 {
                return Err(bad(format!("type {id} name offset out of range")));
            }
            let refs_type = matches!(
                t.kind(),
                KIND_PTR
                    | KIND_TYPEDEF
                    | KIND_VOLATILE
                    | KIND_CONST
                    | KIND_RESTRICT
                    | KIND_FUNC
                    | KIND_FUNC_PROTO
                    | KIND_VAR
                    | KIND_DECL_TAG
                    | KIND_TYPE_TAG
            );
            if refs_type && !ty_ok(t.size_type) {
                return Err(bad(format!(
                    "type {id} refers to type {} of {n}",
                    t.size_type
                )));
            }
            let bad_ref = match &t.extra {
                Extra::Array { ty, index_ty, .. } => !ty_ok(*ty) || !ty_ok(*index_ty),
                Extra::Members(m) => m.iter().any(|m| !ty_ok(m[1]) || m[0] >= s.max(1)),
                Extra::Params(p) => p.iter().any(|p| !ty_ok(p[1]) || p[0] >= s.max(1)),
                Extra::Datasec(d) => d.iter().any(|d| !ty_ok(d[0])),
                Extra::Enum(e) => e.iter().any(|e| e[0] >= s.max(1)),
                Extra::Enum64(e) => e.iter().any(|e| e[0] >= s.max(1)),
                _ => false,
            };
            if bad_ref {
                return Err(bad(format!("type {id} refers outside the BTF")));
            }
        }
        Ok(())
    }

    /// The string at `off` (empty when out of range).
    pub fn str(&self, off: u32) -> &[u8] {
        let Some(rest) = self.strings.get(off as usize..) else {
            return b"";
        };
        let end = memchr::memchr(0, rest).unwrap_or(rest.len());
        &rest[..end]
    }

    pub fn name(&self, id: u32) -> &[u8] {
        self.types
            .get(id as usize)
            .map_or(&b""[..], |t| self.str(t.name_off))
    }

    pub fn get(&self, id: u32) -> Option<&Type> {
        if id == 0 {
            None
        } else {
            self.types.get(id as usize)
        }
    }

    /// Skips typedefs and qualifiers (the chain rule:
    /// [`crate::formats::btf::follow_chain`]).
    pub fn skip_mods(&self, id: u32) -> Result<u32> {
        follow_chain(id, "typedefs or qualifiers", |id| {
            Ok(self
                .get(id)
                .filter(|t| is_modifier(t.kind()))
                .map(|t| t.size_type))
        })
    }

    /// The size in bytes of a type (`None` for void, functions, forward
    /// declarations; an error for a loop, as the chain rule says).
    pub fn size_of(&self, id: u32) -> Result<Option<u64>> {
        let mut mult: u64 = 1;
        let mut overflow = false;
        let elem = follow_chain(id, "arrays", |id| {
            let id = self.skip_mods(id)?;
            Ok(match self.get(id).map(|t| &t.extra) {
                Some(&Extra::Array { ty, nelems, .. }) => {
                    match mult.checked_mul(nelems as u64) {
                        Some(m) => mult = m,
                        None => overflow = true,
                    }
                    Some(ty)
                }
                _ => None,
            })
        })?;
        let Some(t) = self.get(self.skip_mods(elem)?) else {
            return Ok(None);
        };
        let size = match t.kind() {
            KIND_INT | KIND_STRUCT | KIND_UNION | KIND_ENUM | KIND_ENUM64 | KIND_FLOAT
            | KIND_DATASEC => t.size_type as u64,
            KIND_PTR => 8,
            _ => return Ok(None),
        };
        Ok(if overflow {
            None
        } else {
            size.checked_mul(mult)
        })
    }

    /// Type ids of every type of `kind`.
    pub fn ids_of_kind(&self, kind: u32) -> impl Iterator<Item = u32> + '_ {
        (1..self.types.len() as u32).filter(move |&i| self.types[i as usize].kind() == kind)
    }

    /// The DATASEC named `name`.
    pub fn datasec(&self, name: &[u8]) -> Option<u32> {
        self.ids_of_kind(KIND_DATASEC)
            .find(|&i| self.name(i) == name)
    }

    /// Whether DATASEC `id` holds a variable that is not static: libbpf
    /// makes a data section's map mmap-able only then (skeletons expose
    /// just those).
    pub fn datasec_has_global(&self, id: u32) -> bool {
        let Some(Extra::Datasec(vars)) = self.get(id).map(|t| &t.extra) else {
            return false;
        };
        vars.iter()
            .any(|v| matches!(self.get(v[0]).map(|t| &t.extra), Some(Extra::Var { linkage }) if *linkage != 0))
    }

    /// Appends a string, returning its offset.
    pub fn add_string(&mut self, s: &[u8]) -> u32 {
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(s);
        self.strings.push(0);
        off
    }

    pub fn add_type(&mut self, t: Type) -> u32 {
        self.types.push(t);
        (self.types.len() - 1) as u32
    }

    /// Serialises back to the wire format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut tb: Vec<u8> = Vec::new();
        let put = |v: u32, tb: &mut Vec<u8>| tb.extend_from_slice(&v.to_le_bytes());
        for t in self.types.iter().skip(1) {
            put(t.name_off, &mut tb);
            put(t.info, &mut tb);
            put(t.size_type, &mut tb);
            match &t.extra {
                Extra::None => {}
                Extra::Int(v) | Extra::Var { linkage: v } | Extra::DeclTag(v) => put(*v, &mut tb),
                Extra::Array {
                    ty,
                    index_ty,
                    nelems,
                } => {
                    for v in [*ty, *index_ty, *nelems] {
                        put(v, &mut tb);
                    }
                }
                Extra::Members(v) | Extra::Enum64(v) | Extra::Datasec(v) => {
                    for w in v.iter().flatten() {
                        put(*w, &mut tb);
                    }
                }
                Extra::Enum(v) | Extra::Params(v) => {
                    for w in v.iter().flatten() {
                        put(*w, &mut tb);
                    }
                }
            }
        }
        crate::formats::btf::blob(self.flags, &tb, &self.strings)
    }

    /// An INT of 4 bytes (found or added), for the VARs of extern sections.
    pub fn int_type(&mut self) -> u32 {
        let found = self.ids_of_kind(KIND_INT).find(|&i| {
            let t = &self.types[i as usize];
            t.size_type == 4 && matches!(t.extra, Extra::Int(e) if e & 0xff == 32)
        });
        if let Some(i) = found {
            return i;
        }
        let name_off = self.add_string(b"int");
        self.add_type(Type {
            name_off,
            info: KIND_INT << 24,
            size_type: 4,
            // encoding SIGNED (1 << 24), offset 0, 32 bits
            extra: Extra::Int((1 << 24) | 32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::map_def::MapDef;

    /// A hand-made BTF: int, `int (*)[5]`, a map struct, a VAR, a DATASEC.
    fn sample() -> Btf {
        let mut b = Btf {
            types: vec![Type {
                name_off: 0,
                info: 0,
                size_type: 0,
                extra: Extra::None,
            }],
            strings: vec![0],
            flags: 0,
        };
        let int = b.int_type(); // 1
        let idx = b.add_string(b"__ARRAY_SIZE_TYPE__");
        let arr_idx = b.add_type(Type {
            name_off: idx,
            info: KIND_INT << 24,
            size_type: 4,
            extra: Extra::Int(32),
        }); // 2
        let arr = b.add_type(Type {
            name_off: 0,
            info: KIND_ARRAY << 24,
            size_type: 0,
            extra: Extra::Array {
                ty: int,
                index_ty: arr_idx,
                nelems: 5,
            },
        }); // 3
        let ptr = b.add_type(Type {
            name_off: 0,
            info: KIND_PTR << 24,
            size_type: arr,
            extra: Extra::None,
        }); // 4
        let u64t = {
            let n = b.add_string(b"u64");
            b.add_type(Type {
                name_off: n,
                info: KIND_INT << 24,
                size_type: 8,
                extra: Extra::Int(64),
            })
        }; // 5
        let pvalue = b.add_type(Type {
            name_off: 0,
            info: KIND_PTR << 24,
            size_type: u64t,
            extra: Extra::None,
        }); // 6
        let (ft, fm, fv) = (
            b.add_string(b"type"),
            b.add_string(b"max_entries"),
            b.add_string(b"value"),
        );
        let st = b.add_type(Type {
            name_off: 0,
            info: (KIND_STRUCT << 24) | 3,
            size_type: 24,
            extra: Extra::Members(vec![[ft, ptr, 0], [fm, ptr, 64], [fv, pvalue, 128]]),
        }); // 7
        let vn = b.add_string(b"my_map");
        let var = b.add_type(Type {
            name_off: vn,
            info: KIND_VAR << 24,
            size_type: st,
            extra: Extra::Var { linkage: 1 },
        }); // 8
        let sn = b.add_string(b".maps");
        b.add_type(Type {
            name_off: sn,
            info: (KIND_DATASEC << 24) | 1,
            size_type: 0,
            extra: Extra::Datasec(vec![[var, 0, 24]]),
        });
        b
    }

    #[test]
    fn round_trip_and_map_definitions() {
        let b = sample();
        let bytes = b.to_bytes();
        let mut p = Btf::parse(&bytes).unwrap();
        assert_eq!(p.types, b.types);
        assert_eq!(p.to_bytes(), bytes);
        let d = p.map_def(8).unwrap();
        assert_eq!(
            d,
            MapDef {
                map_type: 5,
                max_entries: 5,
                value_size: 8,
                // `__type(value, ...)` points at [5], the 8-byte int.
                value_type_id: 5,
                ..Default::default()
            }
        );
        assert_eq!(p.datasec(b".maps"), Some(9));
        assert_eq!(p.size_of(3).unwrap(), Some(20));
        assert_eq!(p.int_type(), 1, "an existing 4-byte int is reused");
    }

    #[test]
    fn malformed_btf_is_refused() {
        let bytes = sample().to_bytes();
        for cut in [0, 3, 10, 23, 30, bytes.len() - 1] {
            assert!(Btf::parse(&bytes[..cut]).is_err(), "cut {cut}");
        }
        // A type id out of range.
        let mut b = sample();
        b.types[4].size_type = 99;
        let e = Btf::parse(&b.to_bytes()).unwrap_err();
        assert!(e.message().contains("type 4"), "{e}");
        // Big-endian magic.
        let mut be = bytes.clone();
        be.swap(0, 1);
        assert!(Btf::parse(&be).is_err());
        // Unknown kind.
        let mut k = sample();
        k.types[2].info = 31 << 24;
        assert!(Btf::parse(&k.to_bytes())
            .unwrap_err()
            .message()
            .contains("kind"));
    }

    /// BTF built by hand, read by both readers: `int`, then a chain of
    /// `steps` typedefs on it (the last is `1 + steps`), then two typedefs
    /// naming each other (a cycle); then the same for arrays: `steps`
    /// one-element arrays nested on `int` (the outermost last).
    fn chains(steps: u32) -> (Vec<u8>, u32, u32, u32) {
        use crate::formats::btf::tests::Builder;
        let mut b = Builder::new();
        let int = b.t("int", KIND_INT, 0, false, 4, &[32]);
        let mut top = int;
        for i in 0..steps {
            top = b.t(&format!("t{i}"), KIND_TYPEDEF, 0, false, top, &[]);
        }
        let next = b.count + 2;
        let cycle = b.t("a", KIND_TYPEDEF, 0, false, next, &[]);
        b.t("b", KIND_TYPEDEF, 0, false, cycle, &[]);
        let mut arr = int;
        for _ in 0..steps {
            arr = b.t("", KIND_ARRAY, 0, false, 0, &[arr, int, 1]);
        }
        (b.bytes(), top, cycle, arr)
    }

    /// The one chain rule (`formats::btf::follow_chain`), in both readers:
    /// a chain of MAX_CHAIN steps ends where it ends, one step more is an
    /// error, and so is a cycle; never a silent stop (the owned reader
    /// used to stop after 64 typedefs on a typedef, and give no size past
    /// 32 arrays).
    #[test]
    fn both_readers_follow_one_chain_rule() {
        use crate::formats::btf::{Btf as Fbtf, MAX_CHAIN};
        let max = MAX_CHAIN as u32;
        // Just the limit: both reach `int` (id 1), size 4.
        let (bytes, top, cycle, arr) = chains(max);
        let (own, zc) = (Btf::parse(&bytes).unwrap(), Fbtf::parse(bytes).unwrap());
        assert_eq!(own.skip_mods(top).unwrap(), 1);
        assert_eq!(zc.resolve(top).unwrap(), 1);
        assert_eq!(own.size_of(top).unwrap(), Some(4));
        assert_eq!(own.size_of(arr).unwrap(), Some(4), "{max} arrays of 1 int");
        assert_eq!(zc.size_of(arr).unwrap(), Some(4));
        // A cycle: an error in both, the same one.
        let e = own.skip_mods(cycle).unwrap_err();
        assert_eq!(e.code(), crate::error::FORMAT);
        assert!(e.message().contains("a loop of typedefs"), "{e}");
        assert_eq!(zc.resolve(cycle).unwrap_err().message(), e.message());
        assert!(own.size_of(cycle).is_err());
        assert!(zc.size_of(cycle).is_err());
        // One step past the limit: an error in both, never the id where
        // the walk stopped.
        let (bytes, top, _, arr) = chains(max + 1);
        let (own, zc) = (Btf::parse(&bytes).unwrap(), Fbtf::parse(bytes).unwrap());
        let e = own.skip_mods(top).unwrap_err();
        assert!(e.message().contains("more than 64 steps"), "{e}");
        assert_eq!(zc.resolve(top).unwrap_err().message(), e.message());
        let e = own.size_of(arr).unwrap_err();
        assert!(e.message().contains("a loop of arrays"), "{e}");
        assert_eq!(zc.size_of(arr).unwrap_err().message(), e.message());
    }
}
