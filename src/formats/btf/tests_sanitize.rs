//! BTF for older kernels: libbpf's rewriting of each kind against types
//! and strings worked out by hand, and the feature probes against a
//! kernel's answers played by hand.

use super::tests::Builder;
use super::*;

fn all_of(fs: &[BtfFeatures]) -> BtfFeatures {
    fs.iter().fold(BtfFeatures::empty(), |a, &b| a | b)
}

/// What Debian 11's 5.10 takes: BTF, FUNC, global FUNC, DATASEC; no FLOAT
/// (5.13), DECL_TAG (5.16), TYPE_TAG (5.17), ENUM64 (6.0) or '?' DATASEC
/// names.
fn kernel_5_10() -> BtfFeatures {
    all_of(&[
        BtfFeatures::BTF,
        BtfFeatures::FUNC,
        BtfFeatures::GLOBAL_FUNC,
        BtfFeatures::DATASEC,
    ])
}

fn sanitized(input: Vec<u8>, f: BtfFeatures) -> Vec<u8> {
    let mut w = BtfWriter::from_btf(&Btf::parse(input).unwrap()).unwrap();
    sanitize(&mut w, f);
    w.to_bytes()
}

/// Raw type words: name offset, info, size or type, then what follows.
fn ty(
    out: &mut Vec<u32>,
    name_off: u32,
    kind: u32,
    vlen: u32,
    kflag: bool,
    st: u32,
    extra: &[u32],
) {
    out.extend([name_off, (kflag as u32) << 31 | kind << 24 | vlen, st]);
    out.extend_from_slice(extra);
}

fn bytes(words: &[u32], strings: &[u8]) -> Vec<u8> {
    let tb: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    blob(0, &tb, strings)
}

/// Every kind a 5.10 kernel lacks, in one blob.
struct Newer {
    b: Builder,
    /// String offsets: (name, offset).
    off: std::collections::HashMap<&'static str, u32>,
}

fn newer() -> Newer {
    let mut b = Builder::new();
    let mut off = std::collections::HashMap::new();
    let mut s = |b: &mut Builder, n: &'static str| {
        let o = b.s(n);
        off.insert(n, o);
        o
    };
    let int = s(&mut b, "int");
    let dbl = s(&mut b, "double");
    let user = s(&mut b, "user");
    let sign = s(&mut b, "sign");
    let neg = s(&mut b, "NEG");
    let big = s(&mut b, "big");
    let a = s(&mut b, "A");
    let bb = s(&mut b, "B");
    let p = s(&mut b, "p");
    let f = s(&mut b, "f");
    let tag = s(&mut b, "arg:ctx");
    let v = s(&mut b, "v");
    let data = s(&mut b, "?.data");
    let mut w = Vec::new();
    ty(
        &mut w,
        int,
        KIND_INT,
        0,
        false,
        4,
        &[(INT_SIGNED << 24) | 32],
    ); // 1
    ty(&mut w, dbl, KIND_FLOAT, 0, false, 8, &[]); // 2
    ty(&mut w, user, KIND_TYPE_TAG, 0, false, 1, &[]); // 3
    ty(&mut w, 0, KIND_PTR, 0, false, 3, &[]); // 4
    ty(&mut w, sign, KIND_ENUM, 1, true, 4, &[neg, u32::MAX]); // 5
    ty(&mut w, big, KIND_ENUM64, 2, false, 8, &[a, 1, 0, bb, 0, 1]); // 6
    ty(&mut w, 0, KIND_FUNC_PROTO, 1, false, 1, &[p, 4]); // 7
    ty(&mut w, f, KIND_FUNC, FUNC_GLOBAL, false, 7, &[]); // 8
    ty(&mut w, tag, KIND_DECL_TAG, 0, false, 8, &[0]); // 9
    ty(&mut w, v, KIND_VAR, 0, false, 1, &[VAR_GLOBAL_ALLOCATED]); // 10
    ty(&mut w, data, KIND_DATASEC, 1, false, 4, &[10, 0, 4]); // 11
    b.types = w;
    b.count = 11;
    Newer { b, off }
}

