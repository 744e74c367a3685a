//! Variables of a BPF object's data sections (`.rodata`, `.data`, `.bss`
//! and their `.name` variants): where each lives in its section's map, and
//! how a loader sets them before it creates that map, as a libbpf
//! skeleton's `obj->rodata->targ_pid = pid` does. A tool's options are
//! often `const volatile` variables in `.rodata`, which the verifier reads
//! as constants: set them here, then create the map from
//! `ksym_bpf_map_info.initial_value` (docs/bpf-objects.md, "Variables").

use std::ffi::{c_char, c_int, c_void};

use super::bpf::{find_by_name, ksym_bpf_object, obj_mut, obj_ref};
use super::{c_bytes, int_call, non_null, value_call, write_out};
use ksym::bpf::Object;

/// The variable is global (`BTF_VAR_GLOBAL_ALLOCATED`): not `static`, not
/// hidden (`ksym_bpf_var_info.flags`).
pub const KSYM_BPF_VAR_GLOBAL: u32 = 1;

/// A variable of a data section (output struct: set `sz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ksym_bpf_var_info {
    /// sizeof(struct ksym_bpf_var_info), set by the caller.
    pub sz: usize,
    pub name: *const c_char,
    /// The data section's map (ksym_bpf_map_info: its name is the section's).
    pub map: usize,
    /// Where it is in the map's value, in bytes, as the object's BTF
    /// places it (offsets from the ELF where clang left them zero, as libbpf
    /// fixes them).
    pub offset: usize,
    pub size: usize,
    /// Its type in the object's BTF (ksym_bpf_object_btf).
    pub btf_type_id: u32,
    /// KSYM_BPF_VAR_*.
    pub flags: u32,
}

/// Number of variables in the object's data sections, by map, then offset.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_var_count(obj: *const ksym_bpf_object) -> usize {
    value_call(0, || {
        // SAFETY: `obj` as # Safety says.
        Ok(unsafe { obj_ref(obj) }?.vars().len())
    })
}

/// Describes variable `var` (set out->sz first).
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `out` is NULL or points to a writable struct of at least `out->sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_var_info(
    obj: *const ksym_bpf_object,
    var: usize,
    out: *mut ksym_bpf_var_info,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let v = unsafe { obj_ref(obj) }?.var(var)?;
        let info = ksym_bpf_var_info {
            sz: std::mem::size_of::<ksym_bpf_var_info>(),
            name: v.name.as_ptr(),
            map: v.map,
            offset: v.offset,
            size: v.size,
            btf_type_id: v.type_id,
            flags: if v.global { KSYM_BPF_VAR_GLOBAL } else { 0 },
        };
        // SAFETY: `out` as # Safety says.
        unsafe { write_out(out, info, "out") }?;
        Ok(0)
    })
}

/// Finds a variable by name. KSYM_ERR_NOT_FOUND lists the object's
/// variables; KSYM_ERR_AMBIGUOUS when several share the name (`static`
/// ones of files linked into one object), saying where each is: set their
/// section with ksym_bpf_map_set_initial_value then.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `name` is NULL or a NUL-terminated string; `var` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_find_var(
    obj: *const ksym_bpf_object,
    name: *const c_char,
    var: *mut usize,
) -> c_int {
    // SAFETY: `obj`, `name` and `var` as # Safety says.
    unsafe { find_by_name(obj, name, var, "var", Object::find_var) }
}

/// Sets variable `name` to the `size` bytes at `value` (`size` must be the
/// variable's) in its map's initial value, which ksym_bpf_map_info then
/// gives: call it before creating that map (after
/// ksym_bpf_object_set_map_fd it is KSYM_ERR_INVALID). A `.bss` variable
/// gives `.bss` an initial value (zero elsewhere), which the loader writes
/// with BPF_MAP_UPDATE_ELEM as for any data section. Not for `.kconfig`
/// externs, which ksym_bpf_object_resolve_btf fills in.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `name` is NULL or a NUL-terminated string; `value` is NULL or readable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_object_set_var(
    obj: *mut ksym_bpf_object,
    name: *const c_char,
    value: *const c_void,
    size: usize,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` and `name` as # Safety says.
        let o = unsafe { obj_mut(obj) }?;
        let n = unsafe { c_bytes(name, "name") }?;
        non_null(value, "value")?;
        // SAFETY: not NULL, so readable for `size` bytes (# Safety).
        let data = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), size) };
        o.set_var(n, data)?;
        Ok(0)
    })
}

/// Sets the whole initial value of data-section map `map` (`size` must be
/// its value size), before creating it, as libbpf's
/// bpf_map__set_initial_value; KSYM_ERR_INVALID for a map that is not a
/// data section's (`.maps` maps, `.kconfig`) or was created already.
///
/// # Safety
/// `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
/// not freed, used by no other thread during the call.
/// `data` is NULL or readable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ksym_bpf_map_set_initial_value(
    obj: *mut ksym_bpf_object,
    map: usize,
    data: *const c_void,
    size: usize,
) -> c_int {
    int_call(|| {
        // SAFETY: `obj` as # Safety says.
        let o = unsafe { obj_mut(obj) }?;
        non_null(data, "data")?;
        // SAFETY: not NULL, so readable for `size` bytes (# Safety).
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
        o.set_initial_value(map, bytes)?;
        Ok(0)
    })
}
