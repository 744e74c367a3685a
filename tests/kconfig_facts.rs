//! The `LINUX_*` `.kconfig` facts, each against an oracle of its own:
//! `LINUX_KERNEL_VERSION` read from version files whose values are worked
//! out by hand, and the running kernel's against the vDSO's
//! LINUX_VERSION_CODE note; `LINUX_HAS_BPF_COOKIE` against the kernel's BTF (the
//! `BPF_FUNC_get_attach_cookie` helper id is in its strings); and
//! `LINUX_HAS_SYSCALL_WRAPPER` against /proc/kallsyms (`__x64_sys_bpf`).

mod common;

use std::path::Path;

use ksym::bpf::{kernel_version_in, running_kernel_facts};
use ksym::internals::btf::{KernelBtf, Options};

const fn kv(a: u64, b: u64, c: u64) -> u64 {
    a << 16 | b << 8 | c
}

/// The library's reader of the version files (`kernel_version_in`, which
/// the running kernel's reader calls with /proc/version_signature and
/// /proc/sys/kernel/{osrelease,version}) on real files: Ubuntu's signature
/// first, then Debian's `uname -v`, then the release; a missing or
/// malformed file falls through to the next source. Values by hand:
/// KERNEL_VERSION(a, b, c) = a << 16 | b << 8 | min(c, 255).
#[test]
fn kernel_version_from_files() {
    let dir = common::TempDir::new();
    let file = |name: &str, text: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let none = dir.path().join("absent");
    // Ubuntu 24.04: uname -r says 6.8.0, the kernel is 6.8.1.
    let ubuntu = file("version_signature", b"Ubuntu 6.8.0-31.31-generic 6.8.1\n");
    let ubuntu_r = file("ubuntu_osrelease", b"6.8.0-31-generic\n");
    let ubuntu_v = file(
        "ubuntu_version",
        b"#31-Ubuntu SMP PREEMPT_DYNAMIC Sat Apr 20 00:40:06 UTC 2024\n",
    );
    assert_eq!(
        kernel_version_in(&ubuntu, &ubuntu_r, &ubuntu_v),
        kv(6, 8, 1)
    );
    // Debian 12: no signature; uname -r says 6.1.0, uname -v 6.1.192.
    let debian_r = file("debian_osrelease", b"6.1.0-57-amd64\n");
    let debian_v = file(
        "debian_version",
        b"#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)\n",
    );
    assert_eq!(
        kernel_version_in(&none, &debian_r, &debian_v),
        kv(6, 1, 192)
    );
    // The signature wins over Debian's text.
    assert_eq!(
        kernel_version_in(&ubuntu, &debian_r, &debian_v),
        kv(6, 8, 1)
    );
    // Malformed signatures: too few words, a non-number third word, empty.
    for bad in [
        &b"Ubuntu 6.8.0-31"[..],
        b"Ubuntu 6.8.0-31.31-generic x.y.z",
        b"",
        b"\n\n",
    ] {
        let bad = file("bad_signature", bad);
        assert_eq!(
            kernel_version_in(&bad, &debian_r, &debian_v),
            kv(6, 1, 192),
            "{:?}",
            std::fs::read(&bad).unwrap()
        );
    }
    // Neither: the release (this development VM's).
    let plain_r = file("plain_osrelease", b"6.18.44-fc-v1147\n");
    let plain_v = file("plain_version", b"#1 SMP PREEMPT_DYNAMIC @0\n");
    assert_eq!(kernel_version_in(&none, &plain_r, &plain_v), kv(6, 18, 44));
    // Malformed Debian text ("Debian" not followed by a version): the release.
    let junk = file("junk_version", b"#1 SMP Debian kernel\n");
    assert_eq!(kernel_version_in(&none, &plain_r, &junk), kv(6, 18, 44));
    // Nothing parses: 0, which makes a strong LINUX_KERNEL_VERSION fail.
    let linux = file("linux_osrelease", b"linux\n");
    assert_eq!(kernel_version_in(&none, &linux, &junk), 0);
    // Sublevel clamped to 255 (KERNEL_VERSION's c is 8 bits).
    let big = file("big_signature", b"Ubuntu 4.15.0-1.2-generic 4.15.300\n");
    assert_eq!(kernel_version_in(&big, &linux, &junk), kv(4, 15, 255));
    // Release or version unreadable: uname() instead, which says what
    // procfs says.
    let procfs = (
        Path::new("/proc/sys/kernel/osrelease"),
        Path::new("/proc/sys/kernel/version"),
    );
    assert_eq!(
        kernel_version_in(&none, &none, &none),
        kernel_version_in(&none, procfs.0, procfs.1)
    );
}

