//! fentry/fexit expansion leaves out the functions the kernel's BPF
//! trampoline refuses, by the rules of the kernel release it follows: on
//! the bundled 6.1 kernel's BTF, named functions whose prototypes were
//! read by hand from bpftool's dump, and the whole `vmlinux`*` expansion
//! against the rule applied to bpftool's dump by this test's own reader.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use common::Kernel61;
use ksym::internals::btf::targets::TargetKind;
use ksym::internals::btf::KernelBtf;

fn names(btf: &KernelBtf, kind: TargetKind, pattern: &str) -> BTreeSet<String> {
    btf.expand(kind, pattern.as_bytes())
        .unwrap()
        .iter()
        .map(|t| btf.text(&t.name).to_string_lossy().into_owned())
        .collect()
}

fn expands(btf: &KernelBtf, name: &str) -> bool {
    names(btf, TargetKind::Function, name).contains(name)
}

/// Prototypes as bpftool prints them (kernel/bpf/btf.c's reading of them
/// is in each comment), on Linux 6.1 (x86-64: 6 argument registers).
#[test]
fn named_functions_follow_the_6_1_rules() {
    let k = Kernel61::new();
    let btf = k.open().with_kernel_release(b"6.1.0-13-amd64");
    let before = btf.stats().trampoline_refused;
    // 10 arguments: more than the 6 registers of 6.1's trampoline
    // (ENOTSUPP at attach, seen in the guest).
    assert!(!expands(&btf, "aa_audit_file"));
    // 5 arguments, two of them sockptr_t (16 bytes): 7 registers.
    assert!(!expands(&btf, "do_tcp_getsockopt"));
    // 5 arguments, one sockptr_t: 6 registers, the limit.
    assert!(expands(&btf, "sk_setsockopt"));
    // 6 unsigned ints: exactly 6.
    assert!(expands(&btf, "mktime64"));
    // 13 arguments: more than MAX_BPF_FUNC_ARGS (12).
    assert!(!expands(&btf, "bpf_trace_run12"));
    // int _printk(const char *, ...): variadic.
    assert!(!expands(&btf, "_printk"));
    // struct timespec64 ns_to_timespec64(s64): a struct returned.
    assert!(!expands(&btf, "ns_to_timespec64"));
    // kill_pid_usb_asyncio(int, int, sigval_t, ...): a union by value.
    assert!(!expands(&btf, "kill_pid_usb_asyncio"));
    // Six left out, counted once each.
    assert_eq!(btf.stats().trampoline_refused - before, 6);
    // kprobes take all of them.
    for f in ["aa_audit_file", "do_tcp_getsockopt", "_printk"] {
        assert!(names(&btf, TargetKind::Kprobe, f).contains(f), "{f}");
    }
}

#[test]
fn later_kernels_take_more() {
    let k = Kernel61::new();
    // 6.6: 12 registers (the rest on the stack).
    let btf = k.open().with_kernel_release(b"6.6.0");
    assert!(expands(&btf, "aa_audit_file"));
    assert!(expands(&btf, "do_tcp_getsockopt"));
    assert!(!expands(&btf, "bpf_trace_run12"));
    assert!(!expands(&btf, "kill_pid_usb_asyncio"));
    // 6.18: unions by value too.
    let btf = k.open().with_kernel_release(b"6.18.44");
    assert!(expands(&btf, "kill_pid_usb_asyncio"));
    assert!(!expands(&btf, "ns_to_timespec64"));
    // 6.0: no struct by value at all.
    let btf = k.open().with_kernel_release(b"6.0.0");
    assert!(!expands(&btf, "sk_setsockopt"));
    // A release that is no version: nothing left out.
    let btf = k.open().with_kernel_release(b"unknown");
    assert!(expands(&btf, "aa_audit_file") && expands(&btf, "_printk"));
    assert_eq!(btf.stats().trampoline_refused, 0);
}

/// bpftool's dump, read here: FUNC name -> FUNC_PROTO id, and every type
/// as (kind, size or type, params).
struct Dump {
    funcs: HashMap<String, u32>,
    types: HashMap<u32, (String, u64, u32, Vec<u32>)>,
}

