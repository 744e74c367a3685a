//! The `.kconfig` map's value, as libbpf's `bpf_object__resolve_externs`
//! fills it: `CONFIG_*` externs from the kernel's configuration, the
//! `LINUX_*` virtual ones from facts about the running kernel, each
//! written at the offset its layout gave it ([`crate::bpf::object::externs`]).

use crate::bpf::object::externs::{kconfig_size, Extern, Kcfg, KcfgType};
use crate::error::{Error, Result};
use crate::formats::kconfig;

/// What the `LINUX_*` virtual externs are, on the running kernel.
pub trait KernelFacts {
    /// `LINUX_KERNEL_VERSION`: `KERNEL_VERSION(a, b, c)`; 0 if unknown.
    fn kernel_version(&self) -> u64;
    /// `LINUX_HAS_BPF_COOKIE`.
    fn has_bpf_cookie(&self) -> bool;
    /// `LINUX_HAS_SYSCALL_WRAPPER`.
    fn has_syscall_wrapper(&self) -> bool;
}

/// Fills the `.kconfig` map's value, as libbpf's
/// `bpf_object__resolve_externs` does: `CONFIG_*` from the kernel's
/// configuration (`config`, read only when one is needed), `LINUX_*` from
/// `facts`. A strong extern left unset is an error; a weak one is 0.
pub(in crate::bpf) fn kconfig_values(
    externs: &mut [Extern],
    config: impl FnOnce() -> Result<Vec<u8>>,
    facts: &dyn KernelFacts,
) -> Result<Vec<u8>> {
    let mut data = vec![0u8; kconfig_size(externs) as usize];
    let mut need_config = false;
    for x in externs.iter_mut() {
        let Some(k) = x.kcfg else { continue };
        x.resolved = false;
        let name = x.name.to_bytes();
        if name.starts_with(b"CONFIG_") {
            need_config = true;
            continue;
        }
        let value = match name {
            b"LINUX_KERNEL_VERSION" => match facts.kernel_version() {
                0 => return Err(Error::not_found(
                    "extern `LINUX_KERNEL_VERSION` (.kconfig): the kernel's version is not known",
                )),
                v => v,
            },
            b"LINUX_HAS_BPF_COOKIE" => facts.has_bpf_cookie() as u64,
            b"LINUX_HAS_SYSCALL_WRAPPER" => facts.has_syscall_wrapper() as u64,
            _ if name.starts_with(b"LINUX_") && x.weak => 0,
            _ => {
                return Err(Error::unsupported(format!(
                    "extern `{}` (.kconfig): not a CONFIG_ option nor a LINUX_ value libksym \
                     knows (LINUX_KERNEL_VERSION, LINUX_HAS_BPF_COOKIE, LINUX_HAS_SYSCALL_WRAPPER)",
                    x.shown()
                )))
            }
        };
        set_num(x, k, &mut data, value)?;
    }
    if need_config {
        let text = config()?;
        for e in kconfig::entries(&text) {
            let e = e?;
            let Some(x) = externs
                .iter_mut()
                .find(|x| x.kcfg.is_some() && x.name.to_bytes() == e.name)
            else {
                continue;
            };
            if x.resolved {
                continue; // the first setting wins, as in libbpf
            }
            let k = x.kcfg.expect("kconfig");
            set_value(x, k, &mut data, e.value)
                .map_err(|err| err.context(format!("kernel config line {}", e.line)))?;
        }
    }
    if let Some(x) = externs
        .iter()
        .find(|x| x.kcfg.is_some() && !x.resolved && !x.weak)
    {
        return Err(Error::not_found(format!(
            "extern `{}` (.kconfig, strong): not set in the kernel's config; declare it __weak \
             if it may be absent",
            x.shown()
        )));
    }
    Ok(data)
}

