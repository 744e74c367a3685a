//! Which kernel functions a BPF trampoline (fentry, fexit, fmod_ret) can
//! take, by their BTF prototype, as the running kernel decides:
//!
//! - `btf_distill_func_proto` (kernel/bpf/btf.c), when the program loads:
//!   at most `MAX_BPF_FUNC_ARGS` (12) arguments; the return type void, an
//!   integer, an enum or a pointer (not a struct); every argument an
//!   integer, enum, pointer or, from Linux 6.1 (commit 720e6a4351), a
//!   struct of at most 16 bytes (a union from 6.18, commit ccb4f5d91ec4);
//!   no variadic or zero-sized argument. `EINVAL` at `BPF_PROG_LOAD`.
//! - the x86-64 trampoline (`arch_prepare_bpf_trampoline`,
//!   arch/x86/net/bpf_jit_comp.c), when the link is made: the arguments in
//!   8-byte registers (a 16-byte struct takes two) at most 6 before Linux
//!   6.6, at most 12 from 6.6 (commit 473e3150e30a: the rest through the
//!   stack). `ENOTSUPP` (524) at `BPF_LINK_CREATE`.
//!
//! Other architectures' trampolines have limits of their own that are not
//! modelled here: only the load-time rule applies to them.

use crate::formats::btf::{
    Btf, KIND_ENUM, KIND_ENUM64, KIND_FUNC_PROTO, KIND_INT, KIND_PTR, KIND_STRUCT, KIND_UNION,
};

/// `MAX_BPF_FUNC_ARGS` (include/linux/bpf.h).
pub const MAX_ARGS: usize = 12;
/// The largest struct passed by value (`btf_distill_func_proto`).
pub const MAX_STRUCT_ARG: u64 = 16;

/// The kernel whose rules apply: its version and whether it is x86-64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// (major, minor) of the kernel release.
    pub version: (u32, u32),
    /// The x86-64 trampoline's register limit applies.
    pub x86_64: bool,
}

impl Rules {
    /// The rules of kernel release `release` ("6.1.0-13-amd64") on this
    /// machine's architecture; `None` when the release does not start
    /// with a version.
    pub fn for_release(release: &[u8]) -> Option<Rules> {
        let s = std::str::from_utf8(release).ok()?;
        let mut it = s.split(|c: char| !c.is_ascii_digit());
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        Some(Rules {
            version: (major, minor),
            x86_64: cfg!(target_arch = "x86_64"),
        })
    }

    /// The running kernel's rules (`uname -r`); `None` when unknown.
    pub fn running() -> Option<Rules> {
        Rules::for_release(&crate::base::sys::kernel_release()?)
    }

    /// The most arguments the trampoline passes, in 8-byte registers
    /// (`None`: not modelled for this architecture).
    pub fn max_regs(&self) -> Option<usize> {
        match (self.x86_64, self.version >= (6, 6)) {
            (false, _) => None,
            (true, false) => Some(6),
            (true, true) => Some(MAX_ARGS),
        }
    }

