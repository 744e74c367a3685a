//! The query grammar shared by the table, the batch resolver, the cache and
//! the BPF extern resolver: `name`, `module`name`, `vmlinux`name`, and the
//! glob patterns of `ksym_foreach_match` (`glob` or `modglob`glob`).
//!
//! Module names compare with `-` and `_` equal, as the kernel normalises
//! them (`crc-itu-t.ko` is `[crc_itu_t]`).

use crate::error::{Error, Result};

/// The module name of the core kernel in queries and results.
pub const VMLINUX: &[u8] = b"vmlinux";

/// A parsed `name` or `module`name` query. Borrowed from the caller's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Query<'a> {
    /// `None` for an unqualified name.
    pub module: Option<&'a [u8]>,
    /// The symbol name.
    pub name: &'a [u8],
}

impl<'a> Query<'a> {
    /// Parses a query. Empty parts, more than one backtick or any whitespace
    /// are `KSYM_ERR_INVALID`, with the query in the message.
    pub fn parse(text: &'a [u8]) -> Result<Query<'a>> {
        let (module, name) = split_qualified(text, "query")?;
        Ok(Query { module, name })
    }

    /// Splits a query at its backtick without looking for whitespace: for
    /// callers that validate with [`Query::parse`] when nothing matched (a
    /// query with whitespace matches nothing). Empty parts and a second
    /// backtick are still refused.
    #[inline]
    pub fn split(text: &'a [u8]) -> Result<Query<'a>> {
        let Some(t) = memchr::memchr(b'`', text) else {
            if text.is_empty() {
                return Self::parse(text);
            }
            return Ok(Query {
                module: None,
                name: text,
            });
        };
        if t == 0 || t + 1 == text.len() || memchr::memchr(b'`', &text[t + 1..]).is_some() {
            return Self::parse(text);
        }
        Ok(Query {
            module: Some(&text[..t]),
            name: &text[t + 1..],
        })
    }

    /// True for `vmlinux`name`.
    pub fn is_vmlinux(&self) -> bool {
        self.module.is_some_and(|m| module_eq(m, VMLINUX))
    }
}

impl std::fmt::Display for Query<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(m) = self.module {
            write!(f, "{}`", String::from_utf8_lossy(m))?;
        }
        write!(f, "{}", String::from_utf8_lossy(self.name))
    }
}

/// Splits `a`b` into its parts with the checks common to queries and patterns.
/// One pass over the text; the message is only formatted on error.
#[inline]
fn split_qualified<'a>(text: &'a [u8], what: &str) -> Result<(Option<&'a [u8]>, &'a [u8])> {
    let mut tick: Option<usize> = None;
    for (i, &b) in text.iter().enumerate() {
        if b == b'`' {
            if tick.is_some() {
                return Err(bad_query(text, what, i));
            }
            tick = Some(i);
        } else if b <= b' ' && matches!(b, 0 | b'\t'..=b'\r' | b' ') {
            // Whitespace and NUL: never part of a kernel symbol name.
            return Err(bad_query(text, what, i));
        }
    }
    if text.is_empty() {
        return Err(Error::invalid(format!("invalid {what}: empty")));
    }
    match tick {
        None => Ok((None, text)),
        Some(0) => Err(Error::invalid(format!(
            "invalid {what} `{}`: empty module before the backtick",
            String::from_utf8_lossy(text)
        ))),
        Some(t) if t + 1 == text.len() => Err(Error::invalid(format!(
            "invalid {what} `{}`: empty name after the backtick",
            String::from_utf8_lossy(text)
        ))),
        Some(t) => Ok((Some(&text[..t]), &text[t + 1..])),
    }
}

/// The error for byte `i` of a query: a second backtick, whitespace, a control byte.
#[cold]
fn bad_query(text: &[u8], what: &str, i: usize) -> Error {
    let shown = String::from_utf8_lossy(text);
    let why = match text[i] {
        b'`' => "more than one backtick (expected `name` or `module`name`)".to_string(),
        0 => "NUL byte".to_string(),
        _ => format!("whitespace at byte {i}"),
    };
    Error::invalid(format!("invalid {what} `{shown}`: {why}"))
}

