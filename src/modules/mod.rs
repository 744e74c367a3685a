//! Modules: which module each symbol belongs to.
//!
//! A symbol's *owner* is a small id naming a set of modules: most owners are
//! one module, but a built-in object file can be shared by several built-in
//! modules, and its symbols then belong to each. Owner 0 is the core kernel
//! (`vmlinux`) not attributed to any built-in module.
//!
//! Attribution sources, in order: the `[module]` column (loadable and
//! pseudo-modules, and built-in ones in /proc/kallmodsyms), then
//! `modules.builtin.ranges` (see [`ranges`]).

pub mod ranges;
pub mod vmlinux;

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::hash::{BuildHasherDefault, Hasher};

use crate::error::{Error, Result};
use crate::kallsyms::hash::hash;
use crate::query::{fold, module_eq, normalize_module, VMLINUX};

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
    by_hash: HashMap<u64, ModId, BuildHasherDefault<Identity>>,
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

/// Hasher for keys that are hashes already.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
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
        if let Some(&id) = self.by_key.get(&normalize_module(name)) {
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

    /// The modules of an owner.
    #[inline]
    pub fn owner_modules(&self, o: OwnerId) -> &[ModId] {
        &self.owners[o as usize]
    }

    /// The first module of an owner (the one reported when no query names one).
    #[inline]
    pub fn primary(&self, o: OwnerId) -> ModId {
        self.owners[o as usize][0]
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

/// `bpf` and `__builtin__*` are the pseudo-modules of /proc/kallsyms.
pub fn is_pseudo_module(name: &[u8]) -> bool {
    name == b"bpf" || name.starts_with(b"__builtin__")
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
    }
}
