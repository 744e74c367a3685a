//! Loadable modules against the running kernel (issue 21, item 2): the
//! table, module`symbol lookups, module BTF objects (ids and fds), a module
//! reloaded under an open BTF handle, and the cache while modules change.
//! The oracle is the kernel itself: /proc/kallsyms read by a naive parser
//! (`common::reference`), BPF_BTF_GET_NEXT_ID / BPF_OBJ_GET_INFO_BY_FD made
//! here with raw bpf() calls, and bpftool's dump of /sys/kernel/btf.
//!
//! They run in the qemu guest (tools/guest/tests.sh runs `live_*`, with
//! dummy, veth and bridge loaded); on a kernel without modules they SKIP.
//! The tests that load and unload modules hold one lock, so no test sees
//! another's module change.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use common::{bpftool_dump, reference, skip_need, Need, RefSym};
use ksym::internals::btf::{KernelBtf, Options as BtfOptions};
use ksym::internals::error::NOT_FOUND;
use ksym::internals::formats::btf::{KIND_FUNC, KIND_STRUCT};
use ksym::internals::resolve::cache::Cache;
use ksym::internals::resolve::Source;
use ksym::{Table, TableOptions as Options};

/// Module changes are serialised: one test at a time loads or unloads.
static MODULES: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    MODULES.lock().unwrap_or_else(|p| p.into_inner())
}

fn modprobe(args: &[&str]) {
    let out = Command::new("modprobe").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "modprobe {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn loaded(m: &str) -> bool {
    std::fs::read_to_string("/proc/modules")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(' ').next() == Some(m))
}

/// The kernel has loadable modules, this process is root and can read
/// kallsyms' addresses, and `mods` are loaded (modprobe'd when not).
/// Otherwise a SKIP (a failure under KSYM_REQUIRE=modules).
fn ready(mods: &[&str]) -> Option<Vec<u8>> {
    if !Path::new("/proc/modules").exists() {
        skip_need(
            Need::Modules,
            "this kernel has no loadable modules (/proc/modules)",
        );
        return None;
    }
    if !common::root("module loads") {
        return None;
    }
    for m in mods {
        if !loaded(m) {
            modprobe(&[m]);
        }
    }
    common::live_kallsyms()
}

/// On a kernel the kernel table says has no module BTF (5.10): the kernel
/// lists no module's BTF object (BPF_BTF_GET_NEXT_ID), and a lookup of a
/// loaded module's function says the module has no BTF, why, and that
/// kprobes still attach: checked, not on this kernel. `true` when the
/// kernel has module BTF, and the caller goes on.
fn module_btf_or_checked(query: &[u8]) -> bool {
    if common::kernel_has(Need::ModuleBtf) != Some(false) {
        return true;
    }
    // (5.10's BPF_OBJ_GET_INFO_BY_FD of a BTF object has no name and no
    // kernel flag yet: then it lists none at all.)
    let ids = kernel_btf_ids();
    assert!(
        ids.keys().all(|k| k == "vmlinux"),
        "a kernel without module BTF lists BTF objects of modules: {ids:?}"
    );
    let sysfs: Vec<_> = std::fs::read_dir("/sys/kernel/btf")
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        sysfs,
        ["vmlinux"],
        "/sys/kernel/btf of a kernel without module BTF"
    );
    let k = KernelBtf::open(&BtfOptions::default()).unwrap();
    let e = k.find(query, KIND_FUNC).unwrap_err();
    assert_eq!(e.code(), NOT_FOUND, "{e}");
    assert!(
        e.message().contains("is loaded but has no BTF") && e.message().contains("kprobe"),
        "{e}"
    );
    skip_need(
        Need::ModuleBtf,
        &format!(
            "no BTF object for any module, and {}: {e}",
            String::from_utf8_lossy(query)
        ),
    );
    false
}

/// Symbols of loadable modules in a kallsyms text (not the pseudo-modules
/// `bpf`, `__builtin__*`, which come and go on their own).
fn module_syms(text: &[u8]) -> Vec<RefSym> {
    reference(text)
        .into_iter()
        .filter(|r| r.module != b"vmlinux" && r.module != b"bpf" && !r.module.starts_with(b"__"))
        .collect()
}

