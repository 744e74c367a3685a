//! `ksym_bpf_*`: BPF ELF objects.

use std::ffi::{c_char, c_int, c_uint, c_void};

use super::resolve::ksym_cache;
use super::{c_bytes, c_path, int_call, non_null, ptr_call, value_call, write_out};
use crate::bpf::{ExternKind, Object, RelocKind, SlotTarget};
use crate::error::Result;

/// A BPF ELF object (opaque). Used by one thread at a time.
pub struct ksym_bpf_object {
    obj: Object,
}

/// One instruction, layout-compatible with `struct bpf_insn` from
/// `<linux/bpf.h>` (dst_reg in the low nibble of `regs`, src_reg in the high).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_insn {
    pub code: u8,
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

const _: () = {
    assert!(std::mem::size_of::<ksym_bpf_insn>() == std::mem::size_of::<crate::bpf::Insn>());
    assert!(std::mem::align_of::<ksym_bpf_insn>() == std::mem::align_of::<crate::bpf::Insn>());
};

/// A program (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_program_info {
    /// sizeof(struct ksym_bpf_program_info), set by the caller.
    pub sz: usize,
    /// The symbol's name: an alias has its own name.
    pub name: *const c_char,
    /// ELF section name, e.g. "socket", "fentry/vfs_read".
    pub section: *const c_char,
    /// Index of the program whose instructions this one shares; its own index if none.
    pub alias_of: usize,
    /// Offset in the section, in instructions.
    pub insn_off: usize,
    /// Instructions of the function itself (before subprograms are appended).
    pub insn_cnt: usize,
}

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
    /// `__type(value, ...)` types, a data section's DATASEC (0.2). Map
    /// types that take no BTF (perf event arrays, sockmaps...) ignore
    /// them, as libbpf does.
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    /// `__uint(map_extra, ...)` (bloom filters) and `__uint(numa_node, ...)` (0.2).
    pub map_extra: u64,
    pub numa_node: u32,
    /// Reserved: written zero.
    pub reserved2: u32,
    /// Maps of maps (`__array(values, struct inner)`): the inner map's
    /// type, key and value sizes, max entries and flags, for the template
    /// map whose fd BPF_MAP_CREATE's inner_map_fd takes; all zero
    /// otherwise (0.2).
    pub inner_type: u32,
    pub inner_key_size: u32,
    pub inner_value_size: u32,
    pub inner_max_entries: u32,
    pub inner_map_flags: u32,
    /// Reserved: written zero.
    pub reserved3: u32,
    /// Maps of maps and program arrays: the initial slots the object gives
    /// (`.values = { [i] = &map }`); struct_ops maps (after
    /// ksym_bpf_object_resolve_btf): their programs. For ksym_bpf_map_slot (0.2).
    pub slot_count: usize,
    /// struct_ops maps (`SEC(".struct_ops")` variables, type 26): after
    /// ksym_bpf_object_resolve_btf, BPF_MAP_CREATE's
    /// btf_vmlinux_value_type_id (the kernel's `struct
    /// bpf_struct_ops_<name>`, whose size `value_size` then is; create the
    /// map with the object's BTF fd and key/value type ids 0), 0 otherwise (0.2).
    pub btf_vmlinux_value_type_id: u32,
    /// Reserved: written zero.
    pub reserved4: u32,
    /// struct_ops maps, after ksym_bpf_object_resolve_btf: the value that
    /// registers them (the object's data at the kernel's offsets), to be
    /// written with BPF_MAP_UPDATE_ELEM at key 0 once the programs are
    /// loaded and their fds put at the KSYM_BPF_SLOT_STRUCT_OPS slots, not
    /// when the map is created (registering is attaching); with
    /// `map_flags` BPF_F_LINK (`.struct_ops.link`), BPF_LINK_CREATE on the
    /// map then attaches it. NULL otherwise (0.2).
    pub struct_ops_value: *const c_void,
    pub struct_ops_value_size: usize,
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
    /// to register the struct_ops (0.2).
    KSYM_BPF_SLOT_STRUCT_OPS = 3,
}

