//! What BTF a kernel's `BPF_BTF_LOAD` takes, as libbpf 1.7 asks it: one
//! tiny blob per feature (features.c: `probe_kern_btf*`), each loaded and
//! closed. An older kernel refuses a whole blob for one kind it does not
//! know, so a loader hands it the object's BTF with those kinds rewritten
//! ([`super::sanitize`]).

use std::sync::OnceLock;

use super::{blob, KIND_DATASEC, KIND_DECL_TAG, KIND_ENUM64, KIND_FLOAT, KIND_FUNC};
use super::{KIND_FUNC_PROTO, KIND_INT, KIND_PTR, KIND_TYPE_TAG, KIND_VAR};
use crate::error::{Error, Result};

/// The BTF a kernel takes, as a set: libbpf's `FEAT_BTF*` probes, one
/// flag each (the kernel release that brought it in parentheses).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BtfFeatures(u32);

impl BtfFeatures {
    /// BTF at all: `BPF_BTF_LOAD` of an INT (4.18). Without it a kernel
    /// takes no BTF: load maps and programs without it, as libbpf does.
    pub const BTF: Self = Self(1 << 0);
    /// FUNC and FUNC_PROTO (5.0); func_info and line_info with them.
    pub const FUNC: Self = Self(1 << 1);
    /// FUNC of global linkage (5.6).
    pub const GLOBAL_FUNC: Self = Self(1 << 2);
    /// VAR and DATASEC (5.2).
    pub const DATASEC: Self = Self(1 << 3);
    /// FLOAT (5.13).
    pub const FLOAT: Self = Self(1 << 4);
    /// DECL_TAG (5.16).
    pub const DECL_TAG: Self = Self(1 << 5);
    /// TYPE_TAG (5.17).
    pub const TYPE_TAG: Self = Self(1 << 6);
    /// ENUM64, and the kind flag of a signed ENUM (6.0).
    pub const ENUM64: Self = Self(1 << 7);
    /// DATASEC names that start with '?' (6.10).
    pub const QMARK_DATASEC: Self = Self(1 << 8);
    /// Every feature: a kernel whose BTF needs no rewriting.
    pub const ALL: Self = Self((1 << 9) - 1);

    /// Each feature and its name, in bit order.
    const NAMES: [(Self, &'static str); 9] = [
        (Self::BTF, "btf"),
        (Self::FUNC, "func"),
        (Self::GLOBAL_FUNC, "global_func"),
        (Self::DATASEC, "datasec"),
        (Self::FLOAT, "float"),
        (Self::DECL_TAG, "decl_tag"),
        (Self::TYPE_TAG, "type_tag"),
        (Self::ENUM64, "enum64"),
        (Self::QMARK_DATASEC, "qmark_datasec"),
    ];

    /// No feature: a kernel that takes no BTF.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// The flags as bits (the C API's `KSYM_BTF_FEAT_*`).
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The set of `bits`; `None` when a bit names no feature.
    pub const fn from_bits(bits: u32) -> Option<Self> {
        if bits & !Self::ALL.0 != 0 {
            None
        } else {
            Some(Self(bits))
        }
    }

    /// Whether every feature of `other` is in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// `self` without the features of `other`.
    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// The names of the features in `self` ("btf", "func", "global_func",
    /// "datasec", "float", "decl_tag", "type_tag", "enum64",
    /// "qmark_datasec"), in bit order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES
            .into_iter()
            .filter(move |(f, _)| self.contains(*f))
            .map(|(_, n)| n)
    }

    /// The feature named `name` (as [`BtfFeatures::names`] spells it).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMES
            .into_iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| f)
    }

    /// The running kernel's features, probed as libbpf 1.7 probes them:
    /// each a tiny BTF blob given to `BPF_BTF_LOAD`. Probed once per
    /// process; later calls return that answer. A kernel that takes no BTF
    /// at all (`EINVAL` for the INT alone) has none; when the kernel
    /// refuses the probe itself (`EPERM` without `CAP_BPF`, no `bpf()`),
    /// the error is that errno, and nothing is kept (libbpf would take
    /// every feature for missing).
    pub fn probe() -> Result<Self> {
        static KNOWN: OnceLock<BtfFeatures> = OnceLock::new();
        if let Some(&f) = KNOWN.get() {
            return Ok(f);
        }
        let f = probe_with(crate::base::sys::bpf::btf_loads)?;
        Ok(*KNOWN.get_or_init(|| f))
    }
}

