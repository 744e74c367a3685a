//! Sets the shared library's soname (libksym.so.MAJOR, whatever the
//! file cargo writes is called) and, with the `generate-header`
//! feature, regenerates the C header from src/ffi with cbindgen, laid out
//! by topic (tools/header_layout.rs).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    // libksym.so.0.2.0 has soname libksym.so.0 (see the Makefile).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libksym.so.{major}");
    // Never unloaded by dlclose: a table's snapshot may still be being
    // written by a thread of the library (src/base/snapshot/background.rs).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    #[cfg(feature = "generate-header")]
    header::generate();
}

#[cfg(feature = "generate-header")]
#[path = "tools/header_layout.rs"]
#[allow(dead_code)]
mod header_layout;

#[cfg(feature = "generate-header")]
mod header {
    use super::header_layout::{layout, modules, Frame, Source};
    use std::path::{Path, PathBuf};

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// src/ffi's files in the order mod.rs declares them.
    fn sources(dir: &Path) -> Vec<Source> {
        let ffi = dir.join("src/ffi");
        modules(&read(&ffi.join("mod.rs")))
            .into_iter()
            .map(|m| {
                let file = ffi.join(format!("{m}.rs"));
                let path = if file.exists() {
                    file
                } else {
                    ffi.join(&m).join("mod.rs")
                };
                let text = read(&path);
                let path = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                Source { path, text }
            })
            .collect()
    }

    pub fn generate() {
        let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
        println!("cargo:rerun-if-changed=src/ffi");
        println!("cargo:rerun-if-changed=cbindgen.toml");
        println!("cargo:rerun-if-changed=tools/header_layout.rs");
        println!("cargo:rerun-if-env-changed=KSYM_HEADER_OUT");
        let out = std::env::var_os("KSYM_HEADER_OUT")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.join("../include/ksym.h"));
        let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
        // cbindgen writes the items only; the layout writes the frame.
        let mut items_only = config.clone();
        items_only.header = None;
        items_only.include_guard = None;
        items_only.sys_includes.clear();
        items_only.after_includes = None;
        items_only.trailer = None;
        items_only.autogen_warning = None;
        items_only.no_includes = true;
        items_only.cpp_compat = false;
        let mut items = Vec::new();
        cbindgen::Builder::new()
            .with_config(items_only)
            // Only the C ABI: the core's public Rust constants are not part of it.
            .with_src(dir.join("src/ffi/mod.rs"))
            .generate()
            .expect("cbindgen failed")
            .write(&mut items);
        let items = String::from_utf8(items).expect("cbindgen wrote UTF-8");
        let frame = Frame {
            top: config.header.as_deref().unwrap_or(""),
            guard: config
                .include_guard
                .as_deref()
                .expect("cbindgen.toml: include_guard"),
            includes: &config.sys_includes,
            prelude: config.after_includes.as_deref().unwrap_or(""),
        };
        let header = layout(&items, &sources(&dir), &config.export.exclude, &frame)
            .unwrap_or_else(|e| panic!("include/ksym.h cannot be laid out: {e}"));
        std::fs::write(&out, header).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
}
