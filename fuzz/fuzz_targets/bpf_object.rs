//! BPF objects end to end: open, list, resolve the externs against a fixed
//! table, resolve what needs kernel BTF against fixed BTF, relocate, read
//! the instructions and the BTF records.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

use ksym::bpf::Object;
use ksym::btf::KernelBtf;
use ksym::resolve::cache::Cache;
use ksym::resolve::Source;

/// A small kallsyms file and BTF made once: the kernel the objects meet.
fn kernel() -> &'static (Cache, Arc<KernelBtf>) {
    static K: OnceLock<(Cache, Arc<KernelBtf>)> = OnceLock::new();
    K.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ksym-fuzz-bpf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let k = dir.join("kallsyms");
        std::fs::write(&k, "ffffffff81000000 T _text\nffffffff81000100 T bpf_prog_active\nffffffffc0000000 t xfs_f\t[xfs]\n").unwrap();
        std::fs::write(dir.join("modules"), "").unwrap();
        let cache = Cache::new(
            Source {
                kallsyms_path: Some(k),
                builtin_ranges: None,
            },
            Some(dir.join("modules")),
        );
        let btf = include_bytes!("../seeds/vmlinux-small.btf");
        let b = ksym::formats::btf::Btf::parse(btf.to_vec()).unwrap();
        (cache, Arc::new(KernelBtf::from_parts(b, Vec::new()).unwrap()))
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(mut o) = Object::parse(data) else {
        return;
    };
    let (cache, btf) = kernel();
    for i in 0..o.programs().len().min(64) {
        let _ = (
            o.relocs(i),
            o.attach_info(i),
            o.func_info(i),
            o.line_info(i),
        );
    }
    let _ = o.btf();
    let _ = o.resolve_ksyms(Some(cache));
    let _ = o.resolve_btf(btf);
    for m in 0..o.maps().len() {
        let _ = o.set_map_fd(m, 100 + m as i32);
    }
    if o.relocate().is_ok() {
        for i in 0..o.programs().len().min(64) {
            let _ = (o.insns(i), o.fd_array(i));
        }
    }
});
