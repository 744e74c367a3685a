//! Multi programs (Linux 7.3's `fentry.multi`, `fexit.multi`,
//! `fsession.multi`) in c-tests/bpf/multi.bpf.o, listed against the
//! bundled 6.1 kernel: what each section gives before any kernel (libbpf's
//! table at f7081a6baf3f, worked out by hand), and the functions a multi
//! link would attach, against independent oracles: bpftool's dump of
//! each BTF object (ids), the kernel's kallsyms read naively (addresses)
//! and the kernel's own `available_filter_functions` (every listed
//! function is in it; `vfs_caches_init`, an `__init` function with BTF
//! and a kallsyms symbol, is not listed, where libbpf's glob takes it and
//! the kernel refuses the link). The running kernel's answers are
//! c-tests/test_multi_kernel.c's.

mod common;

use std::collections::{HashMap, HashSet};
use std::ffi::CStr;
use std::path::Path;
use std::sync::Arc;

use common::{bpftool_dump, Kernel61};
use ksym::bpf::{Object, MULTI};
use ksym::internals::bpf::section::{attach as at, prog, SLEEPABLE, TARGET_AT_LOAD};
use ksym::internals::btf::{KernelBtf, Options};
use ksym::internals::error::{INVALID, NOT_FOUND, UNSUPPORTED};

fn object() -> Object {
    Object::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/bpf/multi.bpf.o")).unwrap()
}

fn s(c: Option<&CStr>) -> Option<String> {
    c.map(|c| c.to_string_lossy().into_owned())
}

/// The 6.1 kernel with its own available_filter_functions.
fn kernel(k: &Kernel61) -> Arc<KernelBtf> {
    let filter = k.dir.path().join("available_filter_functions");
    std::fs::write(
        &filter,
        common::data("linux-6.1-cloud/available_filter_functions"),
    )
    .unwrap();
    Arc::new(
        KernelBtf::open(&Options {
            vmlinux_btf_path: Some(k.vmlinux()),
            module_btf_dir: Some(k.btf_dir()),
            filter_functions_path: Some(filter),
            kallsyms_path: Some(k.dir.path().join("kallsyms")),
            ..Default::default()
        })
        .unwrap(),
    )
}

/// Each section's program type, attach type and flags, as libbpf's
/// newest table gives them: no target at load, MULTI, sleepable `.s`.
#[test]
fn multi_sections_as_libbpf_defines_them() {
    let o = object();
    let want: &[(&str, u32, u32, Option<&str>)] = &[
        ("on_entry", at::TRACE_FENTRY_MULTI, 0, Some("vfs_*")),
        ("on_exit", at::TRACE_FEXIT_MULTI, 0, Some("tcp_*")),
        (
            "on_entry_s",
            at::TRACE_FENTRY_MULTI,
            SLEEPABLE,
            Some("vfs_*"),
        ),
        ("on_exit_s", at::TRACE_FEXIT_MULTI, SLEEPABLE, Some("tcp_*")),
        ("on_session", at::TRACE_FSESSION_MULTI, 0, Some("x*")),
        (
            "on_session_s",
            at::TRACE_FSESSION_MULTI,
            SLEEPABLE,
            Some("x*"),
        ),
        ("in_module", at::TRACE_FENTRY_MULTI, 0, Some("v9fs_*")),
        ("no_target", at::TRACE_FENTRY_MULTI, 0, None),
    ];
    for &(name, attach, flags, target) in want {
        let i = o.find_program(name.as_bytes()).unwrap();
        let a = o.attach_info(i).unwrap();
        assert_eq!(
            (a.prog_type, a.expected_attach_type),
            (prog::TRACING, attach),
            "{name}"
        );
        assert_eq!(a.flags & SLEEPABLE, flags, "{name}");
        assert_eq!(a.flags & MULTI, MULTI, "{name}");
        // Only a module's needs its target at load: the module's BTF.
        let at_load = if name == "in_module" {
            TARGET_AT_LOAD
        } else {
            0
        };
        assert_eq!(a.flags & TARGET_AT_LOAD, at_load, "{name}: target at load");
        assert_eq!((a.attach_btf_id, a.attach_btf_obj_fd), (0, 0), "{name}");
        assert_eq!(s(a.target).as_deref(), target, "{name}");
    }
    let i = o.find_program(b"in_module").unwrap();
    assert_eq!(s(o.attach_info(i).unwrap().module).as_deref(), Some("9p"));
    // A plain fentry body is not multi until made one.
    let p = o.find_program(b"plain").unwrap();
    let a = o.attach_info(p).unwrap();
    assert_eq!(
        (a.expected_attach_type, a.flags & MULTI),
        (at::TRACE_FENTRY, 0)
    );
}