/// One `CONFIG_X=value` for extern `x` (libbpf's
/// `bpf_object__process_kconfig_line`).
fn set_value(x: &mut Extern, k: Kcfg, data: &mut [u8], value: &[u8]) -> Result<()> {
    let at = k.off as usize;
    let bad = |why: String| Error::invalid(format!("extern `{}` (.kconfig): {why}", x.shown()));
    match value[0] {
        c @ (b'y' | b'n' | b'm') => {
            match (k.ty, c) {
                (KcfgType::Bool, b'm') => {
                    return Err(bad("value `m` needs a tristate or char type".into()))
                }
                (KcfgType::Bool, _) => data[at] = (c == b'y') as u8,
                (KcfgType::Char, _) => data[at] = c,
                // enum libbpf_tristate, 4 bytes as libbpf writes it.
                (KcfgType::Tristate, _) => {
                    let v: u32 = match c {
                        b'y' => 1,
                        b'm' => 2,
                        _ => 0,
                    };
                    data[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
                _ => {
                    return Err(bad(format!(
                        "value `{}` needs a bool, tristate or char type",
                        c as char
                    )))
                }
            }
            x.resolved = true;
        }
        b'"' => {
            if k.ty != KcfgType::CharArr {
                return Err(bad(format!(
                    "value `{}` needs a char array",
                    String::from_utf8_lossy(value)
                )));
            }
            if value.len() < 2 || value[value.len() - 1] != b'"' {
                return Err(bad(format!(
                    "invalid string `{}`",
                    String::from_utf8_lossy(value)
                )));
            }
            // Truncated to the array, NUL-terminated, as libbpf.
            let s = &value[1..value.len() - 1];
            let n = s.len().min(k.size as usize - 1);
            data[at..at + n].copy_from_slice(&s[..n]);
            data[at + n] = 0;
            x.resolved = true;
        }
        _ => {
            let v = parse_u64(value).ok_or_else(|| {
                bad(format!(
                    "value `{}` is not a valid integer",
                    String::from_utf8_lossy(value)
                ))
            })?;
            if k.ty != KcfgType::Int && k.ty != KcfgType::Char {
                return Err(bad(format!(
                    "value `{}` needs an integer type",
                    String::from_utf8_lossy(value)
                )));
            }
            set_num(x, k, data, v)?;
        }
    }
    Ok(())
}

/// libbpf's `set_kcfg_value_num`: the value must fit the extern's size
/// (signed or not).
fn set_num(x: &mut Extern, k: Kcfg, data: &mut [u8], v: u64) -> Result<()> {
    let bad = |why: String| Error::invalid(format!("extern `{}` (.kconfig): {why}", x.shown()));
    if !matches!(k.ty, KcfgType::Int | KcfgType::Char | KcfgType::Bool) {
        return Err(bad(format!(
            "value {v} needs an integer, char or bool type"
        )));
    }
    if k.ty == KcfgType::Bool && v > 1 {
        return Err(bad(format!("value {v} is not a boolean")));
    }
    let bits = k.size * 8;
    let fits = bits >= 64
        || if k.signed {
            v.wrapping_add(1 << (bits - 1)) < (1 << bits)
        } else {
            v >> bits == 0
        };
    if !fits {
        return Err(bad(format!("value {v} does not fit in {} bytes", k.size)));
    }
    if !matches!(k.size, 1 | 2 | 4 | 8) {
        return Err(bad(format!("size {} is not 1, 2, 4 or 8", k.size)));
    }
    let at = k.off as usize;
    data[at..at + k.size as usize].copy_from_slice(&v.to_le_bytes()[..k.size as usize]);
    x.resolved = true;
    Ok(())
}

/// `strtoull(s, &end, 0)` with the whole string used: decimal, `0x` hex,
/// `0` octal; a leading `-` negates, as strtoull does.
fn parse_u64(s: &[u8]) -> Option<u64> {
    let (neg, s) = match s.strip_prefix(b"-") {
        Some(r) => (true, r),
        None => (false, s.strip_prefix(b"+").unwrap_or(s)),
    };
    let s = std::str::from_utf8(s).ok()?;
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()?
    } else {
        s.parse().ok()?
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// `LINUX_KERNEL_VERSION` as libbpf's `get_kernel_version` gives it: the
/// version the kernel checks, which distro releases do not always show.
/// Ubuntu's is the third word of /proc/version_signature (`signature`:
/// "Ubuntu 5.4.0-12.15-generic 5.4.8"); Debian's follows "Debian " in
/// `uname -v` ("#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)"
/// while `uname -r` says 6.1.0-57-amd64); otherwise `uname -r`'s first
/// three numbers. 0 if none parses.
pub fn running_kernel_version(signature: Option<&[u8]>, release: &[u8], version: &[u8]) -> u64 {
    if let Some(sig) = signature {
        let third = sig
            .split(|c| c.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .nth(2);
        if let Some(v) = third.map(kernel_version_of).filter(|&v| v != 0) {
            return v;
        }
    }
    if let Some(at) = memchr::memmem::find(version, b"Debian ") {
        let v = kernel_version_of(&version[at + 7..]);
        if v != 0 {
            return v;
        }
    }
    kernel_version_of(release)
}

/// `KERNEL_VERSION(a, b, c)` of a release such as `6.18.44-fc-v657`
/// (libbpf clamps the third number to 255); 0 when it does not parse.
pub fn kernel_version_of(release: &[u8]) -> u64 {
    let mut nums = [0u64; 3];
    let mut rest = release;
    for (i, n) in nums.iter_mut().enumerate() {
        let len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 || len > 9 {
            return 0;
        }
        *n = std::str::from_utf8(&rest[..len])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        rest = &rest[len..];
        if i < 2 {
            match rest.strip_prefix(b".") {
                Some(r) => rest = r,
                None => return 0,
            }
        }
    }
    (nums[0] << 16) + (nums[1] << 8) + nums[2].min(255)
}
