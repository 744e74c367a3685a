//! /proc/modules: the loadable modules, where they are and in which state.
//!
//! ```text
//! name      size    refs deps        state address            [taint]
//! xfrm_algo 16384   1    af_key,     Live  0xffffffffc08d4000
//! btrfs     2138112 0    -           Live  0xffffffffc06c0000 (E)
//! ```
//!
//! Fields are separated by single spaces; the address is hex with `0x`
//! (all zero when the reader may not see addresses).

/// One line of /proc/modules.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoadedModule {
    /// The name as written (the kernel writes `_` where the file name has `-`).
    pub name: Vec<u8>,
    /// Bytes of memory (core and init sections).
    pub size: u64,
    /// `Live`, `Loading` or `Unloading`.
    pub state: Vec<u8>,
    /// Load address of the core section (0 when hidden or unreadable).
    pub addr: u64,
}

/// Parses the text of /proc/modules. Lines that do not have a name are
/// skipped; a missing or unreadable number is 0 (the kernel hides
/// addresses from unprivileged readers), so that a change of any field is
/// still seen by comparing two reads.
pub fn parse(text: &[u8]) -> Vec<LoadedModule> {
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let mut f = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let Some(name) = f.next() else { continue };
        let size = f.next().and_then(decimal).unwrap_or(0);
        let _refs = f.next();
        let _deps = f.next();
        let state = f.next().unwrap_or_default().to_vec();
        let addr = f.next().and_then(hex).unwrap_or(0);
        out.push(LoadedModule {
            name: name.to_vec(),
            size,
            state,
            addr,
        });
    }
    out
}

fn decimal(s: &[u8]) -> Option<u64> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

fn hex(s: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(s).ok()?;
    u64::from_str_radix(s.strip_prefix("0x").unwrap_or(s), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_real_kernel() {
        let text = b"af_key 53248 0 - Live 0xffffffffc08db000\n\
                     xfrm_algo 16384 1 af_key, Live 0xffffffffc08d4000 (E)\n\
                     crc-itu-t 12288 0 - Loading 0x0000000000000000\n\n";
        let m = parse(text);
        assert_eq!(m.len(), 3);
        assert_eq!(
            m[1],
            LoadedModule {
                name: b"xfrm_algo".to_vec(),
                size: 16384,
                state: b"Live".to_vec(),
                addr: 0xffffffffc08d4000,
            }
        );
        assert_eq!(m[2].name, b"crc-itu-t");
        assert_eq!((m[2].state.as_slice(), m[2].addr), (&b"Loading"[..], 0));
        // Fields missing: zero, not an error.
        let m = parse(b"lonely\n");
        assert_eq!((m[0].size, m[0].addr, m[0].state.len()), (0, 0, 0));
    }
}
