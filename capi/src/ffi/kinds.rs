//! Names of kernel kinds: `enum bpf_prog_type`, `enum bpf_attach_type` and
//! `enum bpf_map_type` values as libbpf spells them ("tracing",
//! "trace_fentry", "hash"), BTF kinds as the kernel does ("STRUCT"). Static
//! strings; NULL for a value this version does not know. Like
//! ksym_strerror, they neither set nor clear the last error, so they may
//! be called while an error is being reported.

use std::ffi::{c_char, CStr};

use ksym::bpf as kinds;

fn ptr(name: Option<&'static CStr>) -> *const c_char {
    name.map_or(std::ptr::null(), CStr::as_ptr)
}

/// The name of an `enum bpf_prog_type` value (libbpf_bpf_prog_type_str's).
#[no_mangle]
pub extern "C" fn ksym_bpf_prog_type_str(prog_type: u32) -> *const c_char {
    ptr(kinds::prog_type_name(prog_type))
}

/// The name of an `enum bpf_attach_type` value (libbpf_bpf_attach_type_str's).
#[no_mangle]
pub extern "C" fn ksym_bpf_attach_type_str(attach_type: u32) -> *const c_char {
    ptr(kinds::attach_type_name(attach_type))
}

/// The name of an `enum bpf_map_type` value (libbpf_bpf_map_type_str's).
#[no_mangle]
pub extern "C" fn ksym_bpf_map_type_str(map_type: u32) -> *const c_char {
    ptr(kinds::map_type_name(map_type))
}

/// The name of a BTF kind (`BTF_KIND_*`), as the kernel and bpftool print it.
#[no_mangle]
pub extern "C" fn ksym_btf_kind_str(kind: u32) -> *const c_char {
    ptr(ksym::btf_kind_name(kind))
}
