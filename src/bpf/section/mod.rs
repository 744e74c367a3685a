//! Program types from ELF section names, as libbpf names them
//! (`section_defs` in libbpf.c): `SEC("fentry/vfs_read")` is a TRACING
//! program with expected attach type BPF_TRACE_FENTRY attached to the
//! kernel function `vfs_read`.
//!
//! Matching is libbpf's: a definition ending in `+` matches the name
//! itself or the name followed by `/` and a target; one ending in `/`
//! matches any name it starts; any other matches exactly. The first
//! matching definition wins. After the `/`, a kernel target is
//! `function`, libbpf's `module:function`, or the DTrace spelling
//! `module`function`.

mod defs;
pub(crate) mod kinds;

pub use crate::bpf::section::defs::{
    attach, prog, SectionDef, MULTI, OPTIONAL, RETPROBE, SECTION_DEFS, SLEEPABLE, TARGET_AT_LOAD,
    XDP_FRAGS,
};
use crate::btf::targets::TargetKind;

/// Does `def` match section `sec` (libbpf's `sec_def_matches`)?
fn matches(def: &str, sec: &[u8]) -> bool {
    let d = def.as_bytes();
    if let Some(p) = d.strip_suffix(b"/") {
        return sec.starts_with(p) && sec.get(p.len()) == Some(&b'/');
    }
    if let Some(p) = d.strip_suffix(b"+") {
        return sec.starts_with(p) && (sec.len() == p.len() || sec[p.len()] == b'/');
    }
    sec == d
}

/// The definition of section `sec` and what follows its `/` (the target
/// text of `+` definitions; `None` when there is none).
pub fn lookup(sec: &[u8]) -> Option<(&'static SectionDef, Option<&[u8]>)> {
    // `?sec` is `sec` with autoload off (libbpf forgets the `?`).
    let sec = sec.strip_prefix(b"?").unwrap_or(sec);
    let def = SECTION_DEFS.iter().find(|d| matches(d.sec, sec))?;
    let extra = def
        .sec
        .strip_suffix('+')
        .and_then(|p| sec.get(p.len() + 1..))
        .filter(|e| !e.is_empty());
    Some((def, extra))
}

/// The offset a kprobe section's text gives after its `+`
/// (`kprobe/func+0x10`), read as libbpf's `attach_kprobe` reads it
/// (`sscanf("%m[a-zA-Z0-9_.]+%li")`: decimal, `0x` hex or `0` octal, an
/// optional sign); 0 when there is none or it does not read.
pub fn kprobe_offset(text: &[u8]) -> u64 {
    let func = text
        .iter()
        .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        .count();
    let Some(rest) = text[func..].strip_prefix(b"+") else {
        return 0;
    };
    let rest = rest.trim_ascii_start();
    let (neg, digits) = match rest.first() {
        Some(b'-') => (true, &rest[1..]),
        Some(b'+') => (false, &rest[1..]),
        _ => (false, rest),
    };
    let (radix, digits) = if digits.len() > 2
        && (digits.starts_with(b"0x") || digits.starts_with(b"0X"))
        && digits[2].is_ascii_hexdigit()
    {
        (16, &digits[2..])
    } else if digits.first() == Some(&b'0') {
        (8, digits)
    } else {
        (10, digits)
    };
    let mut v: u64 = 0;
    let mut any = false;
    for &c in digits {
        let Some(d) = (c as char).to_digit(radix) else {
            break;
        };
        v = v.wrapping_mul(radix as u64).wrapping_add(d as u64);
        any = true;
    }
    match (any, neg) {
        (false, _) => 0,
        (true, true) => v.wrapping_neg(),
        (true, false) => v,
    }
}

