//! The one system interface the core needs beyond `std`: advice to back a
//! large buffer with transparent huge pages.
//!
//! Reading /proc/kallsyms into fresh memory costs one page fault per 4 KiB
//! (about 1,300 for 5.4 MB, several milliseconds in a VM); with huge pages
//! it is a few faults. This is advice only: contents and safety do not
//! depend on it, and it fails silently where THP is off.

const HUGE: usize = 2 << 20;

/// A zeroed buffer (fresh pages, no memset) for `len` bytes of data that
/// start at the returned offset, on a 2 MiB boundary when the data is
/// large, with the data range advised for huge pages. The bytes before the
/// offset are never touched, so they cost no memory.
pub fn huge_buffer(len: usize) -> (Vec<u8>, usize) {
    if len < HUGE {
        return (vec![0u8; len], 0);
    }
    let mut buf = vec![0u8; len + HUGE];
    let start = buf.as_ptr() as usize;
    let base = ((start + HUGE - 1) & !(HUGE - 1)) - start;
    advise_hugepages(&mut buf[base..base + len]);
    (buf, base)
}

/// Asks the kernel to back the 2 MiB-aligned interior of `buf` with huge
/// pages (`MADV_HUGEPAGE`). Call before touching the memory.
pub fn advise_hugepages(buf: &mut [u8]) {
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
