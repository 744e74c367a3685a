//! Opening an object, in named phases as libbpf's `bpf_object_open`:
//!
//! 1. `elf_init` ([`crate::bpf::elf::Elf::parse`]): the header, sections and
//!    symbols;
//! 2. [`elf_collect`]: the license, the BTF, the code sections and the
//!    programs;
//! 3. [`collect_externs`]: the externs the BTF describes;
//! 4. [`init_maps`]: the BTF-defined maps, the data sections', `.kconfig`'s
//!    and the struct_ops maps, in libbpf's order;
//! 5. [`collect_relos`]: what each relocation of the code points at (and
//!    the untyped ksyms only relocations name), map slots, struct_ops
//!    programs;
//! 6. [`layouts`]: the loadable BTF, the CO-RE sites, and each program's
//!    layout (libbpf does this part at load, in `bpf_object__relocate`).
//!
//! Each phase is a function of its own, taking what the earlier ones made.

mod collect_externs;
mod collect_relos;
mod elf_collect;
mod fixup_btf;
mod init_maps;
mod layouts;
pub(crate) mod map_def;
mod maps;
mod object;

use std::ffi::CString;

use crate::base::hash::KeyMap;

use crate::bpf::elf::btf_ext::BtfExt;
use crate::bpf::elf::Elf;
use crate::bpf::insn::Insns;
use crate::bpf::link::reloc::RelocTarget;
use crate::bpf::object::externs::Extern;
use crate::bpf::object::{Map, Object};
use crate::error::Result;
use crate::formats::btf::Btf;

/// What [`elf_collect`] finds, besides the programs.
struct Collected<'a> {
    license: CString,
    /// `.text`, if it is code.
    text: Option<usize>,
    /// `.maps`.
    maps_sec: Option<usize>,
    /// The object's BTF (maps, externs, CO-RE; the loadable BTF is an
    /// edited copy of it).
    local: Option<Btf>,
    /// The code sections' instructions, by section.
    code: KeyMap<usize, Insns<'a>>,
}

/// What [`collect_externs`] finds (and [`collect_relos`] adds to).
struct Externs {
    list: Vec<Extern>,
    by_name: KeyMap<Vec<u8>, usize>,
}

/// What [`init_maps`] makes.
#[derive(Default)]
struct Maps {
    list: Vec<Map>,
    /// `.maps` map by (section, symbol value).
    of_symbol: KeyMap<(usize, u64), usize>,
    /// `.maps` definitions' (offset, size, values offset, map).
    values: Vec<(u64, u64, u64, usize)>,
    /// Data-section map by section.
    data: KeyMap<usize, usize>,
    kconfig: Option<usize>,
    /// The struct_ops sections.
    struct_ops_secs: Vec<usize>,
}

/// Per code section: (instruction, what its relocation points at), by
/// instruction.
type Targets = KeyMap<usize, Vec<(usize, RelocTarget)>>;

/// The whole open, phase by phase.
fn load(data: &[u8]) -> Result<Object> {
    let elf = Elf::parse(data)?;
    let (c, mut programs) = elf_collect::collect(&elf)?;
    // `.BTF.ext` names its sections by offsets into the string section of
    // `.BTF`: the names are borrowed from the ELF's bytes, where the BTF
    // reader found that section.
    let ext = match (elf.by_name(b".BTF.ext"), elf.by_name(b".BTF"), &c.local) {
        (Some(i), Some(b), Some(local)) => {
            let strings = elf.secs[b].data.get(local.string_range()).unwrap_or(b"");
            Some(BtfExt::parse(elf.secs[i].data, strings)?)
        }
        _ => None,
    };
    let mut externs = collect_externs::collect(&elf, c.local.as_ref())?;
    let mut maps = init_maps::init(&elf, &c, &externs.list)?;
    let targets = collect_relos::collect(&elf, &c, &mut programs, &mut maps, &mut externs)?;
    let parts = (programs, maps, externs.list, targets);
    layouts::finish(&elf, c, ext.as_ref(), parts)
}
