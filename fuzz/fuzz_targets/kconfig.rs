//! A kernel config, plain or gzip. What parses prints back
//! (`NAME=value` lines) to text that parses to the same settings: with
//! CRLF line ends always (one CR before the LF is the line's end), with LF
//! alone when no value ends with a CR.
#![no_main]
use libfuzzer_sys::fuzz_target;

fn check(text: &[u8]) {
    let ok: Vec<(&[u8], &[u8])> = ksym::internals::formats::kconfig::entries(text)
        .take(10_000)
        .filter_map(|e| e.ok().map(|e| (e.name, e.value)))
        .collect();
    let ends_cr = ok.iter().any(|(_, v)| v.ends_with(b"\r"));
    for end in [&b"\r\n"[..], b"\n"] {
        if end == b"\n" && ends_cr {
            continue;
        }
        let mut printed = Vec::new();
        for (n, v) in &ok {
            printed.extend_from_slice(n);
            printed.push(b'=');
            printed.extend_from_slice(v);
            printed.extend_from_slice(end);
        }
        let again: Vec<(&[u8], &[u8])> = ksym::internals::formats::kconfig::entries(&printed)
            .map(|e| {
                let e = e.expect("a printed setting parses");
                (e.name, e.value)
            })
            .collect();
        assert_eq!(again, ok, "settings printed back with {end:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    if data.starts_with(&[0x1f, 0x8b]) {
        if let Ok(text) = ksym::internals::base::read::gunzip(data) {
            check(&text);
        }
    }
    check(data);
});
