//! Modules: which module each symbol belongs to.
//!
//! A symbol's *owner* is a small id naming a set of modules: most owners are
//! one module, but a built-in object file can be shared by several built-in
//! modules, and its symbols then belong to each. Owner 0 is the core kernel
//! (`vmlinux`) not attributed to any built-in module.
//!
//! Attribution sources, in order: the `[module]` column (loadable and
//! pseudo-modules, and built-in ones in /proc/kallmodsyms, see
//! [`ModuleSet::owner_of_column`]), then `modules.builtin.ranges` (see
//! [`super::attribution`]).

use std::collections::HashMap;
use std::ffi::{CStr, CString};

use super::query::{fold, module_eq, normalize_module, Glob, Pattern, Query, VMLINUX};
use crate::base::hash::{hash, KeyMap};
use crate::error::{Error, Result};
use crate::formats::kallsyms::module_names;

/// Module id.
pub type ModId = u16;
/// Owner id: a set of modules.
pub type OwnerId = u16;

/// The owner of core-kernel symbols that no built-in module claims.
pub const VMLINUX_OWNER: OwnerId = 0;
/// The id of the `vmlinux` module.
pub const VMLINUX_MOD: ModId = 0;

/// What a module is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleKind {
    /// The core kernel (`vmlinux`).
    Vmlinux,
    /// A loadable module (`[ext4]` in /proc/kallsyms).
    Loadable,
    /// A module built into the kernel image.
    Builtin,
    /// A pseudo-module of /proc/kallsyms: `[bpf]`, `[__builtin__ftrace]`,
    /// `[__builtin__kprobes]`.
    Pseudo,
}

impl ModuleKind {
    /// The kind's name, as the CLI prints it.
    pub fn name(self) -> &'static str {
        match self {
            ModuleKind::Vmlinux => "vmlinux",
            ModuleKind::Loadable => "loadable",
            ModuleKind::Builtin => "builtin",
            ModuleKind::Pseudo => "pseudo",
        }
    }
}

/// One module of a table.
#[derive(Debug)]
pub struct Module {
    pub name: CString,
    pub kind: ModuleKind,
    /// Symbols attributed to it (absolute ones included).
    pub symbols: usize,
    /// Lowest and highest address of its non-absolute symbols (0, 0 if none).
    pub lo: u64,
    pub hi: u64,
}

/// The modules of a table and the owner sets its entries point to.
#[derive(Debug)]
pub struct ModuleSet {
    modules: Vec<Module>,
    /// Normalised name (`-` as `_`) of each module.
    keys: Vec<Vec<u8>>,
    owners: Vec<Box<[ModId]>>,
    by_key: HashMap<Vec<u8>, ModId>,
    /// The same, keyed by [`folded_hash`] for lookups that must not allocate
    /// (a qualified name lookup costs what a plain one does). A 64-bit
    /// collision is checked by comparing the names.
    by_hash: KeyMap<u64, ModId>,
    by_set: HashMap<Box<[ModId]>, OwnerId>,
}

/// The hash of a module name as it compares (`-` as `_`), without allocating.
#[inline]
fn folded_hash(name: &[u8]) -> u64 {
    if memchr::memchr(b'-', name).is_none() {
        // Already in the folded form (the usual case: the kernel writes `_`).
        return hash(name);
    }
    let mut buf = [0u8; 64];
    if name.len() <= buf.len() {
        for (d, &s) in buf.iter_mut().zip(name) {
            *d = fold(s);
        }
        hash(&buf[..name.len()])
    } else {
        hash(&normalize_module(name))
    }
}

impl Default for ModuleSet {
    fn default() -> Self {
        Self::new()
    }
}

impl ModuleSet {
    pub fn new() -> ModuleSet {
        let mut s = ModuleSet {
            modules: Vec::new(),
            keys: Vec::new(),
            owners: Vec::new(),
            by_key: HashMap::new(),
            by_hash: HashMap::default(),
            by_set: HashMap::new(),
        };
        let m = s.push(VMLINUX, ModuleKind::Vmlinux);
        debug_assert_eq!(m, VMLINUX_MOD);
        let o = s.owner_of_set(&[VMLINUX_MOD]).expect("first owner");
        debug_assert_eq!(o, VMLINUX_OWNER);
        s
    }

    fn push(&mut self, name: &[u8], kind: ModuleKind) -> ModId {
        let id = self.modules.len() as ModId;
        let key = normalize_module(name);
        self.by_key.insert(key.clone(), id);
        self.by_hash.entry(folded_hash(name)).or_insert(id);
        self.keys.push(key);
        self.modules.push(Module {
            // Names were checked for NUL by the parsers.
            name: CString::new(name).unwrap_or_default(),
            kind,
            symbols: 0,
            lo: 0,
            hi: 0,
        });
        id
    }