#[test]
fn for_5_10_the_kinds_it_lacks_become_kinds_it_has() {
    let n = newer();
    let o = |k| n.off[k];
    let out = sanitized(n.b.bytes(), kernel_5_10());
    // Strings: "?.data" made "_.data" in place, the placeholder's name
    // appended.
    let mut strings = n.b.strings.clone();
    let at = o("?.data") as usize;
    assert_eq!(strings[at], b'?');
    strings[at] = b'_';
    let ph = strings.len() as u32;
    strings.extend_from_slice(b"enum64_placeholder\0");
    let mut w = Vec::new();
    ty(
        &mut w,
        o("int"),
        KIND_INT,
        0,
        false,
        4,
        &[(INT_SIGNED << 24) | 32],
    ); // 1
    ty(&mut w, 0, KIND_STRUCT, 0, false, 8, &[]); // 2: FLOAT, anonymous
    ty(&mut w, 0, KIND_CONST, 0, false, 1, &[]); // 3: TYPE_TAG, anonymous
    ty(&mut w, 0, KIND_PTR, 0, false, 3, &[]); // 4
    ty(
        &mut w,
        o("sign"),
        KIND_ENUM,
        1,
        false,
        4,
        &[o("NEG"), u32::MAX],
    ); // 5: unsigned
    ty(
        &mut w,
        o("big"),
        KIND_UNION,
        2,
        false,
        8,
        &[o("A"), 12, 0, o("B"), 12, 0],
    ); // 6
    ty(&mut w, 0, KIND_FUNC_PROTO, 1, false, 1, &[o("p"), 4]); // 7
    ty(&mut w, o("f"), KIND_FUNC, FUNC_GLOBAL, false, 7, &[]); // 8
    ty(&mut w, o("arg:ctx"), KIND_INT, 0, false, 1, &[8]); // 9: DECL_TAG
    ty(
        &mut w,
        o("v"),
        KIND_VAR,
        0,
        false,
        1,
        &[VAR_GLOBAL_ALLOCATED],
    ); // 10
    ty(&mut w, o("?.data"), KIND_DATASEC, 1, false, 4, &[10, 0, 4]); // 11
    ty(&mut w, ph, KIND_INT, 0, false, 1, &[8]); // 12: the placeholder
    assert_eq!(out, bytes(&w, &strings));
    // The reader takes it, and sees what the kernel will.
    let btf = Btf::parse(out).unwrap();
    assert_eq!(btf.name(12), b"enum64_placeholder");
    assert_eq!(btf.name(11), b"_.data");
}

#[test]
fn with_every_feature_nothing_changes() {
    let input = newer().b.bytes();
    assert!(!needs_sanitizing(BtfFeatures::ALL));
    assert!(!needs_sanitizing(
        BtfFeatures::ALL.without(BtfFeatures::BTF)
    ));
    assert_eq!(sanitized(input.clone(), BtfFeatures::ALL), input);
    for (f, _) in probe_blobs().skip(1) {
        assert!(needs_sanitizing(BtfFeatures::ALL.without(f)), "{f:?}");
    }
    // Only the '?' missing (6.1): one byte of the strings.
    let n = newer();
    let out = sanitized(
        input.clone(),
        BtfFeatures::ALL.without(BtfFeatures::QMARK_DATASEC),
    );
    let mut want = input;
    let at = 24 + n.b.types.len() * 4 + n.off["?.data"] as usize;
    assert_eq!(want[at], b'?');
    want[at] = b'_';
    assert_eq!(out, want);
}

/// Before 5.2 and 5.0: no DATASEC, no FUNC (BTF alone).
#[test]
fn without_func_and_datasec() {
    let mut b = Builder::new();
    let int = b.t("int", KIND_INT, 0, false, 4, &[(INT_SIGNED << 24) | 32]); // 1
    let p = b.s("a");
    let proto = b.t("", KIND_FUNC_PROTO, 2, false, int, &[p, int, 0, int]); // 2
    b.t("g", KIND_FUNC, FUNC_GLOBAL, false, proto, &[]); // 3
    b.t("x", KIND_VAR, 0, false, int, &[VAR_STATIC]); // 4
    b.t("y", KIND_VAR, 0, false, int, &[VAR_GLOBAL_ALLOCATED]); // 5
    b.t(
        ".data.rel?",
        KIND_DATASEC,
        2,
        false,
        16,
        &[4, 0, 4, 5, 12, 4],
    ); // 6
    let input = b.bytes();
    let out = sanitized(input, BtfFeatures::BTF);
    let mut strings = b.strings.clone();
    let name = b"\0.data.rel?\0";
    let at = strings.windows(name.len()).position(|w| w == name).unwrap() + 1;
    strings[at..at + 10].copy_from_slice(b"_data_rel_");
    let s = |n: &[u8]| {
        let mut z = n.to_vec();
        z.push(0);
        b.strings.windows(z.len()).position(|w| w == z).unwrap() as u32
    };
    let mut w = Vec::new();
    ty(
        &mut w,
        s(b"int"),
        KIND_INT,
        0,
        false,
        4,
        &[(INT_SIGNED << 24) | 32],
    ); // 1
    ty(&mut w, 0, KIND_ENUM, 2, false, 4, &[p, 1, 0, 1]); // 2: params as values
    ty(&mut w, s(b"g"), KIND_TYPEDEF, 0, false, 2, &[]); // 3: not even static
    ty(&mut w, s(b"x"), KIND_INT, 0, false, 1, &[8]); // 4
    ty(&mut w, s(b"y"), KIND_INT, 0, false, 1, &[8]); // 5
                                                      // 6: members named as the VARs, of the VARs' ids, offsets in bits.
    ty(
        &mut w,
        at as u32,
        KIND_STRUCT,
        2,
        false,
        16,
        &[s(b"x"), 4, 0, s(b"y"), 5, 96],
    );
    assert_eq!(out, bytes(&w, &strings));
}

