//! What a struct_ops map and a struct_ops program hold of their struct
//! (the model's part; `struct_ops` fills it in).

use std::ffi::CString;

/// A struct_ops map's own part.
#[derive(Clone, Debug)]
pub struct StructOps {
    /// ELF section index and the variable's offset in it.
    pub(super) sec: usize,
    pub(super) sec_offset: u64,
    /// The variable's struct in the object's BTF, and its name.
    pub(super) local_type: u32,
    pub(super) tname: Vec<u8>,
    /// The variable's bytes.
    pub(super) data: Vec<u8>,
    /// (local member index, program) of each function pointer set.
    pub(super) funcs: Vec<(u32, usize)>,
    /// After `struct_ops::resolve`: the value BPF_MAP_UPDATE_ELEM registers (the
    /// kernel's `bpf_struct_ops_<name>`), program fds not yet in it.
    pub value: Option<Vec<u8>>,
}

/// What a struct_ops program attaches to: a member of a struct_ops struct.
#[derive(Clone, Debug)]
pub(super) struct OpsMember {
    /// The local struct and member index (libbpf checks that a program
    /// shared by several maps is the same member of the same struct).
    pub(super) local_type: u32,
    pub(super) local_member: u32,
    /// `struct.member`, for people.
    pub text: CString,
    /// After `struct_ops::resolve`: the kernel struct's BTF id and the member's index.
    pub kernel: Option<(u32, u32)>,
}
