//! Answering a query against the kernel's BTF: a name, `module`name` or
//! `vmlinux`name` of a kind, in vmlinux and the modules as
//! [`BtfScope`] says (a built-in module's name answered from vmlinux's
//! BTF where kallsyms says the symbol is the module's), with the rules'
//! messages when it is missing or ambiguous.

use super::{
    answer, btf_ambiguous, kind_name, module_eq, raw, BtfScope, CName, Error, Found, KernelBtf,
    ModuleKind, NameIndexedBtf, Query, Result,
};

impl KernelBtf {
    /// Looks up `name`, `module`name` or `vmlinux`name` of `kind` (0: any
    /// kind) as `BtfScope` says. BTF names may hold spaces (`unsigned
    /// int`): the query is split at its backtick only.
    pub fn find(&self, query: &[u8], kind: u32) -> Result<Found<'_>> {
        let q = Query::split(query)?;
        self.find_query(&q, b"", kind, "type")
    }

    /// [`KernelBtf::find`] for a parsed query whose name is looked up with
    /// `prefix` in front (`btf_trace_` for tracepoints...); `what` names
    /// the query in messages.
    pub fn find_query(
        &self,
        q: &Query<'_>,
        prefix: &[u8],
        kind: u32,
        what: &str,
    ) -> Result<Found<'_>> {
        let full: Vec<u8> = [prefix, q.name].concat();
        let found = |obj: usize| -> Result<Option<Found<'_>>> {
            let blob = self.object(obj)?;
            Ok(blob.first(&full, kind).map(|id| self.found(obj, blob, id)))
        };
        match BtfScope::of(q) {
            BtfScope::Vmlinux => {
                if let Some(f) = found(0)? {
                    return Ok(f);
                }
            }
            BtfScope::Module(m) => match self.module_object(m) {
                Some(obj) => {
                    if let Some(f) = found(obj)? {
                        return Ok(f);
                    }
                }
                None => return self.builtin_module(q, m, &full, kind, what),
            },
            BtfScope::Any => {
                if let Some(f) = found(0)? {
                    return Ok(f);
                }
                let mut hits: Vec<Found<'_>> = Vec::new();
                for obj in 1..self.object_count() {
                    // A module whose BTF went away has nothing to say.
                    if let Ok(Some(f)) = found(obj) {
                        hits.push(f);
                    }
                }
                match hits.len() {
                    0 => {}
                    1 => return Ok(hits[0]),
                    _ => {
                        let names: Vec<&[u8]> = hits
                            .iter()
                            .map(|f| self.object_name(f.obj).to_bytes())
                            .collect();
                        return Err(btf_ambiguous(q, what, &names));
                    }
                }
            }
        }
        Err(self.not_found(q, &full, kind, what))
    }

    /// `module`name` for a module without BTF of its own: built in (its
    /// types are in vmlinux's BTF, and kallsyms says which functions are
    /// its own), or not there at all.
    fn builtin_module(
        &self,
        q: &Query<'_>,
        m: &[u8],
        full: &[u8],
        kind: u32,
        what: &str,
    ) -> Result<Found<'_>> {
        let builtin = self.symbols().ok().is_some_and(|t| {
            t.modules()
                .any(|mi| module_eq(mi.name.to_bytes(), m) && mi.kind == ModuleKind::Builtin)
        });
        if builtin {
            if let Some(id) = self.vmlinux.first(full, kind) {
                let is_func = self
                    .vmlinux
                    .btf
                    .ty(id)
                    .is_some_and(|t| t.kind() == raw::KIND_FUNC);
                // A function must be the module's own, as kallsyms attributes it.
                let owned = !is_func
                    || self
                        .symbols()
                        .is_ok_and(|t| t.lookup(&[m, b"`", full].concat()).is_ok());
                if owned {
                    return Ok(self.found(0, &self.vmlinux, id));
                }
            }
        }
        // A loadable module in kallsyms with no BTF: the kernel has no
        // module BTF (before Linux 5.11 or without
        // CONFIG_DEBUG_INFO_BTF_MODULES), or this one was built without.
        let loaded = self.symbols().is_ok_and(|t| {
            t.modules()
                .any(|i| i.kind == ModuleKind::Loadable && i.name.to_bytes() == m)
        });
        if loaded {
            return Err(Error::not_found(format!(
                "{what} `{q}`: module `{}` is loaded but has no BTF in {} ({}); a kprobe can still \
                 attach to its functions",
                String::from_utf8_lossy(m),
                self.modules_dir_shown(),
                self.why_no_module_btf()
            )));
        }
        let known: Vec<String> = self
            .modules
            .iter()
            .take(8)
            .map(|m| m.name.to_string_lossy().into_owned())
            .collect();
        Err(Error::not_found(format!(
            "{what} `{q}`: no BTF for module `{}` in {} (not loaded; or built in: then its types are \
             in vmlinux's BTF, found as `vmlinux`{}` or `{}`){}",
            String::from_utf8_lossy(m),
            self.modules_dir_shown(),
            String::from_utf8_lossy(q.name),
            String::from_utf8_lossy(q.name),
            if known.is_empty() {
                String::new()
            } else {
                format!("; modules with BTF: {}{}", known.join(", "), if self.modules.len() > 8 { ", ..." } else { "" })
            }
        )))
    }

    pub(super) fn modules_dir_shown(&self) -> String {
        self.modules
            .first()
            .and_then(|m| m.path.parent())
            .map_or_else(
                || "the module BTF directory".into(),
                |p| p.display().to_string(),
            )
    }

    fn found<'k>(&'k self, obj: usize, blob: &'k NameIndexedBtf, id: u32) -> Found<'k> {
        let t = blob.btf.ty(id);
        let name = t
            .and_then(|t| blob.btf.cstr(t.name_off))
            .and_then(CName::new)
            .unwrap_or(CName::from_cstr(c""));
        Found {
            obj,
            id,
            kind: t.map_or(0, |t| t.kind()),
            name,
        }
    }

    /// "not found", with where else the name is: another kind, another
    /// BTF object.
    fn not_found(&self, q: &Query<'_>, full: &[u8], kind: u32, what: &str) -> Error {
        let mut elsewhere: Vec<String> = Vec::new();
        for obj in 0..self.object_count() {
            let Ok(blob) = self.object(obj) else { continue };
            blob.each_named(full, |id| {
                let k = blob.btf.ty(id).map_or(0, |t| t.kind());
                let s = format!(
                    "{} `{}`{}`",
                    kind_name(k),
                    self.object_name(obj).to_string_lossy(),
                    String::from_utf8_lossy(full)
                );
                if elsewhere.len() < 5 && !elsewhere.contains(&s) {
                    elsewhere.push(s);
                }
            });
        }
        let scope = match BtfScope::of(q) {
            BtfScope::Any => format!(
                "in the BTF of vmlinux ({}) or of any module",
                self.vmlinux_path.display()
            ),
            BtfScope::Vmlinux => format!("in vmlinux's BTF ({})", self.vmlinux_path.display()),
            BtfScope::Module(m) => format!("in the BTF of module `{}`", String::from_utf8_lossy(m)),
        };
        let wants_func = kind == 0 || kind == raw::KIND_FUNC;
        let kind = (kind != 0).then(|| kind_name(kind));
        let e = answer::btf_not_found(what, q, full, kind, &scope, &elsewhere);
        match self.in_module_without_btf(q, full) {
            Some(m) if wants_func && elsewhere.is_empty() => Error::with_kind(
                e.kind(),
                format!(
                    "{}; /proc/kallsyms has it in module `{}`, loaded but without BTF ({}): a kprobe \
                     can attach to it",
                    e.message(),
                    String::from_utf8_lossy(&m),
                    self.why_no_module_btf()
                ),
            ),
            _ => e,
        }
    }

    /// The loaded module (no BTF object of its own) whose function
    /// `full` is, by kallsyms, for an unqualified query.
    fn in_module_without_btf(&self, q: &Query<'_>, full: &[u8]) -> Option<Vec<u8>> {
        if !matches!(BtfScope::of(q), BtfScope::Any) {
            return None;
        }
        let t = self.symbols().ok()?;
        let all = t.lookup_all(full).ok()?;
        all.iter()
            .filter(|s| s.ty.eq_ignore_ascii_case(&b't'))
            .map(|s| s.module.to_bytes())
            .find(|m| {
                *m != b"vmlinux"
                    && self.module_object(m).is_none()
                    && t.modules()
                        .any(|i| i.kind == ModuleKind::Loadable && i.name.to_bytes() == *m)
            })
            .map(<[u8]>::to_vec)
    }

    /// Why a loaded module has no BTF: none has (the kernel has no module
    /// BTF), or this one was built without.
    pub(super) fn why_no_module_btf(&self) -> &'static str {
        if self.object_count() <= 1 {
            "this kernel has no module BTF at all: it needs CONFIG_DEBUG_INFO_BTF_MODULES, from Linux 5.11"
        } else {
            "the module was built without BTF"
        }
    }
}
