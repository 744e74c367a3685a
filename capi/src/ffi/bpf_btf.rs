//! BTF for the running kernel: what BTF it takes (KSYM_BTF_FEAT_*, probed
//! as libbpf 1.7 probes it) and an object's loadable BTF rewritten for
//! those features, as libbpf rewrites it before BPF_BTF_LOAD. A kernel
//! refuses a whole BTF blob for one kind it does not know (5.10 has no
//! FLOAT, DECL_TAG, TYPE_TAG or ENUM64): a loader gives
//! ksym_bpf_object_btf_for(obj, features) to BPF_BTF_LOAD, with the
//! features of ksym_btf_probe_features(), and passes func_info and
//! line_info to BPF_PROG_LOAD only when they include KSYM_BTF_FEAT_FUNC.
//! ksym_bpf_object_btf() stays the BTF of a kernel that has every kind.

use std::ffi::{c_int, c_uint, c_void};

use super::bpf::{handle_ref, ksym_bpf_object};
use super::{check_flags, int_call, non_null, value_call};
use ksym::bpf::BtfFeatures;

/// BTF at all (BPF_BTF_LOAD of an INT, 4.18). Without it the kernel takes
/// no BTF: load maps and programs without, as libbpf does.
pub const KSYM_BTF_FEAT_BTF: c_uint = 1;
/// FUNC and FUNC_PROTO (5.0); func_info and line_info with them.
pub const KSYM_BTF_FEAT_FUNC: c_uint = 2;
/// FUNC of global linkage (5.6).
pub const KSYM_BTF_FEAT_GLOBAL_FUNC: c_uint = 4;
/// VAR and DATASEC (5.2).
pub const KSYM_BTF_FEAT_DATASEC: c_uint = 8;
/// FLOAT (5.13).
pub const KSYM_BTF_FEAT_FLOAT: c_uint = 16;
/// DECL_TAG (5.16).
pub const KSYM_BTF_FEAT_DECL_TAG: c_uint = 32;
/// TYPE_TAG (5.17).
pub const KSYM_BTF_FEAT_TYPE_TAG: c_uint = 64;
/// ENUM64 and signed ENUMs (6.0).
pub const KSYM_BTF_FEAT_ENUM64: c_uint = 128;
/// DATASEC names that start with '?' (6.10).
pub const KSYM_BTF_FEAT_QMARK_DATASEC: c_uint = 256;
/// Every feature above: a kernel whose BTF needs no rewriting.
pub const KSYM_BTF_FEAT_ALL: c_uint = 511;

const _: () = {
    assert!(KSYM_BTF_FEAT_BTF == BtfFeatures::BTF.bits());
    assert!(KSYM_BTF_FEAT_FUNC == BtfFeatures::FUNC.bits());
    assert!(KSYM_BTF_FEAT_GLOBAL_FUNC == BtfFeatures::GLOBAL_FUNC.bits());
    assert!(KSYM_BTF_FEAT_DATASEC == BtfFeatures::DATASEC.bits());
    assert!(KSYM_BTF_FEAT_FLOAT == BtfFeatures::FLOAT.bits());
    assert!(KSYM_BTF_FEAT_DECL_TAG == BtfFeatures::DECL_TAG.bits());
    assert!(KSYM_BTF_FEAT_TYPE_TAG == BtfFeatures::TYPE_TAG.bits());
    assert!(KSYM_BTF_FEAT_ENUM64 == BtfFeatures::ENUM64.bits());
    assert!(KSYM_BTF_FEAT_QMARK_DATASEC == BtfFeatures::QMARK_DATASEC.bits());
    assert!(KSYM_BTF_FEAT_ALL == BtfFeatures::ALL.bits());
};

/// Writes the running kernel's BTF features (KSYM_BTF_FEAT_*) to
/// `*features`: libbpf 1.7's probes, each a tiny BTF blob given to
/// BPF_BTF_LOAD. Probed once per process (later calls cost nothing); safe
/// from any thread. 0 for a kernel that takes no BTF at all. Needs
/// CAP_BPF (or root): without, the kernel's -EPERM (nothing is written or
/// kept, where libbpf would take every feature for missing).
///
/// # Safety
/// `features` is NULL or points to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn ksym_btf_probe_features(features: *mut u32) -> c_int {
    int_call(|| {
        non_null(features, "features")?;
        let f = BtfFeatures::probe()?;
        // SAFETY: not NULL, so writable (# Safety).
        unsafe { features.write(f.bits()) };
        Ok(0)
    })
}

/// The object's loadable BTF (ksym_bpf_object_btf) as a kernel with only
/// `features` (KSYM_BTF_FEAT_*) takes it, what libbpf 1.7 gives
/// BPF_BTF_LOAD there: VAR and DECL_TAG become 1-byte INTs, DATASEC a
/// STRUCT (no DATASEC), FUNC_PROTO an ENUM and FUNC a TYPEDEF (no FUNC),
/// global FUNCs static, FLOAT an empty STRUCT, TYPE_TAG a CONST, ENUM64 a
/// UNION of one added INT (and ENUMs unsigned), a leading '?' of a DATASEC
/// name '_', each where the feature is missing. Every type keeps its id:
/// map key and value type ids and func_info stay valid. With every kind
/// (KSYM_BTF_FEAT_ALL), the very bytes of ksym_bpf_object_btf. The bytes
/// live as long as the object. NULL with KSYM_ERR_NOT_FOUND without
/// .BTF, KSYM_ERR_INVALID for an unknown bit, KSYM_ERR_UNSUPPORTED when
/// `features` lacks KSYM_BTF_FEAT_BTF (such a kernel takes no BTF: load
/// maps and programs without it, as libbpf does).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `size` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_btf_for(
    obj: *const ksym_bpf_object,
    features: u32,
    size: *mut usize,
) -> *const c_void {
    value_call(std::ptr::null(), || {
        // SAFETY: `obj` as # Safety says.
        let h = unsafe { handle_ref(obj) }?;
        check_flags(features, KSYM_BTF_FEAT_ALL, "features")?;
        let f = BtfFeatures::from_bits(features).unwrap_or(BtfFeatures::ALL);
        let (at, len) = h.btf_for(f)?;
        non_null(size, "size")?;
        // SAFETY: not NULL, so writable (# Safety).
        unsafe { size.write(len) };
        Ok(at.cast::<c_void>())
    })
}
