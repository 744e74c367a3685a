//! struct_ops maps (c-tests/bpf/struct_ops.bpf.c) resolved against the
//! bundled 6.1 kernel's BTF, every id, size and offset checked against
//! bpftool's dump of the same BTF: the map's value type (the kernel's
//! `bpf_struct_ops_<name>`), where each program's fd goes, where the data
//! members land, and each program's attach BTF id and member index. The
//! local structs list members in another order than the kernel's, so an
//! offset taken from the object instead of the kernel fails.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::Kernel61;
use ksym::bpf::{Object, SlotTarget};
use ksym::internals::error::NOT_FOUND;

/// A struct of bpftool's dump: id, size, members (name, bit offset).
type Struct = (u32, u32, Vec<(String, u32)>);

/// Every STRUCT of `file`, by name, from `bpftool btf dump file`.
fn structs(file: &Path) -> HashMap<String, Struct> {
    let out = Command::new("bpftool")
        .args(["btf", "dump", "file"])
        .arg(file)
        .output()
        .expect("bpftool is needed by this test (.ci/run installs it)");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut all = HashMap::new();
    let mut cur: Option<(String, Struct)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('[') {
            if let Some((name, s)) = cur.take() {
                all.insert(name, s);
            }
            let id: u32 = rest.split(']').next().unwrap().parse().unwrap();
            let mut words = rest.split_whitespace().skip(1);
            if words.next() == Some("STRUCT") {
                let name = words.next().unwrap().trim_matches('\'').to_string();
                let size = words
                    .next()
                    .unwrap()
                    .trim_start_matches("size=")
                    .parse()
                    .unwrap();
                cur = Some((name, (id, size, Vec::new())));
            }
        } else if let Some((_, s)) = cur.as_mut() {
            let line = line.trim();
            let name = line.split('\'').nth(1).unwrap_or("").to_string();
            let bits = line.rsplit("bits_offset=").next().unwrap();
            let bits: u32 = bits
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap();
            s.2.push((name, bits));
        }
    }
    if let Some((name, s)) = cur {
        all.insert(name, s);
    }
    all
}

fn member(s: &Struct, name: &str) -> (usize, u32) {
    let i = s.2.iter().position(|(n, _)| n == name).unwrap();
    (i, s.2[i].1 / 8)
}

fn object() -> Object {
    Object::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/bpf/struct_ops.bpf.o"))
        .unwrap()
}

