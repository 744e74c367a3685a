//! The kernel's multi-attach (Linux 7.3): one program on many kernel
//! functions through `tracing_multi` links (`BPF_TRACE_FENTRY_MULTI`,
//! `_FEXIT_MULTI`, `_FSESSION_MULTI`), and which way a kernel attaches one
//! body to many functions.
//!
//! - A `fentry.multi`/`fexit.multi`/`fsession.multi` program (and its
//!   `.s` forms) loads with no attach target: the kernel gives it its
//!   `bpf_multi_func` prototype. A section that names a module
//!   (`fentry.multi/module:glob`) loads with that module's BTF object, as
//!   libbpf does.
//! - [`Object::multi_attach`] lists the functions a pattern matches with
//!   the rules of [`KernelBtf::expand`] (kallsyms text, BTF, ftrace's
//!   `available_filter_functions` where it can be read, what the
//!   trampoline takes), so what the kernel refuses (`__init` and notrace
//!   functions, which libbpf's glob takes from BTF and so fails the whole
//!   link with ENOENT) is left out. It groups them by BTF object: the
//!   kernel resolves a link's BTF ids in the BTF object the program was
//!   loaded with, so each object is one load and one link. Cookie `k` is
//!   function `k`, in that order ([`Object::multi_function`]).
//! - A plain `fentry`/`fexit`/`fsession` program becomes a multi program
//!   the same way; whether the verifier takes its body with the multi
//!   prototype (no typed arguments) is the load's answer.
//! - [`Object::way`] probes the running kernel, as libbpf probes a
//!   feature: a two-instruction multi program loads, or it does not.

use std::ffi::CStr;
use std::sync::{Arc, OnceLock};

use crate::bpf::object::attach::{Failed, Group, Multi};
use crate::bpf::object::Object;
use crate::bpf::section::{self, attach as at, prog};
use crate::btf::targets::TargetKind;
use crate::btf::KernelBtf;
use crate::error::{Error, Result};
use crate::formats::btf::KIND_FUNC;

/// What one `tracing_multi` link needs: load the program once with
/// `attach_btf_obj_fd`, then `BPF_LINK_CREATE` with `attach_type` and
/// the ids, cookies and count.
#[derive(Clone, Copy, Debug)]
pub struct MultiLink<'a> {
    /// `expected_attach_type` at load and the link's attach type.
    pub attach_type: u32,
    /// `attach_btf_obj_fd` at load: 0 for vmlinux, the module's BTF
    /// object fd (owned by the kernel BTF handle), -1 when it has none.
    pub attach_btf_obj_fd: i32,
    /// `vmlinux` or the module.
    pub module: &'a CStr,
    /// The kernel's id of the BTF object (0 for vmlinux, or unknown).
    pub btf_obj_id: u32,
    /// BTF ids of the functions, in the object's BTF.
    pub btf_ids: &'a [u32],
    /// One cookie per function: its index ([`Object::multi_function`]).
    pub cookies: &'a [u64],
    /// The functions' kallsyms addresses (what `bpf_get_func_ip()` gives).
    pub addrs: &'a [u64],
}

/// The function a cookie names.
#[derive(Clone, Copy, Debug)]
pub struct MultiFunction<'a> {
    /// The function.
    pub name: &'a CStr,
    /// `vmlinux` or its module.
    pub module: &'a CStr,
    /// Its kallsyms address (what `bpf_get_func_ip()` gives).
    pub addr: u64,
    /// Its BTF id in its object.
    pub btf_id: u32,
    /// Which link of the program attaches it.
    pub link: usize,
}

/// How one body reaches many kernel functions on the running kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// One program, one `tracing_multi` link per BTF object (7.3).
    Multi,
    /// One relocated body loaded per function, one link each (aliases,
    /// [`Object::expand`]).
    Aliases,
}

/// The multi attach type of a `fentry`/`fexit`/`fsession` attach type.
fn multi_of(attach_type: u32) -> Option<u32> {
    match attach_type {
        at::TRACE_FENTRY => Some(at::TRACE_FENTRY_MULTI),
        at::TRACE_FEXIT => Some(at::TRACE_FEXIT_MULTI),
        at::TRACE_FSESSION => Some(at::TRACE_FSESSION_MULTI),
        _ => None,
    }
}

