//! CO-RE relocations against hand-made local/target BTF pairs; every
//! expected value is worked out by hand in the comments.

use super::*;
use crate::bpf::insn::{Insn, LD_IMM64};
use crate::error::{FORMAT, UNSUPPORTED};
use crate::formats::btf::tests::Builder;
use crate::formats::btf::{KIND_DATASEC, KIND_TYPEDEF};

const INT_ENC: u32 = INT_SIGNED << 24;

/// The kernel's view:
///
/// ```text
/// [1] int (4, signed)            [2] unsigned int (4)      [3] long (8, signed)
/// [4] struct point (16)  { int x @0; int y @32; long z @64; }
/// [5] union <anon> (8)   { long a @0; }
/// [6] char (1)           [7] char[16]
/// [8] struct task (32) kflag { int pid @0; union <anon> @64;
///                        unsigned int flags:3 @96; unsigned int state:5 @99;
///                        unsigned int wide:6 @126; char comm[16] @128 }
/// [9] enum color (4, signed) { RED = 0, GREEN = 5, BLUE = -1 }
/// [10] enum64 big (8) { HUGE = 0x1_0000_0000 }
/// [11] typedef pid_t -> int
/// [12] unsigned long (8)   [13] struct counter (8) { unsigned long hits @0 }
/// [14] struct point___2 (16) { int x @32; int y @0; long z @64; }   (only in `ambiguous`)
/// ```
fn target(ambiguous: bool) -> Btf {
    let mut b = Builder::new();
    let int = b.t("int", KIND_INT, 0, false, 4, &[INT_ENC | 32]);
    let uint = b.t("unsigned int", KIND_INT, 0, false, 4, &[32]);
    let long = b.t("long", KIND_INT, 0, false, 8, &[INT_ENC | 64]);
    let (x, y, z) = (b.s("x"), b.s("y"), b.s("z"));
    b.t(
        "point",
        KIND_STRUCT,
        3,
        false,
        16,
        &[x, int, 0, y, int, 32, z, long, 64],
    );
    let a = b.s("a");
    let un = b.t("", KIND_UNION, 1, false, 8, &[a, long, 0]);
    let ch = b.t("char", KIND_INT, 0, false, 1, &[8]);
    let arr = b.t("", KIND_ARRAY, 0, false, 0, &[ch, int, 16]);
    let (pid, flags, state, wide, comm) = (
        b.s("pid"),
        b.s("flags"),
        b.s("state"),
        b.s("wide"),
        b.s("comm"),
    );
    b.t(
        "task",
        KIND_STRUCT,
        6,
        true,
        32,
        &[
            pid,
            int,
            0,
            0,
            un,
            64,
            flags,
            uint,
            (3 << 24) | 96,
            state,
            uint,
            (5 << 24) | 99,
            wide,
            uint,
            (6 << 24) | 126,
            comm,
            arr,
            128,
        ],
    );
    let (red, green, blue) = (b.s("RED"), b.s("GREEN"), b.s("BLUE"));
    b.t(
        "color",
        KIND_ENUM,
        3,
        true,
        4,
        &[red, 0, green, 5, blue, (-1i32) as u32],
    );
    let huge = b.s("HUGE");
    b.t("big", KIND_ENUM64, 1, false, 8, &[huge, 0, 1]);
    b.t("pid_t", KIND_TYPEDEF, 0, false, int, &[]);
    let ulong = b.t("unsigned long", KIND_INT, 0, false, 8, &[64]);
    let hits = b.s("hits");
    b.t("counter", KIND_STRUCT, 1, false, 8, &[hits, ulong, 0]);
    if ambiguous {
        b.t(
            "point___2",
            KIND_STRUCT,
            3,
            false,
            16,
            &[x, int, 32, y, int, 0, z, long, 64],
        );
    }
    Btf::parse(b.bytes()).unwrap()
}

