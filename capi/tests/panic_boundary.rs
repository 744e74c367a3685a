//! The panic boundary, proven through the C ABI: a panic inside a call is
//! KSYM_ERR_INTERNAL with a message, in that thread only, and the process
//! and the library go on. Needs the `test-hooks` feature: Cargo.toml
//! builds this test only with it, and `make test` passes it.

use std::ffi::CStr;

use ksym_capi::ffi::error::{ksym_last_error, ksym_last_error_message};
use ksym_capi::ffi::table::{ksym_lookup, ksym_symbol, ksym_table_free, ksym_table_from_buffer};
use ksym_capi::ffi::test_hooks::{ksym_test_panic, ksym_test_panic_ptr};

const INTERNAL: i32 = -131;

fn message() -> String {
    // SAFETY: ksym_last_error_message returns a valid C string.
    unsafe { CStr::from_ptr(ksym_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_panic_is_an_error_and_the_process_goes_on() {
    assert_eq!(ksym_test_panic(1), INTERNAL);
    assert_eq!(ksym_last_error(), INTERNAL);
    let m = message();
    assert!(
        m.contains("internal error in libksym") && m.contains("a panic on purpose"),
        "{m}"
    );
    assert!(ksym_test_panic_ptr().is_null());
    assert_eq!(ksym_last_error(), INTERNAL);
    assert!(message().contains("index out of bounds"), "{}", message());
    // The next call works and clears the error.
    assert_eq!(ksym_test_panic(0), 0);
    assert_eq!(ksym_last_error(), 0);
    let text = b"ffffffff81000000 T _text\n";
    // SAFETY: a valid buffer; NULL options.
    let t = unsafe { ksym_table_from_buffer(text.as_ptr().cast(), text.len(), std::ptr::null()) };
    assert!(!t.is_null());
    let mut s: ksym_symbol = unsafe { std::mem::zeroed() };
    // SAFETY: a live table, a NUL-terminated name, a writable out.
    assert_eq!(unsafe { ksym_lookup(t, c"_text".as_ptr(), &mut s) }, 0);
    assert_eq!(s.addr, 0xffffffff81000000);
    // SAFETY: freed once.
    unsafe { ksym_table_free(t) };
}

#[test]
fn a_panic_in_one_thread_leaves_the_others_alone() {
    let others: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                (0..1000).all(|_| ksym_test_panic(0) == 0 && ksym_last_error() == 0)
            })
        })
        .collect();
    let panicking = std::thread::spawn(|| (0..100).all(|_| ksym_test_panic(1) == INTERNAL));
    assert!(panicking.join().unwrap());
    for o in others {
        assert!(o.join().unwrap());
    }
}