    /// Why the trampoline cannot take a function of prototype `proto` (a
    /// FUNC_PROTO id of `btf`), or `None` when it can.
    pub fn refuses(&self, btf: &Btf, proto: u32) -> Option<String> {
        let t = btf.ty(proto).filter(|t| t.kind() == KIND_FUNC_PROTO)?;
        let n = t.vlen();
        if n > MAX_ARGS {
            return Some(format!(
                "{n} arguments, more than MAX_BPF_FUNC_ARGS ({MAX_ARGS})"
            ));
        }
        match self.by_value(btf, t.type_id()) {
            Value::Void | Value::Scalar(_) => {}
            v => return Some(format!("its return type ({}) is unsupported", v.what())),
        }
        let mut regs = 0;
        for (i, (_, ty)) in t.params().enumerate() {
            if ty == 0 {
                return Some(if i + 1 == n {
                    "variable arguments are unsupported".to_string()
                } else {
                    format!("argument {i} is void")
                });
            }
            let size = match self.by_value(btf, ty) {
                Value::Scalar(s) | Value::Struct(s) if s == 0 => {
                    return Some(format!("argument {i} has size 0"))
                }
                Value::Scalar(s) if s <= MAX_STRUCT_ARG => s,
                Value::Struct(s) if s <= MAX_STRUCT_ARG => s,
                Value::Struct(s) => {
                    return Some(format!(
                        "argument {i} is a struct of {s} bytes, more than {MAX_STRUCT_ARG}"
                    ))
                }
                v => return Some(format!("argument {i} ({}) is unsupported", v.what())),
            };
            // Before 6.6 every argument took (size + 7) / 8 registers; from
            // 6.6 only structs take more than one.
            let wide = self.version < (6, 6) || matches!(self.by_value(btf, ty), Value::Struct(_));
            regs += if wide { size.div_ceil(8) as usize } else { 1 };
        }
        match self.max_regs() {
            Some(max) if regs > max => Some(format!(
                "{regs} argument registers, more than the trampoline's {max} on Linux {}.{}",
                self.version.0, self.version.1
            )),
            _ => None,
        }
    }

    /// A type as the kernel's `__get_type_size` sees it.
    fn by_value(&self, btf: &Btf, id: u32) -> Value {
        if id == 0 {
            return Value::Void;
        }
        let Ok(r) = btf.resolve(id) else {
            return Value::Other("a loop of typedefs");
        };
        let Some(t) = btf.ty(r) else {
            return Value::Void;
        };
        match t.kind() {
            KIND_PTR => Value::Scalar(8),
            KIND_INT | KIND_ENUM | KIND_ENUM64 => Value::Scalar(t.size() as u64),
            KIND_STRUCT if self.version >= (6, 1) => Value::Struct(t.size() as u64),
            KIND_UNION if self.version >= (6, 18) => Value::Struct(t.size() as u64),
            KIND_STRUCT => Value::Other("a struct by value"),
            KIND_UNION => Value::Other("a union by value"),
            k => Value::Other(crate::formats::btf::kind_name(k)),
        }
    }
}