/// An initial slot of a map of maps or a program array (output struct:
/// set `sz`): after creating the maps (and, for programs, loading them),
/// the loader writes `target`'s fd at key `index`, as libbpf does (0.2).
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
    /// by ksym_bpf_object_resolve_btf).
    pub resolved: bool,
    /// Reserved: written zero.
    pub reserved: [u8; 6],
    /// KSYM: after ksym_bpf_object_resolve_ksyms (0 for a weak extern not found).
    pub addr: u64,
    /// enum ksym_bpf_extern_kind (0.2).
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

/// What a relocation writes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ksym_bpf_reloc_kind {
    /// ld_imm64 <- kernel address of an extern.
    KSYM_BPF_RELOC_KSYM = 1,
    /// ld_imm64 <- map fd (src_reg BPF_PSEUDO_MAP_FD).
    KSYM_BPF_RELOC_MAP_FD = 2,
    /// ld_imm64 <- data-section map + offset (BPF_PSEUDO_MAP_VALUE).
    KSYM_BPF_RELOC_MAP_VALUE = 3,
    /// bpf-to-bpf call to a subprogram.
    KSYM_BPF_RELOC_CALL = 4,
    /// ld_imm64 <- address of a subprogram (BPF_PSEUDO_FUNC, callbacks).
    KSYM_BPF_RELOC_FUNC = 5,
    /// A CO-RE relocation (0.2): symbol is the local type and access string
    /// as libbpf prints them ("<byte_off> [4] struct task_struct.pid (0:61
    /// @ offset 2344)"), target the `enum bpf_core_relo_kind`, addend the
    /// value written (after ksym_bpf_object_resolve_btf; see flags).
    KSYM_BPF_RELOC_CORE = 6,
    /// ld_imm64 <- BTF id of a typed ksym (BPF_PSEUDO_BTF_ID) and its
    /// module's BTF fd (0.2): target the extern, addend the BTF id.
    KSYM_BPF_RELOC_KSYM_BTF = 7,
    /// call <- BTF id of a kfunc (BPF_PSEUDO_KFUNC_CALL; insn.off indexes
    /// the fd array) (0.2): target the extern, addend the BTF id.
    KSYM_BPF_RELOC_KFUNC = 8,
    /// ld_imm64 <- the `.kconfig` map + the extern's offset
    /// (BPF_PSEUDO_MAP_VALUE) (0.2): target the extern, addend the offset.
    KSYM_BPF_RELOC_KCONFIG = 9,
}

/// ksym_bpf_reloc.flags: the value (addend) is final: resolved by
/// ksym_bpf_object_resolve_btf.
pub const KSYM_BPF_RELOC_RESOLVED: c_uint = 1;
/// ksym_bpf_reloc.flags: a CO-RE relocation that failed on this kernel the
/// way libbpf lets pass: its instruction becomes a call to the invalid
/// helper 0xbad2310, which the verifier reports if it is reached.
pub const KSYM_BPF_RELOC_POISONED: c_uint = 2;

/// A relocation of a program (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_reloc {
    /// sizeof(struct ksym_bpf_reloc), set by the caller.
    pub sz: usize,
    /// Index in the program's final instruction array.
    pub insn_idx: usize,
    /// enum ksym_bpf_reloc_kind.
    pub kind: c_int,
    /// Reserved: written zero.
    pub reserved: u32,
    /// Extern, map, data section or subprogram name.
    pub symbol: *const c_char,
    /// Map index (MAP_*), extern index (KSYM, KSYM_BTF, KFUNC, KCONFIG),
    /// final insn index of the callee (CALL, FUNC), or the CO-RE
    /// relocation kind (CORE).
    pub target: usize,
    /// MAP_VALUE: the offset in the data section (`insn[1].imm`); KCONFIG:
    /// the offset in the `.kconfig` map; after ksym_bpf_object_resolve_btf,
    /// CORE: the value written, KSYM_BTF and KFUNC: the kernel's BTF id.
    pub addend: i64,
    /// KSYM_BPF_RELOC_RESOLVED, KSYM_BPF_RELOC_POISONED (0.2).
    pub flags: u32,
    /// Reserved: written zero.
    pub reserved2: u32,
}

