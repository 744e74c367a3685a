//! CO-RE relocations (`.BTF.ext` `core_relo` records), resolved against
//! the kernel's BTF exactly as libbpf resolves them (`relo_core.c`):
//!
//! 1. The local access string (`0:1:2`) is parsed into a spec: the chain
//!    of accessors through the local type, with its bit offset.
//! 2. Candidates are the kernel types whose essential name (the
//!    `___flavor` suffix dropped) equals the local type's, of a compatible
//!    kind: vmlinux's, or the modules' when vmlinux has none. The list is
//!    kept per local type and narrowed to the candidates that matched, as
//!    relocations of that type are processed in `.BTF.ext` order.
//! 3. Each candidate is matched (named members found through anonymous
//!    members, array bounds, compatible field types); all matches must
//!    agree on the result, else the relocation is ambiguous (an error).
//! 4. The instruction is patched (immediate, offset, memory size, or a
//!    64-bit immediate), after checking that it holds the value the local
//!    BTF implies; a relocation that cannot be satisfied poisons the
//!    instruction (a call to helper 0xbad2310, which the verifier names)
//!    where libbpf does, and is an error where libbpf errors.

use std::collections::HashMap;

use super::insn::Insn;
use crate::btf::index::essential_len;
use crate::btf::KernelBtf;
use crate::error::{Error, Result};
use crate::formats::btf::{
    self as raw, Btf, Ty, INT_SIGNED, KIND_ARRAY, KIND_ENUM, KIND_ENUM64, KIND_FLOAT,
    KIND_FUNC_PROTO, KIND_FWD, KIND_INT, KIND_PTR, KIND_STRUCT, KIND_UNION,
};

pub const FIELD_BYTE_OFFSET: u32 = 0;
pub const FIELD_BYTE_SIZE: u32 = 1;
pub const FIELD_EXISTS: u32 = 2;
pub const FIELD_SIGNED: u32 = 3;
pub const FIELD_LSHIFT_U64: u32 = 4;
pub const FIELD_RSHIFT_U64: u32 = 5;
pub const TYPE_ID_LOCAL: u32 = 6;
pub const TYPE_ID_TARGET: u32 = 7;
pub const TYPE_EXISTS: u32 = 8;
pub const TYPE_SIZE: u32 = 9;
pub const ENUMVAL_EXISTS: u32 = 10;
pub const ENUMVAL_VALUE: u32 = 11;
pub const TYPE_MATCHES: u32 = 12;

/// The helper id a poisoned instruction calls (0xbad2310: "bad relo").
pub const POISON_IMM: i32 = 195896080;

/// Longest accessor chain (libbpf's `BPF_CORE_SPEC_MAX_LEN`).
const SPEC_MAX_LEN: usize = 64;

/// libbpf's name of a relocation kind.
pub fn kind_str(kind: u32) -> &'static str {
    match kind {
        FIELD_BYTE_OFFSET => "byte_off",
        FIELD_BYTE_SIZE => "byte_sz",
        FIELD_EXISTS => "field_exists",
        FIELD_SIGNED => "signed",
        FIELD_LSHIFT_U64 => "lshift_u64",
        FIELD_RSHIFT_U64 => "rshift_u64",
        TYPE_ID_LOCAL => "local_type_id",
        TYPE_ID_TARGET => "target_type_id",
        TYPE_EXISTS => "type_exists",
        TYPE_MATCHES => "type_matches",
        TYPE_SIZE => "type_size",
        ENUMVAL_EXISTS => "enumval_exists",
        ENUMVAL_VALUE => "enumval_value",
        _ => "unknown",
    }
}

fn is_field(kind: u32) -> bool {
    kind <= FIELD_RSHIFT_U64
}
fn is_type(kind: u32) -> bool {
    matches!(
        kind,
        TYPE_ID_LOCAL | TYPE_ID_TARGET | TYPE_EXISTS | TYPE_MATCHES | TYPE_SIZE
    )
}
fn is_enumval(kind: u32) -> bool {
    matches!(kind, ENUMVAL_EXISTS | ENUMVAL_VALUE)
}

/// One `bpf_core_relo` record of `.BTF.ext`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreRecord {
    /// Byte offset of the instruction in its section.
    pub insn_off: u32,
    pub type_id: u32,
    pub access_off: u32,
    pub kind: u32,
}