/// The library's uname() (`uname -r`, `uname -v`) is what the kernel shows
/// in /proc/sys/kernel/osrelease and version.
#[test]
fn uname_is_procfs_release_and_version() {
    let (release, version) = ksym::internals::base::kernel_release_version();
    let line = |p: &str| {
        let t = std::fs::read(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        t.strip_suffix(b"\n").unwrap_or(&t).to_vec()
    };
    assert!(!release.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&release),
        String::from_utf8_lossy(&line("/proc/sys/kernel/osrelease"))
    );
    assert_eq!(
        String::from_utf8_lossy(&version),
        String::from_utf8_lossy(&line("/proc/sys/kernel/version"))
    );
}

/// The running kernel's LINUX_VERSION_CODE, from the kernel itself: the
/// "Linux" ELF note (type 0) of the vDSO it maps into every process (as
/// c-tests/test_tool_sections.c reads it). `None` without a vDSO or note.
fn vdso_version_code() -> Option<u64> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let range = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let (lo, hi) = range.split_whitespace().next()?.split_once('-')?;
    let (lo, hi) = (
        usize::from_str_radix(lo, 16).ok()?,
        usize::from_str_radix(hi, 16).ok()?,
    );
    // SAFETY: the kernel maps the vDSO readable for the process's life,
    // [lo, hi) as /proc/self/maps says.
    let elf = unsafe { std::slice::from_raw_parts(lo as *const u8, hi - lo) };
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let (phoff, phentsize, phnum) = (u64_at(0x20)? as usize, u16_at(0x36)?, u16_at(0x38)?);
    for i in 0..phnum as usize {
        let ph = phoff + i * phentsize as usize;
        if u32_at(ph)? != 4 {
            continue; // not PT_NOTE
        }
        let (mut n, end) = (
            u64_at(ph + 8)? as usize,
            (u64_at(ph + 8)? + u64_at(ph + 32)?) as usize,
        );
        while n + 12 <= end {
            let (namesz, descsz, ty) =
                (u32_at(n)? as usize, u32_at(n + 4)? as usize, u32_at(n + 8)?);
            let name = n + 12;
            let desc = name + namesz.next_multiple_of(4);
            if ty == 0 && elf.get(name..name + namesz)? == b"Linux\0" && descsz >= 4 {
                return Some(u32_at(desc)?.into());
            }
            n = desc + descsz.next_multiple_of(4);
        }
    }
    None
}

/// LINUX_KERNEL_VERSION of the running kernel is the kernel's own
/// LINUX_VERSION_CODE (the vDSO's note); without a vDSO, and where no
/// Ubuntu signature exists, uname parsed here as libbpf 1.7's
/// get_kernel_version does: Debian's `uname -v` version, else `uname -r`.
#[test]
fn live_kernel_version_is_the_vdso_note() {
    let Some(k) = running() else { return };
    let got = running_kernel_facts(&k).0;
    let want = match vdso_version_code() {
        Some(v) => v,
        None if Path::new("/proc/version_signature").exists() => {
            common::skip("no vDSO note, and Ubuntu's signature has no second oracle here");
            return;
        }
        None => {
            let text = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
            let three = |s: &str| -> Option<u64> {
                let mut it = s.splitn(3, '.');
                let a = it.next()?.parse::<u64>().ok()?;
                let b = it.next()?.parse::<u64>().ok()?;
                let c: String = it
                    .next()?
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                Some(kv(a, b, c.parse::<u64>().ok()?.min(255)))
            };
            let version = text("/proc/sys/kernel/version");
            version
                .split_once("Debian ")
                .and_then(|(_, v)| three(v))
                .or_else(|| three(text("/proc/sys/kernel/osrelease").trim()))
                .unwrap_or(0)
        }
    };
    assert_ne!(want, 0);
    assert_eq!(
        got, want,
        "LINUX_KERNEL_VERSION {got:#x}, the kernel's {want:#x}"
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
    // The helper came with Linux 5.15, as bpf_get_func_ip in fentry did:
    // on the suite's 5.10 guest the answer is false, so a fact hard-coded
    // true fails there.
    if common::kernel_has(common::Need::FuncIp) == Some(false) {
        assert!(!oracle, "bpf_get_attach_cookie in a kernel before 5.15");
    }
    assert_eq!(running_kernel_facts(&k).1, oracle);
}

/// LINUX_HAS_SYSCALL_WRAPPER is true exactly when kallsyms has the arch's
/// syscall wrapper for bpf (`__x64_sys_bpf`), given a kprobe PMU to probe with.
#[test]
fn live_has_syscall_wrapper_matches_kallsyms() {
    let Some(k) = running() else { return };
    // libbpf's probe opens a kprobe on the wrapper: without a kprobe PMU
    // (this development machine) it fails, and the fact is false, as the
    // kernel table's kprobes column says.
    if !std::path::Path::new("/sys/bus/event_source/devices/kprobe").exists() {
        assert!(
            !running_kernel_facts(&k).2,
            "LINUX_HAS_SYSCALL_WRAPPER is true on a kernel without a kprobe PMU"
        );
        common::skip_need(
            common::Need::Kprobes,
            "no kprobe PMU: libbpf's probe fails, and LINUX_HAS_SYSCALL_WRAPPER is false",
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
