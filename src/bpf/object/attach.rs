//! Where each program and alias attaches: the program type and expected
//! attach type from its section, the kernel target the section names (or
//! the loader sets, one per alias), resolved against the kernel's BTF and
//! symbols; and aliases made from a pattern, one per target, all sharing
//! the program's single relocated copy.

use std::ffi::{CStr, CString};
use std::sync::Arc;

use crate::bpf::object::struct_ops::OpsMember;
use crate::bpf::section::{self, SectionDef};
use crate::btf::targets::{Target, TargetKind};
use crate::btf::KernelBtf;
use crate::error::Error;

/// A program's attach state: what its section says (shared with its
/// aliases), what the loader set for it, what that resolved to. Small,
/// since `expand` makes one per kernel function.
#[derive(Clone, Debug, Default)]
pub(in crate::bpf) struct Attach {
    /// libbpf's definition of the section (`None`: unknown section).
    pub(in crate::bpf) def: Option<&'static SectionDef>,
    /// The target the section names, after its `/`.
    pub(in crate::bpf) section: Option<Arc<Named>>,
    /// The target the loader set (`set_attach_target`): it wins over the
    /// section's.
    pub(in crate::bpf) set: Option<Box<Named>>,
    pub(in crate::bpf) resolved: Option<Box<ResolvedTarget>>,
    /// Why the target did not resolve (the last resolution): the
    /// program's own failure, which fails no other program.
    pub(in crate::bpf) error: Option<Box<Failed>>,
    /// The section starts with `?` (libbpf's autoload off).
    pub(in crate::bpf) optional: bool,
    /// struct_ops programs: the struct member a struct_ops map gives them.
    pub(in crate::bpf) struct_ops: Option<Box<OpsMember>>,
    /// Multi programs (a `.multi` section, or a program made one): the
    /// attach type, the BTF object it loads with, its functions.
    pub(in crate::bpf) multi: Option<Box<Multi>>,
}

/// A program's attach error, and its message as C text.
#[derive(Clone, Debug)]
pub(in crate::bpf) struct Failed {
    pub(in crate::bpf) error: Error,
    pub(in crate::bpf) text: CString,
}

impl Failed {
    pub(in crate::bpf) fn new(error: Error) -> Box<Failed> {
        let text = CString::new(error.message().replace('\0', " ")).unwrap_or_default();
        Box::new(Failed { error, text })
    }
}

/// A target as a query (`module`name`), and as shown before resolution.
#[derive(Clone, Debug)]
pub(in crate::bpf) struct Named {
    pub(in crate::bpf) query: Vec<u8>,
    pub(in crate::bpf) name: CString,
    pub(in crate::bpf) module: Option<CString>,
    /// A kprobe section's `+offset` into the function (0 otherwise).
    pub(in crate::bpf) offset: u64,
    /// A tracepoint section's category (`tp/sched/sched_switch`: `sched`,
    /// its name `sched_switch`); `None` otherwise, and for a tracepoint
    /// section that names no `/` after its category.
    pub(in crate::bpf) category: Option<CString>,
}

impl Named {
    pub(in crate::bpf) fn new(query: Vec<u8>) -> Named {
        let c = |b: &[u8]| CString::new(b.to_vec()).unwrap_or_default();
        let (name, module) = match memchr::memchr(b'`', &query) {
            Some(t) => (c(&query[t + 1..]), Some(c(&query[..t]))),
            None => (c(&query), None),
        };
        Named {
            query,
            name,
            module,
            offset: 0,
            category: None,
        }
    }

    /// A tracepoint section's `category/name`, split where libbpf's
    /// `attach_tp` splits it (the first `/`); the whole text is the name
    /// when there is none (libbpf cannot attach it: the program's error).
    /// Never a module: a backtick is part of the name.
    pub(in crate::bpf) fn tracepoint(text: &[u8]) -> Named {
        let c = |b: &[u8]| CString::new(b.to_vec()).unwrap_or_default();
        let (category, name) = match memchr::memchr(b'/', text) {
            Some(at) => (Some(c(&text[..at])), &text[at + 1..]),
            None => (None, text),
        };
        Named {
            query: name.to_vec(),
            name: c(name),
            module: None,
            offset: 0,
            category,
        }
    }
}

/// A target resolved against one kernel BTF, which it keeps alive (its
/// names live there, and so does the module BTF fd).
#[derive(Clone, Debug)]
pub(in crate::bpf) struct ResolvedTarget {
    pub(in crate::bpf) target: Target,
    pub(in crate::bpf) kind: TargetKind,
    pub(in crate::bpf) obj_fd: i32,
    pub(in crate::bpf) kernel: Arc<KernelBtf>,
    /// A function target's address, looked up in kallsyms when first
    /// asked: resolving (and relocating) needs no kallsyms.
    pub(in crate::bpf) addr: std::sync::OnceLock<u64>,
}

