//! Map definitions in `.maps`, read from the object's BTF as libbpf reads
//! them (`__uint`, `__type`, `__array`).

use crate::error::{Error, Result};
use crate::formats::btf::{Btf, Member, KIND_ARRAY, KIND_FUNC_PROTO, KIND_PTR, KIND_STRUCT};

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

/// `__uint(name, N)` is `int (*name)[N]`: N is the array's length.
fn uint_field(btf: &Btf, member_ty: u32) -> Result<Option<u32>> {
    let Some(ptr) = btf.ty(btf.resolve(member_ty)?) else {
        return Ok(None);
    };
    if ptr.kind() != KIND_PTR {
        return Ok(None);
    }
    Ok(btf
        .ty(btf.resolve(ptr.type_id())?)
        .filter(|t| t.kind() == KIND_ARRAY)
        .map(|a| a.array().2))
}

/// `__type(name, T)` is `typeof(T) *name`: T's id and size.
fn type_field(btf: &Btf, member_ty: u32) -> Result<Option<(u32, u32)>> {
    let Some(ptr) = btf.ty(btf.resolve(member_ty)?) else {
        return Ok(None);
    };
    if ptr.kind() != KIND_PTR {
        return Ok(None);
    }
    let size = btf
        .size_of(ptr.type_id())?
        .and_then(|s| u32::try_from(s).ok());
    Ok(size.map(|size| (ptr.type_id(), size)))
}

/// The map defined by the `.maps` VAR `var_id`.
pub fn map_def(btf: &Btf, var_id: u32) -> Result<MapDef> {
    let var = btf
        .ty(var_id)
        .ok_or_else(|| Error::format("malformed .BTF: map VAR missing"))?;
    let name = String::from_utf8_lossy(btf.name(var_id)).into_owned();
    struct_map_def(btf, var.type_id(), &name, 0)
}

/// The map defined by struct type `ty` (a `.maps` VAR's, or an inner
/// map's), as libbpf's `parse_btf_map_def`.
fn struct_map_def(btf: &Btf, ty: u32, name: &str, depth: u32) -> Result<MapDef> {
    let st = btf
        .ty(btf.resolve(ty)?)
        .filter(|t| t.kind() == KIND_STRUCT)
        .ok_or_else(|| Error::format(format!("map `{name}`: its definition is not a struct")))?;
    let mut d = MapDef::default();
    for m in st.members() {
        let field = String::from_utf8_lossy(btf.str(m.name_off)).into_owned();
        let uint = || {
            uint_field(btf, m.ty)?.ok_or_else(|| {
                Error::format(format!("map `{name}`: field `{field}` is not __uint(...)"))
            })
        };
        let typed = || {
            type_field(btf, m.ty)?.ok_or_else(|| {
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
            "values" => values(btf, &m, name, depth, &mut d)?,
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

/// `__array(values, struct inner)`: a zero-length array of pointers to
/// the inner map's definition (or to a function prototype, for a program
/// array).
fn values(btf: &Btf, m: &Member, name: &str, depth: u32, d: &mut MapDef) -> Result<()> {
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
    let elem = match btf.ty(btf.resolve(m.ty)?) {
        Some(a) if a.kind() == KIND_ARRAY && a.array().2 == 0 => a.array().0,
        _ => return Err(fail("not a zero-length array")),
    };
    let target = match btf.ty(btf.resolve(elem)?) {
        Some(p) if p.kind() == KIND_PTR => btf.resolve(p.type_id())?,
        _ => return Err(fail("not an array of pointers")),
    };
    d.values_offset = Some(m.bit_offset / 8);
    if of_maps {
        if depth > 0 {
            return Err(fail("maps of maps of maps"));
        }
        let inner = struct_map_def(btf, target, &format!("{name}.inner"), depth + 1)?;
        d.inner = Some(Box::new(inner));
    } else if btf.ty(target).map(|t| t.kind()) != Some(KIND_FUNC_PROTO) {
        return Err(fail(
            "a program array's values must point to a function prototype",
        ));
    }
    Ok(())
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
    use crate::formats::btf::tests::Builder;
    use crate::formats::btf::{KIND_DATASEC, KIND_INT, KIND_TYPEDEF, KIND_VAR};

    /// A `.maps` definition built by hand, as clang writes
    /// `__uint(type, 5); __uint(max_entries, 5); __type(value, u64)`
    /// (through a typedef), read as libbpf reads it.
    #[test]
    fn map_definitions_read_as_libbpf() {
        let mut b = Builder::new();
        let int = b.t("int", KIND_INT, 0, false, 4, &[(1 << 24) | 32]); // 1
        let idx = b.t("__ARRAY_SIZE_TYPE__", KIND_INT, 0, false, 4, &[32]); // 2
        let arr = b.t("", KIND_ARRAY, 0, false, 0, &[int, idx, 5]); // 3
        let ptr = b.t("", KIND_PTR, 0, false, arr, &[]); // 4
        let u64t = b.t("u64", KIND_INT, 0, false, 8, &[64]); // 5
        let td = b.t("u64_t", KIND_TYPEDEF, 0, false, u64t, &[]); // 6
        let pvalue = b.t("", KIND_PTR, 0, false, td, &[]); // 7
        let (ft, fm, fv) = (b.s("type"), b.s("max_entries"), b.s("value"));
        let st = b.t(
            "",
            KIND_STRUCT,
            3,
            false,
            24,
            &[ft, ptr, 0, fm, ptr, 64, fv, pvalue, 128],
        ); // 8
        let var = b.t("my_map", KIND_VAR, 0, false, st, &[1]); // 9
        b.t(".maps", KIND_DATASEC, 1, false, 24, &[var, 0, 24]);
        let btf = Btf::parse(b.bytes()).unwrap();
        assert_eq!(
            map_def(&btf, var).unwrap(),
            MapDef {
                map_type: 5,
                max_entries: 5,
                value_size: 8,
                // `__type(value, ...)` points at the typedef, 8 bytes.
                value_type_id: 6,
                ..Default::default()
            }
        );
        // A VAR whose type is no struct (`int` 1 read as a VAR of type 4,
        // a pointer): named in the error.
        let e = map_def(&btf, int).unwrap_err();
        assert!(e.message().contains("is not a struct"), "{e}");
    }

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
