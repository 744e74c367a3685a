//! The system interfaces the core needs beyond `std`: advice to back a
//! large buffer with transparent huge pages, the `bpf()` commands that
//! find the kernel's BTF objects and probe what it loads ([`bpf`]), and
//! the kernel's release (`uname`), and `pread` into a buffer's spare
//! capacity.
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

/// `linkat(AT_FDCWD, fd_path, AT_FDCWD, to, AT_SYMLINK_FOLLOW)`: gives an
/// unnamed file (`O_TMPFILE`) the name `to`. `fd_path` is
/// `/proc/self/fd/N` with its NUL.
pub fn link_fd_path(fd_path: &[u8], to: &std::ffi::CStr) -> std::io::Result<()> {
    let from = std::ffi::CStr::from_bytes_with_nul(fd_path)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: two NUL-terminated paths; linkat reads them and nothing else.
    let r = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Starts a thread with every signal blocked (it inherits the mask from
/// the caller, which keeps its own): a background thread of a library
/// must not take a signal meant for the program's threads.
pub fn spawn_quiet<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    // SAFETY: `sigset_t` is plain data; sigfillset and pthread_sigmask
    // only read and write the sets given.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let r = std::thread::Builder::new()
            .name("ksym-snapshot".into())
            .spawn(f);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        r
    }
}

/// The process id.
pub fn pid() -> u32 {
    std::process::id()
}

/// Registers `exit` to run at `exit()` (and, for a library unloaded by
/// `dlclose`, then) and `child` in the child of every `fork()`.
pub fn at_exit_and_fork(exit: extern "C" fn(), child: extern "C" fn()) {
    // SAFETY: both are plain `extern "C" fn()` with no argument, as
    // atexit and pthread_atfork call them.
    unsafe {
        libc::atexit(exit);
        libc::pthread_atfork(None, None, Some(child));
    }
}

