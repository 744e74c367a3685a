//! A kernel config, plain or gzip.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.starts_with(&[0x1f, 0x8b]) {
        let _ = ksym::base::read::gunzip(data);
    }
    for e in ksym::formats::kconfig::entries(data).take(10_000) {
        let _ = e;
    }
});