/// The program's view (what clang wrote in the object):
///
/// ```text
/// [1] int              [2] long              [3] unsigned int
/// [4] struct task___v2 (24) kflag { int pid @0; long a @32; unsigned int flags:3 @96;
///                        unsigned int state:5 @99; int missing @128; unsigned int wide:6 @136 }
/// [5] struct point (16) { int x @0; int y @32; }
/// [6] enum color (4) { RED = 0, GREEN = 2, PURPLE = 9 }
/// [7] enum64 big (8) { HUGE = 7 }
/// [8] struct nope (4) { int n @0; }
/// [9] struct <anon> (4) { int q @0; }
/// [10] char (1)   [11] char[4]   [12] struct task___comm (4) { char comm[4] @0 }
/// [13] struct counter (4) { unsigned int hits @0 }
/// [14] struct counter___s (4) { int hits @0 }
/// ```
/// plus one access string per relocation below.
struct Local {
    b: Builder,
}

impl Local {
    fn new() -> Local {
        let mut b = Builder::new();
        let int = b.t("int", KIND_INT, 0, false, 4, &[INT_ENC | 32]);
        let long = b.t("long", KIND_INT, 0, false, 8, &[INT_ENC | 64]);
        let uint = b.t("unsigned int", KIND_INT, 0, false, 4, &[32]);
        let (pid, a, flags, state, missing, wide) = (
            b.s("pid"),
            b.s("a"),
            b.s("flags"),
            b.s("state"),
            b.s("missing"),
            b.s("wide"),
        );
        b.t(
            "task___v2",
            KIND_STRUCT,
            6,
            true,
            24,
            &[
                pid,
                int,
                0,
                a,
                long,
                32,
                flags,
                uint,
                (3 << 24) | 96,
                state,
                uint,
                (5 << 24) | 99,
                missing,
                int,
                128,
                wide,
                uint,
                (6 << 24) | 136,
            ],
        );
        let (x, y) = (b.s("x"), b.s("y"));
        b.t("point", KIND_STRUCT, 2, false, 16, &[x, int, 0, y, int, 32]);
        let (red, green, purple) = (b.s("RED"), b.s("GREEN"), b.s("PURPLE"));
        b.t(
            "color",
            KIND_ENUM,
            3,
            false,
            4,
            &[red, 0, green, 2, purple, 9],
        );
        let huge = b.s("HUGE");
        b.t("big", KIND_ENUM64, 1, false, 8, &[huge, 7, 0]);
        let n = b.s("n");
        b.t("nope", KIND_STRUCT, 1, false, 4, &[n, int, 0]);
        let q = b.s("q");
        b.t("", KIND_STRUCT, 1, false, 4, &[q, int, 0]);
        let ch = b.t("char", KIND_INT, 0, false, 1, &[8]);
        let arr = b.t("", KIND_ARRAY, 0, false, 0, &[ch, int, 4]);
        let comm = b.s("comm");
        b.t("task___comm", KIND_STRUCT, 1, false, 4, &[comm, arr, 0]);
        let hits = b.s("hits");
        b.t("counter", KIND_STRUCT, 1, false, 4, &[hits, uint, 0]);
        b.t("counter___s", KIND_STRUCT, 1, false, 4, &[hits, int, 0]);
        let _ = b.t("", KIND_DATASEC, 0, false, 0, &[]);
        Local { b }
    }
}

const TASK: u32 = 4;
const POINT: u32 = 5;
const COLOR: u32 = 6;
const BIG: u32 = 7;
const NOPE: u32 = 8;
const ANON: u32 = 9;

/// `r1 = *(u<size> *)(r2 + off)`
fn ldx(size: u8, off: i16) -> Insn {
    Insn {
        code: 0x61 | (size & 0x18),
        regs: 0x21,
        off,
        imm: 0,
    }
}
/// `r0 = imm` (ALU64 MOV K)
fn mov(imm: i32) -> Insn {
    Insn {
        code: 0xb7,
        regs: 0,
        off: 0,
        imm,
    }
}
fn ld64(v: u64) -> [Insn; 2] {
    [
        Insn {
            code: LD_IMM64,
            regs: 1,
            off: 0,
            imm: v as u32 as i32,
        },
        Insn {
            code: 0,
            regs: 0,
            off: 0,
            imm: (v >> 32) as u32 as i32,
        },
    ]
}
const DW: u8 = 0x18;
const W: u8 = 0x00;

