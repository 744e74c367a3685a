//! Typed ksyms and kfuncs resolved against the kernel's BTF, with the one
//! query grammar (`name`, or `module`name` through an asm label) and the
//! BTF answer rules: vmlinux first, then the modules, ambiguous between
//! modules.

use crate::bpf::object::externs::{Extern, ExternKind};
use crate::btf::KernelBtf;
use crate::error::{Error, Result, INVALID, NOT_FOUND};
use crate::formats::btf::{self as fbtf, Btf};
use crate::rules::query::Query;

/// Resolves typed ksyms and kfuncs against `kernel`, as libbpf's
/// `bpf_object__resolve_ksyms_btf_id` does: the kernel's VAR or FUNC of
/// that name, its type compatible with the local one; a strong extern
/// not found is an error, a weak one gets 0. Returns the fd array for
/// module kfuncs (index 0 unused, as libbpf leaves it), empty when none.
pub(in crate::bpf) fn resolve_btf(
    externs: &mut [Extern],
    local: &Btf,
    kernel: &KernelBtf,
) -> Result<Vec<i32>> {
    let mut fd_array: Vec<i32> = Vec::new();
    let mut fd_idx_of: Vec<(usize, i16)> = Vec::new();
    for x in externs.iter_mut() {
        let (kind, what) = match x.kind {
            ExternKind::KsymBtf => (fbtf::KIND_VAR, "typed __ksym"),
            ExternKind::Kfunc => (fbtf::KIND_FUNC, "kfunc"),
            _ => continue,
        };
        let mut name = x.name.to_bytes();
        // A kfunc is looked up by its essential name, as libbpf does
        // (`bpf_task_from_pid___v2` is `bpf_task_from_pid`).
        if x.kind == ExternKind::Kfunc {
            name = &name[..crate::btf::index::essential_len(name)];
        }
        let q = Query::parse(name).map_err(|e| e.context(format!("extern `{}`", x.shown())))?;
        let unresolved = |x: &mut Extern| {
            x.resolved = false;
            x.btf_id = 0;
            x.btf_obj_fd = 0;
            x.fd_idx = 0;
            x.module = None;
        };
        let found = match kernel.find_query(&q, b"", kind, what) {
            Ok(f) => f,
            Err(e) if e.code() == NOT_FOUND && x.weak => {
                unresolved(x);
                continue;
            }
            Err(e) => {
                return Err(e.context(format!(
                    "extern `{}` ({what}, strong; declare it __weak if it may be absent)",
                    x.shown()
                )))
            }
        };
        let blob = kernel.object(found.obj)?;
        let kt = blob
            .btf
            .ty(found.id)
            .ok_or_else(|| Error::format("kernel BTF id out of range"))?;
        let (lid, tid) = match x.kind {
            ExternKind::KsymBtf => (x.local_type, blob.btf.resolve(kt.type_id())?),
            _ => (x.local_type, kt.type_id()),
        };
        if !crate::bpf::core::types_are_compat(local, lid, &blob.btf, tid)? {
            // libbpf: a weak kfunc of another prototype is as missing.
            if x.kind == ExternKind::Kfunc && x.weak {
                unresolved(x);
                continue;
            }
            let desc = |b: &Btf, id: u32| {
                let t = b.ty(id);
                format!(
                    "[{id}] {} {}",
                    t.map_or("void", |t| fbtf::kind_name(t.kind())),
                    String::from_utf8_lossy(b.name(id))
                )
            };
            return Err(Error::new(
                INVALID,
                format!(
                    "extern `{}` ({what}): incompatible types: the object has {}, the kernel ({}) has {}",
                    x.shown(),
                    desc(local, lid),
                    kernel.object_name(found.obj).to_string_lossy(),
                    desc(&blob.btf, tid)
                ),
            ));
        }
        x.resolved = true;
        x.btf_id = found.id;
        x.module = Some(kernel.object_name(found.obj).to_owned());
        x.btf_obj_fd = if found.obj == 0 {
            0
        } else {
            kernel.object_fd(found.obj).unwrap_or(-1)
        };
        x.fd_idx = 0;
        if x.kind == ExternKind::Kfunc && found.obj != 0 {
            x.fd_idx = match fd_idx_of.iter().find(|(o, _)| *o == found.obj) {
                Some(&(_, i)) => i,
                None => {
                    if fd_array.is_empty() {
                        fd_array.push(0);
                    }
                    let i = i16::try_from(fd_array.len()).map_err(|_| {
                        Error::unsupported(format!(
                            "kfunc `{}`: more than 32767 module BTF fds",
                            x.shown()
                        ))
                    })?;
                    fd_array.push(x.btf_obj_fd);
                    fd_idx_of.push((found.obj, i));
                    i
                }
            };
        }
    }
    Ok(fd_array)
}
