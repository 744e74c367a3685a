//! How a query is answered, once its candidates (the symbols with its
//! name) are known, and the errors a consumer reports:
//!
//! - [`ModuleFilter`]: which symbols the query's module part selects.
//!   `name` takes every module; `vmlinux`name` the core kernel outside
//!   every built-in module; `ext4`name` the symbols of ext4, loadable or
//!   built in (module names compare with `-` and `_` equal).
//! - [`Decision`]: among the accepted candidates, the answer is the one at
//!   the lowest address (first in order among equals); candidates at
//!   different addresses make the answer ambiguous.
//! - The errors: [`not_found`] (with near matches, see
//!   [`super::suggest`]), [`ambiguous`], [`restricted`], [`empty`].
//! - Kernel BTF ([`BtfScope`]): types have ids, not addresses; a name is
//!   answered by vmlinux's BTF first (libbpf's order, and the function
//!   the kernel attaches to), by a module's only when vmlinux has none,
//!   and a name that several modules define is ambiguous
//!   ([`btf_ambiguous`]).

use super::modules::{ModId, ModuleSet, OwnerId, VMLINUX_MOD, VMLINUX_OWNER};
use super::query::Query;
use crate::error::{Call, Error, AMBIGUOUS, NOT_FOUND, RESTRICTED};

/// Which symbols a query's module part selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleFilter {
    /// No module named: every symbol.
    Any,
    /// `vmlinux`: the core kernel not attributed to a built-in module.
    Vmlinux,
    /// A module of the set, loadable, built in or pseudo.
    Module(ModId),
    /// The query names a module the set does not know: nothing.
    Unknown,
}

impl ModuleFilter {
    /// The filter of `q` over the modules of `modules`.
    #[inline]
    pub fn of(q: &Query<'_>, modules: &ModuleSet) -> ModuleFilter {
        match q.module {
            None => ModuleFilter::Any,
            Some(_) if q.is_vmlinux() => ModuleFilter::Vmlinux,
            Some(m) => modules
                .find(m)
                .map_or(ModuleFilter::Unknown, ModuleFilter::Module),
        }
    }

    /// Does the filter take a symbol owned by `owner`?
    #[inline]
    pub fn accepts(self, modules: &ModuleSet, owner: OwnerId) -> bool {
        match self {
            ModuleFilter::Any => true,
            ModuleFilter::Vmlinux => owner == VMLINUX_OWNER,
            ModuleFilter::Module(m) => modules.owner_modules(owner).contains(&m),
            ModuleFilter::Unknown => false,
        }
    }

    /// The module an answer reports: the one the query named (a symbol can
    /// belong to several built-in modules), `None` for its owner's first.
    #[inline]
    pub fn module(self) -> Option<ModId> {
        match self {
            ModuleFilter::Module(m) => Some(m),
            ModuleFilter::Vmlinux => Some(VMLINUX_MOD),
            _ => None,
        }
    }
}

/// The answer to a query from its accepted candidates, pushed in any
/// order with their address and an order key (a table index, a line
/// number): the lowest (address, order) wins; candidates at different
/// addresses make it ambiguous.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    best: Option<(u64, usize)>,
    distinct: bool,
}

impl Decision {
    #[inline]
    pub fn push(&mut self, addr: u64, order: usize) {
        match self.best {
            None => self.best = Some((addr, order)),
            Some(b) => {
                self.distinct |= addr != b.0;
                if (addr, order) < b {
                    self.best = Some((addr, order));
                }
            }
        }
    }

    /// The order key of the answer, if any candidate was accepted.
    #[inline]
    pub fn best(&self) -> Option<usize> {
        self.best.map(|b| b.1)
    }

    /// The address of the answer (the lowest when ambiguous).
    #[inline]
    pub fn addr(&self) -> Option<u64> {
        self.best.map(|b| b.0)
    }

    #[inline]
    pub fn is_ambiguous(&self) -> bool {
        self.distinct
    }