impl ResolvedTarget {
    pub(in crate::bpf) fn name(&self) -> &CStr {
        self.kernel.text(&self.target.name)
    }
    pub(in crate::bpf) fn module(&self) -> &CStr {
        self.kernel.text(&self.target.module)
    }
    pub(in crate::bpf) fn addr(&self) -> u64 {
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
    /// The program type (`BPF_PROG_TYPE_*`) of `BPF_PROG_LOAD`; 0 for a
    /// section libbpf does not know (a loader loads it as a socket filter).
    pub prog_type: u32,
    /// `expected_attach_type` of `BPF_PROG_LOAD` (`BPF_*` attach type), or
    /// a struct_ops program's member index.
    pub expected_attach_type: u32,
    /// 0 when the type needs none (or before resolution).
    pub attach_btf_id: u32,
    /// 0 for vmlinux; -1 when the module's BTF object has no fd here.
    pub attach_btf_obj_fd: i32,
    /// The target's name (a function, tracepoint, struct member...), after
    /// resolution; `None` when the section names none.
    pub target: Option<&'a CStr>,
    /// `vmlinux` for the core kernel (after resolution).
    pub module: Option<&'a CStr>,
    /// Kernel address of a function target (after resolution).
    pub addr: u64,
    /// The offset into the function a kprobe section names after its `+`
    /// (`kprobe/func+0x10`: 16), which the probe goes at; 0 otherwise (and
    /// for a target the loader set).
    pub offset: u64,
    /// A tracepoint section's category: `tracepoint/sched/sched_switch`
    /// (or `tp/...`) attaches to tracefs' `events/sched/sched_switch`,
    /// category `sched` and [`AttachInfo::target`] `sched_switch`, known
    /// from the section alone. `None` for other sections.
    pub category: Option<&'a CStr>,
    /// [`section::SLEEPABLE`], [`section::XDP_FRAGS`], [`section::OPTIONAL`],
    /// [`section::TARGET_AT_LOAD`], [`section::RETPROBE`], [`section::MULTI`].
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
    pub(in crate::bpf) fn of_section(sec: &[u8]) -> Attach {
        let optional = sec.starts_with(b"?");
        let Some((def, extra)) = section::lookup(sec) else {
            return Attach {
                optional,
                ..Default::default()
            };
        };
        let section = match (def.target, extra) {
            (None, Some(text)) if def.prog_type == section::prog::TRACEPOINT => {
                Some(Arc::new(Named::tracepoint(text)))
            }
            (None, Some(text)) if def.is_multi() => Some(Arc::new(Named::new(
                section::target_query(TargetKind::Function, text),
            ))),
            (Some(kind), Some(text)) => {
                let mut named = Named::new(section::target_query(kind, text));
                if kind == TargetKind::Kprobe {
                    named.offset = section::kprobe_offset(text);
                }
                Some(Arc::new(named))
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
    pub(in crate::bpf) fn prog_type(&self) -> u32 {
        self.def.map_or(0, |d| d.prog_type)
    }

    /// The target to resolve: the one set, else the one resolved (an
    /// alias made by `expand`), else the section's.
    pub(in crate::bpf) fn query(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
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

/// A program's multi attach state: its attach type, the BTF object it
/// loads with, and, once [`Object::multi_attach`] listed them, the
/// functions and their links (`attach/multi.rs`).
#[derive(Clone, Debug)]
pub(in crate::bpf) struct Multi {
    pub(in crate::bpf) attach_type: u32,
    /// `attach_btf_obj_fd` at load of the section's module (0: vmlinux).
    pub(in crate::bpf) load_fd: i32,
    /// The section's module, if it names one.
    pub(in crate::bpf) module: Option<usize>,
    pub(in crate::bpf) kernel: Option<Arc<KernelBtf>>,
    /// The functions, in cookie order (by BTF object, then address).
    pub(in crate::bpf) funcs: Vec<Target>,
    pub(in crate::bpf) links: Vec<Group>,
}

/// The functions of one BTF object: one load, one link.
#[derive(Clone, Debug)]
pub(in crate::bpf) struct Group {
    pub(in crate::bpf) obj: usize,
    pub(in crate::bpf) load_fd: i32,
    /// The cookie of its first function.
    pub(in crate::bpf) start: usize,
    pub(in crate::bpf) ids: Vec<u32>,
    pub(in crate::bpf) cookies: Vec<u64>,
    pub(in crate::bpf) addrs: Vec<u64>,
}
