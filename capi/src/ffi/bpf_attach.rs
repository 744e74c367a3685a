//! Attach targets. `ksym_bpf_object_resolve_btf` resolves all of an object
//! that needs the kernel's BTF (attach targets, CO-RE, typed ksyms,
//! kfuncs, `.kconfig`); each program and alias then says where it
//! attaches. A program or alias can be given its own target, or expanded
//! into one alias per kernel function or tracepoint matching a pattern
//! (docs/btf-and-attach.md).

use std::ffi::{c_char, c_int, c_uint};

use super::bpf::{ksym_bpf_object, obj_mut, obj_ref};
use super::{c_bytes, int_call, write_out};

/// ksym_bpf_attach.flags: the program is sleepable (BPF_F_SLEEPABLE).
pub const KSYM_ATTACH_SLEEPABLE: c_uint = 1;
/// ksym_bpf_attach.flags: an XDP program that handles fragments
/// (BPF_F_XDP_HAS_FRAGS).
pub const KSYM_ATTACH_XDP_FRAGS: c_uint = 2;
/// ksym_bpf_attach.flags: the section starts with `?` (`SEC("?tc")`):
/// libbpf does not load the program unless asked (its autoload is off);
/// the program type is the section's without the `?`.
pub const KSYM_ATTACH_OPTIONAL: c_uint = 4;
/// ksym_bpf_attach.flags: the kernel needs the target to load the program
/// (it loads with attach_btf_id: fentry, fexit, fmod_ret, lsm, iter,
/// tp_btf, freplace, struct_ops; or, for a multi section that names a
/// module, `fentry.multi/9p:v9fs_*`, with that module's BTF object, in
/// which the kernel reads the link's ids), so a program whose target did
/// not resolve cannot load; without this flag the target matters only
/// when attaching (kprobe, raw_tp), and the program loads whatever its
/// error says.
pub const KSYM_ATTACH_TARGET_AT_LOAD: c_uint = 8;
/// ksym_bpf_attach.flags: a return probe (kretprobe, uretprobe and their
/// `.multi` forms): attach it as one (the kprobe or uprobe PMU's
/// `retprobe` config bit, `BPF_F_KPROBE_MULTI_RETURN`, or tracefs' `r:`).
pub const KSYM_ATTACH_RETPROBE: c_uint = 16;
const _: () = assert!(
    KSYM_ATTACH_SLEEPABLE == ksym::bpf::SLEEPABLE
        && KSYM_ATTACH_XDP_FRAGS == ksym::bpf::XDP_FRAGS
        && KSYM_ATTACH_OPTIONAL == ksym::bpf::OPTIONAL
        && KSYM_ATTACH_TARGET_AT_LOAD == ksym::bpf::TARGET_AT_LOAD
        && KSYM_ATTACH_RETPROBE == ksym::bpf::RETPROBE
);

/// Where a program or alias attaches (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_attach {
    /// sizeof(struct ksym_bpf_attach), set by the caller.
    pub sz: usize,
    /// enum bpf_prog_type (0: a section libbpf does not know).
    pub prog_type: u32,
    /// enum bpf_attach_type.
    pub expected_attach_type: u32,
    /// 0 when the type needs none (or before ksym_bpf_object_resolve_btf).
    pub attach_btf_id: u32,
    /// 0 for vmlinux; -1 when the module's BTF object has no fd (BTF from files).
    pub attach_btf_obj_fd: c_int,
    /// "vfs_read", "sched_switch", ...; NULL if none. A tracepoint section
    /// (`tracepoint/sched/sched_switch`, `tp/...`) gives the event's name
    /// here and its category in tp_category.
    pub target: *const c_char,
    /// Module of the target, "vmlinux" for the core (known after resolution
    /// unless the section names one); NULL if none.
    pub module: *const c_char,
    /// Kernel address of a function target (after resolution); 0 if none.
    pub addr: u64,
    /// KSYM_ATTACH_*.
    pub flags: u32,
    /// Reserved: written zero.
    pub reserved: u32,
    /// Why the target did not resolve, whatever the program's autoload: 0
    /// when it did (or was not asked yet), else the code the call returns
    /// for a program to be loaded.
    pub error: c_int,
    /// Reserved: written zero.
    pub reserved2: u32,
    /// The message of `error` (program, section, target, near matches);
    /// NULL when `error` is 0. Valid until the program's target changes
    /// (resolve_btf, set_attach_target) or the object is freed.
    pub error_message: *const c_char,
    /// A kprobe section's offset into its function (`kprobe/func+0x10`:
    /// 0x10, read as libbpf reads it), where the probe goes (the kprobe
    /// PMU's probe_offset); 0 otherwise, and for a target set with
    /// ksym_bpf_program_set_attach_target. A `kretprobe` section with an
    /// offset is the program's error (libbpf refuses to attach it).
    pub target_offset: u64,
    /// A tracepoint section's category, known from the section alone:
    /// `tracepoint/sched/sched_switch` (or `tp/sched/sched_switch`) gives
    /// "sched", and target "sched_switch": the event is tracefs'
    /// `events/sched/sched_switch` (its `id` is the perf event config of a
    /// PERF_TYPE_TRACEPOINT event, as libbpf attaches it). NULL for other
    /// sections, and for a tracepoint section with no category
    /// (`tp/sched_switch`, which libbpf cannot attach: that program's error,
    /// KSYM_ERR_INVALID, after ksym_bpf_object_resolve_btf; it still loads).
    pub tp_category: *const c_char,
}

