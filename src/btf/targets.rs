//! Attach targets: where a program of a given kind attaches in the
//! kernel, looked up one at a time ([`KernelBtf::target`]) or listed from
//! a pattern ([`KernelBtf::expand`]).
//!
//! The BTF type a target names is libbpf's (`find_attach_btf_id`): a FUNC
//! of the same name for fentry/fexit/fmod_ret, `bpf_lsm_<hook>` for LSM,
//! `bpf_iter_<target>` for iterators, the TYPEDEF `btf_trace_<tracepoint>`
//! for BTF tracepoints. Function targets also get their address from
//! kallsyms (the lowest, for a name defined twice: the one
//! `kallsyms_lookup_name` and so the kernel pick).

use std::collections::HashSet;
use std::ffi::{CStr, CString};

use super::{FilterFunctions, KernelBtf};
use crate::error::{Error, Result};
use crate::formats::btf::{KIND_FUNC, KIND_TYPEDEF};
use crate::rules::query::{Pattern, Query};
use crate::table::{Symbol, SYM_BUILTIN};

/// What kind of kernel object a program attaches to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// A kernel function with BTF (fentry, fexit, fmod_ret).
    Function,
    /// An LSM hook (`bpf_lsm_<hook>`).
    Lsm,
    /// A BPF iterator (`bpf_iter_<target>`).
    Iter,
    /// A tracepoint with BTF (`btf_trace_<name>`), for tp_btf.
    Tracepoint,
    /// A raw tracepoint, attached by name (raw_tp); listed from BTF.
    RawTracepoint,
    /// A kernel function by name and address (kprobe, kretprobe); no BTF.
    Kprobe,
}

impl TargetKind {
    /// The prefix and kind of the BTF type a target names (`None`: the
    /// target needs no BTF id).
    pub fn btf_type(self) -> Option<(&'static [u8], u32)> {
        match self {
            TargetKind::Function => Some((b"", KIND_FUNC)),
            TargetKind::Lsm => Some((b"bpf_lsm_", KIND_FUNC)),
            TargetKind::Iter => Some((b"bpf_iter_", KIND_FUNC)),
            TargetKind::Tracepoint => Some((b"btf_trace_", KIND_TYPEDEF)),
            TargetKind::RawTracepoint | TargetKind::Kprobe => None,
        }
    }

    /// Is the target a kernel function (with an address)?
    pub fn is_function(self) -> bool {
        matches!(
            self,
            TargetKind::Function | TargetKind::Lsm | TargetKind::Kprobe
        )
    }

    /// What the target is, in messages ("kernel function", "tracepoint").
    pub fn what(self) -> &'static str {
        match self {
            TargetKind::Function | TargetKind::Kprobe => "kernel function",
            TargetKind::Lsm => "LSM hook",
            TargetKind::Iter => "BPF iterator",
            TargetKind::Tracepoint | TargetKind::RawTracepoint => "tracepoint",
        }
    }
}

/// A name a target holds: in the strings of a BTF object (where it is
/// NUL-terminated already: no copy per target), the name of a BTF object,
/// or a copy. [`KernelBtf::text`] gives it as a C string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Text {
    /// String offset `off` of object `obj`'s BTF.
    Btf {
        /// The BTF object (0 vmlinux, `k + 1` module `k`).
        obj: usize,
        /// The offset in that object's string section.
        off: u32,
    },
    /// The module name of object `obj` (`vmlinux` for 0).
    Object(usize),
    /// A name of its own (a kprobe target's, which has no BTF).
    Owned(CString),
}

/// A resolved attach target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The function, hook, iterator or tracepoint name (no prefix).
    pub name: Text,
    /// The module whose BTF (or, for kprobes, symbols) has it; `vmlinux`
    /// for the core kernel and the modules built into it.
    pub module: Text,
    /// The BTF object (0 vmlinux, `k + 1` module `k`); `None` for targets
    /// without BTF.
    pub obj: Option<usize>,
    /// The BTF type id (0 for targets without BTF).
    pub btf_id: u32,
    /// The kernel address of a function target: known for kprobe targets
    /// and expanded ones, 0 for the others until [`KernelBtf::function_addr`]
    /// is asked.
    pub addr: u64,
}

