//! `Object`'s methods of the link: the untyped externs resolved against
//! kallsyms ([`Object::resolve_ksyms`]), the maps' fds the loader created
//! ([`Object::set_map_fd`]), what needs the kernel's BTF
//! ([`Object::resolve_btf`]: attach targets, CO-RE relocations, typed
//! ksyms, kfuncs, `.kconfig` values), and writing everything into the
//! layouts ([`Object::relocate`]).

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::externs;
use super::reloc;
use crate::bpf::attach::struct_ops;
use crate::bpf::core::{self, Cands};
use crate::bpf::link::kconfig_values::{self, KernelFacts};
use crate::bpf::object::attach::Failed;
use crate::bpf::object::externs::ExternKind;
use crate::bpf::object::{KernelStep, Object, RelocKind, RELOC_POISONED, RELOC_RESOLVED};
use crate::btf::KernelBtf;
use crate::error::{Call, Error, Result, AMBIGUOUS, INVALID, NOT_FOUND, RESTRICTED};
use crate::resolve::cache::Cache;
use crate::resolve::{not_found_error, resolve_parsed, Source};
use crate::rules::query::Query;

/// `LINUX_*` values of the running kernel, probed once per process.
struct RunningKernel<'k> {
    kernel: &'k KernelBtf,
}

impl KernelFacts for RunningKernel<'_> {
    fn kernel_version(&self) -> u64 {
        static V: OnceLock<u64> = OnceLock::new();
        *V.get_or_init(|| {
            kernel_version_in(
                Path::new("/proc/version_signature"),
                Path::new("/proc/sys/kernel/osrelease"),
                Path::new("/proc/sys/kernel/version"),
            )
        })
    }

    fn has_bpf_cookie(&self) -> bool {
        // libbpf's probe: a kprobe program calling bpf_get_attach_cookie
        // (helper 174) loads.
        static V: OnceLock<bool> = OnceLock::new();
        *V.get_or_init(|| {
            const PROG_TYPE_KPROBE: u32 = 2;
            let call = [0x85, 0, 0, 0, 174, 0, 0, 0];
            let exit = [0x95, 0, 0, 0, 0, 0, 0, 0];
            crate::base::sys::bpf::prog_loads(PROG_TYPE_KPROBE, &[call, exit])
        })
    }

    fn has_syscall_wrapper(&self) -> bool {
        // libbpf opens a kprobe on __<arch>_sys_bpf: it needs the kprobe
        // PMU and the wrapper function.
        let prefix = match std::env::consts::ARCH {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            "s390x" => "s390x",
            "riscv64" => "riscv",
            "powerpc64" => "powerpc",
            _ => return false,
        };
        let pmu = std::path::Path::new("/sys/bus/event_source/devices/kprobe/type").exists();
        let name = format!("__{prefix}_sys_bpf");
        pmu && self
            .kernel
            .symbols()
            .is_ok_and(|t| t.lookup(name.as_bytes()).is_ok())
    }
}

impl Object {
    /// Resolves every extern in one pass: through `cache` when given (misses
    /// cost one pass, hits none), else over /proc/kallsyms (and the default
    /// built-in ranges file, if any). A strong extern not found is
    /// `KSYM_ERR_NOT_FOUND` naming it and near matches; a weak one gets 0;
    /// an ambiguous one is an error; a restricted kallsyms is an error unless
    /// every extern is weak.
    pub fn resolve_ksyms(&mut self, cache: Option<&Cache>) -> Result<()> {
        let untyped: Vec<usize> = (0..self.externs.len())
            .filter(|&i| self.externs[i].kind == ExternKind::Ksym)
            .collect();
        if untyped.is_empty() {
            self.stage.ksyms_resolved();
            return Ok(());
        }
        let names: Vec<&[u8]> = untyped
            .iter()
            .map(|&i| self.externs[i].name.to_bytes())
            .collect();
        let parsed: Vec<Query<'_>> = names
            .iter()
            .map(|n| {
                Query::parse(n)
                    .map_err(|e| e.context(format!("extern `{}`", String::from_utf8_lossy(n))))
            })
            .collect::<Result<_>>()?;
        let default_source;
        let source = match cache {
            Some(c) => c.source(),
            None => {
                default_source = Source::proc_kallsyms();
                &default_source
            }
        };
        let answers: Result<Vec<(u64, i32)>> = match cache {
            Some(c) => c.resolve(&names),
            None => resolve_parsed(source, &parsed)
                .map(|(a, _)| a.iter().map(|a| (a.addr, a.err)).collect()),
        };
        let all_weak = untyped.iter().all(|&i| self.externs[i].weak);
        let answers = match answers {
            Ok(a) => a,
            Err(e) if e.code() == RESTRICTED && all_weak => vec![(0, NOT_FOUND); untyped.len()],
            Err(e) => {
                return Err(e.context(format!(
                    "resolving the {} untyped extern(s) of the object",
                    untyped.len()
                )))
            }
        };
        for ((&i, &(addr, err)), q) in untyped.iter().zip(&answers).zip(&parsed) {
            let x = &self.externs[i];
            let name = x.name.to_string_lossy();
            match err {
                0 => {}
                NOT_FOUND if x.weak => {}
                NOT_FOUND => {
                    // The near matches need one more pass: only on this error path.
                    let hint = not_found_error(source, q)
                        .map(|e| format!(": {}", e.message()))
                        .unwrap_or_default();
                    return Err(Error::not_found(format!(
                        "extern `{name}` (strong __ksym) not found{hint}; declare it __weak if it may be absent"
                    )));
                }
                AMBIGUOUS => {
                    return Err(Error::new(
                        AMBIGUOUS,
                        format!(
                            "extern `{name}` is ambiguous: several kernel symbols at different addresses \
                             (lowest {addr:#x}); name one with an asm label such as \
                             `extern const void x __asm__(\"module`{name}\") __ksym;`"
                        ),
                    ))
                }
                e => return Err(Error::new(e, format!("extern `{name}`: cannot be resolved"))),
            }
        }
        for (&i, &(addr, err)) in untyped.iter().zip(&answers) {
            let x = &mut self.externs[i];
            x.resolved = err == 0;
            x.addr = if err == 0 { addr } else { 0 };
        }
        self.stage.ksyms_resolved();
        Ok(())
    }