/// Resolves one relocation of `kind` on local type `ty` with access string
/// `access` against `target`, applied to `insns`.
fn run(
    target_btf: Btf,
    ty: u32,
    access: &str,
    kind: u32,
    insns: &[Insn],
) -> (Result<CoreResolution>, Vec<Insn>) {
    let mut l = Local::new();
    let access_off = l.b.s(access);
    let local = Btf::parse(l.b.bytes()).unwrap();
    let kernel = KernelBtf::from_parts(target_btf, Vec::new()).unwrap();
    let rec = CoreRecord {
        insn_off: 0,
        type_id: ty,
        access_off,
        kind,
    };
    let mut out = insns.to_vec();
    let r = resolve(&local, &kernel, &rec, &mut Cands::default(), "test", 0);
    let r = r.and_then(|r| patch(&mut out, 0, &r.res, "test").map(|_| r));
    (r, out)
}

fn ok(ty: u32, access: &str, kind: u32, insns: &[Insn]) -> Vec<Insn> {
    let (r, out) = run(target(false), ty, access, kind, insns);
    r.unwrap_or_else(|e| panic!("{access} {}: {e}", kind_str(kind)));
    out
}

#[test]
fn field_offsets_through_anonymous_members_and_flavors() {
    // task___v2 matches task (flavor dropped). Local `a` is at bit 32
    // (byte 4); in the kernel it is in the anonymous union at bit 64:
    // byte 8.
    assert_eq!(ok(TASK, "0:1", FIELD_BYTE_OFFSET, &[ldx(DW, 4)])[0].off, 8);
    // pid: byte 0 in both.
    assert_eq!(ok(TASK, "0:0", FIELD_BYTE_OFFSET, &[ldx(W, 0)])[0].off, 0);
    // The spec as libbpf prints it.
    let (r, _) = run(target(false), TASK, "0:1", FIELD_BYTE_OFFSET, &[ldx(DW, 4)]);
    let r = r.unwrap();
    assert_eq!(
        r.local,
        "<byte_off> [4] struct task___v2.a (0:1 @ offset 4)"
    );
    assert_eq!(r.target, "<byte_off> [8] struct task.a (0:1:0 @ offset 8)");
}

#[test]
fn field_size_exists_signed() {
    // sizeof(pid) = 4 in both; `r0 = 4` stays 4.
    assert_eq!(ok(TASK, "0:0", FIELD_BYTE_SIZE, &[mov(4)])[0].imm, 4);
    // `missing` is not in the kernel's task: exists 1 -> 0.
    assert_eq!(ok(TASK, "0:4", FIELD_EXISTS, &[mov(1)])[0].imm, 0);
    assert_eq!(ok(TASK, "0:0", FIELD_EXISTS, &[mov(1)])[0].imm, 1);
    // pid is a signed int: 1.
    assert_eq!(ok(TASK, "0:0", FIELD_SIGNED, &[mov(1)])[0].imm, 1);
    // flags is unsigned: 0.
    assert_eq!(ok(TASK, "0:2", FIELD_SIGNED, &[mov(0)])[0].imm, 0);
}

