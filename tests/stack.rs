//! Stacks: `Table::symbolize_stack` answers every address exactly as
//! `Table::symbolize` answers it alone (whose answers tests/ground_truth.rs
//! checks against a brute-force reader): symbol, module, size, offset, or
//! the same error, in any order, with repeats, on the three bundled
//! kernels (modules and pseudo-modules), on kallmodsyms (built-in modules,
//! exact sizes and gaps), with built-in ranges, and on a table from a
//! snapshot (addresses outside the kernel and its modules go to a fresh
//! read, as `symbolize` sends them).

mod common;

use std::path::PathBuf;

use common::TempDir;
use ksym::internals::table::{Options, Table};

/// Each answer as text: the symbol's every field and the offset, or the
/// error's code and message.
fn shown(r: &ksym::Result<(ksym::Symbol<'_>, u64)>) -> String {
    match r {
        Ok((s, off)) => format!("{s:?}+{off:#x}"),
        Err(e) => format!("error {} {}", e.code(), e.message()),
    }
}

/// Addresses of a table: every symbol's, inside it, one before it, far
/// past it, the ends of each module, 0 and the top; shuffled, with some
/// repeated, as stacks repeat frames.
fn addresses(text: &[u8]) -> Vec<u64> {
    let refs = common::reference(text);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        rng >> 11
    };
    let mut v = vec![0, 1, u64::MAX, u64::MAX - 1];
    for r in refs.iter().step_by(13) {
        v.extend([
            r.addr,
            r.addr.wrapping_add(1 + next() % 256),
            r.addr.wrapping_sub(1),
            r.addr.wrapping_add(next() % 0x100000),
        ]);
    }
    for i in (1..v.len()).rev() {
        v.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    let repeats: Vec<u64> = v.iter().step_by(5).copied().collect();
    v.extend(repeats);
    v
}

/// The stack's answers equal the per-address ones, for the whole list and
/// for stacks of every length up to 40 cut from it (groups, and their
/// remainders, of every size).
fn check(what: &str, t: &Table, addrs: &[u64]) {
    let one: Vec<String> = addrs.iter().map(|&a| shown(&t.symbolize(a))).collect();
    let all: Vec<String> = t.symbolize_stack(addrs).iter().map(shown).collect();
    assert_eq!(all.len(), addrs.len());
    for (i, (a, b)) in one.iter().zip(&all).enumerate() {
        assert_eq!(a, b, "{what}: address {:#x} (#{i})", addrs[i]);
    }
    let mut at = 0;
    for n in 0..=40 {
        let end = (at + n).min(addrs.len());
        let mut seen = Vec::new();
        t.symbolize_stack_with(&addrs[at..end], |i, r| seen.push((i, shown(&r))));
        let want: Vec<(usize, String)> = (at..end).map(|j| (j - at, one[j].clone())).collect();
        assert_eq!(seen, want, "{what}: a stack of {n}");
        at = end % addrs.len();
    }
    let found = all.iter().filter(|s| !s.starts_with("error")).count();
    assert!(
        found > addrs.len() / 3,
        "{what}: {found} of {} found",
        addrs.len()
    );
    assert!(found < addrs.len(), "{what}: the errors are checked too");
}

#[test]
fn stacks_answer_as_single_addresses_on_three_kernels() {
    for kernel in ["linux-6.1-cloud", "linux-6.12-cloud", "vm-6.18"] {
        let text = common::data(&format!("{kernel}/kallsyms"));
        let t = Table::from_bytes(&text, &Options::default()).unwrap();
        check(kernel, &t, &addresses(&text));
    }
}

#[test]
fn stacks_with_exact_sizes_and_builtin_modules() {
    let fixture = |f: &str| common::repo().join("tests/fixtures").join(f);
    // kallmodsyms: built-in modules and exact sizes (gaps between symbols).
    let path = fixture("builtin/kallmodsyms");
    let text = std::fs::read(&path).unwrap();
    let t = Table::open(&Options {
        kallsyms_path: Some(path),
        builtin_ranges_path: Some(PathBuf::new()),
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    check("kallmodsyms", &t, &addresses(&text));
    // kallsyms with modules.builtin.ranges.
    let path = fixture("builtin/kallsyms");
    let text = std::fs::read(&path).unwrap();
    let t = Table::open(&Options {
        kallsyms_path: Some(path),
        builtin_ranges_path: Some(fixture("builtin/modules.builtin.ranges")),
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    check("kallsyms + ranges", &t, &addresses(&text));
}

/// From a snapshot: addresses inside the kernel and its modules come from
/// it, the others (a BPF program's) from the fresh read, as one at a time.
#[test]
fn stacks_from_a_snapshot() {
    if !(common::root("snapshots") && common::live_kallsyms().is_some()) {
        return;
    }
    let dir = TempDir::new();
    let kallsyms = dir.path().join("kallsyms");
    let mut text = common::data("linux-6.12-cloud/kallsyms");
    text.extend_from_slice(b"ffffffffc0abc000 t bpf_prog_0123456789abcdef_x\t[bpf]\n");
    std::fs::write(&kallsyms, &text).unwrap();
    let modules = dir.path().join("modules");
    std::fs::write(&modules, common::data("linux-6.12-cloud/modules")).unwrap();
    let boot = dir.path().join("boot_id");
    std::fs::write(&boot, "0b7a2f1e-2222-4a4a-9c9c-123456789abc\n").unwrap();
    let opts = Options {
        kallsyms_path: Some(kallsyms),
        builtin_ranges_path: Some(PathBuf::new()),
        modules_path: Some(modules),
        snapshot: ksym::SnapshotOptions {
            snapshot_dir: Some(dir.path().join("snap")),
            boot_id_path: Some(boot),
            ..Default::default()
        },
        ..Default::default()
    };
    drop(Table::open(&opts).unwrap());
    let t = Table::open(&opts).unwrap();
    assert!(t.from_snapshot(), "{:?}", t.info().snapshot);
    let mut addrs = addresses(&text);
    addrs.extend([0xffffffffc0abc000, 0xffffffffc0abc010]);
    let fresh = Table::open(&Options {
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..opts.snapshot.clone()
        },
        ..opts.clone()
    })
    .unwrap();
    let stack: Vec<String> = t.symbolize_stack(&addrs).iter().map(shown).collect();
    let want: Vec<String> = addrs.iter().map(|&a| shown(&fresh.symbolize(a))).collect();
    assert_eq!(stack, want);
    assert!(t.fresh_read(), "the BPF addresses went to the fresh read");
    assert!(stack
        .iter()
        .any(|s| s.contains("bpf_prog_0123456789abcdef_x")));
}
