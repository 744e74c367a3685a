//! The functions ftrace can patch (tracefs' `available_filter_functions`,
//! with their addresses in the `_addrs` variant): fentry targets are
//! checked against them where tracefs is readable.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::formats::filter_functions;

/// What is known of the functions ftrace can attach to.
#[derive(Debug)]
pub enum FilterFunctions {
    /// Not checked (an empty `filter_functions_path`).
    NotChecked,
    /// tracefs could not be read: the reason (targets then rely on BTF
    /// and kallsyms alone).
    Unavailable(String),
    /// The names (`name`, or `module`name` for modules).
    Names(HashSet<Vec<u8>>),
    /// The patch sites (`_addrs`), sorted, and the names.
    Sites(Vec<u64>, HashSet<Vec<u8>>),
}

impl FilterFunctions {
    /// May `module`name` at `[addr, addr + size)` be patched by ftrace?
    /// (`true` when nothing is known.)
    pub fn allows(&self, module: &[u8], name: &[u8], addr: u64, size: u64) -> bool {
        let key = |m: &[u8]| -> Vec<u8> {
            if m == b"vmlinux" {
                name.to_vec()
            } else {
                [m, b"`", name].concat()
            }
        };
        match self {
            FilterFunctions::NotChecked | FilterFunctions::Unavailable(_) => true,
            FilterFunctions::Names(n) => n.contains(&key(module)),
            FilterFunctions::Sites(sites, n) => {
                if size == 0 || addr == 0 {
                    return n.contains(&key(module));
                }
                let i = sites.partition_point(|&s| s < addr);
                sites.get(i).is_some_and(|&s| s < addr.saturating_add(size))
            }
        }
    }

    pub(super) fn load(opt: Option<&Path>) -> Result<FilterFunctions> {
        let candidates: Vec<PathBuf> = match opt {
            Some(p) if p.as_os_str().is_empty() => return Ok(FilterFunctions::NotChecked),
            Some(p) => vec![p.to_path_buf()],
            None => ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
                .iter()
                .flat_map(|d| {
                    [
                        Path::new(d).join("available_filter_functions_addrs"),
                        Path::new(d).join("available_filter_functions"),
                    ]
                })
                .collect(),
        };
        let mut why = Vec::new();
        for path in &candidates {
            let limit = crate::base::read::limits::FILTER_FUNCTIONS;
            let text = match crate::base::read::read_file(path, 0, limit, "a filter functions list")
            {
                Ok(t) => t,
                Err(e) if opt.is_some() => return Err(e),
                Err(e) => {
                    why.push(e.message().to_string());
                    continue;
                }
            };
            let lines = filter_functions::parse(&text, &path.display().to_string())?;
            let names: HashSet<Vec<u8>> = lines
                .iter()
                .map(|f| match f.module {
                    None => f.name.to_vec(),
                    Some(m) => [m, b"`", f.name].concat(),
                })
                .collect();
            let mut sites: Vec<u64> = lines.iter().filter_map(|f| f.addr).collect();
            if sites.len() == lines.len() && !sites.is_empty() {
                sites.sort_unstable();
                return Ok(FilterFunctions::Sites(sites, names));
            }
            return Ok(FilterFunctions::Names(names));
        }
        // The usual reasons: tracefs not mounted, or reading it refused
        // (EPERM under lockdown or in some VMs).
        Ok(FilterFunctions::Unavailable(why.join("; ")))
    }
}