#[test]
fn bitfields() {
    // flags: 3 bits at bit 96 of an unsigned int (4 bytes) in both.
    // byte_off = 96 / 8 / 4 * 4 = 12; it fits: 96 + 3 - 96 = 3 <= 32.
    assert_eq!(ok(TASK, "0:2", FIELD_BYTE_OFFSET, &[mov(12)])[0].imm, 12);
    assert_eq!(ok(TASK, "0:2", FIELD_BYTE_SIZE, &[mov(4)])[0].imm, 4);
    // lshift = 64 - (96 + 3 - 12 * 8) = 61; rshift = 64 - 3 = 61.
    assert_eq!(ok(TASK, "0:2", FIELD_LSHIFT_U64, &[mov(61)])[0].imm, 61);
    assert_eq!(ok(TASK, "0:2", FIELD_RSHIFT_U64, &[mov(61)])[0].imm, 61);
    // state: 5 bits at 99: byte_off 12, lshift = 64 - (99 + 5 - 96) = 56,
    // rshift = 59.
    assert_eq!(ok(TASK, "0:3", FIELD_LSHIFT_U64, &[mov(56)])[0].imm, 56);
    assert_eq!(ok(TASK, "0:3", FIELD_RSHIFT_U64, &[mov(59)])[0].imm, 59);
    // wide: 6 bits at 126 in the kernel (at 136 locally). 4-byte load:
    // byte_off = 126/8/4*4 = 12, 126 + 6 - 96 = 36 > 32: widen to 8 bytes,
    // byte_off = 126/8/8*8 = 8, 126 + 6 - 64 = 68 > 64: cannot be loaded:
    // an error, as libbpf.
    let (r, _) = run(target(false), TASK, "0:5", FIELD_BYTE_OFFSET, &[mov(16)]);
    assert!(r.unwrap_err().message().contains("64-bit load"));
    // Locally wide is at 136: byte_off 136/8/4*4 = 16, 136 + 6 - 128 = 14:
    // for the byte size the kernel's side fails the same way.
    let (r, _) = run(target(false), TASK, "0:5", FIELD_BYTE_SIZE, &[mov(4)]);
    assert!(r.is_err());
}

#[test]
fn missing_fields_poison_the_instruction() {
    // `missing` is not in the kernel: the load becomes a call to helper
    // 0xbad2310, which the verifier reports if it is reachable.
    let out = ok(TASK, "0:4", FIELD_BYTE_OFFSET, &[ldx(W, 16)]);
    assert_eq!((out[0].code, out[0].imm), (0x85, POISON_IMM));
    // Both halves of an ld_imm64.
    let out = ok(TASK, "0:4", FIELD_BYTE_SIZE, &ld64(4));
    assert!(out.iter().all(|i| i.code == 0x85 && i.imm == POISON_IMM));
}

#[test]
fn memory_size_adjusted_or_refused() {
    // comm: char[4] at byte 0 locally, char[16] at bit 128 (byte 16) in
    // the kernel's task; the element access `comm[2]` (0:0:2) is the byte
    // at 2 locally and at 16 + 2 = 18 in the kernel.
    assert_eq!(
        ok(12, "0:0:2", FIELD_BYTE_OFFSET, &[ldx(0x10, 2)])[0].off,
        18
    );
    // The whole array read as a u32 (local size 4): the kernel's comm is
    // 16 bytes and not an integer or pointer, so the load cannot be
    // resized: libbpf poisons it ("accesses field incorrectly").
    let out = ok(12, "0:0", FIELD_BYTE_OFFSET, &[ldx(W, 0)]);
    assert_eq!((out[0].code, out[0].imm), (0x85, POISON_IMM));
    // pid read as a u64 while it is 4 bytes in both: the instruction's size
    // disagrees with the local BTF, which libbpf reports only when sizes
    // change; here they do not, so the offset is patched and the size kept.
    assert_eq!(
        ok(TASK, "0:0", FIELD_BYTE_OFFSET, &[ldx(DW, 0)])[0].code,
        ldx(DW, 0).code
    );
    // counter.hits: a u32 locally, a u64 in the kernel, both unsigned: the
    // 4-byte load becomes an 8-byte one (BPF_W 0x00 -> BPF_DW 0x18).
    assert_eq!(
        ok(13, "0:0", FIELD_BYTE_OFFSET, &[ldx(W, 0)])[0].code,
        ldx(DW, 0).code
    );
    // The same field as a signed int locally: widening would change the
    // value, so the load is poisoned.
    assert_eq!(
        ok(14, "0:0", FIELD_BYTE_OFFSET, &[ldx(W, 0)])[0].imm,
        POISON_IMM
    );
}

