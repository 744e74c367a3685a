//! A BPF object whose programs have aliases (c-tests/bpf/aliases.bpf.o):
//! its externs resolved from kallsyms, its map created, every program
//! relocated once (an alias shares its target's very instructions), its
//! BTF loaded, and every program loaded with its func_info as a socket
//! filter through bpf(2) where the kernel lets us (`make test-docs` runs
//! it and requires that, as root).
//! `cargo run --example aliases [OBJECT]`.

use std::path::PathBuf;

use ksym::bpf::Object;

/// bpf(2) with a zeroed `union bpf_attr` of 128 bytes, `fill` setting it.
fn bpf(cmd: i32, fill: impl FnOnce(&mut [u8; 128])) -> std::io::Result<i32> {
    let mut attr = [0u8; 128];
    fill(&mut attr);
    // SAFETY: attr is a valid, initialised buffer of the size passed.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len()) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r as i32)
    }
}

fn put32(a: &mut [u8], at: usize, v: u32) {
    a[at..at + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put64(a: &mut [u8], at: usize, v: u64) {
    a[at..at + 8].copy_from_slice(&v.to_ne_bytes());
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/c-tests/bpf/aliases.bpf.o"
            ))
        },
        PathBuf::from,
    );
    let mut o = Object::open(&path)?;
    for (i, p) in o.programs().iter().enumerate() {
        let alias = if p.alias_of == i {
            String::new()
        } else {
            format!(
                " (alias of {})",
                o.programs()[p.alias_of].name.to_string_lossy()
            )
        };
        println!("program {}{alias}", p.name.to_string_lossy());
    }
    // Untyped externs (`__ksym`) from the running kernel's kallsyms.
    o.resolve_ksyms(None)?;
    // The maps, created as the object defines them (placeholders when
    // bpf(2) is refused here: the relocation is the same).
    let mut loadable = true;
    for i in 0..o.maps().len() {
        let m = &o.maps()[i];
        let (ty, k, v, n, f) = (
            m.map_type,
            m.key_size,
            m.value_size,
            m.max_entries,
            m.map_flags,
        );
        let fd = bpf(0 /* BPF_MAP_CREATE */, |a| {
            for (at, x) in [(0, ty), (4, k), (8, v), (12, n), (16, f)] {
                put32(a, at, x);
            }
        })
        .unwrap_or_else(|e| {
            println!(
                "map {}: not created ({e}): placeholder fd",
                m.name.to_string_lossy()
            );
            loadable = false;
            0
        });
        o.set_map_fd(i, fd)?;
    }
    o.relocate()?;
    let license = o.license().clone();
    // The object's BTF, loaded once: the kernel needs it (and each
    // program's func_info) for a program that calls a global function.
    let btf = o.btf().ok().filter(|_| loadable).map(|b| {
        bpf(18 /* BPF_BTF_LOAD */, |a| {
            put64(a, 0, b.as_ptr() as u64);
            put32(a, 16, b.len() as u32);
        })
    });
    let btf_fd = match btf {
        Some(Ok(fd)) => fd,
        Some(Err(e)) => {
            println!("BTF not loaded ({e}): programs load without it");
            0
        }
        None => 0,
    };
    for (i, p) in o.programs().iter().enumerate() {
        let insns = o.insns(i)?;
        let shared = std::ptr::eq(insns, o.insns(p.alias_of)?);
        print!(
            "{}: {} instructions, shared with its target: {shared}",
            p.name.to_string_lossy(),
            insns.len()
        );
        if !loadable {
            println!();
            continue;
        }
        let info = o.attach_info(i)?;
        let (ty, cnt, at) = (
            info.prog_type.max(1), // a section without a type: a socket filter
            insns.len() as u32,
            info.expected_attach_type,
        );
        let func_info = if btf_fd > 0 { o.func_info(i)? } else { &[] };
        let mut log = vec![0u8; 1 << 16];
        match bpf(5 /* BPF_PROG_LOAD */, |a| {
            put32(a, 0, ty);
            put32(a, 4, cnt);
            put64(a, 8, insns.as_ptr() as u64);
            put64(a, 16, license.as_ptr() as u64);
            put32(a, 24, 1); // log_level
            put32(a, 28, log.len() as u32);
            put64(a, 32, log.as_mut_ptr() as u64);
            put32(a, 68, at);
            if !func_info.is_empty() {
                put32(a, 72, btf_fd as u32); // prog_btf_fd
                put32(a, 76, ksym::bpf::FUNC_INFO_SIZE as u32);
                put64(a, 80, func_info.as_ptr() as u64);
                put32(a, 88, (func_info.len() / ksym::bpf::FUNC_INFO_SIZE) as u32);
            }
        }) {
            Ok(fd) => {
                println!(", loaded (fd {fd})");
                // SAFETY: fd is ours, returned by bpf(2) just now.
                unsafe { libc::close(fd) };
            }
            Err(e) => {
                let end = log.iter().position(|&b| b == 0).unwrap_or(0);
                let last = String::from_utf8_lossy(&log[..end]);
                let last = last.lines().rev().find(|l| !l.is_empty()).unwrap_or("");
                println!(", not loaded: {e} ({last})");
            }
        }
    }
    Ok(())
}
