//! BTF, read without copying: one buffer, a table of where each type
//! starts, and views into it. Base BTF (vmlinux, an object's `.BTF`) and
//! split BTF (a module's, whose type ids and string offsets continue
//! after its base's, as the kernel numbers them).
//!
//! Format: `Documentation/bpf/btf.rst`. [`Btf::parse`] checks everything a
//! reader relies on, once: the header and section bounds, every type's
//! length and kind, every string offset and every type id it refers to.
//! Cycles in the type graph are legal for pointers (a struct that points
//! to itself) but not for chains of typedefs and qualifiers or arrays;
//! [`Btf::resolve`] and [`Btf::size_of`] stop after [`MAX_CHAIN`] steps
//! with `KSYM_ERR_FORMAT`.

use std::sync::Arc;

use crate::base::mapped::{Mapping, Store};
use crate::error::{Error, Result};

pub const MAGIC: u16 = 0xeb9f;

pub const KIND_INT: u32 = 1;
pub const KIND_PTR: u32 = 2;
pub const KIND_ARRAY: u32 = 3;
pub const KIND_STRUCT: u32 = 4;
pub const KIND_UNION: u32 = 5;
pub const KIND_ENUM: u32 = 6;
pub const KIND_FWD: u32 = 7;
pub const KIND_TYPEDEF: u32 = 8;
pub const KIND_VOLATILE: u32 = 9;
pub const KIND_CONST: u32 = 10;
pub const KIND_RESTRICT: u32 = 11;
pub const KIND_FUNC: u32 = 12;
pub const KIND_FUNC_PROTO: u32 = 13;
pub const KIND_VAR: u32 = 14;
pub const KIND_DATASEC: u32 = 15;
pub const KIND_FLOAT: u32 = 16;
pub const KIND_DECL_TAG: u32 = 17;
pub const KIND_TYPE_TAG: u32 = 18;
pub const KIND_ENUM64: u32 = 19;
/// The highest kind this reader knows.
pub const KIND_MAX: u32 = KIND_ENUM64;

/// `BTF_INT_SIGNED` in an INT's encoding.
pub const INT_SIGNED: u32 = 1;
pub const INT_CHAR: u32 = 2;
pub const INT_BOOL: u32 = 4;

/// How many typedef/qualifier/array steps a resolution takes before it
/// calls the graph a loop.
pub const MAX_CHAIN: usize = 64;

/// Largest id the kernel gives a type (`BTF_MAX_TYPE`).
const MAX_TYPE: u32 = 0x000f_ffff;

/// The name of a kind, as bpftool and libbpf print it.
pub fn kind_name(kind: u32) -> &'static str {
    match kind {
        0 => "UNKN",
        KIND_INT => "INT",
        KIND_PTR => "PTR",
        KIND_ARRAY => "ARRAY",
        KIND_STRUCT => "STRUCT",
        KIND_UNION => "UNION",
        KIND_ENUM => "ENUM",
        KIND_FWD => "FWD",
        KIND_TYPEDEF => "TYPEDEF",
        KIND_VOLATILE => "VOLATILE",
        KIND_CONST => "CONST",
        KIND_RESTRICT => "RESTRICT",
        KIND_FUNC => "FUNC",
        KIND_FUNC_PROTO => "FUNC_PROTO",
        KIND_VAR => "VAR",
        KIND_DATASEC => "DATASEC",
        KIND_FLOAT => "FLOAT",
        KIND_DECL_TAG => "DECL_TAG",
        KIND_TYPE_TAG => "TYPE_TAG",
        KIND_ENUM64 => "ENUM64",
        _ => "?",
    }
}

/// Bytes a type of `kind` with `vlen` items takes after its 12-byte header.
fn extra_len(kind: u32, vlen: usize) -> Option<usize> {
    Some(match kind {
        KIND_INT | KIND_VAR | KIND_DECL_TAG => 4,
        KIND_ARRAY => 12,
        KIND_STRUCT | KIND_UNION | KIND_DATASEC | KIND_ENUM64 => 12 * vlen,
        KIND_ENUM | KIND_FUNC_PROTO => 8 * vlen,
        KIND_PTR | KIND_FWD | KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT
        | KIND_FUNC | KIND_FLOAT | KIND_TYPE_TAG => 0,
        _ => return None,
    })
}

