//! BTF, read without copying: one buffer, a table of where each type
//! starts, and views into it. Base BTF (vmlinux, an object's `.BTF`) and
//! split BTF (a module's, whose type ids and string offsets continue
//! after its base's, as the kernel numbers them).
//!
//! One model, two halves: this reader, for the kernel's BTF and for an
//! object's `.BTF` alike (maps, externs, CO-RE, `.BTF.ext` names), and
//! the write half ([`BtfWriter`], [`blob`]: loadable BTF, hand-built test
//! BTF). What an older kernel takes of it: [`BtfFeatures`] (libbpf's
//! probes) and [`sanitize`] (libbpf's rewriting for them).
//!
//! Format: `Documentation/bpf/btf.rst`. [`Btf::parse`] checks everything a
//! reader relies on, once: the header and section bounds, every type's
//! length and kind, every string offset and every type id it refers to.
//! Cycles in the type graph are legal for pointers (a struct that points
//! to itself) but not for chains of typedefs and qualifiers or arrays;
//! every walk along such a chain goes through [`follow_chain`]: past
//! [`MAX_CHAIN`] steps it is `KSYM_ERR_FORMAT`, never a silent stop.

use std::ffi::CStr;
use std::sync::Arc;

mod check;
mod features;
mod files;
mod sanitize;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_sanitize;
mod write;

pub use features::{probe_blobs, probe_with, BtfFeatures};
pub use files::{elf_section, read_file, read_vmlinux};
pub use sanitize::{needs_sanitizing, sanitize};
pub use write::{
    blob, BtfWriter, Extra, Type, FUNC_EXTERN, FUNC_GLOBAL, FUNC_STATIC, VAR_GLOBAL_ALLOCATED,
    VAR_GLOBAL_EXTERN, VAR_STATIC,
};

use crate::base::le;
use crate::base::mapped::Store;
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

/// The one rule for chains of BTF types (typedefs and qualifiers, arrays
/// of arrays): from `id`, `next` gives the type one step
/// on, or `None` where the chain ends; the id it ends at, after at most
/// [`MAX_CHAIN`] steps. One more step is `KSYM_ERR_FORMAT`, "a loop of
/// `what` through type ..." (a cycle, or a chain no compiler writes).
pub fn follow_chain(
    mut id: u32,
    what: &str,
    mut next: impl FnMut(u32) -> Result<Option<u32>>,
) -> Result<u32> {
    for _ in 0..MAX_CHAIN {
        match next(id)? {
            Some(n) => id = n,
            None => return Ok(id),
        }
    }
    match next(id)? {
        None => Ok(id),
        Some(_) => Err(Error::format(format!(
            "malformed BTF: a loop of {what} through type {id} (more than {MAX_CHAIN} steps)"
        ))),
    }
}

/// Whether a kind is one [`Btf::resolve`] follows (typedef, qualifier,
/// type tag).
pub fn is_modifier(kind: u32) -> bool {
    matches!(
        kind,
        KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT | KIND_TYPE_TAG
    )
}

/// Largest id the kernel gives a type (`BTF_MAX_TYPE`).
const MAX_TYPE: u32 = 0x000f_ffff;

/// The names of the kinds, as the kernel (`btf_kind_str`) and bpftool
/// spell them: `BTF_KIND_STRUCT` is "STRUCT", kind 0 (`BTF_KIND_UNKN`)
/// "UNKNOWN". Indexed by kind.
const KIND_NAMES: [&CStr; KIND_MAX as usize + 1] = [
    c"UNKNOWN",    // 0
    c"INT",        // 1
    c"PTR",        // 2
    c"ARRAY",      // 3
    c"STRUCT",     // 4
    c"UNION",      // 5
    c"ENUM",       // 6
    c"FWD",        // 7
    c"TYPEDEF",    // 8
    c"VOLATILE",   // 9
    c"CONST",      // 10
    c"RESTRICT",   // 11
    c"FUNC",       // 12
    c"FUNC_PROTO", // 13
    c"VAR",        // 14
    c"DATASEC",    // 15
    c"FLOAT",      // 16
    c"DECL_TAG",   // 17
    c"TYPE_TAG",   // 18
    c"ENUM64",     // 19
];

/// The name of a kind ("STRUCT"); None for a kind this reader does not know.
pub fn kind_str(kind: u32) -> Option<&'static CStr> {
    KIND_NAMES.get(kind as usize).copied()
}

/// The name of a kind for a message: "?" when unknown.
pub fn kind_name(kind: u32) -> &'static str {
    kind_str(kind).and_then(|c| c.to_str().ok()).unwrap_or("?")
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

