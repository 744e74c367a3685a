//! Tests of the BPF object layer on the committed fixtures (c-tests/bpf).

use crate::bpf::insn::{self, Insn};
use crate::bpf::object::*;
use crate::error::{AMBIGUOUS, FORMAT, RESTRICTED, UNSUPPORTED};
use crate::formats::btf::{self, Btf};
use crate::resolve::cache::Cache;
use crate::resolve::Source;

fn fixture(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("c-tests/bpf")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn open(name: &str) -> Object {
    Object::parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A kallsyms file for resolving the fixtures' externs, and a cache over it.
struct Kernel {
    dir: std::path::PathBuf,
}

impl Kernel {
    fn new(text: &str) -> Kernel {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ksym-bpf-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("kallsyms"), text).unwrap();
        std::fs::write(dir.join("modules"), "").unwrap();
        Kernel { dir }
    }
    fn cache(&self) -> Cache {
        Cache::new(
            Source {
                kallsyms_path: Some(self.dir.join("kallsyms")),
                builtin_ranges: None,
            },
            Some(self.dir.join("modules")),
        )
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const KERNEL: &str =
    "ffffffff81000000 T _text\nffffffff81000100 T schedule\nffffffffc0000000 t other\t[evil]\n";
/// `_text` also in a module: unqualified, it is ambiguous.
const KERNEL_DUP: &str = "ffffffff81000000 T _text\nffffffffc0000000 t _text\t[evil]\n";

fn ready(o: &mut Object, k: &Kernel) {
    for i in 0..o.maps().len() {
        o.set_map_fd(i, 100 + i as i32).unwrap();
    }
    o.resolve_ksyms(Some(&k.cache())).unwrap();
    o.relocate().unwrap();
}

#[test]
fn programs_aliases_maps_externs() {
    let o = open("aliases.bpf.o");
    assert_eq!(o.license().to_bytes(), b"GPL");
    let names: Vec<(&[u8], usize)> = o
        .programs()
        .iter()
        .map(|p| (p.name.to_bytes(), p.alias_of))
        .collect();
    assert_eq!(
        names,
        [
            (&b"prog"[..], 0),
            (b"prog_alias_one", 0),
            (b"prog_alias_two", 0),
            (b"second", 3)
        ]
    );
    assert_eq!(o.programs()[0].section.to_bytes(), b"socket");
    assert_eq!(o.programs()[3].section.to_bytes(), b"socket/second");
    assert_eq!(o.find_program(b"prog_alias_two").unwrap(), 2);
    let e = o.find_program(b"nope").unwrap_err();
    assert!(e.message().contains("prog_alias_one"), "{e}");

    type MapRow<'a> = (&'a [u8], u32, u32, u32, u32, u32);
    let maps: Vec<MapRow<'_>> = o
        .maps()
        .iter()
        .map(|m| {
            (
                m.name.to_bytes(),
                m.map_type,
                m.key_size,
                m.value_size,
                m.max_entries,
                m.map_flags,
            )
        })
        .collect();
    // Each data section holds a global variable (`seed`, `magic`,
    // `counter`): BPF_F_MMAPABLE (0x400), and `.rodata` BPF_F_RDONLY_PROG
    // (0x80), as libbpf sets them.
    assert_eq!(
        maps,
        [
            (&b"results"[..], 2, 4, 8, 16, 0),
            (b".data", 2, 4, 8, 1, 0x400),
            (b".rodata", 2, 4, 8, 1, 0x480),
            (b".bss", 2, 4, 8, 1, 0x400),
        ]
    );
    assert_eq!(
        o.maps()[1].initial_value.as_deref(),
        Some(&0x1234u64.to_le_bytes()[..])
    );
    assert_eq!(
        o.maps()[2].initial_value.as_deref(),
        Some(&0xfeedbeefu64.to_le_bytes()[..])
    );
    assert_eq!(o.maps()[3].initial_value, None, ".bss has no contents");

    let ext: Vec<(&[u8], bool)> = o
        .externs()
        .iter()
        .map(|e| (e.name.to_bytes(), e.weak))
        .collect();
    assert_eq!(
        ext,
        [
            (&b"_text"[..], false),
            (b"libksym_no_such_symbol", true),
            (b"vmlinux`_text", false)
        ]
    );
}

#[test]
fn relocations_in_final_indices_shared_by_aliases() {
    let o = open("aliases.bpf.o");
    let r0 = o.relocs(0).unwrap();
    assert_eq!(
        r0,
        o.relocs(1).unwrap(),
        "an alias reports its target's relocations"
    );
    assert_eq!(r0, o.relocs(2).unwrap());
    let n = o.programs()[0].insn_cnt;
    let kinds = |k: RelocKind| r0.iter().filter(|r| r.kind == k).count();
    assert_eq!(
        (
            kinds(RelocKind::Ksym),
            kinds(RelocKind::MapFd),
            kinds(RelocKind::Call),
            kinds(RelocKind::Func)
        ),
        (3, 8, 2, 1)
    );
    // Subprograms come after the program, each once: add_seed first (the
    // first call), then sum_cb (the callback), then global_double.
    let call = |name: &[u8]| {
        r0.iter()
            .find(|r| o.reloc_symbol(r).to_bytes() == name)
            .unwrap()
            .target
    };
    assert_eq!(call(b"add_seed"), n);
    assert!(call(b"sum_cb") > call(b"add_seed") && call(b"global_double") > call(b"sum_cb"));
    // add_seed reads .data: a MapValue relocation inside the appended code.
    let mv: Vec<&Reloc> = r0
        .iter()
        .filter(|r| r.kind == RelocKind::MapValue && r.insn_idx >= n)
        .collect();
    assert!(mv
        .iter()
        .all(|r| o.reloc_symbol(r).to_bytes() == b".data" && r.target == 1 && r.addend == 0));
    assert_eq!(mv.len(), 2, "add_seed and global_double each load `seed`");
    // The second program gets its own copy of add_seed.
    let r3 = o.relocs(3).unwrap();
    assert_eq!(
        r3.iter()
            .find(|r| r.kind == RelocKind::Call)
            .unwrap()
            .target,
        o.programs()[3].insn_cnt
    );
}

#[test]
fn relocate_patches_every_kind_once_for_all_aliases() {
    let mut o = open("aliases.bpf.o");
    let k = Kernel::new(KERNEL);
    // Before relocation there are no final instructions.
    assert_eq!(o.insns(0).unwrap_err().code(), crate::error::INVALID);
    ready(&mut o, &k);
    let insns = o.insns(0).unwrap();
    assert!(
        std::ptr::eq(insns, o.insns(1).unwrap()),
        "one copy for the target and its aliases"
    );
    assert!(std::ptr::eq(insns, o.insns(2).unwrap()));
    for r in o.relocs(0).unwrap() {
        let (a, b) = (insns[r.insn_idx], insns[r.insn_idx + 1]);
        match r.kind {
            RelocKind::MapFd => assert_eq!(
                (a.src_reg(), a.imm, b.imm),
                (insn::PSEUDO_MAP_FD, 100 + r.target as i32, 0)
            ),
            RelocKind::MapValue => {
                assert_eq!(
                    (a.src_reg(), a.imm, b.imm as i64),
                    (insn::PSEUDO_MAP_VALUE, 100 + r.target as i32, r.addend)
                )
            }
            RelocKind::Ksym => {
                let want: u64 = if o.reloc_symbol(r).to_bytes() == b"libksym_no_such_symbol" {
                    0
                } else {
                    0xffffffff81000000
                };
                assert_eq!(a.src_reg(), 0);
                assert_eq!(
                    (a.imm as u32 as u64) | ((b.imm as u32 as u64) << 32),
                    want,
                    "{:?}",
                    o.reloc_symbol(r)
                );
            }
            RelocKind::Call => {
                assert!(a.is_pseudo_call());
                assert_eq!(r.insn_idx as i64 + 1 + a.imm as i64, r.target as i64);
            }
            RelocKind::Func => {
                assert_eq!(a.src_reg(), insn::PSEUDO_FUNC);
                assert_eq!(r.insn_idx as i64 + 1 + a.imm as i64, r.target as i64);
            }
            k => panic!("aliases.bpf.o has no {k:?} relocation"),
        }
    }
    // Externs: `_text`, the weak one (0), `vmlinux`_text` through the asm label.
    let ext: Vec<(bool, u64)> = o.externs().iter().map(|e| (e.resolved, e.addr)).collect();
    assert_eq!(
        ext,
        [
            (true, 0xffffffff81000000),
            (false, 0),
            (true, 0xffffffff81000000)
        ]
    );
    // Relocating again (new fds) is fine.
    o.set_map_fd(0, 7).unwrap();
    o.relocate().unwrap();
    let r = o
        .relocs(0)
        .unwrap()
        .iter()
        .find(|r| r.kind == RelocKind::MapFd)
        .unwrap()
        .insn_idx;
    assert_eq!(o.insns(0).unwrap()[r].imm, 7);
}

#[test]
fn func_and_line_info_follow_the_final_layout() {
    let o = open("aliases.bpf.o");
    let words = |b: &[u8]| -> Vec<u32> {
        b.chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let fi = words(o.func_info(0).unwrap());
    assert_eq!(fi.len(), 8, "prog and three subprograms");
    assert_eq!(fi[0], 0, "the program's own FUNC first, at 0");
    let calls: Vec<usize> = o
        .relocs(0)
        .unwrap()
        .iter()
        .filter(|r| matches!(r.kind, RelocKind::Call | RelocKind::Func))
        .map(|r| r.target)
        .collect();
    for (k, pair) in fi.chunks(2).enumerate().skip(1) {
        assert!(
            calls.contains(&(pair[0] as usize)),
            "func_info {k} at a subprogram start"
        );
    }
    let b = Btf::parse(o.btf().unwrap().to_vec()).unwrap();
    for pair in fi.chunks(2) {
        assert_eq!(b.ty(pair[1]).unwrap().kind(), btf::KIND_FUNC);
    }
    let li = words(o.line_info(0).unwrap());
    assert!(li.len() >= 16);
    let n = o.programs()[0].insn_cnt as u32;
    assert!(
        li.chunks(4).any(|r| r[0] >= n),
        "line info of appended subprograms"
    );
    assert!(li.chunks(4).all(|r| r[0] < 137));
    assert_eq!(
        o.func_info(1).unwrap(),
        o.func_info(0).unwrap(),
        "aliases share the records"
    );
}

#[test]
fn loadable_btf_has_the_fixups() {
    let o = open("aliases.bpf.o");
    let b = Btf::parse(o.btf().unwrap().to_vec()).unwrap();
    let ds = |name: &[u8]| b.ty(b.find_datasec(name).unwrap()).unwrap();
    // Sizes from the ELF, offsets sorted.
    assert_eq!(ds(b".data").size(), 8);
    assert_eq!(ds(b".maps").size(), 32);
    // .ksyms: allocated 4-byte ints, the kernel refuses extern VARs.
    let k = ds(b".ksyms");
    assert_eq!(k.size(), 4 * k.vlen() as u32);
    for (i, (var, off, size)) in k.datasec().enumerate() {
        assert_eq!((off, size), (4 * i as u32, 4));
        let t = b.ty(var).unwrap();
        assert_eq!(t.kind(), btf::KIND_VAR);
        assert_eq!(t.var_linkage(), btf::VAR_GLOBAL_ALLOCATED);
        assert_eq!(b.size_of(t.type_id()).unwrap(), Some(4));
    }
    assert!(!b.own_ids().any(|id| {
        let t = b.ty(id).unwrap();
        t.kind() == btf::KIND_VAR && t.var_linkage() == btf::VAR_GLOBAL_EXTERN
    }));
}

#[test]
fn object_without_btf() {
    let mut o = open("nobtf.bpf.o");
    assert_eq!(o.btf().unwrap_err().code(), crate::error::NOT_FOUND);
    assert_eq!(
        o.externs()[0].name.to_bytes(),
        b"_text",
        "an extern only the ELF describes"
    );
    let k = Kernel::new(KERNEL);
    ready(&mut o, &k);
    assert_eq!(
        o.insns(0).unwrap().len(),
        o.programs()[0].insn_cnt + 5,
        "triple appended"
    );
}

#[test]
fn many_aliases_share_one_copy() {
    let mut o = open("many_aliases.bpf.o");
    assert_eq!(o.programs().len(), 501);
    assert!(o.programs().iter().all(|p| p.alias_of == 0));
    assert_eq!(o.externs().len(), 1);
    let k = Kernel::new(KERNEL);
    ready(&mut o, &k);
    let first = o.insns(0).unwrap().as_ptr();
    assert!((0..501).all(|i| o.insns(i).unwrap().as_ptr() == first));
    assert_eq!(o.layouts.len(), 1);
}

#[test]
fn relocate_needs_fds_and_resolved_externs() {
    let mut o = open("aliases.bpf.o");
    let e = o.relocate().unwrap_err();
    assert!(e.message().contains("map `results` has no fd"), "{e}");
    assert!(e.message().contains("program `prog`, instruction"), "{e}");
    for i in 0..o.maps().len() {
        o.set_map_fd(i, 3).unwrap();
    }
    let e = o.relocate().unwrap_err();
    assert!(e.message().contains("resolve_ksyms"), "{e}");
    assert!(o.set_map_fd(99, 3).is_err());
    assert!(o.set_map_fd(0, -1).is_err());
}

#[test]
fn extern_resolution_errors() {
    let mut o = open("aliases.bpf.o");
    // _text missing: a strong extern, named, with near matches.
    let k = Kernel::new("ffffffff81000000 T _text.cold\nffffffff81000100 T schedule\n");
    let e = o.resolve_ksyms(Some(&k.cache())).unwrap_err();
    assert_eq!(e.code(), crate::error::NOT_FOUND);
    assert!(e.message().contains("extern `_text`"), "{e}");
    assert!(e.message().contains("_text.cold"), "{e}");
    // Ambiguous: `_text` in vmlinux and in a module, no asm label.
    let mut n = open("nobtf.bpf.o");
    let k = Kernel::new(KERNEL_DUP);
    let e = n.resolve_ksyms(Some(&k.cache())).unwrap_err();
    assert_eq!(e.code(), AMBIGUOUS);
    assert!(e.message().contains("asm label"), "{e}");
    // Restricted: an error, since some extern is strong.
    let k = Kernel::new("0000000000000000 T _text\n");
    let e = n.resolve_ksyms(Some(&k.cache())).unwrap_err();
    assert_eq!(e.code(), RESTRICTED);
}

/// Builds an ELF by hand: a header, sections, symbols and relocations.
fn mutate(data: &[u8], f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut d = data.to_vec();
    f(&mut d);
    d
}

fn u16_at(d: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([d[o], d[o + 1]])
}
fn u32_at(d: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(d[o..o + 4].try_into().unwrap())
}
fn u64_at(d: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(d[o..o + 8].try_into().unwrap())
}

/// (file offset, size) of the section named `name`.
fn section(d: &[u8], name: &str) -> (usize, usize) {
    let shoff = u64_at(d, 0x28) as usize;
    let shentsize = u16_at(d, 0x3a) as usize;
    let shnum = u16_at(d, 0x3c) as usize;
    let shstrndx = u16_at(d, 0x3e) as usize;
    let sh = |i: usize| shoff + i * shentsize;
    let stroff = u64_at(d, sh(shstrndx) + 0x18) as usize;
    for i in 0..shnum {
        let n = u32_at(d, sh(i)) as usize;
        let s = &d[stroff + n..];
        let end = s.iter().position(|&b| b == 0).unwrap();
        if &s[..end] == name.as_bytes() {
            return (
                u64_at(d, sh(i) + 0x18) as usize,
                u64_at(d, sh(i) + 0x20) as usize,
            );
        }
    }
    panic!("no section {name}");
}

#[test]
fn malformed_objects_are_errors_not_crashes() {
    let good = fixture("aliases.bpf.o");
    let expect = |d: &[u8], code: i32, needle: &str| {
        let e = Object::parse(d)
            .err()
            .unwrap_or_else(|| panic!("accepted: {needle}"));
        assert_eq!(e.code(), code, "{needle}: {e}");
        assert!(e.message().contains(needle), "{needle}: {e}");
    };
    expect(&good[..10], FORMAT, "not an ELF");
    expect(&good[..200], FORMAT, "malformed ELF");
    expect(&mutate(&good, |d| d[18] = 62), UNSUPPORTED, "machine 62");
    expect(&mutate(&good, |d| d[4] = 1), UNSUPPORTED, "32-bit");
    expect(&mutate(&good, |d| d[5] = 2), UNSUPPORTED, "big-endian");
    expect(&mutate(&good, |d| d[16] = 2), UNSUPPORTED, "relocatable");
    // A relocation whose symbol index is out of range.
    let (rel, _) = section(&good, ".relsocket");
    expect(
        &mutate(&good, |d| {
            d[rel + 12..rel + 16].copy_from_slice(&9999u32.to_le_bytes())
        }),
        FORMAT,
        "symbol index 9999",
    );
    // A relocation on an instruction that is not ld_imm64 (move it by one insn).
    expect(
        &mutate(&good, |d| {
            let off = u64_at(d, rel) + 8;
            d[rel..rel + 8].copy_from_slice(&off.to_le_bytes())
        }),
        FORMAT,
        "not ld_imm64",
    );
    // A relocation offset past the section.
    expect(
        &mutate(&good, |d| {
            d[rel..rel + 8].copy_from_slice(&0x100000u64.to_le_bytes())
        }),
        FORMAT,
        "not an instruction",
    );
    // An unknown relocation type.
    expect(
        &mutate(&good, |d| d[rel + 8] = 77),
        FORMAT,
        "relocation type 77",
    );
    // Broken BTF.
    let (btf_off, _) = section(&good, ".BTF");
    expect(&mutate(&good, |d| d[btf_off] = 0), FORMAT, ".BTF");
}

#[test]
fn random_corruption_never_panics() {
    let objects: Vec<Vec<u8>> = ["aliases.bpf.o", "nobtf.bpf.o", "core.bpf.o"]
        .iter()
        .map(|f| fixture(f))
        .collect();
    let mut x = 0x6828ed17a7150dcdu64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut accepted = 0;
    let rounds: usize = std::env::var("KSYM_FUZZ_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3000);
    for round in 0..rounds {
        let base = &objects[round % objects.len()];
        let mut d = base.clone();
        // Half the time, aim at the parts with the most structure.
        let (lo, len) = if round % 2 == 0 && round % objects.len() == 0 {
            let targets = [".BTF", ".BTF.ext", ".relsocket", ".symtab", ".rel.text"];
            section(base, targets[(rnd() as usize) % targets.len()])
        } else {
            (0, d.len())
        };
        for _ in 0..1 + rnd() % 4 {
            let i = lo + (rnd() as usize) % len.max(1);
            if i < d.len() {
                d[i] = rnd() as u8;
            }
        }
        if rnd() % 8 == 0 {
            d.truncate((rnd() as usize) % d.len());
        }
        let r = std::panic::catch_unwind(|| {
            if let Ok(mut o) = Object::parse(&d) {
                for i in 0..o.maps().len() {
                    let _ = o.set_map_fd(i, 3);
                }
                for p in 0..o.programs().len() {
                    let _ = o.relocs(p);
                    let _ = o.func_info(p);
                }
                for e in &mut o.externs {
                    e.addr = 0x1122334455667788;
                }
                o.stage.ksyms_resolved();
                let _ = o.relocate();
                true
            } else {
                false
            }
        });
        match r {
            Ok(ok) => accepted += ok as usize,
            Err(_) => panic!("round {round}: a panic on corrupted input"),
        }
    }
    assert!(
        accepted > 100,
        "most single-byte changes leave a valid object ({accepted})"
    );
}

#[test]
fn insn_helpers() {
    let i = Insn::from_bytes(&[insn::LD_IMM64, 0x21, 0, 0, 1, 0, 0, 0]);
    assert_eq!((i.src_reg(), i.regs & 0xf, i.imm), (2, 1, 1));
}

/// `Object::open` reads a `-g` object without its DWARF (nor the
/// relocations of .BTF.ext), into an image with the same sections, whose
/// used ones hold the file's bytes and unused ones nothing; and the result
/// is the same as from the whole file and from the same object stripped by
/// llvm-strip (the committed aliases.bpf.o: `make bpf-objects` strips
/// aliases.dwarf.bpf.o's twin).
#[test]
fn open_skips_dwarf_and_matches_the_stripped_object() {
    use ::object::read::elf::{FileHeader, SectionHeader};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("c-tests/bpf")
        .join("aliases.dwarf.bpf.o");
    let whole = fixture("aliases.dwarf.bpf.o");
    let read = crate::bpf::elf::file::read_object(&path).unwrap();
    let en = ::object::LittleEndian;
    let sections = |b: &[u8]| -> Vec<(Vec<u8>, u32, Vec<u8>)> {
        let hdr = ::object::elf::FileHeader64::<::object::LittleEndian>::parse(b).unwrap();
        let table = hdr.sections(en, b).unwrap();
        table
            .iter()
            .map(|sh| {
                let name = table.section_name(en, sh).unwrap().to_vec();
                let data = sh.data(en, b).unwrap().to_vec();
                (name, sh.sh_type(en), data)
            })
            .collect()
    };
    let (w, r) = (sections(&whole), sections(&read));
    assert_eq!(w.len(), r.len());
    let (mut skipped, mut kept) = (0, 0);
    for ((name, ty, data), (rname, rty, rdata)) in w.iter().zip(&r) {
        let shown = String::from_utf8_lossy(name);
        assert_eq!((name, ty), (rname, rty), "{shown}");
        if crate::bpf::elf::file::unused(name) {
            assert!(rdata.is_empty(), "{shown} was read");
            skipped += data.len();
        } else {
            assert_eq!(data, rdata, "{shown} differs");
            kept += 1;
        }
    }
    assert!(
        skipped > whole.len() / 4,
        "DWARF skipped: {skipped} of {} bytes",
        whole.len()
    );
    assert!(kept >= 8);
    // The image holds what was kept and little else (headers, padding).
    assert!(
        read.len() <= whole.len() - skipped + 8 * r.len(),
        "{} of {} bytes",
        read.len(),
        whole.len()
    );

    let k = Kernel::new(KERNEL);
    let mut objs = [
        Object::open(&path).unwrap(),
        Object::parse(&whole).unwrap(),
        open("aliases.bpf.o"),
    ];
    for o in &mut objs {
        ready(o, &k);
    }
    let [a, b, c] = &objs;
    assert_eq!(a.programs().len(), 4);
    for other in [b, c] {
        assert_eq!(a.programs().len(), other.programs().len());
        for p in 0..a.programs().len() {
            assert_eq!(a.insns(p).unwrap(), other.insns(p).unwrap());
            assert_eq!(a.relocs(p).unwrap(), other.relocs(p).unwrap());
            assert_eq!(a.func_info(p).unwrap(), other.func_info(p).unwrap());
            assert_eq!(a.line_info(p).unwrap(), other.line_info(p).unwrap());
            assert!(!a.line_info(p).unwrap().is_empty());
        }
    }
}

/// LINUX_KERNEL_VERSION from each source libbpf reads, values worked out
/// by hand (KERNEL_VERSION(a, b, c) = a << 16 | b << 8 | min(c, 255)).
#[test]
fn kernel_version_from_ubuntu_debian_and_plain_releases() {
    use crate::bpf::link::kconfig_values::running_kernel_version as v;
    // Debian 12's stock kernel (the 6.1 guest): the release says 6.1.0,
    // the kernel checks 6.1.192.
    let debian = b"#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)";
    assert_eq!(v(None, b"6.1.0-57-amd64", debian), 6 << 16 | 1 << 8 | 192);
    // Ubuntu: /proc/version_signature's third word, first.
    let ubuntu = b"Ubuntu 5.4.0-12.15-generic 5.4.8\n";
    assert_eq!(
        v(Some(ubuntu), b"5.4.0-12-generic", b"#13-Ubuntu SMP"),
        5 << 16 | 4 << 8 | 8
    );
    assert_eq!(v(Some(ubuntu), b"x", debian), 5 << 16 | 4 << 8 | 8);
    // A signature that does not parse falls through to Debian, then uname -r.
    assert_eq!(
        v(Some(b"garbage"), b"6.1.0-57-amd64", debian),
        6 << 16 | 1 << 8 | 192
    );
    assert_eq!(
        v(Some(b""), b"6.18.44-fc-v857", b"#1 SMP"),
        6 << 16 | 18 << 8 | 44
    );
    // Sublevels past 255 saturate, as the kernel's KERNEL_VERSION does.
    assert_eq!(v(None, b"4.19.300", b"#1 SMP"), 4 << 16 | 19 << 8 | 255);
    assert_eq!(
        v(None, b"4.9.0-13-amd64", b"#1 SMP Debian 4.9.337-1"),
        4 << 16 | 9 << 8 | 255
    );
    assert_eq!(v(None, b"junk", b"#1 SMP Debian x"), 0);
}

/// A tracepoint section's text: category and name split at the first `/`
/// (libbpf's attach_tp), no module whatever the name holds.
#[test]
fn tracepoint_text_has_no_module() {
    use crate::bpf::object::attach::Named;
    let s = |c: Option<&std::ffi::CStr>| c.map(|c| c.to_str().unwrap().to_string());
    let n = Named::tracepoint(b"cat/na`me/x");
    assert_eq!(
        (s(n.category.as_deref()), s(Some(&n.name)), n.module),
        (Some("cat".into()), Some("na`me/x".into()), None)
    );
    let n = Named::tracepoint(b"sched_switch");
    assert_eq!(
        (n.category, n.name.to_str().unwrap()),
        (None, "sched_switch")
    );
}
