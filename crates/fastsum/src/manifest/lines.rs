//! A list's lines as they are read, one at a time, and the one rule of
//! reading a line of outside input ([`read_line`]).

use std::io::{self, BufRead};

/// Reads one line of outside input into `line` (cleared first), up to and
/// including `terminator`; returns the bytes read, 0 at the end.
///
/// The rule for every line fastsum reads from a list: its buffer grows
/// with `try_reserve`, so a line too long to hold is an error
/// ([`io::ErrorKind::OutOfMemory`], saying the length reached), never an
/// abort; and a long line's buffer is let go of its slack once read (a
/// line costs itself, not the power of two above it).
pub fn read_line(reader: &mut impl BufRead, terminator: u8, line: &mut Vec<u8>) -> io::Result<usize> {
    line.clear();
    loop {
        let (take, done) = {
            let available = match reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break;
            }
            match memchr::memchr(terminator, available) {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            }
        };
        line.try_reserve(take).map_err(|_| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("a line of over {} bytes is {TOO_MUCH}", line.len()),
            )
        })?;
        let available = reader.fill_buf()?;
        line.extend_from_slice(available.get(..take).unwrap_or(available));
        reader.consume(take);
        if done {
            break;
        }
    }
    if line.capacity() > LONG_LINE && line.capacity() - line.len() > line.len() / 8 {
        line.shrink_to_fit();
    }
    Ok(line.len())
}

/// A listed name, copied to be owned: a copy that memory cannot hold is
/// an error (the list is refused), never an abort.
pub(super) fn held(name: &[u8]) -> Result<Vec<u8>, String> {
    let mut owned = Vec::new();
    owned
        .try_reserve_exact(name.len())
        .map_err(|_| format!("a name of {} bytes is {TOO_MUCH}", name.len()))?;
    owned.extend_from_slice(name);
    Ok(owned)
}

/// How an error says memory could not hold what was read.
pub(super) const TOO_MUCH: &str = "more than memory holds";

/// Whether `why` is [`held`]'s error: a line that memory could not hold is
/// no improperly formatted line to pass over with a warning (a failing
/// check became exit 0 under a memory limit), but an entry refused.
pub(super) fn out_of_memory(why: &str) -> bool {
    why.ends_with(TOO_MUCH)
}

/// A line buffer above this is let go once its line is used, not kept for
/// the short lines after it.
const LONG_LINE: usize = 1 << 20;

/// A list's lines as it is read, numbered from 1, each without its `\n`
/// (and a `\r` before it): one line held at a time, not the list
/// (a 1M-line manifest read whole held its 174 MB beside the entries
/// made of it).
pub(super) struct Lines<R> {
    reader: R,
    line: Vec<u8>,
    number: u64,
    /// The line read to find the format ([`Lines::first_entry`]), to be
    /// handed out again by the next [`Lines::next_line`]: kept where it
    /// was read, never copied (a first line may be 300 MB).
    again: bool,
    /// What ends a line: a newline, or NUL in a list written with `-z`.
    terminator: u8,
}

impl<R: BufRead> Lines<R> {
    pub(super) fn new(reader: R) -> Self {
        Lines {
            reader,
            line: Vec::new(),
            number: 0,
            again: false,
            terminator: b'\n',
        }
    }

    /// The first line that is neither blank nor a comment (`#`), the one
    /// a list's format is told by; `None` if there is none. It is handed
    /// out again by [`Lines::next_line`]; the blank and comment lines
    /// before it are not (every reader skips them), so none is held: a
    /// list of a billion empty lines costs one line's buffer.
    pub(super) fn first_entry(&mut self) -> Result<Option<&[u8]>, String> {
        // A NUL in the list's first block: records written with -z (a
        // checksum line is a C string, with no NUL in it; a -z record's
        // name may hold newlines).
        let head = self
            .reader
            .fill_buf()
            .map_err(|e| crate::Error::os_message(&e))?;
        if head.contains(&0) {
            self.terminator = 0;
        }
        loop {
            match self.read_line()? {
                None => return Ok(None),
                Some((_, line)) if line.first().is_some_and(|&b| b != b'#') => break,
                Some(_) => {}
            }
        }
        self.again = true;
        Ok(Some(self.current()))
    }

    /// The next line and its number; `None` at the end; an error if the
    /// list could not be read.
    pub(super) fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, String> {
        if std::mem::take(&mut self.again) {
            return Ok(Some((self.number, self.current())));
        }
        self.read_line()
    }

    /// Lets go of a long line's buffer once what was made of it is owned
    /// elsewhere: the line is not held beside the entry made of it while
    /// that entry is stored (a 300 MB path would be held three times).
    pub(super) fn let_go(&mut self) {
        if self.line.capacity() > LONG_LINE && !self.again {
            self.line = Vec::new();
        }
    }

    /// The line last read, without its end.
    fn current(&self) -> &[u8] {
        let line = self.line.strip_suffix(&[self.terminator]).unwrap_or(&self.line);
        match self.terminator {
            b'\n' => line.strip_suffix(b"\r").unwrap_or(line),
            _ => line,
        }
    }

    /// The next line from the reader itself (the lines to hand out again
    /// are not looked at).
    fn read_line(&mut self) -> Result<Option<(u64, &[u8])>, String> {
        // A long line's buffer is let go, not kept for the short ones
        // after it (a line costs a small multiple of itself, once).
        if self.line.capacity() > LONG_LINE {
            self.line = Vec::new();
        }
        let read = read_line(&mut self.reader, self.terminator, &mut self.line)
            .map_err(|e| crate::Error::os_message(&e))?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        Ok(Some((self.number, self.current())))
    }
}
