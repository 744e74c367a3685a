//! The query and glob grammar: parse the first line as a query and a
//! pattern, match the pattern against the other lines.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let _ = ksym::rules::query::Query::parse(first);
    if let Ok(p) = ksym::rules::query::Pattern::parse(first) {
        for l in lines.take(64) {
            let _ = p.name.matches(l);
            if let Some(m) = &p.module {
                let _ = m.matches(l);
            }
        }
        let _ = ksym::rules::modules::pattern_may_match_pseudo(&p);
    }
});
