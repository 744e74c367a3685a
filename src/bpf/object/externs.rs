//! The object's externs, as libbpf sees them: untyped `__ksym` variables
//! (a kernel address, from kallsyms), typed ones (the kernel's BTF id of
//! the variable: `BPF_PSEUDO_BTF_ID`), kfuncs (the kernel function's BTF
//! id: `BPF_PSEUDO_KFUNC_CALL`) and `.kconfig` variables (values from the
//! kernel's configuration, read by the program from the `.kconfig` map).
//!
//! The open finds them (`open/collect_externs.rs`, and the relocations
//! name untyped ones), the link resolves them (`link/ksyms.rs`,
//! `link/externs.rs`) and writes the `.kconfig` map's value
//! (`link/kconfig_values.rs`).

use std::ffi::CString;

/// What an extern is (values are the C API's `enum ksym_bpf_extern_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExternKind {
    /// `extern const void x __ksym;`: its kernel address.
    Ksym = 1,
    /// `extern const struct rq runqueues __ksym;`: its BTF id.
    KsymBtf = 2,
    /// `extern struct task_struct *bpf_task_from_pid(s32) __ksym;`.
    Kfunc = 3,
    /// `extern unsigned int CONFIG_HZ __kconfig;`.
    Kconfig = 4,
    /// `extern const void ksym_alias_value __ksym __weak;`: a per-alias
    /// constant, the value the loader gave the program or alias
    /// ([`crate::bpf::Object::alias_insns`]); 0 in the shared copy.
    AliasValue = 5,
    /// `extern const void ksym_alias_addr __ksym __weak;`: a per-alias
    /// constant, the kernel address of the function the program or alias
    /// attaches to; 0 in the shared copy.
    AliasAddr = 6,
}

/// The reserved names of the per-alias constants, and their kinds.
const ALIAS_EXTERNS: [(&str, ExternKind); 2] = [
    ("ksym_alias_value", ExternKind::AliasValue),
    ("ksym_alias_addr", ExternKind::AliasAddr),
];

/// The per-alias constant `name` names, if it is a reserved name.
fn alias_kind(name: &[u8]) -> Option<ExternKind> {
    ALIAS_EXTERNS
        .iter()
        .find(|(n, _)| n.as_bytes() == name)
        .map(|&(_, k)| k)
}

impl ExternKind {
    /// A per-alias constant ([`ExternKind::AliasValue`], [`ExternKind::AliasAddr`]).
    pub fn is_alias(self) -> bool {
        matches!(self, ExternKind::AliasValue | ExternKind::AliasAddr)
    }
}

/// How a `.kconfig` value is stored (libbpf's `enum kcfg_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KcfgType {
    /// `bool` (1 byte, 0 or 1).
    Bool,
    /// `char` (1 byte): a tristate as its letter (`y`, `n`, `m`), or a number.
    Char,
    /// `enum libbpf_tristate`: n 0, y 1, m 2.
    Tristate,
    /// A signed or unsigned integer of 1, 2, 4 or 8 bytes.
    Int,
    /// `char[N]`: a string value, NUL-padded.
    CharArr,
}

/// A `.kconfig` extern's place in the `.kconfig` map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kcfg {
    /// How the value is stored.
    pub ty: KcfgType,
    /// Its size in bytes.
    pub size: u32,
    /// Its alignment in the map.
    pub align: u32,
    /// Whether an `Int` is signed.
    pub signed: bool,
    /// Offset of its value in the map (libbpf's layout).
    pub off: u32,
}

/// An extern of the object.
#[derive(Clone, Debug)]
pub struct Extern {
    /// May be module-qualified (`ext4`ext4_file_open`) through an asm label.
    pub name: CString,
    /// What it refers to: a kernel symbol, a BTF type, a kfunc or a
    /// `.kconfig` value.
    pub kind: ExternKind,
    /// Declared `__weak`: it may be absent (0, or a poisoned call).
    pub weak: bool,
    /// Ksym: found in kallsyms; KsymBtf, Kfunc: found in the kernel's BTF;
    /// Kconfig: its value was set.
    pub resolved: bool,
    /// Ksym: its address (0 when weak and missing).
    pub addr: u64,
    /// KsymBtf, Kfunc: the kernel's BTF id (0 when weak and missing).
    pub btf_id: u32,
    /// KsymBtf, Kfunc: 0 for vmlinux, the module BTF's fd, -1 when the
    /// module's BTF has no fd here (read from files).
    pub btf_obj_fd: i32,
    /// Kfunc: index of the module's fd in the fd array (0 for vmlinux).
    pub fd_idx: i16,
    /// KsymBtf, Kfunc: where it was found (`vmlinux` or the module).
    pub module: Option<CString>,
    /// Kconfig: its place in the `.kconfig` map.
    pub kcfg: Option<Kcfg>,
    /// KsymBtf: the local type (modifiers and typedefs skipped); Kfunc: the
    /// local FUNC_PROTO.
    pub(in crate::bpf) local_type: u32,
    /// Its index among libbpf's externs (`.kconfig` ones first, in their
    /// layout order, then the others by name), which libbpf writes into
    /// a poisoned call of a missing weak kfunc.
    pub(crate) libbpf_idx: usize,
}

impl Extern {
    /// An untyped ksym named by a relocation only (no BTF for it).
    pub(in crate::bpf) fn untyped(name: CString, weak: bool) -> Extern {
        let alias = alias_kind(name.to_bytes());
        Extern {
            name,
            kind: alias.unwrap_or(ExternKind::Ksym),
            weak,
            resolved: alias.is_some(),
            addr: 0,
            btf_id: 0,
            btf_obj_fd: 0,
            fd_idx: 0,
            module: None,
            kcfg: None,
            local_type: 0,
            libbpf_idx: 0,
        }
    }

    pub(in crate::bpf) fn shown(&self) -> std::borrow::Cow<'_, str> {
        self.name.to_string_lossy()
    }
}

/// The size of the `.kconfig` map's value: the end of its last extern.
pub(in crate::bpf) fn kconfig_size(externs: &[Extern]) -> u32 {
    externs
        .iter()
        .filter_map(|x| x.kcfg)
        .map(|k| k.off.saturating_add(k.size))
        .max()
        .unwrap_or(0)
}
