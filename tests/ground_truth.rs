//! Ground truth on real kernels: every name of a real kallsyms file resolves
//! to what an independent reference computes here (unique, ambiguous,
//! address, module), and thousands of addresses symbolize to what a
//! brute-force scan says.

mod common;

use std::collections::HashMap;

use common::{reference, RefSym};
use ksym::internals::error::{AMBIGUOUS, NOT_FOUND};
use ksym::{Lookup, Table, TableOptions as Options};

fn is_abs(ty: u8) -> bool {
    ty == b'A' || ty == b'a'
}

/// Expected answer of `lookup` for a set of matches: Found(addr) when all
/// share one address, else Ambiguous(lowest).
fn expected(matches: &[&RefSym]) -> (bool, u64) {
    let lo = matches.iter().map(|s| s.addr).min().unwrap();
    let unique = matches.iter().all(|s| s.addr == lo);
    (unique, lo)
}

fn check_names(table: &Table, refs: &[RefSym]) -> usize {
    let mut by_name: HashMap<&[u8], Vec<&RefSym>> = HashMap::new();
    let mut by_mod_name: HashMap<(&[u8], &[u8]), Vec<&RefSym>> = HashMap::new();
    for r in refs {
        by_name.entry(&r.name).or_default().push(r);
        by_mod_name.entry((&r.module, &r.name)).or_default().push(r);
    }
    let mut checked = 0;
    for (name, matches) in &by_name {
        let (unique, addr) = expected(matches);
        let got = table
            .lookup(name)
            .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(name)));
        match got {
            Lookup::Found(s) => {
                assert!(
                    unique,
                    "{} should be ambiguous",
                    String::from_utf8_lossy(name)
                );
                assert_eq!(s.addr, addr, "{}", String::from_utf8_lossy(name));
                assert_eq!(s.name.to_bytes(), *name);
            }
            Lookup::Ambiguous(s, e) => {
                assert!(
                    !unique,
                    "{} should be unique: {e}",
                    String::from_utf8_lossy(name)
                );
                assert_eq!(
                    s.addr,
                    addr,
                    "lowest address of {}",
                    String::from_utf8_lossy(name)
                );
                assert_eq!(e.code(), AMBIGUOUS);
            }
        }
        // lookup_all: every distinct (address, module, type), by address.
        let mut want: Vec<(u64, Vec<u8>, u8)> = matches
            .iter()
            .map(|r| (r.addr, r.module.clone(), r.ty))
            .collect();
        want.sort_by_key(|w| w.0);
        let mut dedup: Vec<(u64, Vec<u8>, u8)> = Vec::new();
        for w in want {
            if !dedup.contains(&w) {
                dedup.push(w);
            }
        }
        let all = table.lookup_all(name).unwrap();
        let got: Vec<(u64, Vec<u8>, u8)> = all
            .iter()
            .map(|s| (s.addr, s.module.to_bytes().to_vec(), s.ty))
            .collect();
        let mut got_sorted = got.clone();
        got_sorted.sort_by_key(|g| g.0);
        assert_eq!(got, got_sorted, "ordered by address");
        let mut a = got.clone();
        let mut b = dedup.clone();
        a.sort();
        b.sort();
        assert_eq!(a, b, "lookup_all {}", String::from_utf8_lossy(name));
        checked += 1;
    }
    for ((module, name), matches) in &by_mod_name {
        let q: Vec<u8> = [*module, b"`", *name].concat();
        let (unique, addr) = expected(matches);
        match table
            .lookup(&q)
            .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(&q)))
        {
            Lookup::Found(s) => {
                assert!(unique, "{}", String::from_utf8_lossy(&q));
                assert_eq!(
                    (s.addr, s.module.to_bytes()),
                    (addr, *module),
                    "{}",
                    String::from_utf8_lossy(&q)
                );
            }
            Lookup::Ambiguous(s, _) => {
                assert!(!unique, "{}", String::from_utf8_lossy(&q));
                assert_eq!(s.addr, addr);
            }
        }
        checked += 1;
    }
    checked
}

/// Brute force: the symbol for `addr` by scanning every entry.
fn brute_symbolize(refs: &[RefSym], addr: u64) -> Option<(u64, Vec<u8>, Vec<u8>, u64)> {
    let mut best: Option<u64> = None;
    for r in refs {
        if !is_abs(r.ty) && r.addr <= addr && best.is_none_or(|b| r.addr > b) {
            best = Some(r.addr);
        }
    }
    let at = best?;
    let group: Vec<&RefSym> = refs
        .iter()
        .filter(|r| !is_abs(r.ty) && r.addr == at)
        .collect();
    let pick = group
        .iter()
        .min_by_key(|r| {
            (
                r.ty.is_ascii_lowercase(),
                r.name.starts_with(b"__pfx_"),
                r.line,
            )
        })
        .unwrap();
    // The next symbol of its module, but never past any module's next
    // symbol (modules' text, data and rodata are separate allocations with
    // other modules' between them from Linux 6.4).
    let (mut own, mut any) = (None::<u64>, u64::MAX);
    for r in refs.iter().filter(|r| !is_abs(r.ty) && r.addr > at) {
        any = any.min(r.addr);
        if r.module == pick.module {
            own = Some(own.map_or(r.addr, |o| o.min(r.addr)));
        }
    }
    let next = own.map(|o| o.min(any));
    match next {
        None if addr > at => None,
        None => Some((at, pick.name.clone(), pick.module.clone(), 0)),
        Some(n) => Some((at, pick.name.clone(), pick.module.clone(), n - at)),
    }
}

