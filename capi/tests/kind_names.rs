//! ksym_bpf_prog_type_str, _attach_type_str, _map_type_str and
//! ksym_btf_kind_str against the kernels' own enumerators, as bpftool
//! dumps them from BTF: the bundled Debian 6.1 kernel's and the running
//! kernel's (6.18 here). Every enumerator needs a name, the enumerator in
//! lower case without its prefix (libbpf's spelling; `_DEPRECATED`
//! aliases aside), BTF kinds in upper case (the kernel's `btf_kind_str`,
//! "UNKNOWN" for `BTF_KIND_UNKN`). libbpf itself is the oracle of
//! c-tests/libbpf/test_kind_names.c.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::path::Path;
use std::process::Command;

use ksym_capi::ffi::kinds::{
    ksym_bpf_attach_type_str, ksym_bpf_map_type_str, ksym_bpf_prog_type_str, ksym_btf_kind_str,
};

/// The enumerators (name, value) of the enums of a BTF file, by enum name
/// (anonymous enums under the name of their first enumerator).
fn enums(file: &Path) -> BTreeMap<String, Vec<(String, i64)>> {
    let out = Command::new("bpftool")
        .args(["btf", "dump", "file"])
        .arg(file)
        .args(["format", "raw"])
        .output()
        .expect("bpftool is needed by this test (make deps installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut all = BTreeMap::new();
    let mut cur: Option<(String, Vec<(String, i64)>)> = None;
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        if line.starts_with('[') {
            if let Some((n, v)) = cur.take() {
                all.insert(n, v);
            }
            // [1892] ENUM 'bpf_prog_type' encoding=UNSIGNED size=4 vlen=34
            let mut w = line.split_whitespace();
            if w.nth(1) == Some("ENUM") {
                cur = Some((w.next().unwrap().trim_matches('\'').to_string(), Vec::new()));
            }
        } else if let Some((name, vals)) = &mut cur {
            // 	'BPF_PROG_TYPE_UNSPEC' val=0
            let (e, v) = line.trim().split_once(" val=").unwrap();
            let e = e.trim_matches('\'').to_string();
            if name == "(anon)" && vals.is_empty() {
                *name = e.clone();
            }
            vals.push((e, v.parse().unwrap()));
        }
    }
    if let Some((n, v)) = cur {
        all.insert(n, v);
    }
    all
}

fn name(s: *const std::ffi::c_char) -> Option<String> {
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_str().unwrap().to_string())
}

/// Checks every enumerator of one kernel's BTF; returns how many.
fn check(file: &Path) -> usize {
    let all = enums(file);
    let mut checked = 0;
    type Lookup = extern "C" fn(u32) -> *const std::ffi::c_char;
    let families: [(&str, &str, Lookup); 4] = [
        ("bpf_prog_type", "BPF_PROG_TYPE_", ksym_bpf_prog_type_str),
        ("bpf_attach_type", "BPF_", ksym_bpf_attach_type_str),
        ("bpf_map_type", "BPF_MAP_TYPE_", ksym_bpf_map_type_str),
        ("BTF_KIND_UNKN", "BTF_KIND_", ksym_btf_kind_str),
    ];
    for (enum_name, prefix, f) in families {
        let values = all
            .get(enum_name)
            .unwrap_or_else(|| panic!("{}: no enum {enum_name}", file.display()));
        for (e, v) in values {
            let v = u32::try_from(*v).unwrap();
            if e.starts_with("__MAX") || e == "NR_BTF_KINDS" || e == "BTF_KIND_MAX" {
                continue;
            }
            let bare = e.strip_prefix(prefix).unwrap();
            let want = match (enum_name, bare) {
                ("BTF_KIND_UNKN", "UNKN") => "UNKNOWN".to_string(),
                ("BTF_KIND_UNKN", k) => k.to_string(),
                (_, t) => t.strip_suffix("_DEPRECATED").unwrap_or(t).to_lowercase(),
            };
            // BPF_MAP_TYPE_CGROUP_STORAGE and its _DEPRECATED alias share a value.
            assert_eq!(
                name(f(v)).as_deref(),
                Some(want.as_str()),
                "{}: {e} = {v}",
                file.display()
            );
            checked += 1;
        }
        if enum_name == "BTF_KIND_UNKN" {
            // Both kernels have the 20 kinds this version knows.
            let past = values.iter().map(|x| x.1).max().unwrap() as u32 + 1;
            assert_eq!(name(f(past)), None, "{}: BTF kind {past}", file.display());
        }
        assert_eq!(name(f(u32::MAX)), None);
    }
    checked
}

#[test]
fn every_enumerator_of_the_bundled_6_1_kernel_has_its_name() {
    let k = common::Kernel61::new();
    let n = check(&k.vmlinux());
    // 6.1: program types to SYSCALL (32), attach types to LSM_CGROUP (44), map
    // types to USER_RINGBUF (32), and 20 kinds.
    assert_eq!(n, 32 + 44 + 32 + 20, "enumerators of the 6.1 BTF");
}

#[test]
fn every_enumerator_of_the_running_kernel_has_its_name() {
    let vmlinux = Path::new("/sys/kernel/btf/vmlinux");
    if !vmlinux.exists() {
        return common::skip(
            "no /sys/kernel/btf/vmlinux: the running kernel's enumerators are unknown",
        );
    }
    assert!(check(vmlinux) > 100);
}
