//! The ftrace filter (tracefs' `available_filter_functions_addrs`) with
//! the bundled 6.12 list: `FilterFunctions::allows` over the `Sites` ranges,
//! and the stats flags. Oracle: the same file and the 6.12 kallsyms, read
//! here line by line, independently of the library's parser. And fentry
//! expansion over the 6.1 kernel's BTF with the same kernel's
//! `available_filter_functions` (names): oracle, bpftool's dump of the BTF
//! and the list and kallsyms read here.

mod common;

use std::collections::BTreeSet;

use common::Kernel61;
use ksym::internals::btf::targets::TargetKind;
use ksym::internals::btf::{FilterFunctions, KernelBtf, Options};

fn open(file: &str) -> (common::TempDir, KernelBtf) {
    let k = Kernel61::new();
    let (dir, path) = common::data_file(file);
    let btf = KernelBtf::open(&Options {
        vmlinux_btf_path: Some(k.vmlinux()),
        module_btf_dir: Some("".into()),
        filter_functions_path: Some(path),
        ..Default::default()
    })
    .unwrap();
    (dir, btf)
}

/// Every text symbol of the 6.12 kallsyms (vmlinux and modules) spans up
/// to the next symbol's address; `allows` must say yes exactly when the
/// file has a patch site inside that span. This covers functions in the
/// kernel but not patchable (no site), `.isra`/`.cold` variants and module
/// functions, each counted and required below.
#[test]
fn sites_allow_exactly_the_spans_with_a_patch_site() {
    let (_d, btf) = open("linux-6.12-cloud/available_filter_functions_addrs");
    let f = btf.filter_functions().unwrap();
    assert!(matches!(f, FilterFunctions::Sites(..)), "{f:?}");
    let s = btf.stats();
    assert!(s.filter_checked && s.filter_sites && !s.filter_unavailable);

    let text = common::data("linux-6.12-cloud/available_filter_functions_addrs");
    let sites: BTreeSet<u64> = String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
        .collect();
    let kallsyms = common::data("linux-6.12-cloud/kallsyms");
    let kallsyms = String::from_utf8_lossy(&kallsyms);
    let mut syms: Vec<(u64, char, String, String)> = kallsyms
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let addr = u64::from_str_radix(w.next()?, 16).ok()?;
            let t = w.next()?.chars().next()?;
            let name = w.next()?.to_string();
            let module = w.next().map_or("vmlinux".to_string(), |m| {
                m.trim_matches(|c| c == '[' || c == ']').to_string()
            });
            Some((addr, t, name, module))
        })
        .collect();
    syms.sort_by_key(|s| s.0);
    // [patchable, not]: of all, of .isra/.cold variants, of module functions.
    let (mut all, mut variants, mut modules) = ([0; 2], [0; 2], [0; 2]);
    for (i, (addr, t, name, module)) in syms.iter().enumerate() {
        if !matches!(t, 't' | 'T') || *addr == 0 {
            continue;
        }
        let Some(next) = syms[i + 1..].iter().map(|s| s.0).find(|&a| a > *addr) else {
            continue;
        };
        let size = next - addr;
        let oracle = sites.range(*addr..next).next().is_some();
        let got = f.allows(module.as_bytes(), name.as_bytes(), *addr, size);
        assert_eq!(got, oracle, "{module}`{name} at {addr:#x}+{size}");
        let side = usize::from(!oracle);
        all[side] += 1;
        if name.contains(".isra") || name.contains(".cold") {
            variants[side] += 1;
        }
        if module != "vmlinux" {
            modules[side] += 1;
        }
    }
    // Each case on both sides: a check that never meets one proves nothing
    // of it. [patchable, not patchable]:
    assert!(all[0] > 1000 && all[1] > 1000, "{all:?}");
    assert!(
        variants[0] > 0 && variants[1] > 0,
        ".isra/.cold {variants:?}"
    );
    assert!(modules[0] > 0 && modules[1] > 0, "in modules {modules:?}");
}

