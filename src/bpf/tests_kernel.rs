//! resolve_btf and relocate on the committed fixtures against hand-made
//! kernel BTF: CO-RE (in vmlinux and in a module), typed ksyms, kfuncs,
//! `.kconfig`. Every expected value is worked out by hand in a comment.

use std::sync::Arc;

use super::*;
use crate::bpf::insn::{self, Insn};
use crate::bpf::object::*;
use crate::btf::KernelBtf;
use crate::error::{FORMAT, INVALID};
use crate::formats::btf::tests::Builder;
use crate::formats::btf::{
    Btf, KIND_ENUM, KIND_FUNC, KIND_FUNC_PROTO, KIND_INT, KIND_STRUCT, KIND_TYPEDEF, KIND_VAR,
};

fn open(name: &str) -> Object {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("c-tests/bpf")
        .join(name);
    Object::open(&p).unwrap_or_else(|e| panic!("{name}: {e}"))
}

const SIGNED: u32 = 1 << 24;

/// The kernel's types the fixtures refer to:
///
/// ```text
/// [1] int (4, signed)   [2] unsigned int (4)   [3] long (8, signed)
/// [4] struct task_like (24) kflag { long pad @0; int pid @64; int tgid @96;
///                                   unsigned int flags:3 @133 }
/// [5] enum color (4) { RED = 0, BLUE = 1, GREEN = 7 }
/// [6] VAR bpf_prog_active: int          [7] FUNC_PROTO void (void)
/// [8] FUNC bpf_rcu_read_lock: [7]
/// ```
/// With `in_module`, [4] and [5] are not in vmlinux but in module `mymod`.
fn kernel(in_module: bool) -> KernelBtf {
    let mut b = Builder::new();
    let int = b.t("int", KIND_INT, 0, false, 4, &[SIGNED | 32]);
    let uint = b.t("unsigned int", KIND_INT, 0, false, 4, &[32]);
    let long = b.t("long", KIND_INT, 0, false, 8, &[SIGNED | 64]);
    let var = b.s("bpf_prog_active");
    let lock = b.s("bpf_rcu_read_lock");
    let types = |b: &mut Builder| {
        let (pad, pid, tgid, flags) = (b.s("pad"), b.s("pid"), b.s("tgid"), b.s("flags"));
        b.t(
            "task_like",
            KIND_STRUCT,
            4,
            true,
            24,
            &[
                pad,
                long,
                0,
                pid,
                int,
                64,
                tgid,
                int,
                96,
                flags,
                uint,
                (3 << 24) | 133,
            ],
        );
        let (red, blue, green) = (b.s("RED"), b.s("BLUE"), b.s("GREEN"));
        b.t(
            "color",
            KIND_ENUM,
            3,
            false,
            4,
            &[red, 0, blue, 1, green, 7],
        );
    };
    if !in_module {
        types(&mut b);
    }
    let _ = var;
    b.t("bpf_prog_active", KIND_VAR, 0, false, int, &[1]);
    let proto = b.t("", KIND_FUNC_PROTO, 0, false, 0, &[]);
    let _ = lock;
    b.t("bpf_rcu_read_lock", KIND_FUNC, 1, false, proto, &[]);
    let vmlinux = Btf::parse(b.bytes()).unwrap();
    let mut modules = Vec::new();
    if in_module {
        let base = Arc::new(Btf::parse(b.bytes()).unwrap());
        let mut m = Builder::split(&base);
        types(&mut m);
        modules.push((
            b"mymod".to_vec(),
            Btf::parse_split(m.bytes(), base).unwrap(),
        ));
    }
    KernelBtf::from_parts(vmlinux, modules).unwrap()
}

/// Relocated instructions of program 0 (every map given fd 100 + index).
fn relocated(o: &mut Object) -> Vec<Insn> {
    for i in 0..o.maps().len() {
        o.set_map_fd(i, 100 + i as i32).unwrap();
    }
    o.relocate().unwrap_or_else(|e| panic!("{e}"));
    o.insns(0).unwrap().to_vec()
}

