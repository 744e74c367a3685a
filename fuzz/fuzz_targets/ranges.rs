//! modules.builtin.ranges: what parses prints back (one line per anchor
//! and per range, single spaces) to a file that parses to the same
//! sections, anchors and ranges, each range with the same module names;
//! and each range carries the names written on its own line, read by the
//! target itself.
#![no_main]
use ksym::internals::formats::ranges::Ranges;
use libfuzzer_sys::fuzz_target;

type Line = (u64, u64, Vec<Vec<u8>>);
/// A section: name, anchor, anchor offset, ranges with their names.
type View = (Vec<u8>, Vec<u8>, u64, Vec<Line>);

/// Every section as (name, anchor, anchor offset, ranges with their names).
fn view(r: &Ranges) -> Vec<View> {
    r.sections
        .iter()
        .map(|s| {
            let ranges = s
                .ranges
                .iter()
                .map(|x| (x.start, x.end, r.groups[x.group].clone()))
                .collect();
            (s.name.clone(), s.anchor.clone(), s.anchor_offset, ranges)
        })
        .collect()
}

/// The file's text, written here from the parsed form (not by the library).
fn print(r: &Ranges) -> Vec<u8> {
    let mut out = Vec::new();
    for s in &r.sections {
        let name = &s.name;
        if !s.anchor.is_empty() {
            out.extend_from_slice(name);
            out.extend_from_slice(format!(" {0:08x}-{0:08x} = ", s.anchor_offset).as_bytes());
            out.extend_from_slice(&s.anchor);
            out.push(b'\n');
        }
        if s.anchor.is_empty() && s.ranges.is_empty() {
            // A section that had only empty ranges: one keeps it.
            out.extend_from_slice(name);
            out.extend_from_slice(b" 0-0 x\n");
        }
        for x in &s.ranges {
            out.extend_from_slice(name);
            out.extend_from_slice(format!(" {:x}-{:x}", x.start, x.end).as_bytes());
            for m in &r.groups[x.group] {
                out.push(b' ');
                out.extend_from_slice(m);
            }
            out.push(b'\n');
        }
    }
    out
}

/// What the text says, read here by the file's plain rule (whitespace-split
/// fields: SECTION START-END = ANCHOR, or SECTION START-END MODULE...):
/// per section in first-seen order, its anchor and its non-empty ranges
/// with the names written on their own line. Only for text the library
/// accepted, so the fields are known to be well formed.
fn written(data: &[u8]) -> Vec<View> {
    let mut out: Vec<View> = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        let f: Vec<&[u8]> = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        if f.is_empty() {
            continue;
        }
        let dash = f[1].iter().position(|&b| b == b'-').unwrap();
        let hex = |s: &[u8]| u64::from_str_radix(std::str::from_utf8(s).unwrap(), 16).unwrap();
        let (start, end) = (hex(&f[1][..dash]), hex(&f[1][dash + 1..]));
        let i = match out.iter().position(|s| s.0 == f[0]) {
            Some(i) => i,
            None => {
                out.push((f[0].to_vec(), Vec::new(), 0, Vec::new()));
                out.len() - 1
            }
        };
        if f[2] == b"=" {
            out[i].1 = f[3].to_vec();
            out[i].2 = start;
        } else if start < end {
            let names = f[2..].iter().map(|m| m.to_vec()).collect();
            out[i].3.push((start, end, names));
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("fuzz");
    let Ok(r) = Ranges::parse(data, path) else {
        return;
    };
    for s in &r.sections {
        for x in &s.ranges {
            assert!(x.start < x.end, "an empty or inverted range was kept");
            assert!(x.group < r.groups.len(), "a range's group is out of bounds");
        }
        for w in s.ranges.windows(2) {
            assert!(w[0].end <= w[1].start, "ranges overlap or are out of order");
        }
    }
    // Each range has the modules written on its own line (the groups are
    // shared between lines with the same list, never between others).
    assert_eq!(view(&r), written(data), "not what the text says");
    let text = print(&r);
    let again = Ranges::parse(&text, path).unwrap_or_else(|e| {
        panic!(
            "what parsed does not parse when printed back: {e}\n{}",
            String::from_utf8_lossy(&text)
        )
    });
    assert_eq!(
        view(&r),
        view(&again),
        "printed back:\n{}",
        String::from_utf8_lossy(&text)
    );
});
