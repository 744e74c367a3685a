//! Hand-built BTF: every view, split ids and strings, malformed input.

use super::*;

pub use super::write::Builder;

fn sample() -> Builder {
    let mut b = Builder::new();
    let int = b.t("int", KIND_INT, 0, false, 4, &[(INT_SIGNED << 24) | 32]); // 1
    let ptr = b.t("", KIND_PTR, 0, false, 3, &[]); // 2 -> 3 (forward reference)
    let m1 = b.s("a");
    let m2 = b.s("next");
    let m3 = b.s("bits");
    let st = b.t(
        "node",
        KIND_STRUCT,
        3,
        true,
        16,
        &[m1, int, 0, m2, ptr, 64, m3, int, (3 << 24) | 96],
    ); // 3
    let td = b.t("node_t", KIND_TYPEDEF, 0, false, st, &[]); // 4
    let c = b.t("", KIND_CONST, 0, false, td, &[]); // 5
    let arr = b.t("", KIND_ARRAY, 0, false, 0, &[c, int, 10]); // 6
    let e1 = b.s("NEG");
    b.t("sign", KIND_ENUM, 1, true, 4, &[e1, (-5i32) as u32]); // 7
    let proto = b.t("", KIND_FUNC_PROTO, 1, false, int, &[0, ptr]); // 8
    b.t("walk", KIND_FUNC, 1, false, proto, &[]); // 9
    let e2 = b.s("BIG");
    b.t("big", KIND_ENUM64, 1, false, 8, &[e2, 1, 2]); // 10
    let _ = arr;
    b
}

#[test]
fn reads_every_kind_of_view() {
    let btf = Btf::parse(sample().bytes()).unwrap();
    assert_eq!(btf.end_id(), 11);
    assert_eq!(btf.name(3), b"node");
    let st = btf.ty(3).unwrap();
    assert_eq!((st.kind(), st.size(), st.kflag()), (KIND_STRUCT, 16, true));
    let m: Vec<Member> = st.members().collect();
    assert_eq!(
        m[1],
        Member {
            name_off: m[1].name_off,
            ty: 2,
            bit_offset: 64,
            bitfield_size: 0
        }
    );
    assert_eq!((m[2].bit_offset, m[2].bitfield_size), (96, 3));
    assert_eq!(btf.str(m[2].name_off), b"bits");
    assert_eq!(btf.resolve(5).unwrap(), 3, "const -> typedef -> struct");
    assert_eq!(btf.size_of(6).unwrap(), Some(160), "10 x const node_t");
    assert_eq!(btf.size_of(2).unwrap(), Some(8));
    assert_eq!(btf.size_of(9).unwrap(), None, "a function has no size");
    let e: Vec<Enumerator> = btf.ty(7).unwrap().enumerators().collect();
    assert_eq!(e[0].value as i64, -5);
    let e: Vec<Enumerator> = btf.ty(10).unwrap().enumerators().collect();
    assert_eq!(e[0].value, (2 << 32) | 1);
    assert_eq!(btf.ty(1).unwrap().int(), (INT_SIGNED, 0, 32));
    assert_eq!(
        btf.ty(8).unwrap().params().collect::<Vec<_>>(),
        vec![(0, 2)]
    );
    assert!(btf.ty(0).is_none() && btf.ty(11).is_none());
    assert_eq!(btf.cstr(btf.ty(3).unwrap().name_off), Some(&b"node\0"[..]));
}

#[test]
fn split_btf_continues_ids_and_strings() {
    let base = Arc::new(Btf::parse(sample().bytes()).unwrap());
    let mut s = Builder::split(&base);
    let mo = s.s("mod_only");
    let id = s.t("mod_t", KIND_TYPEDEF, 0, false, 3, &[]);
    s.t("", KIND_PTR, 0, false, id, &[]);
    let _ = mo;
    let split = Btf::parse_split(s.bytes(), base.clone()).unwrap();
    assert_eq!((split.first_id(), split.end_id()), (11, 13));
    assert_eq!(split.name(11), b"mod_t");
    assert_eq!(split.name(3), b"node", "base types through the split");
    assert_eq!(split.resolve(11).unwrap(), 3);
    assert_eq!(split.size_of(12).unwrap(), Some(8));
    // Without its base the same bytes are refused.
    assert!(Btf::parse(s.bytes()).is_err());
}