#[test]
fn kernel_btf_features_wait_for_resolve_btf() {
    for (f, prog, what) in [
        ("typed_ksym.bpf.o", "typed", "typed __ksym"),
        ("kfunc.bpf.o", "calls_kfunc", "kfunc call"),
        ("kconfig.bpf.o", "uses_kconfig", ".kconfig extern"),
        ("core.bpf.o", "core_prog", "CO-RE relocation"),
    ] {
        let mut o = open(f);
        for i in 0..o.maps().len() {
            o.set_map_fd(i, 3).unwrap();
        }
        let e = o.relocate().unwrap_err();
        assert_eq!(e.code(), INVALID, "{f}: {e}");
        let m = e.message();
        assert!(
            m.contains(&format!("program `{prog}`"))
                && m.contains(what)
                && m.contains("Object::resolve_btf"),
            "{f}: {e}"
        );
    }
}

/// The pipeline's order, as the C API documents it: the instructions
/// only after a relocate that succeeded; relocate (of CO-RE) only after
/// resolve_btf; a resolve_btf undoes a relocate (the layouts are to be
/// written again), and a failed relocate leaves none.
#[test]
fn the_pipeline_stage_follows_the_calls() {
    let relocate_first = |o: &Object| {
        let e = o.insns(0).unwrap_err();
        assert_eq!(e.code(), INVALID, "{e}");
        assert!(e.message().contains("call Object::relocate first"), "{e}");
    };
    let mut o = open("core.bpf.o");
    for i in 0..o.maps().len() {
        o.set_map_fd(i, 3).unwrap();
    }
    relocate_first(&o);
    let e = o.relocate().unwrap_err();
    assert!(
        e.message().contains("call Object::resolve_btf first"),
        "{e}"
    );
    relocate_first(&o);
    let k = Arc::new(kernel(false));
    o.resolve_btf(&k).unwrap();
    relocate_first(&o);
    o.relocate().unwrap();
    let insns = o.insns(0).unwrap().to_vec();
    // resolve_ksyms keeps the relocation (it always did); resolve_btf
    // does not.
    o.resolve_ksyms(None).unwrap();
    assert_eq!(o.insns(0).unwrap(), insns);
    o.resolve_btf(&k).unwrap();
    relocate_first(&o);
    o.relocate().unwrap();
    assert_eq!(o.insns(0).unwrap(), insns);
}

/// The CO-RE sites of core.bpf.o (instruction: what clang wrote, from
/// `llvm-objdump -d`) and what the kernel above makes of them.
fn check_core(in_module: bool) {
    let mut o = open("core.bpf.o");
    let k = Arc::new(kernel(in_module));
    o.resolve_btf(&k).unwrap();
    let insns = relocated(&mut o);
    // 0: `r2 = 4`, byte offset of tgid: bit 96 in the kernel: 12.
    assert_eq!(insns[0].imm, 12);
    // 10: `r2 = 4`, byte size of tgid: an int, 4.
    assert_eq!(insns[10].imm, 4);
    // 14: `r2 = 1`, task_like___old.gone exists? The kernel's task_like has
    // no `gone`: 0 (exists is never poisoned).
    assert_eq!(insns[14].imm, 0);
    // 16: `r2 = 61`, lshift of flags: 3 bits at 133 of a 4-byte unsigned:
    // byte_off = 133 / 8 / 4 * 4 = 16, lshift = 64 - (133 + 3 - 128) = 56.
    assert_eq!(insns[16].imm, 56);
    // 18: `r2 = 12`, sizeof(struct task_like): 24.
    assert_eq!(insns[18].imm, 24);
    // 20: `r2 = 1 ll`, enum color GREEN: 7, in both halves of the ld_imm64.
    assert_eq!((insns[20].imm, insns[21].imm), (7, 0));
    // 23: `r1 = *(u32 *)(r1 + 4)`: the load of tgid moves to 12, same size.
    assert_eq!((insns[23].code, insns[23].off), (0x61, 12));
    // Every relocation says what it was and what it became.
    let core: Vec<&Reloc> = o
        .relocs(0)
        .unwrap()
        .iter()
        .filter(|r| r.kind == RelocKind::Core)
        .collect();
    assert_eq!(core.len(), 7);
    let first = core[0];
    assert_eq!(first.insn_idx, 0);
    assert_eq!(
        o.reloc_symbol(first).to_str().unwrap(),
        "<byte_off> [8] struct task_like.tgid (0:1 @ offset 4)"
    );
    assert_eq!((first.addend, first.flags), (12, RELOC_RESOLVED));
    // Relocating again starts from the pristine copy: the same result.
    assert_eq!(relocated(&mut o), insns);
}

