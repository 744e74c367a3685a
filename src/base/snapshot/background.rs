//! The snapshot's writer, off the caller's path: the first open of a boot
//! returns its table when the read is done, and a thread of the library
//! writes what the snapshot still lacks (the table's arrays, with the text
//! that was written while the kernel printed it) and puts it in place.
//! Generic: it runs any closure; the table's snapshot is its one user.
//!
//! Safe in the processes a library lives in:
//! - **exit**: `exit()` (returning from `main`) waits for writers in
//!   progress (an `atexit` handler), so a short-lived tool's snapshot is
//!   written too; a process that ends otherwise (`_exit`, a signal)
//!   leaves no file behind, the snapshot being unnamed until it is whole
//!   (`O_TMPFILE`, [`super::trust::Dir::temp`]).
//! - **the next open** in the process waits for them first, so that it
//!   finds the snapshot its process wrote.
//! - **fork**: a child has no writer thread; a handler run in the child
//!   (`pthread_atfork`) forgets the parent's writers, so the child's exit
//!   and opens wait for none of them, and takes no lock a parent thread
//!   may have held.
//! - **signals**: the thread blocks them all (`sys::spawn_quiet`): a
//!   program's signals go to its own threads.
//! - **dlopen**: libksym.so is linked `-z nodelete` (capi/build.rs): a
//!   `dlclose` never unmaps code a writer is running.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::thread::JoinHandle;

use crate::base::sys;

/// The writers of one process.
struct Writers {
    pid: u32,
    handles: Mutex<Vec<JoinHandle<()>>>,
    /// In a forked child: the parent's writers before these, kept
    /// reachable (see `in_child`).
    older: AtomicPtr<Writers>,
}

/// This process's writers (null: none started, or a child's fresh state).
static WRITERS: AtomicPtr<Writers> = AtomicPtr::new(std::ptr::null_mut());
/// Writers started and not yet waited for, for a cheap "none" check.
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// In a forked child: its ancestors' writers (a chain through `older`),
/// which the child never waits for nor frees but keeps reachable, so that
/// a leak checker (valgrind, LeakSanitizer) in the child does not report
/// memory the child inherited and never owned as lost.
static FORGOTTEN: AtomicPtr<Writers> = AtomicPtr::new(std::ptr::null_mut());
static HOOKS: Once = Once::new();

extern "C" fn at_exit() {
    wait();
}

extern "C" fn in_child() {
    // Only atomics here: the child of a multi-threaded process. The
    // parent's state is left as it is, and reachable from FORGOTTEN.
    let old = WRITERS.swap(std::ptr::null_mut(), Ordering::SeqCst);
    // SAFETY: a non-null pointer came from `Box::leak` and is never freed.
    if let Some(w) = unsafe { old.as_ref() } {
        w.older
            .store(FORGOTTEN.load(Ordering::SeqCst), Ordering::SeqCst);
        FORGOTTEN.store(old, Ordering::SeqCst);
    }
    PENDING.store(0, Ordering::SeqCst);
}

/// This process's writers, made on first use.
fn writers() -> &'static Writers {
    let pid = sys::pid();
    let cur = WRITERS.load(Ordering::Acquire);
    // SAFETY: a non-null pointer came from `Box::leak` below and is never
    // freed.
    if let Some(w) = unsafe { cur.as_ref() } {
        if w.pid == pid {
            return w;
        }
    }
    let new: &'static mut Writers = Box::leak(Box::new(Writers {
        pid,
        handles: Mutex::new(Vec::new()),
        older: AtomicPtr::new(std::ptr::null_mut()),
    }));
    match WRITERS.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => new,
        // Another thread made it first (the one made here is leaked: once
        // per process at most, a few bytes).
        // SAFETY: as above.
        Err(other) => unsafe { &*other },
    }
}

/// Runs `f` on a writer thread of its own.
pub fn start(f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    HOOKS.call_once(|| sys::at_exit_and_fork(at_exit, in_child));
    let w = writers();
    let h = sys::spawn_quiet(f)?;
    PENDING.fetch_add(1, Ordering::SeqCst);
    w.handles.lock().unwrap_or_else(|e| e.into_inner()).push(h);
    Ok(())
}

/// Waits for every writer this process started (none in a forked child).
pub fn wait() {
    if PENDING.load(Ordering::SeqCst) == 0 {
        return;
    }
    let cur = WRITERS.load(Ordering::Acquire);
    // SAFETY: as in `writers`.
    let Some(w) = (unsafe { cur.as_ref() }) else {
        return;
    };
    if w.pid != sys::pid() {
        return;
    }
    let handles = std::mem::take(&mut *w.handles.lock().unwrap_or_else(|e| e.into_inner()));
    for h in handles {
        let _ = h.join();
        PENDING.fetch_sub(1, Ordering::SeqCst);
    }
}
