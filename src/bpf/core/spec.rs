//! Specs: a CO-RE access string parsed through the local type
//! (`bpf_core_parse_spec`), printed as libbpf prints it, and matched
//! against a candidate kernel type (`bpf_core_spec_match`).

use super::compat::{fields_are_compat, types_are_compat, types_match};
use super::{
    bad, is_any_enum, is_composite, is_enumval, is_field, is_type, kind_lower, kind_str,
    resolve_size, skip, CoreRecord, SPEC_MAX_LEN, TYPE_MATCHES,
};
use crate::btf::index::essential_len;
use crate::error::Result;
use crate::formats::btf::{Btf, KIND_ARRAY};

/// One step of a spec.
#[derive(Clone, Copy, Debug)]
pub(super) struct Accessor<'b> {
    pub type_id: u32,
    pub idx: u32,
    /// A named member or enumerator; `None` for an array index.
    pub name: Option<&'b [u8]>,
}

/// A parsed access: high-level accessors (named fields, array indices),
/// the low-level access string, and the bit offset it reaches.
#[derive(Clone, Debug)]
pub(super) struct Spec<'b> {
    pub btf: &'b Btf,
    pub root_type_id: u32,
    pub kind: u32,
    pub spec: Vec<Accessor<'b>>,
    pub raw: Vec<u32>,
    pub bit_offset: u32,
}

impl<'b> Spec<'b> {
    fn new(btf: &'b Btf, root_type_id: u32, kind: u32) -> Spec<'b> {
        Spec {
            btf,
            root_type_id,
            kind,
            spec: Vec::new(),
            raw: Vec::new(),
            bit_offset: 0,
        }
    }
}

/// `is_flex_arr`: a zero-length array that is the last member of the
/// struct the previous accessor is in.
pub(super) fn is_flex_arr(btf: &Btf, prev: Option<&Accessor<'_>>, nelems: u32) -> bool {
    let Some(acc) = prev else { return false };
    if acc.name.is_none() || nelems > 0 {
        return false;
    }
    btf.ty(acc.type_id)
        .is_some_and(|t| acc.idx as usize + 1 == t.vlen())
}

/// `bpf_core_parse_spec`.
pub(super) fn parse_spec<'b>(btf: &'b Btf, rec: &CoreRecord) -> Result<Spec<'b>> {
    let text = btf.str(rec.access_off);
    let shown = || String::from_utf8_lossy(text).into_owned();
    if text.is_empty() || text[0] == b':' {
        return Err(bad(format!(
            "empty or malformed access string `{}`",
            shown()
        )));
    }
    let mut spec = Spec::new(btf, rec.type_id, rec.kind);
    if is_type(rec.kind) {
        if text != b"0" {
            return Err(bad(format!(
                "access string `{}` of a type relocation must be `0`",
                shown()
            )));
        }
        return Ok(spec);
    }
    for part in text.split(|&b| b == b':') {
        let n = std::str::from_utf8(part)
            .ok()
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
            .ok_or_else(|| bad(format!("access string `{}` does not parse", shown())))?;
        if spec.raw.len() == SPEC_MAX_LEN {
            return Err(bad(format!(
                "access string `{}` is longer than {SPEC_MAX_LEN}",
                shown()
            )));
        }
        spec.raw.push(n);
    }
    let (t, mut id) = skip(btf, rec.type_id)?;
    let t = t.ok_or_else(|| {
        bad(format!(
            "relocation of type [{}], which is void",
            rec.type_id
        ))
    })?;
    let first = spec.raw[0];
    if is_enumval(rec.kind) {
        if !is_any_enum(t) || spec.raw.len() > 1 || first as usize >= t.vlen() {
            return Err(bad(format!(
                "access string `{}` is not an enumerator of type [{}]",
                shown(),
                rec.type_id
            )));
        }
        let e = t
            .enumerators()
            .nth(first as usize)
            .map(|e| e.name_off)
            .unwrap_or(0);
        spec.spec.push(Accessor {
            type_id: id,
            idx: first,
            name: Some(btf.str(e)),
        });
        return Ok(spec);
    }
    if !is_field(rec.kind) {
        return Err(bad(format!("unknown relocation kind {}", rec.kind)));
    }
    spec.spec.push(Accessor {
        type_id: id,
        idx: first,
        name: None,
    });
    let sz = resolve_size(btf, id)?;
    spec.bit_offset = (first as u64).wrapping_mul(sz).wrapping_mul(8) as u32;
    for i in 1..spec.raw.len() {
        let (t, tid) = skip(btf, id)?;
        id = tid;
        let t = t.ok_or_else(|| bad(format!("access string `{}` walks into void", shown())))?;
        let access = spec.raw[i];
        if is_composite(t) {
            if access as usize >= t.vlen() {
                return Err(bad(format!(
                    "access string `{}`: member {access} of [{id}], which has {}",
                    shown(),
                    t.vlen()
                )));
            }
            let m = t.members().nth(access as usize).expect("checked");
            spec.bit_offset = spec.bit_offset.wrapping_add(m.bit_offset);
            if m.name_off != 0 {
                let name = btf.str(m.name_off);
                if name.is_empty() {
                    return Err(bad("a member name is empty"));
                }
                spec.spec.push(Accessor {
                    type_id: id,
                    idx: access,
                    name: Some(name),
                });
            }
            id = m.ty;
        } else if t.kind() == KIND_ARRAY {
            let (elem, _, nelems) = t.array();
            let (et, eid) = skip(btf, elem)?;
            if et.is_none() && elem != 0 {
                return Err(bad("an array of void"));
            }
            id = eid;
            let flex = is_flex_arr(btf, spec.spec.last(), nelems);
            if !flex && access >= nelems {
                return Err(bad(format!(
                    "access string `{}`: index {access} of an array of {nelems}",
                    shown()
                )));
            }
            spec.spec.push(Accessor {
                type_id: id,
                idx: access,
                name: None,
            });
            let sz = resolve_size(btf, id)?;
            spec.bit_offset = spec
                .bit_offset
                .wrapping_add((access as u64).wrapping_mul(sz).wrapping_mul(8) as u32);
        } else {
            return Err(bad(format!(
                "relocation of [{}] `{}` (at index {i}) reaches type [{id}] of kind {}",
                rec.type_id,
                shown(),
                kind_lower(Some(t))
            )));
        }
    }
    Ok(spec)
}

