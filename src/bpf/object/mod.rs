//! The model of a parsed object: its programs, maps, externs, layouts and
//! where it is in its pipeline ([`Stage`]); the accessors that only read
//! it, and the state each phase keeps in it (`attach`: the attach state of
//! a program; `externs`; `struct_ops`). The phases that fill it in
//! (`open/`, `link/`, `attach/`, `load/`) build on this folder, never the
//! other way round.

pub(in crate::bpf) mod attach;
pub(in crate::bpf) mod externs;
pub(in crate::bpf) mod struct_ops;

use std::ffi::CString;
use std::sync::Arc;

use crate::bpf::core;
use crate::bpf::insn::Insn;
use crate::btf::KernelBtf;
use crate::error::{Error, Result};
use crate::formats::btf::Btf as LocalBtf;
use externs::Extern;
use struct_ops::StructOps;

/// What a relocation writes (values are the C API's `enum ksym_bpf_reloc_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelocKind {
    /// ld_imm64 ← kernel address of an extern.
    Ksym = 1,
    /// ld_imm64 ← map fd.
    MapFd = 2,
    /// ld_imm64 ← data-section map + offset.
    MapValue = 3,
    /// bpf-to-bpf call.
    Call = 4,
    /// ld_imm64 ← address of a subprogram (callbacks).
    Func = 5,
    /// A CO-RE relocation: the instruction's offset or immediate.
    Core = 6,
    /// ld_imm64 ← BTF id of a typed ksym (`BPF_PSEUDO_BTF_ID`).
    KsymBtf = 7,
    /// call ← BTF id of a kfunc (`BPF_PSEUDO_KFUNC_CALL`).
    Kfunc = 8,
    /// ld_imm64 ← the `.kconfig` map + the extern's offset.
    Kconfig = 9,
    /// ld_imm64 ← a per-alias constant (`ksym_alias_value`,
    /// `ksym_alias_addr`): 0 in the shared copy, each program's or alias's
    /// own value in [`Object::alias_insns`].
    Alias = 10,
}

/// [`Reloc::flags`]: the value is final (after [`Object::resolve_btf`]).
pub const RELOC_RESOLVED: u32 = 1;
/// [`Reloc::flags`]: a CO-RE relocation that poisons its instruction.
pub const RELOC_POISONED: u32 = 2;

/// A relocation of a program, in final instruction indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    /// The instruction it writes, in the program's final instructions.
    pub insn_idx: usize,
    /// What it writes.
    pub kind: RelocKind,
    /// The subprogram name (Call, Func); for Core, the local type and
    /// access string as libbpf prints them; `None` for the others, whose
    /// name is their target's (map, data section, extern): see
    /// [`Object::reloc_symbol`], which every reader goes through.
    pub name: Option<CString>,
    /// Map index (MapFd, MapValue), extern index (Ksym, KsymBtf, Kfunc,
    /// Kconfig), final instruction index of the callee (Call, Func), or
    /// the CO-RE relocation kind (Core).
    pub target: usize,
    /// MapValue: the offset in the data section; Kconfig: the offset in
    /// the `.kconfig` map; after resolve_btf, Core: the value written,
    /// KsymBtf and Kfunc: the kernel's BTF id.
    pub addend: i64,
    /// RELOC_*.
    pub flags: u32,
}

/// A program: a global or weak function of an executable section other
/// than `.text`.
#[derive(Clone, Debug)]
pub struct Program {
    /// Its symbol name (an alias's is the name given to it).
    pub name: CString,
    /// Shared by the program and its aliases.
    pub section: std::sync::Arc<std::ffi::CStr>,
    /// The program whose instructions this one shares (its own index if none).
    pub alias_of: usize,
    /// Offset in the section, in instructions.
    pub insn_off: usize,
    /// Instructions of the function itself.
    pub insn_cnt: usize,
    /// Index of the layout (shared by aliases).
    pub(super) layout: usize,
    /// ELF section index.
    pub(super) sec: usize,
    /// Where it attaches: the section's definition, the target it names.
    pub(super) attach: attach::Attach,
    /// Whether a loader loads it (libbpf's autoload): off for a `?`
    /// section.
    pub(super) autoload: bool,
    /// The value of its `ksym_alias_value` (`None`: its own index).
    pub(super) alias_value: Option<u64>,
}