/// Module names are equal when they are byte-equal after mapping `-` to `_`.
#[inline]
pub fn module_eq(a: &[u8], b: &[u8]) -> bool {
    a == b || (a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| fold(x) == fold(y)))
}

/// The byte a module name compares as.
#[inline]
pub fn fold(b: u8) -> u8 {
    if b == b'-' {
        b'_'
    } else {
        b
    }
}

/// A module name with `-` mapped to `_` (the key modules are indexed by).
pub fn normalize_module(name: &[u8]) -> Vec<u8> {
    name.iter().map(|&b| fold(b)).collect()
}

/// A `glob` or `modglob`glob` pattern with `*`, `?`, `[...]` (ranges, `!` or
/// `^` negation) and `\` escapes.
#[derive(Clone, Debug)]
pub struct Pattern<'a> {
    pub module: Option<Glob<'a>>,
    pub name: Glob<'a>,
}

impl<'a> Pattern<'a> {
    pub fn parse(text: &'a [u8]) -> Result<Pattern<'a>> {
        let (module, name) = split_qualified(text, "pattern")?;
        let shown = String::from_utf8_lossy(text);
        let name = Glob::new(name).map_err(|e| e.context(format!("pattern `{shown}`")))?;
        let module = match module {
            Some(m) => Some(
                Glob::new(m)
                    .map_err(|e| e.context(format!("pattern `{shown}`")))?
                    .folding(),
            ),
            None => None,
        };
        Ok(Pattern { module, name })
    }
}

/// One glob. Matching is linear in practice (the classic single-backtrack
/// algorithm for `*`).
#[derive(Clone, Copy, Debug)]
pub struct Glob<'a> {
    pat: &'a [u8],
    /// Compare with `-` and `_` equal (module names).
    fold: bool,
    literal: bool,
}

impl<'a> Glob<'a> {
    /// Checks the pattern (every `[` closed, no trailing `\`).
    pub fn new(pat: &'a [u8]) -> Result<Glob<'a>> {
        let mut i = 0;
        let mut literal = true;
        while i < pat.len() {
            match pat[i] {
                b'\\' => {
                    if i + 1 >= pat.len() {
                        return Err(Error::invalid("trailing backslash"));
                    }
                    literal = false;
                    i += 2;
                }
                b'*' | b'?' => {
                    literal = false;
                    i += 1;
                }
                b'[' => {
                    literal = false;
                    i = class_end(pat, i)
                        .ok_or_else(|| Error::invalid(format!("unterminated `[` at byte {i}")))?;
                }
                _ => i += 1,
            }
        }
        Ok(Glob {
            pat,
            fold: false,
            literal,
        })
    }

    fn folding(mut self) -> Self {
        self.fold = true;
        self
    }

    /// The pattern itself when it has no special character.
    pub fn literal(&self) -> Option<&'a [u8]> {
        self.literal.then_some(self.pat)
    }

