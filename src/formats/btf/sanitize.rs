//! BTF rewritten for a kernel that lacks some of its kinds, as libbpf 1.7
//! rewrites an object's BTF before `BPF_BTF_LOAD` (libbpf.c:
//! `bpf_object__sanitize_btf`): each type the kernel would refuse becomes
//! one it takes, in place, so that every type keeps its id (map key and
//! value types, func_info, CO-RE and BTF ids in instructions stay right).
//! At most one type is added, at the end: the INT that ENUM64 members
//! point to.

use super::{BtfFeatures, BtfWriter, Extra, Type};
use super::{KIND_CONST, KIND_DATASEC, KIND_DECL_TAG, KIND_ENUM, KIND_ENUM64, KIND_FLOAT};
use super::{KIND_FUNC, KIND_FUNC_PROTO, KIND_INT, KIND_STRUCT, KIND_TYPEDEF, KIND_TYPE_TAG};
use super::{KIND_UNION, KIND_VAR};

/// Whether BTF for a kernel with `f` needs rewriting at all: libbpf's
/// `btf_needs_sanitization`, every kind feature present.
pub fn needs_sanitizing(f: BtfFeatures) -> bool {
    !f.contains(BtfFeatures::ALL.without(BtfFeatures::BTF))
}

/// Rewrites `b` for a kernel that has only the features `f`, type by
/// type in id order, the first rule that applies:
/// - VAR (no DATASEC) and DECL_TAG (no DECL_TAG): a 1-byte INT of 8 bits,
///   its name kept;
/// - DATASEC (no DATASEC): a STRUCT of the same size, its name's '.' and
///   '?' made '_' (in the string table), each variable a member named as
///   the VAR, of the VAR's type id, at its offset in bits;
/// - DATASEC named "?..." (no '?' DATASEC names): the '?' made '_';
/// - FUNC_PROTO (no FUNC): an ENUM of 4 bytes, each parameter a value
///   (name, type id); FUNC (no FUNC): a TYPEDEF of its prototype;
/// - FUNC (no global FUNC): static;
/// - FLOAT (no FLOAT): an anonymous STRUCT of its size, no members;
/// - TYPE_TAG (no TYPE_TAG): an anonymous CONST of its type;
/// - ENUM (no ENUM64): its kind flag (signed) cleared;
/// - ENUM64 (no ENUM64): a UNION of its size whose members, named as the
///   values, are all at offset 0 of one added type, the INT
///   "enum64_placeholder" of 1 byte.
pub fn sanitize(b: &mut BtfWriter, f: BtfFeatures) {
    let has = |x| f.contains(x);
    let (datasec, func, enum64) = (
        has(BtfFeatures::DATASEC),
        has(BtfFeatures::FUNC),
        has(BtfFeatures::ENUM64),
    );
    let mut placeholder: Option<u32> = None;
    // Types are added at the end as it goes (the placeholder): by index.
    let mut id = 1;
    while id < b.types.len() {
        let t = &b.types[id];
        let (kind, vlen) = (t.kind(), t.vlen());
        if (!datasec && kind == KIND_VAR) || (!has(BtfFeatures::DECL_TAG) && kind == KIND_DECL_TAG)
        {
            let t = &mut b.types[id];
            t.info = KIND_INT << 24;
            t.size_type = 1;
            t.extra = Extra::Int(8);
        } else if !datasec && kind == KIND_DATASEC {
            datasec_to_struct(b, id);
        } else if !has(BtfFeatures::QMARK_DATASEC) && kind == KIND_DATASEC {
            let at = t.name_off as usize;
            if let Some(c) = b.strings.get_mut(at).filter(|c| **c == b'?') {
                *c = b'_';
            }
        } else if !func && kind == KIND_FUNC_PROTO {
            let t = &mut b.types[id];
            t.info = (KIND_ENUM << 24) | vlen;
            t.size_type = 4;
            if let Extra::Params(ps) = std::mem::replace(&mut t.extra, Extra::None) {
                t.extra = Extra::Enum(ps);
            }
        } else if !func && kind == KIND_FUNC {
            b.types[id].info = KIND_TYPEDEF << 24;
        } else if !has(BtfFeatures::GLOBAL_FUNC) && kind == KIND_FUNC {
            b.types[id].info = KIND_FUNC << 24;
        } else if !has(BtfFeatures::FLOAT) && kind == KIND_FLOAT {
            let t = &mut b.types[id];
            t.name_off = 0;
            t.info = KIND_STRUCT << 24;
            t.extra = Extra::Members(Vec::new());
        } else if !has(BtfFeatures::TYPE_TAG) && kind == KIND_TYPE_TAG {
            let t = &mut b.types[id];
            t.name_off = 0;
            t.info = KIND_CONST << 24;
        } else if !enum64 && kind == KIND_ENUM {
            b.types[id].info = (KIND_ENUM << 24) | vlen;
        } else if !enum64 && kind == KIND_ENUM64 {
            let p = *placeholder.get_or_insert_with(|| {
                let name_off = b.find_or_add_string(b"enum64_placeholder");
                b.add_type(Type {
                    name_off,
                    info: KIND_INT << 24,
                    size_type: 1,
                    // encoding 0, offset 0, 8 bits
                    extra: Extra::Int(8),
                })
            });
            let t = &mut b.types[id];
            t.info = (KIND_UNION << 24) | vlen;
            if let Extra::Enum64(vs) = std::mem::replace(&mut t.extra, Extra::None) {
                t.extra = Extra::Members(vs.iter().map(|v| [v[0], p, 0]).collect());
            }
        }
        id += 1;
    }
}

/// DATASEC `id` as a STRUCT: see [`sanitize`].
fn datasec_to_struct(b: &mut BtfWriter, id: usize) {
    let at = b.types[id].name_off as usize;
    if let Some(rest) = b.strings.get_mut(at..) {
        for c in rest.iter_mut().take_while(|c| **c != 0) {
            if *c == b'.' || *c == b'?' {
                *c = b'_';
            }
        }
    }
    let Extra::Datasec(vars) = std::mem::replace(&mut b.types[id].extra, Extra::None) else {
        return;
    };
    let members = vars
        .iter()
        .map(|v| {
            let name = b.types.get(v[0] as usize).map_or(0, |t| t.name_off);
            [name, v[0], v[1].wrapping_mul(8)]
        })
        .collect::<Vec<_>>();
    let t = &mut b.types[id];
    t.info = (KIND_STRUCT << 24) | members.len() as u32;
    t.extra = Extra::Members(members);
}
