//! Kernel BTF: vmlinux's BTF and the modules', checked once (or mapped from
//! the boot's snapshot) and indexed by name. Types by `name`,
//! `module`name` or `vmlinux`name`, with the kernel's BTF object ids and
//! fds. A `ksym_btf` is what attach targets, CO-RE, typed ksyms and
//! kfuncs are resolved against; any number of threads and objects may
//! share one (docs/btf-and-attach.md).

use std::ffi::{c_char, c_int, c_uint};
use std::sync::Arc;

use super::{
    c_bytes, c_path, check_flags, check_reserved, int_call, non_null, ptr_call, read_opts,
};
use ksym::Result;
use ksym::{BtfOptions as Options, KernelBtf, SnapshotOptions};

/// Options of `ksym_btf_open`. Declare with `KSYM_OPTS(ksym_btf_opts, opts,
/// ...)`; NULL means the running kernel's.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_btf_opts {
    /// sizeof(struct ksym_btf_opts), set by KSYM_OPTS.
    pub sz: usize,
    /// NULL: /sys/kernel/btf/vmlinux; raw BTF or an ELF with .BTF.
    pub vmlinux_btf_path: *const c_char,
    /// NULL: /sys/kernel/btf; "": no module BTF. Files named by module.
    pub module_btf_dir: *const c_char,
    /// NULL: tracefs available_filter_functions(_addrs) (an unreadable
    /// tracefs is no error: see ksym_btf_stats); "": do not check.
    pub filter_functions_path: *const c_char,
    /// NULL: /proc/config.gz, else /boot/config-$(uname -r); "": none.
    pub kconfig_path: *const c_char,
    /// KSYM_BTF_* flags (KSYM_BTF_NO_SNAPSHOT).
    pub flags: c_uint,
    /// Reserved: must be zero (KSYM_OPTS makes it so).
    pub reserved: c_uint,
    /// NULL: the running kernel's symbols (/proc/kallsyms); kallsyms text
    /// for the addresses of function targets.
    pub kallsyms_path: *const c_char,
    /// Where the snapshot of vmlinux's checked and indexed BTF lives (NULL:
    /// /run/ksym; the same ownership and permission rules apply to it).
    /// The running kernel's BTF gets one in /run/ksym; a vmlinux_btf_path
    /// only in a snapshot_dir named here.
    pub snapshot_dir: *const c_char,
    /// The release of the kernel the BTF is of ("6.1.0-13-amd64"; NULL:
    /// the running kernel's, `uname -r`): its BPF trampoline's rules are
    /// what ksym_bpf_program_expand leaves out for fentry, fexit and
    /// fmod_ret (more than 6 argument registers before 6.6 on x86-64,
    /// structs by value before 6.1...). Set it with another kernel's
    /// vmlinux_btf_path; a release that does not start with a version
    /// leaves nothing out. Nothing else reads it (name that kernel's
    /// config in kconfig_path).
    pub kernel_release: *const c_char,
}

impl Default for ksym_btf_opts {
    fn default() -> Self {
        ksym_btf_opts {
            sz: std::mem::size_of::<Self>(),
            vmlinux_btf_path: std::ptr::null(),
            module_btf_dir: std::ptr::null(),
            filter_functions_path: std::ptr::null(),
            kconfig_path: std::ptr::null(),
            flags: 0,
            reserved: 0,
            kallsyms_path: std::ptr::null(),
            snapshot_dir: std::ptr::null(),
            kernel_release: std::ptr::null(),
        }
    }
}

/// The kernel's BTF (opaque): vmlinux's and the modules'. Internally
/// synchronised: any number of threads and objects may share one. The
/// module BTF fds it hands out (ksym_btf_type.obj_fd,
/// ksym_bpf_attach.attach_btf_obj_fd) stay open until it is freed and no
/// object resolved against it is left.
pub struct ksym_btf {
    pub(crate) inner: Arc<KernelBtf>,
}

/// A BTF type (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_btf_type {
    /// sizeof(struct ksym_btf_type), set by the caller.
    pub sz: usize,
    /// Id in its BTF (module ids continue after vmlinux's, as in the kernel).
    pub type_id: u32,
    /// Kernel BTF object id; 0 for vmlinux or when not known (files).
    pub obj_id: u32,
    /// Fd of that BTF object for BPF_PROG_LOAD (0 for vmlinux; -1 when not available).
    pub obj_fd: c_int,
    /// BTF_KIND_*.
    pub kind: u32,
    /// Borrowed from the ksym_btf handle.
    pub name: *const c_char,
    /// "vmlinux" or the module; borrowed from the handle.
    pub module: *const c_char,
}