#[test]
fn core_relocations_against_vmlinux() {
    check_core(false);
}

#[test]
fn core_relocations_against_a_module() {
    // The types only in module `mymod`: vmlinux has no candidate, so the
    // modules are searched, as libbpf does.
    check_core(true);
}

#[test]
fn core_missing_types_poison_or_give_zero() {
    // No task_like anywhere: byte offsets and sizes poison, exists is 0,
    // the type size is 0; color is missing too: its value poisons.
    let mut b = Builder::new();
    b.t("int", KIND_INT, 0, false, 4, &[SIGNED | 32]);
    let k = Arc::new(KernelBtf::from_parts(Btf::parse(b.bytes()).unwrap(), Vec::new()).unwrap());
    let mut o = open("core.bpf.o");
    o.resolve_btf(&k).unwrap();
    let insns = relocated(&mut o);
    let poisoned = |i: usize| insns[i].code == insn::CALL && insns[i].imm == core::POISON_IMM;
    assert!(
        poisoned(0) && poisoned(10) && poisoned(16) && poisoned(20) && poisoned(21) && poisoned(23)
    );
    assert_eq!(insns[14].imm, 0);
    assert_eq!(insns[18].imm, 0);
    let flags: Vec<u32> = o
        .relocs(0)
        .unwrap()
        .iter()
        .filter(|r| r.kind == RelocKind::Core)
        .map(|r| r.flags)
        .collect();
    assert_eq!(
        flags.iter().filter(|&&f| f & RELOC_POISONED != 0).count(),
        5
    );
}

#[test]
fn typed_ksyms_and_kfuncs() {
    let k = Arc::new(kernel(false));
    // bpf_prog_active: VAR [6] of vmlinux: `r = bpf_prog_active ll` gets
    // src_reg BPF_PSEUDO_BTF_ID (3), imm 6, second half 0 (vmlinux).
    let mut o = open("typed_ksym.bpf.o");
    o.resolve_btf(&k).unwrap();
    let insns = relocated(&mut o);
    let r = o
        .relocs(0)
        .unwrap()
        .iter()
        .find(|r| r.kind == RelocKind::KsymBtf)
        .unwrap()
        .clone();
    let (a, b) = (insns[r.insn_idx], insns[r.insn_idx + 1]);
    assert_eq!((a.src_reg(), a.imm, b.imm), (insn::PSEUDO_BTF_ID, 6, 0));
    assert_eq!((r.addend, r.flags), (6, RELOC_RESOLVED));
    assert_eq!(o.externs()[0].module.as_deref(), Some(c"vmlinux"));
    // bpf_rcu_read_lock: FUNC [8]: the call gets src_reg
    // BPF_PSEUDO_KFUNC_CALL (2), imm 8, off 0; no fd array for vmlinux.
    let mut o = open("kfunc.bpf.o");
    o.resolve_btf(&k).unwrap();
    let insns = relocated(&mut o);
    let r = o
        .relocs(0)
        .unwrap()
        .iter()
        .find(|r| r.kind == RelocKind::Kfunc)
        .unwrap()
        .clone();
    let a = insns[r.insn_idx];
    assert_eq!(
        (a.code, a.src_reg(), a.imm, a.off),
        (insn::CALL, insn::PSEUDO_KFUNC_CALL, 8, 0)
    );
    assert!(o.fd_array(0).unwrap().is_empty());
}

