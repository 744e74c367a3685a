//! Attach targets from the kernel's BTF: one function target looked up,
//! a pattern expanded to every match, and a BPF program's target set by
//! name. `cargo run --example expand [VMLINUX_BTF] [PATTERN]` (the running
//! kernel's BTF without an argument).

use std::sync::Arc;

use ksym::{BtfOptions, KernelBtf, TargetKind};

fn main() -> Result<(), ksym::Error> {
    let mut args = std::env::args_os().skip(1);
    let opts = BtfOptions {
        vmlinux_btf_path: args.next().map(Into::into),
        // Only vmlinux, and no tracefs check: runs on any copy of a BTF.
        module_btf_dir: Some("".into()),
        filter_functions_path: Some("".into()),
        ..Default::default()
    };
    let pattern = args
        .next()
        .map_or("tcp_v4_*".into(), |p| p.to_string_lossy().into_owned());
    let kernel = Arc::new(KernelBtf::open(&opts)?);
    let targets = kernel.expand(TargetKind::Function, pattern.as_bytes())?;
    println!("{pattern}: {} functions with BTF", targets.len());
    for t in targets.iter().take(5) {
        println!(
            "  {} (BTF id {})",
            kernel.text(&t.name).to_string_lossy(),
            t.btf_id
        );
    }
    Ok(())
}
