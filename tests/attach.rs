//! Attach targets of BPF programs and aliases: program types from section
//! names (libbpf's table, worked out by hand below), targets resolved in
//! the bundled 6.1 kernel's BTF (ids checked against bpftool's dump,
//! addresses against its kallsyms read naively), targets set per alias,
//! and aliases made from patterns sharing one instruction copy.

mod common;

use std::collections::HashMap;
use std::ffi::CStr;
use std::path::Path;
use std::sync::Arc;

use common::{bpftool_dump, Kernel61};
use ksym::bpf::section::{attach as at, prog, SLEEPABLE, XDP_FRAGS};
use ksym::bpf::Object;
use ksym::btf::KernelBtf;
use ksym::error::{INVALID, NOT_FOUND, UNSUPPORTED};

fn object(name: &str) -> Object {
    Object::open(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("c-tests/bpf")
            .join(name),
    )
    .unwrap()
}

fn s(c: Option<&CStr>) -> Option<String> {
    c.map(|c| c.to_string_lossy().into_owned())
}

/// A program's name, and what its section should give: program type,
/// expected attach type, flags, target, module.
type Want = (
    &'static str,
    u32,
    u32,
    u32,
    Option<&'static str>,
    Option<&'static str>,
);

/// (prog_type, expected_attach_type, flags, target, module) of each
/// program of sections.bpf.o before resolution, from libbpf's table.
#[test]
fn section_names_give_libbpfs_types() {
    let o = object("sections.bpf.o");
    let want: &[Want] = &[
        ("p_socket", prog::SOCKET_FILTER, 0, 0, None, None),
        (
            "p_fexit_mod",
            prog::TRACING,
            at::TRACE_FEXIT,
            0,
            Some("xfs_file_open"),
            Some("xfs"),
        ),
        (
            "p_fentry_dtrace",
            prog::TRACING,
            at::TRACE_FENTRY,
            0,
            Some("xfs_file_fsync"),
            Some("xfs"),
        ),
        (
            "p_fmod_ret",
            prog::TRACING,
            at::MODIFY_RETURN,
            0,
            Some("vfs_read"),
            None,
        ),
        (
            "p_fentry_s",
            prog::TRACING,
            at::TRACE_FENTRY,
            SLEEPABLE,
            Some("vfs_write"),
            None,
        ),
        (
            "p_tp_btf",
            prog::TRACING,
            at::TRACE_RAW_TP,
            0,
            Some("sched_switch"),
            None,
        ),
        (
            "p_raw_tp",
            prog::RAW_TRACEPOINT,
            0,
            0,
            Some("sched_switch"),
            None,
        ),
        (
            "p_lsm_s",
            prog::LSM,
            at::LSM_MAC,
            SLEEPABLE,
            Some("bprm_check_security"),
            None,
        ),
        (
            "p_iter",
            prog::TRACING,
            at::TRACE_ITER,
            0,
            Some("task"),
            None,
        ),
        ("p_kretprobe", prog::KPROBE, 0, 0, Some("vfs_read"), None),
        ("p_tracepoint", prog::TRACEPOINT, 0, 0, None, None),
        ("p_xdp_frags", prog::XDP, at::XDP, XDP_FRAGS, None, None),
        ("p_tc", prog::SCHED_CLS, 0, 0, None, None),
        (
            "p_cgroup",
            prog::CGROUP_SKB,
            at::CGROUP_INET_INGRESS,
            0,
            None,
            None,
        ),
        ("p_unknown", 0, 0, 0, None, None),
    ];
    assert_eq!(o.programs().len(), want.len());
    for &(name, pt, eat, flags, target, module) in want {
        let i = o.find_program(name.as_bytes()).unwrap();
        let a = o.attach_info(i).unwrap();
        assert_eq!(
            (
                a.prog_type,
                a.expected_attach_type,
                a.flags,
                s(a.target),
                s(a.module)
            ),
            (
                pt,
                eat,
                flags,
                target.map(String::from),
                module.map(String::from)
            ),
            "{name}"
        );
        assert_eq!(
            (a.attach_btf_id, a.addr),
            (0, 0),
            "{name}: nothing resolved yet"
        );
    }
}

/// The first id of each (kind, name) in bpftool's dump.
fn first_ids(dump: &[(u32, String, String)]) -> HashMap<(String, String), u32> {
    let mut m = HashMap::new();
    for (id, k, n) in dump {
        m.entry((k.clone(), n.clone())).or_insert(*id);
    }
    m
}