fn boxed(obj: Object) -> *mut ksym_bpf_object {
    Box::into_raw(Box::new(ksym_bpf_object { obj }))
}

/// The object behind a handle, or KSYM_ERR_INVALID for NULL.
///
/// # Safety
/// `o` is NULL or a live handle from `ksym_bpf_object_open*` that lives
/// for `'a`.
unsafe fn obj_ref<'a>(o: *const ksym_bpf_object) -> Result<&'a Object> {
    non_null(o, "obj")?;
    // SAFETY: not NULL, so a live handle (# Safety).
    Ok(unsafe { &(*o).obj })
}

/// The object behind a handle, for changes, or KSYM_ERR_INVALID for NULL.
///
/// # Safety
/// As [`obj_ref`], and no other thread uses the object meanwhile.
unsafe fn obj_mut<'a>(o: *mut ksym_bpf_object) -> Result<&'a mut Object> {
    non_null(o, "obj")?;
    // SAFETY: not NULL, so a live handle, used by this thread alone (# Safety).
    Ok(unsafe { &mut (*o).obj })
}

/// Opens a BPF ELF object file (64-bit little-endian EM_BPF relocatable).
/// NULL on failure: KSYM_ERR_FORMAT for malformed input (the message says
/// what and where), KSYM_ERR_UNSUPPORTED for what libksym does not handle
/// yet (kfunc calls, typed ksyms, .kconfig externs, legacy maps...).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_open(path: *const c_char) -> *mut ksym_bpf_object {
    ptr_call(|| {
        non_null(path, "path")?;
        // SAFETY: `path` as # Safety says.
        let p = unsafe { c_path(path) }.unwrap_or_default();
        Ok(boxed(Object::open(&p)?))
    })
}

/// Opens an object from `len` bytes in memory (copied: the buffer is not kept).
///
/// # Safety
/// `buf` is NULL or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_open_mem(
    buf: *const c_void,
    len: usize,
) -> *mut ksym_bpf_object {
    ptr_call(|| {
        non_null(buf, "buf")?;
        // SAFETY: not NULL, so readable for `len` bytes (# Safety).
        let data = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
        Ok(boxed(Object::parse(data)?))
    })
}

/// Frees an object (NULL is a no-op).
///
/// # Safety
/// `obj` is NULL or a handle from `ksym_bpf_object_open*`, not freed already; it is not used
/// afterwards.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_free(obj: *mut ksym_bpf_object) {
    if !obj.is_null() {
        // SAFETY: a handle not freed already (# Safety).
        drop(unsafe { Box::from_raw(obj) });
    }
}

/// The contents of the "license" section ("" when there is none).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_license(obj: *const ksym_bpf_object) -> *const c_char {
    value_call(std::ptr::null(), || {
        // SAFETY: `obj` as # Safety says.
        Ok(unsafe { obj_ref(obj) }?.license().as_ptr())
    })
}

/// Number of programs, aliases included.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_program_count(obj: *const ksym_bpf_object) -> usize {
    value_call(0, || {
        // SAFETY: `obj` as # Safety says.
        Ok(unsafe { obj_ref(obj) }?.programs().len())
    })
}

