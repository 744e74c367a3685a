//! `collect_externs`: the externs the object's BTF describes, the VARs and
//! FUNCs of `.ksyms` and `.kconfig` (untyped ksyms without BTF are found
//! by [`super::collect_relos`], from relocations).

use std::ffi::CString;

use object::elf as E;

use super::Externs;
use crate::bpf::elf::Elf;
use crate::bpf::object::externs::{kconfig_size, Extern, ExternKind, Kcfg, KcfgType};
use crate::error::{Error, Result};
use crate::formats::btf::{self as fbtf, Btf, Ty};

pub(super) fn collect(elf: &Elf<'_>, local: Option<&Btf>) -> Result<Externs> {
    let is_weak = |name: &[u8]| {
        elf.syms
            .iter()
            .any(|s| s.name == name && s.shndx == E::SHN_UNDEF && s.bind == E::STB_WEAK)
    };
    let list = match local {
        Some(b) => from_btf(b, is_weak)?,
        None => Vec::new(),
    };
    let by_name = list
        .iter()
        .enumerate()
        .map(|(i, x)| (x.name.to_bytes().to_vec(), i))
        .collect();
    Ok(Externs { list, by_name })
}

/// The externs the object's BTF describes: the VARs and FUNCs of the
/// `.ksyms` and `.kconfig` DATASECs, in that order; `weak` says whether
/// the ELF symbol of a name is weak. `.kconfig` externs get libbpf's
/// layout of the `.kconfig` map.
fn from_btf(btf: &Btf, weak: impl Fn(&[u8]) -> bool) -> Result<Vec<Extern>> {
    let mut out = Vec::new();
    for sec in [&b".ksyms"[..], b".kconfig"] {
        let Some(ds) = btf
            .own_ids()
            .filter_map(|id| btf.ty(id))
            .find(|t| t.kind() == fbtf::KIND_DATASEC && btf.str(t.name_off) == sec)
        else {
            continue;
        };
        for (vid, _, _) in ds.datasec() {
            let Some(v) = btf.ty(vid) else { continue };
            let name = btf.str(v.name_off);
            let cname = CString::new(name).unwrap_or_default();
            let mut x = Extern::untyped(cname, weak(name));
            let shown = String::from_utf8_lossy(name);
            match (sec == b".kconfig", v.kind()) {
                (false, fbtf::KIND_FUNC) if x.kind.is_alias() => {
                    return Err(Error::invalid(format!(
                        "extern function `{shown}` is a reserved name, a per-alias constant: \
                         declare it `extern const void {shown} __ksym __weak;`"
                    )))
                }
                (false, fbtf::KIND_FUNC) => {
                    x.kind = ExternKind::Kfunc;
                    x.local_type = v.type_id();
                }
                (false, fbtf::KIND_VAR) => {
                    x.local_type = btf.resolve(v.type_id())?;
                    if x.local_type != 0 && x.kind.is_alias() {
                        return Err(Error::invalid(format!(
                            "extern `{shown}` is a reserved name, a per-alias constant: declare it \
                             untyped, `extern const void {shown} __ksym __weak;`"
                        )));
                    }
                    if x.local_type != 0 {
                        x.kind = ExternKind::KsymBtf;
                    }
                }
                (true, fbtf::KIND_FUNC) => {
                    return Err(Error::unsupported(format!(
                        "extern function `{shown}` is in `.kconfig`: only variables can be"
                    )))
                }
                (true, fbtf::KIND_VAR) => {
                    x.kind = ExternKind::Kconfig;
                    x.kcfg = Some(kcfg_of(btf, v, &shown)?);
                }
                _ => continue,
            }
            out.push(x);
        }
    }
    layout_kconfig(&mut out);
    if kconfig_size(&out) > MAX_KCONFIG_MAP {
        return Err(Error::unsupported(format!(
            "the `.kconfig` externs need more than {} KiB: a broken object",
            MAX_KCONFIG_MAP >> 10
        )));
    }
    Ok(out)
}

/// Numbers the externs as libbpf orders them (`cmp_externs`): `.kconfig`
/// ones first, by descending alignment, ascending size and name, then the
/// `__ksym` ones by name.
pub(in crate::bpf) fn number_as_libbpf(externs: &mut [Extern]) {
    let mut order: Vec<usize> = (0..externs.len()).collect();
    let key = |x: &Extern| {
        let k = x.kcfg.map(|k| (std::cmp::Reverse(k.align), k.size));
        (x.kcfg.is_none(), k)
    };
    order.sort_by(|&a, &b| {
        let (x, y) = (&externs[a], &externs[b]);
        key(x).cmp(&key(y)).then_with(|| x.name.cmp(&y.name))
    });
    for (n, i) in order.into_iter().enumerate() {
        externs[i].libbpf_idx = n;
    }
}

/// A `.kconfig` VAR's type, size and alignment (libbpf's
/// `find_kcfg_type`, `btf__resolve_size`, `btf__align_of`).
fn kcfg_of(btf: &Btf, v: Ty<'_>, name: &str) -> Result<Kcfg> {
    let bad = |why: &str| Error::unsupported(format!("extern `{name}` (.kconfig): {why}"));
    let size = btf
        .size_of(v.type_id())?
        .filter(|&s| s > 0)
        .ok_or_else(|| bad("no size"))?;
    let align = btf
        .align_of(v.type_id())?
        .ok_or_else(|| bad("no alignment"))?;
    let (ty, signed) = kcfg_type(btf, v.type_id())?.ok_or_else(|| {
        bad(
            "type is unsupported: use bool, char, an integer of 1 to 8 bytes, \
             enum libbpf_tristate or a char array",
        )
    })?;
    // A config value is a few bytes (a string: a few hundred): a huge one
    // is a broken object, and would make a huge map.
    if size > MAX_KCFG as u64 {
        return Err(bad(&format!("{size} bytes: more than {MAX_KCFG}")));
    }
    Ok(Kcfg {
        ty,
        size: size as u32,
        align,
        signed,
        off: 0,
    })
}

