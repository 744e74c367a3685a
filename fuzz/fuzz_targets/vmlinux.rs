//! The vmlinux ELF symbol-size reader, and the sizes it gives a table.
//!
//! The input is an ELF. When it parses and has `_text`, the target writes
//! the kallsyms text of that same kernel (every symbol the reader keeps,
//! moved by a KASLR slide) and opens a table from it twice, with and
//! without the ELF as its vmlinux. The ELF is then the oracle:
//! - it is the running kernel's by construction, so the table with sizes
//!   opens whenever the plain one does;
//! - every size marked exact is the size of an ELF symbol of that name at
//!   that address (capped at `u32::MAX - 1`);
//! - every sized ELF symbol makes one entry of its name and address exact;
//! - nothing else changes: the same symbols, and every size not marked
//!   exact is the plain table's estimate.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use std::io::Write;
use std::ops::ControlFlow;

use ksym::internals::formats::vmlinux::ElfSymbols;
use ksym::{Table, TableOptions as Options, SYM_SIZE_EXACT};

/// Where `_text` is put in the kallsyms text.
const KERNEL_TEXT: u64 = 0xffff_ffff_8100_0000;

/// Names the kallsyms text can carry as they are (no blanks, brackets,
/// backticks or globs), so that every line keeps its name.
fn plain_name(n: &[u8]) -> bool {
    !n.is_empty()
        && n.len() <= 100
        && n.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'$')
}

/// (name, address, size, flags) of every symbol, in table order.
fn symbols(t: &Table) -> Vec<(Vec<u8>, u64, u64, u32)> {
    let mut out = Vec::new();
    t.for_each_symbol(false, false, |s| {
        out.push((s.name.to_bytes().to_vec(), s.addr, s.size, s.flags));
        ControlFlow::<()>::Continue(())
    })
    .expect("a table built from a buffer walks its symbols");
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(elf) = ElfSymbols::parse(data) else {
        return;
    };
    for s in &elf.symbols {
        assert!(!s.name.is_empty(), "an empty name is kept");
    }
    let Some(e_text) = elf.text else { return };
    let slide = KERNEL_TEXT.wrapping_sub(e_text);
    // The kallsyms text of this kernel; `_text` first in case the reader
    // does not keep it as a symbol (it is an anchor of any kind).
    let mut text = format!("{KERNEL_TEXT:016x} T _text\n").into_bytes();
    let mut sized: HashMap<(Vec<u8>, u64), Vec<u64>> = HashMap::new();
    let mut globals = 0usize;
    for s in &elf.symbols {
        let addr = s.value.wrapping_add(slide);
        if s.name == b"_text" {
            // Its line is the anchor's, at KERNEL_TEXT.
            if s.size > 0 && addr == KERNEL_TEXT {
                let size = s.size.min(u32::MAX as u64 - 1);
                sized.entry((s.name.clone(), addr)).or_default().push(size);
            }
            continue;
        }
        if !plain_name(&s.name) {
            continue;
        }
        let ty = if s.global { 'T' } else { 't' };
        text.extend_from_slice(format!("{addr:016x} {ty} ").as_bytes());
        text.extend_from_slice(&s.name);
        text.push(b'\n');
        globals += s.global as usize;
        if s.size > 0 {
            let size = s.size.min(u32::MAX as u64 - 1);
            sized.entry((s.name.clone(), addr)).or_default().push(size);
        }
    }
    let Ok(plain) = Table::from_bytes(&text, &Options::default()) else {
        return;
    };
    let path = std::env::temp_dir().join(format!("ksym-fuzz-vmlinux-{}", std::process::id()));
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(data))
        .unwrap();
    let opts = Options {
        vmlinux_path: Some(path),
        ..Options::default()
    };
    let with = match Table::from_bytes(&text, &opts) {
        Ok(t) => t,
        // Without a global symbol the reader has no witness to agree on.
        Err(_) if globals == 0 => return,
        Err(e) => panic!("the kernel's own vmlinux is refused: {e:?}"),
    };
    let (p, w) = (symbols(&plain), symbols(&with));
    assert_eq!(p.len(), w.len(), "the sizes changed the symbols");
    let mut made_exact: HashMap<(Vec<u8>, u64), bool> = HashMap::new();
    for (a, b) in p.iter().zip(&w) {
        assert_eq!((&a.0, a.1), (&b.0, b.1), "the sizes changed a symbol");
        let key = (b.0.clone(), b.1);
        if b.3 & SYM_SIZE_EXACT != 0 {
            let sizes = sized.get(&key);
            assert!(
                sizes.is_some_and(|v| v.contains(&b.2)),
                "{}: exact size {} at {:#x}, the ELF's are {sizes:?}",
                String::from_utf8_lossy(&b.0),
                b.2,
                b.1
            );
            made_exact.insert(key, true);
        } else {
            assert_eq!(
                a.2,
                b.2,
                "{}: an estimated size changed",
                String::from_utf8_lossy(&b.0)
            );
        }
    }
    for (key, sizes) in &sized {
        assert!(
            made_exact.contains_key(key),
            "{} at {:#x}: the ELF's size {sizes:?} was not applied",
            String::from_utf8_lossy(&key.0),
            key.1
        );
    }
});
