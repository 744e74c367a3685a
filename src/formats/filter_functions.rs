//! tracefs `available_filter_functions` (`name` or `name [module]` per
//! line) and `available_filter_functions_addrs` (the same with the address
//! of each function's ftrace patch site in front): the functions ftrace,
//! and so fentry/fexit and kprobe.multi, can attach to.

use crate::error::{Error, Result};

/// One line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterFunction<'a> {
    /// The patch site (`_addrs` only).
    pub addr: Option<u64>,
    pub name: &'a [u8],
    /// `None` for the core kernel.
    pub module: Option<&'a [u8]>,
}

/// Parses either file (recognised line by line: a first field of 16 hex
/// digits is an address). Errors name the line.
pub fn parse<'a>(text: &'a [u8], source: &str) -> Result<Vec<FilterFunction<'a>>> {
    let mut out = Vec::with_capacity(text.len() / 24);
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| {
            Error::format(format!(
                "{source}:{}: {why}: `{}`",
                n + 1,
                String::from_utf8_lossy(&line[..line.len().min(100)])
            ))
        };
        let mut f = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let mut first = f.next().ok_or_else(|| bad("empty line"))?;
        let mut addr = None;
        if first.len() == 16 && first.iter().all(u8::is_ascii_hexdigit) {
            let s = std::str::from_utf8(first).map_err(|_| bad("bad address"))?;
            addr = Some(u64::from_str_radix(s, 16).map_err(|_| bad("bad address"))?);
            first = f.next().ok_or_else(|| bad("an address without a name"))?;
        }
        let module = match f.next() {
            None => None,
            Some(m) if m.len() > 2 && m[0] == b'[' && m[m.len() - 1] == b']' => {
                Some(&m[1..m.len() - 1])
            }
            Some(_) => return Err(bad("expected `[module]` after the name")),
        };
        if f.next().is_some() {
            return Err(bad("more than a name and a module"));
        }
        out.push(FilterFunction {
            addr,
            name: first,
            module,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_files() {
        let plain = parse(b"vfs_read\nset_multicast_list [dummy]\n\n", "f").unwrap();
        assert_eq!(
            plain,
            [
                FilterFunction {
                    addr: None,
                    name: b"vfs_read",
                    module: None
                },
                FilterFunction {
                    addr: None,
                    name: b"set_multicast_list",
                    module: Some(b"dummy")
                },
            ]
        );
        let addrs = parse(b"ffffffff81002014 __traceiter_initcall_level\nffffffffc0201014 set_multicast_list [dummy]\n", "f").unwrap();
        assert_eq!(addrs[0].addr, Some(0xffffffff81002014));
        assert_eq!(addrs[1].module, Some(&b"dummy"[..]));
        for bad in [&b"x y z\n"[..], b"f [m] extra\n", b"ffffffff81002014\n"] {
            let e = parse(bad, "tracefs").unwrap_err();
            assert!(e.message().starts_with("tracefs:1:"), "{e}");
        }
    }
}
