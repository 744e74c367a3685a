//! A kernel configuration (`.config`, `/proc/config.gz` inflated): its
//! `CONFIG_NAME=value` lines, as libbpf reads them for `.kconfig` externs.
//! What a value means for an extern of a given type is the BPF layer's.

use crate::error::{Error, Result};

/// One `CONFIG_NAME=value` line: the name with its `CONFIG_` prefix, and
/// the raw value (`y`, `m`, `n`, `"a string"`, `0x10`, `-3`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    pub name: &'a [u8],
    pub value: &'a [u8],
    /// 1-based, for messages.
    pub line: usize,
}

/// Every setting of `text` in order. Comments (`# CONFIG_X is not set`)
/// and lines that do not start with `CONFIG_` are skipped; a `CONFIG_`
/// line without `=` or without a value is an error naming it, as in
/// libbpf. A CR before a line's LF is its end (a file saved with CRLF
/// line ends), not the value's: libbpf keeps it there, and then reads
/// `y\r` as `y` but fails `250\r` and `"s"\r`.
pub fn entries(text: &[u8]) -> impl Iterator<Item = Result<Entry<'_>>> {
    text.split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| l.starts_with(b"CONFIG_"))
        .map(|(i, l)| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            let shown = || String::from_utf8_lossy(l).into_owned();
            let eq = memchr::memchr(b'=', l).ok_or_else(|| {
                Error::format(format!(
                    "kernel config line {}: `{}`: no `=`",
                    i + 1,
                    shown()
                ))
            })?;
            if eq + 1 == l.len() {
                return Err(Error::format(format!(
                    "kernel config line {}: `{}`: no value",
                    i + 1,
                    shown()
                )));
            }
            Ok(Entry {
                name: &l[..eq],
                value: &l[eq + 1..],
                line: i + 1,
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_in_order_comments_skipped() {
        let text = b"#\n# Automatically generated\nCONFIG_BPF=y\n# CONFIG_X is not set\n\
                     CONFIG_HZ=250\nCONFIG_LOCALVERSION=\"-fc\"\nCONFIG_MOD=m\n";
        let got: Vec<(String, String, usize)> = entries(text)
            .map(|e| e.unwrap())
            .map(|e| {
                (
                    String::from_utf8_lossy(e.name).into(),
                    String::from_utf8_lossy(e.value).into(),
                    e.line,
                )
            })
            .collect();
        let want = [
            ("CONFIG_BPF", "y", 3),
            ("CONFIG_HZ", "250", 5),
            ("CONFIG_LOCALVERSION", "\"-fc\"", 6),
            ("CONFIG_MOD", "m", 7),
        ];
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0.as_str(), g.1.as_str(), g.2), w);
        }
    }

    #[test]
    fn malformed_lines_are_named() {
        let e = entries(b"CONFIG_A=y\nCONFIG_B\n")
            .nth(1)
            .unwrap()
            .unwrap_err();
        assert!(
            e.message().contains("line 2") && e.message().contains("CONFIG_B"),
            "{e}"
        );
        let e = entries(b"CONFIG_C=\n").next().unwrap().unwrap_err();
        assert!(e.message().contains("no value"), "{e}");
    }
}
