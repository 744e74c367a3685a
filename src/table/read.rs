//! Reading kallsyms while it is parsed.
//!
//! /proc/kallsyms (size unknown) hands out under 4 KiB per `read()` and
//! costs the kernel tens of milliseconds: the calling thread reads while a
//! second thread parses what has arrived ([`super::parse`]'s `Parser`), so
//! parsing ends within a chunk of the last read. A regular file (size
//! known) is read as two halves by two threads with `pread`, then parsed
//! like a buffer.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use super::parse::{expected_lines, parse_buffer, LineFailure, Parsed, Parser, PARALLEL_MIN};
use crate::base::hash::NameIndex;
use crate::error::{Error, Result};
use crate::formats::kallsyms::Format;
use crate::rules::answer;

/// What is reserved when the size is unknown (procfs files report 0). The
/// pages are not touched until read into; a larger file still works (the
/// rest is read after the overlap).
const UNKNOWN_SIZE_RESERVE: usize = 32 << 20;
/// The most text and the longest line read (see `base::read::limits`).
const MAX_TEXT: usize = crate::base::read::limits::KALLSYMS;
const MAX_LINE: usize = crate::base::read::limits::LINE;

fn line_too_long(shown: &str, at: usize) -> Error {
    Error::format(format!(
        "{shown}: a line longer than {} KiB at byte {at}: not a kallsyms file",
        MAX_LINE >> 10
    ))
}
/// Lines of a typical /proc/kallsyms (the index grows past it).
const EXPECTED_PROC_LINES: usize = 128 << 10;
/// A parser wakes for at least this much new text.
const BATCH: usize = 64 << 10;
/// Largest single `read()` of a regular file, so that parsing starts early.
const READ_SLICE: usize = 256 << 10;

/// Reads `path` and parses it at the same time. Returns the text (names
/// NUL-terminated in place, a newline appended if missing) and its columns.
/// Called with each piece of the text once it is parsed (final: names
/// NUL-terminated), its offset in the text, and the text's `base` in the
/// buffer: a snapshot writes the text while the kernel is still printing
/// the rest. Pieces come in order; a piece not given (the file outgrew the
/// reservation) is the caller's to write.
pub(crate) type TextSink<'a> = &'a (dyn Fn(&[u8], usize, usize) + Sync);

pub(crate) fn read_and_parse(path: &Path, sink: Option<TextSink<'_>>) -> Result<(Vec<u8>, Parsed)> {
    let shown = path.display().to_string();
    let t0 = Instant::now();
    let mut f = File::open(path).map_err(|e| Error::io(&e, format!("cannot open {shown}")))?;
    let meta = f
        .metadata()
        .map_err(|e| Error::io(&e, format!("cannot stat {shown}")))?;
    let hint = meta.len() as usize;
    let too_large = || crate::base::read::too_large(path, "a kallsyms file", MAX_TEXT);
    if hint > MAX_TEXT {
        return Err(too_large());
    }
    if meta.is_file() && hint > 0 {
        let (mut buf, base) = read_regular(&mut f, hint)
            .map_err(|e| Error::io(&e, format!("cannot read {shown}")))?;
        if buf.len() - base > MAX_TEXT {
            return Err(too_large()); // it grew while being read
        }
        let read_ns = t0.elapsed().as_nanos() as u64;
        let mut parsed = parse_buffer(&mut buf, base, &shown)?;
        parsed.read_ns = read_ns;
        return Ok((buf, parsed));
    }
    let reserve = if hint > 0 {
        hint + 64
    } else {
        UNKNOWN_SIZE_RESERVE
    };
    // Zeroed by fresh pages, not by a memset; the text starts on a huge-page
    // boundary, so the reader faults a few huge pages instead of 4 KiB ones.
    let (mut buf, base) = crate::base::sys::huge_buffer(reserve);
    let read_err = |e: std::io::Error| Error::io(&e, format!("cannot read {shown}"));

    // Read the first line whole: the format is recognised from it.
    let text = &mut buf[base..];
    let mut filled = read_first_line(&mut f, text, &shown)?;
    let format = Format::detect(&text[..filled]);
    // Room for as many lines as the reservation can hold: address space
    // only, and the vectors never move (a move would stall the reader).
    let mut parser = Parser::new(format, expected_lines(reserve))?;
    // The parser thread waits for the kernel most of the time: it indexes
    // names as they come, leaving nothing but sizes to do after the last read.
    parser.index = Some(NameIndex::incremental(EXPECTED_PROC_LINES));

    // `sent`: bytes handed to the parser; `filled`: bytes read after them.
    let mut sent = 0usize;
    let mut eof = false;
    let mut io_error = None;
    let mut read_ns = 0u64;
    let mut limit_error = None;
    let outcome = std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<(&mut [u8], usize)>(256);
        let parser = &mut parser;
        let text_base = base;
        let worker = s.spawn(move || {
            for (chunk, at) in rx {
                parser.feed(chunk, at)?;
                if let Some(sink) = sink {
                    sink(chunk, at - text_base, text_base);
                }
            }
            Ok::<(), LineFailure>(())
        });
        let mut region: &mut [u8] = &mut buf[base..];
        loop {
            if filled >= BATCH || (eof && filled > 0) {
                let cut = if eof {
                    Some(filled - 1)
                } else {
                    memchr::memrchr(b'\n', &region[..filled])
                };
                if cut.is_none() && filled > MAX_LINE {
                    limit_error = Some(line_too_long(&shown, sent));
                    break;
                }
                if let Some(k) = cut {
                    let (done, rest) = std::mem::take(&mut region).split_at_mut(k + 1);
                    let len = done.len();
                    if tx.send((done, base + sent)).is_err() {
                        break; // the parser stopped on an error
                    }
                    region = rest;
                    sent += len;
                    filled -= len;
                }
            }
            if eof || filled == region.len() {
                break;
            }
            if sent + filled > MAX_TEXT {
                limit_error = Some(too_large());
                break;
            }
            let end = region.len().min(filled + READ_SLICE);
            match f.read(&mut region[filled..end]) {
                Ok(0) => {
                    eof = true;
                    // A last line without its newline gets one.
                    if filled > 0 && region[filled - 1] != b'\n' {
                        if filled < region.len() {
                            region[filled] = b'\n';
                            filled += 1;
                        } else {
                            eof = false; // no room: finished below, after the overlap
                            break;
                        }
                    }
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    io_error = Some(e);
                    break;
                }
            }
        }
        read_ns = t0.elapsed().as_nanos() as u64;
        drop(tx);
        worker.join()
    });
    // The parser's failure first: a read error or the limit may follow it.
    parser_outcome(outcome, &buf[base..base + sent], &shown)?;
    if let Some(e) = io_error {
        return Err(read_err(e));
    }
    if let Some(e) = limit_error {
        return Err(e);
    }
    if !eof {
        // The file outgrew the reservation: read the rest (up to the
        // limit), then parse it.
        buf.truncate(base + sent + filled);
        let room = (MAX_TEXT + 1).saturating_sub(sent + filled) as u64;
        (&mut f)
            .take(room)
            .read_to_end(&mut buf)
            .map_err(read_err)?;
        if buf.len() - base > MAX_TEXT {
            return Err(too_large());
        }
        read_ns = t0.elapsed().as_nanos() as u64;
        sent = parse_rest(&mut parser, &mut buf, base, sent, &shown)?;
    }
    buf.truncate(base + sent);
    if parser.lines == 0 {
        return Err(answer::empty(&shown));
    }
    Ok((buf, parser.finish(base, sent, read_ns)))
}

