//! libksym's C ABI (`include/ksym.h`): the thin layer over the `ksym`
//! crate that converts pointers, catches panics and keeps the thread-local
//! last error. It holds no logic of its own, and the C-only wording of
//! errors (which C function to call first) lives here, where the C error
//! message is made.
//!
//! Built as `libksym_capi.so` / `libksym_capi.a`, installed by the
//! Makefile as `libksym.so.0` (soname) and `libksym.a`; its Rust items are
//! public only so that the bench and the tests can call the C functions.

#![forbid(unsafe_op_in_unsafe_fn)]
// The docs of src/ffi are C docs, copied into include/ksym.h by cbindgen:
// `[ext4]` there is how /proc/kallsyms prints a module, not a Rust link,
// and `<prog>` a placeholder, not HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

#[doc(hidden)]
pub mod ffi;