/// libbpf's lower-case kind names (`btf_kind_str`).
fn kind_lower(t: Option<Ty<'_>>) -> &'static str {
    match t.map_or(0, |t| t.kind()) {
        0 => "void",
        KIND_INT => "int",
        KIND_PTR => "ptr",
        KIND_ARRAY => "array",
        KIND_STRUCT => "struct",
        KIND_UNION => "union",
        KIND_ENUM => "enum",
        KIND_FWD => "fwd",
        raw::KIND_TYPEDEF => "typedef",
        raw::KIND_VOLATILE => "volatile",
        raw::KIND_CONST => "const",
        raw::KIND_RESTRICT => "restrict",
        raw::KIND_FUNC => "func",
        KIND_FUNC_PROTO => "func_proto",
        raw::KIND_VAR => "var",
        raw::KIND_DATASEC => "datasec",
        KIND_FLOAT => "float",
        raw::KIND_DECL_TAG => "decl_tag",
        raw::KIND_TYPE_TAG => "type_tag",
        KIND_ENUM64 => "enum64",
        _ => "unknown",
    }
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::format(format!("CO-RE: {what}"))
}

/// Follows modifiers and typedefs (`skip_mods_and_typedefs`): the type and
/// its id, `None` for void or a loop.
fn skip<'b>(btf: &'b Btf, id: u32) -> (Option<Ty<'b>>, u32) {
    match btf.resolve(id) {
        Ok(r) => (btf.ty(r), r),
        Err(_) => (None, id),
    }
}

/// `btf__resolve_size`: void is 0; functions, forward declarations and
/// loops are errors.
fn resolve_size(btf: &Btf, id: u32) -> Result<u64> {
    if id == 0 {
        return Ok(0);
    }
    match btf.size_of(id)? {
        Some(s) => Ok(s),
        None => Err(bad(format!("type [{id}] has no size"))),
    }
}

fn is_any_enum(t: Ty<'_>) -> bool {
    matches!(t.kind(), KIND_ENUM | KIND_ENUM64)
}

fn is_composite(t: Ty<'_>) -> bool {
    matches!(t.kind(), KIND_STRUCT | KIND_UNION)
}

/// `btf_kind_core_compat`: same kind, or any two enums.
fn kind_compat(a: Ty<'_>, b: Ty<'_>) -> bool {
    a.kind() == b.kind() || (is_any_enum(a) && is_any_enum(b))
}

/// One step of a spec.
#[derive(Clone, Copy, Debug)]
struct Accessor<'b> {
    type_id: u32,
    idx: u32,
    /// A named member or enumerator; `None` for an array index.
    name: Option<&'b [u8]>,
}

/// A parsed access: high-level accessors (named fields, array indices),
/// the low-level access string, and the bit offset it reaches.
#[derive(Clone, Debug)]
struct Spec<'b> {
    btf: &'b Btf,
    root_type_id: u32,
    kind: u32,
    spec: Vec<Accessor<'b>>,
    raw: Vec<u32>,
    bit_offset: u32,
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
fn is_flex_arr(btf: &Btf, prev: Option<&Accessor<'_>>, nelems: u32) -> bool {
    let Some(acc) = prev else { return false };
    if acc.name.is_none() || nelems > 0 {
        return false;
    }
    btf.ty(acc.type_id)
        .is_some_and(|t| acc.idx as usize + 1 == t.vlen())
}

