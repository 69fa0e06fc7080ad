//! Standard output and error as the reference tools use them.
//!
//! Output is batched (one write per 32 KiB, not per line) while results
//! pour in, and written out whenever the run waits ([`Output::flush_held`]),
//! so a line is never later than a line-buffered tool's; a message on
//! stderr first flushes stdout through its last complete line, so that with
//! `2>&1` the two interleave exactly as they do for a line-buffered GNU
//! tool. xxhsum's stdout is fully buffered when not a terminal (C stdio's
//! default), so its messages come before its output; `Buffering::Full`
//! reproduces that.

use std::io::{self, Write};

/// How the reference tool buffers stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffering {
    /// Line buffered (GNU coreutils' `setvbuf(_IOLBF)`, Rust's `LineWriter`).
    Line,
    /// C stdio's default for a pipe or file: flushed in 4 KiB blocks and at exit.
    Full,
}

const BATCH: usize = 32 * 1024;
const STDIO_BLOCK: usize = 4096;

/// The process's stdout and stderr.
pub struct Output {
    pending: Vec<u8>,
    buffering: Buffering,
    error: Option<io::Error>,
    /// Where "stdout" goes instead of the process's (`--update`'s new
    /// manifest).
    file: Option<std::fs::File>,
}

impl Output {
    /// Output buffered as `buffering` says (a terminal is always line buffered).
    pub fn new(buffering: Buffering) -> Self {
        let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
        let buffering = if tty { Buffering::Line } else { buffering };
        Output {
            pending: Vec::with_capacity(BATCH + 4096),
            buffering,
            error: None,
            file: None,
        }
    }

    /// Output whose stdout is `file` (fully buffered; messages still go to
    /// stderr).
    pub fn to_file(file: std::fs::File) -> Self {
        Output {
            pending: Vec::with_capacity(BATCH + 4096),
            buffering: Buffering::Full,
            error: None,
            file: Some(file),
        }
    }

    /// The file given to [`Output::to_file`], everything written to it.
    pub fn into_file(mut self) -> io::Result<Option<std::fs::File>> {
        self.finish()?;
        Ok(self.file.take())
    }

    /// The buffer to append stdout bytes to; call [`Output::commit`] after.
    pub fn stdout_buf(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    /// Writes out what has been appended, once enough has accumulated.
    pub fn commit(&mut self) {
        if self.pending.len() >= BATCH {
            let n = match self.buffering {
                Buffering::Line => self.pending.len(),
                Buffering::Full => self.pending.len() / STDIO_BLOCK * STDIO_BLOCK,
            };
            self.write_stdout(n);
        }
    }

    /// Appends bytes to stdout. A record longer than a batch is written
    /// from where it is, not copied into the batch (a line naming a
    /// 200 MB path would be held twice), in the same blocks.
    pub fn out(&mut self, bytes: &[u8]) {
        if bytes.len() < BATCH {
            self.pending.extend_from_slice(bytes);
            self.commit();
            return;
        }
        // What stdio would write at once: everything (line buffered), or
        // whole blocks counted from the first byte held.
        let whole = match self.buffering {
            Buffering::Line => bytes.len(),
            Buffering::Full => {
                (self.pending.len() + bytes.len()) / STDIO_BLOCK * STDIO_BLOCK - self.pending.len()
            }
        };
        let (now, held) = bytes.split_at(whole);
        let n = self.pending.len();
        self.write_stdout(n);
        self.write_all(now);
        self.pending.extend_from_slice(held);
    }

    fn write_all(&mut self, bytes: &[u8]) {
        if self.error.is_none() && !bytes.is_empty() {
            let written = match &mut self.file {
                Some(file) => file.write_all(bytes),
                None => io::stdout().lock().write_all(bytes),
            };
            if let Err(e) = written {
                self.error = Some(e);
            }
        }
    }

    /// Writes `message` to stderr as is, after flushing what a line-buffered
    /// stdout would already have written.
    pub fn err_raw(&mut self, message: &[u8]) {
        if self.buffering == Buffering::Line {
            if let Some(last_newline) = self.pending.iter().rposition(|&b| b == b'\n') {
                self.write_stdout(last_newline + 1);
            }
        }
        let _ = io::stderr().write_all(message);
    }

    /// Writes the parts of one message to stderr as [`Output::err_raw`]
    /// does, one after another (a message too long to copy into one).
    pub fn err_parts(&mut self, parts: &[&[u8]]) {
        if let Some((first, rest)) = parts.split_first() {
            self.err_raw(first);
            let mut stderr = io::stderr().lock();
            for part in rest {
                let _ = stderr.write_all(part);
            }
        }
    }

    /// A notice (not trouble): written as [`Output::err_raw`] does, unless
    /// `-q` silenced notices.
    pub fn notice(&mut self, message: &[u8]) {
        if !super::quiet() {
            self.err_raw(message);
        }
    }

    /// Writes out everything held, if stdout is line buffered: the caller
    /// is about to wait (for the next file's digest), so what is known
    /// goes to the reader now, as a line-buffered GNU tool's would. Only
    /// whole records are ever appended, so nothing half-written goes out.
    pub fn flush_held(&mut self) {
        if self.buffering == Buffering::Line {
            let n = self.pending.len();
            self.write_stdout(n);
        }
    }

    /// The first write to stdout that failed, if one has.
    pub fn write_error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// Flushes stdout; returns the first write error, if any happened.
    pub fn finish(&mut self) -> io::Result<()> {
        let n = self.pending.len();
        self.write_stdout(n);
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn write_stdout(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        self.write_all(&pending[..n]);
        self.pending = pending;
        self.pending.drain(..n);
    }
}