/// Text symbols (functions).
fn is_text(ty: u8) -> bool {
    matches!(ty, b't' | b'T' | b'w' | b'W')
}

/// Names a compiler or the build makes beside a function: padding
/// (`__pfx_`), CFI stubs (`__cfi_`), clones and parts (`.isra.0`,
/// `.constprop.0`, `.part.0`, `.cold`, `.llvm.123`).
pub fn is_artifact(name: &[u8]) -> bool {
    name.starts_with(b"__pfx_") || name.starts_with(b"__cfi_") || name.contains(&b'.')
}

/// The module a symbol is looked up under in BTF and tracefs: `vmlinux`
/// for the core image (built-in modules included).
fn btf_module<'s>(s: &Symbol<'s>) -> &'s [u8] {
    if s.flags & SYM_BUILTIN != 0 {
        b"vmlinux"
    } else {
        s.module.to_bytes()
    }
}

impl KernelBtf {
    /// A `Text` as a C string, borrowed from this handle.
    pub fn text<'k>(&'k self, t: &'k Text) -> &'k CStr {
        match t {
            Text::Btf { obj, off } => self
                .object(*obj)
                .ok()
                .and_then(|b| b.btf.cstr(*off))
                .and_then(|c| CStr::from_bytes_with_nul(c).ok())
                .unwrap_or(c""),
            Text::Object(obj) => self.object_name(*obj),
            Text::Owned(c) => c,
        }
    }

    /// The target's name without the prefix of its BTF type.
    fn btf_text(obj: usize, name_off: u32, prefix: &[u8]) -> Text {
        Text::Btf {
            obj,
            off: name_off + prefix.len() as u32,
        }
    }

    /// The target `q` names for a program of `kind`.
    pub fn target(&self, kind: TargetKind, q: &Query<'_>) -> Result<Target> {
        let what = kind.what();
        match kind.btf_type() {
            Some((prefix, btf_kind)) => {
                let f = self.find_query(q, prefix, btf_kind, what)?;
                let name_off = self.object(f.obj)?.btf.ty(f.id).map_or(0, |t| t.name_off);
                Ok(Target {
                    name: Self::btf_text(f.obj, name_off, prefix),
                    module: Text::Object(f.obj),
                    obj: Some(f.obj),
                    btf_id: f.id,
                    // Looked up when asked (function_addr): resolving
                    // needs no kallsyms.
                    addr: 0,
                })
            }
            None if kind == TargetKind::Kprobe => {
                let t = self.symbols()?;
                let all = t.lookup_all(&q.to_string().into_bytes())?;
                let s = all
                    .iter()
                    .filter(|s| is_text(s.ty))
                    .min_by_key(|s| s.addr)
                    .ok_or_else(|| {
                        Error::not_found(format!(
                            "{what} `{q}`: no function of that name in {}",
                            t.info().source
                        ))
                    })?;
                Ok(Target {
                    name: Text::Owned(CString::new(q.name).unwrap_or_default()),
                    module: Text::Owned(CString::new(btf_module(s)).unwrap_or_default()),
                    obj: None,
                    btf_id: 0,
                    addr: s.addr,
                })
            }
            None => {
                // A raw tracepoint attaches by name; its BTF TYPEDEF says
                // it exists.
                let f = self.find_query(q, b"btf_trace_", KIND_TYPEDEF, what)?;
                let name_off = self.object(f.obj)?.btf.ty(f.id).map_or(0, |t| t.name_off);
                Ok(Target {
                    name: Self::btf_text(f.obj, name_off, b"btf_trace_"),
                    module: Text::Object(f.obj),
                    obj: None,
                    btf_id: 0,
                    addr: 0,
                })
            }
        }
    }