/// `bpf_core_parse_spec`.
fn parse_spec<'b>(btf: &'b Btf, rec: &CoreRecord) -> Result<Spec<'b>> {
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
    let (t, mut id) = skip(btf, rec.type_id);
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
    spec.bit_offset = (first as u64 * sz * 8) as u32;
    for i in 1..spec.raw.len() {
        let (t, tid) = skip(btf, id);
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
            let (et, eid) = skip(btf, elem);
            if et.is_none() && elem != 0 {
                return Err(bad("array of a loop"));
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
                .wrapping_add((access as u64 * sz * 8) as u32);
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

/// libbpf's `bpf_core_format_spec`: `<byte_off> [7] struct task_struct.pid (0:12 @ offset 2456)`.
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

fn format_spec(spec: &Spec<'_>) -> String {
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
        let (et, _) = skip(btf, spec.root_type_id);
        if let (Some(et), Some(&i)) = (et, spec.raw.first()) {
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

/// `bpf_core_fields_are_compat`.
fn fields_are_compat(lb: &Btf, lid: u32, tb: &Btf, tid: u32) -> Result<bool> {
    let (mut lid, mut tid) = (lid, tid);
    for _ in 0..raw::MAX_CHAIN {
        let (lt, l2) = skip(lb, lid);
        let (tt, t2) = skip(tb, tid);
        let (Some(lt), Some(tt)) = (lt, tt) else {
            return Err(bad("a field of void type"));
        };
        if is_composite(lt) && is_composite(tt) {
            return Ok(true);
        }
        if !kind_compat(lt, tt) {
            return Ok(false);
        }
        match lt.kind() {
            KIND_PTR | KIND_FLOAT => return Ok(true),
            KIND_FWD | KIND_ENUM | KIND_ENUM64 => {
                let ln = lb.str(lt.name_off);
                let tn = tb.str(tt.name_off);
                let (ll, tl) = (essential_len(ln), essential_len(tn));
                return Ok(ll == 0 || tl == 0 || (ll == tl && ln[..ll] == tn[..tl]));
            }
            KIND_INT => return Ok(lt.int().1 == 0 && tt.int().1 == 0),
            KIND_ARRAY => {
                lid = lt.array().0;
                tid = tt.array().0;
                let _ = (l2, t2);
            }
            _ => return Ok(false),
        }
    }
    Err(bad("a loop of arrays"))
}

/// `__bpf_core_types_are_compat`: the type-based compatibility of typed
/// ksyms, kfunc prototypes and TYPE_* relocations.
pub fn types_are_compat(lb: &Btf, lid: u32, tb: &Btf, tid: u32) -> Result<bool> {
    types_are_compat_level(lb, lid, tb, tid, 32)
}

fn types_are_compat_level(lb: &Btf, lid: u32, tb: &Btf, tid: u32, level: i32) -> Result<bool> {
    let (Some(l0), Some(t0)) = (lb.ty(lid), tb.ty(tid)) else {
        // Void matches void only.
        return Ok(lid == 0 && tid == 0);
    };
    if !kind_compat(l0, t0) {
        return Ok(false);
    }
    let (mut lid, mut tid) = (lid, tid);
    for _ in 0..32 {
        let (lt, l2) = skip(lb, lid);
        let (tt, t2) = skip(tb, tid);
        let (lt, tt) = match (lt, tt) {
            (Some(a), Some(b)) => (a, b),
            (None, None) if l2 == 0 && t2 == 0 => return Ok(true),
            _ => return Err(bad("compatibility check through a loop or void")),
        };
        if !kind_compat(lt, tt) {
            return Ok(false);
        }
        match lt.kind() {
            KIND_STRUCT | KIND_UNION | KIND_ENUM | KIND_FWD | KIND_ENUM64 => return Ok(true),
            KIND_INT => return Ok(lt.int().1 == 0 && tt.int().1 == 0),
            KIND_PTR => {
                lid = lt.type_id();
                tid = tt.type_id();
            }
            KIND_ARRAY => {
                lid = lt.array().0;
                tid = tt.array().0;
            }
            KIND_FUNC_PROTO => {
                if lt.vlen() != tt.vlen() {
                    return Ok(false);
                }
                for ((_, lp), (_, tp)) in lt.params().zip(tt.params()) {
                    if level <= 0 {
                        return Err(bad("function prototypes nested too deep"));
                    }
                    let (_, lpid) = skip(lb, lp);
                    let (_, tpid) = skip(tb, tp);
                    if !types_are_compat_level(lb, lpid, tb, tpid, level - 1)? {
                        return Ok(false);
                    }
                }
                lid = skip(lb, lt.type_id()).1;
                tid = skip(tb, tt.type_id()).1;
            }
            _ => return Ok(false),
        }
    }
    Err(bad("compatibility check deeper than 32 levels"))
}

/// `bpf_core_names_match`: essential names equal (an anonymous target
/// matches only an anonymous local).
fn names_match(lb: &Btf, loff: u32, tb: &Btf, toff: u32) -> bool {
    let (ln, tn) = (lb.str(loff), tb.str(toff));
    if tn.is_empty() {
        return ln.is_empty();
    }
    let (ll, tl) = (essential_len(ln), essential_len(tn));
    ll == tl && ln[..ll] == tn[..tl]
}

/// `__bpf_core_types_match` (TYPE_MATCHES).
fn types_match(
    lb: &Btf,
    lid: u32,
    tb: &Btf,
    tid: u32,
    behind_ptr: bool,
    level: i32,
) -> Result<bool> {
    if level <= 0 {
        return Err(bad("type match nested too deep"));
    }
    let (mut lid, mut tid, mut behind_ptr) = (lid, tid, behind_ptr);
    for _ in 0..32 {
        let (lt, l2) = skip(lb, lid);
        let (tt, t2) = skip(tb, tid);
        let (lt, tt) = match (lt, tt) {
            (Some(a), Some(b)) => (a, b),
            (None, None) if l2 == 0 && t2 == 0 => return Ok(true),
            (None, _) | (_, None) if l2 == 0 || t2 == 0 => return Ok(false),
            _ => return Err(bad("type match through a loop")),
        };
        if !names_match(lb, lt.name_off, tb, tt.name_off) {
            return Ok(false);
        }
        let (lk, tk) = (lt.kind(), tt.kind());
        match lk {
            KIND_FWD => {
                let lf = lt.kflag();
                if behind_ptr {
                    if lk == tk {
                        return Ok(lf == tt.kflag());
                    }
                    return Ok((tk == KIND_STRUCT && !lf) || (tk == KIND_UNION && lf));
                }
                return Ok(lk == tk && lf == tt.kflag());
            }
            KIND_ENUM | KIND_ENUM64 => {
                if !is_any_enum(tt) || lt.size() != tt.size() || lt.vlen() > tt.vlen() {
                    return Ok(false);
                }
                for le in lt.enumerators() {
                    if !tt
                        .enumerators()
                        .any(|te| names_match(lb, le.name_off, tb, te.name_off))
                    {
                        return Ok(false);
                    }
                }
                return Ok(true);
            }
            KIND_STRUCT | KIND_UNION => {
                if behind_ptr {
                    if lk == tk {
                        return Ok(true);
                    }
                    if tk != KIND_FWD {
                        return Ok(false);
                    }
                    return Ok((lk == KIND_UNION) == tt.kflag());
                }
                if lk != tk || lt.vlen() > tt.vlen() {
                    return Ok(false);
                }
                for lm in lt.members() {
                    let mut matched = false;
                    for tm in tt.members() {
                        if !names_match(lb, lm.name_off, tb, tm.name_off) {
                            continue;
                        }
                        if types_match(lb, lm.ty, tb, tm.ty, behind_ptr, level - 1)? {
                            matched = true;
                            break;
                        }
                    }
                    if !matched {
                        return Ok(false);
                    }
                }
                return Ok(true);
            }
            KIND_INT => {
                return Ok(lk == tk
                    && lt.size() == tt.size()
                    && (lt.int().0 & INT_SIGNED) == (tt.int().0 & INT_SIGNED));
            }
            KIND_PTR => {
                if lk != tk {
                    return Ok(false);
                }
                behind_ptr = true;
                lid = lt.type_id();
                tid = tt.type_id();
            }
            KIND_ARRAY => {
                if lk != tk || lt.array().2 != tt.array().2 {
                    return Ok(false);
                }
                lid = lt.array().0;
                tid = tt.array().0;
            }
            KIND_FUNC_PROTO => {
                if lk != tk || lt.vlen() != tt.vlen() {
                    return Ok(false);
                }
                for ((_, lp), (_, tp)) in lt.params().zip(tt.params()) {
                    if !types_match(lb, lp, tb, tp, behind_ptr, level - 1)? {
                        return Ok(false);
                    }
                }
                lid = lt.type_id();
                tid = tt.type_id();
            }
            0 => return Ok(lk == tk),
            _ => return Ok(false),
        }
    }
    Err(bad("type match deeper than 32 levels"))
}

/// `bpf_core_match_member`: finds the local accessor's named member in
/// target struct `targ_id`, through anonymous members, extending `spec`.
fn match_member<'t>(
    lb: &Btf,
    local: &Accessor<'_>,
    tb: &'t Btf,
    targ_id: u32,
    spec: &mut Spec<'t>,
    next: &mut u32,
) -> Result<bool> {
    let (tt, targ_id) = skip(tb, targ_id);
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
fn spec_match<'t>(local: &Spec<'_>, tb: &'t Btf, targ_id: u32) -> Result<Option<Spec<'t>>> {
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
        let (tt, tid) = skip(tb, targ_id);
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
        let (tt, t2) = skip(tb, tid);
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
                tid = skip(tb, elem).1;
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
            ts.bit_offset = ts.bit_offset.wrapping_add((la.idx as u64 * sz * 8) as u32);
        }
    }
    Ok(Some(ts))
}

/// What a relocation does to its instruction (`bpf_core_relo_res`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelocRes {
    pub orig_val: u64,
    pub new_val: u64,
    pub poison: bool,
    pub validate: bool,
    pub fail_memsz_adjust: bool,
    pub orig_sz: u32,
    pub new_sz: u32,
    pub orig_type_id: u32,
    pub new_type_id: u32,
}

/// Value of a field relocation: (value, field size, field type id,
/// validate), or `Poison` when the spec is missing.
enum Field {
    Value(u64, u32, u32, bool),
    Poison,
}

/// `bpf_core_calc_field_relo`.
fn calc_field(rec: &CoreRecord, spec: Option<&Spec<'_>>) -> Result<Field> {
    if rec.kind == FIELD_EXISTS {
        return Ok(Field::Value(spec.is_some() as u64, 0, 0, true));
    }
    let Some(spec) = spec else {
        return Ok(Field::Poison);
    };
    let btf = spec.btf;
    let acc = spec.spec.last().ok_or_else(|| bad("empty spec"))?;
    if acc.name.is_none() {
        let sz = resolve_size(btf, acc.type_id)? as u32;
        return match rec.kind {
            FIELD_BYTE_OFFSET => Ok(Field::Value(
                (spec.bit_offset / 8) as u64,
                sz,
                acc.type_id,
                true,
            )),
            FIELD_BYTE_SIZE => Ok(Field::Value(sz as u64, 0, 0, true)),
            _ => Err(bad(format!(
                "insn #{}: a {} relocation cannot apply to an array element",
                rec.insn_off / 8,
                kind_str(rec.kind)
            ))),
        };
    }
    let t = btf.ty(acc.type_id).ok_or_else(|| bad("accessor of void"))?;
    let m = t
        .members()
        .nth(acc.idx as usize)
        .ok_or_else(|| bad("member index"))?;
    let (mt, field_type_id) = skip(btf, m.ty);
    let bit_off = spec.bit_offset;
    let mut bit_sz = m.bitfield_size;
    let bitfield = bit_sz > 0;
    let (byte_off, byte_sz);
    if bitfield {
        let mt = mt.ok_or_else(|| bad("bitfield of void"))?;
        let mut bsz = mt.size();
        if bsz == 0 {
            return Err(bad("bitfield of a zero-sized type"));
        }
        let mut boff = bit_off / 8 / bsz * bsz;
        while bit_off + bit_sz - boff * 8 > bsz * 8 {
            if bsz >= 8 {
                return Err(bad(format!(
                    "insn #{}: bitfield cannot be read with a 64-bit load",
                    rec.insn_off / 8
                )));
            }
            bsz *= 2;
            boff = bit_off / 8 / bsz * bsz;
        }
        byte_sz = bsz;
        byte_off = boff;
    } else {
        byte_sz = resolve_size(btf, field_type_id)? as u32;
        byte_off = spec.bit_offset / 8;
        bit_sz = byte_sz * 8;
    }
    let mut validate = !bitfield;
    let v = match rec.kind {
        FIELD_BYTE_OFFSET => {
            return Ok(Field::Value(
                byte_off as u64,
                if bitfield { 0 } else { byte_sz },
                if bitfield { 0 } else { field_type_id },
                validate,
            ))
        }
        FIELD_BYTE_SIZE => byte_sz as u64,
        FIELD_SIGNED => {
            validate = true;
            mt.is_some_and(|mt| {
                (is_any_enum(mt) && mt.kflag())
                    || (mt.kind() == KIND_INT && mt.int().0 & INT_SIGNED != 0)
            }) as u64
        }
        FIELD_LSHIFT_U64 => 64u64.wrapping_sub((bit_off + bit_sz - byte_off * 8) as u64),
        FIELD_RSHIFT_U64 => {
            validate = true;
            64 - bit_sz as u64
        }
        k => return Err(bad(format!("unknown field relocation {k}"))),
    };
    Ok(Field::Value(v, 0, 0, validate))
}

/// `bpf_core_calc_relo`: the relocation's result for one candidate (or
/// none).
fn calc_relo(rec: &CoreRecord, local: &Spec<'_>, targ: Option<&Spec<'_>>) -> Result<RelocRes> {
    let mut res = RelocRes {
        validate: true,
        ..Default::default()
    };
    if is_field(rec.kind) {
        let orig = calc_field(rec, Some(local))?;
        let new = calc_field(rec, targ)?;
        let Field::Value(ov, osz, otid, validate) = orig else {
            res.poison = true;
            return Ok(res);
        };
        let Field::Value(nv, nsz, ntid, _) = new else {
            res.poison = true;
            return Ok(res);
        };
        res.orig_val = ov;
        res.orig_sz = osz;
        res.orig_type_id = otid;
        res.validate = validate;
        res.new_val = nv;
        res.new_sz = nsz;
        res.new_type_id = ntid;
        if osz != nsz {
            let ot = local.btf.ty(otid);
            let nt = targ.and_then(|t| t.btf.ty(ntid));
            let unsigned_int = |t: Option<Ty<'_>>| {
                t.is_some_and(|t| t.kind() == KIND_INT && t.int().0 != INT_SIGNED)
            };
            let ptr = |t: Option<Ty<'_>>| t.is_some_and(|t| t.kind() == KIND_PTR);
            if !(ptr(ot) && ptr(nt) || unsigned_int(ot) && unsigned_int(nt)) {
                res.fail_memsz_adjust = true;
            }
        }
    } else if is_type(rec.kind) {
        let val = |spec: Option<&Spec<'_>>| -> Result<u64> {
            let Some(spec) = spec else { return Ok(0) };
            match rec.kind {
                TYPE_ID_TARGET => Ok(spec.root_type_id as u64),
                TYPE_EXISTS | TYPE_MATCHES => Ok(1),
                TYPE_SIZE => resolve_size(spec.btf, spec.root_type_id),
                k => Err(bad(format!("unknown type relocation {k}"))),
            }
        };
        res.orig_val = val(Some(local))?;
        res.new_val = val(targ)?;
        res.validate = rec.kind != TYPE_ID_TARGET;
    } else if is_enumval(rec.kind) {
        let val = |spec: Option<&Spec<'_>>| -> Option<u64> {
            match rec.kind {
                ENUMVAL_EXISTS => Some(spec.is_some() as u64),
                _ => {
                    let spec = spec?;
                    let a = spec.spec[0];
                    let t = spec.btf.ty(a.type_id)?;
                    // An ENUM value is an s32 in BTF, sign-extended to 64
                    // bits whatever the enum's signedness (as libbpf reads it).
                    t.enumerators().nth(a.idx as usize).map(|e| {
                        if t.kind() == KIND_ENUM {
                            e.value as u32 as i32 as i64 as u64
                        } else {
                            e.value
                        }
                    })
                }
            }
        };
        match (val(Some(local)), val(targ)) {
            (Some(o), Some(n)) => {
                res.orig_val = o;
                res.new_val = n;
            }
            _ => res.poison = true,
        }
    } else {
        return Err(bad(format!("unrecognized relocation kind {}", rec.kind)));
    }
    Ok(res)
}