#[inline]
fn word(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A BTF blob and the index of its types.
pub struct Btf {
    /// Owned, or the kernel's own BTF mapped in place ([`read_vmlinux`]).
    data: Store<u8>,
    /// Where the type and string sections are in `data`.
    types: std::ops::Range<usize>,
    strings: std::ops::Range<usize>,
    /// Offset in `data` of each of this blob's own types.
    offsets: Vec<u32>,
    /// The base of a split BTF.
    base: Option<Arc<Btf>>,
    /// The id of this blob's first type (1, or the base's end).
    first_id: u32,
    /// The string offset of this blob's first string (0, or the base's
    /// string size).
    first_str: u32,
}

/// One type, viewed in its buffer.
#[derive(Clone, Copy)]
pub struct Ty<'a> {
    pub id: u32,
    pub name_off: u32,
    info: u32,
    /// `size` or `type`, depending on the kind.
    size_type: u32,
    /// What follows the header (members, values, params...).
    extra: &'a [u8],
}

/// A struct/union member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub name_off: u32,
    pub ty: u32,
    /// Offset in bits from the start of the struct.
    pub bit_offset: u32,
    /// Size in bits when the struct's kind flag says it is a bitfield; 0
    /// otherwise.
    pub bitfield_size: u32,
}

/// An enumerator (ENUM or ENUM64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enumerator {
    pub name_off: u32,
    /// The raw 64 bits (an ENUM's 32-bit value sign-extended when the
    /// enum is signed, zero-extended otherwise).
    pub value: u64,
}

impl std::fmt::Debug for Btf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Btf {{ types {}..{}, {} bytes, split: {} }}",
            self.first_id,
            self.end_id(),
            self.data.len(),
            self.base.is_some()
        )
    }
}

impl<'a> Ty<'a> {
    #[inline]
    pub fn kind(&self) -> u32 {
        (self.info >> 24) & 0x1f
    }
    #[inline]
    pub fn vlen(&self) -> usize {
        (self.info & 0xffff) as usize
    }
    /// The kind flag (bitfield members, signed enums, FWD of a union...).
    #[inline]
    pub fn kflag(&self) -> bool {
        self.info >> 31 != 0
    }
    /// The size of INT, STRUCT, UNION, ENUM, ENUM64, FLOAT, DATASEC.
    #[inline]
    pub fn size(&self) -> u32 {
        self.size_type
    }
    /// The type a PTR, TYPEDEF, qualifier, FUNC, FUNC_PROTO (its return
    /// type), VAR, DECL_TAG or TYPE_TAG refers to.
    #[inline]
    pub fn type_id(&self) -> u32 {
        self.size_type
    }
    /// FUNC: its linkage (0 static, 1 global, 2 extern).
    #[inline]
    pub fn func_linkage(&self) -> u32 {
        self.vlen() as u32
    }
    /// INT: (encoding, bit offset, bits).
    pub fn int(&self) -> (u32, u32, u32) {
        let v = word(self.extra, 0);
        ((v >> 24) & 0x0f, (v >> 16) & 0xff, v & 0xff)
    }
    /// ARRAY: (element type, index type, number of elements).
    pub fn array(&self) -> (u32, u32, u32) {
        (
            word(self.extra, 0),
            word(self.extra, 4),
            word(self.extra, 8),
        )
    }
    /// VAR: its linkage.
    pub fn var_linkage(&self) -> u32 {
        word(self.extra, 0)
    }
    /// DECL_TAG: the component index (-1 for the declaration itself).
    pub fn decl_tag_component(&self) -> i32 {
        word(self.extra, 0) as i32
    }
    /// STRUCT/UNION members.
    pub fn members(&self) -> impl ExactSizeIterator<Item = Member> + 'a {
        let kflag = self.kflag();
        let e = self.extra;
        (0..self.vlen()).map(move |i| {
            let off = word(e, 12 * i + 8);
            Member {
                name_off: word(e, 12 * i),
                ty: word(e, 12 * i + 4),
                bit_offset: if kflag { off & 0x00ff_ffff } else { off },
                bitfield_size: if kflag { off >> 24 } else { 0 },
            }
        })
    }
    /// ENUM/ENUM64 values.
    pub fn enumerators(&self) -> impl ExactSizeIterator<Item = Enumerator> + 'a {
        let (kind, signed, e) = (self.kind(), self.kflag(), self.extra);
        (0..self.vlen()).map(move |i| {
            if kind == KIND_ENUM64 {
                let lo = word(e, 12 * i + 4) as u64;
                let hi = word(e, 12 * i + 8) as u64;
                Enumerator {
                    name_off: word(e, 12 * i),
                    value: (hi << 32) | lo,
                }
            } else {
                let v = word(e, 8 * i + 4);
                Enumerator {
                    name_off: word(e, 8 * i),
                    value: if signed {
                        v as i32 as i64 as u64
                    } else {
                        v as u64
                    },
                }
            }
        })
    }
    /// FUNC_PROTO parameters: (name offset, type).
    pub fn params(&self) -> impl ExactSizeIterator<Item = (u32, u32)> + 'a {
        let e = self.extra;
        (0..self.vlen()).map(move |i| (word(e, 8 * i), word(e, 8 * i + 4)))
    }
    /// DATASEC entries: (VAR type, offset, size).
    pub fn datasec(&self) -> impl ExactSizeIterator<Item = (u32, u32, u32)> + 'a {
        let e = self.extra;
        (0..self.vlen()).map(move |i| (word(e, 12 * i), word(e, 12 * i + 4), word(e, 12 * i + 8)))
    }
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::format(format!("malformed BTF: {what}"))
}

