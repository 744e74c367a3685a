//! The ftrace filter (tracefs' `available_filter_functions_addrs`) with
//! the bundled 6.12 list: `FilterFunctions::allows` over the `Sites` ranges,
//! and the stats flags. Oracle: the same file and the 6.12 kallsyms, read
//! here line by line, independently of the library's parser.

mod common;

use std::collections::{BTreeSet, HashSet};

use common::Kernel61;
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
    let (mut yes, mut no, mut variants, mut modules) = (0, 0, 0, 0);
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
        if oracle {
            yes += 1;
            if name.contains(".isra") || name.contains(".cold") {
                variants += 1;
            }
            if module != "vmlinux" {
                modules += 1;
            }
        } else {
            no += 1;
        }
    }
    assert!(yes > 1000 && no > 1000, "{yes} patchable, {no} not");
    assert!(
        variants > 0 && modules > 0,
        "{variants} .isra/.cold, {modules} in modules"
    );
}

/// Without an address (size 0) `allows` falls back to the names: a module
/// function as `module`name`, a vmlinux one bare; the oracle is the name set.
#[test]
fn sites_fall_back_to_names_without_an_address() {
    let (_d, btf) = open("linux-6.12-cloud/available_filter_functions_addrs");
    let f = btf.filter_functions().unwrap();
    let text = common::data("linux-6.12-cloud/available_filter_functions_addrs");
    let names: HashSet<(String, String)> = String::from_utf8_lossy(&text)
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
    // The same name under another module, and a name not listed.
    let (m, n) = names.iter().find(|(m, _)| m != "vmlinux").unwrap();
    if !names.contains(&("vmlinux".to_string(), n.clone())) {
        assert!(
            !f.allows(b"vmlinux", n.as_bytes(), 0, 0),
            "{m}`{n} as vmlinux"
        );
    }
    assert!(!f.allows(b"vmlinux", b"no_such_function_here", 0, 0));
}