    /// The id of module `name`, added with `kind` if new. `vmlinux` cannot be
    /// named as a module of a symbol.
    pub fn intern(&mut self, name: &[u8], kind: ModuleKind) -> Result<ModId> {
        if let Some(id) = self.find(name) {
            if id == VMLINUX_MOD {
                return Err(Error::format("`vmlinux` used as a module name"));
            }
            return Ok(id);
        }
        if self.modules.len() > ModId::MAX as usize {
            return Err(Error::unsupported("more than 65535 modules"));
        }
        Ok(self.push(name, kind))
    }

    /// The owner id for a set of modules (sorted, deduplicated here).
    pub fn owner_of_set(&mut self, mods: &[ModId]) -> Result<OwnerId> {
        let mut set: Vec<ModId> = mods.to_vec();
        set.sort_unstable();
        set.dedup();
        let set = set.into_boxed_slice();
        if let Some(&o) = self.by_set.get(&set) {
            return Ok(o);
        }
        if self.owners.len() > OwnerId::MAX as usize {
            return Err(Error::unsupported("more than 65535 distinct module sets"));
        }
        let o = self.owners.len() as OwnerId;
        self.owners.push(set.clone());
        self.by_set.insert(set, o);
        Ok(o)
    }

    /// The owner id for one module.
    pub fn owner_of(&mut self, m: ModId) -> Result<OwnerId> {
        self.owner_of_set(&[m])
    }

    /// The owner of a line with the module column `col` (what follows the
    /// TAB: `[ext4]`, or in kallmodsyms `[a] [b] {obj.o}`): its modules,
    /// added as loadable or pseudo-modules if new (kallmodsyms' built-in
    /// ones are told apart later, see [`super::attribution`]). A column
    /// with only `{obj.o}` is the core kernel.
    pub fn owner_of_column(&mut self, col: &[u8]) -> Result<OwnerId> {
        let mut ids: Vec<ModId> = Vec::with_capacity(2);
        for name in module_names(col) {
            let kind = if is_pseudo_module(name) {
                ModuleKind::Pseudo
            } else {
                ModuleKind::Loadable
            };
            ids.push(self.intern(name, kind)?);
        }
        if ids.is_empty() {
            return Ok(VMLINUX_OWNER);
        }
        self.owner_of_set(&ids)
    }

    /// Module id by name (`-` and `_` equal).
    #[inline]
    pub fn find(&self, name: &[u8]) -> Option<ModId> {
        match self.by_hash.get(&folded_hash(name)) {
            Some(&m) if module_eq(&self.keys[m as usize], name) => Some(m),
            // Absent, or a 64-bit collision with another name.
            Some(_) => self.by_key.get(&normalize_module(name)).copied(),
            None => None,
        }
    }

    /// The modules of an owner. An owner id past the set (only from a
    /// damaged table snapshot, whose entries are not checksummed) is
    /// vmlinux's: a wrong answer there, never a panic.
    #[inline]
    pub fn owner_modules(&self, o: OwnerId) -> &[ModId] {
        self.owners.get(o as usize).map_or(&[VMLINUX_MOD], |v| v)
    }

    /// The first module of an owner (the one reported when no query names one).
    #[inline]
    pub fn primary(&self, o: OwnerId) -> ModId {
        self.owner_modules(o)
            .first()
            .copied()
            .unwrap_or(VMLINUX_MOD)
    }

    #[inline]
    pub fn module(&self, m: ModId) -> &Module {
        &self.modules[m as usize]
    }

    pub fn module_mut(&mut self, m: ModId) -> &mut Module {
        &mut self.modules[m as usize]
    }

    #[inline]
    pub fn name(&self, m: ModId) -> &CStr {
        &self.modules[m as usize].name
    }

    /// The name as modules compare (`-` as `_`).
    #[inline]
    pub fn key(&self, m: ModId) -> &[u8] {
        &self.keys[m as usize]
    }