impl Btf {
    /// Parses base BTF (vmlinux's, or an object's `.BTF`).
    pub fn parse(data: impl Into<Store<u8>>) -> Result<Btf> {
        Self::parse_with(data.into(), None)
    }

    /// Parses split BTF (a module's) on top of `base`.
    pub fn parse_split(data: impl Into<Store<u8>>, base: Arc<Btf>) -> Result<Btf> {
        Self::parse_with(data.into(), Some(base))
    }

    fn parse_with(data: Store<u8>, base: Option<Arc<Btf>>) -> Result<Btf> {
        if data.len() < 24 {
            return Err(bad(format!(
                "{} bytes: shorter than the header",
                data.len()
            )));
        }
        let magic = u16::from_le_bytes([data[0], data[1]]);
        if magic != MAGIC {
            return Err(bad(if magic.swap_bytes() == MAGIC {
                "big-endian BTF is not supported".to_string()
            } else {
                format!("bad magic {magic:#06x} (expected 0xeb9f)")
            }));
        }
        if data[2] != 1 {
            return Err(bad(format!("version {}, expected 1", data[2])));
        }
        let hdr_len = word(&data, 4) as usize;
        if hdr_len < 24 || hdr_len > data.len() {
            return Err(bad(format!("header length {hdr_len}")));
        }
        let (type_off, type_len) = (word(&data, 8) as usize, word(&data, 12) as usize);
        let (str_off, str_len) = (word(&data, 16) as usize, word(&data, 20) as usize);
        let section = |off: usize, len: usize, what: &str| -> Result<std::ops::Range<usize>> {
            let start = hdr_len
                .checked_add(off)
                .filter(|&s| s <= data.len())
                .ok_or_else(|| bad(format!("{what} section starts past the end")))?;
            let end = start
                .checked_add(len)
                .filter(|&e| e <= data.len())
                .ok_or_else(|| {
                    bad(format!(
                        "{what} section ({len} bytes at {off}) ends past the end ({} bytes)",
                        data.len()
                    ))
                })?;
            Ok(start..end)
        };
        let types = section(type_off, type_len, "type")?;
        let strings = section(str_off, str_len, "string")?;
        if types.start < strings.end && strings.start < types.end {
            return Err(bad("the type and string sections overlap"));
        }
        let (first_id, first_str) = match &base {
            None => {
                if data.get(strings.start).is_some_and(|&b| b != 0) {
                    return Err(bad(
                        "the string section does not start with an empty string",
                    ));
                }
                (1, 0)
            }
            Some(b) => (b.end_id(), b.str_end()),
        };
        let str_total = first_str as u64 + strings.len() as u64;
        if str_total > u32::MAX as u64 {
            return Err(bad("string section larger than 4 GiB"));
        }
        let mut btf = Btf {
            data,
            types,
            strings,
            offsets: Vec::new(),
            base,
            first_id,
            first_str,
        };
        btf.index_types()?;
        Ok(btf)
    }