#[test]
fn live_module_symbols_match_kallsyms() {
    let _g = lock();
    let Some(text) = ready(&["dummy", "veth", "bridge"]) else {
        return;
    };
    let t = Table::open(&Options {
        kallsyms_path: Some("/proc/kallsyms".into()),
        builtin_ranges_path: Some("".into()),
        snapshot: ksym::SnapshotOptions {
            no_snapshot: true,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let refs = module_syms(&text);
    let again = module_syms(&std::fs::read("/proc/kallsyms").unwrap());
    let key = |r: &RefSym| (r.addr, r.ty, r.name.clone(), r.module.clone());
    assert_eq!(
        refs.iter().map(key).collect::<Vec<_>>(),
        again.iter().map(key).collect::<Vec<_>>(),
        "the modules changed while the table was read"
    );
    let mods: HashSet<&[u8]> = refs.iter().map(|r| r.module.as_slice()).collect();
    for m in ["dummy", "veth", "bridge", "stp", "llc"] {
        assert!(mods.contains(m.as_bytes()), "{m} not in /proc/kallsyms");
    }
    // Every distinct address of any symbol, for the size bound.
    let mut all: Vec<u64> = reference(&text).iter().map(|r| r.addr).collect();
    all.sort_unstable();
    all.dedup();
    let mut checked = 0;
    for r in &refs {
        let q = [r.module.as_slice(), b"`", r.name.as_slice()].concat();
        let got = t.lookup_all(&q).unwrap();
        let s = got.iter().find(|s| s.addr == r.addr).unwrap_or_else(|| {
            panic!(
                "{}: kallsyms line {} has {:#x}; the table: {got:?}",
                String::from_utf8_lossy(&q),
                r.line + 1,
                r.addr
            )
        });
        assert_eq!(
            s.module,
            *r.module.as_slice(),
            "{}",
            String::from_utf8_lossy(&q)
        );
        assert_eq!(s.name, *r.name.as_slice());
        assert_eq!(s.ty, r.ty, "{}", String::from_utf8_lossy(&q));
        // A symbol's size never reaches past the next symbol's address.
        let next = all.partition_point(|&a| a <= r.addr);
        if s.size != 0 && next < all.len() {
            assert!(
                r.addr + s.size <= all[next],
                "{}: size {:#x} at {:#x} passes the next symbol at {:#x}",
                String::from_utf8_lossy(&q),
                s.size,
                r.addr,
                all[next]
            );
        }
        // The address maps back to this module, at offset 0; an absolute
        // symbol (5.10's module per-CPU variables: `a`, a per-CPU offset)
        // is found by name only, never by address.
        if r.ty.eq_ignore_ascii_case(&b'a') {
            assert!(
                t.symbolize(r.addr)
                    .map_or(true, |(s, _)| s.name != *r.name.as_slice()),
                "{}: an absolute symbol answered an address",
                String::from_utf8_lossy(&q)
            );
        } else {
            let (back, off) = t.symbolize(r.addr).unwrap();
            assert_eq!((back.addr, off), (r.addr, 0));
            assert_eq!(back.module, *r.module.as_slice(), "{:#x}", r.addr);
        }
        checked += 1;
    }
    // Functions of a module that follow each other: the size is the gap.
    let mut by_addr: BTreeMap<u64, &RefSym> = BTreeMap::new();
    for r in &refs {
        by_addr.entry(r.addr).or_insert(r);
    }
    let pairs: Vec<(&RefSym, &RefSym)> = by_addr
        .values()
        .zip(by_addr.values().skip(1))
        .map(|(a, b)| (*a, *b))
        .filter(|(a, b)| {
            a.module == b.module
                && a.ty.eq_ignore_ascii_case(&b't')
                && b.ty.eq_ignore_ascii_case(&b't')
        })
        .collect();
    assert!(pairs.len() > 100, "only {} text neighbours", pairs.len());
    for (a, b) in pairs {
        let q = [a.module.as_slice(), b"`", a.name.as_slice()].concat();
        let s = t
            .lookup_all(&q)
            .unwrap()
            .into_iter()
            .find(|s| s.addr == a.addr)
            .unwrap();
        assert_eq!(
            s.size,
            b.addr - a.addr,
            "{}: the next function of {} is {} at {:#x}",
            String::from_utf8_lossy(&q),
            String::from_utf8_lossy(&a.module),
            String::from_utf8_lossy(&b.name),
            b.addr
        );
    }
    eprintln!("{checked} module symbols checked");
}

/// bpf(2) with `attr`.
fn bpf(cmd: i32, attr: &mut [u8]) -> i64 {
    // SAFETY: attr is a valid buffer of its length for the kernel to read
    // and write.
    unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len() as u32) }
}

const BPF_OBJ_GET_INFO_BY_FD: i32 = 15;
const BPF_BTF_GET_FD_BY_ID: i32 = 19;
const BPF_BTF_GET_NEXT_ID: i32 = 23;

/// BPF_OBJ_GET_INFO_BY_FD of a BTF fd: (id, name, kernel_btf).
fn btf_info(fd: i32) -> (u32, String, bool) {
    let mut name = [0u8; 64];
    // struct bpf_btf_info: btf, btf_size, id, name, name_len, kernel_btf.
    let mut info = [0u8; 32];
    info[16..24].copy_from_slice(&(name.as_mut_ptr() as u64).to_ne_bytes());
    info[24..28].copy_from_slice(&(name.len() as u32).to_ne_bytes());
    let mut attr = [0u8; 16];
    attr[0..4].copy_from_slice(&(fd as u32).to_ne_bytes());
    attr[4..8].copy_from_slice(&(info.len() as u32).to_ne_bytes());
    attr[8..16].copy_from_slice(&(info.as_mut_ptr() as u64).to_ne_bytes());
    let r = bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr);
    assert_eq!(
        r,
        0,
        "BPF_OBJ_GET_INFO_BY_FD({fd}): {}",
        std::io::Error::last_os_error()
    );
    let id = u32::from_ne_bytes(info[12..16].try_into().unwrap());
    let kernel = u32::from_ne_bytes(info[28..32].try_into().unwrap()) != 0;
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    (
        id,
        String::from_utf8_lossy(&name[..end]).into_owned(),
        kernel,
    )
}

