//! Linking an object to the kernel, after the open: each program's
//! layout (`reloc`: its code and the subprograms it calls, every
//! relocation recorded; made at open), the externs resolved (`ksyms`:
//! untyped ones in kallsyms; `externs`: typed ksyms and kfuncs in the
//! kernel's BTF; `kconfig_values`: the `.kconfig` map's value), and
//! everything written into the layouts (`relocate`).

pub(in crate::bpf) mod externs;
pub(in crate::bpf) mod kconfig_values;
pub(in crate::bpf) mod reloc;
pub(in crate::bpf) mod relocate;