/// `r0 = 0; exit`.
const RETURN_0: [[u8; 8]; 2] = [[0xb7, 0, 0, 0, 0, 0, 0, 0], [0x95, 0, 0, 0, 0, 0, 0, 0]];

/// Does the running kernel load a multi program of `attach_type`? Probed
/// once per process and attach type.
fn kernel_has_multi(attach_type: u32) -> std::result::Result<(), i32> {
    static PROBES: [OnceLock<std::result::Result<(), i32>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = (attach_type - at::TRACE_FENTRY_MULTI) as usize;
    *PROBES[slot.min(2)].get_or_init(|| {
        crate::base::sys::bpf::prog_load(prog::TRACING, attach_type, 0, &RETURN_0)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))
    })
}

/// Does the running kernel load a `fentry`-like program of
/// `attach_type` on a function of `kernel`'s vmlinux? Probed once per
/// process and attach type.
fn kernel_has_trampolines(kernel: &KernelBtf, attach_type: u32) -> std::result::Result<(), i32> {
    static PROBES: [OnceLock<std::result::Result<(), i32>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match attach_type {
        at::TRACE_FENTRY => 0,
        at::TRACE_FEXIT => 1,
        _ => 2,
    };
    *PROBES[slot].get_or_init(|| {
        // A function every kernel with BPF has, whose prototype the
        // trampoline takes.
        let id = [&b"bpf_fentry_test1"[..], b"vfs_read", b"do_sys_openat2"]
            .iter()
            .find_map(|n| kernel.vmlinux().first(n, KIND_FUNC))
            .ok_or(libc::ENOENT)?;
        crate::base::sys::bpf::prog_load(prog::TRACING, attach_type, id, &RETURN_0)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))
    })
}

fn errno_name(e: i32) -> String {
    let s = std::io::Error::from_raw_os_error(e).to_string();
    let s = s.split(" (os error").next().unwrap_or_default().to_string();
    format!("{s}, errno {e}")
}

impl Object {
    fn shown(&self, prog: usize) -> String {
        let p = &self.programs[prog];
        format!(
            "program `{}` (section `{}`)",
            p.name.to_string_lossy(),
            p.section.to_string_lossy()
        )
    }

    /// The multi attach type program `prog` loads with: its section's
    /// (`fentry.multi`...), or the multi form of its `fentry`, `fexit` or
    /// `fsession`.
    fn multi_type(&self, prog: usize) -> Result<u32> {
        let def = self.program(prog)?.attach.def;
        match def {
            Some(d) if d.is_multi() => Ok(d.expected_attach_type),
            Some(d) if d.prog_type == prog::TRACING => {
                multi_of(d.expected_attach_type).ok_or_else(|| {
                    Error::unsupported(format!(
                        "{}: a `{}` program has no multi link; fentry, fexit and fsession have",
                        self.shown(prog),
                        d.sec.trim_end_matches(['+', '/'])
                    ))
                })
            }
            Some(d) => Err(Error::unsupported(format!(
                "{}: a `{}` program has no tracing_multi link; fentry, fexit and fsession have",
                self.shown(prog),
                d.sec.trim_end_matches(['+', '/'])
            ))),
            None => Err(Error::unsupported(format!(
                "{}: not a section libbpf knows, so it has no attach type",
                self.shown(prog)
            ))),
        }
    }