/// libbpf's `find_kcfg_type`: (type, signed) or `None` when unsupported.
fn kcfg_type(btf: &Btf, id: u32) -> Result<Option<(KcfgType, bool)>> {
    let id = btf.resolve(id)?;
    let Some(t) = btf.ty(id) else { return Ok(None) };
    const INT_SIGNED: u32 = 1;
    const INT_BOOL: u32 = 4;
    Ok(match t.kind() {
        fbtf::KIND_INT => {
            let (enc, _, _) = t.int();
            if enc & INT_BOOL != 0 {
                (t.size() == 1).then_some((KcfgType::Bool, false))
            } else if t.size() == 1 {
                Some((KcfgType::Char, enc & INT_SIGNED != 0))
            } else if t.size() > 8 || !t.size().is_power_of_two() {
                None
            } else {
                Some((KcfgType::Int, enc & INT_SIGNED != 0))
            }
        }
        fbtf::KIND_ENUM if t.size() != 4 => None,
        fbtf::KIND_ENUM64 if t.size() < 4 => None,
        fbtf::KIND_ENUM | fbtf::KIND_ENUM64 => {
            (btf.str(t.name_off) == b"libbpf_tristate").then_some((KcfgType::Tristate, false))
        }
        fbtf::KIND_ARRAY => {
            let (elem, _, n) = t.array();
            match kcfg_type(btf, elem)? {
                Some((KcfgType::Char, _)) if n > 0 => Some((KcfgType::CharArr, false)),
                _ => None,
            }
        }
        _ => None,
    })
}

/// The largest `.kconfig` extern, and the largest `.kconfig` map.
const MAX_KCFG: u32 = 1 << 16;
const MAX_KCONFIG_MAP: u32 = 1 << 20;

/// libbpf's layout of the `.kconfig` map: externs by descending
/// alignment, then ascending size, then name, each at the next offset
/// aligned for it.
fn layout_kconfig(externs: &mut [Extern]) {
    let mut order: Vec<usize> = (0..externs.len())
        .filter(|&i| externs[i].kcfg.is_some())
        .collect();
    let key = |i: usize| {
        let k = externs[i].kcfg.expect("kconfig");
        (std::cmp::Reverse(k.align), k.size)
    };
    order.sort_by(|&a, &b| {
        key(a)
            .cmp(&key(b))
            .then_with(|| externs[a].name.cmp(&externs[b].name))
    });
    let mut off = 0u32;
    for i in order {
        let k = externs[i].kcfg.as_mut().expect("kconfig");
        k.off = off
            .checked_next_multiple_of(k.align.max(1))
            .unwrap_or(u32::MAX);
        off = k.off.saturating_add(k.size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::INVALID;
    use crate::formats::btf::tests::Builder;
    use crate::formats::btf::{KIND_DATASEC, KIND_FUNC, KIND_FUNC_PROTO, KIND_INT, KIND_VAR};

    /// `.ksyms` holding one extern `name`: a VAR of type `ty` (0: void),
    /// or a FUNC when `func`.
    fn ksyms(name: &str, ty: u32, func: bool) -> Btf {
        let mut b = Builder::new();
        let int = b.t("int", KIND_INT, 0, false, 4, &[32]);
        let x = if func {
            let proto = b.t("", KIND_FUNC_PROTO, 0, false, int, &[]);
            b.t(name, KIND_FUNC, 2, false, proto, &[])
        } else {
            b.t(
                name,
                KIND_VAR,
                0,
                false,
                if ty == 1 { int } else { ty },
                &[2],
            )
        };
        b.t(".ksyms", KIND_DATASEC, 1, false, 0, &[x, 0, 0]);
        Btf::parse(b.bytes()).unwrap()
    }

    #[test]
    fn the_per_alias_names_are_untyped_constants_or_errors() {
        let got = from_btf(&ksyms("ksym_alias_value", 0, false), |_| true).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(
            (got[0].kind, got[0].resolved),
            (ExternKind::AliasValue, true)
        );
        let got = from_btf(&ksyms("ksym_alias_addr", 0, false), |_| true).unwrap();
        assert_eq!(got[0].kind, ExternKind::AliasAddr);
        // Any other untyped name is a ksym kallsyms resolves.
        let got = from_btf(&ksyms("ksym_alias_other", 0, false), |_| true).unwrap();
        assert_eq!((got[0].kind, got[0].resolved), (ExternKind::Ksym, false));
        for (ty, func) in [(1, false), (0, true)] {
            let e = from_btf(&ksyms("ksym_alias_value", ty, func), |_| true).unwrap_err();
            assert_eq!(e.code(), INVALID);
            assert!(
                e.message().contains("reserved name")
                    && e.message()
                        .contains("extern const void ksym_alias_value __ksym __weak;"),
                "{e}"
            );
        }
    }
}
