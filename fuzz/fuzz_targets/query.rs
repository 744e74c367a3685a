//! The query and glob grammar: parse the first line as a query and a
//! pattern, match the pattern against the other lines. A query that parses
//! prints back (`module`name`, or `name`) to text that parses (and
//! splits) to the same query.
#![no_main]
use libfuzzer_sys::fuzz_target;

use ksym::internals::rules::query::{Pattern, Query};

fn printed(module: Option<&[u8]>, name: &[u8]) -> Vec<u8> {
    match module {
        Some(m) => [m, b"`", name].concat(),
        None => name.to_vec(),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    if let Ok(q) = Query::parse(first) {
        let text = printed(q.module, q.name);
        assert_eq!(Query::parse(&text).ok(), Some(q), "{q:?} printed back");
        assert_eq!(Query::split(&text).ok(), Some(q), "{q:?} split");
    }
    if let Ok(p) = Pattern::parse(first) {
        for l in lines.take(64) {
            let _ = p.name.matches(l);
            if let Some(m) = &p.module {
                let _ = m.matches(l);
            }
        }
        let _ = ksym::internals::rules::modules::pattern_may_match_pseudo(&p);
    }
});
