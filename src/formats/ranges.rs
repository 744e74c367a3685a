//! `modules.builtin.ranges` (upstream Linux since 6.12,
//! `CONFIG_BUILTIN_MODULE_RANGES`): which address ranges of the kernel image
//! belong to built-in modules.
//!
//! ```text
//! .text 00000000-00000000 = _text          anchor: the section's base is
//!                                           _text's address minus 0
//! .text 0000baf0-0000cb10 amd_uncore       [base+0xbaf0, base+0xcb10)
//! .text 00ba0120-00ba03c0 mod_a mod_b      shared by two modules
//! .data 00000000-00000000 = _sdata
//! ```
//!
//! Offsets are hex from the section base, the end exclusive, in strictly
//! ascending order within a section. The base comes from the anchor
//! symbol's address in kallsyms, so KASLR does not matter.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::base::read::read_file;
use crate::error::{Error, Result};

/// One `START-END MODULE...` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    pub start: u64,
    pub end: u64,
    /// Index into [`Ranges::groups`].
    pub group: usize,
}

/// One ELF section of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: Vec<u8>,
    /// The anchor symbol (empty when the file gives none: the section is then skipped).
    pub anchor: Vec<u8>,
    /// The anchor's offset in the section (0 in files the kernel generates).
    pub anchor_offset: u64,
    pub ranges: Vec<Range>,
}

/// A parsed ranges file.
#[derive(Clone, Debug)]
pub struct Ranges {
    pub path: PathBuf,
    pub sections: Vec<Section>,
    /// Distinct module lists, each as written (one or more names).
    pub groups: Vec<Vec<Vec<u8>>>,
}

/// `/lib/modules/$(uname -r)/modules.builtin.ranges` (whether or not it exists).
pub fn default_path() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let release = crate::base::sys::kernel_release()?;
    Some(
        Path::new("/lib/modules")
            .join(std::ffi::OsStr::from_bytes(&release))
            .join("modules.builtin.ranges"),
    )
}

/// The ranges file an option names: `None` is `default_path()` if it
/// exists, an empty path is none, anything else is itself.
pub fn from_option(opt: Option<&Path>) -> Option<PathBuf> {
    match opt {
        None => default_path().filter(|p| p.exists()),
        Some(p) if p.as_os_str().is_empty() => None,
        Some(p) => Some(p.to_path_buf()),
    }
}

impl Ranges {
    pub fn read(path: &Path) -> Result<Ranges> {
        let data = read_file(
            path,
            0,
            crate::base::read::limits::RANGES,
            "modules.builtin.ranges",
        )?;
        Self::parse(&data, path)
    }