    /// What every match starts with (escapes undone), and whether that is
    /// the whole pattern (a literal one).
    pub fn literal_prefix(&self) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.pat.len() {
            match self.pat[i] {
                b'*' | b'?' | b'[' => return (out, false),
                b'\\' if i + 1 < self.pat.len() => {
                    out.push(self.pat[i + 1]);
                    i += 2;
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        (out, true)
    }

    /// Does it compare `-` and `_` as equal (a module glob)?
    pub fn folds(&self) -> bool {
        self.fold
    }

    /// Does `s` match the whole pattern?
    pub fn matches(&self, s: &[u8]) -> bool {
        self.matches_counting(s, &mut 0)
    }

    /// [`Glob::matches`], counting the steps of the walk in `steps` (the
    /// tests bound it: at most (pattern + 1) x (subject + 1), never
    /// exponential).
    fn matches_counting(&self, s: &[u8], steps: &mut usize) -> bool {
        if self.literal {
            return if self.fold {
                module_eq(self.pat, s)
            } else {
                self.pat == s
            };
        }
        let p = self.pat;
        let (mut pi, mut si) = (0usize, 0usize);
        // Where to resume after the last `*`: (pattern index after it, subject index).
        let mut star: Option<(usize, usize)> = None;
        while si < s.len() {
            *steps += 1;
            if pi < p.len() {
                match p[pi] {
                    b'*' => {
                        star = Some((pi + 1, si));
                        pi += 1;
                        continue;
                    }
                    b'?' => {
                        pi += 1;
                        si += 1;
                        continue;
                    }
                    b'[' => {
                        let end = class_end(p, pi).unwrap_or(p.len());
                        if self.class_matches(&p[pi + 1..end - 1], s[si]) {
                            pi = end;
                            si += 1;
                            continue;
                        }
                    }
                    b'\\' if pi + 1 < p.len() => {
                        if self.eq(p[pi + 1], s[si]) {
                            pi += 2;
                            si += 1;
                            continue;
                        }
                    }
                    c => {
                        if self.eq(c, s[si]) {
                            pi += 1;
                            si += 1;
                            continue;
                        }
                    }
                }
            }
            // Mismatch: let the last `*` swallow one more byte.
            match star {
                Some((sp, ss)) => {
                    pi = sp;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            }
        }
        p[pi..].iter().all(|&c| c == b'*')
    }

    #[inline]
    fn eq(&self, a: u8, b: u8) -> bool {
        if self.fold {
            fold(a) == fold(b)
        } else {
            a == b
        }
    }

    /// `body` is what is between `[` and `]`.
    fn class_matches(&self, body: &[u8], c: u8) -> bool {
        let (negate, body) = match body.first() {
            Some(b'!') | Some(b'^') => (true, &body[1..]),
            _ => (false, body),
        };
        let c = if self.fold { fold(c) } else { c };
        let mut i = 0;
        let mut hit = false;
        while i < body.len() {
            let mut lo = body[i];
            if lo == b'\\' && i + 1 < body.len() {
                i += 1;
                lo = body[i];
            }
            if i + 2 < body.len() && body[i + 1] == b'-' {
                let hi = body[i + 2];
                if lo <= c && c <= hi {
                    hit = true;
                }
                i += 3;
            } else {
                let lo = if self.fold { fold(lo) } else { lo };
                if lo == c {
                    hit = true;
                }
                i += 1;
            }
        }
        hit != negate
    }
}

/// Index just past the `]` closing the class that starts at `p[start] == '['`.
fn class_end(p: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if i < p.len() && (p[i] == b'!' || p[i] == b'^') {
        i += 1;
    }
    // A `]` right after `[` or `[!` is a member, not the end.
    if i < p.len() && p[i] == b']' {
        i += 1;
    }
    while i < p.len() {
        match p[i] {
            b'\\' => i += 2,
            b']' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::INVALID;

    #[test]
    fn query_forms() {
        let q = Query::parse(b"schedule").unwrap();
        assert_eq!(q.module, None);
        assert_eq!(q.name, b"schedule");
        let q = Query::parse(b"ext4`ext4_file_open").unwrap();
        assert_eq!(q.module, Some(&b"ext4"[..]));
        assert_eq!(q.name, b"ext4_file_open");
        assert!(Query::parse(b"vmlinux`schedule").unwrap().is_vmlinux());
        assert!(!Query::parse(b"ext4`x").unwrap().is_vmlinux());
    }

    #[test]
    fn split_agrees_with_parse_on_valid_queries() {
        for q in [
            &b"a"[..],
            b"ext4`ext4_file_open",
            b"vmlinux`x",
            b"nf-tables`y",
        ] {
            assert_eq!(Query::split(q).unwrap(), Query::parse(q).unwrap());
        }
        for q in [&b""[..], b"`x", b"x`", b"a`b`c", b"``"] {
            assert_eq!(Query::split(q).unwrap_err().code(), INVALID, "{q:?}");
        }
        // Whitespace is left to parse (a lookup re-checks when nothing matched).
        assert!(Query::split(b"a b").is_ok());
    }

    #[test]
    fn query_errors_show_the_query() {
        for bad in [
            &b""[..],
            b"`x",
            b"x`",
            b"a`b`c",
            b"a b",
            b"a\tb",
            b"x\n",
            b"x\x0b",
            b"x\0",
            b"`",
            b"a``b",
        ] {
            let err = Query::parse(bad).unwrap_err();
            assert_eq!(err.code(), INVALID, "{bad:?}");
            if !bad.is_empty() {
                let shown = String::from_utf8_lossy(bad);
                assert!(err.message().contains(&*shown), "{err:?}");
            }
        }
    }

    #[test]
    fn module_names_fold_dash_and_underscore() {
        assert!(module_eq(b"crc-itu-t", b"crc_itu_t"));
        assert!(module_eq(b"nf_tables", b"nf-tables"));
        assert!(!module_eq(b"nf_tables", b"nf_table"));
        assert!(!module_eq(b"ext4", b"ext3"));
        assert_eq!(normalize_module(b"a-b_c"), b"a_b_c");
    }

    fn g(p: &str) -> Glob<'_> {
        Glob::new(p.as_bytes()).unwrap()
    }

    #[test]
    fn glob_matching() {
        assert!(g("vfs_*").matches(b"vfs_read"));
        assert!(g("vfs_*").matches(b"vfs_"));
        assert!(!g("vfs_*").matches(b"vfs"));
        assert!(g("*read").matches(b"vfs_read"));
        assert!(g("*").matches(b""));
        assert!(g("v?s_read").matches(b"vfs_read"));
        assert!(!g("v?s_read").matches(b"vs_read"));
        assert!(g("[vw]fs_*").matches(b"wfs_x"));
        assert!(!g("[!vw]fs_*").matches(b"wfs_x"));
        assert!(g("[^vw]fs_*").matches(b"xfs_x"));
        assert!(g("x[a-c]").matches(b"xb"));
        assert!(!g("x[a-c]").matches(b"xd"));
        assert!(g("[]]").matches(b"]"));
        assert!(g("a*b*c").matches(b"aXXbYYc"));
        assert!(!g("a*b*c").matches(b"aXXbYY"));
        assert!(g("*.isra.*").matches(b"foo.isra.0"));
        assert!(g("\\*").matches(b"*"));
        assert!(!g("\\*").matches(b"x"));
        assert!(g("exact").matches(b"exact"));
        assert!(!g("exact").matches(b"exactly"));
        assert_eq!(g("exact").literal(), Some(&b"exact"[..]));
        assert_eq!(g("ex*").literal(), None);
    }

    #[test]
    fn glob_pathological_is_bounded() {
        // Backtracking per star would take exponentially many steps here;
        // the walk takes at most (pattern + 1) x (subject + 1).
        for (p, len) in [
            ("a*a*a*a*a*a*a*a*b", 4000),
            ("*a*b*c*d*e*f*g*h*i*j*k*z", 3000),
            ("??*??*??*x", 5000),
        ] {
            let s = vec![b'a'; len];
            let mut steps = 0;
            assert!(!g(p).matches_counting(&s, &mut steps));
            assert!(steps <= (p.len() + 1) * (len + 1), "{p}: {steps} steps");
            assert!(steps >= len, "{p}: the walk reads the subject ({steps})");
        }
    }

    #[test]
    fn glob_errors() {
        assert_eq!(Glob::new(b"[abc").unwrap_err().code(), INVALID);
        assert_eq!(Glob::new(b"abc\\").unwrap_err().code(), INVALID);
        assert_eq!(Pattern::parse(b"a`b`c").unwrap_err().code(), INVALID);
        let e = Pattern::parse(b"ext4`[x").unwrap_err();
        assert!(e.message().contains("ext4`[x"), "{e:?}");
    }

    #[test]
    fn pattern_module_folds() {
        let p = Pattern::parse(b"nf-*`*").unwrap();
        assert!(p.module.unwrap().matches(b"nf_tables"));
        let p = Pattern::parse(b"crc-itu-t`x").unwrap();
        assert!(p.module.unwrap().matches(b"crc_itu_t"));
        assert!(p.name.matches(b"x"));
        let p = Pattern::parse(b"*`vfs_read").unwrap();
        assert!(p.module.unwrap().matches(b"vmlinux"));
    }
}
