//! Maps and externs of a BPF object: each map as BPF_MAP_CREATE needs it
//! (BTF-defined `.maps`, data sections, `.kconfig`, maps of maps, program
//! arrays, struct_ops), the initial slots a loader fills, and the
//! `__ksym` and `.kconfig` externs, resolved in one pass over kallsyms
//! (docs/bpf-objects.md).

use std::ffi::{c_char, c_int, c_void};

use super::bpf::{find_by_name, ksym_bpf_object, obj_mut, obj_ref};
use super::{int_call, value_call, write_out};
use ksym::bpf::{ExternKind, Object, SlotTarget};

/// A map (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_map_info {
    /// sizeof(struct ksym_bpf_map_info), set by the caller.
    pub sz: usize,
    /// ".maps" variable name, or the data section name (".bss", ".data", ".rodata", ...).
    pub name: *const c_char,
    pub section: *const c_char,
    pub r#type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    /// Reserved: written zero.
    pub reserved: u32,
    /// Data sections: initial contents (NULL for .bss and `.maps` maps);
    /// `.kconfig`: its values, after ksym_bpf_object_resolve_btf.
    pub initial_value: *const c_void,
    pub initial_value_size: usize,
    /// BPF_MAP_CREATE's btf_key_type_id and btf_value_type_id (with the fd
    /// of ksym_bpf_object_btf loaded): the `__type(key, ...)` and
    /// `__type(value, ...)` types, a data section's DATASEC. Map
    /// types that take no BTF (perf event arrays, sockmaps...) ignore
    /// them, as libbpf does.
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    /// `__uint(map_extra, ...)` (bloom filters) and `__uint(numa_node, ...)`.
    pub map_extra: u64,
    pub numa_node: u32,
    /// Reserved: written zero.
    pub reserved2: u32,
    /// Maps of maps (`__array(values, struct inner)`): the inner map's
    /// type, key and value sizes, max entries and flags, for the template
    /// map whose fd BPF_MAP_CREATE's inner_map_fd takes; all zero
    /// otherwise.
    pub inner_type: u32,
    pub inner_key_size: u32,
    pub inner_value_size: u32,
    pub inner_max_entries: u32,
    pub inner_map_flags: u32,
    /// Reserved: written zero.
    pub reserved3: u32,
    /// Maps of maps and program arrays: the initial slots the object gives
    /// (`.values = { [i] = &map }`); struct_ops maps (after
    /// ksym_bpf_object_resolve_btf): their programs. For ksym_bpf_map_slot.
    pub slot_count: usize,
    /// struct_ops maps (`SEC(".struct_ops")` variables, type 26): after
    /// ksym_bpf_object_resolve_btf, BPF_MAP_CREATE's
    /// btf_vmlinux_value_type_id (the kernel's `struct
    /// bpf_struct_ops_<name>`, whose size `value_size` then is; create the
    /// map with the object's BTF fd and key/value type ids 0), 0 otherwise.
    pub btf_vmlinux_value_type_id: u32,
    /// Reserved: written zero.
    pub reserved4: u32,
    /// struct_ops maps, after ksym_bpf_object_resolve_btf: the value that
    /// registers them (the object's data at the kernel's offsets), to be
    /// written with BPF_MAP_UPDATE_ELEM at key 0 once the programs are
    /// loaded and their fds put at the KSYM_BPF_SLOT_STRUCT_OPS slots, not
    /// when the map is created (registering is attaching); with
    /// `map_flags` BPF_F_LINK (`.struct_ops.link`), BPF_LINK_CREATE on the
    /// map then attaches it. NULL otherwise.
    pub struct_ops_value: *const c_void,
    pub struct_ops_value_size: usize,
    /// Maps of maps: the inner map's `__type(key, ...)` and `__type(value,
    /// ...)` BTF ids, for the template map as libbpf creates it (with the
    /// object's BTF fd). Kernels check an inner map's BTF-described fields
    /// (timers, kptrs) against the template's, and some map types (task,
    /// inode, socket storage) cannot be created without BTF at all. 0
    /// otherwise.
    pub inner_btf_key_type_id: u32,
    pub inner_btf_value_type_id: u32,
}

