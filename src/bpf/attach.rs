//! Where each program and alias attaches: the program type and expected
//! attach type from its section, the kernel target the section names (or
//! the loader sets, one per alias), resolved against the kernel's BTF and
//! symbols; and aliases made from a pattern, one per target, all sharing
//! the program's single relocated copy.

use std::ffi::{CStr, CString};
use std::sync::Arc;

use super::section::{self, SectionDef};
use super::{Object, Program};
use crate::btf::targets::{Target, TargetKind};
use crate::btf::KernelBtf;
use crate::error::{Error, Result};
use crate::rules::query::Query;

/// A program's attach state.
#[derive(Clone, Debug, Default)]
pub(super) struct Attach {
    /// libbpf's definition of the section (`None`: unknown section).
    def: Option<&'static SectionDef>,
    /// The target the section names, as written after the `/`.
    section_target: Option<Vec<u8>>,
    /// The target the loader set (`set_attach_target`, `expand`): it wins
    /// over the section's.
    set_target: Option<Vec<u8>>,
    /// The section's or set target split for display before resolution.
    shown: Option<(CString, Option<CString>)>,
    resolved: Option<Resolved>,
}

/// A target resolved against one kernel BTF, which it keeps alive (the
/// module BTF fd belongs to it).
#[derive(Clone, Debug)]
struct Resolved {
    target: Target,
    obj_fd: i32,
    kernel: Arc<KernelBtf>,
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
    /// [`section::SLEEPABLE`], [`section::XDP_FRAGS`].
    pub flags: u32,
}

/// `module`name` as the display pair (name, module).
fn shown(query: &[u8]) -> (CString, Option<CString>) {
    let c = |b: &[u8]| CString::new(b.to_vec()).unwrap_or_default();
    match memchr::memchr(b'`', query) {
        Some(t) => (c(&query[t + 1..]), Some(c(&query[..t]))),
        None => (c(query), None),
    }
}

impl Attach {
    /// The attach state a section gives.
    pub(super) fn of_section(sec: &[u8]) -> Attach {
        let Some((def, extra)) = section::lookup(sec) else {
            return Attach::default();
        };
        let section_target = match (def.target, extra) {
            (Some(kind), Some(text)) => Some(section::target_query(kind, text)),
            _ => None,
        };
        Attach {
            def: Some(def),
            shown: section_target.as_deref().map(shown),
            section_target,
            ..Default::default()
        }
    }

    fn query(&self) -> Option<&[u8]> {
        self.set_target
            .as_deref()
            .or(self.section_target.as_deref())
    }
}

impl Object {
    /// Where program `prog` attaches.
    pub fn attach_info(&self, prog: usize) -> Result<AttachInfo<'_>> {
        let a = &self.program(prog)?.attach;
        let Some(def) = a.def else {
            return Ok(AttachInfo {
                prog_type: 0,
                expected_attach_type: 0,
                attach_btf_id: 0,
                attach_btf_obj_fd: 0,
                target: None,
                module: None,
                addr: 0,
                flags: 0,
            });
        };
        let mut info = AttachInfo {
            prog_type: def.prog_type,
            expected_attach_type: def.expected_attach_type,
            attach_btf_id: 0,
            attach_btf_obj_fd: 0,
            target: a.shown.as_ref().map(|s| s.0.as_c_str()),
            module: a.shown.as_ref().and_then(|s| s.1.as_deref()),
            addr: 0,
            flags: def.load_flags(),
        };
        if let Some(r) = &a.resolved {
            info.target = Some(&r.target.name);
            info.module = Some(&r.target.module);
            info.addr = r.target.addr;
            if def.attaches_by_btf() {
                info.attach_btf_id = r.target.btf_id;
                info.attach_btf_obj_fd = r.obj_fd;
            }
        }
        Ok(info)
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
    ) -> Result<Resolved> {
        let at = || {
            format!(
                "program `{}` (section `{}`)",
                p.name.to_string_lossy(),
                p.section.to_string_lossy()
            )
        };
        let q = Query::parse(query).map_err(|e| e.context(at()))?;
        let target = kernel.target(kind, &q).map_err(|e| e.context(at()))?;
        Ok(Self::resolved(kernel, target))
    }

    fn resolved(kernel: &Arc<KernelBtf>, target: Target) -> Resolved {
        let obj_fd = match target.obj {
            Some(obj) => kernel.object_fd(obj).unwrap_or(-1),
            None => 0,
        };
        Resolved {
            target,
            obj_fd,
            kernel: kernel.clone(),
        }
    }

    /// Resolves the attach target of every program and alias that names
    /// one (its section's, or the one set for it) against `kernel`.
    /// Programs already resolved against the same kernel BTF are left as
    /// they are. Every program is tried; the first failure is returned.
    pub fn resolve_attach(&mut self, kernel: &Arc<KernelBtf>) -> Result<()> {
        let mut first_err = None;
        for i in 0..self.programs.len() {
            let p = &self.programs[i];
            let (Some(kind), Some(q)) = (p.attach.def.and_then(|d| d.target), p.attach.query())
            else {
                continue;
            };
            if p.attach
                .resolved
                .as_ref()
                .is_some_and(|r| Arc::ptr_eq(&r.kernel, kernel))
            {
                continue;
            }
            match Self::resolve_one(kernel, kind, p, q) {
                Ok(r) => self.programs[i].attach.resolved = Some(r),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Sets where program or alias `prog` attaches: `func`, `module`func`
    /// (or libbpf's `module:func`), or a tracepoint name, resolved now.
    pub fn set_attach_target(
        &mut self,
        prog: usize,
        target: &[u8],
        kernel: &Arc<KernelBtf>,
    ) -> Result<()> {
        let kind = self.target_kind(prog)?;
        let query = section::target_query(kind, target);
        let r = Self::resolve_one(kernel, kind, &self.programs[prog], &query)?;
        let a = &mut self.programs[prog].attach;
        a.shown = Some(shown(&query));
        a.set_target = Some(query);
        a.resolved = Some(r);
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
        for t in targets {
            let module = t.module.to_bytes();
            let name = t.name.to_bytes();
            let base = self.programs[root].name.to_bytes();
            let alias_name = if module == b"vmlinux" {
                [base, b"/", name].concat()
            } else {
                [base, b"/", module, b":", name].concat()
            };
            let query = [module, b"`", name].concat();
            let mut alias =
                self.programs[root].alias(root, CString::new(alias_name).unwrap_or_default());
            alias.attach.shown = Some(shown(&query));
            alias.attach.set_target = Some(query);
            alias.attach.resolved = Some(Self::resolved(kernel, t));
            self.programs.push(alias);
        }
        Ok(n)
    }
}
