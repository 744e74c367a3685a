//! [`Btf::parse`]: the header, the section bounds, and one pass over the
//! types that finds where each starts and checks everything a reader
//! relies on.

use std::sync::Arc;

use super::{
    bad, extra_len, kind_name, le, Btf, Error, Result, Store, KIND_ARRAY, KIND_CONST, KIND_DATASEC,
    KIND_DECL_TAG, KIND_ENUM, KIND_ENUM64, KIND_FUNC, KIND_FUNC_PROTO, KIND_PTR, KIND_RESTRICT,
    KIND_STRUCT, KIND_TYPEDEF, KIND_TYPE_TAG, KIND_UNION, KIND_VAR, KIND_VOLATILE, MAGIC, MAX_TYPE,
};

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
        let mut btf = Self::frame(data, base)?;
        btf.index_types()?;
        Ok(btf)
    }

    /// Base BTF checked before: the same bytes went through
    /// [`Btf::parse`] (in this boot, by the process that wrote a
    /// snapshot), which found its types at `offsets`. The header and the
    /// section bounds are checked again; of the offsets, that there is one
    /// or more, that they rise, that the first is the type section's start
    /// and that the last type ends it exactly. The rest of that check is
    /// not repeated (it is what the snapshot saves): whoever hands in the
    /// offsets vouches for them. A wrong one can give a wrong answer or a
    /// bounds-check failure (`KSYM_ERR_INTERNAL` at the C boundary), never
    /// an unchecked read. On failure the bytes come back with the error,
    /// for a full [`Btf::parse`].
    pub fn with_offsets(
        data: Store<u8>,
        offsets: Store<u32>,
    ) -> std::result::Result<Btf, (Error, Store<u8>)> {
        let l = match Layout::of(&data, None) {
            Ok(l) => l,
            Err(e) => return Err((e, data)),
        };
        let t = l.types.clone();
        let rising = crate::base::bytes::strictly_rising(&offsets);
        let last_ends = offsets.last().is_some_and(|&at| {
            let at = at as usize;
            at >= t.start && at.checked_add(12).is_some_and(|h| h <= t.end) && {
                let info = le::u32(&data, at + 4);
                extra_len((info >> 24) & 0x1f, (info & 0xffff) as usize)
                    .is_some_and(|x| at + 12 + x == t.end)
            }
        });
        if offsets.first().map(|&o| o as usize) != Some(t.start)
            || !rising
            || !last_ends
            || offsets.len() as u64 > MAX_TYPE as u64
        {
            return Err((bad("the type offsets do not fit the type section"), data));
        }
        let mut btf = l.into_btf(data, None);
        btf.offsets = offsets;
        Ok(btf)
    }

    /// The header and the sections' bounds, with no type read yet.
    fn frame(data: Store<u8>, base: Option<Arc<Btf>>) -> Result<Btf> {
        let l = Layout::of(&data, base.as_ref())?;
        Ok(l.into_btf(data, base))
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
            let (name_off, info, size_type) =
                (le::u32(t, pos), le::u32(t, pos + 4), le::u32(t, pos + 8));
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
                    refer(le::u32(e, 0));
                    refer(le::u32(e, 4));
                }
                KIND_STRUCT | KIND_UNION => {
                    for m in e.chunks_exact(12) {
                        if !name_ok(le::u32(m, 0)) {
                            return fail(format!("member name offset {}", le::u32(m, 0)));
                        }
                        refer(le::u32(m, 4));
                    }
                }
                KIND_ENUM => {
                    if let Some(v) = e.chunks_exact(8).find(|v| !name_ok(le::u32(v, 0))) {
                        return fail(format!("enumerator name offset {}", le::u32(v, 0)));
                    }
                }
                KIND_ENUM64 => {
                    if let Some(v) = e.chunks_exact(12).find(|v| !name_ok(le::u32(v, 0))) {
                        return fail(format!("enumerator name offset {}", le::u32(v, 0)));
                    }
                }
                KIND_FUNC_PROTO => {
                    for p in e.chunks_exact(8) {
                        if !name_ok(le::u32(p, 0)) {
                            return fail(format!("parameter name offset {}", le::u32(p, 0)));
                        }
                        refer(le::u32(p, 4));
                    }
                }
                KIND_DATASEC => {
                    for v in e.chunks_exact(12) {
                        if le::u32(v, 0) == 0 {
                            return fail("an entry refers to void".into());
                        }
                        refer(le::u32(v, 0));
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
        self.offsets = offsets.into();
        Ok(())
    }
}

/// Where a blob's sections are and how its ids and strings are numbered.
struct Layout {
    types: std::ops::Range<usize>,
    strings: std::ops::Range<usize>,
    first_id: u32,
    first_str: u32,
}

impl Layout {
    fn of(data: &[u8], base: Option<&Arc<Btf>>) -> Result<Layout> {
        if data.len() < 24 {
            return Err(bad(format!(
                "{} bytes: shorter than the header",
                data.len()
            )));
        }
        let magic = le::u16(data, 0);
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
        let hdr_len = le::u32(data, 4) as usize;
        if hdr_len < 24 || hdr_len > data.len() {
            return Err(bad(format!("header length {hdr_len}")));
        }
        let (type_off, type_len) = (le::u32(data, 8) as usize, le::u32(data, 12) as usize);
        let (str_off, str_len) = (le::u32(data, 16) as usize, le::u32(data, 20) as usize);
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
        let (first_id, first_str) = match base {
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
        // Every name must end within the section: libbpf and the kernel
        // (btf_parse_str_sec) refuse a string section whose last byte is
        // not NUL.
        if data
            .get(strings.clone())
            .and_then(|s| s.last())
            .is_some_and(|&b| b != 0)
        {
            return Err(bad("the string section does not end with a NUL"));
        }
        let str_total = first_str as u64 + strings.len() as u64;
        if str_total > u32::MAX as u64 {
            return Err(bad("string section larger than 4 GiB"));
        }
        Ok(Layout {
            types,
            strings,
            first_id,
            first_str,
        })
    }

    fn into_btf(self, data: Store<u8>, base: Option<Arc<Btf>>) -> Btf {
        Btf {
            data,
            types: self.types,
            strings: self.strings,
            offsets: Store::default(),
            base,
            first_id: self.first_id,
            first_str: self.first_str,
        }
    }
}
