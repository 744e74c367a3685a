//! Every input the fuzz targets once failed on (fuzz/regressions/), run
//! through the same calls by the ordinary test suite: no panic, whatever
//! the answer, and for BTF the property the target checks. (make test
//! also replays them through the fuzz binaries;
//! the snapshot target's only there: its inputs are damage to snapshots
//! the target writes at start, as root.)

use std::path::Path;

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn bpf_object_regressions() {
    let found = inputs("bpf_object");
    assert!(found.len() >= 2, "{}", found.len());
    let btf = ksym::internals::formats::btf::Btf::parse(
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/vmlinux-small.btf"))
            .unwrap(),
    )
    .unwrap();
    let kernel = std::sync::Arc::new(ksym::internals::btf::from_parts(btf, Vec::new()).unwrap());
    for (name, data) in found {
        let r = std::panic::catch_unwind(|| {
            let Ok(mut o) = ksym::bpf::Object::parse(&data) else {
                return;
            };
            for i in 0..o.programs().len() {
                let _ = (o.relocs(i), o.attach_info(i));
            }
            let _ = o.resolve_btf(&kernel);
            for m in 0..o.maps().len() {
                let _ = o.set_map_fd(m, 3);
            }
            let _ = o.relocate();
        });
        assert!(r.is_ok(), "{name} panics");
    }
}

/// A crafted object whose `.bss` the header says is 3.5 GiB (a NOBITS
/// section takes no room in the file): setting a variable of it used to
/// allocate that much zeroed memory for its initial value (the fuzz
/// target's out-of-memory). It is refused, saying how to write it instead,
/// and nothing is allocated.
#[test]
fn a_huge_bss_gets_no_initial_value() {
    let data = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/bpf_object/huge-bss-set-var"),
    )
    .unwrap();
    let mut o = ksym::bpf::Object::parse(&data).unwrap();
    let v = o.vars()[o.find_var(b"state").unwrap()].clone();
    assert_eq!(o.maps()[v.map].value_size, 3_774_873_672);
    let e = o.set_var(b"state", &[7; 72]).unwrap_err();
    assert_eq!(e.kind(), ksym::ErrorKind::Unsupported, "{e:?}");
    assert!(e.message().contains("BPF_MAP_UPDATE_ELEM"), "{e:?}");
    assert!(o.maps()[v.map].initial_value.is_none());
}

/// BTF the reader once accepted with a name running past the string
/// section's end (no final NUL): refused now, as libbpf and the kernel
/// refuse it; and whatever parses has every name NUL-terminated.
#[test]
fn btf_regressions() {
    let found = inputs("btf");
    assert!(!found.is_empty());
    for (name, data) in found {
        match ksym::internals::formats::btf::Btf::parse(data) {
            Ok(b) => {
                for id in b.own_ids() {
                    let off = b.ty(id).unwrap().name_off;
                    assert!(off == 0 || b.cstr(off).is_some(), "{name}: type {id}");
                }
            }
            Err(e) => assert!(
                e.message().contains("does not end with a NUL"),
                "{name}: {}",
                e.message()
            ),
        }
    }
}