/// A record's local type and access string as libbpf prints them
/// (`<byte_off> [4] struct task.pid (0:0 @ offset 0)`), or, when the
/// record does not parse, its raw parts and why.
pub fn describe(local: &Btf, rec: &CoreRecord) -> String {
    match parse_spec(local, rec) {
        Ok(spec) => format_spec(&spec),
        Err(e) => format!(
            "<{}> [{}] `{}` (invalid: {})",
            kind_str(rec.kind),
            rec.type_id,
            String::from_utf8_lossy(local.str(rec.access_off)),
            e.message()
        ),
    }
}

/// libbpf's `bpf_core_format_spec`: `<byte_off> [7] struct task_struct.pid (0:12 @ offset 2456)`.
pub(super) fn format_spec(spec: &Spec<'_>) -> String {
    let btf = spec.btf;
    let t = btf.ty(spec.root_type_id);
    let name = btf.name(spec.root_type_id);
    let mut s = format!(
        "<{}> [{}] {} {}",
        kind_str(spec.kind),
        spec.root_type_id,
        kind_lower(t),
        if name.is_empty() {
            "<anon>".into()
        } else {
            String::from_utf8_lossy(name)
        }
    );
    if is_type(spec.kind) {
        return s;
    }
    if is_enumval(spec.kind) {
        // Display only: a root that loops did not parse (`parse_spec`).
        if let (Ok((Some(et), _)), Some(&i)) = (skip(btf, spec.root_type_id), spec.raw.first()) {
            if let Some(e) = et.enumerators().nth(i as usize) {
                let n = String::from_utf8_lossy(btf.str(e.name_off));
                if et.kflag() {
                    s += &format!("::{n} = {}", e.value as i64);
                } else {
                    s += &format!("::{n} = {}", e.value);
                }
            }
        }
        return s;
    }
    for (i, a) in spec.spec.iter().enumerate() {
        match a.name {
            Some(n) => s += &format!(".{}", String::from_utf8_lossy(n)),
            None if i > 0 || a.idx > 0 => s += &format!("[{}]", a.idx),
            None => {}
        }
    }
    let raw: Vec<String> = spec.raw.iter().map(|r| r.to_string()).collect();
    s += &format!(" ({}", raw.join(":"));
    if spec.bit_offset % 8 != 0 {
        s += &format!(" @ offset {}.{})", spec.bit_offset / 8, spec.bit_offset % 8);
    } else {
        s += &format!(" @ offset {})", spec.bit_offset / 8);
    }
    s
}

