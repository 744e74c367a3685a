//! Map definitions in `.maps`, read from the object's BTF as libbpf reads
//! them (`__uint`, `__type`, `__array`).

use super::btf::*;
use crate::error::{Error, Result};

/// One map definition read from a `.maps` variable, as libbpf reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapDef {
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    /// `__type(key, T)`: T's id (0 with `__uint(key_size, N)`).
    pub key_type_id: u32,
    pub value_type_id: u32,
    pub map_extra: u64,
    pub numa_node: u32,
    /// Maps of maps: the inner map's definition (`__array(values, ...)`).
    pub inner: Option<Box<MapDef>>,
    /// Maps of maps and program arrays: the byte offset of `values` in the
    /// definition (where `.rel.maps` entries give initial slots).
    pub values_offset: Option<u32>,
}

impl Btf {
    /// `__uint(name, N)` is `int (*name)[N]`: N is the array's length.
    fn uint_field(&self, member_ty: u32) -> Result<Option<u32>> {
        let Some(ptr) = self.get(self.skip_mods(member_ty)?) else {
            return Ok(None);
        };
        if ptr.kind() != KIND_PTR {
            return Ok(None);
        }
        Ok(
            match self.get(self.skip_mods(ptr.size_type)?).map(|t| &t.extra) {
                Some(&Extra::Array { nelems, .. }) => Some(nelems),
                _ => None,
            },
        )
    }

    /// `__type(name, T)` is `typeof(T) *name`: T's id and size.
    fn type_field(&self, member_ty: u32) -> Result<Option<(u32, u32)>> {
        let Some(ptr) = self.get(self.skip_mods(member_ty)?) else {
            return Ok(None);
        };
        if ptr.kind() != KIND_PTR {
            return Ok(None);
        }
        let size = self
            .size_of(ptr.size_type)?
            .and_then(|s| u32::try_from(s).ok());
        Ok(size.map(|size| (ptr.size_type, size)))
    }

    /// The map defined by the `.maps` VAR `var_id`.
    pub fn map_def(&self, var_id: u32) -> Result<MapDef> {
        let var = self.get(var_id).ok_or_else(|| bad("map VAR missing"))?;
        let name = String::from_utf8_lossy(self.name(var_id)).into_owned();
        self.struct_map_def(var.size_type, &name, 0)
    }