/// A candidate target type: BTF object and id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cand {
    pub obj: usize,
    pub id: u32,
}

/// Candidate lists per local type id, narrowed as relocations match
/// (libbpf's candidate cache).
#[derive(Default)]
pub struct Cands {
    cache: HashMap<u32, Vec<Cand>>,
}

/// The outcome of one relocation: what to do to the instruction, and the
/// specs as libbpf prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub res: RelocRes,
    pub local: String,
    /// The target spec, or why there is none.
    pub target: String,
}

fn find_cands(local: &Btf, lid: u32, kernel: &KernelBtf) -> Result<Vec<Cand>> {
    let lt = local
        .ty(lid)
        .ok_or_else(|| bad(format!("local type [{lid}] out of range")))?;
    let name = local.str(lt.name_off);
    let ess = &name[..essential_len(name)];
    let mut out = Vec::new();
    for obj in 0..kernel.object_count() {
        if obj == 1 && !out.is_empty() {
            break; // vmlinux has some: modules are not searched
        }
        // A module whose BTF went away has no candidates.
        let Ok(blob) = kernel.object(obj) else {
            continue;
        };
        for id in blob.by_essential_name(ess) {
            if blob.btf.ty(id).is_some_and(|t| kind_compat(t, lt)) {
                out.push(Cand { obj, id });
            }
        }
    }
    Ok(out)
}