/// The kernel target a section's text names, as a query: `func`,
/// `module:func` (libbpf) or `module`func`. A kprobe's `+offset` is
/// dropped. `None` for an empty one.
pub fn target_query(kind: TargetKind, text: &[u8]) -> Vec<u8> {
    let mut t = text;
    if kind == TargetKind::Kprobe {
        if let Some(p) = memchr::memchr(b'+', t) {
            t = &t[..p];
        }
    }
    if memchr::memchr(b'`', t).is_none() {
        if let Some(p) = memchr::memchr(b':', t) {
            return [&t[..p], b"`", &t[p + 1..]].concat();
        }
    }
    t.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use attach as at;

    fn of(s: &str) -> (u32, u32, u32, Option<&[u8]>) {
        let (d, e) = lookup(s.as_bytes()).unwrap_or_else(|| panic!("{s}"));
        (d.prog_type, d.expected_attach_type, d.load_flags(), e)
    }

    /// libbpf attaches as a return probe exactly the sections whose name
    /// says so (`kretprobe`, `uretprobe`, `kretsyscall`, their `.multi`
    /// and `.s` forms: attach_kprobe's `str_has_pfx(sec, "kretprobe/")` and
    /// the like); no other section.
    /// The offset of `kprobe/func+OFF` is what libbpf's attach_kprobe
    /// reads: glibc's sscanf with its format, on texts worked out to
    /// cover every form (hex, octal, decimal, signs, blanks, no digits).
    #[test]
    fn kprobe_offsets_as_libbpf_reads_them() {
        let texts = [
            "do_nanosleep+0x4",
            "f+16",
            "f+010",
            "f+0x",
            "f+0X1f",
            "f",
            "f+",
            "f+abc",
            "f+-4",
            "f+ 4",
            "f + 4",
            "f.isra.0+0x20",
            "mod:f+0x8",
            "f+0x10zz",
            "f+99999999999",
            "f+0777",
            "f+08",
            "f++4",
            "f+-0x10",
            "f+	12",
        ];
        let fmt = c"%255[a-zA-Z0-9_.]+%li";
        for t in texts {
            let c = std::ffi::CString::new(t).unwrap();
            let mut name = [0u8; 256];
            let mut off: libc::c_long = 0;
            // SAFETY: a C string, a format whose conversions get a
            // 256-byte buffer and a long.
            let n = unsafe { libc::sscanf(c.as_ptr(), fmt.as_ptr(), name.as_mut_ptr(), &mut off) };
            let want = if n == 2 { off as u64 } else { 0 };
            assert_eq!(kprobe_offset(t.as_bytes()), want, "{t:?}");
        }
        assert_eq!(kprobe_offset(b"do_nanosleep+0x4"), 4);
        assert_eq!(kprobe_offset(b"f+010"), 8);
    }

    #[test]
    fn retprobes_by_name() {
        for d in SECTION_DEFS {
            let ret = ["kretprobe", "uretprobe", "kretsyscall"]
                .iter()
                .any(|p| d.sec.starts_with(p));
            assert_eq!(d.attach_flags() == RETPROBE, ret, "{}", d.sec);
        }
        let (d, _) = lookup(b"kretprobe/dummy:dummy_get_stats64").unwrap();
        assert_eq!(d.attach_flags(), RETPROBE);
        let (d, _) = lookup(b"kprobe/do_nanosleep").unwrap();
        assert_eq!(d.attach_flags(), 0);
    }

    #[test]
    fn libbpf_names() {
        assert_eq!(of("socket"), (prog::SOCKET_FILTER, 0, 0, None));
        assert!(
            lookup(b"socket/second").is_none(),
            "socket takes no target in libbpf"
        );
        assert_eq!(
            of("fentry/vfs_read"),
            (prog::TRACING, at::TRACE_FENTRY, 0, Some(&b"vfs_read"[..]))
        );
        assert_eq!(of("fentry.s/vfs_read").2, SLEEPABLE);
        assert_eq!(
            of("fexit/ext4:ext4_file_open").3,
            Some(&b"ext4:ext4_file_open"[..])
        );
        assert_eq!(of("tp_btf/sched_switch").1, at::TRACE_RAW_TP);
        assert_eq!(
            of("lsm.s/file_open"),
            (prog::LSM, at::LSM_MAC, SLEEPABLE, Some(&b"file_open"[..]))
        );
        assert_eq!(of("kprobe/do_unlinkat").0, prog::KPROBE);
        assert_eq!(of("kprobe").3, None);
        assert_eq!(of("xdp"), (prog::XDP, at::XDP, 0, None));
        assert_eq!(of("xdp.frags").2, XDP_FRAGS);
        assert_eq!(of("xdp/devmap").1, at::XDP_DEVMAP);
        assert_eq!(of("tc"), (prog::SCHED_CLS, 0, 0, None));
        assert_eq!(of("tcx/ingress").1, at::TCX_INGRESS);
        assert_eq!(of("cgroup_skb/egress").1, at::CGROUP_INET_EGRESS);
        assert_eq!(of("cgroup/sock").1, at::CGROUP_INET_SOCK_CREATE);
        assert_eq!(of("iter/task").1, at::TRACE_ITER);
        assert_eq!(of("raw_tp/sys_enter").0, prog::RAW_TRACEPOINT);
        assert_eq!(of("raw_tp.w/sys_enter").0, prog::RAW_TRACEPOINT_WRITABLE);
        assert_eq!(of("struct_ops/dctcp_init").0, prog::STRUCT_OPS);
        // Linux 7.3's multi links, as libbpf's source at f7081a6baf3f
        // defines them: no target at load, sleepable `.s` forms; and
        // `fsession`, which needs its target.
        assert_eq!(
            of("fentry.multi/vfs_*"),
            (
                prog::TRACING,
                at::TRACE_FENTRY_MULTI,
                0,
                Some(&b"vfs_*"[..])
            )
        );
        assert_eq!(of("fexit.multi").1, at::TRACE_FEXIT_MULTI);
        assert_eq!(of("fsession.multi/x*").1, at::TRACE_FSESSION_MULTI);
        assert_eq!(of("fentry.multi.s/f").2, SLEEPABLE);
        assert_eq!(of("fexit.multi.s/f").2, SLEEPABLE);
        assert_eq!(of("fsession.multi.s/f").2, SLEEPABLE);
        assert_eq!(of("fsession/vfs_read").1, at::TRACE_FSESSION);
        for sec in ["fentry.multi", "fexit.multi/m:g*", "fsession.multi.s/x"] {
            let (d, _) = lookup(sec.as_bytes()).unwrap();
            assert!(
                d.is_multi() && !d.attaches_by_btf() && d.target.is_none(),
                "{sec}"
            );
        }
        let (d, _) = lookup(b"fentry/vfs_read").unwrap();
        assert!(!d.is_multi());
        assert!(lookup(b"fentry.multix/f").is_none());
        // `+` needs the exact name or a `/`.
        assert!(lookup(b"fentryx/vfs_read").is_none());
        assert!(lookup(b"kprobe.multiply").is_none());
        assert!(lookup(b"").is_none());
        // An unknown prefix.
        assert!(lookup(b"mysection/thing").is_none());
    }

    #[test]
    fn targets() {
        assert_eq!(
            target_query(TargetKind::Function, b"ext4:ext4_file_open"),
            b"ext4`ext4_file_open"
        );
        assert_eq!(
            target_query(TargetKind::Function, b"ext4`ext4_file_open"),
            b"ext4`ext4_file_open"
        );
        assert_eq!(
            target_query(TargetKind::Kprobe, b"do_sys_open+0x10"),
            b"do_sys_open"
        );
        assert_eq!(
            target_query(TargetKind::Tracepoint, b"sched_switch"),
            b"sched_switch"
        );
    }
}
