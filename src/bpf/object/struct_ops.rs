//! What a struct_ops map and a struct_ops program hold of their struct
//! (the model's part; `struct_ops` fills it in).

use std::ffi::CString;

/// A struct_ops map's own part.
#[derive(Clone, Debug)]
pub struct StructOps {
    /// ELF section index and the variable's offset in it.
    pub(in crate::bpf) sec: usize,
    pub(in crate::bpf) sec_offset: u64,
    /// The variable's struct in the object's BTF, and its name.
    pub(in crate::bpf) local_type: u32,
    pub(in crate::bpf) tname: Vec<u8>,
    /// The variable's bytes.
    pub(in crate::bpf) data: Vec<u8>,
    /// (local member index, program) of each function pointer set.
    pub(in crate::bpf) funcs: Vec<(u32, usize)>,
    /// After `struct_ops::resolve`: the value BPF_MAP_UPDATE_ELEM registers (the
    /// kernel's `bpf_struct_ops_<name>`), program fds not yet in it.
    pub value: Option<Vec<u8>>,
}

/// What a struct_ops program attaches to: a member of a struct_ops struct.
#[derive(Clone, Debug)]
pub(in crate::bpf) struct OpsMember {
    /// The local struct and member index (libbpf checks that a program
    /// shared by several maps is the same member of the same struct).
    pub(in crate::bpf) local_type: u32,
    pub(in crate::bpf) local_member: u32,
    /// `struct.member`, for people.
    pub text: CString,
    /// After `struct_ops::resolve`: the kernel struct's BTF id and the member's index.
    pub kernel: Option<(u32, u32)>,
}