fn check_addresses(table: &Table, refs: &[RefSym], count: usize) -> usize {
    let mut rng = 0x1234_5678u64;
    let mut next = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        rng >> 11
    };
    let nonabs: Vec<&RefSym> = refs.iter().filter(|r| !is_abs(r.ty)).collect();
    let mut addrs: Vec<u64> = Vec::new();
    for _ in 0..count {
        let r = nonabs[(next() % nonabs.len() as u64) as usize];
        addrs.push(r.addr);
        addrs.push(r.addr.wrapping_add(next() % 64));
        addrs.push(r.addr.wrapping_sub(1));
        addrs.push(r.addr.wrapping_add(next() % 0x10000));
    }
    // The ends of every module (just past the last symbol answers nothing).
    let mut last: HashMap<&[u8], u64> = HashMap::new();
    for r in &nonabs {
        let e = last.entry(&r.module).or_insert(r.addr);
        *e = (*e).max(r.addr);
    }
    for &a in last.values() {
        addrs.extend([a, a + 1, a + 4096]);
    }
    addrs.extend([0, 1, u64::MAX]);
    for &a in &addrs {
        let want = brute_symbolize(refs, a);
        match (table.symbolize(a), want) {
            (Ok((s, off)), Some((at, name, module, size))) => {
                assert_eq!(
                    (s.addr, s.name.to_bytes(), s.module.to_bytes(), s.size, off),
                    (at, &name[..], &module[..], size, a - at),
                    "{a:#x}"
                );
            }
            (Err(e), None) => assert_eq!(e.code(), NOT_FOUND, "{a:#x}"),
            (got, want) => panic!("{a:#x}: got {got:?}, want {want:?}"),
        }
    }
    addrs.len()
}

fn run(name: &str, text: &[u8], addresses: usize) {
    let table = Table::from_bytes(text, &Options::default()).unwrap();
    let refs = reference(text);
    assert_eq!(table.len(), refs.len(), "{name}: one entry per line");
    let names = check_names(&table, &refs);
    let addrs = check_addresses(&table, &refs, addresses);
    eprintln!(
        "{name}: {} lines, {names} names and {addrs} addresses checked",
        refs.len()
    );
}

#[test]
fn linux_6_12_with_modules() {
    run(
        "linux-6.12-cloud",
        &common::data("linux-6.12-cloud/kallsyms"),
        600,
    );
}

#[test]
fn linux_6_1_with_modules() {
    run(
        "linux-6.1-cloud",
        &common::data("linux-6.1-cloud/kallsyms"),
        600,
    );
}

#[test]
fn vm_6_18_snapshot() {
    run("vm-6.18", &common::data("vm-6.18/kallsyms"), 600);
}

#[test]
fn live_proc_kallsyms() {
    let Some(text) = common::live_kallsyms() else {
        return;
    };
    run("/proc/kallsyms", &text, 300);
    // And through the file path (the streaming reader).
    let t = Table::open(&Options {
        kallsyms_path: Some("/proc/kallsyms".into()),
        builtin_ranges_path: Some("".into()),
        ..Default::default()
    })
    .unwrap();
    // Symbols can come and go (BPF programs) between the two reads; the
    // core kernel cannot.
    let s = t.lookup(b"vmlinux`_text").unwrap().unique().unwrap();
    let refs = reference(&text);
    let text_addr = refs.iter().find(|r| r.name == b"_text").unwrap().addr;
    assert_eq!(s.addr, text_addr);
}

/// The streaming reader (a file of unknown size, as /proc/kallsyms is:
/// here a FIFO) indexes names while it parses, and marks the names seen
/// more than once as it goes: every name and module`name answers as the
/// reference says, as through the buffer's reader.
#[test]
fn streamed_names_of_a_real_kernel() {
    let text = common::data("linux-6.12-cloud/kallsyms");
    let dir = common::TempDir::new();
    let fifo = dir.path().join("kallsyms");
    common::mkfifo(&fifo);
    let writer = {
        let (fifo, text) = (fifo.clone(), text.clone());
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    let table = Table::open(&Options {
        kallsyms_path: Some(fifo),
        builtin_ranges_path: Some("".into()),
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    writer.join().unwrap();
    assert!(table.info().read_ns > 0);
    let refs = reference(&text);
    assert_eq!(table.len(), refs.len());
    check_names(&table, &refs);
}
