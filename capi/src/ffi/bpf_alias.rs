//! Per-alias constants: one body shared by a program and its aliases, and
//! in each copy a loader hands to BPF_PROG_LOAD the values of that one
//! program or alias. An object marks the immediates with an ld_imm64 of a
//! reserved untyped extern, `extern const void ksym_alias_value __ksym
//! __weak;` (the alias's value: its program index, or what
//! ksym_bpf_program_set_alias_value gave it) or `ksym_alias_addr` (the
//! kernel address of the function it attaches to), read as
//! `(__u64)&ksym_alias_value`. The shared copy (ksym_bpf_program_insns)
//! holds 0 there, as libbpf gives a weak extern it cannot find; a loader
//! loads ksym_bpf_program_alias_insns instead. This is how one body knows
//! its function on kernels without attach cookies or bpf_get_func_ip
//! (docs/bpf-objects.md, "Per-alias constants").

use std::ffi::c_int;

use super::bpf::{ksym_bpf_insn, ksym_bpf_object, obj_mut, obj_ref};
use super::{int_call, non_null};

/// Sets the `ksym_alias_value` of program or alias `prog`: what its copy
/// from ksym_bpf_program_alias_insns loads. Until it is set, a program's
/// value is its index in the object. KSYM_ERR_NOT_FOUND for no such
/// program.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_set_alias_value(
    obj: *mut ksym_bpf_object,
    prog: usize,
    value: u64,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        unsafe { obj_mut(obj) }?.set_alias_value(prog, value)?;
        Ok(0)
    })
}

/// After relocate: writes up to `cap` of the final instructions of program
/// or alias `prog` into `buf`, with its own per-alias constants written
/// (`ksym_alias_value`, `ksym_alias_addr`), and returns how many it has,
/// which may exceed `cap` (call again with a larger buffer). `buf` may be
/// NULL when `cap` is 0. A program that loads no per-alias constant gets
/// the very instructions of ksym_bpf_program_insns. Errors: those of
/// ksym_bpf_program_insns; KSYM_ERR_NOT_FOUND, naming the program, when it
/// loads `ksym_alias_addr` and has no function address (its target did
/// not resolve or is not a kernel function, or kallsyms hides addresses).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `buf` is NULL or points to `cap` writable `struct ksym_bpf_insn`.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_alias_insns(
    obj: *const ksym_bpf_object,
    prog: usize,
    buf: *mut ksym_bpf_insn,
    cap: usize,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let insns = unsafe { obj_ref(obj) }?.alias_insns(prog)?;
        if cap > 0 {
            non_null(buf, "buf")?;
        }
        let n = insns.len().min(cap);
        // SAFETY: not NULL when n > 0, so `cap` >= n writable elements
        // (# Safety); the layouts are the same (checked in bpf.rs).
        unsafe { std::ptr::copy_nonoverlapping(insns.as_ptr().cast::<ksym_bpf_insn>(), buf, n) };
        Ok(c_int::try_from(insns.len()).unwrap_or(c_int::MAX))
    })
}
