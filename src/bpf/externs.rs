//! The object's externs, as libbpf sees them: untyped `__ksym` variables
//! (a kernel address, from kallsyms), typed ones (the kernel's BTF id of
//! the variable: `BPF_PSEUDO_BTF_ID`), kfuncs (the kernel function's BTF
//! id: `BPF_PSEUDO_KFUNC_CALL`) and `.kconfig` variables (values from the
//! kernel's configuration, read by the program from the `.kconfig` map).
//!
//! Typed ksyms and kfuncs are looked up with the one query grammar
//! (`name`, or `module`name` through an asm label) and the BTF answer
//! rules: vmlinux first, then the modules, ambiguous between modules.

use std::ffi::CString;

use crate::btf::KernelBtf;
use crate::error::{Error, Result, INVALID, NOT_FOUND};
use crate::formats::btf::{self as fbtf, Btf, Ty};
use crate::rules::query::Query;

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
    /// ([`super::object::Object::alias_insns`]); 0 in the shared copy.
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
    local_type: u32,
    /// Its index among libbpf's externs (`.kconfig` ones first, in their
    /// layout order, then the others by name), which libbpf writes into
    /// a poisoned call of a missing weak kfunc.
    pub(crate) libbpf_idx: usize,
}

impl Extern {
    /// An untyped ksym named by a relocation only (no BTF for it), or a
    /// per-alias constant (a reserved name), which needs no resolving.
    pub(super) fn untyped(name: CString, weak: bool) -> Extern {
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

    pub(super) fn shown(&self) -> std::borrow::Cow<'_, str> {
        self.name.to_string_lossy()
    }
}

/// The externs the object's BTF describes: the VARs and FUNCs of the
/// `.ksyms` and `.kconfig` DATASECs, in that order; `weak` says whether
/// the ELF symbol of a name is weak. `.kconfig` externs get libbpf's
/// layout of the `.kconfig` map.
pub(super) fn collect(btf: &Btf, weak: impl Fn(&[u8]) -> bool) -> Result<Vec<Extern>> {
    let mut out = Vec::new();
    for sec in [&b".ksyms"[..], b".kconfig"] {
        let Some(ds) = btf
            .own_ids()
            .filter_map(|id| btf.ty(id))
            .find(|t| t.kind() == fbtf::KIND_DATASEC && btf.str(t.name_off) == sec)
        else {
            continue;
        };
        for (vid, _, _) in ds.datasec() {
            let Some(v) = btf.ty(vid) else { continue };
            let name = btf.str(v.name_off);
            let cname = CString::new(name).unwrap_or_default();
            let mut x = Extern::untyped(cname, weak(name));
            let shown = String::from_utf8_lossy(name);
            match (sec == b".kconfig", v.kind()) {
                (false, fbtf::KIND_FUNC) if x.kind.is_alias() => {
                    return Err(Error::invalid(format!(
                        "extern function `{shown}` is a reserved name, a per-alias constant: \
                         declare it `extern const void {shown} __ksym __weak;`"
                    )))
                }
                (false, fbtf::KIND_FUNC) => {
                    x.kind = ExternKind::Kfunc;
                    x.local_type = v.type_id();
                }
                (false, fbtf::KIND_VAR) => {
                    x.local_type = btf.resolve(v.type_id())?;
                    if x.local_type != 0 && x.kind.is_alias() {
                        return Err(Error::invalid(format!(
                            "extern `{shown}` is a reserved name, a per-alias constant: declare it \
                             untyped, `extern const void {shown} __ksym __weak;`"
                        )));
                    }
                    if x.local_type != 0 {
                        x.kind = ExternKind::KsymBtf;
                    }
                }
                (true, fbtf::KIND_FUNC) => {
                    return Err(Error::unsupported(format!(
                        "extern function `{shown}` is in `.kconfig`: only variables can be"
                    )))
                }
                (true, fbtf::KIND_VAR) => {
                    x.kind = ExternKind::Kconfig;
                    x.kcfg = Some(kcfg_of(btf, v, &shown)?);
                }
                _ => continue,
            }
            out.push(x);
        }
    }
    layout_kconfig(&mut out);
    if kconfig_size(&out) > MAX_KCONFIG_MAP {
        return Err(Error::unsupported(format!(
            "the `.kconfig` externs need more than {} KiB: a broken object",
            MAX_KCONFIG_MAP >> 10
        )));
    }
    Ok(out)
}