#[test]
fn targets_resolve_in_kernel_btf_and_kallsyms() {
    let k = Kernel61::new();
    let btf = Arc::new(k.open());
    let vm = first_ids(&bpftool_dump(&k.vmlinux(), None));
    let xfs = first_ids(&bpftool_dump(&k.btf_dir().join("xfs"), Some(&k.vmlinux())));
    let syms = common::reference(&common::data("linux-6.1-cloud/kallsyms"));
    let addr = |m: &str, n: &str| {
        syms.iter()
            .filter(|r| r.module == m.as_bytes() && r.name == n.as_bytes())
            .map(|r| r.addr)
            .min()
            .unwrap()
    };
    let id =
        |m: &HashMap<(String, String), u32>, k: &str, n: &str| m[&(k.to_string(), n.to_string())];
    let mut o = object("sections.bpf.o");
    o.resolve_attach(&btf).unwrap();
    let want: &[(&str, u32, u64, &str, &str)] = &[
        (
            "p_fexit_mod",
            id(&xfs, "FUNC", "xfs_file_open"),
            addr("xfs", "xfs_file_open"),
            "xfs",
            "xfs_file_open",
        ),
        (
            "p_fentry_dtrace",
            id(&xfs, "FUNC", "xfs_file_fsync"),
            addr("xfs", "xfs_file_fsync"),
            "xfs",
            "xfs_file_fsync",
        ),
        (
            "p_fmod_ret",
            id(&vm, "FUNC", "vfs_read"),
            addr("vmlinux", "vfs_read"),
            "vmlinux",
            "vfs_read",
        ),
        (
            "p_fentry_s",
            id(&vm, "FUNC", "vfs_write"),
            addr("vmlinux", "vfs_write"),
            "vmlinux",
            "vfs_write",
        ),
        (
            "p_tp_btf",
            id(&vm, "TYPEDEF", "btf_trace_sched_switch"),
            0,
            "vmlinux",
            "sched_switch",
        ),
        ("p_raw_tp", 0, 0, "vmlinux", "sched_switch"),
        (
            "p_lsm_s",
            id(&vm, "FUNC", "bpf_lsm_bprm_check_security"),
            addr("vmlinux", "bpf_lsm_bprm_check_security"),
            "vmlinux",
            "bprm_check_security",
        ),
        (
            "p_iter",
            id(&vm, "FUNC", "bpf_iter_task"),
            0,
            "vmlinux",
            "task",
        ),
        (
            "p_kretprobe",
            0,
            addr("vmlinux", "vfs_read"),
            "vmlinux",
            "vfs_read",
        ),
    ];
    for &(name, btf_id, a, module, target) in want {
        let i = o.find_program(name.as_bytes()).unwrap();
        let info = o.attach_info(i).unwrap();
        assert_eq!(
            (
                info.attach_btf_id,
                info.addr,
                s(info.module),
                s(info.target)
            ),
            (
                btf_id,
                a,
                Some(module.to_string()),
                Some(target.to_string())
            ),
            "{name}"
        );
        // Module BTF read from files has no kernel object: no fd.
        let fd = if module == "xfs" { -1 } else { 0 };
        assert_eq!(info.attach_btf_obj_fd, fd, "{name}");
    }
}

