//! The kernel table (`tests/kernels.txt`) against the kernel's own answers.
//!
//! Every test that meets a feature the running kernel lacks reads the
//! table to know whether that is the kernel's documented state (checked:
//! not on this kernel) or a failure (tests/common: `skip_need`). So the
//! table itself is checked here, on every kernel the suite runs on (the
//! guests run `live_*` tests): each declared column is asked of the running
//! kernel directly, by raw `bpf()` calls, sysfs, tracefs and kallsyms, and
//! by bpftool's dump of its BTF, none of it through libksym.

mod common;

use common::{kernel_row, live_kallsyms, skip, Need};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// The table's rows as text, for the shape checks.
fn table() -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(common::repo().join("tests/kernels.txt")).unwrap();
    let mut rows = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>());
    let head = rows.next().unwrap();
    (head, rows.collect())
}

/// Every row has every column; features are yes or no; every need the
/// tests name has a column; guest rows name a suite and a root.
#[test]
fn the_table_is_complete() {
    let (head, rows) = table();
    assert_eq!(&head[..4], ["name", "suite", "root", "release"]);
    for r in &rows {
        assert_eq!(r.len(), head.len(), "row {} has {} cells", r[0], r.len());
        for (h, v) in head.iter().zip(r).skip(4) {
            assert!(v == "yes" || v == "no", "{} {h}: {v}", r[0]);
        }
        if r[1] != "-" {
            assert!(
                r[2] == "host" || r[2] == "debian13",
                "{}: root {}",
                r[0],
                r[2]
            );
            assert!(
                r[3].starts_with(&format!("{}.", r[0])),
                "{}: release {}",
                r[0],
                r[3]
            );
        }
    }
    use Need::*;
    for n in [
        BpfLoop,
        BtfPercpuVars,
        Fentry,
        Modules,
        ModuleBtf,
        Cookies,
        FuncIp,
        Kprobes,
        KprobeMulti,
        KallsymsAll,
        Tracefs,
        StructOpsLink,
        TracingMulti,
    ] {
        let c = n.column().unwrap();
        assert!(head.iter().any(|h| h == c), "no column {c}");
    }
    assert_eq!(Kernel.column(), None);
}

// ---- the kernel's own answers ----------------------------------------------

fn sys_bpf(cmd: i64, attr: &mut [u8]) -> Result<i32, i32> {
    // SAFETY: attr is a valid buffer of its length for the whole call.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len()) };
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(r as i32)
    }
}

fn close(fd: i32) {
    // SAFETY: fd is one we opened.
    unsafe { libc::close(fd) };
}

fn put(attr: &mut [u8], off: usize, v: &[u8]) {
    attr[off..off + v.len()].copy_from_slice(v);
}

const LOAD: i64 = 5;
const BTF_LOAD: i64 = 18;
const RAW_TRACEPOINT_OPEN: i64 = 17;
const LINK_CREATE: i64 = 28;
const PROG_TYPE_KPROBE: u32 = 2;
const PROG_TYPE_TRACING: u32 = 26;
const TRACE_FENTRY: u32 = 24;
const TRACE_KPROBE_MULTI: u32 = 42;

/// BPF_PROG_LOAD of `[call helper;] r0 = 0; exit` (GPL).
fn load(prog_type: u32, attach_type: u32, btf_id: u32, helper: Option<i32>) -> Result<i32, i32> {
    let mut insns: Vec<u8> = Vec::new();
    if let Some(h) = helper {
        insns.extend_from_slice(&[0x85, 0, 0, 0]);
        insns.extend_from_slice(&h.to_le_bytes());
    }
    insns.extend_from_slice(&[0xb7, 0, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0]);
    let license = b"GPL\0";
    let mut a = [0u8; 144];
    put(&mut a, 0, &prog_type.to_ne_bytes());
    put(&mut a, 4, &((insns.len() / 8) as u32).to_ne_bytes());
    put(&mut a, 8, &(insns.as_ptr() as u64).to_ne_bytes());
    put(&mut a, 16, &(license.as_ptr() as u64).to_ne_bytes());
    put(&mut a, 68, &attach_type.to_ne_bytes());
    put(&mut a, 108, &btf_id.to_ne_bytes());
    sys_bpf(LOAD, &mut a)
}

