//! Applying a relocation's result to its instruction
//! (`bpf_core_patch_insn`), poisoning included.

use super::{RelocRes, POISON_IMM};
use crate::bpf::insn::Insn;
use crate::error::{Error, Result};

fn poison(insns: &mut [Insn], idx: usize) {
    let n = if insns[idx].is_ld_imm64() { 2 } else { 1 };
    for i in insns.iter_mut().skip(idx).take(n) {
        *i = Insn {
            code: crate::bpf::insn::CALL,
            regs: 0,
            off: 0,
            imm: POISON_IMM,
        };
    }
}

/// BPF size bits of a load/store.
fn size_bytes(code: u8) -> Option<u32> {
    match code & 0x18 {
        0x18 => Some(8),
        0x00 => Some(4),
        0x08 => Some(2),
        0x10 => Some(1),
        _ => None,
    }
}

fn size_code(bytes: u32) -> Option<u8> {
    match bytes {
        8 => Some(0x18),
        4 => Some(0x00),
        2 => Some(0x08),
        1 => Some(0x10),
        _ => None,
    }
}

/// `bpf_core_patch_insn`: applies `res` to `insns[idx]` (and the next one
/// of an ld_imm64). `what` names the relocation in messages.
pub fn patch(insns: &mut [Insn], idx: usize, res: &RelocRes, what: &str) -> Result<()> {
    let insn = insns[idx];
    let class = insn.code & 0x07;
    let fail = |why: String| Error::format(format!("{what}: {why}"));
    match class {
        // ALU, ALU64
        0x04 | 0x07 => {
            if insn.code & 0x08 != 0 {
                return Err(fail(format!(
                    "insn #{idx} (ALU) does not take an immediate"
                )));
            }
            if res.poison {
                poison(insns, idx);
                return Ok(());
            }
            // C compares the s32 immediate, sign-extended, with the u64.
            if res.validate && insn.imm as i64 as u64 != res.orig_val {
                return Err(fail(format!(
                    "unexpected insn #{idx} (ALU/ALU64) value: got {}, exp {} -> {}",
                    insn.imm as u32, res.orig_val, res.new_val
                )));
            }
            insns[idx].imm = res.new_val as i32;
        }
        // LDX, ST, STX
        0x01..=0x03 => {
            if res.poison {
                poison(insns, idx);
                return Ok(());
            }
            if res.validate && insn.off as i64 as u64 != res.orig_val {
                return Err(fail(format!(
                    "unexpected insn #{idx} (LDX/ST/STX) value: got {}, exp {} -> {}",
                    insn.off as u16, res.orig_val, res.new_val
                )));
            }
            if res.new_val > i16::MAX as u64 {
                return Err(fail(format!(
                    "insn #{idx} (LDX/ST/STX) value too big: {}",
                    res.new_val
                )));
            }
            if res.fail_memsz_adjust {
                poison(insns, idx);
                return Ok(());
            }
            insns[idx].off = res.new_val as i16;
            if res.new_sz != res.orig_sz {
                if size_bytes(insn.code) != Some(res.orig_sz) {
                    return Err(fail(format!(
                        "insn #{idx} (LDX/ST/STX) unexpected mem size: got {:?}, exp {}",
                        size_bytes(insn.code),
                        res.orig_sz
                    )));
                }
                let sz = size_code(res.new_sz).ok_or_else(|| {
                    fail(format!(
                        "insn #{idx} (LDX/ST/STX) invalid new mem size: {}",
                        res.new_sz
                    ))
                })?;
                insns[idx].code = (insn.code & 0xe0) | sz | (insn.code & 0x07);
            }
        }
        // LD
        0x00 => {
            let ok = insn.is_ld_imm64()
                && insn.src_reg() == 0
                && insn.off == 0
                && insns
                    .get(idx + 1)
                    .is_some_and(|n| n.code == 0 && n.regs == 0 && n.off == 0);
            if !ok {
                return Err(fail(format!("insn #{idx} (LDIMM64) has unexpected form")));
            }
            if res.poison {
                poison(insns, idx);
                return Ok(());
            }
            let imm = insn.imm as u32 as u64 | ((insns[idx + 1].imm as u32 as u64) << 32);
            if res.validate && imm != res.orig_val {
                return Err(fail(format!(
                    "unexpected insn #{idx} (LDIMM64) value: got {imm}, exp {} -> {}",
                    res.orig_val, res.new_val
                )));
            }
            insns[idx].imm = res.new_val as u32 as i32;
            insns[idx + 1].imm = (res.new_val >> 32) as u32 as i32;
        }
        _ => {
            return Err(fail(format!(
                "trying to relocate unrecognized insn #{idx}, code {:#x}",
                insn.code
            )))
        }
    }
    Ok(())
}