/// Appends `len` bytes of `file` from offset `off` to `out` with `pread`,
/// into its spare capacity: nothing is zeroed first (a calloc'd buffer
/// the allocator hands back from its heap is memset whole). Returns how
/// many bytes were read: fewer only at the end of the file.
pub fn pread_append(
    file: &std::fs::File,
    off: u64,
    len: usize,
    out: &mut Vec<u8>,
) -> std::io::Result<usize> {
    use std::io::{Error, ErrorKind};
    use std::os::fd::AsRawFd;
    out.try_reserve(len)
        .map_err(|_| Error::from(ErrorKind::OutOfMemory))?;
    let mut done = 0;
    while done < len {
        let at = libc::off_t::try_from(off + done as u64)
            .map_err(|_| Error::from(ErrorKind::InvalidInput))?;
        let spare = out.spare_capacity_mut();
        // SAFETY: `spare` has room for `len - done` bytes (reserved above,
        // `done` of them used since); pread writes at most that many there.
        let n = unsafe {
            libc::pread(
                file.as_raw_fd(),
                spare.as_mut_ptr() as *mut libc::c_void,
                len - done,
                at,
            )
        };
        match n {
            0 => break,
            n if n > 0 => {
                // SAFETY: pread initialised the first `n` spare bytes.
                unsafe { out.set_len(out.len() + n as usize) };
                done += n as usize;
            }
            _ => {
                let e = Error::last_os_error();
                if e.kind() != ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(done)
}

/// The few `bpf()` commands the core issues itself: finding the kernel's
/// BTF objects (vmlinux and one per module with BTF) and their fds, and
/// libbpf's feature probes (what BTF and programs the kernel loads).
pub mod bpf {
    use std::io;
    use std::os::fd::{FromRawFd, OwnedFd};

    const BPF_PROG_LOAD: libc::c_long = 5;
    const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
    const BPF_BTF_GET_FD_BY_ID: libc::c_long = 19;
    const BPF_BTF_GET_NEXT_ID: libc::c_long = 23;

    /// `bpf(cmd, attr, size)`: the result or the errno.
    fn bpf(cmd: libc::c_long, attr: &mut [u8]) -> io::Result<libc::c_long> {
        // SAFETY: `attr` is a valid, writable buffer of the size given; the
        // kernel reads and writes at most that many bytes of it, and every
        // pointer the commands below put inside it refers to memory that
        // outlives the call.
        let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len()) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r)
        }
    }

    /// The BTF object id after `start` (`BPF_BTF_GET_NEXT_ID`); `None`
    /// after the last.
    pub fn btf_next_id(start: u32) -> io::Result<Option<u32>> {
        let mut attr = [0u8; 12];
        attr[0..4].copy_from_slice(&start.to_ne_bytes());
        match bpf(BPF_BTF_GET_NEXT_ID, &mut attr) {
            Ok(_) => Ok(Some(u32::from_ne_bytes([
                attr[4], attr[5], attr[6], attr[7],
            ]))),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// An fd for BTF object `id` (`BPF_BTF_GET_FD_BY_ID`).
    pub fn btf_fd(id: u32) -> io::Result<OwnedFd> {
        let mut attr = [0u8; 12];
        attr[0..4].copy_from_slice(&id.to_ne_bytes());
        let fd = bpf(BPF_BTF_GET_FD_BY_ID, &mut attr)?;
        // SAFETY: the kernel returned a new file descriptor that nothing
        // else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }

    /// What the kernel says of a BTF object: (id, name, kernel BTF).
    pub fn btf_info(fd: &OwnedFd) -> io::Result<(u32, Vec<u8>, bool)> {
        use std::os::fd::AsRawFd;
        let mut name = [0u8; 64];
        // struct bpf_btf_info: btf, btf_size, id, name, name_len, kernel_btf.
        let mut info = [0u8; 32];
        info[16..24].copy_from_slice(&(name.as_mut_ptr() as u64).to_ne_bytes());
        info[24..28].copy_from_slice(&(name.len() as u32).to_ne_bytes());
        let mut attr = [0u8; 16];
        attr[0..4].copy_from_slice(&(fd.as_raw_fd() as u32).to_ne_bytes());
        attr[4..8].copy_from_slice(&(info.len() as u32).to_ne_bytes());
        attr[8..16].copy_from_slice(&(info.as_mut_ptr() as u64).to_ne_bytes());
        bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr)?;
        let id = u32::from_ne_bytes([info[12], info[13], info[14], info[15]]);
        let kernel = u32::from_ne_bytes([info[28], info[29], info[30], info[31]]) != 0;
        let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Ok((id, name[..len].to_vec(), kernel))
    }

    /// `BPF_BTF_LOAD` of `blob` (no log): `Ok` when the kernel takes it
    /// (the fd is closed at once), the errno otherwise. libbpf's BTF
    /// feature probes.
    pub fn btf_loads(blob: &[u8]) -> io::Result<()> {
        const BPF_BTF_LOAD: libc::c_long = 18;
        // union bpf_attr for BPF_BTF_LOAD: btf, btf_log_buf, btf_size,
        // btf_log_size, btf_log_level (the fields 5.10 knows; newer
        // kernels take the zero tail of a shorter attr as theirs).
        let mut attr = [0u8; 32];
        attr[0..8].copy_from_slice(&(blob.as_ptr() as u64).to_ne_bytes());
        attr[16..20].copy_from_slice(&(blob.len() as u32).to_ne_bytes());
        let fd = bpf(BPF_BTF_LOAD, &mut attr)?;
        // SAFETY: the kernel returned a new fd that nothing else owns.
        drop(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        Ok(())
    }

    /// `BPF_PROG_LOAD` of a TRACING-like program of `prog_type` with
    /// `expected_attach_type` and `attach_btf_id` (vmlinux's), made of
    /// `insns`, GPL: `Ok` when the kernel takes it (the fd is closed at
    /// once), the errno otherwise. The multi-link and trampoline probes.
    pub fn prog_load(
        prog_type: u32,
        expected_attach_type: u32,
        attach_btf_id: u32,
        insns: &[[u8; 8]],
    ) -> io::Result<()> {
        let license = b"GPL\0";
        // union bpf_attr for BPF_PROG_LOAD: prog_type, insn_cnt, insns,
        // license, ..., expected_attach_type at 68, attach_btf_id at 108.
        let mut attr = [0u8; 128];
        attr[0..4].copy_from_slice(&prog_type.to_ne_bytes());
        attr[4..8].copy_from_slice(&(insns.len() as u32).to_ne_bytes());
        attr[8..16].copy_from_slice(&(insns.as_ptr() as u64).to_ne_bytes());
        attr[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
        attr[68..72].copy_from_slice(&expected_attach_type.to_ne_bytes());
        attr[108..112].copy_from_slice(&attach_btf_id.to_ne_bytes());
        let fd = bpf(BPF_PROG_LOAD, &mut attr)?;
        // SAFETY: the kernel returned a new fd that nothing else owns.
        drop(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        Ok(())
    }

    /// Whether the kernel loads a program of `prog_type` made of `insns`
    /// (8 bytes each) with a GPL license: libbpf's feature probes. The
    /// program is closed at once; any refusal (EPERM included) is `false`.
    pub fn prog_loads(prog_type: u32, insns: &[[u8; 8]]) -> bool {
        let license = b"GPL\0";
        // union bpf_attr for BPF_PROG_LOAD: prog_type, insn_cnt, insns,
        // license, then zeros (log, kern_version, flags...).
        let mut attr = [0u8; 128];
        attr[0..4].copy_from_slice(&prog_type.to_ne_bytes());
        attr[4..8].copy_from_slice(&(insns.len() as u32).to_ne_bytes());
        attr[8..16].copy_from_slice(&(insns.as_ptr() as u64).to_ne_bytes());
        attr[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
        match bpf(BPF_PROG_LOAD, &mut attr) {
            Ok(fd) => {
                // SAFETY: the kernel returned a new fd that nothing else owns.
                drop(unsafe { OwnedFd::from_raw_fd(fd as i32) });
                true
            }
            Err(_) => false,
        }
    }
}

/// The page size (ring buffers are sized in pages).
pub fn page_size() -> u32 {
    // SAFETY: sysconf reads a constant; no pointers.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u32::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// The effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `uname -r` and `uname -v` (empty if `uname` fails).
pub fn kernel_release_version() -> (Vec<u8>, Vec<u8>) {
    // SAFETY: `utsname` is plain data; `uname` fills it and NUL-terminates
    // each field.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (Vec::new(), Vec::new());
    }
    let field = |f: &[libc::c_char]| {
        f.iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect()
    };
    (field(&u.release), field(&u.version))
}

/// `uname -r`: the running kernel's release, if `uname` answers.
pub fn kernel_release() -> Option<Vec<u8>> {
    // SAFETY: `utsname` is plain data; `uname` fills it and NUL-terminates
    // each field.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let r: Vec<u8> = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    Some(r)
}