/// Facts about a ksym_btf (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ksym_btf_stats {
    /// sizeof(struct ksym_btf_stats), set by the caller.
    pub sz: usize,
    /// Types in vmlinux's BTF.
    pub vmlinux_types: u32,
    /// KSYM_BTF_STATS_* bits.
    pub flags: u32,
    /// Modules with BTF, and how many of them were read so far.
    pub modules: usize,
    pub modules_read: usize,
    /// Bytes of memory held by the BTF read so far.
    pub memory_bytes: usize,
    /// Functions that ksym_bpf_program_expand (fentry, fexit, fmod_ret)
    /// left out so far with this handle because the running kernel's BPF
    /// trampoline cannot take their prototype (too many arguments for its
    /// registers, a struct of more than 16 bytes by value, a struct
    /// return, variadic: docs/btf-and-attach.md). Added in 0.3.0: a
    /// caller whose sz ends before it does not get it.
    pub trampoline_refused: usize,
}

/// ksym_btf_stats.flags: the filter functions were read (fentry targets
/// are checked against them).
pub const KSYM_BTF_STATS_FILTER_FUNCTIONS: c_uint = 1;
/// ksym_btf_stats.flags: they came with addresses (the `_addrs` file).
pub const KSYM_BTF_STATS_FILTER_ADDRS: c_uint = 2;
/// ksym_btf_stats.flags: tracefs could not be read (not mounted, or
/// refused): targets rely on BTF and kallsyms alone.
pub const KSYM_BTF_STATS_FILTER_UNAVAILABLE: c_uint = 4;
/// ksym_btf_stats.flags: the kernel's BTF object ids could be listed.
pub const KSYM_BTF_STATS_OBJECT_IDS: c_uint = 8;
/// ksym_btf_stats.flags: vmlinux's BTF was checked and indexed by an
/// earlier process of this boot: its snapshot was used.
pub const KSYM_BTF_STATS_SNAPSHOT: c_uint = 16;
/// ksym_btf_stats.flags: this open wrote that snapshot.
pub const KSYM_BTF_STATS_SNAPSHOT_WRITTEN: c_uint = 32;

/// ksym_btf_opts.flags: neither read nor write a snapshot of vmlinux's
/// checked and indexed BTF.
pub const KSYM_BTF_NO_SNAPSHOT: c_uint = 1;
/// Every KSYM_BTF_* flag of ksym_btf_opts.
pub const KSYM_BTF_FLAGS_ALL: c_uint = KSYM_BTF_NO_SNAPSHOT;

/// The kernel BTF behind a handle, or KSYM_ERR_INVALID for NULL.
///
/// # Safety
/// `b` is NULL or a live handle from `ksym_btf_open` that lives for `'a`.
pub(crate) unsafe fn btf_ref<'a>(b: *const ksym_btf) -> Result<&'a Arc<KernelBtf>> {
    non_null(b, "btf")?;
    // SAFETY: not NULL, so a live handle (# Safety).
    Ok(unsafe { &(*b).inner })
}

/// `btf`, or the running kernel's BTF opened now when NULL.
///
/// # Safety
/// As [`btf_ref`] for a non-NULL `btf`.
pub(crate) unsafe fn btf_or_running(btf: *const ksym_btf) -> Result<Arc<KernelBtf>> {
    if btf.is_null() {
        return Ok(Arc::new(KernelBtf::open(&Options::default())?));
    }
    // SAFETY: not NULL (# Safety).
    Ok(unsafe { btf_ref(btf) }?.clone())
}

/// Opens the kernel's BTF: vmlinux's is read now; each module's when first
/// needed. NULL on failure: KSYM_ERR_NOT_FOUND when there is no BTF (the
/// message says what to pass), KSYM_ERR_FORMAT for malformed BTF.
///
/// # Safety
/// `opts` is NULL or points to a `struct ksym_btf_opts` of at least
/// `opts->sz` bytes whose strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ksym_btf_open(opts: *const ksym_btf_opts) -> *mut ksym_btf {
    ptr_call(|| {
        // SAFETY: `opts` as # Safety says.
        let o = unsafe { read_opts(opts, "ksym_btf_opts") }?;
        check_flags(o.flags, KSYM_BTF_FLAGS_ALL, "ksym_btf_opts.flags")?;
        check_reserved(o.reserved, "ksym_btf_opts.reserved")?;
        // SAFETY: the strings of the caller's struct (# Safety).
        let options = unsafe {
            Options {
                vmlinux_btf_path: c_path(o.vmlinux_btf_path),
                module_btf_dir: c_path(o.module_btf_dir),
                filter_functions_path: c_path(o.filter_functions_path),
                kconfig_path: c_path(o.kconfig_path),
                kallsyms_path: c_path(o.kallsyms_path),
                snapshot: SnapshotOptions {
                    no_snapshot: o.flags & KSYM_BTF_NO_SNAPSHOT != 0,
                    snapshot_dir: c_path(o.snapshot_dir),
                    boot_id_path: None,
                },
            }
        };
        let mut btf = KernelBtf::open(&options)?;
        if !o.kernel_release.is_null() {
            // SAFETY: a NUL-terminated string of the caller's (# Safety).
            btf = btf.with_kernel_release(unsafe { c_bytes(o.kernel_release, "kernel_release") }?);
        }
        Ok(Box::into_raw(Box::new(ksym_btf {
            inner: Arc::new(btf),
        })))
    })
}

