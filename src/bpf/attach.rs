//! Where each program and alias attaches: the program type and expected
//! attach type from its section, the kernel target the section names (or
//! the loader sets, one per alias), resolved against the kernel's BTF and
//! symbols; and aliases made from a pattern, one per target, all sharing
//! the program's single relocated copy.

use std::ffi::{CStr, CString};
use std::sync::Arc;

use super::section::{self, SectionDef};
use super::struct_ops::OpsMember;
use super::{Object, Program};
use crate::btf::targets::{Target, TargetKind};
use crate::btf::KernelBtf;
use crate::error::{Call, Error, Result};
use crate::rules::query::Query;

/// A program's attach state: what its section says (shared with its
/// aliases), what the loader set for it, what that resolved to. Small,
/// since `expand` makes one per kernel function.
#[derive(Clone, Debug, Default)]
pub(super) struct Attach {
    /// libbpf's definition of the section (`None`: unknown section).
    def: Option<&'static SectionDef>,
    /// The target the section names, after its `/`.
    section: Option<Arc<Named>>,
    /// The target the loader set (`set_attach_target`): it wins over the
    /// section's.
    set: Option<Box<Named>>,
    resolved: Option<Box<Resolved>>,
    /// Why the target did not resolve (the last resolution): the
    /// program's own failure, which fails no other program.
    error: Option<Box<Failed>>,
    /// The section starts with `?` (libbpf's autoload off).
    optional: bool,
    /// struct_ops programs: the struct member a struct_ops map gives them.
    pub(super) struct_ops: Option<Box<OpsMember>>,
}

/// A program's attach error, and its message as C text.
#[derive(Clone, Debug)]
struct Failed {
    error: Error,
    text: CString,
}

impl Failed {
    fn new(error: Error) -> Box<Failed> {
        let text = CString::new(error.message().replace('\0', " ")).unwrap_or_default();
        Box::new(Failed { error, text })
    }
}

/// A target as a query (`module`name`), and as shown before resolution.
#[derive(Clone, Debug)]
struct Named {
    query: Vec<u8>,
    name: CString,
    module: Option<CString>,
}

impl Named {
    fn new(query: Vec<u8>) -> Named {
        let c = |b: &[u8]| CString::new(b.to_vec()).unwrap_or_default();
        let (name, module) = match memchr::memchr(b'`', &query) {
            Some(t) => (c(&query[t + 1..]), Some(c(&query[..t]))),
            None => (c(&query), None),
        };
        Named {
            query,
            name,
            module,
        }
    }
}

/// A target resolved against one kernel BTF, which it keeps alive (its
/// names live there, and so does the module BTF fd).
#[derive(Clone, Debug)]
struct Resolved {
    target: Target,
    kind: TargetKind,
    obj_fd: i32,
    kernel: Arc<KernelBtf>,
    /// A function target's address, looked up in kallsyms when first
    /// asked: resolving (and relocating) needs no kallsyms.
    addr: std::sync::OnceLock<u64>,
}

impl Resolved {
    fn name(&self) -> &CStr {
        self.kernel.text(&self.target.name)
    }
    fn module(&self) -> &CStr {
        self.kernel.text(&self.target.module)
    }
    fn addr(&self) -> u64 {
        *self.addr.get_or_init(|| {
            if self.target.addr != 0 || !self.kind.is_function() {
                return self.target.addr;
            }
            let prefix = self.kind.btf_type().map_or(&b""[..], |(p, _)| p);
            let name = [prefix, self.name().to_bytes()].concat();
            self.kernel.function_addr(self.module().to_bytes(), &name)
        })
    }
}

