//! BTF: the reader (every accessor over every type, whose name offsets
//! and type ids must lie within the blob; names looked up through the
//! kernel-BTF index; map definitions), the writer (what it copies it
//! writes back byte for byte) and the `.BTF.ext` reader.
#![no_main]
use libfuzzer_sys::fuzz_target;

use ksym::internals::formats::btf::{Btf, BtfWriter};

fuzz_target!(|data: &[u8]| {
    if let Ok(b) = Btf::parse(data.to_vec()) {
        if let Ok(w) = BtfWriter::from_btf(&b) {
            let out = w.to_bytes();
            let again = Btf::parse(out.clone()).expect("the writer's bytes parse");
            let w2 = BtfWriter::from_btf(&again).expect("and copy again");
            assert_eq!(w2.to_bytes(), out, "the writer round-trips");
        }
        for v in b.ids_of_kind(14).take(64) {
            let _ = ksym::internals::bpf::map_def::map_def(&b, v);
        }
        let _ = ksym::internals::bpf::btf_ext::BtfExt::parse(data, &b.bytes()[b.string_range()]);
        // A parsed type's fields lie within the blob: every name offset
        // is a NUL-terminated string of the string section (or 0), every
        // type id a type of the blob (or void).
        let end = b.end_id();
        let named = |off: u32| off == 0 || b.cstr(off).is_some();
        for id in b.own_ids() {
            let Some(t) = b.ty(id) else { continue };
            let _ = (t.kind(), t.vlen(), b.name(id));
            assert!(named(t.name_off), "type {id}: name {}", t.name_off);
            match t.kind() {
                1 => drop(t.int()),
                2 | 8..=12 | 14 | 17 | 18 => {
                    assert!(t.type_id() < end, "type {id}: refers to {}", t.type_id())
                }
                3 => {
                    let (elem, index, _) = t.array();
                    assert!(elem < end && index < end, "array {id}: {elem} {index}");
                }
                4 | 5 => t.members().for_each(|m| {
                    assert!(m.ty < end && named(m.name_off), "member of {id}: {m:?}")
                }),
                6 | 19 => t
                    .enumerators()
                    .for_each(|e| assert!(named(e.name_off), "enumerator of {id}")),
                13 => {
                    assert!(t.type_id() < end, "proto {id}: returns {}", t.type_id());
                    t.params().for_each(|(n, ty)| {
                        assert!(named(n) && ty < end, "param of {id}: {n} {ty}")
                    })
                }
                15 => t
                    .datasec()
                    .for_each(|(v, _, _)| assert!(v < end, "datasec {id}: var {v}")),
                _ => {}
            }
            let _ = (b.resolve(id), b.size_of(id), b.align_of(id));
        }
        if let Ok(k) = ksym::internals::btf::from_parts(b, Vec::new()) {
            let _ = k.find(b"task_struct", 0);
            let _ = k.find(b"vmlinux`schedule", 12);
        }
    }
});