#[test]
fn malformed_btf_is_refused_with_a_reason() {
    let good = sample().bytes();
    for cut in [0, 1, 23, 24, 30, good.len() - 1] {
        let e = Btf::parse(good[..cut].to_vec())
            .err()
            .unwrap_or_else(|| panic!("cut {cut}"));
        assert_eq!(e.code(), crate::error::FORMAT, "{cut}: {e}");
    }
    let check = |b: &Builder, want: &str| {
        let e = Btf::parse(b.bytes()).expect_err(want);
        assert!(e.message().contains(want), "{want}: {e}");
    };
    // Type 1 is 4 words, type 2 is 3, type 3 is 12: type 4's target is
    // word 4 + 3 + 12 + 2.
    let mut b2 = sample();
    b2.types[4 + 3 + 12 + 2] = 99;
    check(&b2, "refers to type 99");
    let mut b3 = sample();
    b3.types[1] = 25 << 24;
    check(&b3, "unknown kind 25");
    let mut b4 = sample();
    b4.types[0] = 1 << 30;
    check(&b4, "name offset");
    let mut b5 = sample();
    b5.types[4 + 3 + 1] = (KIND_STRUCT << 24) | 200;
    check(&b5, "truncated");
    // A loop of typedefs: parses, but resolving it is an error.
    let mut l = Builder::new();
    l.t("a", KIND_TYPEDEF, 0, false, 2, &[]);
    l.t("b", KIND_TYPEDEF, 0, false, 1, &[]);
    let btf = Btf::parse(l.bytes()).unwrap();
    assert!(btf.resolve(1).unwrap_err().message().contains("loop"));
    assert!(btf.size_of(2).is_err());
    // An array of itself.
    let mut a = Builder::new();
    a.t("int", KIND_INT, 0, false, 4, &[32]);
    a.t("", KIND_ARRAY, 0, false, 0, &[2, 1, 2]);
    let btf = Btf::parse(a.bytes()).unwrap();
    assert_eq!(btf.size_of(2).unwrap_err().code(), crate::error::FORMAT);
    // Header lengths past the end.
    let mut h = good.clone();
    h[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(Btf::parse(h)
        .unwrap_err()
        .message()
        .contains("string section"));
    let mut be = good.clone();
    be.swap(0, 1);
    assert!(Btf::parse(be).unwrap_err().message().contains("big-endian"));
}

#[test]
fn kind_names_follow_the_kind_numbers() {
    let s = |k| kind_str(k).unwrap().to_str().unwrap();
    assert_eq!(s(0), "UNKNOWN");
    assert_eq!(s(KIND_INT), "INT");
    assert_eq!(s(KIND_STRUCT), "STRUCT");
    assert_eq!(s(KIND_FUNC_PROTO), "FUNC_PROTO");
    assert_eq!(s(KIND_DECL_TAG), "DECL_TAG");
    assert_eq!(s(KIND_ENUM64), "ENUM64");
    assert_eq!(kind_str(KIND_MAX + 1), None);
    assert_eq!(kind_name(KIND_MAX + 1), "?");
}

/// A name that runs to the end of a string section not ended by a NUL:
/// libbpf and the kernel (btf_parse_str_sec) refuse the blob (found by
/// fuzz/fuzz_targets/btf.rs: the name `license` followed by 0xe7).
#[test]
fn string_section_must_end_with_nul() {
    let int = |name: u32| [name, 1 << 24, 4, 32].map(u32::to_le_bytes).concat();
    let good = blob(0, &int(1), b"\0license\0");
    assert_eq!(Btf::parse(good).unwrap().name(1), b"license");
    let e = Btf::parse(blob(0, &int(1), b"\0license\xe7")).unwrap_err();
    assert!(
        e.message().contains("does not end with a NUL"),
        "{}",
        e.message()
    );
}

/// A hand-made BTF written with [`BtfWriter`]: int, `int (*)[5]`, a map
/// struct, a VAR, a DATASEC.
fn written() -> BtfWriter {
    let mut b = BtfWriter::new();
    assert_eq!(b.int32(), 0, "no INT of 32 bits, none added");
    let name_off = b.add_string(b"int");
    let int = b.add_type(Type {
        name_off,
        info: KIND_INT << 24,
        size_type: 4,
        extra: Extra::Int((INT_SIGNED << 24) | 32),
    }); // 1
    let idx = b.add_string(b"__ARRAY_SIZE_TYPE__");
    let arr_idx = b.add_type(Type {
        name_off: idx,
        info: KIND_INT << 24,
        size_type: 4,
        extra: Extra::Int(32),
    }); // 2
    let arr = b.add_type(Type {
        name_off: 0,
        info: KIND_ARRAY << 24,
        size_type: 0,
        extra: Extra::Array {
            ty: int,
            index_ty: arr_idx,
            nelems: 5,
        },
    }); // 3
    let ptr = b.add_type(Type {
        name_off: 0,
        info: KIND_PTR << 24,
        size_type: arr,
        extra: Extra::None,
    }); // 4
    let (ft, fm) = (b.add_string(b"type"), b.add_string(b"max_entries"));
    let st = b.add_type(Type {
        name_off: 0,
        info: (KIND_STRUCT << 24) | 2,
        size_type: 16,
        extra: Extra::Members(vec![[ft, ptr, 0], [fm, ptr, 64]]),
    }); // 5
    let vn = b.add_string(b"my_map");
    let var = b.add_type(Type {
        name_off: vn,
        info: KIND_VAR << 24,
        size_type: st,
        extra: Extra::Var {
            linkage: VAR_GLOBAL_ALLOCATED,
        },
    }); // 6
    let sn = b.add_string(b".maps");
    b.add_type(Type {
        name_off: sn,
        info: (KIND_DATASEC << 24) | 1,
        size_type: 16,
        extra: Extra::Datasec(vec![[var, 0, 16]]),
    }); // 7
    b
}

/// The write half gives back what the read half parsed, byte for byte
/// (the loadable BTF is an edited copy of the object's, and the libbpf
/// oracle tests compare it whole); what it writes the reader reads.
#[test]
fn the_writer_round_trips_through_the_reader() {
    let w = written();
    let bytes = w.to_bytes();
    let r = Btf::parse(bytes.clone()).unwrap();
    let back = BtfWriter::from_btf(&r).unwrap();
    assert_eq!(back, w);
    assert_eq!(back.to_bytes(), bytes);
    assert_eq!(r.find_datasec(b".maps"), Some(7));
    assert!(r.datasec_has_global(7));
    assert_eq!(r.ids_of_kind(KIND_INT).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(r.size_of(3).unwrap(), Some(20), "int[5]");
    assert_eq!(r.name(6), b"my_map");
    // The string section's range: the same bytes in the blob it came from.
    assert_eq!(&bytes[r.string_range()], &w.strings[..]);
    assert_eq!(back.int32(), 1, "the first INT of 32 bits");
    // Every kind of the reader's sample, kind flags and bitfields, enum64,
    // prototypes and a forward reference, with the header's flags byte.
    let mut raw = sample().bytes();
    raw[3] = 0x5a;
    let s = Btf::parse(raw.clone()).unwrap();
    assert_eq!(BtfWriter::from_btf(&s).unwrap().to_bytes(), raw);
    // Split BTF is not the writer's: its ids continue another blob's.
    let base = Arc::new(s);
    let mut m = Builder::split(&base);
    m.t("mod_t", KIND_TYPEDEF, 0, false, 3, &[]);
    let split = Btf::parse_split(m.bytes(), base).unwrap();
    assert!(BtfWriter::from_btf(&split).is_err());
}

/// BTF built by hand: `int`, then a chain of `steps` typedefs on it (the
/// last is `1 + steps`), then two typedefs naming each other (a cycle);
/// then `steps` one-element arrays nested on `int` (the outermost last).
fn chains(steps: u32) -> (Vec<u8>, u32, u32, u32) {
    let mut b = Builder::new();
    let int = b.t("int", KIND_INT, 0, false, 4, &[32]);
    let mut top = int;
    for i in 0..steps {
        top = b.t(&format!("t{i}"), KIND_TYPEDEF, 0, false, top, &[]);
    }
    let next = b.count + 2;
    let cycle = b.t("a", KIND_TYPEDEF, 0, false, next, &[]);
    b.t("b", KIND_TYPEDEF, 0, false, cycle, &[]);
    let mut arr = int;
    for _ in 0..steps {
        arr = b.t("", KIND_ARRAY, 0, false, 0, &[arr, int, 1]);
    }
    (b.bytes(), top, cycle, arr)
}

/// The one chain rule ([`follow_chain`]): a chain of MAX_CHAIN steps ends
/// where it ends, one step more is an error, and so is a cycle; never a
/// silent stop (the object's former reader stopped after 64 typedefs on
/// a typedef, and gave no size past 32 arrays).
#[test]
fn chains_follow_one_rule() {
    let max = MAX_CHAIN as u32;
    let (bytes, top, cycle, arr) = chains(max);
    let b = Btf::parse(bytes).unwrap();
    assert_eq!(b.resolve(top).unwrap(), 1);
    assert_eq!(b.size_of(top).unwrap(), Some(4));
    assert_eq!(b.size_of(arr).unwrap(), Some(4), "{max} arrays of 1 int");
    let e = b.resolve(cycle).unwrap_err();
    assert_eq!(e.code(), crate::error::FORMAT);
    assert!(e.message().contains("a loop of typedefs"), "{e}");
    assert!(b.size_of(cycle).is_err());
    let (bytes, top, _, arr) = chains(max + 1);
    let b = Btf::parse(bytes).unwrap();
    let e = b.resolve(top).unwrap_err();
    assert!(e.message().contains("more than 64 steps"), "{e}");
    let e = b.size_of(arr).unwrap_err();
    assert!(e.message().contains("a loop of arrays"), "{e}");
}
