//! BPF objects end to end: open, list, resolve the externs against a fixed
//! table, resolve what needs kernel BTF against fixed BTF, relocate, read
//! the instructions and the BTF records. Properties: every program's
//! instructions lie within its ELF section (read here from the section
//! headers, not through the library), and after relocation every
//! relocation's instruction lies within its program's instructions.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

use ksym::bpf::Object;
use ksym::internals::btf::KernelBtf;
use ksym::internals::resolve::cache::Cache;
use ksym::internals::resolve::Source;

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
        let b = ksym::internals::formats::btf::Btf::parse(btf.to_vec()).unwrap();
        (cache, Arc::new(ksym::internals::btf::from_parts(b, Vec::new()).unwrap()))
    })
}

/// The sizes of the ELF64 little-endian sections named `name`, read from
/// the section headers and the section-name table.
fn section_sizes(data: &[u8], name: &[u8]) -> Vec<u64> {
    let u16_at = |at: usize| {
        data.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u32_at = |at: usize| {
        data.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    let u64_at = |at: usize| {
        data.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    };
    let (Some(shoff), Some(shnum), Some(strndx)) = (u64_at(0x28), u16_at(0x3c), u16_at(0x3e))
    else {
        return Vec::new();
    };
    let sh = |i: usize| shoff as usize + 64 * i;
    let Some(strtab) = u64_at(sh(strndx) + 0x18) else {
        return Vec::new();
    };
    (0..shnum)
        .filter_map(|i| {
            let n = strtab as usize + u32_at(sh(i))? as usize;
            let rest = data.get(n..)?;
            let end = rest.iter().position(|&b| b == 0)?;
            (&rest[..end] == name)
                .then(|| u64_at(sh(i) + 0x20))
                .flatten()
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(mut o) = Object::parse(data) else {
        return;
    };
    for p in o.programs().iter().take(64) {
        let end = (p.insn_off as u64 + p.insn_cnt as u64) * 8;
        let sizes = section_sizes(data, p.section.to_bytes());
        assert!(
            sizes.iter().any(|&size| end <= size),
            "program {:?}: instructions {}..+{} past section {:?} of sizes {sizes:?}",
            p.name,
            p.insn_off,
            p.insn_cnt,
            p.section
        );
    }
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
            let _ = o.fd_array(i);
            let n = o.insns(i).map_or(0, |v| v.len());
            for r in o.relocs(i).into_iter().flatten() {
                assert!(
                    r.insn_idx < n,
                    "program {i}: relocation at {} of {n}",
                    r.insn_idx
                );
            }
        }
    }
});
