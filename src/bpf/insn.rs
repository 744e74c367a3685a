//! BPF instructions: 8 bytes, laid out as `struct bpf_insn`.

/// One instruction. `regs` holds dst_reg in the low nibble and src_reg in
/// the high one, as `struct bpf_insn`'s bit-fields do on little-endian.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Insn {
    /// The opcode (`BPF_CLASS | BPF_SIZE | BPF_MODE` or `| BPF_OP | BPF_SRC`).
    pub code: u8,
    /// dst_reg in the low nibble, src_reg in the high one.
    pub regs: u8,
    /// The signed offset (jumps, memory accesses; a kfunc call's fd index).
    pub off: i16,
    /// The immediate (the low half of an ld_imm64's value).
    pub imm: i32,
}

// SAFETY: four integer fields of 1, 1, 2 and 4 bytes in that order:
// `repr(C)` puts them at offsets 0, 1, 2 and 4 with no padding (8 bytes,
// as `layout_is_struct_bpf_insn` checks), and every bit pattern of each is
// a value.
unsafe impl crate::base::mapped::Plain for Insn {}

/// `BPF_LD | BPF_IMM | BPF_DW`: the first half of a 64-bit immediate load.
pub const LD_IMM64: u8 = 0x18;
/// `BPF_JMP | BPF_CALL`.
pub const CALL: u8 = 0x85;

/// src_reg of a call to a BPF function (bpf-to-bpf call).
pub const PSEUDO_CALL: u8 = 1;
/// src_reg of an ld_imm64 of a map fd.
pub const PSEUDO_MAP_FD: u8 = 1;
/// src_reg of an ld_imm64 of a map value address.
pub const PSEUDO_MAP_VALUE: u8 = 2;
/// src_reg of an ld_imm64 of a BPF function's address (callbacks).
pub const PSEUDO_FUNC: u8 = 4;
/// src_reg of an ld_imm64 of a kernel variable's BTF id (typed ksyms).
pub const PSEUDO_BTF_ID: u8 = 3;
/// src_reg of a call to a kernel function (kfunc).
pub const PSEUDO_KFUNC_CALL: u8 = 2;