/// Numbers the externs as libbpf orders them (`cmp_externs`): `.kconfig`
/// ones first, by descending alignment, ascending size and name, then the
/// `__ksym` ones by name.
pub(super) fn number_as_libbpf(externs: &mut [Extern]) {
    let mut order: Vec<usize> = (0..externs.len()).collect();
    let key = |x: &Extern| {
        let k = x.kcfg.map(|k| (std::cmp::Reverse(k.align), k.size));
        (x.kcfg.is_none(), k)
    };
    order.sort_by(|&a, &b| {
        let (x, y) = (&externs[a], &externs[b]);
        key(x).cmp(&key(y)).then_with(|| x.name.cmp(&y.name))
    });
    for (n, i) in order.into_iter().enumerate() {
        externs[i].libbpf_idx = n;
    }
}

/// A `.kconfig` VAR's type, size and alignment (libbpf's
/// `find_kcfg_type`, `btf__resolve_size`, `btf__align_of`).
fn kcfg_of(btf: &Btf, v: Ty<'_>, name: &str) -> Result<Kcfg> {
    let bad = |why: &str| Error::unsupported(format!("extern `{name}` (.kconfig): {why}"));
    let size = btf
        .size_of(v.type_id())?
        .filter(|&s| s > 0)
        .ok_or_else(|| bad("no size"))?;
    let align = btf
        .align_of(v.type_id())?
        .ok_or_else(|| bad("no alignment"))?;
    let (ty, signed) = kcfg_type(btf, v.type_id())?.ok_or_else(|| {
        bad(
            "type is unsupported: use bool, char, an integer of 1 to 8 bytes, \
             enum libbpf_tristate or a char array",
        )
    })?;
    // A config value is a few bytes (a string: a few hundred): a huge one
    // is a broken object, and would make a huge map.
    if size > MAX_KCFG as u64 {
        return Err(bad(&format!("{size} bytes: more than {MAX_KCFG}")));
    }
    Ok(Kcfg {
        ty,
        size: size as u32,
        align,
        signed,
        off: 0,
    })
}

/// libbpf's `find_kcfg_type`: (type, signed) or `None` when unsupported.
fn kcfg_type(btf: &Btf, id: u32) -> Result<Option<(KcfgType, bool)>> {
    let id = btf.resolve(id)?;
    let Some(t) = btf.ty(id) else { return Ok(None) };
    const INT_SIGNED: u32 = 1;
    const INT_BOOL: u32 = 4;
    Ok(match t.kind() {
        fbtf::KIND_INT => {
            let (enc, _, _) = t.int();
            if enc & INT_BOOL != 0 {
                (t.size() == 1).then_some((KcfgType::Bool, false))
            } else if t.size() == 1 {
                Some((KcfgType::Char, enc & INT_SIGNED != 0))
            } else if t.size() > 8 || !t.size().is_power_of_two() {
                None
            } else {
                Some((KcfgType::Int, enc & INT_SIGNED != 0))
            }
        }
        fbtf::KIND_ENUM if t.size() != 4 => None,
        fbtf::KIND_ENUM64 if t.size() < 4 => None,
        fbtf::KIND_ENUM | fbtf::KIND_ENUM64 => {
            (btf.str(t.name_off) == b"libbpf_tristate").then_some((KcfgType::Tristate, false))
        }
        fbtf::KIND_ARRAY => {
            let (elem, _, n) = t.array();
            match kcfg_type(btf, elem)? {
                Some((KcfgType::Char, _)) if n > 0 => Some((KcfgType::CharArr, false)),
                _ => None,
            }
        }
        _ => None,
    })
}

/// The largest `.kconfig` extern, and the largest `.kconfig` map.
const MAX_KCFG: u32 = 1 << 16;
const MAX_KCONFIG_MAP: u32 = 1 << 20;

/// libbpf's layout of the `.kconfig` map: externs by descending
/// alignment, then ascending size, then name, each at the next offset
/// aligned for it.
fn layout_kconfig(externs: &mut [Extern]) {
    let mut order: Vec<usize> = (0..externs.len())
        .filter(|&i| externs[i].kcfg.is_some())
        .collect();
    let key = |i: usize| {
        let k = externs[i].kcfg.expect("kconfig");
        (std::cmp::Reverse(k.align), k.size)
    };
    order.sort_by(|&a, &b| {
        key(a)
            .cmp(&key(b))
            .then_with(|| externs[a].name.cmp(&externs[b].name))
    });
    let mut off = 0u32;
    for i in order {
        let k = externs[i].kcfg.as_mut().expect("kconfig");
        k.off = off
            .checked_next_multiple_of(k.align.max(1))
            .unwrap_or(u32::MAX);
        off = k.off.saturating_add(k.size);
    }
}