    /// Finds where each type starts and checks, in the same pass, its kind,
    /// its length, and that every string offset and type id it holds is in
    /// range (type ids against the final count, once it is known; a FUNC's
    /// type must be a FUNC_PROTO).
    fn index_types(&mut self) -> Result<()> {
        let t = &self.data[self.types.clone()];
        let strs = self.first_str as u64 + self.strings.len() as u64;
        let name_ok = |off: u32| (off as u64) < strs.max(1);
        let mut offsets = Vec::with_capacity(t.len() / 16);
        // Every kind, to check FUNC -> FUNC_PROTO at the end without
        // reading the types again.
        let mut kinds: Vec<u8> = Vec::with_capacity(t.len() / 16);
        let mut funcs: Vec<(u32, u32)> = Vec::new();
        // The highest type id referred to, and by which type.
        let (mut max_ref, mut max_ref_by) = (0u32, 0usize);
        let mut pos = 0usize;
        while pos < t.len() {
            let id = self.first_id as usize + offsets.len();
            if id as u64 > MAX_TYPE as u64 {
                return Err(bad(format!("more than {MAX_TYPE} types")));
            }
            if t.len() - pos < 12 {
                return Err(bad(format!("type {id} truncated (its header)")));
            }
            let (name_off, info, size_type) = (word(t, pos), word(t, pos + 4), word(t, pos + 8));
            let kind = (info >> 24) & 0x1f;
            let vlen = (info & 0xffff) as usize;
            let extra = extra_len(kind, vlen)
                .ok_or_else(|| bad(format!("type {id} has unknown kind {kind}")))?;
            if t.len() - pos - 12 < extra {
                return Err(bad(format!(
                    "type {id} ({}) truncated: {} bytes of members past the end",
                    kind_name(kind),
                    extra
                )));
            }
            let fail = |what: String| Err(bad(format!("type {id} ({}): {what}", kind_name(kind))));
            if !name_ok(name_off) {
                return fail(format!("name offset {name_off} out of range ({strs})"));
            }
            let e = &t[pos + 12..pos + 12 + extra];
            let mut refer = |ty: u32| {
                if ty > max_ref {
                    (max_ref, max_ref_by) = (ty, id);
                }
            };
            match kind {
                KIND_PTR | KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT
                | KIND_FUNC_PROTO | KIND_VAR | KIND_DECL_TAG | KIND_TYPE_TAG => refer(size_type),
                KIND_FUNC => {
                    refer(size_type);
                    funcs.push((id as u32, size_type));
                }
                _ => {}
            }
            match kind {
                KIND_ARRAY => {
                    refer(word(e, 0));
                    refer(word(e, 4));
                }
                KIND_STRUCT | KIND_UNION => {
                    for m in e.chunks_exact(12) {
                        if !name_ok(word(m, 0)) {
                            return fail(format!("member name offset {}", word(m, 0)));
                        }
                        refer(word(m, 4));
                    }
                }
                KIND_ENUM => {
                    if let Some(v) = e.chunks_exact(8).find(|v| !name_ok(word(v, 0))) {
                        return fail(format!("enumerator name offset {}", word(v, 0)));
                    }
                }
                KIND_ENUM64 => {
                    if let Some(v) = e.chunks_exact(12).find(|v| !name_ok(word(v, 0))) {
                        return fail(format!("enumerator name offset {}", word(v, 0)));
                    }
                }
                KIND_FUNC_PROTO => {
                    for p in e.chunks_exact(8) {
                        if !name_ok(word(p, 0)) {
                            return fail(format!("parameter name offset {}", word(p, 0)));
                        }
                        refer(word(p, 4));
                    }
                }
                KIND_DATASEC => {
                    for v in e.chunks_exact(12) {
                        if word(v, 0) == 0 {
                            return fail("an entry refers to void".into());
                        }
                        refer(word(v, 0));
                    }
                }
                _ => {}
            }
            offsets.push((self.types.start + pos) as u32);
            kinds.push(kind as u8);
            pos += 12 + extra;
        }
        let end = self.first_id + offsets.len() as u32;
        if max_ref >= end {
            let k = kinds
                .get(max_ref_by.wrapping_sub(self.first_id as usize))
                .copied();
            return Err(bad(format!(
                "type {max_ref_by} ({}) refers to type {max_ref} of {end}",
                kind_name(k.unwrap_or(0) as u32)
            )));
        }
        for (f, proto) in funcs {
            let k = if proto >= self.first_id {
                kinds[(proto - self.first_id) as usize] as u32
            } else {
                self.base
                    .as_ref()
                    .and_then(|b| b.ty(proto))
                    .map_or(0, |t| t.kind())
            };
            if k != KIND_FUNC_PROTO {
                return Err(bad(format!(
                    "type {f} (FUNC): type {proto} is not a FUNC_PROTO"
                )));
            }
        }
        self.offsets = offsets;
        Ok(())
    }

