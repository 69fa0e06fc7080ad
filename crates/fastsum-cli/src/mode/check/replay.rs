//! The lines `-c` reads ahead of the run (to tell a list's format, to
//! probe an untagged list's algorithm), handed back to the run's reader
//! as they were, each byte held once and let go once read.

use std::io::{self, Read};

/// A reader that gives `blank` empty lines, then `held`, then `rest`.
/// What it gave is not kept: `held` is let go the moment its last byte is
/// read (a 200 MB first line is held once, not for the whole run).
pub(in crate::mode) struct Replay<R> {
    /// Lines read ahead that every reader skips (blank, `#` comments),
    /// given back as empty lines: counted, never held (a list of a
    /// billion empty lines costs nothing to read ahead), so the line
    /// numbers after them stay the same.
    blank: u64,
    terminator: u8,
    held: Vec<u8>,
    at: usize,
    rest: R,
}

impl<R: Read> Replay<R> {
    pub(in crate::mode) fn new(blank: u64, terminator: u8, held: Vec<u8>, rest: R) -> Replay<R> {
        Replay {
            blank,
            terminator,
            held,
            at: 0,
            rest,
        }
    }
}

impl<R: Read> Read for Replay<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if buffer.is_empty() {
            return Ok(0);
        }
        if self.blank > 0 {
            let n = buffer
                .len()
                .min(usize::try_from(self.blank).unwrap_or(usize::MAX));
            buffer[..n].fill(self.terminator);
            self.blank -= n as u64;
            return Ok(n);
        }
        if self.at < self.held.len() {
            let left = &self.held[self.at..];
            let n = left.len().min(buffer.len());
            buffer[..n].copy_from_slice(&left[..n]);
            self.at += n;
            if self.at == self.held.len() {
                self.held = Vec::new();
                self.at = 0;
            }
            return Ok(n);
        }
        self.rest.read(buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_the_blank_lines_then_the_held_bytes_then_the_rest_and_lets_go() {
        let mut r = Replay::new(3, b'\n', b"ab\n".to_vec(), &b"cd\n"[..]);
        let mut got = Vec::new();
        let mut small = [0u8; 2];
        loop {
            let n = r.read(&mut small).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&small[..n]);
            if got.len() >= 6 {
                assert_eq!(r.held.capacity(), 0, "held once read");
            }
        }
        assert_eq!(got, b"\n\n\nab\ncd\n");
    }
}