/// The size of the `.kconfig` map's value: the end of its last extern.
pub(super) fn kconfig_size(externs: &[Extern]) -> u32 {
    externs
        .iter()
        .filter_map(|x| x.kcfg)
        .map(|k| k.off.saturating_add(k.size))
        .max()
        .unwrap_or(0)
}

/// Resolves typed ksyms and kfuncs against `kernel`, as libbpf's
/// `bpf_object__resolve_ksyms_btf_id` does: the kernel's VAR or FUNC of
/// that name, its type compatible with the local one; a strong extern
/// not found is an error, a weak one gets 0. Returns the fd array for
/// module kfuncs (index 0 unused, as libbpf leaves it), empty when none.
pub(super) fn resolve_btf(
    externs: &mut [Extern],
    local: &Btf,
    kernel: &KernelBtf,
) -> Result<Vec<i32>> {
    let mut fd_array: Vec<i32> = Vec::new();
    let mut fd_idx_of: Vec<(usize, i16)> = Vec::new();
    for x in externs.iter_mut() {
        let (kind, what) = match x.kind {
            ExternKind::KsymBtf => (fbtf::KIND_VAR, "typed __ksym"),
            ExternKind::Kfunc => (fbtf::KIND_FUNC, "kfunc"),
            _ => continue,
        };
        let mut name = x.name.to_bytes();
        // A kfunc is looked up by its essential name, as libbpf does
        // (`bpf_task_from_pid___v2` is `bpf_task_from_pid`).
        if x.kind == ExternKind::Kfunc {
            name = &name[..crate::btf::index::essential_len(name)];
        }
        let q = Query::parse(name).map_err(|e| e.context(format!("extern `{}`", x.shown())))?;
        let unresolved = |x: &mut Extern| {
            x.resolved = false;
            x.btf_id = 0;
            x.btf_obj_fd = 0;
            x.fd_idx = 0;
            x.module = None;
        };
        let found = match kernel.find_query(&q, b"", kind, what) {
            Ok(f) => f,
            Err(e) if e.code() == NOT_FOUND && x.weak => {
                unresolved(x);
                continue;
            }
            Err(e) => {
                return Err(e.context(format!(
                    "extern `{}` ({what}, strong; declare it __weak if it may be absent)",
                    x.shown()
                )))
            }
        };
        let blob = kernel.object(found.obj)?;
        let kt = blob
            .btf
            .ty(found.id)
            .ok_or_else(|| Error::format("kernel BTF id out of range"))?;
        let (lid, tid) = match x.kind {
            ExternKind::KsymBtf => (x.local_type, blob.btf.resolve(kt.type_id())?),
            _ => (x.local_type, kt.type_id()),
        };
        if !super::core::types_are_compat(local, lid, &blob.btf, tid)? {
            // libbpf: a weak kfunc of another prototype is as missing.
            if x.kind == ExternKind::Kfunc && x.weak {
                unresolved(x);
                continue;
            }
            let desc = |b: &Btf, id: u32| {
                let t = b.ty(id);
                format!(
                    "[{id}] {} {}",
                    t.map_or("void", |t| fbtf::kind_name(t.kind())),
                    String::from_utf8_lossy(b.name(id))
                )
            };
            return Err(Error::new(
                INVALID,
                format!(
                    "extern `{}` ({what}): incompatible types: the object has {}, the kernel ({}) has {}",
                    x.shown(),
                    desc(local, lid),
                    kernel.object_name(found.obj).to_string_lossy(),
                    desc(&blob.btf, tid)
                ),
            ));
        }
        x.resolved = true;
        x.btf_id = found.id;
        x.module = Some(kernel.object_name(found.obj).to_owned());
        x.btf_obj_fd = if found.obj == 0 {
            0
        } else {
            kernel.object_fd(found.obj).unwrap_or(-1)
        };
        x.fd_idx = 0;
        if x.kind == ExternKind::Kfunc && found.obj != 0 {
            x.fd_idx = match fd_idx_of.iter().find(|(o, _)| *o == found.obj) {
                Some(&(_, i)) => i,
                None => {
                    if fd_array.is_empty() {
                        fd_array.push(0);
                    }
                    let i = i16::try_from(fd_array.len()).map_err(|_| {
                        Error::unsupported(format!(
                            "kfunc `{}`: more than 32767 module BTF fds",
                            x.shown()
                        ))
                    })?;
                    fd_array.push(x.btf_obj_fd);
                    fd_idx_of.push((found.obj, i));
                    i
                }
            };
        }
    }
    Ok(fd_array)
}
