//! The one system interface the core needs beyond `std`: advice to back a
//! large buffer with transparent huge pages.
//!
//! Reading /proc/kallsyms into fresh memory costs one page fault per 4 KiB
//! (about 1,300 for 5.4 MB, several milliseconds in a VM); with huge pages
//! it is a few faults. This is advice only: contents and safety do not
//! depend on it, and it fails silently where THP is off.

/// Asks the kernel to back the 2 MiB-aligned interior of `buf` with huge
/// pages (`MADV_HUGEPAGE`). Call before touching the memory.
pub fn advise_hugepages(buf: &mut [u8]) {
    const HUGE: usize = 2 << 20;
    let start = buf.as_ptr() as usize;
    let aligned = (start + HUGE - 1) & !(HUGE - 1);
    let end = (start + buf.len()) & !(HUGE - 1);
    if end > aligned {
        // SAFETY: the range lies inside `buf`, which we own mutably;
        // MADV_HUGEPAGE changes how pages are backed, never their contents.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                end - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}