impl std::ops::BitOr for BtfFeatures {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl std::fmt::Debug for BtfFeatures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.names().collect();
        write!(f, "BtfFeatures({})", names.join(" | "))
    }
}

/// `BTF_TYPE_ENC`'s info word.
const fn info(kind: u32, kflag: bool, vlen: u32) -> u32 {
    (kflag as u32) << 31 | kind << 24 | vlen
}

/// A 4-byte signed INT named by string `name` (`BTF_TYPE_INT_ENC`).
const fn int(name: u32) -> [u32; 4] {
    [
        name,
        info(KIND_INT, false, 0),
        4,
        (super::INT_SIGNED << 24) | 32,
    ]
}

/// The probes: each feature and the types and strings of its blob
/// (features.c, word for word).
fn probes() -> [(BtfFeatures, Vec<u32>, &'static [u8]); 9] {
    let func = |linkage| {
        let mut t = int(1).to_vec();
        // void x(int a): FUNC_PROTO [2] with param "a", FUNC "x" [3].
        t.extend([0, info(KIND_FUNC_PROTO, false, 1), 0, 7, 1]);
        t.extend([5, info(KIND_FUNC, false, linkage), 2]);
        t
    };
    let datasec = || {
        let mut t = int(0).to_vec();
        // static int x in ".data" (or "?.data"): VAR [2], DATASEC [3].
        t.extend([1, info(KIND_VAR, false, 0), 1, 0]);
        t.extend([3, info(KIND_DATASEC, false, 1), 4, 2, 0, 4]);
        t
    };
    let mut decl_tag = int(0).to_vec();
    decl_tag.extend([1, info(KIND_VAR, false, 0), 1, 0]);
    decl_tag.extend([1, info(KIND_DECL_TAG, false, 0), 2, u32::MAX]);
    let mut type_tag = int(0).to_vec();
    type_tag.extend([1, info(KIND_TYPE_TAG, false, 0), 1]);
    type_tag.extend([0, info(KIND_PTR, false, 0), 2]);
    [
        (BtfFeatures::BTF, int(1).to_vec(), b"\0int\0"),
        (BtfFeatures::FUNC, func(0), b"\0int\0x\0a\0"),
        (BtfFeatures::GLOBAL_FUNC, func(1), b"\0int\0x\0a\0"),
        (BtfFeatures::DATASEC, datasec(), b"\0x\0.data\0"),
        (BtfFeatures::QMARK_DATASEC, datasec(), b"\0x\0?.data\0"),
        (
            BtfFeatures::FLOAT,
            vec![1, info(KIND_FLOAT, false, 0), 4],
            b"\0float\0",
        ),
        (BtfFeatures::DECL_TAG, decl_tag, b"\0tag\0"),
        (BtfFeatures::TYPE_TAG, type_tag, b"\0tag\0"),
        (
            BtfFeatures::ENUM64,
            vec![1, info(KIND_ENUM64, false, 0), 8],
            b"\0enum64\0",
        ),
    ]
}

/// The probe blob of each feature, as BTF bytes (for tests that answer the
/// probes themselves).
pub fn probe_blobs() -> impl Iterator<Item = (BtfFeatures, Vec<u8>)> {
    probes().into_iter().map(|(f, types, strs)| {
        let tb: Vec<u8> = types.iter().flat_map(|w| w.to_le_bytes()).collect();
        (f, blob(0, &tb, strs))
    })
}

/// The features of a kernel whose `BPF_BTF_LOAD` is `load`: the first
/// probe (BTF at all) decides whether to go on, and a refusal other than
/// `EINVAL` is the error; the others are present when the kernel takes
/// their blob and missing otherwise, whatever the errno (as libbpf).
pub fn probe_with(mut load: impl FnMut(&[u8]) -> std::io::Result<()>) -> Result<BtfFeatures> {
    let mut got = BtfFeatures::empty();
    for (f, b) in probe_blobs() {
        match load(&b) {
            Ok(()) => got = got | f,
            Err(e) if f == BtfFeatures::BTF => {
                if e.raw_os_error() == Some(libc::EINVAL) {
                    return Ok(got);
                }
                return Err(Error::io(
                    &e,
                    "probing the kernel's BTF features: BPF_BTF_LOAD of an INT (needs CAP_BPF)",
                ));
            }
            Err(_) => {}
        }
    }
    Ok(got)
}