/// vmlinux's BTF as bpftool dumps it (raw), once.
fn btf_dump() -> &'static str {
    static DUMP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMP.get_or_init(|| {
        let out = Command::new("bpftool")
            .args([
                "btf",
                "dump",
                "file",
                "/sys/kernel/btf/vmlinux",
                "format",
                "raw",
            ])
            .output()
            .expect("bpftool (the BTF oracle) runs");
        assert!(out.status.success(), "bpftool btf dump failed");
        String::from_utf8(out.stdout).unwrap()
    })
}

/// The BTF id of FUNC `name` in bpftool's dump.
fn func_id(name: &str) -> u32 {
    let want = format!("FUNC '{name}' ");
    btf_dump()
        .lines()
        .find(|l| l.contains(&want))
        .and_then(|l| l.strip_prefix('[')?.split(']').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no FUNC {name} in vmlinux's BTF"))
}

/// An enumerator of vmlinux's BTF (bpftool prints them as `'NAME' val=N`).
fn has_enumerator(name: &str) -> bool {
    let want = format!("'{name}' val=");
    btf_dump()
        .lines()
        .any(|l| l.trim_start().starts_with(&want))
}

/// A struct of vmlinux's BTF has a member of that name.
fn struct_has_member(s: &str, member: &str) -> bool {
    let head = format!("STRUCT '{s}' ");
    let mut lines = btf_dump().lines().skip_while(|l| !l.contains(&head));
    lines.next().is_some()
        && lines
            .take_while(|l| l.starts_with('\t'))
            .any(|l| l.trim_start().starts_with(&format!("'{member}' ")))
}

/// An fentry program on `vfs_read`, loaded with the helper `helper`
/// called, then attached: what the kernel answered at each step.
fn fentry(helper: Option<i32>) -> Result<(), String> {
    let id = func_id("vfs_read");
    let fd = load(PROG_TYPE_TRACING, TRACE_FENTRY, id, helper)
        .map_err(|e| format!("BPF_PROG_LOAD of fentry/vfs_read: errno {e}"))?;
    let mut a = [0u8; 16];
    put(&mut a, 8, &(fd as u32).to_ne_bytes());
    let link = sys_bpf(RAW_TRACEPOINT_OPEN, &mut a);
    close(fd);
    let link = link.map_err(|e| format!("attaching fentry/vfs_read: errno {e}"))?;
    close(link);
    Ok(())
}

/// A kprobe_multi link of one function.
fn kprobe_multi() -> Result<(), String> {
    let fd = load(PROG_TYPE_KPROBE, TRACE_KPROBE_MULTI, 0, None)
        .map_err(|e| format!("BPF_PROG_LOAD of kprobe.multi: errno {e}"))?;
    let sym = b"vfs_read\0";
    let syms = [sym.as_ptr() as u64];
    let mut a = [0u8; 64];
    put(&mut a, 0, &(fd as u32).to_ne_bytes());
    put(&mut a, 8, &TRACE_KPROBE_MULTI.to_ne_bytes());
    put(&mut a, 20, &1u32.to_ne_bytes());
    put(&mut a, 24, &(syms.as_ptr() as u64).to_ne_bytes());
    let link = sys_bpf(LINK_CREATE, &mut a);
    close(fd);
    let link = link.map_err(|e| format!("BPF_LINK_CREATE of kprobe_multi: errno {e}"))?;
    close(link);
    Ok(())
}

/// BPF_BTF_LOAD of a blob of `types` (words) and `strings`: the errno
/// when the kernel refuses it.
fn btf_loads(types: &[u32], strings: &[u8]) -> Result<(), i32> {
    let mut blob: Vec<u8> = Vec::new();
    // struct btf_header: magic, version 1, flags 0, hdr_len, type_off,
    // type_len, str_off, str_len.
    blob.extend_from_slice(&0xeb9fu16.to_ne_bytes());
    blob.extend_from_slice(&[1, 0]);
    let tlen = (types.len() * 4) as u32;
    for v in [24, 0, tlen, tlen, strings.len() as u32] {
        blob.extend_from_slice(&v.to_ne_bytes());
    }
    types
        .iter()
        .for_each(|w| blob.extend_from_slice(&w.to_ne_bytes()));
    blob.extend_from_slice(strings);
    let mut a = [0u8; 32];
    put(&mut a, 0, &(blob.as_ptr() as u64).to_ne_bytes());
    put(&mut a, 16, &(blob.len() as u32).to_ne_bytes());
    let fd = sys_bpf(BTF_LOAD, &mut a)?;
    close(fd);
    Ok(())
}

/// The BTF kinds the kernel takes: (btf_kinds, btf_qmark) and what each
/// blob got. Each blob is an INT (named "i": string 1) and what it tests.
fn btf_kinds() -> (bool, bool, String) {
    const INT: [u32; 4] = [1, 1 << 24, 4, (1 << 24) | 32];
    let with = |more: &[u32]| [&INT[..], more].concat();
    assert_eq!(
        btf_loads(&INT, b"\0i\0"),
        Ok(()),
        "the kernel takes no BTF at all"
    );
    // Strings: 1 "i", 3 "t", 5 "x", 7 "?.bss".
    let strs = b"\0i\0t\0x\0?.bss\0";
    let kinds = [
        ("FLOAT", with(&[3, 16 << 24, 8])),
        // typedef t = int [2], tagged "x" [3]
        ("DECL_TAG", with(&[3, 8 << 24, 1, 5, 17 << 24, 2, u32::MAX])),
        // int *: PTR [3] to TYPE_TAG "x" [2] of the int
        ("TYPE_TAG", with(&[5, 18 << 24, 1, 0, 2 << 24, 2])),
        // enum64 t { x = 1 << 32 }
        ("ENUM64", with(&[3, (19 << 24) | 1, 8, 5, 0, 1])),
        // enum t { x = -1 }, signed (the kind flag)
        (
            "signed ENUM",
            with(&[3, (1 << 31) | (6 << 24) | 1, 4, 5, u32::MAX]),
        ),
    ];
    let got: Vec<(&str, Result<(), i32>)> = kinds
        .iter()
        .map(|(k, t)| (*k, btf_loads(t, strs)))
        .collect();
    // static int x in "?.bss": VAR [2], DATASEC [3].
    let q = btf_loads(
        &with(&[5, 14 << 24, 1, 0, 7, (15 << 24) | 1, 4, 2, 0, 4]),
        strs,
    );
    // The same as ".bss"-less "t": the DATASEC itself is taken.
    let plain = btf_loads(
        &with(&[5, 14 << 24, 1, 0, 3, (15 << 24) | 1, 4, 2, 0, 4]),
        strs,
    );
    assert_eq!(plain, Ok(()), "a DATASEC named t");
    let all = got.iter().all(|(_, r)| r.is_ok());
    (
        all,
        q.is_ok(),
        format!("BPF_BTF_LOAD of {got:?}; of a DATASEC ?.bss: {q:?}"),
    )
}

/// What the running kernel says of each column, and how it said it.
fn observe(kallsyms: &[u8]) -> HashMap<&'static str, (bool, String)> {
    let mut o = HashMap::new();
    let mut put = |k, v: bool, how: String| o.insert(k, (v, how));
    put(
        "modules",
        Path::new("/proc/modules").exists(),
        "/proc/modules exists".into(),
    );
    let loaded = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    let module_btf = std::fs::read_dir("/sys/kernel/btf")
        .map(|d| d.flatten().any(|e| e.file_name() != "vmlinux"))
        .unwrap_or(false);
    put(
        "module_btf",
        module_btf,
        format!(
            "/sys/kernel/btf has a module's BTF ({} modules loaded)",
            loaded.lines().count()
        ),
    );
    let fentry_plain = fentry(None);
    put(
        "fentry",
        fentry_plain.is_ok(),
        format!("fentry/vfs_read loads and attaches: {fentry_plain:?}"),
    );
    // The helpers: BTF's enum says whether the kernel has them; where
    // fentry loads, the verifier must agree (it refuses a helper a
    // tracing program may not call).
    // Where fentry loads, the verifier answers for both helpers; elsewhere
    // (this machine refuses fentry) the kernel's BTF does: the helper's
    // enumerator, and the cookie a tracing link keeps (struct
    // bpf_tramp_link's from 6.0; a later kernel may keep it elsewhere).
    let enum_ip = has_enumerator("BPF_FUNC_get_func_ip");
    if fentry_plain.is_ok() {
        let ip = fentry(Some(173));
        assert_eq!(
            ip.is_ok(),
            enum_ip,
            "bpf_get_func_ip in fentry: {ip:?}, BTF enum {enum_ip}"
        );
        put(
            "func_ip",
            ip.is_ok(),
            format!("fentry calling bpf_get_func_ip loads: {ip:?}"),
        );
        let c = fentry(Some(174));
        put(
            "cookies",
            c.is_ok(),
            format!("fentry calling bpf_get_attach_cookie loads: {c:?}"),
        );
    } else {
        put(
            "func_ip",
            enum_ip,
            "BTF enum bpf_func_id has BPF_FUNC_get_func_ip".into(),
        );
        put(
            "cookies",
            struct_has_member("bpf_tramp_link", "cookie"),
            "BTF struct bpf_tramp_link has a cookie".into(),
        );
    }
    put(
        "kprobes",
        Path::new("/sys/bus/event_source/devices/kprobe/type").exists(),
        "the kprobe PMU exists".into(),
    );
    let km = kprobe_multi();
    put("kprobe_multi", km.is_ok(), format!("{km:?}"));
    let text = String::from_utf8_lossy(kallsyms);
    // Without CONFIG_KALLSYMS_ALL, vmlinux's data appears only as the
    // linker's section markers (__start_rodata, D): init_task is a
    // variable, listed only with it. Its type letter is not the test:
    // 7.3 prints T for init_task, init_mm and jiffies_64 (D for runqueues).
    let data = text.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() == 3 && f[2] == "init_task"
    });
    put(
        "kallsyms_all",
        data,
        "/proc/kallsyms lists the variable init_task".into(),
    );
    let lists = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .any(|d| {
            std::fs::read(format!("{d}/available_filter_functions")).is_ok_and(|b| !b.is_empty())
        });
    put(
        "tracefs_lists",
        lists,
        "available_filter_functions is readable and not empty".into(),
    );
    // The link type is older than the links of struct_ops maps (6.1 has
    // it); the link itself, struct bpf_struct_ops_link, came with them (6.4,
    // as test_bpf_kernel's struct_ops part decides).
    put(
        "struct_ops_link",
        btf_dump()
            .lines()
            .any(|l| l.contains("] STRUCT 'bpf_struct_ops_link' ")),
        "BTF has struct bpf_struct_ops_link".into(),
    );
    put(
        "bpf_loop",
        has_enumerator("BPF_FUNC_loop"),
        "BTF enum bpf_func_id has BPF_FUNC_loop".into(),
    );
    put(
        "btf_percpu_vars",
        btf_dump().lines().any(|l| l.contains("] VAR 'runqueues' ")),
        "vmlinux's BTF has VAR runqueues".into(),
    );
    put(
        "tracing_multi",
        has_enumerator("BPF_TRACE_FENTRY_MULTI"),
        "BTF enum bpf_attach_type has BPF_TRACE_FENTRY_MULTI".into(),
    );
    let (kinds, qmark, how) = btf_kinds();
    put("btf_kinds", kinds, how.clone());
    put("btf_qmark", qmark, how);
    o
}

/// The running kernel's row, column by column, against the kernel.
#[test]
fn live_the_running_kernels_row_is_the_kernels_answer() {
    let Some((name, row)) = kernel_row() else {
        skip("the kernel table has no row for this kernel (tests/kernels.txt)");
        return;
    };
    let Some(kallsyms) = live_kallsyms() else {
        return;
    };
    common::raise_memlock();
    let seen = observe(&kallsyms);
    let mut wrong = Vec::new();
    for (col, declared) in row {
        let (got, how) = seen
            .get(col.as_str())
            .unwrap_or_else(|| panic!("no check for the column {col}"));
        eprintln!("{name} {col}: table {declared}, kernel {got} ({how})");
        if got != declared {
            wrong.push(format!(
                "{col}: the table says {declared}, the kernel {got} ({how})"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "tests/kernels.txt's row {name} is wrong:\n{}",
        wrong.join("\n")
    );
}