#[test]
fn each_alias_its_own_target_and_one_copy() {
    let k = Kernel61::new();
    let btf = Arc::new(k.open());
    let vm = first_ids(&bpftool_dump(&k.vmlinux(), None));
    let mut o = object("trace.bpf.o");
    // Resolving: the kprobe target, lsm hook and tracepoints exist in 6.1.
    o.resolve_attach(&btf).unwrap();
    let tp = o.find_program(b"on_tp").unwrap();
    for (alias, target) in [
        ("on_exec", "sched_process_exec"),
        ("on_exit", "sched_process_exit"),
        ("on_enter", "sys_enter"),
    ] {
        let i = o.find_program(alias.as_bytes()).unwrap();
        assert_eq!(o.programs()[i].alias_of, tp);
        // Before: the section's target (the first program's).
        assert_eq!(
            s(o.attach_info(i).unwrap().target).unwrap(),
            "sched_process_fork"
        );
        o.set_attach_target(i, target.as_bytes(), &btf).unwrap();
        let a = o.attach_info(i).unwrap();
        assert_eq!(s(a.target).unwrap(), target);
        assert_eq!(
            a.attach_btf_id,
            vm[&("TYPEDEF".to_string(), format!("btf_trace_{target}"))]
        );
    }
    // The program itself kept its section's target.
    assert_eq!(
        s(o.attach_info(tp).unwrap().target).unwrap(),
        "sched_process_fork"
    );
    // Resolving again does not undo what was set.
    o.resolve_attach(&btf).unwrap();
    let exec = o.find_program(b"on_exec").unwrap();
    assert_eq!(
        s(o.attach_info(exec).unwrap().target).unwrap(),
        "sched_process_exec"
    );

    // Aliases from patterns.
    let before = o.programs().len();
    let count = o.find_program(b"count").unwrap();
    let n = o.expand(count, b"vmlinux`vfs_*", &btf).unwrap();
    assert!(n > 20, "{n}");
    assert_eq!(o.programs().len(), before + n);
    let mut last = 0;
    for i in before..before + n {
        let p = &o.programs()[i];
        let a = o.attach_info(i).unwrap();
        let t = s(a.target).unwrap();
        assert_eq!(p.name.to_string_lossy(), format!("count/{t}"));
        assert_eq!(p.alias_of, count);
        assert_eq!(a.attach_btf_id, vm[&("FUNC".to_string(), t.clone())], "{t}");
        assert_eq!(
            (a.prog_type, a.expected_attach_type),
            (prog::TRACING, at::TRACE_FENTRY)
        );
        assert!(a.addr > last, "address order");
        last = a.addr;
    }
    let ctp = o.find_program(b"count_tp").unwrap();
    let m = o.expand(ctp, b"sched_process_*", &btf).unwrap();
    assert!(m >= 5, "{m}");
    assert_eq!(
        o.expand(count, b"no_function_is_named_like_this_*", &btf)
            .unwrap(),
        0
    );
    // Module targets: named <program>/<module>:<target>.
    let x = o.expand(count, b"xfs`xfs_file_open", &btf).unwrap();
    assert_eq!(x, 1);
    let last = o.programs().last().unwrap();
    assert_eq!(last.name.to_string_lossy(), "count/xfs:xfs_file_open");

    // One copy of the instructions for the function and all its aliases.
    for m in 0..o.maps().len() {
        o.set_map_fd(m, 100 + m as i32).unwrap();
    }
    o.relocate().unwrap();
    let base = o.insns(count).unwrap().as_ptr();
    for i in before..o.programs().len() {
        let root = o.programs()[i].alias_of;
        assert_eq!(
            o.insns(i).unwrap().as_ptr(),
            o.insns(root).unwrap().as_ptr()
        );
    }
    assert_eq!(o.insns(before).unwrap().as_ptr(), base);
}

#[test]
fn errors_name_program_section_and_target() {
    let k = Kernel61::new();
    let btf = Arc::new(k.open());
    let mut o = object("sections.bpf.o");
    let sock = o.find_program(b"p_socket").unwrap();
    let e = o.set_attach_target(sock, b"vfs_read", &btf).unwrap_err();
    assert_eq!(e.code(), UNSUPPORTED);
    assert!(
        e.message().contains("p_socket") && e.message().contains("socket"),
        "{e}"
    );
    let unk = o.find_program(b"p_unknown").unwrap();
    let e = o.expand(unk, b"vfs_*", &btf).unwrap_err();
    assert_eq!(e.code(), UNSUPPORTED);
    assert!(e.message().contains("my_own_section/thing"), "{e}");
    let f = o.find_program(b"p_fmod_ret").unwrap();
    let e = o
        .set_attach_target(f, b"no_such_function", &btf)
        .unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(
        e.message().contains("p_fmod_ret") && e.message().contains("no_such_function"),
        "{e}"
    );
    assert_eq!(
        o.set_attach_target(f, b"a`b`c", &btf).unwrap_err().code(),
        INVALID
    );
    assert_eq!(o.expand(f, b"[", &btf).unwrap_err().code(), INVALID);
    assert_eq!(o.attach_info(999).unwrap_err().code(), NOT_FOUND);
    // A target missing on this kernel: resolve reports it, the others resolve.
    let other = KernelBtf::open(&ksym::btf::Options {
        vmlinux_btf_path: Some(k.vmlinux()),
        module_btf_dir: Some("".into()),
        filter_functions_path: Some("".into()),
        kallsyms_path: Some(k.dir.path().join("kallsyms")),
        ..Default::default()
    })
    .unwrap();
    let mut o = object("sections.bpf.o");
    let e = o.resolve_attach(&Arc::new(other)).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(e.message().contains("p_fexit_mod"), "{e}");
    let t = o.find_program(b"p_tp_btf").unwrap();
    assert!(
        o.attach_info(t).unwrap().attach_btf_id > 0,
        "resolved anyway"
    );
}