/// Frees a ksym_btf (NULL is a no-op). Objects resolved against it keep
/// what they need (the module BTF fds) until they are freed.
///
/// # Safety
/// `btf` is NULL or a handle from `ksym_btf_open`, not freed already; it
/// is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ksym_btf_free(btf: *mut ksym_btf) {
    if !btf.is_null() {
        // SAFETY: a handle not freed already (# Safety).
        drop(unsafe { Box::from_raw(btf) });
    }
}

/// Finds a type: query "name", "module`name" or "vmlinux`name" (BTF names
/// may hold spaces: "unsigned int"); kind: BTF_KIND_* or 0 for any.
/// "name" is vmlinux's if it has one (libbpf's order), else the one
/// module's that has it (KSYM_ERR_AMBIGUOUS when several do). Within one
/// BTF, the lowest id of that name and kind. KSYM_ERR_NOT_FOUND says where
/// the name is if elsewhere (another kind, another module).
///
/// # Safety
/// `btf` is NULL or a live handle; `query` is NULL or a NUL-terminated
/// string; `out` is NULL or points to a writable struct of at least
/// `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_btf_find(
    btf: *mut ksym_btf,
    query: *const c_char,
    kind: u32,
    out: *mut ksym_btf_type,
) -> c_int {
    int_call(|| {
        // SAFETY: `btf` and `query` as # Safety says.
        let (b, q) = unsafe { (btf_ref(btf)?, c_bytes(query, "query")?) };
        non_null(out, "out")?;
        let f = b.find(q, kind)?;
        let v = ksym_btf_type {
            sz: std::mem::size_of::<ksym_btf_type>(),
            type_id: f.id,
            obj_id: b.object_id(f.obj),
            obj_fd: b.object_fd(f.obj).unwrap_or(-1),
            kind: f.kind,
            name: f.name.with_nul().as_ptr().cast(),
            module: b.object_name(f.obj).as_ptr(),
        };
        // SAFETY: `out` as # Safety says.
        unsafe { super::write_out(out, v, "out") }?;
        Ok(0)
    })
}

/// Fills `out` (set out->sz first) with sizes and what was read.
///
/// # Safety
/// `btf` is NULL or a live handle; `out` is NULL or points to a writable
/// struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_btf_stats(btf: *const ksym_btf, out: *mut ksym_btf_stats) -> c_int {
    int_call(|| {
        // SAFETY: `btf` as # Safety says.
        let b = unsafe { btf_ref(btf) }?;
        // What tracefs says is part of the facts: read it if not yet.
        let _ = b.filter_functions();
        let s = b.stats();
        let mut flags = 0;
        if s.filter_checked {
            flags |= KSYM_BTF_STATS_FILTER_FUNCTIONS;
        }
        if s.filter_sites {
            flags |= KSYM_BTF_STATS_FILTER_ADDRS;
        }
        if s.filter_unavailable {
            flags |= KSYM_BTF_STATS_FILTER_UNAVAILABLE;
        }
        if s.objects_listed {
            flags |= KSYM_BTF_STATS_OBJECT_IDS;
        }
        if s.snapshot_loaded {
            flags |= KSYM_BTF_STATS_SNAPSHOT;
        }
        if s.snapshot_written {
            flags |= KSYM_BTF_STATS_SNAPSHOT_WRITTEN;
        }
        let v = ksym_btf_stats {
            sz: std::mem::size_of::<ksym_btf_stats>(),
            vmlinux_types: s.vmlinux_types,
            flags,
            modules: s.modules,
            modules_read: s.modules_read,
            memory_bytes: s.memory,
            trampoline_refused: s.trampoline_refused,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { super::write_out(out, v, "out") }?;
        Ok(0)
    })
}
