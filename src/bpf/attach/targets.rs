//! What a loader asks of programs and aliases: where each attaches
//! ([`Object::attach_info`]), its autoload, its target resolved against the
//! kernel's BTF and symbols, set by the loader, or expanded from a pattern
//! into aliases that share the program's single relocated copy (kernel
//! functions, and tracepoints: `tracepoints.rs` lists them). The multi
//! links' methods are in `multi.rs`.

use std::ffi::CString;
use std::path::Path;
use std::sync::Arc;

use super::tracepoints::matching;
use crate::bpf::object::attach::{AttachInfo, Failed, Named, ResolvedTarget};
use crate::bpf::object::{Object, Program};
use crate::bpf::section;
use crate::btf::targets::{Target, TargetKind};
use crate::btf::KernelBtf;
use crate::error::{Call, Error, Result};
use crate::rules::query::Query;

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
                offset: 0,
                category: None,
                flags: optional,
                error,
                error_text,
                autoload: p.autoload,
            });
        };
        let named = a.set.as_deref().or(a.section.as_deref());
        // A multi section that names a module needs that module's BTF
        // object at load (libbpf cannot load it without: EINVAL); other
        // multi programs load with no target.
        let multi_at_load =
            if def.is_multi() && a.section.as_ref().is_some_and(|n| n.module.is_some()) {
                section::TARGET_AT_LOAD
            } else {
                0
            };
        let at_load = if def.attaches_by_btf() || def.prog_type == section::prog::STRUCT_OPS {
            section::TARGET_AT_LOAD
        } else {
            multi_at_load
        };
        let mut info = AttachInfo {
            prog_type: def.prog_type,
            expected_attach_type: def.expected_attach_type,
            attach_btf_id: 0,
            attach_btf_obj_fd: 0,
            target: named.map(|n| n.name.as_c_str()),
            module: named.and_then(|n| n.module.as_deref()),
            addr: 0,
            offset: named.map_or(0, |n| n.offset),
            category: named.and_then(|n| n.category.as_deref()),
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
        // A multi program loads with no target, with its section's module
        // BTF (each link's own: Object::multi_link).
        if let Some(m) = &a.multi {
            info.expected_attach_type = m.attach_type;
            info.attach_btf_id = 0;
            info.attach_btf_obj_fd = m.load_fd;
            info.addr = 0;
            info.flags = (info.flags & !section::TARGET_AT_LOAD) | section::MULTI | multi_at_load;
            if info.module.is_none() && m.module.is_none() {
                info.module = named.map(|_| c"vmlinux");
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
    ) -> Result<Box<ResolvedTarget>> {
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

    fn resolved(kernel: &Arc<KernelBtf>, kind: TargetKind, target: Target) -> Box<ResolvedTarget> {
        let obj_fd = match target.obj {
            Some(obj) => kernel.object_fd(obj).unwrap_or(-1),
            None => 0,
        };
        Box::new(ResolvedTarget {
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
            // A multi program's functions are listed by multi_attach; a
            // `.multi` section resolves only its module.
            if p.attach
                .multi
                .as_ref()
                .is_some_and(|m| m.kernel.as_ref().is_some_and(|k| Arc::ptr_eq(k, kernel)))
            {
                continue;
            }
            if def.is_multi() {
                self.resolve_multi(i, kernel);
                continue;
            }
            if p.attach.multi.is_some() {
                continue;
            }
            if def.prog_type == section::prog::TRACEPOINT {
                let error = Self::tracepoint_error(p);
                self.programs[i].attach.error = error.map(Failed::new);
                continue;
            }
            let Some(kind) = def.target else { continue };
            let offset = p.attach.section.as_ref().map_or(0, |n| n.offset);
            let res = match p.attach.query() {
                // libbpf's attach_kprobe: "kretprobes do not support
                // offset specification".
                Some(_) if p.attach.set.is_none() && offset != 0 && def.attach_flags() & section::RETPROBE != 0 => {
                    Err(Error::invalid(format!(
                        "program `{}` (section `{}`): a return probe takes no offset into its function",
                        p.name.to_string_lossy(),
                        p.section.to_string_lossy()
                    )))
                }
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

    /// A tracepoint section that names a tracepoint without its category
    /// (`tp/sched_switch`): libbpf's `attach_tp` refuses it (`-EINVAL`);
    /// it loads, and only attaching fails.
    fn tracepoint_error(p: &Program) -> Option<Error> {
        let named = p.attach.section.as_deref()?;
        if named.category.is_some() {
            return None;
        }
        let section = p.section.to_string_lossy();
        let prefix = section
            .trim_start_matches('?')
            .split('/')
            .next()
            .unwrap_or("tp");
        Some(Error::invalid(format!(
            "program `{}` (section `{section}`): a tracepoint is named `{prefix}/<category>/<name>` \
             (as tracefs' events/<category>/<name>), and `{}` has no category",
            p.name.to_string_lossy(),
            named.name.to_string_lossy()
        )))
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
    /// module's) and shares the program's instructions. A `tracepoint`/`tp`
    /// program is expanded over the running kernel's tracefs events
    /// instead ([`Object::expand_tracepoints`]; `kernel` is not used).
    pub fn expand(
        &mut self,
        prog: usize,
        pattern: &[u8],
        kernel: &Arc<KernelBtf>,
    ) -> Result<usize> {
        let def = self.program(prog)?.attach.def;
        if def.is_some_and(|d| d.prog_type == section::prog::TRACEPOINT) {
            return self.expand_tracepoints(
                prog,
                pattern,
                &crate::bpf::attach::tracepoints::events_dir()?,
            );
        }
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
            // Its target is its own, not the section's (nor its offset).
            alias.attach.section = None;
            alias.attach.set = None;
            alias.attach.error = None;
            alias.attach.resolved = Some(Self::resolved(kernel, kind, t));
            // The loader asked for it: it is loaded, whatever the root's.
            alias.autoload = true;
            self.programs.push(alias);
        }
        Ok(n)
    }

    /// Adds an alias of tracepoint program `prog` (section `tracepoint` or
    /// `tp`) for every event of `events` (a tracefs `events` directory:
    /// [`super::tracepoints::events_dir`] for the running kernel's) that `pattern` matches
    /// (`category/name` globs, or a name glob for any category); returns
    /// how many, 0 when none match. Each alias is named
    /// `<program>/<category>/<name>`, shares the program's instructions,
    /// and attaches to its own event ([`crate::bpf::AttachInfo::category`] and
    /// `target`).
    pub fn expand_tracepoints(
        &mut self,
        prog: usize,
        pattern: &[u8],
        events: &Path,
    ) -> Result<usize> {
        let p = self.program(prog)?;
        if p.attach.def.map(|d| d.prog_type) != Some(crate::bpf::section::prog::TRACEPOINT) {
            return Err(Error::unsupported(format!(
                "program `{}` (section `{}`) is not a tracepoint program: expand it over kernel \
                 functions or BTF tracepoints instead",
                p.name.to_string_lossy(),
                p.section.to_string_lossy()
            )));
        }
        let root = self.programs[prog].alias_of;
        let found = matching(events, pattern).map_err(|e| {
            e.context(format!(
                "expanding program `{}` over `{}`",
                self.programs[root].name.to_string_lossy(),
                String::from_utf8_lossy(pattern)
            ))
        })?;
        let base = self.programs[root].name.to_bytes().to_vec();
        self.programs.reserve(found.len());
        for (cat, name) in &found {
            let target = [cat.as_slice(), b"/", name].concat();
            let alias_name = [base.as_slice(), b"/", &target].concat();
            let mut alias =
                self.programs[root].alias(root, CString::new(alias_name).unwrap_or_default());
            alias.attach.section = Some(Arc::new(Named::tracepoint(&target)));
            alias.attach.set = None;
            alias.attach.error = None;
            alias.attach.resolved = None;
            alias.autoload = true;
            self.programs.push(alias);
        }
        Ok(found.len())
    }
}