#[test]
fn types() {
    // point exists (1), has size 16, id 4 in the kernel.
    assert_eq!(ok(POINT, "0", TYPE_EXISTS, &[mov(1)])[0].imm, 1);
    assert_eq!(ok(POINT, "0", TYPE_SIZE, &[mov(16)])[0].imm, 16);
    assert_eq!(ok(POINT, "0", TYPE_ID_TARGET, &[mov(5)])[0].imm, 4);
    // Local type ids stay.
    assert_eq!(ok(POINT, "0", TYPE_ID_LOCAL, &[mov(5)])[0].imm, 5);
    // nope is not in the kernel: exists 0, size 0 (no poisoning for types).
    assert_eq!(ok(NOPE, "0", TYPE_EXISTS, &[mov(1)])[0].imm, 0);
    assert_eq!(ok(NOPE, "0", TYPE_SIZE, &[mov(4)])[0].imm, 0);
    // Local point {x, y} matches the kernel's {x, y, z}: every local member
    // has a same-named, matching one.
    assert_eq!(ok(POINT, "0", TYPE_MATCHES, &[mov(1)])[0].imm, 1);
    // The access string of a type relocation must be "0".
    let (r, _) = run(target(false), POINT, "1", TYPE_EXISTS, &[mov(1)]);
    assert_eq!(r.unwrap_err().code(), FORMAT);
}

#[test]
fn enum_values_of_any_size() {
    // color::GREEN is 2 locally, 5 in the kernel.
    assert_eq!(ok(COLOR, "1", ENUMVAL_VALUE, &[mov(2)])[0].imm, 5);
    assert_eq!(ok(COLOR, "1", ENUMVAL_EXISTS, &[mov(1)])[0].imm, 1);
    // PURPLE is only local: exists 0; its value poisons.
    assert_eq!(ok(COLOR, "2", ENUMVAL_EXISTS, &[mov(1)])[0].imm, 0);
    assert_eq!(ok(COLOR, "2", ENUMVAL_VALUE, &[mov(9)])[0].imm, POISON_IMM);
    // big::HUGE: 7 locally, 0x1_0000_0000 in the kernel, in an ld_imm64.
    let out = ok(BIG, "0", ENUMVAL_VALUE, &ld64(7));
    assert_eq!((out[0].imm, out[1].imm), (0, 1));
}

#[test]
fn ambiguity_between_candidates_is_an_error() {
    // point and point___2 give x at byte 0 and byte 4.
    let (r, _) = run(target(true), POINT, "0:0", FIELD_BYTE_OFFSET, &[ldx(W, 0)]);
    let e = r.unwrap_err();
    assert!(e.message().contains("ambiguity"), "{e}");
    // Both agree that point exists.
    let (r, _) = run(target(true), POINT, "0", TYPE_EXISTS, &[mov(1)]);
    assert!(r.is_ok());
}

#[test]
fn bad_records_are_errors() {
    let check = |ty: u32, access: &str, kind: u32, insns: &[Insn], want: &str| {
        let (r, _) = run(target(false), ty, access, kind, insns);
        let e = r.unwrap_err();
        assert!(e.message().contains(want), "{access}: {e}");
    };
    // Past the struct's members; not a number; an index past an array.
    check(TASK, "0:99", FIELD_BYTE_OFFSET, &[ldx(W, 0)], "member 99");
    check(
        TASK,
        "0:x",
        FIELD_BYTE_OFFSET,
        &[ldx(W, 0)],
        "does not parse",
    );
    check(12, "0:0:9", FIELD_BYTE_OFFSET, &[ldx(W, 0)], "index 9");
    check(TASK, "", FIELD_BYTE_OFFSET, &[ldx(W, 0)], "access string");
    // The instruction does not hold what the local BTF says.
    check(
        TASK,
        "0:1",
        FIELD_BYTE_OFFSET,
        &[ldx(DW, 6)],
        "unexpected insn",
    );
    // A jump cannot be relocated.
    check(
        TASK,
        "0:1",
        FIELD_BYTE_OFFSET,
        &[Insn {
            code: 0x05,
            regs: 0,
            off: 4,
            imm: 0,
        }],
        "unrecognized insn",
    );
    // Anonymous types have no candidates.
    let (r, _) = run(target(false), ANON, "0:0", FIELD_BYTE_OFFSET, &[ldx(W, 0)]);
    assert_eq!(r.unwrap_err().code(), UNSUPPORTED);
    // A relocation on an enum that is a field relocation.
    check(COLOR, "1", 77, &[mov(1)], "unknown relocation kind");
}

