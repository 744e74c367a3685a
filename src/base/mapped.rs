//! Arrays that are either owned or read in place from a file mapped into
//! memory (a table snapshot), behind one type: [`Store`] derefs to a slice
//! either way, so the code that reads a table does not know which.
//!
//! The third module with `unsafe` code (with `sys` and `bytes`): mapping a
//! file, and viewing its bytes as a slice of [`Plain`] values, which is
//! sound because a `Plain` type has no padding, no invalid bit pattern,
//! and the view is checked for alignment and bounds when it is made.

use std::fs::File;
use std::ops::Deref;
use std::sync::Arc;

/// Plain data: `Copy`, `repr(C)` or primitive, no padding bytes, every bit
/// pattern a valid value, no pointers. Viewing bytes as `[T]` (and `[T]` as
/// bytes) is then sound.
///
/// # Safety
/// Implement only for types with exactly those properties.
pub unsafe trait Plain: Copy + Send + Sync + 'static {}

// SAFETY: integers have no padding and no invalid bit patterns.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}

/// The bytes of `values` (a snapshot writes them; scanners read them as
/// words).
pub fn bytes_of<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `T: Plain` has no padding: every byte of the slice is
    // initialised, and u8 has no alignment.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr() as *const u8, std::mem::size_of_val(values))
    }
}

/// Appends the values of `bytes` (whole values of `T`; a partial one at
/// the end is ignored) to `out`. `T` must be laid out as the bytes are:
/// `repr(C)`, its fields in the bytes' order, little-endian. On a
/// little-endian host that is one copy (the values are the bytes); on
/// others each value is decoded by `decode`. Sound either way (`T: Plain`:
/// every bit pattern is a value); `decode` says what "laid out as" means.
pub fn extend_le<T: Plain>(out: &mut Vec<T>, bytes: &[u8], decode: impl Fn(&[u8]) -> T) {
    let size = std::mem::size_of::<T>();
    let n = bytes.len() / size;
    if cfg!(target_endian = "little") {
        out.reserve(n);
        let len = out.len();
        // SAFETY: `reserve` made room for `n` values after `len`; the
        // source holds `n * size` bytes and does not overlap the vector's
        // spare capacity; `T: Plain` has no padding and no invalid bit
        // pattern, so the bytes copied are `n` initialised values.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                out.as_mut_ptr().add(len) as *mut u8,
                n * size,
            );
            out.set_len(len + n);
        }
    } else {
        out.extend(bytes.chunks_exact(size).map(decode));
    }
}

/// A file mapped read-only (private), unmapped on drop.
pub struct Mapping {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value; sharing it
// between threads shares immutable bytes.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the whole of `file` (`len` bytes, its size). A length of 0 is
    /// an error (nothing to map).
    pub fn new(file: &File, len: usize) -> std::io::Result<Mapping> {
        use std::os::fd::AsRawFd;
        if len == 0 {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: a fresh read-only private mapping of a file we hold open;
        // the kernel checks the fd and the length.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: p as *const u8,
            len,
        })
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes until drop.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps what `new` mapped, once; nothing borrows it any
        // more (every view holds an `Arc` of this mapping).
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// An array of `T`, owned, shared (with a background writer of a
/// snapshot: [`Store::share`]) or viewed in a mapping.
pub enum Store<T: Plain> {
    Owned(Vec<T>),
    Shared {
        /// Keeps `ptr` valid: never changed while shared.
        vec: Arc<Vec<T>>,
        ptr: *const T,
        len: usize,
    },
    Mapped {
        /// Keeps `ptr` valid.
        map: Arc<Mapping>,
        /// The first value, inside `map` and aligned (checked once, when
        /// the view is made: a read costs no check).
        ptr: *const T,
        len: usize,
    },
}

// SAFETY: a `Mapped` or `Shared` store is a read-only view of a mapping or
// vector it keeps alive (`ptr` points into it); `T: Plain` values are
// plain data.
unsafe impl<T: Plain> Send for Store<T> {}
// SAFETY: as above: nothing in a store is written through a shared reference.
unsafe impl<T: Plain> Sync for Store<T> {}

impl<T: Plain> Default for Store<T> {
    fn default() -> Self {
        Store::Owned(Vec::new())
    }
}

impl<T: Plain> From<Vec<T>> for Store<T> {
    fn from(v: Vec<T>) -> Self {
        Store::Owned(v)
    }
}

impl<T: Plain> Store<T> {
    /// A view of `len` values at byte `off` of `map`, if they lie inside it
    /// and `off` is aligned for `T`.
    pub fn mapped(map: &Arc<Mapping>, off: usize, len: usize) -> Option<Store<T>> {
        let size = std::mem::size_of::<T>();
        let end = len.checked_mul(size)?.checked_add(off)?;
        let base = map.bytes().as_ptr() as usize;
        if end > map.len || (base + off) % std::mem::align_of::<T>() != 0 {
            return None;
        }
        Some(Store::Mapped {
            map: map.clone(),
            // In bounds: `off + len * size <= map.len` (checked above).
            ptr: map.bytes()[off..].as_ptr() as *const T,
            len,
        })
    }

