//! Does this reader see the kernel's real addresses in kallsyms? The one
//! rule for that question, for the library (snapshots are kept only by a
//! process that may read addresses), the CLI (`ksym addresses`) and the
//! C API (`ksym_kallsyms_shows_addresses`), which the test scripts use.
//!
//! A reader the kernel restricts (`kernel.kptr_restrict`, no
//! `CAP_SYSLOG`) sees every address as zero. A reader allowed to see them
//! sees a non-zero address within the first lines. The first line alone
//! cannot tell: on x86-64 SMP kernels it is a per-CPU symbol at offset 0
//! (`0000000000000000 A fixed_percpu_data`) for every reader, followed by
//! `__per_cpu_start` at 0 and then per-CPU offsets (`0000000000001000 A
//! cpu_debug_store`) and text, which are non-zero for a reader allowed to
//! see them. So the rule reads lines until one shows a non-zero address,
//! at most [`PROBE_BYTES`]: the kernel prints kallsyms as it is read,
//! about 10 µs per hundred lines, and a reader that sees addresses stops
//! within the first piece read.
//!
//! The table's parse and the streaming resolver apply the same rule to the
//! whole file (an error `KSYM_ERR_RESTRICTED` when no address is
//! non-zero): this module answers it from the beginning, cheaply, before
//! anything is read whole.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// The most of the file read to decide: 4 KiB, about 80 lines; a kernel
/// whose first 4 KiB of lines all have address 0 is judged restricted
/// (none known: x86-64 has two per-CPU symbols at 0).
pub const PROBE_BYTES: usize = 4096;
/// One `read()`: the kernel prints only as many lines as a read asks for,
/// so a small first read costs a few lines, not a page of them.
const PIECE: usize = 512;

/// What the beginning of a kallsyms text says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// A complete line with a non-zero address.
    Real,
    /// Complete lines only with address zero (so far).
    Zeros,
    /// The first line is not `HEX ...`: not a kallsyms text.
    NotKallsyms,
}

/// Judges the complete lines of `head` (a beginning of kallsyms or
/// kallmodsyms text; a last line without its newline is left out unless
/// its address is already followed by a space).
pub fn judge(head: &[u8]) -> Seen {
    let mut lines = head.split(|&c| c == b'\n').peekable();
    let mut first = true;
    while let Some(line) = lines.next() {
        // The last piece has no newline yet (empty after a final one).
        let unfinished = lines.peek().is_none();
        let hex = line.iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if hex > 0 && line.get(hex) == Some(&b' ') {
            if line[..hex].iter().any(|&c| c != b'0') {
                return Seen::Real;
            }
        } else if first && !(unfinished && hex == line.len()) {
            return Seen::NotKallsyms;
        }
        first = false;
    }
    Seen::Zeros
}

/// Does `head` (a beginning of kallsyms text) show real addresses?
pub fn shows_real_addresses(head: &[u8]) -> bool {
    judge(head) == Seen::Real
}

/// Does this process see real addresses in the kallsyms file at `path`?
/// Reads `PIECE`-sized pieces until a line shows a non-zero address, at
/// most `PROBE_BYTES` (or the end of the file). `Ok(false)` for a file
/// whose first lines all have address zero (or an empty file); a format
/// error when the first line is not a kallsyms line; an I/O error when
/// the file cannot be read.
pub fn reads_real_addresses(path: &Path) -> Result<bool> {
    let shown = path.display();
    let mut f = File::open(path).map_err(|e| Error::io(&e, format!("cannot open {shown}")))?;
    let mut head = [0u8; PROBE_BYTES];
    let mut n = 0;
    while n < head.len() {
        let end = head.len().min(n + PIECE);
        match f.read(&mut head[n..end]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(&e, format!("cannot read {shown}"))),
        }
        match judge(&head[..n]) {
            Seen::Real => return Ok(true),
            Seen::NotKallsyms => {
                return Err(Error::format(format!(
                    "{shown}: the first line is not `ADDRESS TYPE NAME`: not a kallsyms file"
                )))
            }
            Seen::Zeros => {}
        }
    }
    Ok(false)
}