/// Everything that needs the kernel's BTF, for every program and alias
/// of the object, in one call: attach targets (BTF ids of fentry/fexit/
/// fmod_ret/lsm/iter/tp_btf targets, with the module BTF fd; addresses of
/// function targets from kallsyms); CO-RE relocations, as libbpf resolves
/// them (candidates by essential name in vmlinux, else in the modules),
/// each instruction once however many programs and aliases share it;
/// typed ksyms and kfuncs (BTF ids checked against the local types, module
/// BTF fds, the fd array); `.kconfig` externs (the `.kconfig` map's
/// initial value: call this before creating that map). `btf` NULL: the
/// running kernel's, opened inside the call (the object keeps what it
/// needs of it). Every part is tried; the first failure is reported
/// (KSYM_ERR_NOT_FOUND naming program, section and target, and where the
/// name is if elsewhere; KSYM_ERR_FORMAT for CO-RE records that do not fit
/// the object; KSYM_ERR_NOT_FOUND for a strong extern missing), and
/// ksym_bpf_object_relocate reports a CO-RE or extern failure again.
///
/// # Safety
/// `obj` is NULL or a live handle used by no other thread during the call;
/// `btf` is NULL or a live `ksym_btf` handle.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_resolve_btf(
    obj: *mut ksym_bpf_object,
    btf: *mut super::btf::ksym_btf,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` and `btf` as # Safety says.
        let (o, k) = unsafe { (obj_mut(obj)?, super::btf::btf_or_running(btf)?) };
        o.resolve_btf(&k)?;
        Ok(0)
    })
}

/// Where program `prog` attaches (it attaches nothing itself; set out->sz
/// first). The section-only fields (prog_type, expected_attach_type,
/// flags, the target the section names, a tracepoint's tp_category) work before
/// ksym_bpf_object_resolve_btf; BTF ids, module and address after it. A
/// section libbpf does not know gives prog_type 0 (and an error only when
/// a target is asked for: set_attach_target, expand).
///
/// A program whose target did not resolve (not in this kernel's BTF or
/// kallsyms, no target named where the kernel needs one, or a tracepoint
/// section with no category) keeps that
/// error, which fails no other program: this call returns it (the code,
/// KSYM_ERR_NOT_FOUND or KSYM_ERR_INVALID, and the thread-local message
/// naming program, section and target) when the program's autoload is
/// on; with autoload off it returns 0. Either way, and unlike other calls,
/// `out` is written, with the section-only fields, target and module as
/// named, attach_btf_id and addr 0, and out->error / out->error_message
/// set. Whether the program can still load is out->flags'
/// KSYM_ATTACH_TARGET_AT_LOAD: without it (kprobe, raw_tp, tracepoint) libbpf loads
/// it too, and only attaching fails.
///
/// # Safety
/// `obj` is NULL or a live handle; `out` is NULL or points to a writable
/// struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_attach_info(
    obj: *const ksym_bpf_object,
    prog: usize,
    out: *mut ksym_bpf_attach,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let a = unsafe { obj_ref(obj) }?.attach_info(prog)?;
        let cstr = |c: Option<&std::ffi::CStr>| c.map_or(std::ptr::null(), |c| c.as_ptr());
        let (error, error_message) = match a.error {
            Some(e) => (
                e.code(),
                a.error_text.map_or(std::ptr::null(), |m| m.as_ptr()),
            ),
            None => (0, std::ptr::null()),
        };
        let v = ksym_bpf_attach {
            sz: std::mem::size_of::<ksym_bpf_attach>(),
            prog_type: a.prog_type,
            expected_attach_type: a.expected_attach_type,
            attach_btf_id: a.attach_btf_id,
            attach_btf_obj_fd: a.attach_btf_obj_fd,
            target: cstr(a.target),
            module: cstr(a.module),
            addr: a.addr,
            flags: a.flags,
            reserved: 0,
            error,
            reserved2: 0,
            error_message,
            target_offset: a.offset,
            tp_category: cstr(a.category),
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, v, "out") }?;
        match a.failure() {
            Some(e) => Err(e.clone()),
            None => Ok(0),
        }
    })
}

/// Whether a loader loads program `prog` (libbpf's bpf_program__autoload):
/// true unless its section starts with `?` (`SEC("?tp_btf/...")`) or
/// ksym_bpf_program_set_autoload turned it off. An alias has its own;
/// aliases made by ksym_bpf_program_expand start on. false, with
/// KSYM_ERR_NOT_FOUND (or KSYM_ERR_INVALID for a NULL object) recorded,
/// when there is no such program.
///
/// # Safety
/// `obj` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_autoload(
    obj: *const ksym_bpf_object,
    prog: usize,
) -> bool {
    super::value_call(false, || {
        // SAFETY: `obj` as # Safety says.
        unsafe { obj_ref(obj) }?.autoload(prog)
    })
}

/// Sets whether a loader loads program `prog` (libbpf's
/// bpf_program__set_autoload), before or after resolve_btf and relocate.
/// A program with autoload off is neither required to resolve nor
/// reported as failing: its target error (ksym_bpf_program_attach_info)
/// is returned only while autoload is on; resolve_btf fails for a CO-RE
/// relocation, and relocate for a missing map fd or step, only when a
/// program with autoload on holds the instruction (the others are
/// relocated when they can be: ksym_bpf_program_insns says why not). The
/// bundled loader (`ksym obj --load`, `ksym trace`) loads only programs
/// with autoload on. 0, or KSYM_ERR_NOT_FOUND for no such program,
/// KSYM_ERR_INVALID for a NULL object.
///
/// # Safety
/// `obj` is NULL or a live handle used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_set_autoload(
    obj: *mut ksym_bpf_object,
    prog: usize,
    autoload: bool,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        unsafe { obj_mut(obj) }?.set_autoload(prog, autoload)?;
        Ok(0)
    })
}

/// Sets the attach target of one program or alias: "func", "module`func"
/// (or libbpf's "module:func"), or a tracepoint name for tp_btf/raw_tp,
/// resolved now in `btf` (NULL: the running kernel's). An alias lives in
/// its target's ELF section, so the section name cannot tell where an
/// alias attaches: the loader says it here (libbpf:
/// bpf_program__set_attach_target). Works before and after
/// ksym_bpf_object_resolve_btf: only this program changes (its attach
/// info follows the new target, its error goes), nothing else is resolved
/// again. KSYM_ERR_UNSUPPORTED for a program whose section has no kernel
/// target; KSYM_ERR_INVALID for a NULL or empty target; KSYM_ERR_NOT_FOUND
/// for a target that is not there (the message says when it names another
/// kind: a tracepoint given to fentry, a function to tp_btf), the program
/// then left as it was; KSYM_ERR_NOT_FOUND for no such program.
///
/// # Safety
/// `obj` is NULL or a live handle used by no other thread during the call;
/// `target` is NULL or a NUL-terminated string; `btf` is NULL or a live
/// `ksym_btf` handle.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_set_attach_target(
    obj: *mut ksym_bpf_object,
    prog: usize,
    target: *const c_char,
    btf: *mut super::btf::ksym_btf,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj`, `target` and `btf` as # Safety says.
        let (o, t) = unsafe { (obj_mut(obj)?, c_bytes(target, "target")?) };
        o.program(prog)?;
        // SAFETY: as above.
        let k = unsafe { super::btf::btf_or_running(btf) }?;
        o.set_attach_target(prog, t, &k)?;
        Ok(0)
    })
}

/// Adds an alias of `prog` for every attachable kernel function
/// (tracepoint, for tp_btf/raw_tp; LSM hook, for lsm) matching `pattern`
/// ("glob" or "modglob`glob"); returns how many (their indices follow the
/// existing programs, in address order; by name for tracepoints), 0 when
/// none match. A function is attachable when it is a text symbol of
/// kallsyms with a BTF FUNC in vmlinux or its module (fentry/fexit/
/// fmod_ret; kprobes need no BTF), listed by tracefs'
/// available_filter_functions when it can be read, and not a compiler
/// artifact (`__pfx_`, `.cold`, `.isra.0`, ...) unless the pattern names
/// one exactly. Every alias is named "<prog>/<target>" (or
/// "<prog>/<module>:<target>"), shares the program's single instruction
/// copy and has its own attach target.
///
/// A `tracepoint`/`tp` program is expanded over the running kernel's
/// tracefs events instead (/sys/kernel/tracing/events, else
/// /sys/kernel/debug/tracing/events): `pattern` is "catglob/nameglob"
/// ("syscalls/sys_enter_*"), or "nameglob" for any category; one alias per
/// event directory, by category then name, named
/// "<prog>/<category>/<name>", whose attach info gives tp_category and
/// target. One body serves events whose records it reads alike (every
/// syscalls/sys_enter_* has `__syscall_nr` at offset 8). `btf` is not
/// used for them (NULL still opens the running kernel's).
/// KSYM_ERR_NOT_FOUND when tracefs is not mounted; KSYM_ERR_INVALID for a
/// pattern with an empty category or name.
///
/// # Safety
/// `obj` is NULL or a live handle used by no other thread during the call;
/// `pattern` is NULL or a NUL-terminated string; `btf` is NULL or a live
/// `ksym_btf` handle.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_expand(
    obj: *mut ksym_bpf_object,
    prog: usize,
    pattern: *const c_char,
    btf: *mut super::btf::ksym_btf,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj`, `pattern` and `btf` as # Safety says.
        let (o, p) = unsafe { (obj_mut(obj)?, c_bytes(pattern, "pattern")?) };
        o.program(prog)?;
        // SAFETY: as above.
        let k = unsafe { super::btf::btf_or_running(btf) }?;
        let n = o.expand(prog, p, &k)?;
        Ok(c_int::try_from(n).unwrap_or(c_int::MAX))
    })
}
