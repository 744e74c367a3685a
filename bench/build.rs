//! Builds the C baselines (baselines.c) into a static library linked into
//! the bench: the compiler is $CC (default cc), -O2, as a C user builds.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let obj = out.join("baselines.o");
    let run = |c: &mut Command| {
        let st = c.status().unwrap_or_else(|e| panic!("{c:?}: {e}"));
        assert!(st.success(), "{c:?} failed");
    };
    run(Command::new(&cc)
        .args([
            "-std=c99",
            "-O2",
            "-fPIC",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
            "baselines.c",
            "-o",
        ])
        .arg(&obj));
    let ar = std::env::var("AR").unwrap_or_else(|_| "ar".into());
    run(Command::new(ar)
        .arg("crs")
        .arg(out.join("libksym_bench_baselines.a"))
        .arg(&obj));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=ksym_bench_baselines");
    println!("cargo:rerun-if-changed=baselines.c");
    println!("cargo:rerun-if-env-changed=CC");
}