/// What a type passed by value is to the trampoline.
enum Value {
    Void,
    /// An integer, enum or pointer of this size.
    Scalar(u64),
    /// A struct (or union) it may take, of this size.
    Struct(u64),
    Other(&'static str),
}

impl Value {
    fn what(&self) -> String {
        match self {
            Value::Void => "void".into(),
            Value::Scalar(s) => format!("a {s}-byte scalar"),
            Value::Struct(s) => format!("a struct of {s} bytes"),
            Value::Other(w) => (*w).into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::btf::tests::Builder;
    use crate::formats::btf::{KIND_FLOAT, KIND_TYPEDEF};

    const R61: Rules = Rules {
        version: (6, 1),
        x86_64: true,
    };
    const R66: Rules = Rules {
        version: (6, 6),
        x86_64: true,
    };
    const R60: Rules = Rules {
        version: (6, 0),
        x86_64: true,
    };

    /// Hand-made BTF: int (1, 4 bytes), long (2, 8), a pointer (3), a
    /// struct of 16 bytes (4), of 24 (5), a union of 8 (6), a float (7), a
    /// typedef of the 16-byte struct (8), an empty struct (9); then the
    /// prototypes named in each test.
    fn base() -> Builder {
        let mut b = Builder::new();
        b.t("int", KIND_INT, 0, false, 4, &[32]);
        b.t("long", KIND_INT, 0, false, 8, &[64]);
        b.t("", KIND_PTR, 0, false, 1, &[]);
        b.t("s16", KIND_STRUCT, 0, false, 16, &[]);
        b.t("s24", KIND_STRUCT, 0, false, 24, &[]);
        b.t("u8", KIND_UNION, 0, false, 8, &[]);
        b.t("double", KIND_FLOAT, 0, false, 8, &[]);
        b.t("s16_t", KIND_TYPEDEF, 0, false, 4, &[]);
        b.t("empty", KIND_STRUCT, 0, false, 0, &[]);
        b
    }

    fn proto(b: &mut Builder, ret: u32, args: &[u32]) -> u32 {
        let words: Vec<u32> = args.iter().flat_map(|&a| [0, a]).collect();
        b.t("", KIND_FUNC_PROTO, args.len() as u32, false, ret, &words)
    }

    fn check(ret: u32, args: &[u32], rules: Rules) -> Option<String> {
        let mut b = base();
        let p = proto(&mut b, ret, args);
        let btf = Btf::parse(b.bytes()).unwrap();
        rules.refuses(&btf, p)
    }

    #[test]
    fn argument_counts_per_version() {
        // Six 8-byte arguments: every x86-64 trampoline.
        assert_eq!(check(1, &[2; 6], R61), None);
        // Seven: refused before 6.6 (7 registers > 6), taken from 6.6.
        assert!(check(1, &[2; 7], R61)
            .unwrap()
            .contains("7 argument registers"));
        assert_eq!(check(1, &[2; 7], R66), None);
        // Twelve from 6.6; thirteen never (MAX_BPF_FUNC_ARGS).
        assert_eq!(check(0, &[3; 12], R66), None);
        assert!(check(0, &[3; 13], R66).unwrap().contains("13 arguments"));
        // Not x86-64: the register limit is not modelled, the count is.
        let other = Rules {
            x86_64: false,
            ..R61
        };
        assert_eq!(other.max_regs(), None);
        assert_eq!(check(1, &[2; 10], other), None);
        assert!(check(1, &[2; 13], other).is_some());
    }

    #[test]
    fn structs_by_value() {
        // A 16-byte struct takes two registers: 5 + 1 struct = 7 > 6 on 6.1.
        assert_eq!(check(1, &[4, 2, 2, 2, 2], R61), None);
        assert!(check(1, &[4, 2, 2, 2, 2, 2], R61).is_some());
        assert_eq!(check(1, &[4, 2, 2, 2, 2, 2], R66), None);
        // Through a typedef, the same struct.
        assert_eq!(check(1, &[8], R61), None);
        // More than 16 bytes: never.
        assert!(check(1, &[5], R66).unwrap().contains("24 bytes"));
        // Before 6.1: no struct by value at all.
        assert!(check(1, &[4], R60).unwrap().contains("struct by value"));
        // A union: from 6.18 only.
        assert!(check(1, &[6], R66).unwrap().contains("union"));
        let r618 = Rules {
            version: (6, 18),
            ..R66
        };
        assert_eq!(check(1, &[6], r618), None);
        // A zero-sized struct is refused ("malformed void argument").
        assert!(check(1, &[9], R61).unwrap().contains("size 0"));
    }

    #[test]
    fn returns_and_other_kinds() {
        assert_eq!(check(0, &[], R61), None, "void f(void)");
        assert_eq!(check(3, &[1], R61), None, "a pointer return");
        assert!(check(4, &[1], R61).unwrap().contains("return type"));
        assert!(check(7, &[1], R61).unwrap().contains("return type"));
        assert!(check(1, &[7], R61).unwrap().contains("FLOAT"));
        // A trailing void parameter: variadic.
        assert!(check(1, &[1, 0], R61).unwrap().contains("variable"));
    }

    #[test]
    fn releases_parse() {
        let r = Rules::for_release(b"6.1.0-13-amd64").unwrap();
        assert_eq!(r.version, (6, 1));
        assert_eq!(Rules::for_release(b"6.12").unwrap().version, (6, 12));
        assert_eq!(Rules::for_release(b"6.6-rc1").unwrap().version, (6, 6));
        assert!(Rules::for_release(b"linux").is_none());
        assert!(Rules::for_release(b"6").is_none());
    }
}