    /// Which way the running kernel attaches program `prog` to many
    /// functions: [`Way::Multi`] when it loads a multi program of the
    /// program's kind (probed), else [`Way::Aliases`] for a `fentry`,
    /// `fexit` or `fsession` program when it loads that (probed on one of
    /// `kernel`'s functions). `KSYM_ERR_UNSUPPORTED` when neither: a
    /// `.multi` section on a kernel without multi links, or a kernel that
    /// refuses trampolines (the errno in the message).
    pub fn way(&self, prog: usize, kernel: &KernelBtf) -> Result<Way> {
        let multi = self.multi_type(prog)?;
        let multi_err = match kernel_has_multi(multi) {
            Ok(()) => return Ok(Way::Multi),
            Err(e) => e,
        };
        let def = self.programs[prog]
            .attach
            .def
            .expect("multi_type checked it");
        if def.is_multi() {
            return Err(Error::unsupported(format!(
                "{}: this kernel has no tracing_multi link (loading a `{}` program fails: {}; \
                 Linux 7.3 has it): write the body as `{}` and expand it into aliases \
                 (ksym_bpf_program_expand), which every kernel with BPF trampolines loads",
                self.shown(prog),
                kinds_name(multi),
                errno_name(multi_err),
                def.sec.trim_end_matches('+').replace(".multi", "")
            )));
        }
        match kernel_has_trampolines(kernel, def.expected_attach_type) {
            Ok(()) => Ok(Way::Aliases),
            Err(e) => Err(Error::unsupported(format!(
                "{}: this kernel loads neither a multi program ({}) nor a `{}` program on one of \
                 its functions ({}): it has no way to attach this body",
                self.shown(prog),
                errno_name(multi_err),
                kinds_name(def.expected_attach_type),
                errno_name(e)
            ))),
        }
    }

    /// The section's module of multi program `prog` and its BTF object
    /// fd, resolved against `kernel` (libbpf loads a
    /// `fentry.multi/module:glob` program with that module's BTF).
    pub(in crate::bpf) fn resolve_multi(&mut self, prog: usize, kernel: &Arc<KernelBtf>) {
        let p = &self.programs[prog];
        let Some(def) = p.attach.def else { return };
        let module = p.attach.section.as_ref().and_then(|n| n.module.clone());
        let (obj, error) = match &module {
            None => (None, None),
            Some(m) => match kernel.module_object(m.to_bytes()) {
                Some(obj) => (Some(obj), None),
                None => (
                    None,
                    Some(Error::not_found(format!(
                        "{}: module `{}` has no BTF in this kernel (not loaded, or built \
                         without BTF), so there is nothing to load the program with",
                        self.shown(prog),
                        m.to_string_lossy()
                    ))),
                ),
            },
        };
        let load_fd = obj.map_or(0, |o| kernel.object_fd(o).unwrap_or(-1));
        let a = &mut self.programs[prog].attach;
        a.error = error.map(Failed::new);
        match &mut a.multi {
            Some(m) if !m.funcs.is_empty() => {}
            _ => {
                a.multi = Some(Box::new(Multi {
                    attach_type: def.expected_attach_type,
                    load_fd,
                    module: obj,
                    kernel: Some(kernel.clone()),
                    funcs: Vec::new(),
                    links: Vec::new(),
                }))
            }
        }
    }

