//! BPF objects end to end: open, list, resolve the externs against a fixed
//! table, resolve what needs kernel BTF against fixed BTF, relocate, read
//! the instructions and the BTF records. Properties: every program's
//! instructions lie within its ELF section (read here from the section
//! headers, not through the library), every data-section variable lies
//! within its map and setting it writes only its bytes, and after
//! relocation every relocation's instruction lies within its program's
//! instructions.
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
    // Every variable lies inside its data section's map, and setting it
    // writes its bytes and no others, whether or not the map had an
    // initial value (`.bss`); the wrong size is refused.
    for v in o.vars().to_vec().into_iter().take(64) {
        let m = &o.maps()[v.map];
        assert!(
            v.offset + v.size <= m.value_size as usize,
            "variable {:?} at {}+{} past {} bytes of {:?}",
            v.name,
            v.offset,
            v.size,
            m.value_size,
            m.name
        );
        // A `.bss` of the header's word may be huge: the bytes compared are
        // a window around the variable (and the whole value when small).
        let len = m.value_size as usize;
        let (lo, hi) = (
            v.offset.saturating_sub(64),
            (v.offset + v.size + 64).min(len),
        );
        let hi = if len <= 1 << 16 { len } else { hi };
        let lo = if len <= 1 << 16 { 0 } else { lo };
        let huge_zero = m.initial_value.is_none() && len > 256 << 20;
        let before = match &m.initial_value {
            Some(b) => b[lo..hi].to_vec(),
            None => vec![0; hi - lo],
        };
        let value: Vec<u8> = (0..v.size).map(|k| (k as u8) ^ 0x5a).collect();
        match o.set_var(v.name.to_bytes(), &value) {
            Ok(()) => {
                let after = &o.maps()[v.map].initial_value.as_ref().unwrap()[lo..hi];
                let (at, end) = (v.offset - lo, v.offset - lo + v.size);
                assert_eq!(&after[at..end], &value[..]);
                assert_eq!(&after[..at], &before[..at]);
                assert_eq!(&after[end..], &before[end..]);
            }
            // Static variables of several sections may share a name; a
            // `.bss` past the object bound gets no initial value.
            Err(e) if huge_zero => assert_eq!(e.kind(), ksym::ErrorKind::Unsupported, "{e:?}"),
            Err(e) => assert_eq!(e.kind(), ksym::ErrorKind::Ambiguous, "{e:?}"),
        }
        if v.size < 1 << 16 {
            assert!(o.set_var(v.name.to_bytes(), &vec![0; v.size + 1]).is_err());
        }
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
            // A program whose autoload is off may be left unrelocated
            // (what it needs is missing); every other one has its code.
            let n = match o.insns(i) {
                Ok(v) => v.len(),
                Err(e) => {
                    let autoload = o.attach_info(i).map_or(true, |a| a.autoload);
                    assert!(
                        !autoload,
                        "program {i}: relocated, yet no instructions: {e:?}"
                    );
                    continue;
                }
            };
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