/// `vfs_*` listed for a multi link: every function with its BTF id
/// (bpftool), its kallsyms address, in the kernel's filter list; cookie k
/// is function k; `vfs_caches_init` left out; the same functions as the
/// aliases `expand` makes; after resolve_attach, still listed.
#[test]
fn a_multi_link_lists_what_the_kernel_can_trace() {
    let k = Kernel61::new();
    let btf = kernel(&k);
    let mut o = object();
    o.resolve_attach(&btf);
    let vm: HashMap<String, u32> = bpftool_dump(&k.vmlinux(), None)
        .into_iter()
        .filter(|(_, kind, _)| kind == "FUNC")
        .map(|(id, _, n)| (n, id))
        .rev()
        .collect();
    let syms = common::reference(&common::data("linux-6.1-cloud/kallsyms"));
    let filter =
        String::from_utf8(common::data("linux-6.1-cloud/available_filter_functions")).unwrap();
    let traceable: HashSet<&str> = filter.lines().filter(|l| !l.contains('[')).collect();
    let i = o.find_program(b"on_entry").unwrap();
    assert_eq!(
        o.multi_attach(i, None, &btf).unwrap(),
        1,
        "vmlinux only: one link"
    );
    let l = o.multi_link(i, 0).unwrap();
    assert_eq!(l.attach_type, at::TRACE_FENTRY_MULTI);
    assert_eq!(
        (l.module.to_str().unwrap(), l.attach_btf_obj_fd),
        ("vmlinux", 0)
    );
    assert!(l.btf_ids.len() > 40, "{}", l.btf_ids.len());
    assert_eq!(l.cookies, (0..l.btf_ids.len() as u64).collect::<Vec<_>>());
    let mut names = Vec::new();
    for (j, &c) in l.cookies.iter().enumerate() {
        let f = o.multi_function(i, c).unwrap();
        let name = f.name.to_str().unwrap().to_string();
        assert!(name.starts_with("vfs_"), "{name}");
        assert_eq!(f.btf_id, vm[&name], "{name}: bpftool's id");
        assert_eq!(l.btf_ids[j], f.btf_id);
        let addr = syms
            .iter()
            .find(|r| {
                r.name == name.as_bytes() && r.module == b"vmlinux" && matches!(r.ty, b't' | b'T')
            })
            .map(|r| r.addr);
        assert_eq!(Some(f.addr), addr, "{name}: its kallsyms address");
        assert_eq!(l.addrs[j], f.addr);
        assert!(
            traceable.contains(name.as_str()),
            "{name}: not in available_filter_functions"
        );
        names.push(name);
    }
    assert!(
        vm.contains_key("vfs_caches_init"),
        "an __init function with BTF"
    );
    assert!(!names.iter().any(|n| n == "vfs_caches_init"));
    assert!(names.iter().any(|n| n == "vfs_read") && names.iter().any(|n| n == "vfs_write"));
    assert_eq!(
        o.multi_function(i, l.cookies.len() as u64)
            .unwrap_err()
            .code(),
        NOT_FOUND
    );
    // The aliases `expand` would make: the same functions.
    let mut e = object();
    let plain = e.find_program(b"plain").unwrap();
    let n = e.expand(plain, b"vfs_*", &btf).unwrap();
    let mut aliases: Vec<String> = (0..n)
        .map(|a| s(e.attach_info(e.programs().len() - n + a).unwrap().target).unwrap())
        .collect();
    let mut listed = names.clone();
    aliases.sort();
    listed.sort();
    assert_eq!(listed, aliases);
    // Resolving again keeps the list.
    o.resolve_attach(&btf);
    assert_eq!(o.multi_link(i, 0).unwrap().btf_ids.len(), names.len());
}

