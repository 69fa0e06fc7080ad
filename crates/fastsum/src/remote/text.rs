//! The listing in text: what [`super::RemoteOptions::command`] with `text` makes
//! the host send when the channel between is not clean for bytes (a
//! deploy tool's command runner that reads lines, normalises line ends or
//! runs the command on a terminal). The host writes a header line, its
//! stream as `od -An -v -tx1` prints it, a marker line, then what it said
//! on stderr the same way. Only hex pairs and white space are read: a
//! terminal's CRs, its line wrapping and any other byte change nothing
//! or fail the listing; they never change a record.

use std::io::{BufRead, Read};

/// The first line of a listing in text.
pub(crate) const HEADER: &str = "fastsum-remote-text 1";
/// The line between the stream and what the host said on stderr.
pub(crate) const STDERR: &str = "fastsum-remote-stderr";
/// What is kept of the host's stderr (the rest is read and dropped).
const STDERR_LIMIT: usize = 64 << 10;
/// The longest line read (od prints 48 characters a line).
const LINE_LIMIT: u64 = 4096;

/// The shell text that sends `command`'s output in text: run by `sh`,
/// with `command` a complete command for `sh` to run.
pub(crate) fn wrap(command: &[u8]) -> Vec<u8> {
    let mut s = format!(
        "printf '%s\\n' '{HEADER}'\n\
         e=$(mktemp \"${{TMPDIR:-/tmp}}/fastsum-err.XXXXXX\" 2>/dev/null) || e=/dev/null\n"
    )
    .into_bytes();
    s.extend_from_slice(b"{ ");
    s.extend_from_slice(command);
    s.extend_from_slice(b"\n} 2>\"$e\" </dev/null | od -An -v -tx1\n");
    s.extend_from_slice(
        format!(
            "printf '%s\\n' '{STDERR}'\n\
             if [ \"$e\" != /dev/null ]; then dd if=\"$e\" bs=1024 count={kib} 2>/dev/null | od -An -v -tx1; rm -f \"$e\"; fi\n",
            kib = STDERR_LIMIT >> 10
        )
        .as_bytes(),
    );
    s
}

/// The input a listing is read from: the raw stream as the host sent it,
/// or, when it starts with the text header, the bytes its hex lines
/// stand for. Whatever the host said on stderr (in text only) is kept
/// for messages.
pub(crate) struct Listing<R> {
    input: R,
    text: bool,
    /// Decoded bytes not yet read, from `at`.
    pending: Vec<u8>,
    at: usize,
    /// The stream part ended (the stderr marker, or the end of input).
    ended: bool,
    stderr: Vec<u8>,
}

impl<R: BufRead> Listing<R> {
    /// Looks at the start of `input` to know which form it is.
    pub(crate) fn new(mut input: R) -> std::io::Result<Listing<R>> {
        let head = input.fill_buf()?;
        let text = head.starts_with(HEADER.as_bytes())
            && matches!(head.get(HEADER.len()), Some(b'\n' | b'\r'));
        let mut listing = Listing {
            input,
            text,
            pending: Vec::new(),
            at: 0,
            ended: false,
            stderr: Vec::new(),
        };
        if text {
            listing.line()?;
        }
        Ok(listing)
    }

    /// The next line (without its end), `None` at the end of input.
    fn line(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut line = Vec::new();
        let read = (&mut self.input)
            .take(LINE_LIMIT + 1)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(None);
        }
        if line.len() as u64 > LINE_LIMIT {
            return Err(invalid("a line of more than 4 KiB in a text listing"));
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        Ok(Some(line))
    }

    /// Decodes the next stream line into `pending`; at the marker, reads
    /// the rest as stderr and ends.
    fn refill(&mut self) -> std::io::Result<()> {
        self.pending.clear();
        self.at = 0;
        while self.pending.is_empty() && !self.ended {
            match self.line()? {
                None => self.ended = true,
                Some(line) if line == STDERR.as_bytes() => {
                    self.ended = true;
                    self.read_stderr()?;
                }
                Some(line) => decode_hex(&line, &mut self.pending)?,
            }
        }
        Ok(())
    }

