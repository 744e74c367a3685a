//! Reading a file as a stream of complete lines, with one fixed buffer.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// The read buffer.
const CHUNK: usize = 32 << 10;
/// Bytes read before they are scanned (the kernel gives under 4 KiB per
/// read of /proc/kallsyms).
const BATCH: usize = 16 << 10;

/// Feeds `f` the text of `path` in chunks of complete lines (the last line
/// gets a newline if it lacks one), reading with a fixed pool of buffers.
/// Stops when `f` returns `Ok(false)`.
pub(super) fn stream(
    path: &Path,
    shown: &str,
    f: &mut (dyn FnMut(&[u8]) -> Result<bool> + Send),
) -> Result<usize> {
    let mut file = File::open(path).map_err(|e| Error::io(&e, format!("cannot open {shown}")))?;
    stream_reader(&mut file, shown, f)
}

/// Reads `file` into one buffer and hands `f` the complete lines of each
/// read at once, carrying the unfinished last line to the next.
pub(super) fn stream_reader(
    file: &mut impl Read,
    shown: &str,
    f: &mut (dyn FnMut(&[u8]) -> Result<bool> + Send),
) -> Result<usize> {
    let mut buf = vec![0u8; CHUNK];
    let mut filled = 0;
    let mut total = 0;
    use crate::base::read::limits;
    loop {
        let n = read_some(file, &mut buf[filled..], shown)?;
        total += n;
        filled += n;
        if total > limits::KALLSYMS {
            return Err(Error::format(format!(
                "{shown}: more than {} MiB: too large for a kallsyms file (a wrong file, or one that never ends?)",
                limits::KALLSYMS >> 20
            )));
        }
        if n == 0 {
            if filled > 0 {
                if buf[filled - 1] != b'\n' {
                    push_byte(&mut buf, &mut filled, b'\n');
                }
                f(&buf[..filled])?;
            }
            return Ok(total);
        }
        if filled < BATCH && buf.len() - filled >= BATCH {
            // Scanning a few reads at once costs less than one at a time
            // (each read of /proc/kallsyms leaves the caches to the kernel).
            continue;
        }
        if let Some(k) = memchr::memrchr(b'\n', &buf[..filled]) {
            if !f(&buf[..=k])? {
                return Ok(total);
            }
            buf.copy_within(k + 1..filled, 0);
            filled -= k + 1;
        } else if filled == buf.len() {
            // A line longer than the buffer: grow (names are at most 32 KiB),
            // up to the longest line a kallsyms file has.
            if filled > limits::LINE {
                return Err(Error::format(format!(
                    "{shown}: a line longer than {} KiB at byte {}: not a kallsyms file",
                    limits::LINE >> 10,
                    total - filled
                )));
            }
            buf.resize(buf.len() * 2, 0);
        }
    }
}

fn push_byte(buf: &mut Vec<u8>, filled: &mut usize, b: u8) {
    if *filled == buf.len() {
        buf.push(b);
    } else {
        buf[*filled] = b;
    }
    *filled += 1;
}

fn read_some(file: &mut impl Read, buf: &mut [u8], shown: &str) -> Result<usize> {
    loop {
        match file.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(&e, format!("cannot read {shown}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out `step` bytes per read, like /proc does with its pages.
    struct Dribble<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn lines_cut_by_reads_anywhere_arrive_whole() {
        let text = b"line one\nline two\nthe third line\nno newline at the end";
        for step in 1..text.len() + 1 {
            let mut chunks: Vec<Vec<u8>> = Vec::new();
            let n = stream_reader(&mut Dribble { data: text, step }, "t", &mut |t: &[u8]| {
                assert!(t.ends_with(b"\n"));
                chunks.push(t.to_vec());
                Ok(true)
            })
            .unwrap();
            assert_eq!(n, text.len());
            let mut want = text.to_vec();
            want.push(b'\n');
            assert_eq!(chunks.concat(), want, "{step} bytes per read");
        }
        // A line longer than the buffer.
        let long = [vec![b'x'; CHUNK + 100], b"\nshort\n".to_vec()].concat();
        let mut got = Vec::new();
        stream_reader(
            &mut Dribble {
                data: &long,
                step: 4096,
            },
            "t",
            &mut |t: &[u8]| {
                got.extend_from_slice(t);
                Ok(true)
            },
        )
        .unwrap();
        assert_eq!(got, long);
    }

    /// An endless stream of valid lines (a FIFO fed forever).
    struct Endless(u64);

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let line = format!("ffffffff{:08x} T s{}\n", self.0 & 0xffff_ffff, self.0);
            self.0 += 1;
            let n = line.len().min(buf.len());
            buf[..n].copy_from_slice(&line.as_bytes()[..n]);
            Ok(n)
        }
    }

    #[test]
    fn endless_input_and_endless_lines_stop_at_the_limits() {
        use crate::base::read::limits;
        let mut seen = 0usize;
        let e = stream_reader(&mut Endless(0), "fifo", &mut |t: &[u8]| {
            seen += t.len();
            Ok(true)
        })
        .unwrap_err();
        assert_eq!(e.code(), crate::error::FORMAT);
        assert!(e.message().contains("too large"), "{e}");
        assert!(seen <= limits::KALLSYMS, "{seen}");
        // No newline at all (/dev/zero).
        let mut zero = std::fs::File::open("/dev/zero").unwrap();
        let e = stream_reader(&mut zero, "/dev/zero", &mut |_| Ok(true)).unwrap_err();
        assert!(e.message().contains("line longer than"), "{e}");
    }
}