    /// Lists the functions program `prog` attaches to through
    /// `tracing_multi` links: those `pattern` matches (`glob` or
    /// ``modglob`glob``; `None`: the section's, `fentry.multi/<glob>`), as
    /// [`KernelBtf::expand`] lists them. A `fentry`, `fexit` or `fsession`
    /// program becomes a multi program (its target, if any, goes). Returns
    /// how many links (one per BTF object); 0, and nothing changed, when
    /// nothing matches.
    pub fn multi_attach(
        &mut self,
        prog: usize,
        pattern: Option<&[u8]>,
        kernel: &Arc<KernelBtf>,
    ) -> Result<usize> {
        let attach_type = self.multi_type(prog)?;
        let p = &self.programs[prog];
        let query = match pattern {
            Some([]) => {
                return Err(Error::invalid(format!(
                    "{}: the pattern is empty: name the functions (`glob` or `module`glob`)",
                    self.shown(prog)
                )))
            }
            Some(q) => section::target_query(TargetKind::Function, q),
            None => match &p.attach.section {
                Some(n) if p.attach.def.is_some_and(|d| d.is_multi()) => n.query.clone(),
                _ => {
                    return Err(Error::invalid(format!(
                        "{}: the section names no functions: give a pattern",
                        self.shown(prog)
                    )))
                }
            },
        };
        let mut funcs = kernel.expand(TargetKind::Function, &query).map_err(|e| {
            e.context(format!(
                "{} over `{}`",
                self.shown(prog),
                String::from_utf8_lossy(&query)
            ))
        })?;
        if funcs.is_empty() {
            return Ok(0);
        }
        // By BTF object (vmlinux first), each in address order.
        funcs.sort_by_key(|t| (t.obj.unwrap_or(0), t.addr));
        let mut links: Vec<Group> = Vec::new();
        for (k, t) in funcs.iter().enumerate() {
            let obj = t.obj.unwrap_or(0);
            if links.last().is_none_or(|g| g.obj != obj) {
                links.push(Group {
                    obj,
                    load_fd: kernel.object_fd(obj).unwrap_or(-1),
                    start: k,
                    ids: Vec::new(),
                    cookies: Vec::new(),
                    addrs: Vec::new(),
                });
            }
            let g = links.last_mut().expect("pushed above");
            g.ids.push(t.btf_id);
            g.cookies.push(k as u64);
            g.addrs.push(t.addr);
        }
        let module = self.programs[prog]
            .attach
            .section
            .as_ref()
            .and_then(|n| n.module.as_ref());
        let module = module.and_then(|m| kernel.module_object(m.to_bytes()));
        let a = &mut self.programs[prog].attach;
        a.multi = Some(Box::new(Multi {
            attach_type,
            load_fd: module.map_or(0, |o| kernel.object_fd(o).unwrap_or(-1)),
            module,
            kernel: Some(kernel.clone()),
            funcs,
            links: links.clone(),
        }));
        a.resolved = None;
        a.error = None;
        Ok(links.len())
    }

    fn multi_state(&self, prog: usize) -> Result<(&Multi, &KernelBtf)> {
        let a = &self.program(prog)?.attach;
        match a.multi.as_deref() {
            Some(m) if !m.funcs.is_empty() => Ok((m, m.kernel.as_deref().expect("set with funcs"))),
            _ => Err(Error::not_found(format!(
                "{}: no functions listed for a multi link: call multi_attach first",
                self.shown(prog)
            ))),
        }
    }

    /// Link `link` of multi program `prog` ([`Object::multi_attach`]).
    pub fn multi_link(&self, prog: usize, link: usize) -> Result<MultiLink<'_>> {
        let (m, kernel) = self.multi_state(prog)?;
        let g = m.links.get(link).ok_or_else(|| {
            Error::not_found(format!(
                "{}: no multi link {link} (it has {})",
                self.shown(prog),
                m.links.len()
            ))
        })?;
        Ok(MultiLink {
            attach_type: m.attach_type,
            attach_btf_obj_fd: g.load_fd,
            module: kernel.object_name(g.obj),
            btf_obj_id: kernel.object_id(g.obj),
            btf_ids: &g.ids,
            cookies: &g.cookies,
            addrs: &g.addrs,
        })
    }

    /// The function cookie `cookie` names in multi program `prog`.
    pub fn multi_function(&self, prog: usize, cookie: u64) -> Result<MultiFunction<'_>> {
        let (m, kernel) = self.multi_state(prog)?;
        let t = usize::try_from(cookie)
            .ok()
            .and_then(|k| m.funcs.get(k))
            .ok_or_else(|| {
                Error::not_found(format!(
                    "{}: no function has cookie {cookie} (0 to {})",
                    self.shown(prog),
                    m.funcs.len() - 1
                ))
            })?;
        let link = m
            .links
            .iter()
            .rposition(|g| g.start as u64 <= cookie)
            .unwrap_or(0);
        Ok(MultiFunction {
            name: kernel.text(&t.name),
            module: kernel.text(&t.module),
            addr: t.addr,
            btf_id: t.btf_id,
            link,
        })
    }
}

fn kinds_name(attach_type: u32) -> String {
    crate::bpf::section::kinds::attach_type_name(attach_type).map_or_else(
        || attach_type.to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