    /// One past the last type id (types are `1..end_id()`, the base's
    /// included).
    #[inline]
    pub fn end_id(&self) -> u32 {
        self.first_id + self.offsets.len() as u32
    }

    /// The id of this blob's first own type.
    #[inline]
    pub fn first_id(&self) -> u32 {
        self.first_id
    }

    /// One past the last string offset, the base's included.
    #[inline]
    pub fn str_end(&self) -> u32 {
        self.first_str + self.strings.len() as u32
    }

    /// The base of a split BTF.
    pub fn base(&self) -> Option<&Arc<Btf>> {
        self.base.as_ref()
    }

    /// The bytes of the blob.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// A type of this blob itself (checked by parse).
    #[inline]
    fn own(&self, id: u32) -> Ty<'_> {
        let at = self.offsets[(id - self.first_id) as usize] as usize;
        let d = &self.data;
        let info = word(d, at + 4);
        let extra = extra_len((info >> 24) & 0x1f, (info & 0xffff) as usize).unwrap_or(0);
        Ty {
            id,
            name_off: word(d, at),
            info,
            size_type: word(d, at + 8),
            extra: &d[at + 12..at + 12 + extra],
        }
    }

    /// (id, name offset) of this blob's own types, in id order.
    pub fn own_names(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.own_names_in(0..self.offsets.len())
    }

    /// The number of the blob's own types.
    pub fn own_len(&self) -> usize {
        self.offsets.len()
    }

    /// [`Btf::own_names`] of the own types `range` (0-based: the first
    /// own type is 0), for splitting the work.
    pub fn own_names_in(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = (u32, u32)> + '_ {
        let first = self.first_id + range.start as u32;
        self.offsets[range]
            .iter()
            .enumerate()
            .map(move |(i, &at)| (first + i as u32, word(&self.data, at as usize)))
    }

    /// Type `id` (`None` for 0, void, and past the end).
    #[inline]
    pub fn ty(&self, id: u32) -> Option<Ty<'_>> {
        if id == 0 || id >= self.end_id() {
            return None;
        }
        if id < self.first_id {
            return self.base.as_ref()?.ty(id);
        }
        Some(self.own(id))
    }

    /// The string section from `off` to its end (the base's, for an
    /// offset in the base; empty when out of range): the string at `off`
    /// and what follows it, for scanners that find the NUL themselves.
    pub fn str_from(&self, off: u32) -> &[u8] {
        if off < self.first_str {
            return self.base.as_ref().map_or(&b""[..], |b| b.str_from(off));
        }
        let s = &self.data[self.strings.clone()];
        s.get((off - self.first_str) as usize..).unwrap_or(b"")
    }

    /// The string at `off` (empty when out of range).
    pub fn str(&self, off: u32) -> &[u8] {
        if off < self.first_str {
            return self.base.as_ref().map_or(&b""[..], |b| b.str(off));
        }
        let s = &self.data[self.strings.clone()];
        let Some(rest) = s.get((off - self.first_str) as usize..) else {
            return b"";
        };
        &rest[..memchr::memchr(0, rest).unwrap_or(rest.len())]
    }

    /// The string at `off` with its NUL, when it has one (every name the
    /// kernel and compilers emit does).
    pub fn cstr(&self, off: u32) -> Option<&[u8]> {
        if off < self.first_str {
            return self.base.as_ref()?.cstr(off);
        }
        let s = &self.data[self.strings.clone()];
        let rest = s.get((off - self.first_str) as usize..)?;
        Some(&rest[..=memchr::memchr(0, rest)?])
    }

    /// The name of type `id` (empty for anonymous types and void).
    pub fn name(&self, id: u32) -> &[u8] {
        self.ty(id).map_or(&b""[..], |t| self.str(t.name_off))
    }

    /// The ids of this blob's own types, in order.
    pub fn own_ids(&self) -> std::ops::Range<u32> {
        self.first_id..self.end_id()
    }

    /// Follows typedefs, qualifiers and type tags to the type they stand
    /// for (0 for void). A chain longer than [`MAX_CHAIN`] is a loop.
    pub fn resolve(&self, mut id: u32) -> Result<u32> {
        for _ in 0..MAX_CHAIN {
            match self.ty(id) {
                Some(t)
                    if matches!(
                        t.kind(),
                        KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT | KIND_TYPE_TAG
                    ) =>
                {
                    id = t.type_id()
                }
                _ => return Ok(id),
            }
        }
        Err(bad(format!(
            "a loop of typedefs or qualifiers through type {id}"
        )))
    }

    /// The size in bytes of type `id`: `None` for void, functions and
    /// forward declarations; an error for loops and sizes past 2^32.
    pub fn size_of(&self, id: u32) -> Result<Option<u64>> {
        let mut id = id;
        let mut mult: u64 = 1;
        for _ in 0..MAX_CHAIN {
            let id2 = self.resolve(id)?;
            let Some(t) = self.ty(id2) else {
                return Ok(None);
            };
            let size = match t.kind() {
                KIND_INT | KIND_STRUCT | KIND_UNION | KIND_ENUM | KIND_ENUM64 | KIND_FLOAT
                | KIND_DATASEC => t.size() as u64,
                KIND_PTR => 8,
                KIND_ARRAY => {
                    let (elem, _, n) = t.array();
                    mult = mult
                        .checked_mul(n as u64)
                        .ok_or_else(|| bad(format!("array type {id2} too large")))?;
                    id = elem;
                    continue;
                }
                KIND_VAR => {
                    id = t.type_id();
                    continue;
                }
                _ => return Ok(None),
            };
            return size
                .checked_mul(mult)
                .filter(|&s| s <= u32::MAX as u64)
                .map(Some)
                .ok_or_else(|| bad(format!("type {id2} larger than 4 GiB")));
        }
        Err(bad(format!("a loop of arrays through type {id}")))
    }

    /// The alignment of type `id` in bytes, as libbpf's `btf__align_of`
    /// computes it for a 64-bit target: scalars align to their size (at
    /// most 8), a struct to its most aligned member, or 1 if it is packed;
    /// `None` for void, functions and the like.
    pub fn align_of(&self, id: u32) -> Result<Option<u32>> {
        self.align_of_depth(id, 0)
    }

    fn align_of_depth(&self, id: u32, depth: usize) -> Result<Option<u32>> {
        if depth > MAX_CHAIN {
            return Err(bad(format!("type {id} nests too deep for its alignment")));
        }
        let Some(t) = self.ty(id) else {
            return Ok(None);
        };
        Ok(match t.kind() {
            KIND_INT | KIND_ENUM | KIND_ENUM64 | KIND_FLOAT => Some(t.size().min(8)),
            KIND_PTR => Some(8),
            KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT | KIND_TYPE_TAG => {
                self.align_of_depth(t.type_id(), depth + 1)?
            }
            KIND_ARRAY => self.align_of_depth(t.array().0, depth + 1)?,
            KIND_STRUCT | KIND_UNION => {
                let mut max = 1;
                for m in t.members() {
                    let Some(a) = self.align_of_depth(m.ty, depth + 1)? else {
                        return Ok(None);
                    };
                    max = max.max(a);
                    // A member off its type's alignment: the struct is packed.
                    if m.bitfield_size == 0 && m.bit_offset % (8 * a.max(1)) != 0 {
                        return Ok(Some(1));
                    }
                }
                Some(if t.size() % max != 0 { 1 } else { max })
            }
            _ => None,
        })
    }
}