/// A map: a BTF-defined `.maps` variable or a data section.
#[derive(Clone, Debug)]
pub struct Map {
    /// Its name: the `.maps` variable's, or the data section's libbpf
    /// name (`.rodata`, `.data.custom`...).
    pub name: CString,
    /// The ELF section it comes from.
    pub section: CString,
    /// `BPF_MAP_TYPE_*`.
    pub map_type: u32,
    /// Key size in bytes.
    pub key_size: u32,
    /// Value size in bytes.
    pub value_size: u32,
    /// `max_entries` of `BPF_MAP_CREATE`.
    pub max_entries: u32,
    /// `map_flags` of `BPF_MAP_CREATE` (`BPF_F_*`).
    pub map_flags: u32,
    /// The key's and value's types in the object's BTF (0: none); a data
    /// section's value is its DATASEC.
    pub btf_key_type_id: u32,
    /// See `btf_key_type_id`.
    pub btf_value_type_id: u32,
    /// `map_extra` of `BPF_MAP_CREATE` (bloom filter hashes, arena address).
    pub map_extra: u64,
    /// `numa_node` of `BPF_MAP_CREATE`.
    pub numa_node: u32,
    /// Maps of maps: the inner map's (template's) type, key and value
    /// sizes, max entries, flags, and BTF key and value type ids.
    pub inner: Option<[u32; 7]>,
    /// struct_ops maps: the kernel's `bpf_struct_ops_<name>` (after
    /// resolve_btf), BPF_MAP_CREATE's btf_vmlinux_value_type_id.
    pub btf_vmlinux_value_type_id: u32,
    /// Initial slots (`.values = { [i] = &map_or_prog }`), by slot; for a
    /// struct_ops map (after resolve_btf), its programs by value offset.
    pub slots: Vec<Slot>,
    /// Data sections: initial contents (`None` for `.bss`).
    pub initial_value: Option<Vec<u8>>,
    /// struct_ops maps: the variable and what resolve_btf made of it.
    pub struct_ops: Option<Box<StructOps>>,
    /// The fd the loader created it with ([`Object::set_map_fd`]).
    pub fd: Option<i32>,
}

/// A variable of a data section (`.rodata`, `.data`, `.bss` and their
/// `.name` variants), as its DATASEC in the object's BTF places it (after
/// libbpf's fixups: offsets from the ELF symbols where clang left them
/// zero). What a libbpf skeleton's `obj->rodata->x` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    /// The variable's name.
    pub name: CString,
    /// The data section's map (an index of [`Object::maps`]).
    pub map: usize,
    /// Its offset in the map's value, in bytes.
    pub offset: usize,
    /// Its size in bytes.
    pub size: usize,
    /// The variable's type in the object's BTF (a `VAR`'s type).
    pub type_id: u32,
    /// Global (`BTF_VAR_GLOBAL_ALLOCATED`), not `static` or hidden.
    pub global: bool,
}

/// An initial slot of a map of maps (a map) or a program array (a program).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The slot's index (a struct_ops map: the byte offset in its value).
    pub index: u32,
    /// What goes in it.
    pub target: SlotTarget,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// What an initial slot holds: a map or a program, by index in the
/// object.
pub enum SlotTarget {
    /// The fd of map `usize` (a map of maps).
    Map(usize),
    /// The fd of program `usize` (a program array).
    Program(usize),
    /// A program whose fd goes, as a u64, at byte `index` of a struct_ops
    /// map's value.
    StructOps(usize),
}

/// A program's final code: its instructions and the subprograms it calls.
#[derive(Clone, Debug, Default)]
pub(super) struct ProgLayout {
    /// The program the layout was made for (its target, not an alias).
    pub(super) owner: usize,
    /// The instructions as laid out (calls patched), before relocation,
    /// kept when relocate must start from them again (CO-RE, typed ksyms,
    /// kfuncs); empty otherwise, `insns` then being patched in place.
    pub(super) base: Vec<Insn>,
    /// The final instructions (after relocate).
    pub(super) insns: Vec<Insn>,
    pub(super) relocs: Vec<Reloc>,
    /// CO-RE relocations: (final instruction index, site).
    pub(super) core: Vec<(usize, usize)>,
    /// `struct bpf_func_info` records (8 bytes), insn_off in final indices.
    pub(super) func_info: Vec<u8>,
    /// `struct bpf_line_info` records (16 bytes).
    pub(super) line_info: Vec<u8>,
    /// Why the last relocate left this layout unwritten (only programs
    /// with autoload off use it, and it could not be relocated).
    pub(super) skipped: Option<Box<Error>>,
}

/// One CO-RE record of `.BTF.ext`, resolved once for every layout that
/// holds its instruction.
#[derive(Clone, Debug)]
pub(super) struct CoreSite {
    pub(super) rec: core::CoreRecord,
    /// The local type and access string as libbpf prints them.
    pub(super) text: CString,
    /// The program or subprogram it belongs to, for messages.
    pub(super) owner: String,
    /// In some layout (others, like libbpf's leftovers of overridden weak
    /// subprograms, are not resolved).
    pub(super) used: bool,
    /// After resolve_btf.
    pub(super) res: Option<Result<core::CoreResolution>>,
}