/// `bpf_core_calc_relo_insn`: resolves one record. `prog` and `idx` name
/// it in messages.
pub fn resolve(
    local: &Btf,
    kernel: &KernelBtf,
    rec: &CoreRecord,
    cands: &mut Cands,
    prog: &str,
    idx: usize,
) -> Result<Resolved> {
    let at = |e: Error| {
        e.context(format!(
            "program `{prog}`, CO-RE relocation #{idx} at insn #{}",
            rec.insn_off / 8
        ))
    };
    let lt = local
        .ty(rec.type_id)
        .ok_or_else(|| at(bad(format!("type [{}] out of range", rec.type_id))))?;
    let spec = parse_spec(local, rec).map_err(at)?;
    let shown = format_spec(&spec);
    if rec.kind == TYPE_ID_LOCAL {
        let res = RelocRes {
            orig_val: rec.type_id as u64,
            new_val: rec.type_id as u64,
            validate: false,
            ..Default::default()
        };
        return Ok(Resolved {
            res,
            local: shown,
            target: format!("local type id {}", rec.type_id),
        });
    }
    if local.str(lt.name_off).is_empty() {
        return Err(at(Error::unsupported(format!(
            "{shown}: CO-RE does not relocate anonymous types"
        ))));
    }
    let list = match cands.cache.entry(rec.type_id) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(find_cands(local, rec.type_id, kernel).map_err(at)?)
        }
    };
    let mut best: Option<(RelocRes, u32, String)> = None;
    let mut kept = Vec::new();
    for &c in list.iter() {
        let blob = kernel.object(c.obj).map_err(at)?;
        let Some(ts) = spec_match(&spec, &blob.btf, c.id).map_err(at)? else {
            continue;
        };
        let r = calc_relo(rec, &spec, Some(&ts)).map_err(at)?;
        match &best {
            None => best = Some((r, ts.bit_offset, format_spec(&ts))),
            Some((b, off, _)) => {
                if ts.bit_offset != *off {
                    return Err(at(Error::format(format!(
                        "{shown}: field offset ambiguity between candidates: {} != {off} bits",
                        ts.bit_offset
                    ))));
                }
                if r.poison != b.poison || r.new_val != b.new_val {
                    return Err(at(Error::format(format!(
                        "{shown}: relocation decision ambiguity: {} {} != {} {}",
                        if r.poison { "failure" } else { "success" },
                        r.new_val,
                        if b.poison { "failure" } else { "success" },
                        b.new_val
                    ))));
                }
            }
        }
        kept.push(c);
    }
    match best {
        Some((res, _, target)) => {
            *list = kept;
            Ok(Resolved {
                res,
                local: shown,
                target,
            })
        }
        None => {
            let res = calc_relo(rec, &spec, None).map_err(at)?;
            Ok(Resolved {
                res,
                local: shown,
                target: format!("no match among {} candidate(s)", list.len()),
            })
        }
    }
}