/// 5.0 to 5.5: FUNC but only static ones (extern ones too).
#[test]
fn without_global_func_every_func_is_static() {
    let mut b = Builder::new();
    let proto = b.t("", KIND_FUNC_PROTO, 0, false, 0, &[]); // 1
    b.t("g", KIND_FUNC, FUNC_GLOBAL, false, proto, &[]); // 2
    b.t("e", KIND_FUNC, FUNC_EXTERN, false, proto, &[]); // 3
    b.t("s", KIND_FUNC, FUNC_STATIC, false, proto, &[]); // 4
    let f = BtfFeatures::ALL.without(BtfFeatures::GLOBAL_FUNC);
    let out = Btf::parse(sanitized(b.bytes(), f)).unwrap();
    for id in 2..=4 {
        let t = out.ty(id).unwrap();
        assert_eq!(
            (t.kind(), t.func_linkage(), t.type_id()),
            (KIND_FUNC, 0, 1),
            "{id}"
        );
    }
}

/// libbpf's btf__add_str finds a string the blob has: the placeholder
/// reuses it, and strings grow by nothing.
#[test]
fn the_placeholder_reuses_its_name() {
    let mut b = Builder::new();
    b.t("enum64_placeholder", KIND_TYPEDEF, 0, false, 0, &[]); // 1
    let a = b.s("A");
    b.t("e", KIND_ENUM64, 1, true, 8, &[a, 5, 0]); // 2
    b.t("f", KIND_ENUM64, 1, false, 4, &[a, 6, 0]); // 3
    let out = Btf::parse(sanitized(b.bytes(), kernel_5_10())).unwrap();
    assert_eq!(out.end_id(), 5, "one placeholder for both");
    assert_eq!(out.str_end(), b.strings.len() as u32);
    let p = out.ty(4).unwrap();
    assert_eq!(
        (p.kind(), p.size(), p.int(), p.name_off),
        (KIND_INT, 1, (0, 0, 8), 1)
    );
    for (id, size) in [(2, 8), (3, 4)] {
        let u = out.ty(id).unwrap();
        assert_eq!((u.kind(), u.kflag(), u.size()), (KIND_UNION, false, size));
        let m: Vec<Member> = u.members().collect();
        assert_eq!((m[0].name_off, m[0].ty, m[0].bit_offset), (a, 4, 0));
    }
}

/// The probes' blobs, word for word as libbpf's features.c writes them.
#[test]
fn the_probe_blobs_are_libbpfs() {
    let blobs: Vec<(BtfFeatures, Vec<u8>)> = probe_blobs().collect();
    assert_eq!(blobs.len(), 9);
    let mut seen = BtfFeatures::empty();
    for (f, b) in &blobs {
        Btf::parse(b.clone()).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        seen = seen | *f;
    }
    assert_eq!(seen, BtfFeatures::ALL);
    let word = |v: &[u32]| v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    // BTF_TYPE_INT_ENC(1, BTF_INT_SIGNED, 0, 32, 4) and "\0int".
    assert_eq!(
        blobs[0].1,
        blob(0, &word(&[1, 1 << 24, 4, (1 << 24) | 32]), b"\0int\0")
    );
    let of = |want| &blobs.iter().find(|(f, _)| *f == want).unwrap().1;
    // int [1] (anonymous), static VAR x [2] of it.
    let int_var = [0, 1 << 24, 4, (1 << 24) | 32, 1, 14 << 24, 1, 0];
    // DATASEC "?.data" [3] holding x.
    let t = word(&[&int_var[..], &[3, (15 << 24) | 1, 4, 2, 0, 4]].concat());
    assert_eq!(
        *of(BtfFeatures::QMARK_DATASEC),
        blob(0, &t, b"\0x\0?.data\0")
    );
    // DECL_TAG "tag" on VAR [2] itself (component -1).
    let t = word(&[&int_var[..], &[1, 17 << 24, 2, u32::MAX]].concat());
    assert_eq!(*of(BtfFeatures::DECL_TAG), blob(0, &t, b"\0tag\0"));
}