/// What a loader needs to load and attach one program or alias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttachInfo<'a> {
    pub prog_type: u32,
    pub expected_attach_type: u32,
    /// 0 when the type needs none (or before resolution).
    pub attach_btf_id: u32,
    /// 0 for vmlinux; -1 when the module's BTF object has no fd here.
    pub attach_btf_obj_fd: i32,
    pub target: Option<&'a CStr>,
    /// `vmlinux` for the core kernel (after resolution).
    pub module: Option<&'a CStr>,
    /// Kernel address of a function target (after resolution).
    pub addr: u64,
    /// [`section::SLEEPABLE`], [`section::XDP_FRAGS`], [`section::OPTIONAL`],
    /// [`section::TARGET_AT_LOAD`].
    pub flags: u32,
    /// Why the target did not resolve, if it did not (kept whatever the
    /// program's autoload).
    pub error: Option<&'a Error>,
    /// Its message, as C text.
    pub error_text: Option<&'a CStr>,
    /// The program's autoload.
    pub autoload: bool,
}

impl<'a> AttachInfo<'a> {
    /// The program's failure: its error when it is to be loaded (a
    /// program with autoload off fails nothing).
    pub fn failure(&self) -> Option<&'a Error> {
        self.error.filter(|_| self.autoload)
    }
}

impl Attach {
    /// The attach state a section gives.
    pub(super) fn of_section(sec: &[u8]) -> Attach {
        let optional = sec.starts_with(b"?");
        let Some((def, extra)) = section::lookup(sec) else {
            return Attach {
                optional,
                ..Default::default()
            };
        };
        let section = match (def.target, extra) {
            (Some(kind), Some(text)) => {
                Some(Arc::new(Named::new(section::target_query(kind, text))))
            }
            _ => None,
        };
        Attach {
            def: Some(def),
            section,
            optional,
            ..Default::default()
        }
    }

    /// The program type its section gives (0: unknown section).
    pub(super) fn prog_type(&self) -> u32 {
        self.def.map_or(0, |d| d.prog_type)
    }

    /// The target to resolve: the one set, else the one resolved (an
    /// alias made by `expand`), else the section's.
    fn query(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        if let Some(n) = &self.set {
            return Some(n.query.as_slice().into());
        }
        if let Some(r) = &self.resolved {
            let q = [r.module().to_bytes(), b"`", r.name().to_bytes()].concat();
            return Some(q.into());
        }
        self.section.as_ref().map(|n| n.query.as_slice().into())
    }
}