/// What the parser thread's end says: its failure on the `parsed` text
/// (blank text is an empty file), or its panic.
fn parser_outcome(
    outcome: std::thread::Result<std::result::Result<(), LineFailure>>,
    parsed: &[u8],
    shown: &str,
) -> Result<()> {
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) if parsed.iter().all(|b| b.is_ascii_whitespace()) => Err(answer::empty(shown)),
        Ok(Err(fail)) => Err(fail.into_error(shown)),
        Err(_) => Err(Error::new(
            crate::error::INTERNAL,
            "the parser thread panicked",
        )),
    }
}

/// Reads into `text` until it holds the first line whole (or the file
/// ends, or `text` is full); returns how many bytes it read.
fn read_first_line(f: &mut File, text: &mut [u8], shown: &str) -> Result<usize> {
    let mut filled = 0usize;
    while memchr::memchr(b'\n', &text[..filled]).is_none() && filled < text.len() {
        if filled > MAX_LINE {
            return Err(line_too_long(shown, 0));
        }
        let end = text.len().min(filled + READ_SLICE);
        match f.read(&mut text[filled..end]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(&e, format!("cannot read {shown}"))),
        }
    }
    Ok(filled)
}

/// Parses what follows the `sent` bytes of `buf[base..]` that the parser
/// has seen (a last line gets its newline); returns the bytes parsed in
/// all.
fn parse_rest(
    parser: &mut Parser,
    buf: &mut Vec<u8>,
    base: usize,
    sent: usize,
    shown: &str,
) -> Result<usize> {
    if buf.last() != Some(&b'\n') {
        buf.push(b'\n');
    }
    let len = buf.len();
    parser
        .feed(&mut buf[base + sent..len], base + sent)
        .map_err(|f| f.into_error(shown))?;
    Ok(len - base)
}

/// Reads a regular file of `size` bytes into `buf[base..]`: two halves by
/// two threads with `pread` when it is large (the copy out of the page cache
/// and the page faults are the cost), a plain read otherwise or when the
/// size changed under us. Returns the buffer and `base`.
fn read_regular(f: &mut File, size: usize) -> std::io::Result<(Vec<u8>, usize)> {
    if size < PARALLEL_MIN {
        let mut buf = Vec::new();
        buf.try_reserve_exact(size + 1)
            .map_err(|_| std::io::Error::from(ErrorKind::OutOfMemory))?;
        f.read_to_end(&mut buf)?;
        return Ok((buf, 0));
    }
    // One spare byte for a final newline.
    let (mut buf, base) = crate::base::sys::huge_buffer(size + 1);
    buf.truncate(base + size);
    let mid = size / 2;
    let (a, b) = buf[base..].split_at_mut(mid);
    let file = &*f;
    let (ra, rb) = std::thread::scope(|s| {
        let hb = s.spawn(|| file.read_exact_at(b, mid as u64));
        (file.read_exact_at(a, 0), hb.join())
    });
    let mut probe = [0u8; 1];
    let complete = ra.is_ok()
        && matches!(rb, Ok(Ok(())))
        && matches!(file.read_at(&mut probe, size as u64), Ok(0));
    if !complete {
        // Shorter or longer than its size said (or a thread failed): start over.
        buf.truncate(base);
        let mut f2 = file;
        std::io::Seek::seek(&mut f2, std::io::SeekFrom::Start(0))?;
        f2.read_to_end(&mut buf)?;
    }
    Ok((buf, base))
}