    pub fn len(&self) -> usize {
        self.modules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Module> {
        self.modules.iter()
    }

    pub fn owner_count(&self) -> usize {
        self.owners.len()
    }

    /// The address region an owner's symbols live in, for size estimates:
    /// the core image (vmlinux and built-in modules) is one region, every
    /// loadable or pseudo-module its own.
    #[inline]
    pub fn region(&self, o: OwnerId) -> usize {
        let m = self.primary(o);
        match self.modules[m as usize].kind {
            ModuleKind::Vmlinux | ModuleKind::Builtin => 0,
            _ => m as usize,
        }
    }

    /// Does the owner set contain a built-in module?
    #[inline]
    pub fn is_builtin(&self, o: OwnerId) -> bool {
        self.modules[self.primary(o) as usize].kind == ModuleKind::Builtin
    }

    /// Does the owner set contain a pseudo-module?
    #[inline]
    pub fn is_pseudo(&self, o: OwnerId) -> bool {
        self.owner_modules(o)
            .iter()
            .any(|&m| self.modules[m as usize].kind == ModuleKind::Pseudo)
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        let names: usize = self
            .modules
            .iter()
            .map(|m| m.name.as_bytes().len() + 1)
            .sum();
        let keys: usize = self.keys.iter().map(|k| k.capacity()).sum();
        let owners: usize = self.owners.iter().map(|o| o.len() * 2).sum();
        self.modules.capacity() * std::mem::size_of::<Module>()
            + names
            + 2 * keys
            + 2 * owners
            + self.owners.capacity() * 16
            + (self.by_key.capacity() + self.by_set.capacity() + self.by_hash.capacity()) * 40
    }
}

impl ModuleSet {
    /// The set as bytes (a table snapshot keeps it): each module's kind,
    /// counts, range and name, then each owner's modules.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let put = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_le_bytes());
        put(&mut out, self.modules.len() as u64);
        for m in &self.modules {
            let kind = match m.kind {
                ModuleKind::Vmlinux => 0,
                ModuleKind::Loadable => 1,
                ModuleKind::Builtin => 2,
                ModuleKind::Pseudo => 3,
            };
            put(&mut out, kind);
            put(&mut out, m.symbols as u64);
            put(&mut out, m.lo);
            put(&mut out, m.hi);
            put(&mut out, m.name.as_bytes().len() as u64);
            out.extend_from_slice(m.name.as_bytes());
        }
        put(&mut out, self.owners.len() as u64);
        for o in &self.owners {
            put(&mut out, o.len() as u64);
            for &m in o.iter() {
                put(&mut out, m as u64);
            }
        }
        out
    }

    /// The set [`ModuleSet::to_bytes`] wrote, with the same module and
    /// owner ids; `None` if the bytes are not such a set.
    pub fn from_bytes(b: &[u8]) -> Option<ModuleSet> {
        let mut r = crate::base::le::Cursor::new(b);
        let mut set = ModuleSet::new();
        let n = r.u64()? as usize;
        if n == 0 || n > 1 << 16 {
            return None;
        }
        for i in 0..n {
            let kind = match r.u64()? {
                0 => ModuleKind::Vmlinux,
                1 => ModuleKind::Loadable,
                2 => ModuleKind::Builtin,
                3 => ModuleKind::Pseudo,
                _ => return None,
            };
            let (symbols, lo, hi, len) = (r.u64()?, r.u64()?, r.u64()?, r.u64()? as usize);
            let name = r.bytes(len)?;
            let id = if i == 0 {
                (kind == ModuleKind::Vmlinux && name == VMLINUX).then_some(VMLINUX_MOD)?
            } else {
                set.intern(name, kind).ok()?
            };
            if id as usize != i {
                return None;
            }
            let m = set.module_mut(id);
            (m.symbols, m.lo, m.hi) = (symbols as usize, lo, hi);
        }
        let owners = r.u64()? as usize;
        if owners == 0 || owners > 1 << 16 {
            return None;
        }
        for o in 0..owners {
            let k = r.u64()? as usize;
            if k == 0 || k > n {
                return None;
            }
            let mods: Vec<ModId> = (0..k)
                .map(|_| r.u64().filter(|&m| (m as usize) < n).map(|m| m as ModId))
                .collect::<Option<_>>()?;
            if set.owner_of_set(&mods).ok()? as usize != o {
                return None;
            }
        }
        (set.owner_count() == owners && r.at_end()).then_some(set)
    }
}

/// The names pseudo-modules give their symbols start with one of these
/// (see [`is_pseudo_name`]).
const PSEUDO_NAME_STARTS: [&[u8]; 6] = [
    b"bpf_prog_",
    b"bpf_trampoline_",
    b"bpf_dispatcher_",
    b"ftrace_trampoline",
    b"kprobe_insn_page",
    b"kprobe_optinsn_page",
];

/// May a name matching `g` start with `start`? `false` only when the
/// glob's literal beginning rules it out.
fn may_start_with(g: &Glob<'_>, start: &[u8]) -> bool {
    let (lit, whole) = g.literal_prefix();
    let n = lit.len().min(start.len());
    let same = if g.folds() {
        lit[..n]
            .iter()
            .zip(&start[..n])
            .all(|(a, b)| fold(*a) == fold(*b))
    } else {
        lit[..n] == start[..n]
    };
    same && (!whole || lit.len() >= start.len())
}