/// A kernel played by hand: it refuses a blob with a kind it lacks, a
/// DATASEC named "?...", or a global FUNC, as 5.10's BTF checker does.
fn old_kernel(
    lacks: &'static [u32],
    qmark: bool,
    global: bool,
) -> impl FnMut(&[u8]) -> std::io::Result<()> {
    move |blob| {
        let b = Btf::parse(blob.to_vec()).unwrap();
        let refused = b.own_ids().any(|id| {
            let t = b.ty(id).unwrap();
            lacks.contains(&t.kind())
                || (!qmark && t.kind() == KIND_DATASEC && b.name(id).starts_with(b"?"))
                || (!global && t.kind() == KIND_FUNC && t.func_linkage() == FUNC_GLOBAL)
        });
        if refused {
            Err(std::io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            Ok(())
        }
    }
}

#[test]
fn the_probes_find_what_the_kernel_takes() {
    let newer = &[KIND_FLOAT, KIND_DECL_TAG, KIND_TYPE_TAG, KIND_ENUM64];
    assert_eq!(
        probe_with(old_kernel(newer, false, true)).unwrap(),
        kernel_5_10()
    );
    assert_eq!(
        probe_with(old_kernel(&[], true, true)).unwrap(),
        BtfFeatures::ALL
    );
    assert_eq!(
        probe_with(old_kernel(&[], false, true)).unwrap(),
        BtfFeatures::ALL.without(BtfFeatures::QMARK_DATASEC)
    );
    let pre_5_2 = &[
        KIND_FUNC,
        KIND_FUNC_PROTO,
        KIND_VAR,
        KIND_DATASEC,
        KIND_FLOAT,
        KIND_DECL_TAG,
        KIND_TYPE_TAG,
        KIND_ENUM64,
    ];
    assert_eq!(
        probe_with(old_kernel(pre_5_2, false, false)).unwrap(),
        BtfFeatures::BTF
    );
}

#[test]
fn a_refused_probe_is_the_kernels_error() {
    // No BTF at all (EINVAL for the INT): nothing, no error, no more probes.
    let mut calls = 0;
    let none = probe_with(|_| {
        calls += 1;
        Err(std::io::Error::from_raw_os_error(libc::EINVAL))
    });
    assert_eq!((none.unwrap(), calls), (BtfFeatures::empty(), 1));
    // Not allowed to ask: the errno, and a message that says why.
    let e = probe_with(|_| Err(std::io::Error::from_raw_os_error(libc::EPERM))).unwrap_err();
    assert_eq!(e.code(), -libc::EPERM);
    assert!(e.message().contains("CAP_BPF"), "{e}");
    // A kind probe refused for any reason: that feature is missing.
    let mut n = 0;
    let f = probe_with(|_| {
        n += 1;
        match n {
            1 => Ok(()),
            2 => Err(std::io::Error::from_raw_os_error(libc::E2BIG)),
            _ => Ok(()),
        }
    });
    assert_eq!(f.unwrap(), BtfFeatures::ALL.without(BtfFeatures::FUNC));
}

#[test]
fn features_by_name_and_bits() {
    assert_eq!(BtfFeatures::ALL.bits(), 0x1ff);
    assert_eq!(BtfFeatures::from_bits(0x200), None);
    assert_eq!(
        BtfFeatures::from_bits(0x9),
        Some(BtfFeatures::BTF | BtfFeatures::DATASEC)
    );
    let names: Vec<&str> = kernel_5_10().names().collect();
    assert_eq!(names, ["btf", "func", "global_func", "datasec"]);
    for n in BtfFeatures::ALL.names() {
        assert_eq!(
            BtfFeatures::from_name(n)
                .unwrap()
                .names()
                .collect::<Vec<_>>(),
            [n]
        );
    }
    assert_eq!(BtfFeatures::from_name("enum"), None);
    assert_eq!(
        format!("{:?}", BtfFeatures::ENUM64 | BtfFeatures::FLOAT),
        "BtfFeatures(float | enum64)"
    );
}
