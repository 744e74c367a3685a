//! The kernel's multi-attach (Linux 7.3): one program on many kernel
//! functions through `tracing_multi` links, and which way the running
//! kernel attaches one body to many functions (ksym_bpf_program_way:
//! multi links, or aliases from ksym_bpf_program_expand). A loader lists
//! the functions with ksym_bpf_program_multi_attach, then for each link
//! (one per BTF object) loads the program with the link's
//! attach_btf_obj_fd and creates a BPF_LINK_CREATE link with its attach
//! type, ids, cookies and count (docs/btf-and-attach.md).

use std::ffi::{c_char, c_int, c_uint};

use super::bpf::{ksym_bpf_object, obj_mut, obj_ref};
use super::{c_bytes, int_call, write_out};

/// ksym_bpf_attach.flags: a multi program (`fentry.multi`, `fexit.multi`,
/// `fsession.multi` and their `.s` forms, or a `fentry`/`fexit`/
/// `fsession` program given functions with
/// ksym_bpf_program_multi_attach): it loads with no attach target
/// (attach_btf_id 0; the kernel gives it its `bpf_multi_func` prototype)
/// and attaches through `tracing_multi` links (ksym_bpf_program_multi_link).
/// With KSYM_ATTACH_TARGET_AT_LOAD only when its section names a module:
/// it loads with that module's BTF object.
pub const KSYM_ATTACH_MULTI: c_uint = 32;
const _: () = assert!(KSYM_ATTACH_MULTI == ksym::bpf::MULTI);

/// ksym_bpf_program_way: one program, one `tracing_multi` link per BTF
/// object (the kernel loads a multi program of this kind: Linux 7.3).
pub const KSYM_WAY_MULTI: c_int = 1;
/// ksym_bpf_program_way: the body loaded once per function from its one
/// relocated copy, one link each (aliases: ksym_bpf_program_expand).
pub const KSYM_WAY_ALIASES: c_int = 2;

/// One `tracing_multi` link of a multi program (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_multi_link {
    /// sizeof(struct ksym_bpf_multi_link), set by the caller.
    pub sz: usize,
    /// expected_attach_type at BPF_PROG_LOAD and attach_type at
    /// BPF_LINK_CREATE (BPF_TRACE_FENTRY_MULTI, _FEXIT_MULTI,
    /// _FSESSION_MULTI).
    pub attach_type: u32,
    /// attach_btf_obj_fd at BPF_PROG_LOAD: 0 for vmlinux, the module's BTF
    /// object fd (owned by the ksym_btf handle), -1 when it has none (BTF
    /// from files). The kernel reads the link's ids in this object.
    pub attach_btf_obj_fd: c_int,
    /// "vmlinux" or the module.
    pub module: *const c_char,
    /// The kernel's id of the BTF object (0 for vmlinux, or unknown).
    pub btf_obj_id: u32,
    /// Reserved: written zero.
    pub reserved: u32,
    /// How many functions: link_create.tracing_multi.cnt.
    pub count: usize,
    /// Their BTF ids: link_create.tracing_multi.ids.
    pub btf_ids: *const u32,
    /// One cookie per function, its index over the program's functions
    /// (ksym_bpf_program_multi_function): link_create.tracing_multi.cookies.
    pub cookies: *const u64,
    /// Their kallsyms addresses (what bpf_get_func_ip() returns).
    pub addrs: *const u64,
}

/// The function a multi program's cookie names (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_multi_function {
    /// sizeof(struct ksym_bpf_multi_function), set by the caller.
    pub sz: usize,
    /// The function's name.
    pub name: *const c_char,
    /// "vmlinux" or its module.
    pub module: *const c_char,
    /// Its kallsyms address.
    pub addr: u64,
    /// Its BTF id in its object.
    pub btf_id: u32,
    /// Reserved: written zero.
    pub reserved: u32,
    /// The link that attaches it (ksym_bpf_program_multi_link).
    pub link: usize,
}