/// The kernel's BTF objects by name, listed here: name -> id.
fn kernel_btf_ids() -> HashMap<String, u32> {
    let mut out = HashMap::new();
    let mut id = 0u32;
    loop {
        let mut attr = [0u8; 12];
        attr[0..4].copy_from_slice(&id.to_ne_bytes());
        if bpf(BPF_BTF_GET_NEXT_ID, &mut attr) != 0 {
            assert_eq!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::ENOENT)
            );
            return out;
        }
        id = u32::from_ne_bytes(attr[4..8].try_into().unwrap());
        let mut attr = [0u8; 12];
        attr[0..4].copy_from_slice(&id.to_ne_bytes());
        let fd = bpf(BPF_BTF_GET_FD_BY_ID, &mut attr);
        if fd < 0 {
            continue; // gone between the two calls
        }
        let (got, name, kernel) = btf_info(fd as i32);
        // SAFETY: fd is ours.
        unsafe { libc::close(fd as i32) };
        assert_eq!(got, id);
        if kernel {
            out.insert(name, id);
        }
    }
}

/// bpftool's id of `name` of `kind` in module `m`'s BTF (split on vmlinux).
fn bpftool_id(m: &str, kind: &str, name: &str) -> u32 {
    let file = Path::new("/sys/kernel/btf").join(m);
    let hits: Vec<u32> = bpftool_dump(&file, Some(Path::new("/sys/kernel/btf/vmlinux")))
        .into_iter()
        .filter(|(_, k, n)| k == kind && n == name)
        .map(|(id, _, _)| id)
        .collect();
    assert!(
        !hits.is_empty(),
        "bpftool: no {kind} {name} in {}",
        file.display()
    );
    hits[0]
}