    /// The owned vector, to change while building (`None` once shared or
    /// mapped).
    pub fn vec_mut(&mut self) -> Option<&mut Vec<T>> {
        match self {
            Store::Owned(v) => Some(v),
            Store::Shared { .. } | Store::Mapped { .. } => None,
        }
    }

    /// Another handle on the same values, for a thread that reads them
    /// while this one is used (an owned vector becomes shared: read-only
    /// from now on, freed with the last handle). No copy.
    pub fn share(&mut self) -> Store<T> {
        if let Store::Owned(v) = self {
            let vec = Arc::new(std::mem::take(v));
            let (ptr, len) = (vec.as_ptr(), vec.len());
            *self = Store::Shared { vec, ptr, len };
        }
        match self {
            Store::Owned(_) => unreachable!("made shared above"),
            Store::Shared { vec, ptr, len } => Store::Shared {
                vec: vec.clone(),
                ptr: *ptr,
                len: *len,
            },
            Store::Mapped { map, ptr, len } => Store::Mapped {
                map: map.clone(),
                ptr: *ptr,
                len: *len,
            },
        }
    }

    /// The values as bytes (what a snapshot writes).
    pub fn as_bytes(&self) -> &[u8] {
        bytes_of(self)
    }

    /// Bytes held on the heap (0 for a view of a mapping).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Store::Owned(v) => v.capacity() * std::mem::size_of::<T>(),
            Store::Shared { vec, .. } => vec.capacity() * std::mem::size_of::<T>(),
            Store::Mapped { .. } => 0,
        }
    }

    pub fn is_mapped(&self) -> bool {
        matches!(self, Store::Mapped { .. })
    }
}

impl<T: Plain> Deref for Store<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        match self {
            Store::Owned(v) => v,
            // SAFETY: `ptr` and `len` are the shared vector's, which `vec`
            // keeps alive and nothing changes while shared.
            Store::Shared { ptr, len, .. } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
            // SAFETY: `mapped` checked that `len` values at `ptr` lie inside
            // the mapping, which `map` keeps mapped, and are aligned for
            // `T`; `T: Plain` accepts any bytes.
            Store::Mapped { ptr, len, .. } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
}

impl<T: Plain + std::fmt::Debug> std::fmt::Debug for Store<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Store({} values, {})",
            self.len(),
            if self.is_mapped() { "mapped" } else { "owned" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn owned_and_mapped_read_the_same() {
        let dir = std::env::temp_dir().join(format!("ksym-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        let vals: Vec<u64> = (0..1000u64).map(|i| i * 0x0101_0101).collect();
        let owned: Store<u64> = vals.clone().into();
        let mut f = File::create(&p).unwrap();
        f.write_all(&[7u8; 8]).unwrap();
        f.write_all(owned.as_bytes()).unwrap();
        drop(f);
        let f = File::open(&p).unwrap();
        let map = Arc::new(Mapping::new(&f, 8 + 8000).unwrap());
        let m: Store<u64> = Store::mapped(&map, 8, 1000).unwrap();
        assert_eq!(&*m, &vals[..]);
        assert!(m.is_mapped() && m.heap_bytes() == 0);
        // Out of bounds or misaligned views are refused.
        assert!(Store::<u64>::mapped(&map, 8, 1001).is_none());
        assert!(Store::<u64>::mapped(&map, 4, 10).is_none());
        assert!(Store::<u64>::mapped(&map, usize::MAX - 4, 1).is_none());
        // The view keeps the mapping alive.
        drop(map);
        assert_eq!(m[999], vals[999]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