    /// 0, `KSYM_ERR_NOT_FOUND` or `KSYM_ERR_AMBIGUOUS`.
    #[inline]
    pub fn code(&self) -> i32 {
        match (self.best, self.distinct) {
            (None, _) => NOT_FOUND,
            (Some(_), false) => 0,
            (Some(_), true) => AMBIGUOUS,
        }
    }
}

/// `KSYM_ERR_AMBIGUOUS` for `q`, listing its matches: `(module, name,
/// address)`, one per distinct address, lowest first (four are shown).
pub fn ambiguous<'a>(
    q: &Query<'_>,
    matches: impl ExactSizeIterator<Item = (&'a [u8], &'a [u8], u64)>,
) -> Error {
    let n = matches.len();
    let shown: Vec<String> = matches
        .take(4)
        .map(|(module, name, addr)| {
            format!(
                "{}`{} at {addr:#x}",
                String::from_utf8_lossy(module),
                String::from_utf8_lossy(name)
            )
        })
        .collect();
    let more = if n > 4 {
        format!(", and {} more", n - 4)
    } else {
        String::new()
    };
    Error::new(
        AMBIGUOUS,
        format!(
            "`{q}` is ambiguous: symbols at {n} different addresses ({}{more}); \
             qualify it as module`name, or list them all with ",
            shown.join(", ")
        ),
    )
    .then_call(Call::LookupAll, "")
}

/// `KSYM_ERR_NOT_FOUND` for `q` in `source`, which `filter` was made for,
/// with the near matches (see [`super::suggest::Suggest`]).
pub fn not_found(q: &Query<'_>, filter: ModuleFilter, source: &str, near: &[String]) -> Error {
    let what = match (filter, q.module) {
        (ModuleFilter::Unknown, Some(m)) => format!(
            "no module `{}` in {source} (not loaded, and not known as built-in)",
            String::from_utf8_lossy(m),
        ),
        (_, Some(m)) => format!(
            "no symbol `{}` in module `{}` in {source}",
            String::from_utf8_lossy(q.name),
            String::from_utf8_lossy(m),
        ),
        (_, None) => format!("no symbol `{q}` in {source}"),
    };
    if near.is_empty() {
        Error::not_found(what)
    } else {
        Error::not_found(format!("{what}; did you mean {}?", near.join(", ")))
    }
}

/// Where kernel BTF answers a query: `name` in vmlinux's BTF, else in
/// the one module whose BTF has it; `vmlinux`name` in vmlinux's only;
/// `ext4`name` in ext4's only (a built-in module's types are in vmlinux's
/// BTF: the module is checked through kallsyms where that is possible).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtfScope<'q> {
    Any,
    Vmlinux,
    Module(&'q [u8]),
}

