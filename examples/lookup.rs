//! examples/lookup.c in Rust: a name to its symbol, an address to
//! symbol+offset. `cargo run --example lookup [KALLSYMS]` (the running
//! kernel's without an argument).

use ksym::{Table, TableOptions};

fn main() -> Result<(), ksym::Error> {
    let table = Table::open(&TableOptions {
        kallsyms_path: std::env::args_os().nth(1).map(Into::into),
        ..Default::default()
    })?;
    let s = table.lookup(b"vmlinux`schedule")?.unique()?; // name -> symbol
    let (at, off) = table.symbolize(s.addr + 0x10)?; // address -> symbol+offset
    println!(
        "{}+{off:#x} [{}] size {:#x}",
        at.name.to_string_lossy(),
        at.module.to_string_lossy(),
        at.size
    );
    Ok(())
}
