//! Per-alias constants ([`Object::alias_insns`]) in the Rust API, on the
//! bundled 6.1 kernel: each program's or alias's copy holds its own
//! `ksym_alias_value` and the address of its function in that kernel's
//! kallsyms (read naively: the oracle), the shared copy 0 (libbpf's value
//! of a weak extern it cannot find), and nothing else differs.
//! c-tests/test_alias_values_kernel.c runs the same object in the kernel.

mod common;

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use common::Kernel61;
use ksym::bpf::{ExternKind, Insn, Object, RelocKind};
use ksym::internals::error::{INVALID, NOT_FOUND};

fn object() -> Object {
    Object::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/bpf/alias_values.bpf.o"))
        .unwrap()
}

fn imm64(insns: &[Insn], i: usize) -> u64 {
    insns[i].imm as u32 as u64 | (insns[i + 1].imm as u32 as u64) << 32
}

/// Checks `prog`'s copy against the shared one; returns its constants
/// as (extern kind, value), in instruction order.
fn constants(o: &Object, prog: usize) -> Vec<(ExternKind, u64)> {
    let shared = o.insns(prog).unwrap();
    let own = o.alias_insns(prog).unwrap();
    assert!(matches!(own, Cow::Owned(_)));
    assert_eq!(own.len(), shared.len());
    let mut out = Vec::new();
    let mut at = vec![false; shared.len()];
    for r in o
        .relocs(prog)
        .unwrap()
        .iter()
        .filter(|r| r.kind == RelocKind::Alias)
    {
        assert_eq!(
            imm64(shared, r.insn_idx),
            0,
            "shared copy, insn {}",
            r.insn_idx
        );
        out.push((o.externs()[r.target].kind, imm64(&own, r.insn_idx)));
        at[r.insn_idx] = true;
        at[r.insn_idx + 1] = true;
    }
    for (i, (a, b)) in own.iter().zip(shared).enumerate() {
        assert!(at[i] || a == b, "program {prog}: insn {i} differs");
    }
    out
}

#[test]
fn each_alias_loads_its_own_values() {
    let k = Kernel61::new();
    let btf = Arc::new(k.open());
    let syms = common::reference(&common::data("linux-6.1-cloud/kallsyms"));
    let kallsyms = |n: &str| {
        syms.iter()
            .filter(|r| r.module == b"vmlinux" && r.name == n.as_bytes())
            .map(|r| r.addr)
            .min()
            .unwrap()
    };
    let mut o = object();
    // The reserved externs: per-alias constants, resolved by libksym itself.
    let mut kinds: Vec<_> = o
        .externs()
        .iter()
        .map(|x| (x.name.to_str().unwrap(), x.kind, x.resolved, x.weak))
        .collect();
    kinds.sort_by_key(|k| k.0);
    assert_eq!(
        kinds,
        [
            ("ksym_alias_addr", ExternKind::AliasAddr, true, true),
            ("ksym_alias_value", ExternKind::AliasValue, true, true)
        ]
    );
    let task = o.find_program(b"on_task").unwrap();
    let rename = o.find_program(b"on_rename").unwrap();
    let func = o.find_program(b"on_func").unwrap();
    let base = o.programs().len();
    assert_eq!(o.expand(func, b"__x64_sys_getp[gr]i*", &btf).unwrap(), 2);
    o.set_attach_target(rename, b"task_rename", &btf).unwrap();
    o.set_alias_value(rename, u64::MAX - 1).unwrap();
    o.set_alias_value(base + 1, 77).unwrap();
    assert_eq!(
        o.set_alias_value(base + 2, 1).unwrap_err().code(),
        NOT_FOUND
    );
    assert_eq!(o.alias_value(task).unwrap(), task as u64);
    assert_eq!(o.alias_value(rename).unwrap(), u64::MAX - 1);
    o.resolve_attach(&btf);
    for m in 0..o.maps().len() {
        o.set_map_fd(m, 100 + m as i32).unwrap();
    }
    // Before relocate: the shared copy's error.
    assert_eq!(o.alias_insns(task).unwrap_err().code(), INVALID);
    o.relocate().unwrap();

    use ExternKind::{AliasAddr, AliasValue};
    assert_eq!(constants(&o, task), [(AliasValue, task as u64)]);
    assert_eq!(constants(&o, rename), [(AliasValue, u64::MAX - 1)]);
    for (i, value) in [(base, base as u64), (base + 1, 77)] {
        let target = o
            .attach_info(i)
            .unwrap()
            .target
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(["__x64_sys_getpgid", "__x64_sys_getpriority"].contains(&target.as_str()));
        let mut c = constants(&o, i);
        c.sort_by_key(|&(k, _)| k as u32);
        assert_eq!(
            c,
            [(AliasValue, value), (AliasAddr, kallsyms(&target))],
            "{target}"
        );
    }
    // The body itself attaches nowhere: no address, an error naming it.
    let e = o.alias_insns(func).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(
        e.message().contains("`on_func`") && e.message().contains("ksym_alias_addr"),
        "{e}"
    );
}

#[test]
fn a_program_without_constants_gets_the_shared_copy() {
    let mut o =
        Object::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/bpf/task_events.bpf.o"))
            .unwrap();
    for m in 0..o.maps().len() {
        o.set_map_fd(m, 100 + m as i32).unwrap();
    }
    o.relocate().unwrap();
    for i in 0..o.programs().len() {
        assert!(!o.uses_alias_values(i).unwrap());
        let own = o.alias_insns(i).unwrap();
        assert!(matches!(own, Cow::Borrowed(_)));
        assert_eq!(own.as_ptr(), o.insns(i).unwrap().as_ptr());
    }
}
