//! Tracepoints as tracefs lists them (`events/<category>/<name>/`): what a
//! `tracepoint`/`tp` program is expanded over, one alias per event, each
//! attached by its category and name as libbpf attaches `tp/...`.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::rules::query::Glob;

/// Where tracefs is usually mounted, in libbpf's order.
const TRACEFS_EVENTS: [&str; 2] = [
    "/sys/kernel/tracing/events",
    "/sys/kernel/debug/tracing/events",
];

/// The running kernel's tracefs `events` directory: the first of
/// /sys/kernel/tracing/events and /sys/kernel/debug/tracing/events that
/// can be listed.
pub fn events_dir() -> Result<PathBuf> {
    let mut why = Vec::new();
    for d in TRACEFS_EVENTS {
        match std::fs::read_dir(d) {
            Ok(_) => return Ok(PathBuf::from(d)),
            Err(e) => why.push(format!("{d}: {e}")),
        }
    }
    Err(Error::not_found(format!(
        "no tracefs to list tracepoints from ({}); mount it: mount -t tracefs nodev /sys/kernel/tracing",
        why.join("; ")
    )))
}

/// The subdirectories of `dir` whose names `glob` matches, sorted.
fn subdirs(dir: &Path, glob: &Glob<'_>) -> Result<Vec<Vec<u8>>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(&e, format!("cannot list {}", dir.display())))?;
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(|e| Error::io(&e, format!("cannot list {}", dir.display())))?;
        let name = e.file_name();
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && glob.matches(name.as_bytes()) {
            out.push(name.as_bytes().to_vec());
        }
    }
    out.sort();
    Ok(out)
}

/// The events of `events` (a tracefs `events` directory) that `pattern`
/// matches: `catglob/nameglob` (`syscalls/sys_enter_*`), or `nameglob`
/// alone for any category; globs with `*`, `?` and `[...]`. (category,
/// name) pairs, by category then name.
pub fn matching(events: &Path, pattern: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let (cat, name) = match memchr::memchr(b'/', pattern) {
        Some(at) => (&pattern[..at], &pattern[at + 1..]),
        None => (&b"*"[..], pattern),
    };
    if cat.is_empty() || name.is_empty() {
        return Err(Error::invalid(format!(
            "tracepoint pattern `{}`: name a category and an event, `category/name` \
             (`syscalls/sys_enter_*`), or an event alone",
            String::from_utf8_lossy(pattern)
        )));
    }
    let (cat_glob, name_glob) = (Glob::new(cat)?, Glob::new(name)?);
    let mut out = Vec::new();
    for c in subdirs(events, &cat_glob)? {
        let dir = events.join(std::ffi::OsStr::from_bytes(&c));
        for n in subdirs(&dir, &name_glob)? {
            out.push((c.clone(), n));
        }
    }
    Ok(out)
}