/// Which way the running kernel attaches program `prog`'s one body to
/// many functions, probed as libbpf probes a feature (a two-instruction
/// program is loaded), never by version: KSYM_WAY_MULTI when it loads a
/// multi program of the program's kind (a `.multi` section, or the multi
/// form of `fentry`, `fexit`, `fsession`); else KSYM_WAY_ALIASES for a
/// `fentry`, `fexit` or `fsession` program when it loads one on a kernel
/// function of `btf` (NULL: the running kernel's). KSYM_ERR_UNSUPPORTED
/// when neither, with the errno of each probe in the message: a `.multi`
/// section on a kernel without multi links (every kernel before 7.3), a
/// kernel that refuses trampolines, a section with no multi form
/// (kprobe, lsm, ...). KSYM_ERR_NOT_FOUND for no such program. Whether
/// the verifier takes a plain body with the multi prototype (no typed
/// arguments: `bpf_multi_func` has none) is the load's answer: load it as
/// multi, and on refusal expand it into aliases.
///
/// # Safety
/// `obj` is NULL or a live handle; `btf` is NULL or a live `ksym_btf`
/// handle.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_way(
    obj: *const ksym_bpf_object,
    prog: usize,
    btf: *mut super::btf::ksym_btf,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` and `btf` as # Safety says.
        let (o, k) = unsafe { (obj_ref(obj)?, super::btf::btf_or_running(btf)?) };
        Ok(match o.way(prog, &k)? {
            ksym::bpf::Way::Multi => KSYM_WAY_MULTI,
            ksym::bpf::Way::Aliases => KSYM_WAY_ALIASES,
        })
    })
}

/// Lists the kernel functions program `prog` attaches to through
/// `tracing_multi` links: those `pattern` matches ("glob" or
/// "modglob`glob", libbpf's "module:glob" too; NULL: the section's,
/// `fentry.multi/<glob>`), chosen as ksym_bpf_program_expand chooses
/// fentry targets: text symbols of kallsyms with a BTF FUNC, listed by
/// tracefs' available_filter_functions where it can be read, whose
/// prototype the trampoline takes, no compiler artifact. So `__init` and
/// notrace functions, which libbpf's glob takes from BTF and the kernel
/// refuses (failing the whole link with ENOENT), are left out. A
/// `fentry`, `fexit` or `fsession` program becomes a multi program
/// (KSYM_ATTACH_MULTI; its target goes). Returns how many links, one per
/// BTF object (vmlinux first, then each module): the kernel reads a
/// link's BTF ids in the object the program was loaded with, so each is
/// one load and one link. 0, with nothing changed, when nothing matches.
/// KSYM_ERR_UNSUPPORTED for a program with no multi form;
/// KSYM_ERR_INVALID for an empty pattern, or NULL when the section names
/// none.
///
/// # Safety
/// `obj` is NULL or a live handle used by no other thread during the call;
/// `pattern` is NULL or a NUL-terminated string; `btf` is NULL or a live
/// `ksym_btf` handle.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_multi_attach(
    obj: *mut ksym_bpf_object,
    prog: usize,
    pattern: *const c_char,
    btf: *mut super::btf::ksym_btf,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj`, `pattern` and `btf` as # Safety says.
        let o = unsafe { obj_mut(obj) }?;
        let p = if pattern.is_null() {
            None
        } else {
            // SAFETY: not NULL, NUL-terminated (# Safety).
            Some(unsafe { c_bytes(pattern, "pattern") }?)
        };
        o.program(prog)?;
        // SAFETY: as above.
        let k = unsafe { super::btf::btf_or_running(btf) }?;
        let n = o.multi_attach(prog, p, &k)?;
        Ok(c_int::try_from(n).unwrap_or(c_int::MAX))
    })
}

/// Link `link` (0 to the count ksym_bpf_program_multi_attach returned) of
/// multi program `prog`: what BPF_PROG_LOAD and BPF_LINK_CREATE need. The
/// arrays live until the program's functions are listed again or the
/// object is freed. KSYM_ERR_NOT_FOUND for no such program or link, or
/// when no functions were listed.
///
/// # Safety
/// `obj` is NULL or a live handle; `out` is NULL or points to a writable
/// struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_multi_link(
    obj: *const ksym_bpf_object,
    prog: usize,
    link: usize,
    out: *mut ksym_bpf_multi_link,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let l = unsafe { obj_ref(obj) }?.multi_link(prog, link)?;
        let v = ksym_bpf_multi_link {
            sz: std::mem::size_of::<ksym_bpf_multi_link>(),
            attach_type: l.attach_type,
            attach_btf_obj_fd: l.attach_btf_obj_fd,
            module: l.module.as_ptr(),
            btf_obj_id: l.btf_obj_id,
            reserved: 0,
            count: l.btf_ids.len(),
            btf_ids: l.btf_ids.as_ptr(),
            cookies: l.cookies.as_ptr(),
            addrs: l.addrs.as_ptr(),
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, v, "out") }?;
        Ok(0)
    })
}

/// The function cookie `cookie` names in multi program `prog` (what
/// bpf_get_attach_cookie() returns in it). KSYM_ERR_NOT_FOUND for no such
/// program or cookie, or when no functions were listed.
///
/// # Safety
/// `obj` is NULL or a live handle; `out` is NULL or points to a writable
/// struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_multi_function(
    obj: *const ksym_bpf_object,
    prog: usize,
    cookie: u64,
    out: *mut ksym_bpf_multi_function,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let f = unsafe { obj_ref(obj) }?.multi_function(prog, cookie)?;
        let v = ksym_bpf_multi_function {
            sz: std::mem::size_of::<ksym_bpf_multi_function>(),
            name: f.name.as_ptr(),
            module: f.module.as_ptr(),
            addr: f.addr,
            btf_id: f.btf_id,
            reserved: 0,
            link: f.link,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, v, "out") }?;
        Ok(0)
    })
}