/// The `.BTF` section of an ELF file (a vmlinux, a `.ko`), copied out.
pub fn elf_section(data: &[u8], name: &str) -> Result<Option<Vec<u8>>> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(data)
        .map_err(|e| Error::format(format!("not a readable ELF file: {e}")))?;
    match file.section_by_name(name) {
        None => Ok(None),
        Some(s) => s
            .data()
            .map(|d| Some(d.to_vec()))
            .map_err(|e| Error::format(format!("ELF section {name}: {e}"))),
    }
}

/// The running kernel's own BTF (`/sys/kernel/btf/vmlinux`), which it
/// lets a process map since Linux 6.16: mapped in place (no copy, no page
/// to fault in on write). Anything else, or a kernel that refuses the
/// mapping, is read as [`read_file`] reads it. Only that file is mapped: it
/// is the kernel's memory and cannot shrink under the mapping, as a
/// regular file could (a read past its end would then be a SIGBUS).
pub fn read_vmlinux(path: &std::path::Path) -> Result<Store<u8>> {
    if path == std::path::Path::new("/sys/kernel/btf/vmlinux") {
        if let Some(map) = map_raw(path) {
            let len = map.bytes().len();
            if let Some(s) = Store::mapped(&Arc::new(map), 0, len) {
                return Ok(s);
            }
        }
    }
    read_file(path).map(Store::from)
}

