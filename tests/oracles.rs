//! The table against the independent files captured with the bundled
//! kernels (tests/data, from ../shared/data; see its README): System.map
//! for core addresses, /sys/module/*/sections for module regions, tracefs'
//! patch-site addresses for symbolization, /proc/modules for the modules
//! parser. Both kernels were booted with `nokaslr`: the addresses agree.

mod common;

use std::collections::HashMap;

use ksym::internals::table::{Lookup, Options, Table};

fn table(kernel: &str) -> (common::TempDir, Table) {
    let (dir, path) = common::data_file(&format!("{kernel}/kallsyms"));
    let t = Table::open(&Options {
        kallsyms_path: Some(path),
        builtin_ranges_path: Some("".into()),
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    (dir, t)
}

fn text(name: &str) -> String {
    String::from_utf8(common::data(name)).unwrap()
}

#[test]
fn core_addresses_are_system_maps() {
    let (_d, t) = table("linux-6.12-cloud");
    // Names that System.map has once, as text symbols.
    let mut count: HashMap<&str, (u64, usize)> = HashMap::new();
    let map = text("linux-6.12-cloud/System.map");
    for l in map.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() == 3 && matches!(f[1], "T" | "t") {
            let e = count
                .entry(f[2])
                .or_insert((u64::from_str_radix(f[0], 16).unwrap(), 0));
            e.1 += 1;
        }
    }
    let (mut checked, mut absent) = (0, 0);
    for (name, &(addr, n)) in &count {
        if n != 1 {
            continue;
        }
        match t.lookup(format!("vmlinux`{name}").as_bytes()) {
            Ok(Lookup::Found(s)) => {
                assert_eq!(s.addr, addr, "{name}");
                checked += 1;
            }
            // A data symbol of the same name (CONFIG_KALLSYMS_ALL): the
            // function is one of the matches.
            Ok(Lookup::Ambiguous(..)) => {
                let all = t.lookup_all(format!("vmlinux`{name}").as_bytes()).unwrap();
                assert!(all.iter().any(|s| s.addr == addr), "{name}");
                checked += 1;
            }
            // System.map has a few symbols kallsyms leaves out.
            Err(e) if e.code() == ksym::internals::error::NOT_FOUND => absent += 1,
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(checked > 60_000, "{checked} checked, {absent} absent");
    assert!(absent * 100 < checked, "{checked} checked, {absent} absent");
}

#[test]
fn module_symbols_lie_in_their_sections() {
    for kernel in ["linux-6.1-cloud", "linux-6.12-cloud"] {
        let (_d, t) = table(kernel);
        // Per module: its sections' addresses.
        let mut secs: HashMap<String, Vec<(String, u64)>> = HashMap::new();
        for l in text(&format!("{kernel}/module-sections")).lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            let a = u64::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap();
            secs.entry(f[0].to_string())
                .or_default()
                .push((f[1].to_string(), a));
        }
        let mut modules = 0;
        for m in t
            .modules()
            .filter(|m| m.kind == ksym::internals::rules::modules::ModuleKind::Loadable)
        {
            let name = m.name.to_string_lossy().into_owned();
            let s = &secs[&name];
            let lo = s.iter().map(|x| x.1).min().unwrap();
            // Every symbol of the module is at or after its lowest section
            // (`a` symbols with non-address values aside: they are absolute).
            assert!(
                m.lo >= lo,
                "{kernel} {name}: lowest symbol {:#x} below its sections {lo:#x}",
                m.lo
            );
            // Its .text section starts with one of its symbols.
            if let Some(&(_, text_at)) = s.iter().find(|x| x.0 == ".text") {
                let (sym, off) = t.symbolize(text_at).unwrap();
                assert_eq!(
                    sym.module.to_string_lossy(),
                    name,
                    "{kernel} .text of {name}"
                );
                assert!(off < 0x1000, "{kernel} {name}: {off:#x}");
            }
            modules += 1;
        }
        assert_eq!(modules, 32, "{kernel}");
    }
}

#[test]
fn patch_sites_symbolize_to_their_function() {
    let (_d, t) = table("linux-6.12-cloud");
    let sites = text("linux-6.12-cloud/available_filter_functions_addrs");
    let mut checked = 0;
    for l in sites.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let addr = u64::from_str_radix(f[0], 16).unwrap();
        let module = f.get(2).map_or("vmlinux", |m| m.trim_matches(['[', ']']));
        let (s, off) = t.symbolize(addr).unwrap_or_else(|e| panic!("{l}: {e}"));
        // The patch site is at the function's start (or right after its
        // `endbr64`): the function itself, or an alias at its address.
        assert!(off <= 16, "{l}: {} +{off:#x}", s.name.to_string_lossy());
        let at: Vec<String> = t
            .lookup_all(format!("{module}`{}", f[1]).as_bytes())
            .unwrap_or_default()
            .iter()
            .map(|x| format!("{:#x}", x.addr))
            .collect();
        assert!(
            at.contains(&format!("{:#x}", s.addr)),
            "{l}: symbolized to {} at {:#x}, named at {at:?}",
            s.name.to_string_lossy(),
            s.addr
        );
        checked += 1;
    }
    assert!(checked > 40_000, "{checked}");
}

#[test]
fn proc_modules_of_real_kernels() {
    for kernel in ["linux-6.1-cloud", "linux-6.12-cloud"] {
        let (_d, t) = table(kernel);
        let mods = ksym::internals::formats::proc_modules::parse(&common::data(&format!(
            "{kernel}/modules"
        )));
        // The modules kallsyms names, loaded, each holding its symbols.
        assert_eq!(mods.len(), 32, "{kernel}");
        for m in &mods {
            assert_eq!(m.state, b"Live");
            let name = String::from_utf8_lossy(&m.name).into_owned();
            assert!(
                t.modules().any(|x| x.name.to_string_lossy() == name),
                "{kernel}: {name} not in kallsyms"
            );
            // The address is the base of the module's text: its first
            // symbol is there.
            let (s, off) = t.symbolize(m.addr).unwrap();
            assert_eq!(
                (s.module.to_string_lossy().into_owned(), off),
                (name.clone(), 0),
                "{kernel} {name}"
            );
            assert!(m.size > 0);
        }
    }
}