/// Could query `q` match a pseudo-module's symbol? (Those come and go
/// without /proc/modules changing: a table snapshot cannot answer it.)
pub fn query_may_match_pseudo(q: &Query<'_>) -> bool {
    match q.module {
        Some(m) => is_pseudo_module(m),
        None => is_pseudo_name(q.name),
    }
}

/// Could pattern `p` match a pseudo-module's symbol?
pub fn pattern_may_match_pseudo(p: &Pattern<'_>) -> bool {
    let module = match &p.module {
        None => true,
        Some(g) => g.matches(b"bpf") || may_start_with(g, b"__builtin__"),
    };
    module
        && PSEUDO_NAME_STARTS
            .iter()
            .any(|s| may_start_with(&p.name, s))
}

/// `bpf` and `__builtin__*` are the pseudo-modules of /proc/kallsyms.
pub fn is_pseudo_module(name: &[u8]) -> bool {
    name == b"bpf" || name.starts_with(b"__builtin__")
}

/// Names that only pseudo-modules make, whatever module they are asked
/// in: JITed BPF programs (`bpf_prog_<16 hex digits>[_name]`), BPF
/// trampolines (`bpf_trampoline_<number>`) and dispatchers
/// (`bpf_dispatcher_<name>`), ftrace trampolines, kprobe instruction pages.
/// They come and go without /proc/modules changing.
pub fn is_pseudo_name(name: &[u8]) -> bool {
    if let Some(rest) = name.strip_prefix(b"bpf_prog_") {
        return rest.len() >= 16
            && rest[..16].iter().all(|b| b.is_ascii_hexdigit())
            && (rest.len() == 16 || rest[16] == b'_');
    }
    if let Some(rest) = name.strip_prefix(b"bpf_trampoline_") {
        return !rest.is_empty() && rest.iter().all(|b| b.is_ascii_digit());
    }
    name.starts_with(b"bpf_dispatcher_")
        || name == b"ftrace_trampoline"
        || name == b"kprobe_insn_page"
        || name == b"kprobe_optinsn_page"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_and_modules() {
        let mut s = ModuleSet::new();
        assert_eq!(s.owner_modules(VMLINUX_OWNER), &[VMLINUX_MOD]);
        assert_eq!(s.name(VMLINUX_MOD).to_bytes(), b"vmlinux");
        let a = s.intern(b"crc-itu-t", ModuleKind::Loadable).unwrap();
        assert_eq!(s.intern(b"crc_itu_t", ModuleKind::Loadable).unwrap(), a);
        assert_eq!(s.find(b"crc_itu-t"), Some(a));
        let b = s.intern(b"bpf", ModuleKind::Pseudo).unwrap();
        let oa = s.owner_of(a).unwrap();
        let oab = s.owner_of_set(&[b, a, b]).unwrap();
        assert_ne!(oa, oab);
        assert_eq!(s.owner_modules(oab), &[a, b]);
        assert_eq!(s.owner_of_set(&[a, b]).unwrap(), oab);
        assert_eq!(s.region(VMLINUX_OWNER), 0);
        assert_eq!(s.region(oa), a as usize);
        assert!(s.intern(b"vmlinux", ModuleKind::Loadable).is_err());
        assert!(is_pseudo_module(b"__builtin__ftrace"));
        assert!(is_pseudo_module(b"bpf"));
        assert!(!is_pseudo_module(b"bpfilter"));
        let o = s.owner_of_column(b"[crc-itu-t]").unwrap();
        assert_eq!(o, oa);
        let ob = s.owner_of_column(b"[bpf]").unwrap();
        assert!(s.is_pseudo(ob) && !s.is_pseudo(oa));
        assert_eq!(
            s.owner_of_column(b"{kernel/fork.o}").unwrap(),
            VMLINUX_OWNER
        );
        assert_eq!(s.key(a), b"crc_itu_t");
        assert_eq!(s.name(a).to_bytes(), b"crc-itu-t", "named as first seen");
    }

    #[test]
    fn pseudo_module_names() {
        assert!(is_pseudo_name(b"bpf_prog_0123456789abcdef"));
        assert!(is_pseudo_name(b"bpf_prog_0123456789abcdef_kdata_test"));
        assert!(!is_pseudo_name(b"bpf_prog_put"), "a core function");
        assert!(!is_pseudo_name(b"bpf_prog_0123456789abcdefx"));
        assert!(is_pseudo_name(b"bpf_trampoline_6442453426"));
        assert!(!is_pseudo_name(b"bpf_trampoline_link_prog"));
        assert!(is_pseudo_name(b"ftrace_trampoline"));
        assert!(!is_pseudo_name(b"ftrace_trampoline_free"));
        assert!(is_pseudo_name(b"kprobe_insn_page"));
    }
}