#[test]
fn struct_ops_maps_before_and_after_kernel_btf() {
    let mut o = object();
    let map = |o: &Object, n: &str| o.find_map(n.as_bytes()).unwrap();
    let (cc, link, dummy) = (
        map(&o, "ksym_cc"),
        map(&o, "ksym_cc_link"),
        map(&o, "ksym_dummy"),
    );
    // Before: the local struct's size (56 and 16 bytes by the C layout of
    // struct_ops.bpf.c), no kernel value, no slots; `.struct_ops.link`
    // gets BPF_F_LINK (1 << 13).
    for (m, size, flags) in [(cc, 56, 0), (link, 56, 0x2000), (dummy, 16, 0)] {
        let m = o.map(m).unwrap();
        assert_eq!(
            (
                m.map_type,
                m.key_size,
                m.value_size,
                m.max_entries,
                m.map_flags
            ),
            (26, 4, size, 1, flags)
        );
        assert_eq!(
            (
                m.btf_key_type_id,
                m.btf_value_type_id,
                m.btf_vmlinux_value_type_id
            ),
            (0, 0, 0)
        );
        assert!(m.slots.is_empty() && m.initial_value.is_none());
        assert!(m.struct_ops.as_ref().unwrap().value.is_none());
    }
    let init = o.find_program(b"ksym_init").unwrap();
    assert_eq!(o.attach_info(init).unwrap().attach_btf_id, 0);

    let k = Kernel61::new();
    let dump = structs(&k.vmlinux());
    let kernel = Arc::new(k.open());
    o.resolve_btf(&kernel).unwrap();

    let ops = &dump["tcp_congestion_ops"];
    let wrap = &dump["bpf_struct_ops_tcp_congestion_ops"];
    let data = member(wrap, "data").1 as usize;
    for m in [cc, link] {
        let m = o.map(m).unwrap();
        assert_eq!(
            (m.btf_vmlinux_value_type_id, m.value_size),
            (wrap.0, wrap.1)
        );
        let value = m.struct_ops.as_ref().unwrap().value.as_ref().unwrap();
        assert_eq!(value.len(), wrap.1 as usize);
        // One slot per function pointer set, at the kernel's offset.
        let mut want: Vec<(u32, usize)> = ["ssthresh", "cong_avoid", "undo_cwnd", "init"]
            .iter()
            .map(|f| {
                let p = o.find_program(format!("ksym_{f}").as_bytes()).unwrap();
                ((data + member(ops, f).1 as usize) as u32, p)
            })
            .collect();
        want.sort();
        let got: Vec<(u32, usize)> = m
            .slots
            .iter()
            .map(|s| match s.target {
                SlotTarget::StructOps(p) => (s.index, p),
                t => panic!("{t:?}"),
            })
            .collect();
        assert_eq!(got, want);
        // The data members at the kernel's offsets; all else zero.
        let name_at = data + member(ops, "name").1 as usize;
        let flags_at = data + member(ops, "flags").1 as usize;
        let name = m.name.to_bytes();
        assert_eq!(&value[name_at..name_at + name.len()], name);
        let want_flags: u32 = if m.map_flags == 0 { 1 } else { 0 };
        assert_eq!(value[flags_at..flags_at + 4], want_flags.to_le_bytes());
        let nonzero = value.iter().filter(|&&b| b != 0).count();
        assert_eq!(nonzero, name.len() + (want_flags != 0) as usize);
    }
    // Each program: the kernel struct's id and its member's index.
    for f in ["ssthresh", "cong_avoid", "undo_cwnd", "init"] {
        let p = o.find_program(format!("ksym_{f}").as_bytes()).unwrap();
        let a = o.attach_info(p).unwrap();
        assert_eq!(
            (a.attach_btf_id, a.expected_attach_type),
            (ops.0, member(ops, f).0 as u32),
            "{f}"
        );
        assert_eq!(
            a.target.unwrap().to_bytes(),
            format!("tcp_congestion_ops.{f}").as_bytes()
        );
    }
    let dops = &dump["bpf_dummy_ops"];
    let dwrap = &dump["bpf_struct_ops_bpf_dummy_ops"];
    let m = o.map(dummy).unwrap();
    assert_eq!(
        (m.btf_vmlinux_value_type_id, m.value_size),
        (dwrap.0, dwrap.1)
    );
    for f in ["test_1", "test_2"] {
        let p = o.find_program(format!("ksym_{f}").as_bytes()).unwrap();
        let a = o.attach_info(p).unwrap();
        assert_eq!(
            (a.attach_btf_id, a.expected_attach_type),
            (dops.0, member(dops, f).0 as u32)
        );
        let off = member(dwrap, "data").1 + member(dops, f).1;
        assert!(m
            .slots
            .iter()
            .any(|s| s.index == off && s.target == SlotTarget::StructOps(p)));
    }
}

/// A kernel without the struct: resolve_btf says which map and struct.
#[test]
fn struct_ops_of_a_struct_the_kernel_lacks() {
    let mut o = object();
    let b = ksym::internals::formats::btf::Btf::parse(
        ksym::internals::formats::btf::read_file(&Kernel61::new().vmlinux()).unwrap(),
    )
    .unwrap();
    // The same kernel BTF, but with `bpf_dummy_ops` renamed away.
    let mut raw = b.bytes().to_vec();
    let pos = raw
        .windows(15)
        .position(|w| w == b"\0bpf_dummy_ops\0")
        .unwrap();
    raw[pos + 1] = b'X';
    let kernel = Arc::new(
        ksym::internals::btf::from_parts(
            ksym::internals::formats::btf::Btf::parse(raw).unwrap(),
            Vec::new(),
        )
        .unwrap(),
    );
    let e = o.resolve_btf(&kernel).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND);
    assert!(
        e.message().contains("ksym_dummy") && e.message().contains("bpf_dummy_ops"),
        "{}",
        e.message()
    );
    // The other maps resolved regardless.
    let cc = o.find_map(b"ksym_cc").unwrap();
    assert_ne!(o.map(cc).unwrap().btf_vmlinux_value_type_id, 0);
    // The map's programs cannot attach, and each says why (5.10 has no
    // bpf_dummy_ops); the other struct_ops' programs are fine.
    for name in [&b"ksym_test_1"[..], b"ksym_test_2"] {
        let p = o.find_program(name).unwrap();
        let a = o.attach_info(p).unwrap();
        let e = a
            .error
            .expect("a program of the struct the kernel lacks has an error");
        assert_eq!(e.code(), NOT_FOUND);
        assert!(e.message().contains("bpf_dummy_ops"), "{e}");
    }
    let init = o.find_program(b"ksym_init").unwrap();
    assert!(o.attach_info(init).unwrap().error.is_none());
    // Against a kernel that has it, the error goes.
    let full = Arc::new(Kernel61::new().open());
    o.resolve_btf(&full).unwrap();
    let t1 = o.find_program(b"ksym_test_1").unwrap();
    assert!(o.attach_info(t1).unwrap().error.is_none());
}
