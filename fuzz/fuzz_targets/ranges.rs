//! modules.builtin.ranges.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ksym::formats::ranges::Ranges::parse(data, std::path::Path::new("fuzz"));
});
