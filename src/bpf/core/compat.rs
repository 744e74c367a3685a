//! libbpf's compatibility rules between a local and a kernel type: of
//! fields (`bpf_core_fields_are_compat`), of types (`types_are_compat`,
//! also for typed ksyms and kfunc prototypes), and TYPE_MATCHES
//! (`bpf_core_types_match`).

use super::{bad, is_any_enum, is_composite, kind_compat, skip};
use crate::btf::index::essential_len;
use crate::error::Result;
use crate::formats::btf::{
    self as raw, Btf, INT_SIGNED, KIND_ARRAY, KIND_ENUM, KIND_ENUM64, KIND_FLOAT, KIND_FUNC_PROTO,
    KIND_FWD, KIND_INT, KIND_PTR, KIND_STRUCT, KIND_UNION,
};

/// `bpf_core_fields_are_compat`.
pub(super) fn fields_are_compat(lb: &Btf, lid: u32, tb: &Btf, tid: u32) -> Result<bool> {
    let (mut lid, mut tid) = (lid, tid);
    for _ in 0..raw::MAX_CHAIN {
        let (lt, l2) = skip(lb, lid)?;
        let (tt, t2) = skip(tb, tid)?;
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
        let (lt, l2) = skip(lb, lid)?;
        let (tt, t2) = skip(tb, tid)?;
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
                    let (_, lpid) = skip(lb, lp)?;
                    let (_, tpid) = skip(tb, tp)?;
                    if !types_are_compat_level(lb, lpid, tb, tpid, level - 1)? {
                        return Ok(false);
                    }
                }
                lid = skip(lb, lt.type_id())?.1;
                tid = skip(tb, tt.type_id())?.1;
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
pub(super) fn types_match(
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
        let (lt, l2) = skip(lb, lid)?;
        let (tt, t2) = skip(tb, tid)?;
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