/// A parsed BPF object.
pub struct Object {
    pub(super) license: CString,
    pub(super) programs: Vec<Program>,
    pub(super) maps: Vec<Map>,
    pub(super) externs: Vec<Extern>,
    pub(super) layouts: Vec<ProgLayout>,
    /// The object's BTF made loadable (None without .BTF).
    pub(super) btf: Option<Vec<u8>>,
    /// The object's BTF as written (CO-RE specs, extern types).
    pub(super) local_btf: Option<LocalBtf>,
    pub(super) core_sites: Vec<CoreSite>,
    /// The `.kconfig` map, if the object has `.kconfig` externs.
    pub(super) kconfig_map: Option<usize>,
    /// The data sections' maps, in map order (`.kconfig` is not one).
    pub(super) data_maps: Vec<usize>,
    /// The data sections' variables, by map, then offset.
    pub(super) vars: Vec<Var>,
    /// Module BTF fds of kfunc calls (insn.off indexes it).
    pub(super) fd_array: Vec<i32>,
    /// Where it is in its pipeline.
    pub(super) stage: Stage,
}

/// What resolve_btf found: the kernel BTF (kept: it holds the module BTF
/// fds written into instructions open), and why the externs failed, if
/// they did.
#[derive(Clone, Debug)]
pub(super) struct KernelStep {
    /// Held, never read: the module BTF fds in the instructions are its.
    #[allow(dead_code)]
    pub kernel: Arc<KernelBtf>,
    pub failed: Option<Error>,
}

/// Where an object is in its pipeline, in one value: parsed, then
/// [`Object::resolve_ksyms`] and [`Object::resolve_btf`] in either order
/// (each may be taken again), then [`Object::relocate`]. A resolve_btf
/// undoes a relocate (the layouts must be written again), and so does a
/// relocate that fails; a resolve_ksyms keeps it, as it always did. Every
/// reader asks it through one match (`Stage::facts`), and the only ways
/// to change it are the transitions below.
#[derive(Clone, Debug)]
pub(super) enum Stage {
    /// resolve_btf not taken; `ksyms`: resolve_ksyms was.
    Parsed { ksyms: bool },
    /// resolve_btf taken, relocate not (or since undone).
    BtfResolved { ksyms: bool, btf: Box<KernelStep> },
    /// relocate succeeded, after what the other two stages say.
    Relocated {
        ksyms: bool,
        btf: Option<Box<KernelStep>>,
    },
}

impl Stage {
    /// The pipeline's facts, whatever the stage: resolve_ksyms taken,
    /// resolve_btf's result, relocated.
    fn facts(&self) -> (bool, Option<&KernelStep>, bool) {
        match self {
            Stage::Parsed { ksyms } => (*ksyms, None, false),
            Stage::BtfResolved { ksyms, btf } => (*ksyms, Some(btf), false),
            Stage::Relocated { ksyms, btf } => (*ksyms, btf.as_deref(), true),
        }
    }

    pub fn is_relocated(&self) -> bool {
        self.facts().2
    }

    /// resolve_btf's result, if it was taken.
    pub fn btf(&self) -> Option<&KernelStep> {
        self.facts().1
    }

    /// Whether resolve_ksyms was taken.
    pub fn ksyms(&self) -> bool {
        self.facts().0
    }

    /// resolve_ksyms succeeded.
    pub fn ksyms_resolved(&mut self) {
        match self {
            Stage::Parsed { ksyms }
            | Stage::BtfResolved { ksyms, .. }
            | Stage::Relocated { ksyms, .. } => *ksyms = true,
        }
    }

    /// resolve_btf ran (whatever it found): the layouts are to be written
    /// again.
    pub fn btf_resolved(&mut self, step: KernelStep) {
        let ksyms = self.facts().0;
        *self = Stage::BtfResolved {
            ksyms,
            btf: Box::new(step),
        };
    }

    /// relocate starts: until it succeeds, the layouts are not written.
    pub fn relocating(&mut self) {
        if let Stage::Relocated { ksyms, btf } = self {
            let ksyms = *ksyms;
            *self = match btf.take() {
                Some(btf) => Stage::BtfResolved { ksyms, btf },
                None => Stage::Parsed { ksyms },
            };
        }
    }

    /// relocate succeeded.
    pub fn relocated(&mut self) {
        let ksyms = self.facts().0;
        let btf = match std::mem::replace(self, Stage::Parsed { ksyms }) {
            Stage::Parsed { .. } => None,
            Stage::BtfResolved { btf, .. } => Some(btf),
            Stage::Relocated { btf, .. } => btf,
        };
        *self = Stage::Relocated { ksyms, btf };
    }
}

impl Program {
    /// A new alias of `self` (which must not be an alias itself) at index
    /// `root`, named `name`.
    pub(super) fn alias(&self, root: usize, name: CString) -> Program {
        Program {
            name,
            alias_of: root,
            alias_value: None,
            ..self.clone()
        }
    }
}

/// `struct bpf_func_info` size.
pub const FUNC_INFO_SIZE: usize = 8;
/// `struct bpf_line_info` size.
pub const LINE_INFO_SIZE: usize = 16;

/// `items[i]`, or KSYM_ERR_NOT_FOUND saying how many `owner` has.
pub(super) fn nth<'a, T>(items: &'a [T], i: usize, what: &str, owner: &str) -> Result<&'a T> {
    items
        .get(i)
        .ok_or_else(|| Error::not_found(format!("no {what} {i}: {owner} has {}", items.len())))
}