#[test]
fn kfuncs_in_modules_go_through_the_fd_array() {
    // The same kernel, with bpf_rcu_read_lock in module `mymod` instead:
    // the module's BTF has no fd here (-1), it takes fd_array[1] (0 stays
    // unused, as libbpf leaves it) and the call's off is 1.
    let mut b = Builder::new();
    b.t("int", KIND_INT, 0, false, 4, &[SIGNED | 32]);
    let base = Arc::new(Btf::parse(b.bytes()).unwrap());
    let mut m = Builder::split(&base);
    let proto = m.t("", KIND_FUNC_PROTO, 0, false, 0, &[]);
    let id = m.t("bpf_rcu_read_lock", KIND_FUNC, 1, false, proto, &[]);
    let module = Btf::parse_split(m.bytes(), base).unwrap();
    let k = KernelBtf::from_parts(
        Btf::parse(b.bytes()).unwrap(),
        vec![(b"mymod".to_vec(), module)],
    )
    .unwrap();
    let mut o = open("kfunc.bpf.o");
    o.resolve_btf(&Arc::new(k)).unwrap();
    let insns = relocated(&mut o);
    let r = o
        .relocs(0)
        .unwrap()
        .iter()
        .find(|r| r.kind == RelocKind::Kfunc)
        .unwrap()
        .clone();
    assert_eq!(
        (insns[r.insn_idx].imm as u32, insns[r.insn_idx].off),
        (id, 1)
    );
    assert_eq!(o.fd_array(0).unwrap(), &[0, -1]);
    assert_eq!(o.externs()[0].module.as_deref(), Some(c"mymod"));
}

#[test]
fn extern_types_are_checked_and_strong_ones_must_exist() {
    // bpf_prog_active as a struct in the kernel: the object's `int` is not
    // compatible (libbpf: "incompatible types").
    let mut b = Builder::new();
    b.t("int", KIND_INT, 0, false, 4, &[SIGNED | 32]);
    let st = b.t("rq", KIND_STRUCT, 0, false, 8, &[]);
    b.t("bpf_prog_active", KIND_VAR, 0, false, st, &[1]);
    let k = Arc::new(KernelBtf::from_parts(Btf::parse(b.bytes()).unwrap(), Vec::new()).unwrap());
    let mut o = open("typed_ksym.bpf.o");
    let e = o.resolve_btf(&k).unwrap_err();
    assert!(
        e.message().contains("incompatible types") && e.message().contains("bpf_prog_active"),
        "{e}"
    );
    // relocate reports it again.
    o.set_map_fd(0, 3).ok();
    assert!(o.relocate().unwrap_err().message().contains("incompatible"));
    // A kernel without the kfunc: a strong one is NOT_FOUND.
    let mut o = open("kfunc.bpf.o");
    let e = o.resolve_btf(&k).unwrap_err();
    assert_eq!(e.code(), crate::error::NOT_FOUND, "{e}");
    assert!(
        e.message().contains("bpf_rcu_read_lock") && e.message().contains("__weak"),
        "{e}"
    );
}

