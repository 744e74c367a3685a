//! Sets the shared library's soname and, with the `generate-header`
//! feature, regenerates the C header from src/ffi with cbindgen.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    // libksym.so.0.1.0 has soname libksym.so.0 (see the Makefile).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libksym.so.{major}");
    #[cfg(feature = "generate-header")]
    header::generate();
}

#[cfg(feature = "generate-header")]
mod header {
    use std::path::PathBuf;

    pub fn generate() {
        let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
        println!("cargo:rerun-if-changed=src/ffi");
        println!("cargo:rerun-if-changed=cbindgen.toml");
        println!("cargo:rerun-if-env-changed=KSYM_HEADER_OUT");
        let out = std::env::var_os("KSYM_HEADER_OUT")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.join("include/ksym.h"));
        let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
        cbindgen::Builder::new()
            .with_config(config)
            // Only the C ABI: the core's public Rust constants are not part of it.
            .with_src(dir.join("src/ffi/mod.rs"))
            .generate()
            .expect("cbindgen failed")
            .write_to_file(out);
    }
}