#[test]
fn types_are_compat_as_libbpf() {
    let t = target(false);
    let l = Btf::parse(Local::new().b.bytes()).unwrap();
    // Two ints of any size are compatible; struct vs struct too.
    assert!(types_are_compat(&l, 1, &t, 3).unwrap());
    assert!(types_are_compat(&l, POINT, &t, 4).unwrap());
    // Struct vs enum: no.
    assert!(!types_are_compat(&l, POINT, &t, 9).unwrap());
    // The top-level kinds must agree before typedefs are followed (libbpf
    // checks btf_kind_core_compat first): local int vs kernel pid_t is no.
    assert!(!types_are_compat(&l, 1, &t, 11).unwrap());
}

#[test]
fn absurd_sizes_wrap_as_libbpf_and_never_panic() {
    // Found by the bpf_object fuzz target: a bitfield of a 512 MiB "int"
    // overflowed `boff * 8`. libbpf computes on __u32 and wraps; so does
    // this, and the relocation is refused or gives a value: no panic.
    let mut b = Builder::new();
    let huge = b.t("int", KIND_INT, 0, false, 0x2000_0000, &[INT_ENC | 32]);
    let f = b.s("flags");
    b.t(
        "task",
        KIND_STRUCT,
        1,
        true,
        0x4000_0000,
        &[f, huge, (3 << 24) | 0x007f_ffff],
    );
    let access = b.s("0:0");
    let local = Btf::parse(b.bytes()).unwrap();
    let kernel = KernelBtf::from_parts(target(false), Vec::new()).unwrap();
    for kind in [
        FIELD_BYTE_OFFSET,
        FIELD_BYTE_SIZE,
        FIELD_LSHIFT_U64,
        FIELD_RSHIFT_U64,
    ] {
        let rec = CoreRecord {
            insn_off: 0,
            type_id: 2,
            access_off: access,
            kind,
        };
        let _ = resolve(&local, &kernel, &rec, &mut Cands::default(), "test", 0);
    }
}

/// A kernel type through a typedef loop is malformed BTF: an error of
/// `KSYM_ERR_FORMAT` naming the relocation, never "void". (`skip` used to
/// turn the loop into void: TYPE_MATCHES then compared the local `void *`
/// with the kernel's `a *` as void against "void", said "no match", and
/// the relocation succeeded with 0.)
#[test]
fn a_loop_in_the_kernel_btf_is_an_error_naming_the_relocation() {
    // Kernel: [1] typedef a -> [2], [2] typedef b -> [1], [3] a *,
    // [4] struct vp (8) { a *p @0 }.
    let mut k = Builder::new();
    k.t("a", KIND_TYPEDEF, 0, false, 2, &[]);
    k.t("b", KIND_TYPEDEF, 0, false, 1, &[]);
    let ptr = k.t("", KIND_PTR, 0, false, 1, &[]);
    let p = k.s("p");
    k.t("vp", KIND_STRUCT, 1, false, 8, &[p, ptr, 0]);
    // Local: [1] void *, [2] struct vp (8) { void *p @0 }.
    let mut l = Builder::new();
    let vptr = l.t("", KIND_PTR, 0, false, 0, &[]);
    let p = l.s("p");
    let vp = l.t("vp", KIND_STRUCT, 1, false, 8, &[p, vptr, 0]);
    let access = l.s("0");
    let local = Btf::parse(l.bytes()).unwrap();
    let kernel = KernelBtf::from_parts(Btf::parse(k.bytes()).unwrap(), Vec::new()).unwrap();
    let rec = CoreRecord {
        insn_off: 8,
        type_id: vp,
        access_off: access,
        kind: TYPE_MATCHES,
    };
    let owner = "program `prog`";
    let e = resolve(&local, &kernel, &rec, &mut Cands::default(), owner, 3).unwrap_err();
    assert_eq!(e.code(), FORMAT, "{e}");
    let m = e.message();
    assert!(
        m.starts_with("program `prog`, CO-RE relocation #3 at insn #1: CO-RE: "),
        "{m}"
    );
    assert!(
        m.contains("a loop of typedefs or qualifiers through type"),
        "{m}"
    );
}