/// What an initial slot holds (`ksym_bpf_map_slot.kind`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ksym_bpf_slot_kind {
    /// A map of the object (a map of maps): put its fd in the slot.
    KSYM_BPF_SLOT_MAP = 1,
    /// A program of the object (a program array): put its fd in the slot.
    KSYM_BPF_SLOT_PROGRAM = 2,
    /// A program of a struct_ops map (after ksym_bpf_object_resolve_btf):
    /// its fd, as a 64-bit integer, goes at byte `index` of a copy of
    /// `struct_ops_value`, which BPF_MAP_UPDATE_ELEM (key 0) then writes
    /// to register the struct_ops.
    KSYM_BPF_SLOT_STRUCT_OPS = 3,
}

/// An initial slot of a map of maps or a program array (output struct:
/// set `sz`): after creating the maps (and, for programs, loading them),
/// the loader writes `target`'s fd at key `index`, as libbpf does.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_map_slot {
    /// sizeof(struct ksym_bpf_map_slot), set by the caller.
    pub sz: usize,
    /// The key (slot) to set.
    pub index: u32,
    pub kind: ksym_bpf_slot_kind,
    /// A map index (KSYM_BPF_SLOT_MAP) or program index (KSYM_BPF_SLOT_PROGRAM).
    pub target: usize,
}

/// What an extern is (`ksym_bpf_extern_info.kind`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ksym_bpf_extern_kind {
    /// `extern const void x __ksym;`: its address, by ksym_bpf_object_resolve_ksyms.
    KSYM_BPF_EXTERN_KSYM = 1,
    /// A typed `__ksym` variable: its BTF id, by ksym_bpf_object_resolve_btf.
    KSYM_BPF_EXTERN_KSYM_BTF = 2,
    /// A kfunc (an extern function in `.ksyms`): its BTF id, by resolve_btf.
    KSYM_BPF_EXTERN_KFUNC = 3,
    /// A `.kconfig` variable: its value in the `.kconfig` map, by resolve_btf.
    KSYM_BPF_EXTERN_KCONFIG = 4,
    /// `extern const void ksym_alias_value __ksym __weak;`: a per-alias
    /// constant, each program's or alias's value (ksym_bpf_program_alias_insns).
    KSYM_BPF_EXTERN_ALIAS_VALUE = 5,
    /// `extern const void ksym_alias_addr __ksym __weak;`: a per-alias
    /// constant, the address of the function each program or alias attaches to.
    KSYM_BPF_EXTERN_ALIAS_ADDR = 6,
}

/// An extern of the object (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_extern_info {
    /// sizeof(struct ksym_bpf_extern_info), set by the caller.
    pub sz: usize,
    /// May be module-qualified ("ext4`ext4_file_open") via an asm label.
    pub name: *const c_char,
    pub weak: bool,
    /// KSYM: found in kallsyms by ksym_bpf_object_resolve_ksyms; KSYM_BTF,
    /// KFUNC: found in the kernel's BTF; KCONFIG: its value was set (both
    /// by ksym_bpf_object_resolve_btf); ALIAS_*: always (libksym writes them).
    pub resolved: bool,
    /// Reserved: written zero.
    pub reserved: [u8; 6],
    /// KSYM: after ksym_bpf_object_resolve_ksyms (0 for a weak extern not found).
    pub addr: u64,
    /// enum ksym_bpf_extern_kind.
    pub kind: u32,
    /// KSYM_BTF, KFUNC: the kernel's BTF id (0: not resolved).
    pub btf_id: u32,
    /// KSYM_BTF, KFUNC: 0 for vmlinux, the module's BTF fd, -1 when it has
    /// none here (BTF read from files).
    pub btf_obj_fd: c_int,
    /// KCONFIG: the offset of its value in the `.kconfig` map; KFUNC: the
    /// index of its module's fd in the program's fd array (0 for vmlinux).
    pub offset: u32,
    /// KSYM_BTF, KFUNC: "vmlinux" or the module it was found in; NULL
    /// before resolution or when not found.
    pub module: *const c_char,
}

/// Number of maps: `.maps` variables, then data sections.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_map_count(obj: *const ksym_bpf_object) -> usize {
    value_call(0, || {
        // SAFETY: `obj` as # Safety says.
        Ok(unsafe { obj_ref(obj) }?.maps().len())
    })
}