    /// When a target of `kind` named `q` is missing: what `q` is instead,
    /// if it names a target of another kind (a tracepoint given to an
    /// fentry program, a function to a tp_btf one), as a hint.
    pub fn other_kind(&self, kind: TargetKind, q: &Query<'_>) -> Option<String> {
        let tracepoint = || {
            self.find_query(q, b"btf_trace_", KIND_TYPEDEF, "tracepoint")
                .is_ok()
        };
        let function = || self.find_query(q, b"", KIND_FUNC, "function").is_ok();
        let (is, takes) = match kind {
            TargetKind::Function | TargetKind::Lsm | TargetKind::Iter | TargetKind::Kprobe
                if tracepoint() =>
            {
                ("a tracepoint", "a tp_btf or raw_tp program")
            }
            TargetKind::Tracepoint | TargetKind::RawTracepoint if function() => {
                ("a kernel function", "an fentry, fexit or kprobe program")
            }
            _ => return None,
        };
        Some(format!(
            "`{q}` is {is}, not a {}: it takes {takes}",
            kind.what()
        ))
    }

    /// The address of function `name` of `module` (`vmlinux`: the core
    /// image, built-in modules included) in kallsyms: the lowest of its
    /// text symbols; 0 when kallsyms cannot say.
    pub fn function_addr(&self, module: &[u8], name: &[u8]) -> u64 {
        let Ok(t) = self.symbols() else { return 0 };
        let query = if module == b"vmlinux" {
            name.to_vec()
        } else {
            [module, b"`", name].concat()
        };
        let Ok(all) = t.lookup_all(&query) else {
            return 0;
        };
        all.iter()
            .filter(|s| is_text(s.ty) && btf_module(s) == module)
            .map(|s| s.addr)
            .min()
            .unwrap_or(0)
    }

    /// Every target of `kind` that `pattern` (`glob` or `modglob`glob`)
    /// matches and that can really be attached. Functions: text symbols
    /// of kallsyms, in address order, that have a BTF FUNC in their BTF
    /// object (fentry and friends) and that ftrace may patch (when tracefs
    /// says), compiler artifacts left out unless the pattern names one
    /// exactly; for fentry and friends ([`TargetKind::Function`]), not
    /// the functions whose prototype the running kernel's BPF trampoline
    /// refuses (docs/btf-and-attach.md; counted in
    /// [`super::Stats::trampoline_refused`]). Hooks, iterators and tracepoints: the BTF types with their
    /// prefix, by object and name.
    pub fn expand(&self, kind: TargetKind, pattern: &[u8]) -> Result<Vec<Target>> {
        let p = Pattern::parse(pattern)?;
        if matches!(kind, TargetKind::Function | TargetKind::Kprobe) {
            return self.expand_functions(kind, pattern);
        }
        let (prefix, btf_kind) = match kind {
            TargetKind::RawTracepoint => (&b"btf_trace_"[..], KIND_TYPEDEF),
            k => k.btf_type().unwrap_or((b"", KIND_FUNC)),
        };
        let mut out = Vec::new();
        for obj in 0..self.object_count() {
            let module = self.object_name(obj);
            if let Some(g) = &p.module {
                if !g.matches(module.to_bytes()) {
                    continue;
                }
            } else if obj > 0 && kind == TargetKind::Lsm {
                break; // LSM hooks are the core kernel's
            }
            let blob = self.object(obj)?;
            // (name, id, name offset), by name: the first id of each name.
            let mut found: Vec<(&[u8], u32, u32)> = Vec::new();
            for id in blob.btf.own_ids() {
                let Some(t) = blob.btf.ty(id) else { continue };
                if t.kind() != btf_kind {
                    continue;
                }
                let Some(name) = blob.btf.str(t.name_off).strip_prefix(prefix) else {
                    continue;
                };
                if !name.is_empty() && p.name.matches(name) {
                    found.push((name, id, t.name_off));
                }
            }
            found.sort();
            found.dedup_by(|a, b| a.0 == b.0);
            for (name, id, name_off) in found {
                let addr = if kind.is_function() {
                    self.function_addr(module.to_bytes(), &[prefix, name].concat())
                } else {
                    0
                };
                out.push(Target {
                    name: Self::btf_text(obj, name_off, prefix),
                    module: Text::Object(obj),
                    obj: (kind != TargetKind::RawTracepoint).then_some(obj),
                    btf_id: if kind == TargetKind::RawTracepoint {
                        0
                    } else {
                        id
                    },
                    addr,
                });
            }
        }
        Ok(out)
    }