/// `bpf_core_match_member`: finds the local accessor's named member in
/// target struct `targ_id`, through anonymous members, extending `spec`.
pub(super) fn match_member<'t>(
    lb: &Btf,
    local: &Accessor<'_>,
    tb: &'t Btf,
    targ_id: u32,
    spec: &mut Spec<'t>,
    next: &mut u32,
) -> Result<bool> {
    let (tt, targ_id) = skip(tb, targ_id)?;
    let Some(tt) = tt else {
        return Err(bad("member lookup in void"));
    };
    if !is_composite(tt) {
        return Ok(false);
    }
    let lt = lb
        .ty(local.type_id)
        .ok_or_else(|| bad("local accessor of void"))?;
    let lm = lt
        .members()
        .nth(local.idx as usize)
        .ok_or_else(|| bad("local member index"))?;
    let lname = lb.str(lm.name_off);
    for (i, m) in tt.members().enumerate() {
        if spec.raw.len() == SPEC_MAX_LEN {
            return Err(bad("target access deeper than 64"));
        }
        spec.bit_offset = spec.bit_offset.wrapping_add(m.bit_offset);
        spec.raw.push(i as u32);
        let tname = tb.str(m.name_off);
        if tname.is_empty() {
            if match_member(lb, local, tb, m.ty, spec, next)? {
                return Ok(true);
            }
        } else if tname == lname {
            spec.spec.push(Accessor {
                type_id: targ_id,
                idx: i as u32,
                name: Some(tname),
            });
            *next = m.ty;
            let ok = fields_are_compat(lb, lm.ty, tb, m.ty)?;
            if !ok {
                spec.spec.pop();
            }
            return Ok(ok);
        }
        spec.bit_offset = spec.bit_offset.wrapping_sub(m.bit_offset);
        spec.raw.pop();
    }
    Ok(false)
}

/// `bpf_core_spec_match`: the target spec of `local` in candidate
/// `targ_id`, if it matches.
pub(super) fn spec_match<'t>(
    local: &Spec<'_>,
    tb: &'t Btf,
    targ_id: u32,
) -> Result<Option<Spec<'t>>> {
    let mut ts = Spec::new(tb, targ_id, local.kind);
    if is_type(local.kind) {
        let ok = if local.kind == TYPE_MATCHES {
            types_match(local.btf, local.root_type_id, tb, targ_id, false, 32)?
        } else {
            types_are_compat(local.btf, local.root_type_id, tb, targ_id)?
        };
        return Ok(ok.then_some(ts));
    }
    if is_enumval(local.kind) {
        let (tt, tid) = skip(tb, targ_id)?;
        let Some(tt) = tt.filter(|t| is_any_enum(*t)) else {
            return Ok(None);
        };
        let lname = local.spec[0].name.unwrap_or_default();
        let le = essential_len(lname);
        for (i, e) in tt.enumerators().enumerate() {
            let tname = tb.str(e.name_off);
            if essential_len(tname) == le && tname[..le] == lname[..le] {
                ts.spec.push(Accessor {
                    type_id: tid,
                    idx: i as u32,
                    name: Some(tname),
                });
                ts.raw.push(i as u32);
                return Ok(Some(ts));
            }
        }
        return Ok(None);
    }
    let mut tid = targ_id;
    for (i, la) in local.spec.iter().enumerate() {
        let (tt, t2) = skip(tb, tid)?;
        tid = t2;
        let Some(tt) = tt else {
            return Err(bad("target access reaches void"));
        };
        if la.name.is_some() {
            let mut next = tid;
            if !match_member(local.btf, la, tb, tid, &mut ts, &mut next)? {
                return Ok(None);
            }
            tid = next;
        } else {
            if i > 0 {
                if tt.kind() != KIND_ARRAY {
                    return Ok(None);
                }
                let (elem, _, nelems) = tt.array();
                let flex = is_flex_arr(tb, ts.spec.last(), nelems);
                if !flex && la.idx >= nelems {
                    return Ok(None);
                }
                tid = skip(tb, elem)?.1;
            }
            if ts.raw.len() == SPEC_MAX_LEN {
                return Err(bad("target access deeper than 64"));
            }
            ts.spec.push(Accessor {
                type_id: tid,
                idx: la.idx,
                name: None,
            });
            ts.raw.push(la.idx);
            let sz = resolve_size(tb, tid)?;
            ts.bit_offset = ts
                .bit_offset
                .wrapping_add((la.idx as u64).wrapping_mul(sz).wrapping_mul(8) as u32);
        }
    }
    Ok(Some(ts))
}