    /// Records the fd the loader created map `map` with; relocate writes it
    /// into the instructions that load the map.
    pub fn set_map_fd(&mut self, map: usize, fd: i32) -> Result<()> {
        self.map(map)?;
        let m = &mut self.maps[map];
        if fd < 0 {
            return Err(Error::invalid(format!(
                "fd {fd} for map `{}` is negative",
                m.name.to_string_lossy()
            )));
        }
        m.fd = Some(fd);
        Ok(())
    }

    /// Everything that needs the kernel's BTF, for every program and alias,
    /// in one call: attach targets, CO-RE relocations (each instruction
    /// once, however many layouts and aliases hold it), typed ksyms and
    /// kfuncs (BTF ids, module BTF fds, the fd array), `.kconfig` values
    /// (the `.kconfig` map's initial value). Every part is tried; the first
    /// failure is returned, and relocate reports a CO-RE or extern failure
    /// again.
    ///
    /// As libbpf's `bpf_object__prepare`: an attach target that does not
    /// resolve fails only its program (see [`Object::resolve_attach`]); a
    /// CO-RE failure fails the object only when a program to be loaded
    /// (autoload on) holds the instruction; externs and struct_ops maps
    /// are the object's, whoever uses them.
    pub fn resolve_btf(&mut self, kernel: &Arc<KernelBtf>) -> Result<()> {
        let mut first: Option<Error> = None;
        self.resolve_attach(kernel);
        let needed = self.layouts_needed();
        if let Some(local) = &self.local_btf {
            for p in &mut self.programs {
                if let Some(o) = p.attach.struct_ops.as_deref_mut() {
                    o.kernel = None;
                    p.attach.error = None;
                }
            }
            for m in &mut self.maps {
                if let Err(e) = struct_ops::resolve(m, local, kernel, &mut self.programs) {
                    // Its programs have no kernel member to attach to
                    // (libbpf fails them at load): each says why.
                    if let Some(st) = m.struct_ops.as_deref() {
                        for &(_, p) in &st.funcs {
                            self.programs[p].attach.error = Some(Failed::new(e.clone()));
                        }
                    }
                    first.get_or_insert(e);
                }
            }
            let mut cands = Cands::default();
            let mut loaded = vec![false; self.core_sites.len()];
            for (l, _) in self.layouts.iter().zip(&needed).filter(|(_, &n)| n) {
                for &(_, site) in &l.core {
                    loaded[site] = true;
                }
            }
            for (i, site) in self.core_sites.iter_mut().enumerate() {
                if !site.used {
                    continue;
                }
                let r = core::resolve(local, kernel, &site.rec, &mut cands, &site.owner, i);
                if let Err(e) = &r {
                    if loaded[i] {
                        first.get_or_insert_with(|| e.clone());
                    }
                }
                site.res = Some(r);
            }
        }
        let externs = match &self.local_btf {
            Some(local) => externs::resolve_btf(&mut self.externs, local, kernel),
            None => Ok(Vec::new()),
        };
        let kconfig = match (&externs, self.kconfig_map) {
            (Ok(_), Some(m)) => {
                let facts = RunningKernel { kernel };
                kconfig_values::kconfig_values(
                    &mut self.externs,
                    || Ok(kernel.kconfig()?.to_vec()),
                    &facts,
                )
                .map(|data| self.maps[m].initial_value = Some(data))
            }
            _ => Ok(()),
        };
        let failed = match externs.and_then(|fds| kconfig.map(|_| fds)) {
            Ok(fds) => {
                self.fd_array = fds;
                None
            }
            Err(e) => {
                first.get_or_insert_with(|| e.clone());
                Some(e)
            }
        };
        self.stage.btf_resolved(KernelStep {
            kernel: kernel.clone(),
            failed,
        });
        self.note_results();
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Writes what resolve_btf found into the relocations the C API shows.
    fn note_results(&mut self) {
        let sites = &self.core_sites;
        let externs = &self.externs;
        for l in &mut self.layouts {
            let mut core = l.core.iter();
            for r in &mut l.relocs {
                match r.kind {
                    RelocKind::Core => {
                        let Some(&(_, site)) = core.next() else {
                            continue;
                        };
                        (r.addend, r.flags) = match &sites[site].res {
                            Some(Ok(res)) if res.res.poison => (0, RELOC_RESOLVED | RELOC_POISONED),
                            Some(Ok(res)) => (res.res.new_val as i64, RELOC_RESOLVED),
                            _ => (0, 0),
                        };
                    }
                    RelocKind::KsymBtf | RelocKind::Kfunc => {
                        let x = &externs[r.target];
                        r.addend = x.btf_id as i64;
                        r.flags = if x.resolved { RELOC_RESOLVED } else { 0 };
                    }
                    _ => {}
                }
            }
        }
    }

    /// Which layouts a program to be loaded (autoload on) uses: those must
    /// relocate; the others relocate when they can.
    pub(in crate::bpf) fn layouts_needed(&self) -> Vec<bool> {
        let mut needed = vec![false; self.layouts.len()];
        for p in self.programs.iter().filter(|p| p.autoload) {
            needed[p.layout] = true;
        }
        needed
    }

    /// Why layout `li` cannot be written, at one of three steps (so that,
    /// over all layouts, the first problem reported is the same whatever
    /// the order of the relocations): 0, kernel BTF (resolve_btf not
    /// called, an extern or CO-RE failure); 1, a map without an fd; 2,
    /// resolve_ksyms not called.
    fn layout_problem(&self, li: usize, step: u8) -> Option<Error> {
        let l = &self.layouts[li];
        let owner = || self.programs[l.owner].name.to_string_lossy();
        match step {
            0 => {
                let needs_btf = |k: RelocKind| {
                    matches!(
                        k,
                        RelocKind::Core
                            | RelocKind::KsymBtf
                            | RelocKind::Kfunc
                            | RelocKind::Kconfig
                    )
                };
                if let Some(r) = l.relocs.iter().find(|r| needs_btf(r.kind)) {
                    let Some(step) = self.stage.btf() else {
                        let what = match r.kind {
                            RelocKind::Core => "a CO-RE relocation",
                            RelocKind::KsymBtf => "a typed __ksym",
                            RelocKind::Kfunc => "a kfunc call",
                            _ => "a .kconfig extern",
                        };
                        return Some(Error::new(
                            INVALID,
                            format!(
                                "program `{}`, instruction {}: {what} (`{}`) needs the kernel's BTF: \
                                 call ",
                                owner(),
                                r.insn_idx,
                                self.reloc_symbol(r).to_string_lossy()
                            ),
                        )
                        .then_call(Call::ResolveBtf, " first"));
                    };
                    if let Some(e) = &step.failed {
                        return Some(e.clone().context_call(Call::ResolveBtf, " failed"));
                    }
                }
                for &(fi, site) in &l.core {
                    let s = &self.core_sites[site];
                    match &s.res {
                        Some(Ok(_)) => {}
                        Some(Err(e)) => return Some(e.clone()),
                        None => {
                            return Some(
                                Error::new(
                                    INVALID,
                                    format!(
                                        "program `{}`, instruction {fi}: CO-RE relocation {} is \
                                         not resolved: call ",
                                        owner(),
                                        s.text.to_string_lossy()
                                    ),
                                )
                                .then_call(Call::ResolveBtf, ""),
                            )
                        }
                    }
                }
                None
            }
            1 => l.relocs.iter().find_map(|r| {
                let map = match r.kind {
                    RelocKind::MapFd | RelocKind::MapValue => Some(r.target),
                    RelocKind::Kconfig => self.kconfig_map,
                    _ => None,
                };
                map.filter(|&m| self.maps[m].fd.is_none()).map(|m| {
                    Error::new(
                        INVALID,
                        format!(
                            "program `{}`, instruction {}: map `{}` has no fd: create it and call ",
                            owner(),
                            r.insn_idx,
                            self.maps[m].name.to_string_lossy()
                        ),
                    )
                    .then_call(Call::SetMapFd, "")
                })
            }),
            _ => {
                if self.stage.ksyms() {
                    return None;
                }
                l.relocs
                    .iter()
                    .find(|r| r.kind == RelocKind::Ksym)
                    .map(|r| {
                        Error::new(
                            INVALID,
                            format!(
                                "program `{}`, instruction {}: extern `{}` is not resolved: call ",
                                owner(),
                                r.insn_idx,
                                self.reloc_symbol(r).to_string_lossy()
                            ),
                        )
                        .then_call(Call::ResolveKsyms, " first")
                    })
            }
        }
    }

    /// The first reason the layouts of programs to be loaded cannot be
    /// written: a step not taken (resolve_ksyms, resolve_btf, a map fd) or
    /// a relocation that failed.
    fn check_ready(&self, needed: &[bool]) -> Result<()> {
        for step in 0..3 {
            for li in (0..self.layouts.len()).filter(|&li| needed[li]) {
                if let Some(e) = self.layout_problem(li, step) {
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Writes CO-RE results, map fds, data-section values, kernel
    /// addresses and BTF ids into every layout, starting from its pristine
    /// copy: it can be called again after changing fds. Needs an fd for
    /// every map a program uses, [`Object::resolve_ksyms`] if a program
    /// uses untyped externs, [`Object::resolve_btf`] if it has CO-RE
    /// relocations, typed ksyms, kfunc calls or `.kconfig` externs.
    ///
    /// As libbpf, only programs to be loaded (autoload on) must relocate:
    /// the code of programs with autoload off only is written when it can
    /// be, and otherwise left, [`Object::insns`] saying why.
    pub fn relocate(&mut self) -> Result<()> {
        self.stage.relocating();
        let needed = self.layouts_needed();
        self.check_ready(&needed)?;
        for (li, &need) in needed.iter().enumerate() {
            self.layouts[li].skipped = None;
            if !need {
                if let Some(e) = (0..3).find_map(|step| self.layout_problem(li, step)) {
                    self.layouts[li].skipped = Some(Box::new(e));
                    continue;
                }
            }
            let l = &mut self.layouts[li];
            if !l.base.is_empty() {
                // From the pristine copy (see `ProgLayout::base`).
                l.insns.clear();
                l.insns.extend_from_slice(&l.base);
            }
            let owner = self.programs[l.owner].name.to_string_lossy();
            for &(fi, site) in &l.core {
                let s = &self.core_sites[site];
                let Some(Ok(r)) = &s.res else { continue };
                let what = format!(
                    "program `{owner}`, instruction {fi}: CO-RE relocation {}",
                    s.text.to_string_lossy()
                );
                if let Err(e) = core::patch(&mut l.insns, fi, &r.res, &what) {
                    if need {
                        return Err(e);
                    }
                    l.skipped = Some(Box::new(e));
                    break;
                }
            }
            if l.skipped.is_some() {
                continue;
            }
            reloc::patch(l, &self.maps, &self.externs, self.kconfig_map);
        }
        self.stage.relocated();
        Ok(())
    }
}

/// `LINUX_KERNEL_VERSION` read as libbpf's `get_kernel_version` reads it
/// ([`kconfig_values::running_kernel_version`]), from Ubuntu's `signature` file
/// (absent elsewhere) and the kernel's `release` and `version` (`uname -r`
/// and `-v`: /proc/sys/kernel/osrelease and version for the running
/// kernel; `uname()` itself when either cannot be read). The running
/// kernel's reader calls it with the /proc paths; tests, with files.
#[doc(hidden)]
pub fn kernel_version_in(signature: &Path, release: &Path, version: &Path) -> u64 {
    // Each is one short line: 4 KiB bounds them.
    let read = |p: &Path| -> Option<Vec<u8>> {
        let mut b = Vec::new();
        std::fs::File::open(p)
            .and_then(|f| f.take(4096).read_to_end(&mut b))
            .ok()?;
        let line = b.split(|&c| c == b'\n').next().unwrap_or_default();
        Some(line.to_vec())
    };
    let sig = read(signature);
    let (release, version) = match (read(release), read(version)) {
        (Some(r), Some(v)) => (r, v),
        _ => crate::base::sys::kernel_release_version(),
    };
    kconfig_values::running_kernel_version(sig.as_deref(), &release, &version)
}

/// The `LINUX_*` values `.kconfig` externs get on the running kernel, as
/// `(LINUX_KERNEL_VERSION, LINUX_HAS_BPF_COOKIE, LINUX_HAS_SYSCALL_WRAPPER)`:
/// for tests that check each against its own oracle.
#[doc(hidden)]
pub fn running_kernel_facts(kernel: &KernelBtf) -> (u64, bool, bool) {
    let f = RunningKernel { kernel };
    (
        f.kernel_version(),
        f.has_bpf_cookie(),
        f.has_syscall_wrapper(),
    )
}