/// Describes map `map` (set out->sz first).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_map_info(
    obj: *const ksym_bpf_object,
    map: usize,
    out: *mut ksym_bpf_map_info,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let o = unsafe { obj_ref(obj) }?;
        let m = o.map(map)?;
        let inner = m.inner.unwrap_or_default();
        let (iv, ivs) = match &m.initial_value {
            Some(v) => (v.as_ptr().cast::<c_void>(), v.len()),
            None => (std::ptr::null(), 0),
        };
        let (sov, sovs) = match m.struct_ops.as_ref().and_then(|s| s.value.as_ref()) {
            Some(v) => (v.as_ptr().cast::<c_void>(), v.len()),
            None => (std::ptr::null(), 0),
        };
        let info = ksym_bpf_map_info {
            sz: std::mem::size_of::<ksym_bpf_map_info>(),
            name: m.name.as_ptr(),
            section: m.section.as_ptr(),
            r#type: m.map_type,
            key_size: m.key_size,
            value_size: m.value_size,
            max_entries: m.max_entries,
            map_flags: m.map_flags,
            reserved: 0,
            initial_value: iv,
            initial_value_size: ivs,
            btf_key_type_id: m.btf_key_type_id,
            btf_value_type_id: m.btf_value_type_id,
            map_extra: m.map_extra,
            numa_node: m.numa_node,
            reserved2: 0,
            inner_type: inner[0],
            inner_key_size: inner[1],
            inner_value_size: inner[2],
            inner_max_entries: inner[3],
            inner_map_flags: inner[4],
            reserved3: 0,
            slot_count: m.slots.len(),
            btf_vmlinux_value_type_id: m.btf_vmlinux_value_type_id,
            reserved4: 0,
            struct_ops_value: sov,
            struct_ops_value_size: sovs,
            inner_btf_key_type_id: inner[5],
            inner_btf_value_type_id: inner[6],
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, info, "out") }?;
        Ok(0)
    })
}

/// Describes initial slot `slot` of map `map` (set out->sz first); slots
/// are in key order.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_map_slot(
    obj: *const ksym_bpf_object,
    map: usize,
    slot: usize,
    out: *mut ksym_bpf_map_slot,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let s = unsafe { obj_ref(obj) }?.slot(map, slot)?;
        let (kind, target) = match s.target {
            SlotTarget::Map(m) => (ksym_bpf_slot_kind::KSYM_BPF_SLOT_MAP, m),
            SlotTarget::Program(p) => (ksym_bpf_slot_kind::KSYM_BPF_SLOT_PROGRAM, p),
            SlotTarget::StructOps(p) => (ksym_bpf_slot_kind::KSYM_BPF_SLOT_STRUCT_OPS, p),
        };
        let info = ksym_bpf_map_slot {
            sz: std::mem::size_of::<ksym_bpf_map_slot>(),
            index: s.index,
            kind,
            target,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, info, "out") }?;
        Ok(0)
    })
}

/// Finds a map by name.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `name` is NULL or a NUL-terminated string; `map` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_find_map(
    obj: *const ksym_bpf_object,
    name: *const c_char,
    map: *mut usize,
) -> c_int {
    // SAFETY: `obj`, `name` and `out` as # Safety says.
    unsafe { find_by_name(obj, name, map, "map", Object::find_map) }
}

/// Gives map `map` the fd of the kernel map created for it (used by
/// ksym_bpf_object_relocate; libksym does not own or close it).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_set_map_fd(
    obj: *mut ksym_bpf_object,
    map: usize,
    fd: c_int,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        unsafe { obj_mut(obj) }?.set_map_fd(map, fd)?;
        Ok(0)
    })
}

/// Number of externs: `__ksym` (untyped and typed), kfuncs and `.kconfig`
/// (ksym_bpf_extern_info says which).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_extern_count(obj: *const ksym_bpf_object) -> usize {
    value_call(0, || {
        // SAFETY: `obj` as # Safety says.
        Ok(unsafe { obj_ref(obj) }?.externs().len())
    })
}

/// Describes extern `ext` (set out->sz first).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_extern_info(
    obj: *const ksym_bpf_object,
    ext: usize,
    out: *mut ksym_bpf_extern_info,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let o = unsafe { obj_ref(obj) }?;
        let e = o.external(ext)?;
        let info = ksym_bpf_extern_info {
            sz: std::mem::size_of::<ksym_bpf_extern_info>(),
            name: e.name.as_ptr(),
            weak: e.weak,
            resolved: e.resolved,
            reserved: [0; 6],
            addr: e.addr,
            kind: e.kind as u32,
            btf_id: e.btf_id,
            btf_obj_fd: e.btf_obj_fd,
            offset: match e.kind {
                ExternKind::Kconfig => e.kcfg.map_or(0, |k| k.off),
                ExternKind::Kfunc => e.fd_idx as u32,
                _ => 0,
            },
            module: e.module.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, info, "out") }?;
        Ok(0)
    })
}
