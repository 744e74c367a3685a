//! The kernel's BTF: vmlinux's (`/sys/kernel/btf/vmlinux`, mapped in place
//! where the kernel allows, or a file) and every module's split BTF
//! (`/sys/kernel/btf/<module>`), each read once into one buffer, checked
//! and indexed by name (vmlinux's check and index from a [`snapshot`]
//! after the first open of a boot; a module's when first asked); the kernel's ids
//! and fds of those BTF objects; the kernel symbols (kallsyms) and the
//! functions ftrace can patch (tracefs), for attach targets.
//!
//! Lookups follow [`crate::rules`]: the query grammar, and
//! [`BtfScope`] for which BTF answers. The handle is internally
//! synchronised (everything lazy is behind a `OnceLock` or a mutex): any
//! number of objects and threads can share one.

mod filter;
mod find;
pub mod index;
mod objects;
pub mod snapshot;
pub mod targets;
pub mod trampoline;

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::base::snapshot::SnapshotOptions;
use crate::cname::CName;
use crate::error::{Error, Result, NOT_FOUND};
use crate::formats::btf::{self as raw, kind_name, Btf};
use crate::rules::answer::{self, btf_ambiguous, BtfScope};
use crate::rules::modules::ModuleKind;
use crate::rules::query::{module_eq, Query};
use crate::table::{Options as TableOptions, Table};
pub use filter::FilterFunctions;
pub use index::NameIndexedBtf;
use objects::Objects;

/// The running kernel's BTF.
pub const SYS_BTF: &str = "/sys/kernel/btf";

/// Where the BTF and the rest come from (`None`: the running kernel's).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// vmlinux's BTF: raw BTF or an ELF with `.BTF`.
    pub vmlinux_btf_path: Option<PathBuf>,
    /// A directory of module BTF files named by module (raw or ELF); an
    /// empty path: no module BTF.
    pub module_btf_dir: Option<PathBuf>,
    /// `available_filter_functions(_addrs)`; an empty path: do not check.
    pub filter_functions_path: Option<PathBuf>,
    /// The kernel config (`.kconfig` externs).
    pub kconfig_path: Option<PathBuf>,
    /// kallsyms, for the addresses of function targets.
    pub kallsyms_path: Option<PathBuf>,
    /// Whether and where the snapshot of vmlinux's check and index is
    /// kept (the options the table's share).
    pub snapshot: SnapshotOptions,
}

/// A module's BTF, read when first needed.
struct ModuleBtf {
    name: CString,
    path: PathBuf,
    blob: OnceLock<Result<NameIndexedBtf>>,
}

/// A type found by [`KernelBtf::find`].
#[derive(Clone, Copy, Debug)]
pub struct Found<'k> {
    /// 0 for vmlinux, `k + 1` for module `k`.
    pub obj: usize,
    /// The type id in its BTF object.
    pub id: u32,
    /// Its kind (`BTF_KIND_*`).
    pub kind: u32,
    /// Its name.
    pub name: CName<'k>,
}

/// The kernel's BTF, with what attach targets need.
pub struct KernelBtf {
    vmlinux: NameIndexedBtf,
    vmlinux_path: PathBuf,
    modules: Vec<ModuleBtf>,
    /// Module BTF from /sys/kernel/btf: the kernel has objects for it.
    live: bool,
    objects: Objects,
    filter_path: Option<PathBuf>,
    filter: OnceLock<Result<FilterFunctions>>,
    kallsyms_path: Option<PathBuf>,
    table: OnceLock<Result<Table>>,
    kconfig_path: Option<PathBuf>,
    kconfig: OnceLock<Result<Arc<[u8]>>>,
    snapshot: snapshot::SnapshotInfo,
    /// The kernel whose trampoline rules [`KernelBtf::expand`] follows
    /// (`None`: the release is unknown, nothing is left out for them).
    rules: Option<trampoline::Rules>,
    /// Functions `expand` left out because the trampoline refuses them.
    refused: AtomicUsize,
}

/// Facts about a [`KernelBtf`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Types of vmlinux's BTF.
    pub vmlinux_types: u32,
    /// Modules with BTF, and how many were read.
    pub modules: usize,
    /// Modules whose BTF was read (on demand).
    pub modules_read: usize,
    /// Bytes held for the BTF read so far.
    pub memory: usize,
    /// The state of the filter functions, if they were asked for.
    pub filter_checked: bool,
    /// The filter functions carried addresses (`_addrs`).
    pub filter_sites: bool,
    /// The filter functions could not be read.
    pub filter_unavailable: bool,
    /// The kernel's BTF object ids could be listed.
    pub objects_listed: bool,
    /// vmlinux's check and index came from a snapshot, or one was written.
    pub snapshot_loaded: bool,
    /// A snapshot was written.
    pub snapshot_written: bool,
    /// Functions [`KernelBtf::expand`] left out, over this handle's life,
    /// because the kernel's BPF trampoline cannot take their prototype
    /// (docs/btf-and-attach.md).
    pub trampoline_refused: usize,
}