impl Object {
    /// Where program `prog` attaches, and why its target did not resolve
    /// if it did not ([`AttachInfo::error`]).
    pub fn attach_info(&self, prog: usize) -> Result<AttachInfo<'_>> {
        let p = self.program(prog)?;
        let a = &p.attach;
        let optional = if a.optional { section::OPTIONAL } else { 0 };
        let error = a.error.as_deref().map(|f| &f.error);
        let error_text = a.error.as_deref().map(|f| f.text.as_c_str());
        let Some(def) = a.def else {
            return Ok(AttachInfo {
                prog_type: 0,
                expected_attach_type: 0,
                attach_btf_id: 0,
                attach_btf_obj_fd: 0,
                target: None,
                module: None,
                addr: 0,
                flags: optional,
                error,
                error_text,
                autoload: p.autoload,
            });
        };
        let named = a.set.as_deref().or(a.section.as_deref());
        let at_load = if def.attaches_by_btf() || def.prog_type == section::prog::STRUCT_OPS {
            section::TARGET_AT_LOAD
        } else {
            0
        };
        let mut info = AttachInfo {
            prog_type: def.prog_type,
            expected_attach_type: def.expected_attach_type,
            attach_btf_id: 0,
            attach_btf_obj_fd: 0,
            target: named.map(|n| n.name.as_c_str()),
            module: named.and_then(|n| n.module.as_deref()),
            addr: 0,
            flags: def.load_flags() | def.attach_flags() | optional | at_load,
            error,
            error_text,
            autoload: p.autoload,
        };
        // A struct_ops program attaches to the member of the kernel struct
        // its map gives it: the struct's BTF id and the member's index
        // (libbpf's attach_btf_id and expected_attach_type).
        if let Some(o) = &a.struct_ops {
            info.target = Some(&o.text);
            if let Some((id, member)) = o.kernel {
                info.attach_btf_id = id;
                info.expected_attach_type = member;
                info.module = Some(c"vmlinux");
            }
        }
        if let Some(r) = &a.resolved {
            info.target = Some(r.name());
            info.module = Some(r.module());
            info.addr = r.addr();
            if def.attaches_by_btf() {
                info.attach_btf_id = r.target.btf_id;
                info.attach_btf_obj_fd = r.obj_fd;
            }
        }
        Ok(info)
    }

    /// The program's autoload: whether a loader loads it (libbpf's
    /// `bpf_program__autoload`). Off for a `?` section; an alias has its
    /// own.
    pub fn autoload(&self, prog: usize) -> Result<bool> {
        Ok(self.program(prog)?.autoload)
    }

    /// Sets the program's autoload (libbpf's `bpf_program__set_autoload`):
    /// a program with autoload off need not resolve nor relocate, and its
    /// errors fail nothing.
    pub fn set_autoload(&mut self, prog: usize, autoload: bool) -> Result<()> {
        self.program(prog)?;
        self.programs[prog].autoload = autoload;
        Ok(())
    }

    /// The target kind of program `prog`, or why it has none.
    fn target_kind(&self, prog: usize) -> Result<TargetKind> {
        let p = self.program(prog)?;
        let shown = p.section.to_string_lossy();
        match p.attach.def {
            None => Err(Error::unsupported(format!(
                "program `{}`: section `{shown}` is not one libbpf knows, so its program type and \
                 attach target are unknown",
                p.name.to_string_lossy()
            ))),
            Some(d) => d.target.ok_or_else(|| {
                Error::unsupported(format!(
                    "program `{}`: a `{}` program (section `{shown}`) has no kernel function or \
                     tracepoint to attach to",
                    p.name.to_string_lossy(),
                    d.sec.trim_end_matches(['+', '/'])
                ))
            }),
        }
    }

    /// Resolves one program's target against `kernel`.
    fn resolve_one(
        kernel: &Arc<KernelBtf>,
        kind: TargetKind,
        p: &Program,
        query: &[u8],
    ) -> Result<Box<Resolved>> {
        let at = || {
            format!(
                "program `{}` (section `{}`)",
                p.name.to_string_lossy(),
                p.section.to_string_lossy()
            )
        };
        let q = Query::parse(query).map_err(|e| e.context(at()))?;
        let target = kernel.target(kind, &q).map_err(|e| {
            let e = match kernel.other_kind(kind, &q) {
                Some(hint) => Error::new(e.code(), format!("{}; {hint}", e.message())),
                None => e,
            };
            e.context(at())
        })?;
        Ok(Self::resolved(kernel, kind, target))
    }

    fn resolved(kernel: &Arc<KernelBtf>, kind: TargetKind, target: Target) -> Box<Resolved> {
        let obj_fd = match target.obj {
            Some(obj) => kernel.object_fd(obj).unwrap_or(-1),
            None => 0,
        };
        Box::new(Resolved {
            target,
            kind,
            obj_fd,
            kernel: kernel.clone(),
            addr: std::sync::OnceLock::new(),
        })
    }

    /// Resolves the attach target of every program and alias that names
    /// one (its section's, or the one set for it) against `kernel`,
    /// whatever its autoload. Programs already resolved against the same
    /// kernel BTF are left as they are. A target that does not resolve is
    /// that program's error ([`AttachInfo::error`]), as a target libbpf
    /// finds missing fails the program that is loaded, not the object; so
    /// is a section that needs a target at load (fentry, tp_btf, lsm,
    /// iter...) but names none, when none was set.
    pub fn resolve_attach(&mut self, kernel: &Arc<KernelBtf>) {
        for i in 0..self.programs.len() {
            let p = &self.programs[i];
            if p.attach
                .resolved
                .as_ref()
                .is_some_and(|r| Arc::ptr_eq(&r.kernel, kernel))
            {
                continue;
            }
            let Some(def) = p.attach.def else { continue };
            let Some(kind) = def.target else { continue };
            let res = match p.attach.query() {
                Some(q) => Self::resolve_one(kernel, kind, p, &q),
                None if def.attaches_by_btf() => Err(Error::invalid(format!(
                    "program `{}` (section `{}`): no attach target: the section names none, and the \
                     kernel needs one to load a `{}` program; set it with ",
                    p.name.to_string_lossy(),
                    p.section.to_string_lossy(),
                    def.sec.trim_end_matches(['+', '/'])
                ))
                .then_call(Call::SetAttachTarget, "")),
                None => continue,
            };
            let a = &mut self.programs[i].attach;
            match res {
                Ok(r) => {
                    a.resolved = Some(r);
                    a.error = None;
                }
                Err(e) => {
                    a.resolved = None;
                    a.error = Some(Failed::new(e));
                }
            }
        }
    }

    /// Sets where program or alias `prog` attaches: `func`, `module`func`
    /// (or libbpf's `module:func`), or a tracepoint name, resolved now,
    /// before or after [`Object::resolve_btf`]: only this program's attach
    /// state changes (its error goes). A target that does not resolve is
    /// an error of the call, and leaves the program as it was (libbpf's
    /// `bpf_program__set_attach_target`).
    pub fn set_attach_target(
        &mut self,
        prog: usize,
        target: &[u8],
        kernel: &Arc<KernelBtf>,
    ) -> Result<()> {
        let kind = self.target_kind(prog)?;
        if target.is_empty() {
            let p = &self.programs[prog];
            return Err(Error::invalid(format!(
                "program `{}` (section `{}`): the attach target is empty: name a {}",
                p.name.to_string_lossy(),
                p.section.to_string_lossy(),
                kind.what()
            )));
        }
        let query = section::target_query(kind, target);
        let r = Self::resolve_one(kernel, kind, &self.programs[prog], &query)?;
        let a = &mut self.programs[prog].attach;
        a.set = Some(Box::new(Named::new(query)));
        a.resolved = Some(r);
        a.error = None;
        Ok(())
    }

    /// Adds an alias of `prog` for every target of its kind that `pattern`
    /// matches (see [`KernelBtf::expand`]); returns how many. Each is
    /// named `<program>/<target>` (`<program>/<module>:<target>` for a
    /// module's) and shares the program's instructions.
    pub fn expand(
        &mut self,
        prog: usize,
        pattern: &[u8],
        kernel: &Arc<KernelBtf>,
    ) -> Result<usize> {
        let kind = self.target_kind(prog)?;
        let root = self.programs[prog].alias_of;
        let targets = kernel.expand(kind, pattern).map_err(|e| {
            e.context(format!(
                "expanding program `{}` over `{}`",
                self.programs[root].name.to_string_lossy(),
                String::from_utf8_lossy(pattern)
            ))
        })?;
        let n = targets.len();
        self.programs.reserve(n);
        let base = self.programs[root].name.to_bytes().to_vec();
        let mut alias_name = Vec::new();
        for t in targets {
            let module = kernel.text(&t.module).to_bytes();
            let name = kernel.text(&t.name).to_bytes();
            alias_name.clear();
            alias_name.extend_from_slice(&base);
            alias_name.push(b'/');
            if module != b"vmlinux" {
                alias_name.extend_from_slice(module);
                alias_name.push(b':');
            }
            alias_name.extend_from_slice(name);
            let name = CString::new(alias_name.as_slice()).unwrap_or_default();
            let mut alias = self.programs[root].alias(root, name);
            alias.attach.set = None;
            alias.attach.error = None;
            alias.attach.resolved = Some(Self::resolved(kernel, kind, t));
            // The loader asked for it: it is loaded, whatever the root's.
            alias.autoload = true;
            self.programs.push(alias);
        }
        Ok(n)
    }
}