/// `path` mapped whole, if it can be and starts with the BTF magic.
fn map_raw(path: &std::path::Path) -> Option<Mapping> {
    let file = std::fs::File::open(path).ok()?;
    let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
    if !(24..=crate::base::read::limits::ELF).contains(&len) {
        return None;
    }
    let map = Mapping::new(&file, len).ok()?;
    let b = map.bytes();
    (u16::from_le_bytes([b[0], b[1]]) == MAGIC).then_some(map)
}

/// BTF from a file: raw BTF (starts with the magic) or an ELF with a
/// `.BTF` section.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>> {
    let data = crate::base::read::read_file(path, 0, crate::base::read::limits::ELF, "BTF")?;
    if data.len() >= 2 && u16::from_le_bytes([data[0], data[1]]) == MAGIC {
        return Ok(data);
    }
    if data.starts_with(b"\x7fELF") {
        return elf_section(&data, ".BTF")
            .map_err(|e| e.context(path.display()))?
            .ok_or_else(|| {
                Error::format(format!(
                    "{}: an ELF file without a .BTF section",
                    path.display()
                ))
            });
    }
    Err(Error::format(format!(
        "{}: neither raw BTF (magic 0xeb9f) nor an ELF file",
        path.display()
    )))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds BTF by hand: types as words, strings appended.
    #[derive(Default)]
    pub struct Builder {
        pub types: Vec<u32>,
        pub strings: Vec<u8>,
        pub count: u32,
        /// For split BTF: the base's type count + 1 and string size.
        pub first_id: u32,
        pub first_str: u32,
    }

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
            let mut out = Vec::new();
            out.extend_from_slice(&MAGIC.to_le_bytes());
            out.extend_from_slice(&[1, 0]);
            for v in [
                24u32,
                0,
                tb.len() as u32,
                tb.len() as u32,
                self.strings.len() as u32,
            ] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&tb);
            out.extend_from_slice(&self.strings);
            out
        }
    }

    fn sample() -> Builder {
        let mut b = Builder::new();
        let int = b.t("int", KIND_INT, 0, false, 4, &[(INT_SIGNED << 24) | 32]); // 1
        let ptr = b.t("", KIND_PTR, 0, false, 3, &[]); // 2 -> 3 (forward reference)
        let m1 = b.s("a");
        let m2 = b.s("next");
        let m3 = b.s("bits");
        let st = b.t(
            "node",
            KIND_STRUCT,
            3,
            true,
            16,
            &[m1, int, 0, m2, ptr, 64, m3, int, (3 << 24) | 96],
        ); // 3
        let td = b.t("node_t", KIND_TYPEDEF, 0, false, st, &[]); // 4
        let c = b.t("", KIND_CONST, 0, false, td, &[]); // 5
        let arr = b.t("", KIND_ARRAY, 0, false, 0, &[c, int, 10]); // 6
        let e1 = b.s("NEG");
        b.t("sign", KIND_ENUM, 1, true, 4, &[e1, (-5i32) as u32]); // 7
        let proto = b.t("", KIND_FUNC_PROTO, 1, false, int, &[0, ptr]); // 8
        b.t("walk", KIND_FUNC, 1, false, proto, &[]); // 9
        let e2 = b.s("BIG");
        b.t("big", KIND_ENUM64, 1, false, 8, &[e2, 1, 2]); // 10
        let _ = arr;
        b
    }

    #[test]
    fn reads_every_kind_of_view() {
        let btf = Btf::parse(sample().bytes()).unwrap();
        assert_eq!(btf.end_id(), 11);
        assert_eq!(btf.name(3), b"node");
        let st = btf.ty(3).unwrap();
        assert_eq!((st.kind(), st.size(), st.kflag()), (KIND_STRUCT, 16, true));
        let m: Vec<Member> = st.members().collect();
        assert_eq!(
            m[1],
            Member {
                name_off: m[1].name_off,
                ty: 2,
                bit_offset: 64,
                bitfield_size: 0
            }
        );
        assert_eq!((m[2].bit_offset, m[2].bitfield_size), (96, 3));
        assert_eq!(btf.str(m[2].name_off), b"bits");
        assert_eq!(btf.resolve(5).unwrap(), 3, "const -> typedef -> struct");
        assert_eq!(btf.size_of(6).unwrap(), Some(160), "10 x const node_t");
        assert_eq!(btf.size_of(2).unwrap(), Some(8));
        assert_eq!(btf.size_of(9).unwrap(), None, "a function has no size");
        let e: Vec<Enumerator> = btf.ty(7).unwrap().enumerators().collect();
        assert_eq!(e[0].value as i64, -5);
        let e: Vec<Enumerator> = btf.ty(10).unwrap().enumerators().collect();
        assert_eq!(e[0].value, (2 << 32) | 1);
        assert_eq!(btf.ty(1).unwrap().int(), (INT_SIGNED, 0, 32));
        assert_eq!(
            btf.ty(8).unwrap().params().collect::<Vec<_>>(),
            vec![(0, 2)]
        );
        assert!(btf.ty(0).is_none() && btf.ty(11).is_none());
        assert_eq!(btf.cstr(btf.ty(3).unwrap().name_off), Some(&b"node\0"[..]));
    }

    #[test]
    fn split_btf_continues_ids_and_strings() {
        let base = Arc::new(Btf::parse(sample().bytes()).unwrap());
        let mut s = Builder::split(&base);
        let mo = s.s("mod_only");
        let id = s.t("mod_t", KIND_TYPEDEF, 0, false, 3, &[]);
        s.t("", KIND_PTR, 0, false, id, &[]);
        let _ = mo;
        let split = Btf::parse_split(s.bytes(), base.clone()).unwrap();
        assert_eq!((split.first_id(), split.end_id()), (11, 13));
        assert_eq!(split.name(11), b"mod_t");
        assert_eq!(split.name(3), b"node", "base types through the split");
        assert_eq!(split.resolve(11).unwrap(), 3);
        assert_eq!(split.size_of(12).unwrap(), Some(8));
        // Without its base the same bytes are refused.
        assert!(Btf::parse(s.bytes()).is_err());
    }

    #[test]
    fn malformed_btf_is_refused_with_a_reason() {
        let good = sample().bytes();
        for cut in [0, 1, 23, 24, 30, good.len() - 1] {
            let e = Btf::parse(good[..cut].to_vec())
                .err()
                .unwrap_or_else(|| panic!("cut {cut}"));
            assert_eq!(e.code(), crate::error::FORMAT, "{cut}: {e}");
        }
        let check = |b: &Builder, want: &str| {
            let e = Btf::parse(b.bytes()).expect_err(want);
            assert!(e.message().contains(want), "{want}: {e}");
        };
        // Type 1 is 4 words, type 2 is 3, type 3 is 12: type 4's target is
        // word 4 + 3 + 12 + 2.
        let mut b2 = sample();
        b2.types[4 + 3 + 12 + 2] = 99;
        check(&b2, "refers to type 99");
        let mut b3 = sample();
        b3.types[1] = 25 << 24;
        check(&b3, "unknown kind 25");
        let mut b4 = sample();
        b4.types[0] = 1 << 30;
        check(&b4, "name offset");
        let mut b5 = sample();
        b5.types[4 + 3 + 1] = (KIND_STRUCT << 24) | 200;
        check(&b5, "truncated");
        // A loop of typedefs: parses, but resolving it is an error.
        let mut l = Builder::new();
        l.t("a", KIND_TYPEDEF, 0, false, 2, &[]);
        l.t("b", KIND_TYPEDEF, 0, false, 1, &[]);
        let btf = Btf::parse(l.bytes()).unwrap();
        assert!(btf.resolve(1).unwrap_err().message().contains("loop"));
        assert!(btf.size_of(2).is_err());
        // An array of itself.
        let mut a = Builder::new();
        a.t("int", KIND_INT, 0, false, 4, &[32]);
        a.t("", KIND_ARRAY, 0, false, 0, &[2, 1, 2]);
        let btf = Btf::parse(a.bytes()).unwrap();
        assert_eq!(btf.size_of(2).unwrap_err().code(), crate::error::FORMAT);
        // Header lengths past the end.
        let mut h = good.clone();
        h[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Btf::parse(h)
            .unwrap_err()
            .message()
            .contains("string section"));
        let mut be = good.clone();
        be.swap(0, 1);
        assert!(Btf::parse(be).unwrap_err().message().contains("big-endian"));
    }
}