/// A BTF blob and where each of its own types starts: its types by id
/// ([`Btf::ty`]), checked once ([`Btf::parse`]). No index of names: the
/// kernel's BTF adds one (`btf::NameIndexedBtf`).
pub struct Btf {
    /// Owned, or the kernel's own BTF mapped in place ([`read_vmlinux`]).
    data: Store<u8>,
    /// Where the type and string sections are in `data`.
    types: std::ops::Range<usize>,
    strings: std::ops::Range<usize>,
    /// Offset in `data` of each of this blob's own types.
    offsets: Store<u32>,
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
        let v = le::u32(self.extra, 0);
        ((v >> 24) & 0x0f, (v >> 16) & 0xff, v & 0xff)
    }
    /// ARRAY: (element type, index type, number of elements).
    pub fn array(&self) -> (u32, u32, u32) {
        (
            le::u32(self.extra, 0),
            le::u32(self.extra, 4),
            le::u32(self.extra, 8),
        )
    }
    /// VAR: its linkage.
    pub fn var_linkage(&self) -> u32 {
        le::u32(self.extra, 0)
    }
    /// DECL_TAG: the component index (-1 for the declaration itself).
    pub fn decl_tag_component(&self) -> i32 {
        le::u32(self.extra, 0) as i32
    }
    /// STRUCT/UNION members.
    pub fn members(&self) -> impl ExactSizeIterator<Item = Member> + 'a {
        let kflag = self.kflag();
        let e = self.extra;
        (0..self.vlen()).map(move |i| {
            let off = le::u32(e, 12 * i + 8);
            Member {
                name_off: le::u32(e, 12 * i),
                ty: le::u32(e, 12 * i + 4),
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
                let lo = le::u32(e, 12 * i + 4) as u64;
                let hi = le::u32(e, 12 * i + 8) as u64;
                Enumerator {
                    name_off: le::u32(e, 12 * i),
                    value: (hi << 32) | lo,
                }
            } else {
                let v = le::u32(e, 8 * i + 4);
                Enumerator {
                    name_off: le::u32(e, 8 * i),
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
        (0..self.vlen()).map(move |i| (le::u32(e, 8 * i), le::u32(e, 8 * i + 4)))
    }
    /// DATASEC entries: (VAR type, offset, size).
    pub fn datasec(&self) -> impl ExactSizeIterator<Item = (u32, u32, u32)> + 'a {
        let e = self.extra;
        (0..self.vlen()).map(move |i| {
            (
                le::u32(e, 12 * i),
                le::u32(e, 12 * i + 4),
                le::u32(e, 12 * i + 8),
            )
        })
    }
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::format(format!("malformed BTF: {what}"))
}

impl Btf {
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
        let info = le::u32(d, at + 4);
        let extra = extra_len((info >> 24) & 0x1f, (info & 0xffff) as usize).unwrap_or(0);
        Ty {
            id,
            name_off: le::u32(d, at),
            info,
            size_type: le::u32(d, at + 8),
            extra: &d[at + 12..at + 12 + extra],
        }
    }

    /// Where each own type starts in [`Btf::bytes`] (what
    /// [`Btf::with_offsets`] takes again).
    pub fn type_offsets(&self) -> &Store<u32> {
        &self.offsets
    }

    /// The number of the blob's own types.
    pub fn own_len(&self) -> usize {
        self.offsets.len()
    }

    /// (id, name offset) of the own types `range` (0-based: the first own
    /// type is 0), in id order: the index splits the work in two.
    pub fn own_names_in(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = (u32, u32)> + '_ {
        let first = self.first_id + range.start as u32;
        self.offsets[range]
            .iter()
            .enumerate()
            .map(move |(i, &at)| (first + i as u32, le::u32(&self.data, at as usize)))
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

    /// Where the string section lies in [`Btf::bytes`] (the same range of
    /// the bytes the blob was parsed from: `.BTF.ext` names its sections
    /// by offsets into it).
    pub fn string_range(&self) -> std::ops::Range<usize> {
        self.strings.clone()
    }

    /// The ids of this blob's own types of `kind`.
    pub fn ids_of_kind(&self, kind: u32) -> impl Iterator<Item = u32> + '_ {
        self.own_ids()
            .filter(move |&id| self.own(id).kind() == kind)
    }

    /// The DATASEC named `name`, among this blob's own types.
    pub fn find_datasec(&self, name: &[u8]) -> Option<u32> {
        self.ids_of_kind(KIND_DATASEC)
            .find(|&id| self.name(id) == name)
    }

    /// Whether DATASEC `id` holds a variable that is not static: libbpf
    /// makes a data section's map mmap-able only then (skeletons expose
    /// just those).
    pub fn datasec_has_global(&self, id: u32) -> bool {
        let Some(ds) = self.ty(id).filter(|t| t.kind() == KIND_DATASEC) else {
            return false;
        };
        ds.datasec().any(|(v, _, _)| {
            self.ty(v)
                .is_some_and(|t| t.kind() == KIND_VAR && t.var_linkage() != VAR_STATIC)
        })
    }

    /// Follows typedefs, qualifiers and type tags to the type they stand
    /// for (0 for void). A chain longer than [`MAX_CHAIN`] is a loop.
    pub fn resolve(&self, id: u32) -> Result<u32> {
        follow_chain(id, "typedefs or qualifiers", |id| {
            Ok(self
                .ty(id)
                .filter(|t| is_modifier(t.kind()))
                .map(|t| t.type_id()))
        })
    }

    /// The size in bytes of type `id`: `None` for void, functions and
    /// forward declarations; an error for loops and sizes past 2^32.
    pub fn size_of(&self, id: u32) -> Result<Option<u64>> {
        let mut mult: u64 = 1;
        // Through arrays (and a VAR to its type) to the element type.
        let elem = follow_chain(id, "arrays", |id| {
            let id = self.resolve(id)?;
            Ok(match self.ty(id) {
                Some(t) if t.kind() == KIND_ARRAY => {
                    let (elem, _, n) = t.array();
                    mult = mult
                        .checked_mul(n as u64)
                        .ok_or_else(|| bad(format!("array type {id} too large")))?;
                    Some(elem)
                }
                Some(t) if t.kind() == KIND_VAR => Some(t.type_id()),
                _ => None,
            })
        })?;
        let id2 = self.resolve(elem)?;
        let Some(t) = self.ty(id2) else {
            return Ok(None);
        };
        let size = match t.kind() {
            KIND_INT | KIND_STRUCT | KIND_UNION | KIND_ENUM | KIND_ENUM64 | KIND_FLOAT
            | KIND_DATASEC => t.size() as u64,
            KIND_PTR => 8,
            _ => return Ok(None),
        };
        size.checked_mul(mult)
            .filter(|&s| s <= u32::MAX as u64)
            .map(Some)
            .ok_or_else(|| bad(format!("type {id2} larger than 4 GiB")))
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
