//! A list's lines as they are read, one at a time.

use std::io::BufRead;

/// A list's lines as it is read, numbered from 1, each without its `\n`
/// (and a `\r` before it): one line held at a time, not the list (issue
/// 35: a 1M-line manifest read whole held its 174 MB beside the entries
/// made of it).
pub(super) struct Lines<R> {
    reader: R,
    line: Vec<u8>,
    number: u64,
    /// Lines read ahead to find the format, handed out again first.
    again: Vec<(u64, Vec<u8>)>,
    replayed: usize,
    /// What ends a line: a newline, or NUL in a list written with `-z`.
    terminator: u8,
}

impl<R: BufRead> Lines<R> {
    pub(super) fn new(reader: R) -> Self {
        Lines {
            reader,
            line: Vec::new(),
            number: 0,
            again: Vec::new(),
            replayed: 0,
            terminator: b'\n',
        }
    }

    /// The first line that is neither blank nor a comment (`#`), the one
    /// a list's format is told by; `None` if there is none. It and the
    /// lines before it are handed out again by [`Lines::next_line`]: a few
    /// lines kept, never the list.
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
        while let Some((number, line)) = self.read_line()? {
            let entry = line.first().is_some_and(|&b| b != b'#');
            let line = line.to_vec();
            self.again.push((number, line));
            if entry {
                return Ok(self.again.last().map(|(_, line)| line.as_slice()));
            }
        }
        Ok(None)
    }

    /// The next line and its number; `None` at the end; an error if the
    /// list could not be read.
    pub(super) fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, String> {
        if self.replayed < self.again.len() {
            self.replayed += 1;
            let again = self.again.get(self.replayed - 1);
            return Ok(again.map(|(number, line)| (*number, line.as_slice())));
        }
        // Handed out: not held on (a first line may be 300 MB).
        self.again = Vec::new();
        self.replayed = 0;
        self.read_line()
    }

    /// The next line from the reader itself (the lines to hand out again
    /// are not looked at).
    fn read_line(&mut self) -> Result<Option<(u64, &[u8])>, String> {
        // A long line's buffer is let go, not kept for the short ones
        // after it (a line costs a small multiple of itself, once).
        if self.line.capacity() > 1 << 20 {
            self.line = Vec::new();
        }
        self.line.clear();
        let read = self
            .reader
            .read_until(self.terminator, &mut self.line)
            .map_err(|e| crate::Error::os_message(&e))?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        let line = self.line.strip_suffix(&[self.terminator]).unwrap_or(&self.line);
        match self.terminator {
            b'\n' => Ok(Some((self.number, line.strip_suffix(b"\r").unwrap_or(line)))),
            _ => Ok(Some((self.number, line))),
        }
    }
}