/// Describes program `prog` (set out->sz first).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_info(
    obj: *const ksym_bpf_object,
    prog: usize,
    out: *mut ksym_bpf_program_info,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let o = unsafe { obj_ref(obj) }?;
        let p = o.program(prog)?;
        let info = ksym_bpf_program_info {
            sz: std::mem::size_of::<ksym_bpf_program_info>(),
            name: p.name.as_ptr(),
            section: p.section.as_ptr(),
            alias_of: p.alias_of,
            insn_off: p.insn_off,
            insn_cnt: p.insn_cnt,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, info, "out") }?;
        Ok(0)
    })
}

/// `find(obj, name)` written to `out`: the two find_* functions.
///
/// # Safety
/// `obj` is NULL or a live object, `name` NULL or a C string, `out` NULL
/// or writable.
unsafe fn find_by_name(
    obj: *const ksym_bpf_object,
    name: *const c_char,
    out: *mut usize,
    out_name: &str,
    find: fn(&Object, &[u8]) -> Result<usize>,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` and `name` as # Safety says.
        let o = unsafe { obj_ref(obj) }?;
        let n = unsafe { c_bytes(name, "name") }?;
        non_null(out, out_name)?;
        let i = find(o, n)?;
        // SAFETY: not NULL, so writable (# Safety).
        unsafe { out.write(i) };
        Ok(0)
    })
}

/// Finds a program by (symbol) name.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `name` is NULL or a NUL-terminated string; `prog` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_find_program(
    obj: *const ksym_bpf_object,
    name: *const c_char,
    prog: *mut usize,
) -> c_int {
    // SAFETY: `obj`, `name` and `out` as # Safety says.
    unsafe { find_by_name(obj, name, prog, "prog", Object::find_program) }
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

/// Number of untyped `__ksym` externs.
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

/// Resolves every untyped __ksym extern of the object in one pass. `cache`
/// may be NULL (one pass over /proc/kallsyms, nothing kept). A strong
/// extern not found is KSYM_ERR_NOT_FOUND (the message names it, with near
/// matches); a weak one gets 0; an ambiguous one is KSYM_ERR_AMBIGUOUS; a
/// restricted kallsyms is KSYM_ERR_RESTRICTED unless every extern is weak.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `cache` is NULL or a live handle from `ksym_cache_new` (which any thread may use at the same
/// time).
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_resolve_ksyms(
    obj: *mut ksym_bpf_object,
    cache: *mut ksym_cache,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let o = unsafe { obj_mut(obj) }?;
        let c = if cache.is_null() {
            None
        } else {
            Some(unsafe { &(*cache).cache })
        };
        o.resolve_ksyms(c)?;
        Ok(0)
    })
}

/// Number of relocations of a program (an alias reports its target's).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_reloc_count(
    obj: *const ksym_bpf_object,
    prog: usize,
) -> usize {
    value_call(0, || {
        // SAFETY: `obj` as # Safety says.
        Ok(unsafe { obj_ref(obj) }?.relocs(prog)?.len())
    })
}

/// Relocation `i` of a program, in final instruction indices (set out->sz first).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_reloc(
    obj: *const ksym_bpf_object,
    prog: usize,
    i: usize,
    out: *mut ksym_bpf_reloc,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let o = unsafe { obj_ref(obj) }?;
        let r = o.reloc(prog, i)?;
        let kind = match r.kind {
            RelocKind::Ksym => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_KSYM,
            RelocKind::MapFd => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_MAP_FD,
            RelocKind::MapValue => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_MAP_VALUE,
            RelocKind::Call => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_CALL,
            RelocKind::Func => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_FUNC,
            RelocKind::Core => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_CORE,
            RelocKind::KsymBtf => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_KSYM_BTF,
            RelocKind::Kfunc => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_KFUNC,
            RelocKind::Kconfig => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_KCONFIG,
        };
        let v = ksym_bpf_reloc {
            sz: std::mem::size_of::<ksym_bpf_reloc>(),
            insn_idx: r.insn_idx,
            kind: kind as c_int,
            reserved: 0,
            symbol: o.reloc_symbol(r).as_ptr(),
            target: r.target,
            addend: r.addend,
            flags: r.flags,
            reserved2: 0,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, v, "out") }?;
        Ok(0)
    })
}

/// Applies everything: subprograms appended (done at open), calls patched,
/// CO-RE results, map fds, data-section values, resolved ksyms, BTF ids of
/// typed ksyms and kfuncs, `.kconfig` offsets written, each time from the
/// pristine instructions: it can be called again (after changing fds).
/// Needs an fd for every map a program uses (the `.kconfig` map included),
/// ksym_bpf_object_resolve_ksyms if a program uses untyped externs, and
/// ksym_bpf_object_resolve_btf if it has CO-RE relocations, typed ksyms,
/// kfunc calls or `.kconfig` externs: KSYM_ERR_INVALID naming the program,
/// instruction and the call to make otherwise. A CO-RE relocation that
/// failed (ambiguous, an instruction that does not match its record) is
/// reported again here.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_relocate(obj: *mut ksym_bpf_object) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        unsafe { obj_mut(obj) }?.relocate()?;
        Ok(0)
    })
}

/// After relocate: the final instructions of a program and their count. An
/// alias returns the very same pointer as the program it aliases: one copy,
/// however many aliases. NULL with KSYM_ERR_INVALID before relocate.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `insn_cnt` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_insns(
    obj: *const ksym_bpf_object,
    prog: usize,
    insn_cnt: *mut usize,
) -> *const ksym_bpf_insn {
    value_call(std::ptr::null(), || {
        // SAFETY: `obj` as # Safety says.
        let insns = unsafe { obj_ref(obj) }?.insns(prog)?;
        non_null(insn_cnt, "insn_cnt")?;
        // SAFETY: not NULL, so writable (# Safety).
        unsafe { insn_cnt.write(insns.len()) };
        // Same layout (checked at compile time above).
        Ok(insns.as_ptr().cast::<ksym_bpf_insn>())
    })
}

/// The object's .BTF made loadable by BPF_BTF_LOAD (DATASEC sizes and VAR
/// offsets filled in from the ELF, extern VARs/FUNCs the kernel refuses
/// rewritten, as libbpf does). NULL with KSYM_ERR_NOT_FOUND when the object
/// has no BTF.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `size` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_btf(
    obj: *const ksym_bpf_object,
    size: *mut usize,
) -> *const c_void {
    value_call(std::ptr::null(), || {
        // SAFETY: `obj` as # Safety says.
        let b = unsafe { obj_ref(obj) }?.btf()?;
        non_null(size, "size")?;
        // SAFETY: not NULL, so writable (# Safety).
        unsafe { size.write(b.len()) };
        Ok(b.as_ptr().cast::<c_void>())
    })
}

/// Writes the record size and count of `recs` and returns them.
///
/// # Safety
/// `rec_size` and `cnt` are NULL or point to a writable `size_t` each.
unsafe fn records(
    recs: Result<&[u8]>,
    rec: usize,
    rec_size: *mut usize,
    cnt: *mut usize,
) -> Result<*const c_void> {
    let r = recs?;
    non_null(rec_size, "rec_size")?;
    non_null(cnt, "cnt")?;
    // SAFETY: not NULL, so writable (# Safety).
    unsafe {
        rec_size.write(rec);
        cnt.write(r.len() / rec);
    }
    Ok(r.as_ptr().cast::<c_void>())
}

/// The func_info records of a program's final instructions (struct
/// bpf_func_info: insn_off in final instruction indices, type_id), ready
/// for BPF_PROG_LOAD. An alias gets its target's. NULL with
/// KSYM_ERR_NOT_FOUND when the object has no BTF.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `rec_size` and `cnt` are NULL or point to a writable `size_t` each.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_func_info(
    obj: *const ksym_bpf_object,
    prog: usize,
    rec_size: *mut usize,
    cnt: *mut usize,
) -> *const c_void {
    value_call(std::ptr::null(), || {
        // SAFETY: `obj` as # Safety says.
        let o = unsafe { obj_ref(obj) }?;
        unsafe { records(o.func_info(prog), crate::bpf::FUNC_INFO_SIZE, rec_size, cnt) }
    })
}

/// The line_info records of a program's final instructions (struct
/// bpf_line_info), as for func_info.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `rec_size` and `cnt` are NULL or point to a writable `size_t` each.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_line_info(
    obj: *const ksym_bpf_object,
    prog: usize,
    rec_size: *mut usize,
    cnt: *mut usize,
) -> *const c_void {
    value_call(std::ptr::null(), || {
        // SAFETY: `obj` as # Safety says.
        let o = unsafe { obj_ref(obj) }?;
        unsafe { records(o.line_info(prog), crate::bpf::LINE_INFO_SIZE, rec_size, cnt) }
    })
}

/// The fd array of a program's BPF_PROG_LOAD (`fd_array`): the module
/// BTF fds of its kfunc calls, which `insn.off` indexes (index 0 unused,
/// as libbpf leaves it). NULL with `*cnt` = 0 when the program calls no
/// module kfunc (or before ksym_bpf_object_resolve_btf). The array lives
/// as long as the object, until the next resolve_btf.
///
/// # Safety
/// `obj` is NULL or a live handle; `cnt` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_program_fd_array(
    obj: *const ksym_bpf_object,
    prog: usize,
    cnt: *mut usize,
) -> *const c_int {
    if !cnt.is_null() {
        // SAFETY: `cnt` is writable (# Safety).
        unsafe { *cnt = 0 };
    }
    value_call(std::ptr::null(), || {
        // SAFETY: `obj` as # Safety says.
        let fds = unsafe { obj_ref(obj) }?.fd_array(prog)?;
        if fds.is_empty() {
            return Ok(std::ptr::null());
        }
        if !cnt.is_null() {
            // SAFETY: as above.
            unsafe { *cnt = fds.len() };
        }
        Ok(fds.as_ptr())
    })
}

/// ksym_bpf_attach.flags: the program is sleepable (BPF_F_SLEEPABLE).
pub const KSYM_ATTACH_SLEEPABLE: c_uint = 1;
/// ksym_bpf_attach.flags: an XDP program that handles fragments
/// (BPF_F_XDP_HAS_FRAGS; added to the contract).
pub const KSYM_ATTACH_XDP_FRAGS: c_uint = 2;
/// ksym_bpf_attach.flags: the section starts with `?` (`SEC("?tc")`):
/// libbpf does not load the program unless asked (its autoload is off);
/// the program type is the section's without the `?` (0.2).
pub const KSYM_ATTACH_OPTIONAL: c_uint = 4;
const _: () = assert!(
    KSYM_ATTACH_SLEEPABLE == crate::bpf::section::SLEEPABLE
        && KSYM_ATTACH_XDP_FRAGS == crate::bpf::section::XDP_FRAGS
        && KSYM_ATTACH_OPTIONAL == crate::bpf::section::OPTIONAL
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
    /// "vfs_read", "sched_switch", ...; NULL if none.
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
/// flags, the target the section names) work before
/// ksym_bpf_object_resolve_btf; BTF ids, module and address after it. A
/// section libbpf does not know gives prog_type 0 (and an error only when
/// a target is asked for: set_attach_target, expand).
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
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, v, "out") }?;
        Ok(0)
    })
}

/// Sets the attach target of one program or alias: "func", "module`func"
/// (or libbpf's "module:func"), or a tracepoint name for tp_btf/raw_tp,
/// resolved now in `btf` (NULL: the running kernel's). An alias lives in
/// its target's ELF section, so the section name cannot tell where an
/// alias attaches: the loader says it here (libbpf:
/// bpf_program__set_attach_target). KSYM_ERR_UNSUPPORTED for a program
/// whose section has no kernel target; KSYM_ERR_NOT_FOUND for a target
/// that is not there.
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
