//! The vmlinux ELF symbol-size reader.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ksym::internals::formats::vmlinux::ElfSymbols::parse(data);
});
