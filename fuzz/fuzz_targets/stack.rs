//! Stacks: `Table::symbolize_stack` answers every address exactly as
//! `Table::symbolize` answers it alone, whatever the table and the
//! addresses. The input is kallsyms or kallmodsyms text, a NUL, then the
//! stack as 4-byte steps: a selector, a symbol index (u16, modulo the
//! table's length) and a signed offset byte. Selector bits 0-1: the
//! symbol's address plus the offset (0), times 16 (1), times 4096 (2), or
//! 8 more bytes as a raw little-endian address (3).
#![no_main]
use libfuzzer_sys::fuzz_target;

use ksym::internals::table::{Options, Symbol, Table};

fn shown(r: &ksym::Result<(Symbol<'_>, u64)>) -> String {
    match r {
        Ok((s, off)) => format!("{s:?}+{off:#x}"),
        Err(e) => format!("error {} {}", e.code(), e.message()),
    }
}

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (text, mut script) = (&data[..cut], data.get(cut + 1..).unwrap_or_default());
    let Ok(t) = Table::from_bytes(text, &Options::default()) else {
        return;
    };
    let mut syms: Vec<u64> = Vec::new();
    let _ = t.for_each_symbol(false, false, |s| {
        syms.push(s.addr);
        std::ops::ControlFlow::<()>::Continue(())
    });
    if syms.is_empty() {
        return;
    }
    let mut addrs: Vec<u64> = Vec::new();
    while script.len() >= 4 && addrs.len() < 300 {
        let (sel, idx, off) = (
            script[0],
            u16::from_le_bytes([script[1], script[2]]) as usize,
            script[3] as i8 as i64,
        );
        script = &script[4..];
        let base = syms[idx % syms.len()];
        let a = match sel & 3 {
            0 => base.wrapping_add(off as u64),
            1 => base.wrapping_add((off * 16) as u64),
            2 => base.wrapping_add((off * 4096) as u64),
            _ => match script.first_chunk::<8>() {
                Some(raw) => {
                    script = &script[8..];
                    u64::from_le_bytes(*raw)
                }
                None => base,
            },
        };
        addrs.push(a);
    }
    let one: Vec<String> = addrs.iter().map(|&a| shown(&t.symbolize(a))).collect();
    let stack: Vec<String> = t.symbolize_stack(&addrs).iter().map(shown).collect();
    assert_eq!(stack.len(), addrs.len());
    for (i, (a, b)) in one.iter().zip(&stack).enumerate() {
        assert_eq!(a, b, "address #{i} {:#x}", addrs[i]);
    }
});