#[test]
fn kconfig_values_and_layout_as_libbpf() {
    // The config below, and the layout libbpf gives kconfig.bpf.o's
    // externs: by alignment (descending), size, name:
    //   CONFIG_MISSING u64 (8, 8) @0   CONFIG_HZ int (4, 4) @8
    //   CONFIG_MOD tristate (4, 4) @12 LINUX_KERNEL_VERSION u32 (4, 4) @16
    //   CONFIG_BPF bool (1, 1) @20     CONFIG_CHAR char (1, 1) @21
    //   CONFIG_LOCALVERSION char[8] (1, 8) @22   total 30 bytes.
    let dir = std::env::temp_dir().join(format!("ksym-kconfig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("config");
    std::fs::write(
        &cfg,
        "# comment\nCONFIG_BPF=y\nCONFIG_MOD=m\nCONFIG_HZ=0x100\nCONFIG_LOCALVERSION=\"-fc-v657-long\"\n\
         CONFIG_CHAR=y\nCONFIG_HZ=1000\n",
    )
    .unwrap();
    let k = Arc::new(kernel(false).with_kconfig_path(cfg.clone()));
    let mut o = open("kconfig.bpf.o");
    let m = o.kconfig_map().unwrap();
    assert_eq!(o.maps()[m].value_size, 30);
    o.resolve_btf(&k).unwrap();
    let v = o.maps()[m].initial_value.clone().unwrap();
    assert_eq!(&v[0..8], &[0; 8], "weak CONFIG_MISSING: 0");
    assert_eq!(
        &v[8..12],
        &256u32.to_le_bytes(),
        "CONFIG_HZ: the first setting, 0x100, wins"
    );
    assert_eq!(&v[12..16], &2u32.to_le_bytes(), "CONFIG_MOD=m: TRI_MODULE");
    // LINUX_KERNEL_VERSION at its offset: the running kernel's, whose
    // value live_kernel_version_as_libbpf_reads_it checks.
    let running = running_kernel_facts(&k).0;
    assert_eq!(&v[16..20], &(running as u32).to_le_bytes());
    assert_eq!(v[20], 1, "CONFIG_BPF=y as a bool");
    assert_eq!(v[21], b'y', "CONFIG_CHAR=y as a char");
    // The string truncated to 7 characters and a NUL, as libbpf.
    assert_eq!(&v[22..30], b"-fc-v65\0");
    // The program reads each from the .kconfig map at its offset.
    let insns = relocated(&mut o);
    let offs: Vec<(i32, i32)> = o
        .relocs(0)
        .unwrap()
        .iter()
        .filter(|r| r.kind == RelocKind::Kconfig)
        .map(|r| {
            let (a, b) = (insns[r.insn_idx], insns[r.insn_idx + 1]);
            assert_eq!(a.src_reg(), insn::PSEUDO_MAP_VALUE);
            (a.imm, b.imm)
        })
        .collect();
    let fd = 100 + m as i32;
    let mut got: Vec<i32> = offs
        .iter()
        .map(|&(f, off)| {
            assert_eq!(f, fd);
            off
        })
        .collect();
    got.sort();
    assert_eq!(got, [0, 8, 12, 16, 20, 21, 22]);
    // A strong CONFIG_ option the config lacks is an error naming it.
    std::fs::write(&cfg, "CONFIG_BPF=y\n").unwrap();
    let k = Arc::new(kernel(false).with_kconfig_path(cfg.clone()));
    let e = o.resolve_btf(&k).unwrap_err();
    assert!(
        e.message().contains("CONFIG_MOD") || e.message().contains("CONFIG_HZ"),
        "{e}"
    );
    // A value of the wrong type: `m` for a bool.
    std::fs::write(&cfg, "CONFIG_BPF=m\n").unwrap();
    let k = Arc::new(kernel(false).with_kconfig_path(cfg));
    let e = o.resolve_btf(&k).unwrap_err();
    assert!(
        e.message().contains("CONFIG_BPF") && e.message().contains("line 1"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// LINUX_KERNEL_VERSION in an object's `.kconfig` map is what libbpf
/// 1.7's `get_kernel_version` gives on this kernel, worked out here from
/// the same sources by libbpf's rule: the third word of Ubuntu's
/// /proc/version_signature (`%*s %*s %u.%u.%u`), else the version after
/// " Debian " in `uname -v`, else `uname -r`'s first three numbers;
/// KERNEL_VERSION(a, b, c) = a << 16 | b << 8 | min(c, 255). On Debian
/// `uname -r` says 6.1.0-57-amd64 while the kernel is 6.1.192, so a test
/// reading `uname -r` alone fails there. `live_`: the guests run it on
/// Debian's kernels.
#[test]
fn live_kernel_version_as_libbpf_reads_it() {
    fn three(s: &str) -> Option<u64> {
        let mut n = [0u64; 3];
        let mut rest = s.trim_start();
        for (i, v) in n.iter_mut().enumerate() {
            let len = rest.bytes().take_while(u8::is_ascii_digit).count();
            *v = rest[..len].parse().ok()?;
            rest = &rest[len..];
            if i < 2 {
                rest = rest.strip_prefix('.')?;
            }
        }
        Some(n[0] << 16 | n[1] << 8 | n[2].min(255))
    }
    let uname = |flag: &str| {
        let out = std::process::Command::new("uname")
            .arg(flag)
            .output()
            .unwrap();
        assert!(out.status.success(), "uname {flag}");
        String::from_utf8(out.stdout).unwrap()
    };
    let ubuntu = std::fs::read_to_string("/proc/version_signature")
        .ok()
        .and_then(|sig| three(sig.split_whitespace().nth(2)?));
    let version = uname("-v");
    let debian = version
        .find(" Debian ")
        .and_then(|at| three(&version[at + " Debian ".len()..]));
    let want = ubuntu
        .or(debian)
        .or_else(|| three(&uname("-r")))
        .expect("no kernel version in uname -r");
    // Through an object, as a loader gets it: kconfig.bpf.o's
    // LINUX_KERNEL_VERSION is at offset 16 of its .kconfig map.
    let dir = std::env::temp_dir().join(format!("ksym-kversion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("config");
    std::fs::write(
        &cfg,
        "CONFIG_BPF=y\nCONFIG_MOD=m\nCONFIG_HZ=250\nCONFIG_CHAR=y\nCONFIG_LOCALVERSION=\"\"\n",
    )
    .unwrap();
    let k = Arc::new(kernel(false).with_kconfig_path(cfg));
    let mut o = open("kconfig.bpf.o");
    o.resolve_btf(&k).unwrap();
    let m = o.kconfig_map().unwrap();
    let v = o.maps()[m].initial_value.clone().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let got = u32::from_le_bytes(v[16..20].try_into().unwrap());
    assert_eq!(
        got as u64,
        want,
        "LINUX_KERNEL_VERSION {got:#x}, libbpf's {want:#x} (uname -r {:?}, -v {version:?})",
        uname("-r").trim()
    );
}

/// The kernel of `ksym_exists.bpf.o`'s tests:
///
/// ```text
/// vmlinux: [1] int   [2] FUNC_PROTO void (void)   [3] FUNC bpf_rcu_read_lock: [2]
///          [4] FUNC_PROTO int (int)                [5] FUNC bpf_incompat: [4]
/// mymod:   [6] FUNC_PROTO void (void)              [7] FUNC bpf_mod_kfunc: [6]
/// ```
fn kfunc_kernel() -> KernelBtf {
    let mut b = Builder::new();
    let int = b.t("int", KIND_INT, 0, false, 4, &[SIGNED | 32]);
    let void_proto = b.t("", KIND_FUNC_PROTO, 0, false, 0, &[]);
    b.t("bpf_rcu_read_lock", KIND_FUNC, 1, false, void_proto, &[]);
    let int_proto = b.t("", KIND_FUNC_PROTO, 1, false, int, &[0, int]);
    b.t("bpf_incompat", KIND_FUNC, 1, false, int_proto, &[]);
    let base = Arc::new(Btf::parse(b.bytes()).unwrap());
    let mut m = Builder::split(&base);
    let p = m.t("", KIND_FUNC_PROTO, 0, false, 0, &[]);
    m.t("bpf_mod_kfunc", KIND_FUNC, 1, false, p, &[]);
    let module = Btf::parse_split(m.bytes(), base).unwrap();
    KernelBtf::from_parts(
        Btf::parse(b.bytes()).unwrap(),
        vec![(b"mymod".to_vec(), module)],
    )
    .unwrap()
}

#[test]
fn kfunc_loads_and_poisoned_calls_as_libbpf() {
    // ksym_exists.bpf.o (llvm-objdump -dr): ld_imm64 of bpf_rcu_read_lock
    // at 0, bpf_mod_kfunc at 8, bpf_absent at 16 (called at 20),
    // bpf_incompat at 26 (called at 29), bpf_rcu_read_lock___flavor at 35.
    let mut o = open("ksym_exists.bpf.o");
    o.resolve_btf(&Arc::new(kfunc_kernel())).unwrap();
    let insns = relocated(&mut o);
    let ld = |i: usize| (insns[i].src_reg(), insns[i].imm, insns[i + 1].imm);
    // Found: BPF_PSEUDO_BTF_ID (3), the FUNC's id, the BTF object's fd in
    // the second half (0: vmlinux; -1: a module's BTF read from a file,
    // which has no fd), as libbpf's bpf_object__relocate_data.
    assert_eq!(ld(0), (insn::PSEUDO_BTF_ID, 3, 0), "strong, vmlinux");
    assert_eq!(ld(8), (insn::PSEUDO_BTF_ID, 7, -1), "weak, module");
    // The flavor is looked up by its essential name.
    assert_eq!(ld(35), (insn::PSEUDO_BTF_ID, 3, 0), "___flavor");
    // Missing (bpf_absent), or of another prototype (bpf_incompat, weak:
    // libbpf treats it as missing): the address 0, so that the guard's
    // branch is known to be taken by the verifier.
    assert_eq!(ld(16), (0, 0, 0));
    assert_eq!(ld(26), (0, 0, 0));
    // Their calls poisoned as libbpf does: `call 2002000000 + n`, n the
    // extern's index in libbpf's order (no .kconfig externs; by name:
    // bpf_absent 0, bpf_incompat 1, bpf_mod_kfunc 2, bpf_rcu_read_lock 3,
    // bpf_rcu_read_lock___flavor 4).
    for (i, n) in [(20, 0), (29, 1)] {
        assert_eq!(
            insns[i],
            Insn {
                code: insn::CALL,
                regs: 0,
                off: 0,
                imm: 2_002_000_000 + n
            },
            "insn {i}"
        );
    }
    let x = |name: &[u8]| {
        o.externs()
            .iter()
            .find(|x| x.name.to_bytes() == name)
            .unwrap()
    };
    assert!(!x(b"bpf_incompat").resolved && !x(b"bpf_absent").resolved);
    assert_eq!(x(b"bpf_mod_kfunc").module.as_deref(), Some(c"mymod"));
    assert_eq!(x(b"bpf_rcu_read_lock___flavor").btf_id, 3);
    // The loads show as typed-ksym relocations, resolved or not.
    let kinds: Vec<(usize, RelocKind, u32)> = o
        .relocs(0)
        .unwrap()
        .iter()
        .filter(|r| matches!(r.kind, RelocKind::KsymBtf | RelocKind::Kfunc))
        .map(|r| (r.insn_idx, r.kind, r.flags))
        .collect();
    assert_eq!(
        kinds,
        [
            (0, RelocKind::KsymBtf, RELOC_RESOLVED),
            (8, RelocKind::KsymBtf, RELOC_RESOLVED),
            (16, RelocKind::KsymBtf, 0),
            (20, RelocKind::Kfunc, 0),
            (26, RelocKind::KsymBtf, 0),
            (29, RelocKind::Kfunc, 0),
            (35, RelocKind::KsymBtf, RELOC_RESOLVED),
        ]
    );
    // A strong kfunc missing is still the object's error (libbpf fails
    // bpf_object__prepare for it).
    let mut b = Builder::new();
    b.t("int", KIND_INT, 0, false, 4, &[SIGNED | 32]);
    let k = Arc::new(KernelBtf::from_parts(Btf::parse(b.bytes()).unwrap(), Vec::new()).unwrap());
    let e = open("ksym_exists.bpf.o").resolve_btf(&k).unwrap_err();
    assert!(e.message().contains("bpf_rcu_read_lock"), "{e}");
}

/// A kernel whose `task_like.tgid` is of a typedef that loops (`a` -> `b`
/// -> `a`): core.bpf.o's first CO-RE relocation (the byte offset of
/// `tgid`) goes through it. `resolve_btf` says so as `KSYM_ERR_FORMAT`,
/// naming the program and the relocation (it used to say "a field of void
/// type": the loop was read as void).
#[test]
fn core_through_a_kernel_typedef_loop_is_a_format_error() {
    let mut b = Builder::new();
    let int = b.t("int", KIND_INT, 0, false, 4, &[SIGNED | 32]);
    let uint = b.t("unsigned int", KIND_INT, 0, false, 4, &[32]);
    let a = b.t("a", KIND_TYPEDEF, 0, false, 4, &[]); // 3 -> 4
    b.t("b", KIND_TYPEDEF, 0, false, a, &[]); // 4 -> 3
    let (pid, tgid, flags) = (b.s("pid"), b.s("tgid"), b.s("flags"));
    b.t(
        "task_like",
        KIND_STRUCT,
        3,
        true,
        12,
        &[pid, int, 0, tgid, a, 32, flags, uint, (3 << 24) | 64],
    );
    let k = KernelBtf::from_parts(Btf::parse(b.bytes()).unwrap(), Vec::new()).unwrap();
    let mut o = open("core.bpf.o");
    let e = o.resolve_btf(&Arc::new(k)).unwrap_err();
    assert_eq!(e.code(), FORMAT, "{e}");
    let m = e.message();
    assert!(
        m.contains("program `core_prog`, CO-RE relocation #0 at insn #0: CO-RE: "),
        "{m}"
    );
    assert!(
        m.contains("a loop of typedefs or qualifiers through type"),
        "{m}"
    );
}