fn dump(file: &std::path::Path) -> Dump {
    let out = Command::new("bpftool")
        .args(["btf", "dump", "file"])
        .arg(file)
        .output()
        .expect("bpftool is needed by this test (apt-get install bpftool)");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut d = Dump {
        funcs: HashMap::new(),
        types: HashMap::new(),
    };
    let mut last = 0;
    let field = |rest: &str, key: &str| -> u64 {
        rest.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .map_or(0, |v| v.trim_end_matches(',').parse().unwrap())
    };
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("\t'") {
            // 	'name' type_id=N (a FUNC_PROTO's parameter)
            let id = field(p, "type_id=") as u32;
            d.types.get_mut(&last).unwrap().3.push(id);
            continue;
        }
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let (id, rest) = rest.split_once("] ").unwrap();
        let id: u32 = id.parse().unwrap();
        let (kind, rest) = rest.split_once(' ').unwrap();
        let name = rest.split('\'').nth(1).unwrap_or("").to_string();
        let size = field(rest, "size=");
        let to = field(rest, "type_id=").max(field(rest, "ret_type_id=")) as u32;
        if kind == "FUNC" {
            d.funcs.entry(name).or_insert(to); // the lowest id, as expand
        }
        d.types.insert(id, (kind.to_string(), size, to, Vec::new()));
        last = id;
    }
    d
}

/// The 6.1 rule on bpftool's view: (kind, size) through typedefs and
/// qualifiers; refused when more than 12 arguments, a return other than
/// void/int/enum/pointer, a variadic, union, float or >16-byte argument,
/// or more than 6 registers of 8 bytes.
fn refused_61(d: &Dump, proto: u32) -> bool {
    let value = |mut id: u32| -> (String, u64) {
        loop {
            if id == 0 {
                return ("VOID".into(), 0);
            }
            let (k, size, to, _) = &d.types[&id];
            match k.as_str() {
                "TYPEDEF" | "CONST" | "VOLATILE" | "RESTRICT" | "TYPE_TAG" => id = *to,
                "PTR" => return ("INT".into(), 8),
                "ENUM" | "ENUM64" => return ("INT".into(), *size),
                _ => return (k.clone(), *size),
            }
        }
    };
    let (_, _, ret, args) = &d.types[&proto];
    if args.len() > 12 || !matches!(value(*ret).0.as_str(), "VOID" | "INT") {
        return true;
    }
    let mut regs = 0;
    for &a in args {
        let (k, size) = value(a);
        if !matches!(k.as_str(), "INT" | "STRUCT") || size == 0 || size > 16 {
            return true;
        }
        regs += size.div_ceil(8);
    }
    regs > 6
}

#[test]
fn whole_expansion_against_bpftool() {
    let k = Kernel61::new();
    let all = names(
        &k.open().with_kernel_release(b"none"),
        TargetKind::Function,
        "vmlinux`*",
    );
    let btf = k.open().with_kernel_release(b"6.1.0");
    let kept = names(&btf, TargetKind::Function, "vmlinux`*");
    let d = dump(&k.vmlinux());
    let want: BTreeSet<String> = all
        .iter()
        .filter(|f| !refused_61(&d, d.funcs[*f]))
        .cloned()
        .collect();
    let dropped: Vec<&String> = all.difference(&kept).collect();
    assert_eq!(kept, want, "left out: {dropped:?}");
    assert_eq!(btf.stats().trampoline_refused, all.len() - kept.len());
    // The 6.1 kernel's own figure, from this dump: hundreds, not a few.
    assert!(dropped.len() > 300, "{}", dropped.len());
}

/// bpf(2) with a zeroed 128-byte attr filled by `fill`: the fd, or errno.
fn bpf(cmd: i32, fill: impl FnOnce(&mut [u8; 128])) -> Result<i32, i32> {
    let mut attr = [0u8; 128];
    fill(&mut attr);
    // SAFETY: attr is 128 writable bytes, the size passed.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len()) };
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(r as i32)
    }
}

fn put32(a: &mut [u8], at: usize, v: u32) {
    a[at..at + 4].copy_from_slice(&v.to_ne_bytes());
}

