//! `.BTF.ext`: func_info, line_info and CO-RE records per ELF section,
//! borrowed from the object's bytes. Format: `Documentation/bpf/btf.rst`.

use crate::base::hash::KeyMap;
use crate::base::le;
use crate::error::{Error, Result};
use crate::formats::btf::MAGIC;

/// The string at `off` of a string section (empty when out of range).
fn str_at(strings: &[u8], off: u32) -> &[u8] {
    let rest = strings.get(off as usize..).unwrap_or_default();
    &rest[..memchr::memchr(0, rest).unwrap_or(rest.len())]
}

/// The `.BTF.ext` records of one ELF section, where they lie in the file.
#[derive(Clone, Debug, Default)]
pub struct ExtSection<'a> {
    pub record_size: usize,
    /// The records, raw, one after the other (`record_size` bytes each;
    /// the first word is a byte offset into the section's code), in one
    /// slice per entry of the section (one, but for odd producers).
    pub parts: Vec<&'a [u8]>,
}

impl ExtSection<'_> {
    /// Each record, `record_size` bytes.
    pub fn records(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let size = self.record_size.max(1);
        self.parts.iter().flat_map(move |p| p.chunks_exact(size))
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        let size = self.record_size.max(1);
        self.parts.iter().map(|p| p.len() / size).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `.BTF.ext`: per ELF section name, func_info, line_info and CO-RE
/// records, borrowed from the object's bytes.
#[derive(Clone, Debug, Default)]
pub struct BtfExt<'a> {
    pub func_info: KeyMap<&'a [u8], ExtSection<'a>>,
    pub line_info: KeyMap<&'a [u8], ExtSection<'a>>,
    pub core_relo: KeyMap<&'a [u8], ExtSection<'a>>,
}

fn bad_ext(what: impl std::fmt::Display) -> Error {
    Error::format(format!("malformed .BTF.ext: {what}"))
}

impl<'a> BtfExt<'a> {
    /// Parses `.BTF.ext` (`data`), whose section names are offsets into
    /// `strings`, the string section of the object's `.BTF`
    /// ([`crate::formats::btf::Btf::string_range`] of its bytes).
    pub fn parse(data: &'a [u8], strings: &'a [u8]) -> Result<BtfExt<'a>> {
        let magic = le::get_u16(data, 0);
        if magic != Some(MAGIC) {
            return Err(bad_ext("bad magic"));
        }
        let f = |o: usize| le::get_u32(data, o).ok_or_else(|| bad_ext("truncated header"));
        let hdr_len = f(4)? as usize;
        if hdr_len < 24 {
            return Err(bad_ext("header too short"));
        }
        let mut out = BtfExt::default();
        let sub =
            |off: u32, len: u32, min_rec: usize| -> Result<KeyMap<&'a [u8], ExtSection<'a>>> {
                let mut map = KeyMap::default();
                if len == 0 {
                    return Ok(map);
                }
                let start = hdr_len
                    .checked_add(off as usize)
                    .ok_or_else(|| bad_ext("offset"))?;
                let end = start
                    .checked_add(len as usize)
                    .ok_or_else(|| bad_ext("offset"))?;
                let b = data
                    .get(start..end)
                    .ok_or_else(|| bad_ext("section out of bounds"))?;
                let rec = le::get_u32(b, 0).ok_or_else(|| bad_ext("truncated"))? as usize;
                if rec < min_rec || rec > 256 {
                    return Err(bad_ext(format!("record size {rec}")));
                }
                let mut pos = 4;
                while pos < b.len() {
                    let name_off = le::get_u32(b, pos).ok_or_else(|| bad_ext("truncated"))?;
                    let n = le::get_u32(b, pos + 4).ok_or_else(|| bad_ext("truncated"))? as usize;
                    pos += 8;
                    let need = n.checked_mul(rec).ok_or_else(|| bad_ext("overflow"))?;
                    let recs = b
                        .get(pos..pos + need)
                        .ok_or_else(|| bad_ext("records out of bounds"))?;
                    pos += need;
                    let e: &mut ExtSection = map.entry(str_at(strings, name_off)).or_default();
                    if !e.parts.is_empty() && e.record_size != rec {
                        return Err(bad_ext("record sizes differ within a section"));
                    }
                    e.record_size = rec;
                    e.parts.push(recs);
                }
                Ok(map)
            };
        out.func_info = sub(f(8)?, f(12)?, 8)?;
        out.line_info = sub(f(16)?, f(20)?, 16)?;
        if hdr_len >= 32 {
            out.core_relo = sub(f(24)?, f(28)?, 16)?;
        }
        Ok(out)
    }
}
