//! The `LINUX_*` `.kconfig` facts, each against an oracle of its own:
//! `LINUX_KERNEL_VERSION` from version files whose values are worked out
//! by hand; `LINUX_HAS_BPF_COOKIE` against the kernel's BTF (the
//! `BPF_FUNC_get_attach_cookie` helper id is in its strings); and
//! `LINUX_HAS_SYSCALL_WRAPPER` against /proc/kallsyms (`__x64_sys_bpf`).

mod common;

use ksym::bpf::{running_kernel_facts, running_kernel_version};
use ksym::internals::btf::{KernelBtf, Options};

const fn kv(a: u64, b: u64, c: u64) -> u64 {
    a << 16 | b << 8 | c
}

/// Each source read from a file, as the library reads /proc/version_signature:
/// Ubuntu's signature first, then Debian's `uname -v`, then the release;
/// malformed files fall through to the next source.
#[test]
fn kernel_version_from_files() {
    let dir = common::TempDir::new();
    let file = |name: &str, text: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::read(&p).unwrap()
    };
    let ubuntu = file("ubuntu", b"Ubuntu 6.8.0-31.31-generic 6.8.1\n");
    let debian = file(
        "debian",
        b"#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)\n",
    );
    let release = b"6.1.0-57-amd64";
    // Ubuntu's third word wins over Debian's and the release.
    assert_eq!(
        running_kernel_version(Some(&ubuntu), release, &debian),
        kv(6, 8, 1)
    );
    // No signature file: Debian's version.
    assert_eq!(
        running_kernel_version(None, release, &debian),
        kv(6, 1, 192)
    );
    // Malformed signatures: too few words, a non-number third word, empty.
    for bad in [
        &b"Ubuntu 6.8.0-31"[..],
        b"Ubuntu 6.8.0-31.31-generic x.y.z",
        b"",
        b"\n\n",
    ] {
        let bad = file("bad", bad);
        assert_eq!(
            running_kernel_version(Some(&bad), release, &debian),
            kv(6, 1, 192)
        );
    }
    // Malformed Debian text ("Debian" not followed by a version): the release.
    let junk = file("junk", b"#1 SMP Debian kernel\n");
    assert_eq!(
        running_kernel_version(None, b"6.18.44-fc", &junk),
        kv(6, 18, 44)
    );
    // Nothing parses: 0, which makes a strong LINUX_KERNEL_VERSION fail.
    assert_eq!(running_kernel_version(None, b"linux", &junk), 0);
    // Sublevel clamped to 255 (KERNEL_VERSION's c is 8 bits).
    let big = file("big", b"Ubuntu 4.15.0-1.2-generic 4.15.300\n");
    assert_eq!(
        running_kernel_version(Some(&big), b"x", b""),
        kv(4, 15, 255)
    );
}

fn running() -> Option<KernelBtf> {
    match KernelBtf::open(&Options {
        filter_functions_path: Some("".into()),
        ..Default::default()
    }) {
        Ok(k) => Some(k),
        Err(e) => {
            common::skip_need(common::Need::Kernel, &format!("no kernel BTF: {e}"));
            None
        }
    }
}

/// LINUX_HAS_BPF_COOKIE is true exactly when the kernel has the
/// bpf_get_attach_cookie helper: its enumerator name is in the kernel's BTF.
#[test]
fn live_has_bpf_cookie_matches_the_kernel_btf() {
    let Some(k) = running() else { return };
    // The probe needs bpf(): a bare `r0 = 0; exit` kprobe program must load.
    if !nop_kprobe_loads() {
        common::skip_need(common::Need::Kernel, "bpf() does not load a kprobe program");
        return;
    }
    let btf = std::fs::read("/sys/kernel/btf/vmlinux").unwrap();
    let oracle = memchr::memmem::find(&btf, b"\0BPF_FUNC_get_attach_cookie\0").is_some();
    assert_eq!(running_kernel_facts(&k).1, oracle);
}

/// LINUX_HAS_SYSCALL_WRAPPER is true exactly when kallsyms has the arch's
/// syscall wrapper for bpf (`__x64_sys_bpf`), given a kprobe PMU to probe with.
#[test]
fn live_has_syscall_wrapper_matches_kallsyms() {
    let Some(k) = running() else { return };
    if !std::path::Path::new("/sys/bus/event_source/devices/kprobe").exists() {
        common::skip_need(
            common::Need::Kprobes,
            "no kprobe PMU: libbpf's probe cannot run",
        );
        return;
    }
    let Some(kallsyms) = common::live_kallsyms() else {
        return;
    };
    let prefix = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        _ => {
            common::skip("the syscall wrapper oracle knows x86_64 and aarch64");
            return;
        }
    };
    let want = format!("__{prefix}_sys_bpf");
    let text = String::from_utf8_lossy(&kallsyms);
    let oracle = text
        .lines()
        .any(|l| l.split_whitespace().nth(2) == Some(&want));
    assert_eq!(running_kernel_facts(&k).2, oracle);
}

/// BPF_PROG_LOAD of `r0 = 0; exit` as a kprobe program (GPL), by hand.
fn nop_kprobe_loads() -> bool {
    let insns: [u8; 16] = [0xb7, 0, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0];
    let license = b"GPL\0";
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&2u32.to_ne_bytes()); // BPF_PROG_TYPE_KPROBE
    attr[4..8].copy_from_slice(&2u32.to_ne_bytes()); // insn_cnt
    attr[8..16].copy_from_slice(&(insns.as_ptr() as u64).to_ne_bytes());
    attr[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
    // SAFETY: attr, insns and license outlive the call; 5 = BPF_PROG_LOAD.
    let fd = unsafe { libc::syscall(libc::SYS_bpf, 5, attr.as_mut_ptr(), attr.len()) };
    if fd >= 0 {
        // SAFETY: fd is ours.
        unsafe { libc::close(fd as i32) };
    }
    fd >= 0
}