/// `query` of `kind` is found in module `m`'s BTF object with bpftool's
/// type id, and the object's id and fd are the kernel's object of `m`.
fn check_module_find(k: &KernelBtf, ids: &HashMap<String, u32>, m: &str, query: &str, kind: u32) {
    let f = k.find(query.as_bytes(), kind).unwrap();
    assert_eq!(f.kind, kind, "{query}");
    assert_eq!(k.object_name(f.obj).to_bytes(), m.as_bytes(), "{query}");
    let name = query.split('`').nth(1).unwrap();
    assert_eq!(f.name, *name.as_bytes());
    let kind_name = if kind == KIND_FUNC { "FUNC" } else { "STRUCT" };
    assert_eq!(f.id, bpftool_id(m, kind_name, name), "{query}: type id");
    let id = k.object_id(f.obj);
    assert_eq!(
        Some(&id),
        ids.get(m),
        "{query}: obj_id against BPF_BTF_GET_NEXT_ID"
    );
    let fd = k.object_fd(f.obj).unwrap();
    assert!(fd > 0, "{query}: obj_fd {fd}");
    assert_eq!(
        btf_info(fd),
        (id, m.to_string(), true),
        "{query}: BPF_OBJ_GET_INFO_BY_FD(obj_fd)"
    );
    // The same fd every time.
    assert_eq!(k.object_fd(f.obj).unwrap(), fd);
}

#[test]
fn live_module_btf_objects() {
    let _g = lock();
    if ready(&["dummy", "veth", "bridge"]).is_none() || !module_btf_or_checked(b"veth`veth_xmit") {
        return;
    }
    let k = KernelBtf::open(&BtfOptions::default()).unwrap();
    let ids = kernel_btf_ids();
    for m in ["dummy", "veth", "bridge"] {
        assert!(
            ids.contains_key(m),
            "the kernel has no BTF object {m}: {ids:?}"
        );
    }
    check_module_find(&k, &ids, "dummy", "dummy`dummy_dev_init", KIND_FUNC);
    check_module_find(&k, &ids, "veth", "veth`veth_xmit", KIND_FUNC);
    check_module_find(&k, &ids, "veth", "veth`veth_priv", KIND_STRUCT);
    check_module_find(
        &k,
        &ids,
        "bridge",
        "bridge`net_bridge_mdb_entry",
        KIND_STRUCT,
    );
    check_module_find(&k, &ids, "bridge", "bridge`br_dev_xmit", KIND_FUNC);
    // Unqualified: a function only veth has is found in veth's object.
    let f = k.find(b"veth_xmit", KIND_FUNC).unwrap();
    assert_eq!(k.object_name(f.obj).to_bytes(), b"veth");
    // vmlinux is object 0, id 0 and fd 0 (no attach_btf_obj_fd).
    let v = k.find(b"vfs_read", KIND_FUNC).unwrap();
    assert_eq!((v.obj, k.object_id(0), k.object_fd(0)), (0, 0, Ok(0)));
}

#[test]
fn live_module_reload_under_open_btf() {
    let _g = lock();
    if ready(&["dummy"]).is_none() || !module_btf_or_checked(b"dummy`dummy_xmit") {
        return;
    }
    let k = KernelBtf::open(&BtfOptions::default()).unwrap();
    let obj = k.module_object(b"dummy").unwrap();
    // The id is listed (and the BTF read) before the module goes away.
    let old = k.object_id(obj);
    assert_eq!(Some(&old), kernel_btf_ids().get("dummy"));
    let f = k.find(b"dummy`dummy_xmit", KIND_FUNC).unwrap();
    modprobe(&["-r", "dummy"]);
    assert!(!kernel_btf_ids().contains_key("dummy"));
    modprobe(&["dummy"]);
    let new = *kernel_btf_ids()
        .get("dummy")
        .expect("dummy's BTF object after modprobe");
    assert_ne!(new, old, "the reloaded module has the same BTF id");
    // The stale id is noticed: the fd is the new object's.
    let fd = k
        .object_fd(obj)
        .unwrap_or_else(|e| panic!("obj_fd after reload: {e}"));
    assert_eq!(btf_info(fd), (new, "dummy".to_string(), true));
    assert_eq!(k.object_id(obj), new);
    // And the answers are the module's (same file, same types).
    let g = k.find(b"dummy`dummy_xmit", KIND_FUNC).unwrap();
    assert_eq!((g.obj, g.id, g.kind), (f.obj, f.id, f.kind));
    assert_eq!(g.id, bpftool_id("dummy", "FUNC", "dummy_xmit"));
}