impl Insn {
    /// Decodes little-endian bytes (exactly 8).
    pub fn from_bytes(b: &[u8]) -> Insn {
        Insn {
            code: b[0],
            regs: b[1],
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    /// The source register (high nibble of `regs`).
    pub fn src_reg(&self) -> u8 {
        self.regs >> 4
    }

    /// Sets the source register, keeping the destination.
    pub fn set_src_reg(&mut self, src: u8) {
        self.regs = (self.regs & 0x0f) | (src << 4);
    }

    /// The first half of a 64-bit immediate load (`BPF_LD | BPF_IMM | BPF_DW`).
    pub fn is_ld_imm64(&self) -> bool {
        self.code == LD_IMM64
    }

    /// A call (`BPF_JMP | BPF_CALL`): a helper, a BPF function or a kfunc.
    pub fn is_call(&self) -> bool {
        self.code == CALL
    }

    /// A bpf-to-bpf call (to a subprogram).
    pub fn is_pseudo_call(&self) -> bool {
        self.is_call() && self.src_reg() == PSEUDO_CALL
    }
}

/// libbpf's `POISON_CALL_KFUNC_BASE`: a call to a weak kfunc the kernel
/// lacks becomes a call of helper `2002000000 + extern index`, which the
/// verifier rejects (`invalid func unknown#2002000003`) only where it is
/// reachable.
pub const POISON_CALL_KFUNC_BASE: i32 = 2_002_000_000;

/// libbpf's poisoned call of the missing weak kfunc that is extern
/// `libbpf_idx` in its order (`poison_kfunc_call`).
pub fn poisoned_kfunc_call(libbpf_idx: usize) -> Insn {
    Insn {
        code: CALL,
        regs: 0,
        off: 0,
        imm: POISON_CALL_KFUNC_BASE.saturating_add(i32::try_from(libbpf_idx).unwrap_or(i32::MAX)),
    }
}

/// The index of the first bpf-to-bpf call in `insns`. A large program is
/// mostly anything else and the relocation walks it from call to call:
/// blocks of 16 are tested as words, without a branch per instruction
/// (the compiler vectorizes it).
pub fn first_pseudo_call(insns: &[Insn]) -> Option<usize> {
    const W: usize = 16;
    // code (byte 0) CALL and src_reg (byte 1's high nibble) PSEUDO_CALL.
    const MASK: u64 = 0xf0ff;
    const WANT: u64 = ((PSEUDO_CALL as u64) << 12) | CALL as u64;
    let is = |b: &[u8]| <[u8; 8]>::try_from(b).is_ok_and(|w| u64::from_le_bytes(w) & MASK == WANT);
    let bytes = crate::base::mapped::bytes_of(insns);
    let from = bytes
        .chunks_exact(8 * W)
        .position(|b| b.chunks_exact(8).fold(false, |hit, w| hit | is(w)))
        .map_or(insns.len() / W * W, |b| b * W);
    bytes[from * 8..]
        .chunks_exact(8)
        .position(is)
        .map(|i| from + i)
}

/// A code section's instructions, read from its bytes where they lie
/// (decoded when asked: the object's code is copied once, into layouts).
#[derive(Clone, Copy, Debug)]
pub struct Insns<'a>(&'a [u8]);

impl<'a> Insns<'a> {
    /// The instructions of `bytes` (a trailing partial one is ignored:
    /// callers check the size is a multiple of 8).
    pub fn new(bytes: &'a [u8]) -> Insns<'a> {
        Insns(&bytes[..bytes.len() / 8 * 8])
    }

    pub fn len(&self) -> usize {
        self.0.len() / 8
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Instruction `i` (`i < len()`).
    pub fn get(&self, i: usize) -> Insn {
        Insn::from_bytes(&self.0[i * 8..i * 8 + 8])
    }

    /// Appends instructions `start..start + n` to `out` (one copy: an
    /// `Insn` is laid out as `struct bpf_insn`'s bytes).
    pub fn copy_to(&self, start: usize, n: usize, out: &mut Vec<Insn>) {
        crate::base::mapped::extend_le(out, &self.0[start * 8..(start + n) * 8], Insn::from_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_struct_bpf_insn() {
        assert_eq!(std::mem::size_of::<Insn>(), 8);
        // r1 = 0x1122334455667788 ll (first half), src_reg 1
        let i = Insn::from_bytes(&[0x18, 0x11, 0, 0, 0x88, 0x77, 0x66, 0x55]);
        assert!(i.is_ld_imm64());
        assert_eq!((i.src_reg(), i.regs & 0xf, i.imm), (1, 1, 0x55667788));
        let mut c = Insn::from_bytes(&[0x85, 0x10, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert!(c.is_pseudo_call());
        assert_eq!(c.imm, -1);
        c.set_src_reg(PSEUDO_KFUNC_CALL);
        assert_eq!(c.regs, 0x20);
        let bytes = [0x85u8, 0x10, 0, 0, 1, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0, 7];
        let v = Insns::new(&bytes);
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v.get(0).code, v.get(0).imm, v.get(1).code),
            (0x85, 1, 0x95)
        );
        let mut out = Vec::new();
        v.copy_to(1, 1, &mut out);
        assert_eq!(out, vec![v.get(1)]);
    }

    #[test]
    fn copy_to_is_decoding_every_instruction() {
        // Arbitrary bytes (every value of every field), copied from odd
        // starts onto a vector that already holds some.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let bytes: Vec<u8> = (0..8 * 1000 + 5)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let v = Insns::new(&bytes);
        for (start, n) in [(0, 1000), (3, 500), (999, 1), (10, 0)] {
            let mut out = vec![Insn::default(); 3];
            v.copy_to(start, n, &mut out);
            let want: Vec<Insn> = std::iter::repeat_n(Insn::default(), 3)
                .chain((start..start + n).map(|i| v.get(i)))
                .collect();
            assert_eq!(out, want, "{start}+{n}");
        }
    }

    #[test]
    fn first_pseudo_call_is_the_first_one() {
        // Oracle: the plain per-instruction test. Near misses around the
        // calls: CALL with other src_regs (helpers 0, kfuncs 2) and dst
        // bits set, and src_reg 1 on other opcodes (ld_imm64 of a map).
        let near = [
            Insn::from_bytes(&[0x85, 0x00, 0, 0, 1, 0, 0, 0]),
            Insn::from_bytes(&[0x85, 0x20, 0, 0, 1, 0, 0, 0]),
            Insn::from_bytes(&[0x85, 0x0f, 0, 0, 1, 0, 0, 0]),
            Insn::from_bytes(&[0x18, 0x10, 0, 0, 1, 0, 0, 0]),
            Insn::from_bytes(&[0x84, 0x10, 0, 0, 1, 0, 0, 0]),
        ];
        let call = Insn::from_bytes(&[0x85, 0x1f, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        for len in [0, 1, 15, 16, 17, 40, 100] {
            for at in (0..len).chain([usize::MAX]) {
                let mut v: Vec<Insn> = (0..len).map(|i| near[i % near.len()]).collect();
                if at < len {
                    v[at] = call;
                    if at + 3 < len {
                        v[at + 3] = call;
                    }
                }
                let want = v.iter().position(Insn::is_pseudo_call);
                assert_eq!(first_pseudo_call(&v), want, "len {len}, call at {at}");
            }
        }
    }
}