impl<'q> BtfScope<'q> {
    pub fn of(q: &Query<'q>) -> BtfScope<'q> {
        match q.module {
            None => BtfScope::Any,
            Some(_) if q.is_vmlinux() => BtfScope::Vmlinux,
            Some(m) => BtfScope::Module(m),
        }
    }
}

/// `KSYM_ERR_AMBIGUOUS`: `q` is not in vmlinux's BTF but in several
/// modules'.
pub fn btf_ambiguous(q: &Query<'_>, what: &str, modules: &[&[u8]]) -> Error {
    let list: Vec<String> = modules
        .iter()
        .map(|m| {
            format!(
                "`{}`{}`",
                String::from_utf8_lossy(m),
                String::from_utf8_lossy(q.name)
            )
        })
        .collect();
    Error::new(
        AMBIGUOUS,
        format!(
            "{what} `{q}` is not in vmlinux's BTF but in {} modules' ({}): name one as module`name",
            modules.len(),
            list.join(", ")
        ),
    )
}

/// `KSYM_ERR_NOT_FOUND` for kernel BTF: no `name` (of `kind`, when one
/// was asked) where `scope` says it was looked for; `elsewhere` lists the
/// same name of other kinds or in other BTF objects.
pub fn btf_not_found(
    what: &str,
    q: &Query<'_>,
    name: &[u8],
    kind: Option<&str>,
    scope: &str,
    elsewhere: &[String],
) -> Error {
    let kind = kind.map(|k| format!(" {k}")).unwrap_or_default();
    let mut msg = format!(
        "{what} `{q}`: no{kind} `{}` {scope}",
        String::from_utf8_lossy(name)
    );
    if !elsewhere.is_empty() {
        msg += &format!("; there is {}", elsewhere.join(", "));
    }
    Error::not_found(msg)
}

/// `KSYM_ERR_RESTRICTED`: every address of `source` is zero.
pub fn restricted(source: &str) -> Error {
    Error::new(
        RESTRICTED,
        format!(
            "{source}: every address is zero: the kernel hides them from this process \
             (kernel.kptr_restrict is set, or the process lacks CAP_SYSLOG); \
             run as root or set `sysctl kernel.kptr_restrict=0`"
        ),
    )
}

/// `KSYM_ERR_FORMAT`: `source` has no symbol at all.
pub fn empty(source: &str) -> Error {
    Error::format(format!("{source}: empty, no symbols"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::modules::ModuleKind;

    #[test]
    fn filters() {
        let mut s = ModuleSet::new();
        let ext4 = s.intern(b"ext4", ModuleKind::Builtin).unwrap();
        let jbd2 = s.intern(b"jbd2", ModuleKind::Builtin).unwrap();
        let both = s.owner_of_set(&[ext4, jbd2]).unwrap();
        let only = s.owner_of(ext4).unwrap();
        let f = |q: &str| ModuleFilter::of(&Query::parse(q.as_bytes()).unwrap(), &s);
        assert_eq!(f("x"), ModuleFilter::Any);
        assert_eq!(f("vmlinux`x"), ModuleFilter::Vmlinux);
        assert_eq!(f("jbd2`x"), ModuleFilter::Module(jbd2));
        assert_eq!(f("xfs`x"), ModuleFilter::Unknown);
        assert!(f("x").accepts(&s, both));
        assert!(f("vmlinux`x").accepts(&s, VMLINUX_OWNER));
        assert!(!f("vmlinux`x").accepts(&s, only), "built in: not vmlinux");
        assert!(f("jbd2`x").accepts(&s, both));
        assert!(!f("jbd2`x").accepts(&s, only));
        assert!(!f("xfs`x").accepts(&s, VMLINUX_OWNER));
        assert_eq!(f("jbd2`x").module(), Some(jbd2));
        assert_eq!(f("vmlinux`x").module(), Some(VMLINUX_MOD));
        assert_eq!(f("x").module(), None);
    }

    #[test]
    fn decisions() {
        let mut d = Decision::default();
        assert_eq!((d.code(), d.best()), (NOT_FOUND, None));
        d.push(0x20, 5);
        d.push(0x20, 3);
        assert_eq!((d.code(), d.best(), d.addr()), (0, Some(3), Some(0x20)));
        d.push(0x10, 9);
        assert_eq!(
            (d.code(), d.best(), d.addr()),
            (AMBIGUOUS, Some(9), Some(0x10))
        );
    }

    #[test]
    fn messages() {
        let q = Query::parse(b"ext4`foo").unwrap();
        let e = not_found(&q, ModuleFilter::Unknown, "k", &[]);
        assert!(e.message().contains("no module `ext4` in k"), "{e}");
        let e = not_found(&q, ModuleFilter::Any, "k", &["`a`foo`".into()]);
        assert!(e.message().ends_with("did you mean `a`foo`?"), "{e}");
        let q = Query::parse(b"foo").unwrap();
        let m: Vec<(&[u8], &[u8], u64)> = (0..6).map(|i| (&b"m"[..], &b"foo"[..], i)).collect();
        let e = ambiguous(&q, m.into_iter());
        assert!(e.message().contains("6 different addresses"), "{e}");
        assert!(e.message().contains("m`foo at 0x3, and 2 more"), "{e}");
        assert!(restricted("f").message().contains("kptr_restrict"));
        assert_eq!(empty("f").code(), crate::error::FORMAT);
    }
}