/// Without an address (size 0) `allows` falls back to the names: a module
/// function as `module`name`, a vmlinux one bare; the oracle is the name set.
#[test]
fn sites_fall_back_to_names_without_an_address() {
    let (_d, btf) = open("linux-6.12-cloud/available_filter_functions_addrs");
    let f = btf.filter_functions().unwrap();
    let text = common::data("linux-6.12-cloud/available_filter_functions_addrs");
    let names: BTreeSet<(String, String)> = String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace().skip(1);
            let name = w.next()?.to_string();
            let m = w
                .next()
                .map_or("vmlinux".into(), |m| m.trim_matches(['[', ']']).into());
            Some((m, name))
        })
        .collect();
    for (m, n) in &names {
        assert!(f.allows(m.as_bytes(), n.as_bytes(), 0, 0), "{m}`{n}");
    }
    // A module's name asked under vmlinux, or under another module: the
    // first (in order) that vmlinux does not list too. There must be one.
    let (m, n) = names
        .iter()
        .find(|(m, n)| m != "vmlinux" && !names.contains(&("vmlinux".to_string(), n.clone())))
        .expect("a module function whose name vmlinux does not list");
    assert!(
        !f.allows(b"vmlinux", n.as_bytes(), 0, 0),
        "{m}`{n} as vmlinux"
    );
    assert!(
        !f.allows(b"no_such_module", n.as_bytes(), 0, 0),
        "{m}`{n} as no_such_module`{n}"
    );
    assert!(!f.allows(b"vmlinux", b"no_such_function_here", 0, 0));
}

/// The 6.1 kernel (BTF of vmlinux and its 30 modules, kallsyms) with that
/// kernel's `available_filter_functions`: the list, when `filtered`, or
/// none. Trampoline rules off (release "none"), so that only the filter
/// leaves functions out.
fn kernel_61(k: &Kernel61, filtered: bool) -> (common::TempDir, KernelBtf) {
    let (dir, list) = common::data_file("linux-6.1-cloud/available_filter_functions");
    let btf = KernelBtf::open(&Options {
        vmlinux_btf_path: Some(k.vmlinux()),
        module_btf_dir: Some(k.btf_dir()),
        kallsyms_path: Some(k.dir.path().join("kallsyms")),
        filter_functions_path: Some(if filtered { list } else { "".into() }),
        ..Default::default()
    })
    .unwrap()
    .with_kernel_release(b"none");
    (dir, btf)
}

/// (module, name) of every fentry target `pattern` expands to.
fn expand(btf: &KernelBtf, pattern: &[u8]) -> BTreeSet<(String, String)> {
    btf.expand(TargetKind::Function, pattern)
        .unwrap()
        .iter()
        .map(|t| {
            let text = |x| btf.text(x).to_string_lossy().into_owned();
            (text(&t.module), text(&t.name))
        })
        .collect()
}