    /// Parses the text of a ranges file; errors name the file and line.
    pub fn parse(data: &[u8], path: &Path) -> Result<Ranges> {
        let mut out = Ranges {
            path: path.to_path_buf(),
            sections: Vec::new(),
            groups: Vec::new(),
        };
        // Module lists as written (borrowed from `data`) -> group.
        let mut group_of: HashMap<&[u8], usize> = HashMap::new();
        let mut fields: Vec<&[u8]> = Vec::with_capacity(8);
        for (n, line) in data.split(|&b| b == b'\n').enumerate() {
            fields.clear();
            fields.extend(
                line.split(|b| b.is_ascii_whitespace())
                    .filter(|f| !f.is_empty()),
            );
            if fields.is_empty() {
                continue;
            }
            let err = |why: &str| {
                Error::format(format!(
                    "{}:{}: {why}: `{}`",
                    path.display(),
                    n + 1,
                    String::from_utf8_lossy(&line[..line.len().min(100)])
                ))
            };
            if fields.len() < 3 {
                return Err(err(if fields.len() == 1 {
                    "missing START-END"
                } else {
                    "no module name"
                }));
            }
            let (sec, span, rest) = (fields[0], fields[1], &fields[2..]);
            let dash = span
                .iter()
                .position(|&b| b == b'-')
                .ok_or_else(|| err("expected START-END"))?;
            let start = parse_hex(&span[..dash]).ok_or_else(|| err("bad START offset"))?;
            let end = parse_hex(&span[dash + 1..]).ok_or_else(|| err("bad END offset"))?;
            if end < start {
                return Err(err("END below START"));
            }
            // Sections are few and their lines come together: the last one first.
            let si = match out.sections.iter().rposition(|s| s.name == sec) {
                Some(i) => i,
                None => {
                    out.sections.push(Section {
                        name: sec.to_vec(),
                        anchor: Vec::new(),
                        anchor_offset: 0,
                        ranges: Vec::new(),
                    });
                    out.sections.len() - 1
                }
            };
            let section = &mut out.sections[si];
            if rest[0] == b"=" {
                if rest.len() != 2 {
                    return Err(err("expected `= SYMBOL` on an anchor line"));
                }
                if !section.anchor.is_empty() {
                    return Err(err("second anchor for the section"));
                }
                section.anchor = rest[1].to_vec();
                section.anchor_offset = start;
                continue;
            }
            if let Some(prev) = section.ranges.last() {
                if start < prev.end {
                    return Err(err(
                        "range not in ascending order (overlaps the previous one)",
                    ));
                }
            }
            if start == end {
                // Empty range: nothing to attribute.
                continue;
            }
            // The module list as written: from the first name to the last.
            let first = rest[0].as_ptr() as usize - line.as_ptr() as usize;
            let last = rest[rest.len() - 1];
            let stop = last.as_ptr() as usize - line.as_ptr() as usize + last.len();
            let groups = &mut out.groups;
            let group = *group_of.entry(&line[first..stop]).or_insert_with(|| {
                groups.push(rest.iter().map(|m| m.to_vec()).collect());
                groups.len() - 1
            });
            section.ranges.push(Range { start, end, group });
        }
        Ok(out)
    }
}

/// Up to 16 hex digits.
fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    s.iter().try_fold(0u64, |v, &c| {
        let d = (c as char).to_digit(16)?;
        Some((v << 4) | d as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FORMAT;

    #[test]
    fn parses_the_upstream_example() {
        let text = b".text 00000000-00000000 = _text\n\
                     .text 0000baf0-0000cb10 amd_uncore\n\
                     .text 0009bd10-0009c8e0 iosf_mbi\n\
                     .text 00ba0120-00ba03c0 intel_skl_int3472_discrete intel_skl_int3472_tps68470\n\
                     .text 00ba03c0-00ba08d6 intel_skl_int3472_tps68470\n\
                     .data 00000000-00000000 = _sdata\n\
                     .data 0000f020-0000f680 amd_uncore\n";
        let r = Ranges::parse(text, Path::new("x")).unwrap();
        assert_eq!(r.sections.len(), 2);
        let t = &r.sections[0];
        assert_eq!(t.name, b".text");
        assert_eq!(t.anchor, b"_text");
        assert_eq!(t.ranges.len(), 4);
        assert_eq!(
            t.ranges[0],
            Range {
                start: 0xbaf0,
                end: 0xcb10,
                group: 0
            }
        );
        assert_eq!(r.groups[t.ranges[2].group].len(), 2);
        assert_eq!(r.sections[1].anchor, b"_sdata");
        assert_eq!(
            r.sections[1].ranges[0].group, 0,
            "same module list, same group"
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        for (text, why) in [
            (&b".text 0-0 = _text\n.text zz-10 m\n"[..], "START"),
            (b".text 0-0 = _text\n.text 10 m\n", "START-END"),
            (b".text 0-0 = _text\n.text 20-10 m\n", "below"),
            (b".text 0-0 = _text\n.text 10-20\n", "module"),
            (
                b".text 0-0 = _text\n.text 10-20 m\n.text 18-30 n\n",
                "ascending",
            ),
            (b".text 0-0 = _text\n.text 0-0 = _stext\n", "second anchor"),
            (b".text 0-0 = \n", "SYMBOL"),
        ] {
            let e = Ranges::parse(text, Path::new("ranges.txt")).unwrap_err();
            assert_eq!(e.code(), FORMAT);
            assert!(e.message().contains("ranges.txt:"), "{e:?}");
            assert!(e.message().contains(why), "{why}: {e:?}");
        }
    }
}