    fn read_stderr(&mut self) -> std::io::Result<()> {
        let mut said = Vec::new();
        while let Some(line) = self.line()? {
            if said.len() < STDERR_LIMIT {
                // What a host says about itself is only shown: a line
                // that is not hex is dropped, never an error.
                let _ = decode_hex(&line, &mut said);
            }
        }
        said.truncate(STDERR_LIMIT);
        self.stderr = said;
        Ok(())
    }

    /// What the host said on stderr: read to the end of input first (a
    /// parser that stopped early leaves the rest unread).
    pub(crate) fn into_stderr(mut self) -> Vec<u8> {
        if self.text {
            while !self.ended {
                if self.refill().is_err() {
                    break;
                }
            }
        }
        self.stderr
    }
}

fn invalid(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string())
}

/// Appends the bytes a line of hex pairs stands for.
fn decode_hex(line: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    for word in line.split(|b| b.is_ascii_whitespace()) {
        match word {
            [] => {}
            [high, low] => {
                let value = |c: u8| (c as char).to_digit(16);
                match (value(*high), value(*low)) {
                    (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => return Err(invalid("a text listing holds something that is not hex")),
                }
            }
            _ => return Err(invalid("a text listing holds something that is not hex")),
        }
    }
    Ok(())
}

impl<R: BufRead> Read for Listing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            if let (Some(to), Some(from)) = (buf.get_mut(..n), available.get(..n)) {
                to.copy_from_slice(from);
            }
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Listing<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if !self.text {
            return self.input.fill_buf();
        }
        if self.at >= self.pending.len() {
            self.refill()?;
        }
        Ok(self.pending.get(self.at..).unwrap_or_default())
    }

    fn consume(&mut self, amount: usize) {
        if self.text {
            self.at = (self.at + amount).min(self.pending.len());
        } else {
            self.input.consume(amount);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn od(bytes: &[u8]) -> String {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("od -An -v -tx1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(bytes)?;
                child.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn text_stands_for_the_bytes_whatever_the_terminal_did() {
        let stream = b"fastsum-remote-method perl\nD00\0a\r\nb\0\0fastsum-remote-end\0";
        // A terminal turns \n into \r\n; a runner may drop the last newline.
        let text =
            format!("{HEADER}\n{}{STDERR}\n{}", od(stream), od(b"find: x\n")).replace('\n', "\r\n");
        let mut listing = Listing::new(text.trim_end().as_bytes()).unwrap();
        let mut got = Vec::new();
        listing.read_to_end(&mut got).unwrap();
        assert_eq!(got, stream);
        assert_eq!(listing.into_stderr(), b"find: x\n");
    }

    #[test]
    fn raw_streams_pass_through_and_junk_is_refused() {
        let raw = b"fastsum-remote-method perl\n";
        let mut got = Vec::new();
        Listing::new(&raw[..])
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        assert_eq!(got, raw);
        for junk in ["66 6x", "666", "66 ; rm", "\u{ff}"] {
            let text = format!("{HEADER}\n{junk}\n");
            let mut got = Vec::new();
            let read = Listing::new(text.as_bytes()).unwrap().read_to_end(&mut got);
            assert!(read.is_err(), "{junk}");
        }
    }

    #[test]
    fn the_wrapper_runs_in_sh_and_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let mut inner = b"printf '".to_vec();
        for b in &all {
            inner.extend_from_slice(format!("\\{b:03o}").as_bytes());
        }
        inner.extend_from_slice(b"'; echo oops >&2");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(crate::fs::name::os_string(wrap(&inner)))
            .output()
            .unwrap();
        let mut listing = Listing::new(&out.stdout[..]).unwrap();
        let mut got = Vec::new();
        listing.read_to_end(&mut got).unwrap();
        assert_eq!(got, all);
        assert_eq!(listing.into_stderr(), b"oops\n");
    }
}
