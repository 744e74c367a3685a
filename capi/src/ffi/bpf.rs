//! BPF ELF objects: opening, programs and their aliases (symbols at one
//! address: one function, many attach points), relocation into one copy
//! of the instructions that every alias shares, the loadable BTF and each
//! program's func_info and line_info. An object is used by one thread at a
//! time (docs/bpf-objects.md; maps and externs, attach targets: the next
//! sections).

use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void};

use super::resolve::ksym_cache;
use super::{c_bytes, c_path, int_call, non_null, ptr_call, value_call, write_out};
use ksym::bpf::{BtfFeatures, Object, RelocKind};
use ksym::Result;

/// A BPF ELF object (opaque). Used by one thread at a time.
pub struct ksym_bpf_object {
    obj: Object,
    /// Its loadable BTF rewritten for kernels that lack some BTF features
    /// (ksym_bpf_object_btf_for), by feature bits: kept until the object
    /// is freed, so that the bytes a caller got stay where they are.
    btf_for: RefCell<Vec<(u32, Box<[u8]>)>>,
}

impl ksym_bpf_object {
    /// The loadable BTF for a kernel with `f` ([`Object::btf_for`]): its
    /// address and length, in the object or in `btf_for`.
    pub(super) fn btf_for(&self, f: BtfFeatures) -> Result<(*const u8, usize)> {
        if let Some((_, b)) = self.btf_for.borrow().iter().find(|(k, _)| *k == f.bits()) {
            return Ok((b.as_ptr(), b.len()));
        }
        Ok(match self.obj.btf_for(f)? {
            Cow::Borrowed(b) => (b.as_ptr(), b.len()),
            Cow::Owned(v) => {
                let b = v.into_boxed_slice();
                let at = (b.as_ptr(), b.len());
                // The box's bytes do not move when the vector grows.
                self.btf_for.borrow_mut().push((f.bits(), b));
                at
            }
        })
    }
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
    assert!(std::mem::size_of::<ksym_bpf_insn>() == std::mem::size_of::<ksym::bpf::Insn>());
    assert!(std::mem::align_of::<ksym_bpf_insn>() == std::mem::align_of::<ksym::bpf::Insn>());
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
    /// A CO-RE relocation: symbol is the local type and access string
    /// as libbpf prints them ("<byte_off> [4] struct task_struct.pid (0:61
    /// @ offset 2344)"), target the `enum bpf_core_relo_kind`, addend the
    /// value written (after ksym_bpf_object_resolve_btf; see flags).
    KSYM_BPF_RELOC_CORE = 6,
    /// ld_imm64 <- BTF id of a typed ksym (BPF_PSEUDO_BTF_ID) and its
    /// module's BTF fd: target the extern, addend the BTF id.
    KSYM_BPF_RELOC_KSYM_BTF = 7,
    /// call <- BTF id of a kfunc (BPF_PSEUDO_KFUNC_CALL; insn.off indexes
    /// the fd array): target the extern, addend the BTF id.
    KSYM_BPF_RELOC_KFUNC = 8,
    /// ld_imm64 <- the `.kconfig` map + the extern's offset
    /// (BPF_PSEUDO_MAP_VALUE): target the extern, addend the offset.
    KSYM_BPF_RELOC_KCONFIG = 9,
    /// ld_imm64 <- a per-alias constant (`ksym_alias_value`,
    /// `ksym_alias_addr`): 0 in the shared copy, each program's or alias's
    /// own value from ksym_bpf_program_alias_insns; target the extern.
    KSYM_BPF_RELOC_ALIAS = 10,
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
    /// KSYM_BPF_RELOC_RESOLVED, KSYM_BPF_RELOC_POISONED.
    pub flags: u32,
    /// Reserved: written zero.
    pub reserved2: u32,
}

pub(super) fn boxed(obj: Object) -> *mut ksym_bpf_object {
    Box::into_raw(Box::new(ksym_bpf_object {
        obj,
        btf_for: RefCell::new(Vec::new()),
    }))
}

/// The object behind a handle, or KSYM_ERR_INVALID for NULL.
///
/// # Safety
/// `o` is NULL or a live handle from `ksym_bpf_object_open*` that lives
/// for `'a`.
pub(super) unsafe fn obj_ref<'a>(o: *const ksym_bpf_object) -> Result<&'a Object> {
    non_null(o, "obj")?;
    // SAFETY: not NULL, so a live handle (# Safety).
    Ok(unsafe { &(*o).obj })
}

/// The handle itself, or KSYM_ERR_INVALID for NULL.
///
/// # Safety
/// As [`obj_ref`].
pub(super) unsafe fn handle_ref<'a>(o: *const ksym_bpf_object) -> Result<&'a ksym_bpf_object> {
    non_null(o, "obj")?;
    // SAFETY: not NULL, so a live handle (# Safety).
    Ok(unsafe { &*o })
}

/// The object behind a handle, for changes, or KSYM_ERR_INVALID for NULL.
///
/// # Safety
/// As [`obj_ref`], and no other thread uses the object meanwhile.
pub(super) unsafe fn obj_mut<'a>(o: *mut ksym_bpf_object) -> Result<&'a mut Object> {
    non_null(o, "obj")?;
    // SAFETY: not NULL, so a live handle, used by this thread alone (# Safety).
    Ok(unsafe { &mut (*o).obj })
}

/// Opens a BPF ELF object file (64-bit little-endian EM_BPF relocatable).
/// NULL on failure: KSYM_ERR_FORMAT for malformed input (the message says
/// what and where), KSYM_ERR_UNSUPPORTED for what libksym does not handle
/// yet (legacy `maps` section definitions, maps of maps of maps...).
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

/// `find(obj, name)` written to `out`: the find_* functions of programs, maps and variables.
///
/// # Safety
/// `obj` is NULL or a live object, `name` NULL or a C string, `out` NULL
/// or writable.
pub(super) unsafe fn find_by_name(
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
            RelocKind::Alias => ksym_bpf_reloc_kind::KSYM_BPF_RELOC_ALIAS,
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
        unsafe { records(o.func_info(prog), ksym::bpf::FUNC_INFO_SIZE, rec_size, cnt) }
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
        unsafe { records(o.line_info(prog), ksym::bpf::LINE_INFO_SIZE, rec_size, cnt) }
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