fn poison(insns: &mut [Insn], idx: usize) {
    let n = if insns[idx].is_ld_imm64() { 2 } else { 1 };
    for i in insns.iter_mut().skip(idx).take(n) {
        *i = Insn {
            code: super::insn::CALL,
            regs: 0,
            off: 0,
            imm: POISON_IMM,
        };
    }
}

/// BPF size bits of a load/store.
fn size_bytes(code: u8) -> Option<u32> {
    match code & 0x18 {
        0x18 => Some(8),
        0x00 => Some(4),
        0x08 => Some(2),
        0x10 => Some(1),
        _ => None,
    }
}

fn size_code(bytes: u32) -> Option<u8> {
    match bytes {
        8 => Some(0x18),
        4 => Some(0x00),
        2 => Some(0x08),
        1 => Some(0x10),
        _ => None,
    }
}

/// `bpf_core_patch_insn`: applies `res` to `insns[idx]` (and the next one
/// of an ld_imm64). `what` names the relocation in messages.
pub fn patch(insns: &mut [Insn], idx: usize, res: &RelocRes, what: &str) -> Result<()> {
    let insn = insns[idx];
    let class = insn.code & 0x07;
    let fail = |why: String| Error::format(format!("{what}: {why}"));
    match class {
        // ALU, ALU64
        0x04 | 0x07 => {
            if insn.code & 0x08 != 0 {
                return Err(fail(format!(
                    "insn #{idx} (ALU) does not take an immediate"
                )));
            }
            if res.poison {
                poison(insns, idx);
                return Ok(());
            }
            // C compares the s32 immediate, sign-extended, with the u64.
            if res.validate && insn.imm as i64 as u64 != res.orig_val {
                return Err(fail(format!(
                    "unexpected insn #{idx} (ALU/ALU64) value: got {}, exp {} -> {}",
                    insn.imm as u32, res.orig_val, res.new_val
                )));
            }
            insns[idx].imm = res.new_val as i32;
        }
        // LDX, ST, STX
        0x01..=0x03 => {
            if res.poison {
                poison(insns, idx);
                return Ok(());
            }
            if res.validate && insn.off as i64 as u64 != res.orig_val {
                return Err(fail(format!(
                    "unexpected insn #{idx} (LDX/ST/STX) value: got {}, exp {} -> {}",
                    insn.off as u16, res.orig_val, res.new_val
                )));
            }
            if res.new_val > i16::MAX as u64 {
                return Err(fail(format!(
                    "insn #{idx} (LDX/ST/STX) value too big: {}",
                    res.new_val
                )));
            }
            if res.fail_memsz_adjust {
                poison(insns, idx);
                return Ok(());
            }
            insns[idx].off = res.new_val as i16;
            if res.new_sz != res.orig_sz {
                if size_bytes(insn.code) != Some(res.orig_sz) {
                    return Err(fail(format!(
                        "insn #{idx} (LDX/ST/STX) unexpected mem size: got {:?}, exp {}",
                        size_bytes(insn.code),
                        res.orig_sz
                    )));
                }
                let sz = size_code(res.new_sz).ok_or_else(|| {
                    fail(format!(
                        "insn #{idx} (LDX/ST/STX) invalid new mem size: {}",
                        res.new_sz
                    ))
                })?;
                insns[idx].code = (insn.code & 0xe0) | sz | (insn.code & 0x07);
            }
        }
        // LD
        0x00 => {
            let ok = insn.is_ld_imm64()
                && insn.src_reg() == 0
                && insn.off == 0
                && insns
                    .get(idx + 1)
                    .is_some_and(|n| n.code == 0 && n.regs == 0 && n.off == 0);
            if !ok {
                return Err(fail(format!("insn #{idx} (LDIMM64) has unexpected form")));
            }
            if res.poison {
                poison(insns, idx);
                return Ok(());
            }
            let imm = insn.imm as u32 as u64 | ((insns[idx + 1].imm as u32 as u64) << 32);
            if res.validate && imm != res.orig_val {
                return Err(fail(format!(
                    "unexpected insn #{idx} (LDIMM64) value: got {imm}, exp {} -> {}",
                    res.orig_val, res.new_val
                )));
            }
            insns[idx].imm = res.new_val as u32 as i32;
            insns[idx + 1].imm = (res.new_val >> 32) as u32 as i32;
        }
        _ => {
            return Err(fail(format!(
                "trying to relocate unrecognized insn #{idx}, code {:#x}",
                insn.code
            )))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