static VMLINUX_NAME: &CStr = c"vmlinux";

impl std::fmt::Debug for KernelBtf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "KernelBtf {{ {}: {} types, {} modules }}",
            self.vmlinux_path.display(),
            self.vmlinux.btf.end_id() - 1,
            self.modules.len()
        )
    }
}

impl KernelBtf {
    /// Reads vmlinux's BTF and lists the modules' (read when first used).
    pub fn open(opts: &Options) -> Result<KernelBtf> {
        let vmlinux_path = opts
            .vmlinux_btf_path
            .clone()
            .unwrap_or_else(|| Path::new(SYS_BTF).join("vmlinux"));
        let data = raw::read_vmlinux(&vmlinux_path).map_err(|e| {
            if e.code() == NOT_FOUND && opts.vmlinux_btf_path.is_none() {
                Error::not_found(format!(
                    "{}: the running kernel has no BTF (built without CONFIG_DEBUG_INFO_BTF?); \
                     name a vmlinux or raw BTF file in vmlinux_btf_path",
                    vmlinux_path.display()
                ))
            } else {
                e
            }
        })?;
        let (vmlinux, snapshot) = Self::vmlinux_checked(opts, &vmlinux_path, data)?;
        let dir = match &opts.module_btf_dir {
            Some(d) if d.as_os_str().is_empty() => None,
            Some(d) => Some(d.clone()),
            None => Some(PathBuf::from(SYS_BTF)),
        };
        let mut modules = Vec::new();
        let mut live = false;
        if let Some(dir) = &dir {
            live = std::fs::canonicalize(dir).is_ok_and(|d| d == Path::new(SYS_BTF));
            match std::fs::read_dir(dir) {
                Ok(rd) => {
                    for e in rd.flatten() {
                        let name = e.file_name();
                        let name = name.as_encoded_bytes();
                        if name == b"vmlinux" || name.starts_with(b".") || name.contains(&0) {
                            continue;
                        }
                        if e.path() == vmlinux_path {
                            continue;
                        }
                        modules.push(ModuleBtf {
                            name: CString::new(name).unwrap_or_default(),
                            path: e.path(),
                            blob: OnceLock::new(),
                        });
                    }
                }
                Err(e)
                    if opts.module_btf_dir.is_none()
                        && e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(&e, format!("cannot list {}", dir.display()))),
            }
        }
        modules.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(KernelBtf {
            vmlinux,
            vmlinux_path,
            modules,
            live,
            objects: Objects::default(),
            filter_path: opts.filter_functions_path.clone(),
            filter: OnceLock::new(),
            kallsyms_path: opts.kallsyms_path.clone(),
            table: OnceLock::new(),
            kconfig_path: opts.kconfig_path.clone(),
            kconfig: OnceLock::new(),
            snapshot,
            rules: trampoline::Rules::running(),
            refused: AtomicUsize::new(0),
        })
    }

    /// vmlinux's BTF checked and indexed: from a snapshot when there is a
    /// valid one, else by reading it (and then a snapshot is written,
    /// where allowed).
    fn vmlinux_checked(
        opts: &Options,
        path: &Path,
        data: crate::base::mapped::Store<u8>,
    ) -> Result<(NameIndexedBtf, snapshot::SnapshotInfo)> {
        let mut info = snapshot::SnapshotInfo::default();
        let plan = match snapshot::plan(opts, path, &data) {
            Ok(plan) => plan,
            Err(why) => {
                info.note = Some(why);
                return Ok((Self::check_vmlinux(path, data)?, info));
            }
        };
        info.path = Some(plan.path().to_path_buf());
        let data = match snapshot::load(&plan, data) {
            Ok((ix, bytes)) => {
                info.loaded = true;
                info.bytes = bytes;
                return Ok((ix, info));
            }
            Err((why, data)) => {
                info.note = Some(why);
                data
            }
        };
        let ix = Self::check_vmlinux(path, data)?;
        let t = std::time::Instant::now();
        let written = snapshot::write(&plan, &ix);
        info.write_ns = t.elapsed().as_nanos() as u64;
        match written {
            Ok(n) => {
                info.written = true;
                info.bytes = n;
            }
            Err(e) => info.note = Some(e),
        }
        Ok((ix, info))
    }

    /// vmlinux's BTF read the long way: checked, then indexed.
    fn check_vmlinux(path: &Path, data: crate::base::mapped::Store<u8>) -> Result<NameIndexedBtf> {
        let btf = Btf::parse(data).map_err(|e| e.context(path.display()))?;
        if btf.end_id() <= 1 {
            return Err(Error::format(format!(
                "{}: BTF without types",
                path.display()
            )));
        }
        NameIndexedBtf::new(Arc::new(btf))
    }

    /// What happened with the snapshot of vmlinux's BTF.
    pub fn snapshot(&self) -> &snapshot::SnapshotInfo {
        &self.snapshot
    }

    /// A kernel BTF from BTF already parsed: vmlinux's and modules' (split
    /// on it), with no kallsyms, tracefs or kernel objects behind it.
    pub(crate) fn from_parts(vmlinux: Btf, modules: Vec<(Vec<u8>, Btf)>) -> Result<KernelBtf> {
        let vmlinux = NameIndexedBtf::new(Arc::new(vmlinux))?;
        let mut mods = Vec::new();
        for (name, btf) in modules {
            let blob = OnceLock::new();
            let _ = blob.set(NameIndexedBtf::new(Arc::new(btf)));
            mods.push(ModuleBtf {
                name: CString::new(name).unwrap_or_default(),
                path: PathBuf::new(),
                blob,
            });
        }
        Ok(KernelBtf {
            vmlinux,
            vmlinux_path: PathBuf::from("<memory>"),
            modules: mods,
            live: false,
            objects: Objects::default(),
            filter_path: Some(PathBuf::new()),
            filter: OnceLock::new(),
            kallsyms_path: None,
            table: OnceLock::new(),
            kconfig_path: Some(PathBuf::new()),
            kconfig: OnceLock::new(),
            snapshot: Default::default(),
            rules: trampoline::Rules::running(),
            refused: AtomicUsize::new(0),
        })
    }

    /// vmlinux's BTF.
    pub(crate) fn vmlinux(&self) -> &NameIndexedBtf {
        &self.vmlinux
    }

    /// Number of BTF objects: vmlinux and the modules.
    pub fn object_count(&self) -> usize {
        1 + self.modules.len()
    }

    /// The module name of object `obj` (`vmlinux` for 0).
    pub fn object_name(&self, obj: usize) -> &CStr {
        match obj {
            0 => VMLINUX_NAME,
            k => &self.modules[k - 1].name,
        }
    }

    /// The object of module `name` (`-` and `_` equal).
    pub fn module_object(&self, name: &[u8]) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| module_eq(m.name.to_bytes(), name))
            .map(|k| k + 1)
    }

    /// Object `obj`'s BTF, read and indexed when first asked. A module
    /// whose BTF went away since [`KernelBtf::open`] (unloaded) is
    /// `KSYM_ERR_NOT_FOUND`, saying so.
    pub(crate) fn object(&self, obj: usize) -> Result<&NameIndexedBtf> {
        if obj == 0 {
            return Ok(&self.vmlinux);
        }
        let m = &self.modules[obj - 1];
        m.blob
            .get_or_init(|| {
                let shown = m.path.display();
                let data = raw::read_file(&m.path).map_err(|e| {
                    if e.code() == NOT_FOUND {
                        Error::not_found(format!(
                            "{shown}: the BTF of module `{}` is gone (unloaded since the BTF was opened?)",
                            m.name.to_string_lossy()
                        ))
                    } else {
                        e
                    }
                })?;
                let btf = Btf::parse_split(data, self.vmlinux.btf.clone())
                    .map_err(|e| e.context(format!("{shown} (split BTF on {})", self.vmlinux_path.display())))?;
                NameIndexedBtf::new(Arc::new(btf))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The kernel's id of object `obj` (0 for vmlinux, or when unknown).
    pub fn object_id(&self, obj: usize) -> u32 {
        if obj == 0 || !self.live {
            return 0;
        }
        self.objects
            .id(self.object_name(obj).to_bytes())
            .unwrap_or(0)
    }

    /// An fd of object `obj` for BPF_PROG_LOAD, owned by this handle: 0 for
    /// vmlinux, -1 (and why) when not available (BTF from files, no bpf()).
    pub fn object_fd(&self, obj: usize) -> std::result::Result<i32, String> {
        if obj == 0 {
            return Ok(0);
        }
        if !self.live {
            return Err(format!(
                "module BTF read from files ({}): the kernel has no object for it",
                self.modules[obj - 1].path.display()
            ));
        }
        self.objects.fd(self.object_name(obj).to_bytes())
    }

    /// The functions ftrace can attach to, read when first asked.
    pub fn filter_functions(&self) -> Result<&FilterFunctions> {
        self.filter
            .get_or_init(|| FilterFunctions::load(self.filter_path.as_deref()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The kernel symbols, read when first asked (kallsyms_path, or the
    /// running kernel's).
    pub fn symbols(&self) -> Result<&Table> {
        self.table
            .get_or_init(|| {
                Table::open(&TableOptions {
                    kallsyms_path: self.kallsyms_path.clone(),
                    builtin_ranges_path: if self.kallsyms_path.is_some() {
                        Some(PathBuf::new())
                    } else {
                        None
                    },
                    ..Default::default()
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The same kernel BTF with its configuration read from `path` (plain
    /// or gzip) instead.
    pub fn with_kconfig_path(mut self, path: PathBuf) -> KernelBtf {
        self.kconfig_path = Some(path);
        self.kconfig = OnceLock::new();
        self
    }

    /// The same kernel BTF with the trampoline rules of kernel `release`
    /// ("6.1.0-13-amd64") instead of the running kernel's: for BTF of
    /// another kernel. An unparsable release leaves nothing out.
    pub fn with_kernel_release(mut self, release: &[u8]) -> KernelBtf {
        self.rules = trampoline::Rules::for_release(release);
        self
    }

    /// Why the kernel's trampoline cannot take FUNC `id` of object `obj`
    /// (fentry, fexit, fmod_ret), or `None` when it can or the rules are
    /// unknown.
    pub fn trampoline_refuses(&self, obj: usize, id: u32) -> Option<String> {
        let rules = self.rules?;
        let btf = &self.object(obj).ok()?.btf;
        let proto = btf.ty(id).filter(|t| t.kind() == raw::KIND_FUNC)?.type_id();
        rules.refuses(btf, proto)
    }

    /// Counts functions left out for the trampoline.
    fn note_refused(&self, n: usize) {
        self.refused.fetch_add(n, Ordering::Relaxed);
    }

    /// The kernel's configuration (`.kconfig` externs), read once:
    /// `kconfig_path` (plain or gzip), by default /proc/config.gz, else
    /// /boot/config-$(uname -r).
    pub fn kconfig(&self) -> Result<Arc<[u8]>> {
        self.kconfig
            .get_or_init(|| {
                let paths: Vec<PathBuf> = match &self.kconfig_path {
                    Some(p) if p.as_os_str().is_empty() => {
                        return Err(Error::not_found(
                            "no kernel config: kconfig_path is \"\" (none); name a config file",
                        ))
                    }
                    Some(p) => vec![p.clone()],
                    None => {
                        let mut v = vec![PathBuf::from("/proc/config.gz")];
                        if let Some(r) = crate::base::sys::kernel_release() {
                            let r = String::from_utf8_lossy(&r).into_owned();
                            v.push(PathBuf::from(format!("/boot/config-{r}")));
                        }
                        v
                    }
                };
                let mut last = None;
                for p in &paths {
                    match crate::base::read::read_maybe_gzip(p) {
                        Ok(d) => return Ok(Arc::from(d)),
                        Err(e) if e.code() == NOT_FOUND && paths.len() > 1 => last = Some(e),
                        Err(e) => return Err(e.context("reading the kernel config")),
                    }
                }
                let tried: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                Err(last
                    .unwrap_or_else(|| Error::not_found("no kernel config"))
                    .context(format!(
                        "no kernel config found (tried {}; CONFIG_IKCONFIG_PROC gives \
                         /proc/config.gz); name one in kconfig_path",
                        tried.join(", ")
                    )))
            })
            .clone()
    }

    /// Facts: sizes, what was read, what tracefs said.
    pub fn stats(&self) -> Stats {
        let read: Vec<&NameIndexedBtf> = self
            .modules
            .iter()
            .filter_map(|m| m.blob.get().and_then(|b| b.as_ref().ok()))
            .collect();
        let filter = self.filter.get().and_then(|f| f.as_ref().ok());
        Stats {
            vmlinux_types: self.vmlinux.btf.end_id() - 1,
            modules: self.modules.len(),
            modules_read: read.len(),
            memory: self.vmlinux.memory() + read.iter().map(|b| b.memory()).sum::<usize>(),
            filter_checked: matches!(
                filter,
                Some(FilterFunctions::Names(_) | FilterFunctions::Sites(..))
            ),
            filter_sites: matches!(filter, Some(FilterFunctions::Sites(..))),
            filter_unavailable: matches!(filter, Some(FilterFunctions::Unavailable(_))),
            objects_listed: self.objects.listed(),
            snapshot_loaded: self.snapshot.loaded,
            snapshot_written: self.snapshot.written,
            trampoline_refused: self.refused.load(Ordering::Relaxed),
        }
    }
}