    /// The map defined by struct type `ty` (a `.maps` VAR's, or an inner
    /// map's), as libbpf's `parse_btf_map_def`.
    fn struct_map_def(&self, ty: u32, name: &str, depth: u32) -> Result<MapDef> {
        let sid = self.skip_mods(ty)?;
        let st = self
            .get(sid)
            .filter(|t| t.kind() == KIND_STRUCT)
            .ok_or_else(|| {
                Error::format(format!("map `{name}`: its definition is not a struct"))
            })?;
        let Extra::Members(members) = &st.extra else {
            return Err(bad("struct without members"));
        };
        let mut d = MapDef::default();
        for m in members {
            let field = String::from_utf8_lossy(self.str(m[0])).into_owned();
            let uint = || {
                self.uint_field(m[1])?.ok_or_else(|| {
                    Error::format(format!("map `{name}`: field `{field}` is not __uint(...)"))
                })
            };
            let typed = || {
                self.type_field(m[1])?.ok_or_else(|| {
                    Error::format(format!(
                        "map `{name}`: cannot size the type of field `{field}`"
                    ))
                })
            };
            match field.as_str() {
                "type" => d.map_type = uint()?,
                "max_entries" => d.max_entries = uint()?,
                "map_flags" => d.map_flags = uint()?,
                "key_size" => d.key_size = uint()?,
                "value_size" => d.value_size = uint()?,
                "key" => (d.key_type_id, d.key_size) = typed()?,
                "value" => (d.value_type_id, d.value_size) = typed()?,
                "map_extra" => d.map_extra = uint()? as u64,
                "numa_node" => d.numa_node = uint()?,
                "pinning" => {
                    uint()?;
                }
                "values" => {
                    // `__array(values, struct inner)`: a zero-length array of
                    // pointers to the inner map's definition (or to a
                    // function prototype, for a program array).
                    const PROG_ARRAY: u32 = 3;
                    const ARRAY_OF_MAPS: u32 = 12;
                    const HASH_OF_MAPS: u32 = 13;
                    let fail = |why: &str| Error::format(format!("map `{name}`: `values`: {why}"));
                    let of_maps = matches!(d.map_type, ARRAY_OF_MAPS | HASH_OF_MAPS);
                    if !of_maps && d.map_type != PROG_ARRAY {
                        return Err(fail("only maps of maps and program arrays have `values`"));
                    }
                    if d.value_size != 0 && d.value_size != 4 {
                        return Err(fail("the value size must be 4"));
                    }
                    d.value_size = 4;
                    let elem = match self.get(self.skip_mods(m[1])?).map(|t| &t.extra) {
                        Some(Extra::Array { ty, nelems: 0, .. }) => *ty,
                        _ => return Err(fail("not a zero-length array")),
                    };
                    let target = match self.get(self.skip_mods(elem)?) {
                        Some(p) if p.kind() == KIND_PTR => self.skip_mods(p.size_type)?,
                        _ => return Err(fail("not an array of pointers")),
                    };
                    d.values_offset = Some(m[2] / 8);
                    if of_maps {
                        if depth > 0 {
                            return Err(fail("maps of maps of maps"));
                        }
                        let inner =
                            self.struct_map_def(target, &format!("{name}.inner"), depth + 1)?;
                        d.inner = Some(Box::new(inner));
                    } else if self.get(target).map(|t| t.kind()) != Some(KIND_FUNC_PROTO) {
                        return Err(fail(
                            "a program array's values must point to a function prototype",
                        ));
                    }
                }
                other => {
                    return Err(Error::unsupported(format!(
                        "map `{name}`: unknown field `{other}`"
                    )));
                }
            }
        }
        // Ring buffers: the kernel wants a power-of-2 number of pages;
        // libbpf rounds the size up, and so does this (what map_info says
        // is what to create).
        const RINGBUF: u32 = 27;
        const USER_RINGBUF: u32 = 31;
        if matches!(d.map_type, RINGBUF | USER_RINGBUF) {
            d.max_entries = ringbuf_size(d.max_entries, crate::base::sys::page_size());
        }
        Ok(d)
    }
}

/// libbpf's `adjust_ringbuf_sz`: `sz` if it is a power-of-2 multiple of
/// the page size, else the smallest such size above it (0 stays 0, and a
/// size no such u32 exceeds stays as it is, for the kernel to refuse).
fn ringbuf_size(sz: u32, page: u32) -> u32 {
    if sz == 0 || (sz % page == 0 && (sz / page).is_power_of_two()) {
        return sz;
    }
    let mut mul: u32 = 1;
    while mul <= u32::MAX / page {
        if mul * page > sz {
            return mul * page;
        }
        mul <<= 1;
    }
    sz
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libbpf's adjust_ringbuf_sz, worked out by hand for 4 KiB pages.
    #[test]
    fn ring_buffers_round_up_to_a_power_of_two_pages() {
        let p = 4096;
        assert_eq!(ringbuf_size(0, p), 0);
        assert_eq!(ringbuf_size(1, p), 4096);
        assert_eq!(ringbuf_size(1000, p), 4096);
        assert_eq!(ringbuf_size(4096, p), 4096);
        assert_eq!(ringbuf_size(4097, p), 8192);
        assert_eq!(ringbuf_size(3 * 4096, p), 16384);
        assert_eq!(ringbuf_size(256 * 1024, p), 256 * 1024);
        assert_eq!(ringbuf_size(1 << 31, p), 1 << 31);
        // Above 2^31 no power-of-2 multiple fits in a u32: left to the kernel.
        assert_eq!(ringbuf_size((1 << 31) + 1, p), (1 << 31) + 1);
        assert_eq!(ringbuf_size(u32::MAX, p), u32::MAX);
    }
}