/// dummy's (dummy_xmit, dummy_dev_init) in a kallsyms text, if loaded.
fn dummy_truth(text: &[u8]) -> Option<(u64, u64)> {
    let syms = module_syms(text);
    let at = |n: &[u8]| {
        syms.iter()
            .find(|r| r.module == b"dummy" && r.name == n)
            .map(|r| r.addr)
    };
    Some((at(b"dummy_xmit")?, at(b"dummy_dev_init")?))
}

/// Small modules that take free module space while dummy is out, so that
/// it comes back elsewhere (freed module space is reused at once or only
/// after the kernel's lazy purge: a reload alone may or may not move it).
const FILLERS: &[&str] = &[
    "ifb", "nlmon", "vsockmon", "eql", "vrf", "macvlan", "gtp", "geneve",
];

/// Unloads and loads dummy until it is at other addresses than `prev`,
/// each time with one more filler loaded in between; dummy's new truth
/// from /proc/kallsyms.
fn reload_dummy_elsewhere(
    prev: (u64, u64),
    fillers: &mut std::slice::Iter<'_, &str>,
) -> (u64, u64) {
    loop {
        modprobe(&["-r", "dummy"]);
        let f = fillers.next();
        if let Some(f) = f {
            modprobe(&[f]);
        }
        modprobe(&["dummy"]);
        let now = dummy_truth(&std::fs::read("/proc/kallsyms").unwrap()).unwrap();
        if now != prev {
            return now;
        }
        assert!(
            f.is_some(),
            "dummy came back at {prev:x?} after every filler of {FILLERS:?}"
        );
    }
}

#[test]
fn live_cache_across_module_reloads() {
    let _g = lock();
    let Some(text) = ready(&["dummy"]) else {
        return;
    };
    for f in FILLERS {
        if loaded(f) {
            modprobe(&["-r", f]);
        }
    }
    let mut fillers = FILLERS.iter();
    let cache = Cache::new(Source::proc_kallsyms(), None);
    let queries: [&[u8]; 2] = [b"dummy`dummy_xmit", b"dummy`dummy_dev_init"];
    let first = dummy_truth(&text).unwrap();
    let a = cache.resolve(&queries).unwrap();
    assert_eq!(a, vec![(first.0, 0), (first.1, 0)]);
    let mut truths = vec![first];
    let done = std::sync::atomic::AtomicBool::new(false);
    // Another thread asks all the time while dummy moves twice.
    let answers = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut seen = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                seen.push(cache.resolve(&queries).unwrap());
            }
            seen
        });
        for _ in 0..2 {
            let prev = *truths.last().unwrap();
            truths.push(reload_dummy_elsewhere(prev, &mut fillers));
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().unwrap()
    });
    let distinct: HashSet<(u64, u64)> = truths.iter().copied().collect();
    for a in &answers {
        match a.as_slice() {
            [(x, 0), (d, 0)] => assert!(
                distinct.contains(&(*x, *d)),
                "answer {x:#x} {d:#x} is none of dummy's loads {truths:x?}"
            ),
            [(_, e1), (_, e2)] => assert!(
                *e1 == NOT_FOUND && *e2 == NOT_FOUND,
                "while dummy was out: {a:?}"
            ),
            _ => unreachable!(),
        }
    }
    // After the changes: the kernel's present truth, not a kept answer.
    let last = *truths.last().unwrap();
    assert_eq!(
        cache.resolve(&queries).unwrap(),
        vec![(last.0, 0), (last.1, 0)]
    );
    // A reload no call saw (same name and size in /proc/modules, only the
    // load address differs): the kept answer is dropped too.
    let moved = reload_dummy_elsewhere(last, &mut fillers);
    assert_eq!(
        cache.resolve(&queries).unwrap(),
        vec![(moved.0, 0), (moved.1, 0)],
        "dummy moved from {last:x?} unseen"
    );
    eprintln!(
        "{} answers over {} loads of dummy: {:?}",
        answers.len(),
        truths.len() + 1,
        cache.stats()
    );
    for f in FILLERS {
        if loaded(f) {
            modprobe(&["-r", f]);
        }
    }
}
