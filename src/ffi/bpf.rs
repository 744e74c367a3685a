//! `ksym_bpf_*`: BPF ELF objects.

use std::ffi::{c_char, c_int, c_void};

use super::resolve::ksym_cache;
use super::{c_bytes, c_path, int_call, non_null, ptr_call, value_call, write_out};
use crate::bpf::{Object, RelocKind};
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
    /// Data sections: initial contents (NULL for .bss and `.maps` maps).
    pub initial_value: *const c_void,
    pub initial_value_size: usize,
}

/// An untyped `__ksym` extern (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_extern_info {
    /// sizeof(struct ksym_bpf_extern_info), set by the caller.
    pub sz: usize,
    /// May be module-qualified ("ext4`ext4_file_open") via an asm label.
    pub name: *const c_char,
    pub weak: bool,
    /// Found in kallsyms by ksym_bpf_object_resolve_ksyms.
    pub resolved: bool,
    /// Reserved: written zero.
    pub reserved: [u8; 6],
    /// After ksym_bpf_object_resolve_ksyms (0 for a weak extern not found).
    pub addr: u64,
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
}

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
    /// Map index (MAP_*), extern index (KSYM), or final insn index of the callee (CALL, FUNC).
    pub target: usize,
    /// MAP_VALUE: the offset in the data section (`insn[1].imm`).
    pub addend: i64,
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
        let (iv, ivs) = match &m.initial_value {
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
        let r = unsafe { obj_ref(obj) }?.reloc(prog, i)?;
        let kind = match r.kind {
            RelocKind::Ksym => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_KSYM,
            RelocKind::MapFd => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_MAP_FD,
            RelocKind::MapValue => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_MAP_VALUE,
            RelocKind::Call => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_CALL,
            RelocKind::Func => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_FUNC,
        };
        let v = ksym_bpf_reloc {
            sz: std::mem::size_of::<ksym_bpf_reloc>(),
            insn_idx: r.insn_idx,
            kind: kind as c_int,
            reserved: 0,
            symbol: r.symbol.as_ptr(),
            target: r.target,
            addend: r.addend,
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, v, "out") }?;
        Ok(0)
    })
}

/// Applies everything: subprograms appended (done at open), calls patched,
/// map fds, data-section values and resolved ksyms written. Needs an fd for
/// every map a program uses (KSYM_ERR_INVALID naming it otherwise) and, if
/// a program uses externs, ksym_bpf_object_resolve_ksyms first. A program
/// with CO-RE relocations is KSYM_ERR_UNSUPPORTED. Can be called again.
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
