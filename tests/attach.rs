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
use ksym::bpf::Object;
use ksym::internals::bpf::section::{
    attach as at, prog, RETPROBE, SLEEPABLE, TARGET_AT_LOAD, XDP_FRAGS,
};
use ksym::internals::btf::KernelBtf;
use ksym::internals::error::{INVALID, NOT_FOUND, UNSUPPORTED};

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
        (
            "p_kretprobe",
            prog::KPROBE,
            0,
            RETPROBE,
            Some("vfs_read"),
            None,
        ),
        (
            "p_tracepoint",
            prog::TRACEPOINT,
            0,
            0,
            Some("sys_enter_openat"),
            None,
        ),
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
        // The kernel needs the target at load for BTF-attached types only
        // (libbpf's SEC_ATTACH_BTF: tracing, lsm, freplace; struct_ops by
        // their map).
        let at_load = matches!(pt, prog::TRACING | prog::LSM | prog::EXT | prog::STRUCT_OPS);
        assert_eq!(a.flags & TARGET_AT_LOAD != 0, at_load, "{name}");
        assert_eq!(
            (
                a.prog_type,
                a.expected_attach_type,
                a.flags & !TARGET_AT_LOAD,
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
    o.resolve_attach(&btf);
    for i in 0..o.programs().len() {
        assert_eq!(o.attach_info(i).unwrap().error, None, "program {i}");
    }
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
    o.resolve_attach(&btf);
    for i in 0..o.programs().len() {
        let a = o.attach_info(i).unwrap();
        // The placeholders (`SEC("fentry")`, `SEC("tp_btf")`) name no target: their
        // own errors, no other program's.
        let name = o.programs()[i].name.to_string_lossy().into_owned();
        assert_eq!(
            a.error.is_some(),
            name == "count" || name == "count_tp",
            "{name}: {:?}",
            a.error
        );
    }
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
    o.resolve_attach(&btf);
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
    let other = KernelBtf::open(&ksym::internals::btf::Options {
        vmlinux_btf_path: Some(k.vmlinux()),
        module_btf_dir: Some("".into()),
        filter_functions_path: Some("".into()),
        kallsyms_path: Some(k.dir.path().join("kallsyms")),
        ..Default::default()
    })
    .unwrap();
    let mut o = object("sections.bpf.o");
    o.resolve_attach(&Arc::new(other));
    let fexit = o.find_program(b"p_fexit_mod").unwrap();
    let e = o.attach_info(fexit).unwrap().failure().unwrap().clone();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(e.message().contains("p_fexit_mod"), "{e}");
    let t = o.find_program(b"p_tp_btf").unwrap();
    assert!(
        o.attach_info(t).unwrap().attach_btf_id > 0,
        "resolved anyway"
    );
}

/// As libbpf: a missing target fails its program, which still relocates;
/// autoload off makes a program's errors no failure, and its code need
/// not relocate; aliases have their own autoload.
#[test]
fn missing_targets_and_autoload_per_program() {
    let k = Kernel61::new();
    // 6.1's vmlinux without module BTF: the xfs targets are missing.
    let other = Arc::new(
        KernelBtf::open(&ksym::internals::btf::Options {
            vmlinux_btf_path: Some(k.vmlinux()),
            module_btf_dir: Some("".into()),
            filter_functions_path: Some("".into()),
            kallsyms_path: Some(k.dir.path().join("kallsyms")),
            ..Default::default()
        })
        .unwrap(),
    );
    let mut o = object("sections.bpf.o");
    o.resolve_btf(&other).unwrap();
    let failing: Vec<String> = (0..o.programs().len())
        .filter(|&i| o.attach_info(i).unwrap().failure().is_some())
        .map(|i| o.programs()[i].name.to_string_lossy().into_owned())
        .collect();
    assert_eq!(failing, ["p_fexit_mod", "p_fentry_dtrace"]);
    for m in 0..o.maps().len() {
        o.set_map_fd(m, 100 + m as i32).unwrap();
    }
    o.relocate().unwrap();
    let f = o.find_program(b"p_fexit_mod").unwrap();
    assert!(!o.insns(f).unwrap().is_empty());
    o.set_autoload(f, false).unwrap();
    let a = o.attach_info(f).unwrap();
    assert!(a.failure().is_none() && a.error.unwrap().code() == NOT_FOUND);
    assert!(!o.autoload(f).unwrap());
    assert_eq!(o.set_autoload(999, true).unwrap_err().code(), NOT_FOUND);

    // trace.bpf.o: only on_fentry and its 7 aliases use map `ips`.
    let btf = Arc::new(k.open());
    let mut o = object("trace.bpf.o");
    o.resolve_btf(&btf).unwrap();
    let ips = o.find_map(b"ips").unwrap();
    for m in (0..o.maps().len()).filter(|&m| m != ips) {
        o.set_map_fd(m, 100 + m as i32).unwrap();
    }
    let e = o.relocate().unwrap_err();
    assert!(e.message().contains("`ips` has no fd"), "{e}");
    let fentry: Vec<usize> = (0..o.programs().len())
        .filter(|&i| o.programs()[i].name.to_bytes().starts_with(b"on_fentry"))
        .collect();
    assert_eq!(fentry.len(), 8);
    // One alias still to be loaded needs the shared code relocated.
    for &i in &fentry[..7] {
        o.set_autoload(i, false).unwrap();
    }
    assert!(o.relocate().is_err());
    o.set_autoload(fentry[7], false).unwrap();
    o.relocate().unwrap();
    let e = o.insns(fentry[0]).unwrap_err();
    assert_eq!(e.code(), INVALID);
    assert!(
        e.message().contains("autoload is off") && e.message().contains("`ips` has no fd"),
        "{e}"
    );
    let tp = o.find_program(b"on_tp").unwrap();
    assert!(!o.insns(tp).unwrap().is_empty());
    // With the fd, every layout is written again.
    o.set_map_fd(ips, 7).unwrap();
    o.relocate().unwrap();
    assert!(!o.insns(fentry[0]).unwrap().is_empty());
}

/// Tracepoint sections (tracepoints.bpf.o): the text after `tracepoint/`
/// or `tp/` split at its first `/` into category and name, as libbpf's
/// `attach_tp` splits it (worked out by hand from the sections), known
/// before any BTF; a section with no category is that program's
/// KSYM_ERR_INVALID after resolution (libbpf cannot attach it), with
/// autoload off no failure, and never a load-time need.
#[test]
fn tracepoint_sections_give_category_and_name() {
    let mut o = object("tracepoints.bpf.o");
    let want: &[(&str, Option<&str>, Option<&str>)] = &[
        ("on_switch", Some("sched"), Some("sched_switch")),
        ("on_openat", Some("syscalls"), Some("sys_enter_openat")),
        ("deeper", Some("sched"), Some("sched_switch/extra")),
        ("no_category", None, Some("sched_switch")),
        ("optional_no_category", None, Some("sched_wakeup")),
        ("bare", None, None),
    ];
    assert_eq!(o.programs().len(), want.len());
    let check = |o: &Object| {
        for &(name, category, target) in want {
            let a = o
                .attach_info(o.find_program(name.as_bytes()).unwrap())
                .unwrap();
            assert_eq!(a.prog_type, prog::TRACEPOINT, "{name}");
            assert_eq!(
                a.flags & TARGET_AT_LOAD,
                0,
                "{name}: loads without its target"
            );
            assert_eq!(
                (s(a.category), s(a.target), s(a.module), a.addr),
                (
                    category.map(String::from),
                    target.map(String::from),
                    None,
                    0
                ),
                "{name}"
            );
        }
    };
    check(&o);
    for i in 0..want.len() {
        assert!(
            o.attach_info(i).unwrap().error.is_none(),
            "nothing resolved yet"
        );
    }
    let k = Kernel61::new();
    let btf = Arc::new(k.open());
    o.resolve_btf(&btf).unwrap();
    check(&o);
    let errors: Vec<(String, i32, bool)> = (0..want.len())
        .filter_map(|i| {
            let a = o.attach_info(i).unwrap();
            let e = a.error?;
            let name = o.programs()[i].name.to_string_lossy().into_owned();
            Some((name, e.code(), a.failure().is_some()))
        })
        .collect();
    assert_eq!(
        errors,
        [
            ("no_category".to_string(), INVALID, true),
            ("optional_no_category".to_string(), INVALID, false),
        ]
    );
    let i = o.find_program(b"no_category").unwrap();
    let msg = o
        .attach_info(i)
        .unwrap()
        .error
        .unwrap()
        .message()
        .to_string();
    for part in ["`no_category`", "`tp/sched_switch`", "tp/<category>/<name>"] {
        assert!(msg.contains(part), "{part} in {msg}");
    }
    // A tracepoint program takes no target from the loader (libbpf has
    // no such call for it either).
    assert_eq!(
        o.set_attach_target(i, b"sched/sched_switch", &btf)
            .unwrap_err()
            .code(),
        UNSUPPORTED
    );
}

/// A tracepoint program expanded over a tracefs `events` directory (a
/// tree made here, so the expected events are known by hand): one alias
/// per matching event directory (files such as `enable` are not events),
/// by category then name, each named `<program>/<category>/<name>`,
/// attached by its own category and name, sharing the program's
/// instructions; the live kernel's tracefs is c-tests/test_tool_sections.c's.
#[test]
fn tracepoint_programs_expand_over_tracefs_events() {
    let dir = common::TempDir::new();
    let events = dir.path().join("events");
    for ev in [
        "syscalls/sys_enter_openat",
        "syscalls/sys_enter_getpid",
        "syscalls/sys_exit_getpid",
        "sched/sched_switch",
        "sched/sched_wakeup",
    ] {
        std::fs::create_dir_all(events.join(ev)).unwrap();
        std::fs::write(events.join(ev).join("id"), "1\n").unwrap();
    }
    std::fs::write(events.join("enable"), "0\n").unwrap();
    std::fs::write(events.join("syscalls/enable"), "0\n").unwrap();
    let mut o = object("tracepoints.bpf.o");
    let root = o.find_program(b"on_switch").unwrap();
    let n0 = o.programs().len();
    // The names of the aliases one expansion adds, as many as it says.
    let expand = |o: &mut Object, pattern: &[u8]| -> Vec<String> {
        let from = o.programs().len();
        let n = o.expand_tracepoints(root, pattern, &events).unwrap();
        assert_eq!(o.programs().len(), from + n);
        (from..from + n)
            .map(|i| o.programs()[i].name.to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        expand(&mut o, b"syscalls/sys_enter_*"),
        [
            "on_switch/syscalls/sys_enter_getpid",
            "on_switch/syscalls/sys_enter_openat"
        ]
    );
    for (i, name) in [(n0, "sys_enter_getpid"), (n0 + 1, "sys_enter_openat")] {
        let a = o.attach_info(i).unwrap();
        assert_eq!(
            (s(a.category), s(a.target), a.prog_type),
            (
                Some("syscalls".to_string()),
                Some(name.to_string()),
                prog::TRACEPOINT
            )
        );
        assert!(a.autoload && a.error.is_none());
        assert_eq!(o.programs()[i].alias_of, root);
    }
    // A name glob alone: any category; `?` and `[...]`; files are not events.
    assert_eq!(
        expand(&mut o, b"*_getpid"),
        [
            "on_switch/syscalls/sys_enter_getpid",
            "on_switch/syscalls/sys_exit_getpid"
        ]
    );
    assert_eq!(
        expand(&mut o, b"s[c]hed/sched_?????*"),
        [
            "on_switch/sched/sched_switch",
            "on_switch/sched/sched_wakeup"
        ]
    );
    assert_eq!(o.expand_tracepoints(root, b"enable", &events).unwrap(), 0);
    assert_eq!(o.expand_tracepoints(root, b"*/enable", &events).unwrap(), 0);
    // Aliases share the root's one copy through relocation.
    o.relocate().unwrap();
    let first = o.insns(root).unwrap().as_ptr();
    assert!((n0..o.programs().len()).all(|i| o.insns(i).unwrap().as_ptr() == first));
    // Errors: a pattern with an empty half, a bad glob, a program of
    // another kind, no such directory.
    let n = o.programs().len();
    for bad in [&b"syscalls/"[..], b"/sys_enter_openat", b"sched/[sched"] {
        let e = o.expand_tracepoints(root, bad, &events).unwrap_err();
        assert_eq!(e.code(), INVALID, "{}", e.message());
        assert!(e.message().contains("on_switch"), "{}", e.message());
    }
    let other = object("sections.bpf.o");
    let mut other = other;
    let fentry = other.find_program(b"p_fmod_ret").unwrap();
    let e = other
        .expand_tracepoints(fentry, b"sched/*", &events)
        .unwrap_err();
    assert_eq!(e.code(), UNSUPPORTED);
    let e = o
        .expand_tracepoints(root, b"sched/*", &dir.path().join("none"))
        .unwrap_err();
    assert_eq!(e.code(), NOT_FOUND, "{}", e.message());
    assert_eq!(o.programs().len(), n, "no alias made by a failed call");
}