/// fentry expansion over the 6.1 kernel's BTF with the same kernel's
/// filter list (names only: that tracefs has no `_addrs`) leaves out
/// exactly the BTF functions the list lacks. Oracle, read here: every FUNC
/// of bpftool's dump of vmlinux and of each module (split on vmlinux),
/// kallsyms' text symbols of the same module (not compiler artifacts, which
/// `*` does not expand), the list's (module, name) lines.
#[test]
fn expansion_over_61_btf_leaves_out_exactly_what_its_list_lacks() {
    let k = Kernel61::new();
    let (_d, with) = kernel_61(&k, true);
    assert!(matches!(
        with.filter_functions().unwrap(),
        FilterFunctions::Names(..)
    ));
    let (_e, without) = kernel_61(&k, false);

    let list: BTreeSet<(String, String)> =
        String::from_utf8_lossy(&common::data("linux-6.1-cloud/available_filter_functions"))
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let name = w.next()?.to_string();
                let m = w
                    .next()
                    .map_or("vmlinux".into(), |m| m.trim_matches(['[', ']']).to_string());
                Some((m, name))
            })
            .collect();
    assert!(list.len() > 40_000, "{}", list.len());
    let mut text: BTreeSet<(String, String)> = BTreeSet::new();
    for l in String::from_utf8_lossy(&common::data("linux-6.1-cloud/kallsyms")).lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() >= 3 && matches!(w[1], "t" | "T" | "w" | "W") {
            let m = w.get(3).map_or("vmlinux", |m| m.trim_matches(['[', ']']));
            text.insert((m.to_string(), w[2].to_string()));
        }
    }
    let artifact = |n: &str| n.starts_with("__pfx_") || n.starts_with("__cfi_") || n.contains('.');
    let mut btf_funcs: BTreeSet<(String, String)> = BTreeSet::new();
    let dir = k.btf_dir();
    for e in std::fs::read_dir(&dir).unwrap() {
        let m = e.unwrap().file_name().into_string().unwrap();
        let base = (m != "vmlinux").then(|| k.vmlinux());
        for (_, kind, name) in common::bpftool_dump(&dir.join(&m), base.as_deref()) {
            if kind == "FUNC" {
                btf_funcs.insert((m.clone(), name));
            }
        }
    }
    // What `*` may expand to without a filter: a BTF function of its module
    // that kallsyms has as text; with the filter, those of them listed.
    let candidates: BTreeSet<_> = btf_funcs
        .iter()
        .filter(|(m, n)| !artifact(n) && text.contains(&(m.clone(), n.clone())))
        .cloned()
        .collect();
    let listed: BTreeSet<_> = candidates.intersection(&list).cloned().collect();

    let all = expand(&without, b"*");
    let kept = expand(&with, b"*");
    assert_eq!(
        all, candidates,
        "no filter: BTF functions with a text symbol"
    );
    let missing: Vec<_> = listed.difference(&kept).take(5).collect();
    let extra: Vec<_> = kept.difference(&listed).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "with the list: {} kept, {} expected; missing {missing:?}, extra {extra:?}",
        kept.len(),
        listed.len()
    );
    let left_out = all.len() - kept.len();
    assert!(
        kept.len() > 40_000 && left_out > 1000,
        "{} kept, {left_out} left out",
        kept.len()
    );
    eprintln!(
        "6.1: {} BTF functions in kallsyms, {left_out} not in the list",
        all.len()
    );

    let pair = |m: &str, n: &str| (m.to_string(), n.to_string());
    // Named: in BTF and kallsyms but not patchable (notrace: the
    // trampoline's own entry), in vmlinux and in a module.
    for (m, n) in [("vmlinux", "__bpf_prog_enter"), ("bridge", "br_vlan_cmp")] {
        let p = pair(m, n);
        assert!(
            btf_funcs.contains(&p) && text.contains(&p) && !list.contains(&p),
            "{m}`{n}"
        );
        let q = format!("{m}`{n}");
        assert_eq!(expand(&without, q.as_bytes()), BTreeSet::from([p.clone()]));
        assert!(expand(&with, q.as_bytes()).is_empty(), "{q} expanded");
    }
    // Named: patchable functions with a .cold part (kallsyms has both; the
    // list the function only), in vmlinux and in a module: the function is
    // kept, its part is never a target.
    for (m, n) in [("vmlinux", "__audit_inode"), ("bridge", "br_add_if")] {
        let (p, cold) = (pair(m, n), pair(m, &format!("{n}.cold")));
        assert!(btf_funcs.contains(&p) && list.contains(&p), "{m}`{n}");
        assert!(
            text.contains(&cold) && !list.contains(&cold),
            "{m}`{n}.cold"
        );
        assert!(kept.contains(&p) && !kept.contains(&cold), "{m}`{n}");
        let q = format!("{m}`{n}.cold");
        assert!(expand(&with, q.as_bytes()).is_empty(), "{q}");
        assert!(expand(&without, q.as_bytes()).is_empty(), "{q}");
    }
    // An .isra clone the list has: no BTF function of that name, so no
    // target, even asked exactly.
    let isra = pair("vmlinux", "intel_pmu_save_and_restart_reload.isra.0");
    assert!(list.contains(&isra) && text.contains(&isra) && !btf_funcs.contains(&isra));
    assert!(expand(&with, isra.1.as_bytes()).is_empty());
    // Module functions are kept under their module.
    assert!(kept.iter().filter(|(m, _)| m != "vmlinux").count() > 5000);
}