/// Across BTF objects: one link per object, vmlinux first, each with its
/// object's ids (bpftool on the split BTF) and the cookies running on;
/// a plain fentry body made multi; the errors.
#[test]
fn one_link_per_btf_object_and_the_errors() {
    let k = Kernel61::new();
    let btf = kernel(&k);
    let mut o = object();
    o.resolve_attach(&btf);
    let p = o.find_program(b"plain").unwrap();
    // The placeholder's own error (no target) goes when it becomes multi.
    assert!(o.attach_info(p).unwrap().error.is_some());
    let n = o.multi_attach(p, Some(b"*`*_file_open"), &btf).unwrap();
    assert!(n >= 2, "{n}");
    let a = o.attach_info(p).unwrap();
    assert_eq!(
        (
            a.expected_attach_type,
            a.flags & (MULTI | TARGET_AT_LOAD),
            a.attach_btf_id
        ),
        (at::TRACE_FENTRY_MULTI, MULTI, 0)
    );
    assert!(a.error.is_none());
    let mut next = 0u64;
    let mut modules = Vec::new();
    for link in 0..n {
        let l = o.multi_link(p, link).unwrap();
        let module = l.module.to_str().unwrap().to_string();
        let ids: HashMap<String, u32> = if module == "vmlinux" {
            bpftool_dump(&k.vmlinux(), None)
        } else {
            bpftool_dump(&k.btf_dir().join(&module), Some(&k.vmlinux()))
        }
        .into_iter()
        .filter(|(_, kind, _)| kind == "FUNC")
        .map(|(id, _, n)| (n, id))
        .rev()
        .collect();
        // BTF from files: a module's object has no fd here.
        assert_eq!(
            l.attach_btf_obj_fd,
            if module == "vmlinux" { 0 } else { -1 }
        );
        for (j, &c) in l.cookies.iter().enumerate() {
            assert_eq!(c, next, "cookies run on across links");
            next += 1;
            let f = o.multi_function(p, c).unwrap();
            assert_eq!(
                (f.link, f.module.to_str().unwrap()),
                (link, module.as_str())
            );
            assert_eq!(
                l.btf_ids[j],
                ids[f.name.to_str().unwrap()],
                "{module}`{:?}",
                f.name
            );
        }
        modules.push(module);
    }
    assert_eq!(modules[0], "vmlinux");
    assert!(modules.iter().any(|m| m == "xfs"), "{modules:?}");
    // Nothing matches: 0, nothing changed.
    let e = o.find_program(b"on_exit").unwrap();
    assert_eq!(
        o.multi_attach(e, Some(b"no_function_is_named_like_this_*"), &btf)
            .unwrap(),
        0
    );
    assert_eq!(o.multi_link(e, 0).unwrap_err().code(), NOT_FOUND);
    // The errors.
    let t = o.find_program(b"no_target").unwrap();
    assert_eq!(o.multi_attach(t, None, &btf).unwrap_err().code(), INVALID);
    assert_eq!(
        o.multi_attach(t, Some(b""), &btf).unwrap_err().code(),
        INVALID
    );
    let m = o.find_program(b"in_module").unwrap();
    let err = o.attach_info(m).unwrap();
    assert_eq!(
        err.error.map(|e| e.code()),
        Some(NOT_FOUND),
        "no 9p module in 6.1's data"
    );
    assert!(err.error.unwrap().message().contains("`9p`"));
    let mut other =
        Object::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/bpf/kprobes.bpf.o"))
            .unwrap();
    let kp = 0;
    let e = other.multi_attach(kp, Some(b"vfs_*"), &btf).unwrap_err();
    assert_eq!(e.code(), UNSUPPORTED, "{}", e.message());
}