/// [`reads_real_addresses`] of /proc/kallsyms, false when it cannot be
/// read: may this process keep kernel addresses (a snapshot)?
pub fn proc_shows_real_addresses() -> bool {
    reads_real_addresses(Path::new("/proc/kallsyms")).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    #[test]
    fn judged_by_complete_lines() {
        assert_eq!(judge(b""), Seen::Zeros);
        assert_eq!(
            judge(b"0000000000000000 A fixed_percpu_data\n"),
            Seen::Zeros
        );
        // The address is complete once a space follows it.
        assert_eq!(judge(b"0000000000001000 A cpu_debug"), Seen::Real);
        assert_eq!(judge(b"00000000000010"), Seen::Zeros);
        assert_eq!(judge(b"ffffffff81000000 T _text\n"), Seen::Real);
        assert_eq!(judge(b"00000000 T a\n00000000 t b\n"), Seen::Zeros);
        assert_eq!(judge(b"c0008000 T stext\n"), Seen::Real);
        assert_eq!(judge(b"root:x:0:0:root:/root:/bin/sh\n"), Seen::NotKallsyms);
        assert_eq!(judge(b"cafe:x\n"), Seen::NotKallsyms);
        assert_eq!(judge(b"\x7fELF\x02\x01"), Seen::NotKallsyms);
    }

    fn kallsyms(kernel: &str) -> Vec<u8> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(kernel)
            .join("kallsyms.gz");
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(File::open(&p).unwrap())
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    /// Every address of `text` replaced by zeros of the same width, as the
    /// kernel prints it for a restricted reader.
    fn restricted(text: &[u8]) -> Vec<u8> {
        text.split_inclusive(|&c| c == b'\n')
            .flat_map(|l| {
                let hex = l.iter().take_while(|c| c.is_ascii_hexdigit()).count();
                let mut l = l.to_vec();
                l[..hex].fill(b'0');
                l
            })
            .collect()
    }

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "ksym-addresses-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The rules this one replaces, for the proof that each test fails on
    /// them: the CLI test script's first line (`head -n 1 | grep -qv
    /// '^0000000000000000 '`) and `.ci/run`'s first 50 lines (`head -50 |
    /// grep -qv '^0000000000000000 '`).
    fn first_line_rule(text: &[u8]) -> bool {
        let l = text.split(|&c| c == b'\n').next().unwrap_or_default();
        !l.starts_with(b"0000000000000000 ")
    }
    fn head_50_rule(text: &[u8]) -> bool {
        text.split(|&c| c == b'\n')
            .take(50)
            .any(|l| !l.starts_with(b"0000000000000000 "))
    }

    /// Hand-made files, each with what a reader of it must be told (worked
    /// out from the lines: is an address of its first lines non-zero?), and
    /// whether the two old rules get it wrong.
    #[test]
    fn hand_made_files() {
        let distro = kallsyms("linux-6.12-cloud");
        let vm = kallsyms("vm-6.18");
        let arm32 =
            b"c0008000 T stext\nc0008000 T _text\nc0008100 t __create_page_tables\n".to_vec();
        let cases: [(&str, Vec<u8>, bool); 6] = [
            // root on a distro x86-64 kernel: two per-CPU symbols at 0 first.
            ("distro root", distro[..8192].to_vec(), true),
            ("distro restricted", restricted(&distro[..8192]), false),
            ("6.18 root", vm[..8192].to_vec(), true),
            ("6.18 restricted", restricted(&vm[..8192]), false),
            // A 32-bit kernel prints 8 digits: restricted is `00000000`.
            ("32-bit root", arm32.clone(), true),
            ("32-bit restricted", restricted(&arm32), false),
        ];
        let d = dir();
        for (what, text, want) in &cases {
            let p = d.join("kallsyms");
            std::fs::write(&p, text).unwrap();
            assert_eq!(reads_real_addresses(&p).unwrap(), *want, "{what}");
            assert_eq!(shows_real_addresses(text), *want, "{what}");
        }
        // Each old rule fails one of them: the first line on the distro
        // kernel (root reads a zero first), the 50 lines on a 32-bit
        // restricted kernel (its zeros are 8 digits).
        assert!(
            !first_line_rule(&cases[0].1),
            "the first-line rule says hidden"
        );
        assert!(head_50_rule(&cases[5].1), "the 50-line rule says real");
        // The whole of each real file: the rule agrees with its first lines.
        for (kernel, text) in [("linux-6.12-cloud", &distro), ("vm-6.18", &vm)] {
            assert!(shows_real_addresses(&text[..PROBE_BYTES]), "{kernel}");
            assert!(!shows_real_addresses(&restricted(text)), "{kernel}");
        }
        // Not kallsyms, and an empty file.
        let p = d.join("other");
        std::fs::write(&p, b"root:x:0:0:root:/root:/bin/sh\n").unwrap();
        let e = reads_real_addresses(&p).unwrap_err();
        assert_eq!(e.code(), crate::error::FORMAT);
        assert!(e.message().contains("not a kallsyms file"), "{e}");
        std::fs::write(&p, b"").unwrap();
        assert!(!reads_real_addresses(&p).unwrap());
        let e = reads_real_addresses(&d.join("missing")).unwrap_err();
        assert_eq!(e.code(), crate::error::NOT_FOUND);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Reads only the first lines: through a FIFO whose writer gives a
    /// head of the file and then waits, the answer comes without the rest
    /// (a rule that reads 64 KiB, as the snapshot's did, waits for ever).
    /// A restricted head is judged after [`PROBE_BYTES`].
    #[test]
    fn reads_only_the_beginning() {
        let distro = kallsyms("linux-6.1-cloud");
        for (head, want) in [
            (distro[..200].to_vec(), true),
            (restricted(&distro[..PROBE_BYTES + 100]), false),
        ] {
            let d = dir();
            let fifo = d.join("fifo");
            let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let (tx, rx) = std::sync::mpsc::channel();
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || tx.send(reads_real_addresses(&fifo)).unwrap())
            };
            let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            w.write_all(&head).unwrap();
            let got = rx.recv_timeout(Duration::from_secs(20));
            // Now let the reader go (end of file), whatever happened.
            drop(w);
            reader.join().unwrap();
            let got = got.expect("an answer before the writer closed the FIFO");
            assert_eq!(got.unwrap(), want);
            std::fs::remove_dir_all(&d).unwrap();
        }
    }

    /// This machine's /proc/kallsyms: the rule's answer from the first
    /// lines is the whole file's (any non-zero address in all of it).
    #[test]
    fn this_machine() {
        let whole = std::fs::read("/proc/kallsyms").unwrap();
        let any = whole.split(|&c| c == b'\n').any(|l| {
            l.split(|&c| c == b' ')
                .next()
                .is_some_and(|a| a.iter().any(|&c| c != b'0'))
                && !l.is_empty()
        });
        assert_eq!(proc_shows_real_addresses(), any);
    }
}
