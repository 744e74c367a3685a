//! BTF: the zero-copy reader (every accessor over every type, names looked
//! up through the kernel-BTF index) and the object-side reader, writer and
//! `.BTF.ext` reader.
#![no_main]
use libfuzzer_sys::fuzz_target;

use ksym::formats::btf::Btf;

fuzz_target!(|data: &[u8]| {
    if let Ok(b) = Btf::parse(data.to_vec()) {
        for id in b.own_ids().take(4096) {
            let Some(t) = b.ty(id) else { continue };
            let _ = (t.kind(), t.vlen(), b.name(id));
            match t.kind() {
                1 => drop(t.int()),
                3 => drop(t.array()),
                4 | 5 => t.members().for_each(drop),
                6 | 19 => t.enumerators().for_each(drop),
                13 => t.params().for_each(drop),
                15 => t.datasec().for_each(drop),
                _ => {}
            }
            let _ = (b.resolve(id), b.size_of(id), b.align_of(id));
        }
        if let Ok(k) = ksym::btf::KernelBtf::from_parts(b, Vec::new()) {
            let _ = k.find(b"task_struct", 0);
            let _ = k.find(b"vmlinux`schedule", 12);
        }
    }
    if let Ok(b) = ksym::bpf::btf::Btf::parse(data) {
        let _ = b.to_bytes();
        for v in b.ids_of_kind(14).take(64) {
            let _ = b.map_def(v);
        }
        let _ = ksym::bpf::btf_ext::BtfExt::parse(data, &b);
    }
});