    fn expand_functions(&self, kind: TargetKind, pattern: &[u8]) -> Result<Vec<Target>> {
        let p = Pattern::parse(pattern)?;
        let exact = p.name.literal().is_some();
        let table = self.symbols()?;
        let filter: &FilterFunctions = self.filter_functions()?;
        // Targets already listed: (object, BTF id), or the name of a kprobe.
        let mut seen: HashSet<(usize, u32)> = HashSet::new();
        let mut seen_kprobe: HashSet<Vec<u8>> = HashSet::new();
        let mut out = Vec::new();
        let mut err = None;
        let mut refused = 0;
        // Loaded modules whose functions matched but which have no BTF.
        let mut no_btf: Vec<Vec<u8>> = Vec::new();
        table.for_each_match(pattern, |s| {
            let name = s.name.to_bytes();
            if !is_text(s.ty) || (!exact && is_artifact(name)) {
                return std::ops::ControlFlow::Continue(());
            }
            let module = btf_module(s);
            if !filter.allows(module, name, s.addr, s.size) {
                return std::ops::ControlFlow::Continue(());
            }
            let obj = if module == b"vmlinux" {
                Some(0)
            } else {
                self.module_object(module)
            };
            let (obj, btf_id, name_off) = match kind {
                TargetKind::Kprobe => {
                    if !seen_kprobe.insert(name.to_vec()) {
                        return std::ops::ControlFlow::Continue(());
                    }
                    (None, 0, 0)
                }
                _ => {
                    let Some(obj) = obj else {
                        if !no_btf.iter().any(|m| m == module) {
                            no_btf.push(module.to_vec());
                        }
                        return std::ops::ControlFlow::Continue(());
                    };
                    let blob = match self.object(obj) {
                        Ok(b) => b,
                        Err(e) => {
                            err = Some(e);
                            return std::ops::ControlFlow::Break(());
                        }
                    };
                    match blob.first(name, KIND_FUNC) {
                        Some(id) if seen.insert((obj, id)) => {
                            // What the kernel's trampoline refuses is no
                            // target (bpftrace's matcher leaves it out too).
                            if self.trampoline_refuses(obj, id).is_some() {
                                refused += 1;
                                return std::ops::ControlFlow::Continue(());
                            }
                            (Some(obj), id, blob.btf.ty(id).map_or(0, |t| t.name_off))
                        }
                        _ => return std::ops::ControlFlow::Continue(()),
                    }
                }
            };
            out.push(Target {
                name: match obj {
                    Some(obj) => Text::Btf { obj, off: name_off },
                    None => Text::Owned(CString::new(name).unwrap_or_default()),
                },
                module: match obj {
                    Some(obj) => Text::Object(obj),
                    None => Text::Owned(CString::new(module).unwrap_or_default()),
                },
                obj,
                btf_id,
                addr: s.addr,
            });
            std::ops::ControlFlow::Continue(())
        })?;
        self.note_refused(refused);
        match err {
            Some(e) => Err(e),
            None if out.is_empty() && !no_btf.is_empty() => {
                Err(self.modules_without_btf(pattern, &no_btf))
            }
            None => Ok(out),
        }
    }

    /// A pattern whose functions are all in loaded modules without BTF.
    fn modules_without_btf(&self, pattern: &[u8], mods: &[Vec<u8>]) -> Error {
        let names: Vec<String> = mods
            .iter()
            .map(|m| format!("`{}`", String::from_utf8_lossy(m)))
            .collect();
        Error::not_found(format!(
            "`{}`: its functions are in {} {}, loaded but without BTF in {} ({}); a kprobe can still \
             attach to them",
            String::from_utf8_lossy(pattern),
            if names.len() == 1 { "module" } else { "modules" },
            names.join(", "),
            self.modules_dir_shown(),
            self.why_no_module_btf()
        ))
    }
}
