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

use crate::btf::index::essential_len;
use crate::btf::KernelBtf;
use crate::error::{Error, Result};
use crate::formats::btf::{
    self as raw, Btf, Ty, INT_SIGNED, KIND_ARRAY, KIND_ENUM, KIND_ENUM64, KIND_FLOAT,
    KIND_FUNC_PROTO, KIND_FWD, KIND_INT, KIND_PTR, KIND_STRUCT, KIND_UNION,
};

mod compat;
mod patch;
mod spec;

pub use compat::types_are_compat;
pub use patch::patch;
pub use spec::describe;
use spec::{format_spec, parse_spec, spec_match, Spec};

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
/// its id, `None` for void. A loop (the chain rule, [`raw::follow_chain`])
/// is `KSYM_ERR_FORMAT`, "CO-RE: ...", which [`resolve`] names the
/// relocation of: never void, which would make a relocation through a
/// malformed kernel type "not found" instead of an error.
fn skip<'b>(btf: &'b Btf, id: u32) -> Result<(Option<Ty<'b>>, u32)> {
    let r = btf.resolve(id).map_err(|e| bad(e.message()))?;
    Ok((btf.ty(r), r))
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
    let (mt, field_type_id) = skip(btf, m.ty)?;
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
        // libbpf's arithmetic is C's on __u32: it wraps on (malformed) BTF
        // whose sizes and offsets overflow, and so does this.
        let mut boff = bit_off / 8 / bsz * bsz;
        while bit_off
            .wrapping_add(bit_sz)
            .wrapping_sub(boff.wrapping_mul(8))
            > bsz.wrapping_mul(8)
        {
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
        bit_sz = byte_sz.wrapping_mul(8);
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
        FIELD_LSHIFT_U64 => 64u64.wrapping_sub(
            bit_off
                .wrapping_add(bit_sz)
                .wrapping_sub(byte_off.wrapping_mul(8)) as u64,
        ),
        FIELD_RSHIFT_U64 => {
            validate = true;
            64u64.wrapping_sub(bit_sz as u64)
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
pub struct CoreResolution {
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

/// `bpf_core_calc_relo_insn`: resolves one record. `owner` (what holds
/// it: "program `p`", "subprogram `f`", as `reloc::owner_name` says) and
/// `idx` name it in messages.
pub fn resolve(
    local: &Btf,
    kernel: &KernelBtf,
    rec: &CoreRecord,
    cands: &mut Cands,
    owner: &str,
    idx: usize,
) -> Result<CoreResolution> {
    let at = |e: Error| {
        e.context(format!(
            "{owner}, CO-RE relocation #{idx} at insn #{}",
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
        return Ok(CoreResolution {
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
            Ok(CoreResolution {
                res,
                local: shown,
                target,
            })
        }
        None => {
            let res = calc_relo(rec, &spec, None).map_err(at)?;
            Ok(CoreResolution {
                res,
                local: shown,
                target: format!("no match among {} candidate(s)", list.len()),
            })
        }
    }
}

#[cfg(test)]
mod tests;
