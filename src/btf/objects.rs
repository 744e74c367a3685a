//! The kernel's BTF objects: the id the kernel gives each (vmlinux and
//! every module with BTF) and an fd for it, opened when first needed and
//! kept until the handle is freed. A program attached to a module's
//! function names that module's BTF object by fd (`attach_btf_obj_fd`).

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Mutex;

use crate::base::sys::bpf;

#[derive(Default)]
struct State {
    /// Name -> id, from the last enumeration (`None`: not done yet).
    ids: Option<HashMap<Vec<u8>, u32>>,
    fds: HashMap<Vec<u8>, OwnedFd>,
    /// Why enumerating failed (bpf() refused...), once.
    failed: Option<String>,
}

/// Ids and fds of the kernel's BTF objects, looked up lazily.
#[derive(Default)]
pub struct Objects {
    state: Mutex<State>,
}

fn enumerate() -> io::Result<HashMap<Vec<u8>, u32>> {
    let mut out = HashMap::new();
    let mut id = 0;
    while let Some(next) = bpf::btf_next_id(id)? {
        id = next;
        // An object can go away between the two calls: skip it.
        let Ok(fd) = bpf::btf_fd(id) else { continue };
        if let Ok((got, name, kernel)) = bpf::btf_info(&fd) {
            if kernel && !name.is_empty() {
                out.insert(name, got);
            }
        }
    }
    Ok(out)
}

impl Objects {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The kernel's id of BTF object `name` (`vmlinux` or a module);
    /// `None` when the kernel does not say (no bpf(), no such object).
    pub fn id(&self, name: &[u8]) -> Option<u32> {
        let mut st = self.lock();
        if st.ids.is_none() && st.failed.is_none() {
            match enumerate() {
                Ok(ids) => st.ids = Some(ids),
                Err(e) => st.failed = Some(format!("cannot list the kernel's BTF objects: {e}")),
            }
        }
        st.ids.as_ref()?.get(name).copied()
    }

    /// An fd for BTF object `name`, kept open: the same one every time.
    /// The name is checked against the object, and the list read again
    /// once if the module was reloaded under another id.
    pub fn fd(&self, name: &[u8]) -> Result<i32, String> {
        if let Some(fd) = self.lock().fds.get(name) {
            return Ok(fd.as_raw_fd());
        }
        for attempt in 0..2 {
            let Some(id) = self.id(name) else {
                let st = self.lock();
                return Err(st.failed.clone().unwrap_or_else(|| {
                    format!(
                        "the kernel has no BTF object `{}` (module not loaded?)",
                        String::from_utf8_lossy(name)
                    )
                }));
            };
            match bpf::btf_fd(id).and_then(|fd| bpf::btf_info(&fd).map(|i| (fd, i))) {
                Ok((fd, (_, got, _))) if got == name => {
                    let raw = fd.as_raw_fd();
                    self.lock().fds.insert(name.to_vec(), fd);
                    return Ok(raw);
                }
                Ok(_) | Err(_) if attempt == 0 => {
                    // Stale: the module was unloaded or reloaded.
                    self.lock().ids = None;
                }
                Ok(_) => break,
                Err(e) => return Err(format!("cannot open BTF object {id}: {e}")),
            }
        }
        Err(format!(
            "BTF object `{}` went away (module unloaded?)",
            String::from_utf8_lossy(name)
        ))
    }

    /// Whether the kernel's objects could be listed (after a lookup).
    pub fn listed(&self) -> bool {
        self.lock().ids.is_some()
    }
}