/// Where the kernel stops an fentry program `r0 = 0; exit` at BTF FUNC
/// `btf_id` (`obj_fd`: its module's BTF, 0 for vmlinux): `Ok` when it
/// loads and attaches, else the step and errno.
fn fentry_attaches(btf_id: u32, obj_fd: i32) -> Result<(), (&'static str, i32)> {
    const PROG_LOAD: i32 = 5;
    const RAW_TRACEPOINT_OPEN: i32 = 17;
    const TRACING: u32 = 26;
    const FENTRY: u32 = 24;
    let insns: [u64; 2] = [0xb7, 0x95]; // mov64 r0, 0; exit
    let license = b"GPL\0";
    let prog = bpf(PROG_LOAD, |a| {
        put32(a, 0, TRACING);
        put32(a, 4, 2);
        a[8..16].copy_from_slice(&(insns.as_ptr() as u64).to_ne_bytes());
        a[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
        put32(a, 68, FENTRY); // expected_attach_type
        put32(a, 108, btf_id); // attach_btf_id
        put32(a, 112, obj_fd as u32); // attach_btf_obj_fd
    })
    .map_err(|e| ("load", e))?;
    // BPF_RAW_TRACEPOINT_OPEN with no name attaches a tracing program on
    // every kernel with fentry (5.10's BPF_LINK_CREATE refuses them:
    // EINVAL), as libbpf attaches one without a cookie.
    let link = bpf(RAW_TRACEPOINT_OPEN, |a| {
        put32(a, 8, prog as u32);
    });
    // SAFETY: fds this function opened.
    unsafe { libc::close(prog) };
    let link = link.map_err(|e| ("attach", e))?;
    // SAFETY: as above.
    unsafe { libc::close(link) };
    Ok(())
}

/// In the guest: every function expand leaves out for the trampoline is
/// one the running kernel refuses (EINVAL at load, or ENOTSUPP, 524, at
/// attach), and a sample of the kept ones at the boundary (exactly 6
/// arguments, or a 16-byte struct by value) loads and attaches.
#[test]
fn live_trampoline_refusals_are_the_kernels() {
    use ksym::internals::btf::Options;
    use ksym::internals::formats::btf::KIND_STRUCT;
    common::raise_memlock();
    // No kernel BTF is no kernel for this test (one skip, `kernel`); the
    // second handle, which applies no trampoline rule, opens what the
    // first just did.
    let btf = match KernelBtf::open(&Options::default()) {
        Ok(k) => k,
        Err(e) => {
            common::skip_need(common::Need::Kernel, &format!("no kernel BTF: {e}"));
            return;
        }
    };
    let all_btf = KernelBtf::open(&Options::default())
        .expect("the kernel BTF opened a moment ago")
        .with_kernel_release(b"none");
    // bpf() and fentry at all: vfs_read attaches, or this is no such kernel.
    let vfs_read = btf.find(b"vmlinux`vfs_read", 12).unwrap().id;
    if let Err((step, e)) = fentry_attaches(vfs_read, 0) {
        common::skip_need(
            common::Need::Fentry,
            &format!("fentry at vfs_read: {step}: errno {e}"),
        );
        return;
    }
    let key = |b: &KernelBtf, t: &ksym::internals::btf::targets::Target| {
        (
            t.obj.unwrap(),
            t.btf_id,
            format!(
                "{}`{}",
                b.text(&t.module).to_string_lossy(),
                b.text(&t.name).to_string_lossy()
            ),
        )
    };
    let kept: BTreeSet<_> = btf
        .expand(TargetKind::Function, b"*")
        .unwrap()
        .iter()
        .map(|t| key(&btf, t))
        .collect();
    let all: BTreeSet<_> = all_btf
        .expand(TargetKind::Function, b"*")
        .unwrap()
        .iter()
        .map(|t| key(&all_btf, t))
        .collect();
    assert!(kept.is_subset(&all));
    let dropped: Vec<_> = all.difference(&kept).collect();
    eprintln!(
        "{}: {} functions, {} left out for the trampoline",
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        all.len(),
        dropped.len()
    );
    assert_eq!(btf.stats().trampoline_refused, dropped.len());
    assert!(!dropped.is_empty(), "the 6.1 guest has hundreds");
    let fd = |obj: usize| btf.object_fd(obj).unwrap();
    let mut wrong = Vec::new();
    for (obj, id, name) in &dropped {
        match fentry_attaches(*id, fd(*obj)) {
            Err(("load", 22)) | Err(("attach", 524)) => {}
            r => wrong.push(format!("{name}: {r:?}")),
        }
    }
    assert!(wrong.is_empty(), "left out, yet: {wrong:?}");
    // Kept at the boundary: every 16th of those with exactly 6 arguments,
    // every 4th of those with a 16-byte struct argument (by name).
    let (mut six, mut wide) = (Vec::new(), Vec::new());
    for k @ (obj, id, _) in &kept {
        let b = &ksym::internals::btf::object(&btf, *obj).unwrap().btf;
        let Some(proto) = b.ty(*id).and_then(|f| b.ty(f.type_id())) else {
            continue;
        };
        let struct16 = proto.params().any(|(_, ty)| {
            b.resolve(ty)
                .ok()
                .and_then(|r| b.ty(r))
                .is_some_and(|t| t.kind() == KIND_STRUCT && t.size() == 16)
        });
        if struct16 {
            wide.push(k);
        } else if proto.vlen() == 6 {
            six.push(k);
        }
    }
    let sample: Vec<_> = six
        .iter()
        .step_by(16)
        .chain(wide.iter().step_by(4))
        .collect();
    eprintln!(
        "kept: {} with 6 arguments, {} with a 16-byte struct; {} tried",
        six.len(),
        wide.len(),
        sample.len()
    );
    assert!(sample.len() >= 10, "{}", sample.len());
    let mut refused = Vec::new();
    for (obj, id, name) in sample {
        if let Err(e) = fentry_attaches(*id, fd(*obj)) {
            refused.push(format!("{name}: {e:?}"));
        }
    }
    assert!(refused.is_empty(), "kept, yet refused: {refused:?}");
}
