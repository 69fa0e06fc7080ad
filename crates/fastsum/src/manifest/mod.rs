//! Checksum manifests: the line formats that md5sum, sha*sum, b2sum, b3sum
//! and xxhsum write and read back with `-c`.
//!
//! * [`gnu`]: coreutils' `HEX  NAME` / `HEX *NAME` lines and BSD-tagged
//!   `MD5 (NAME) = HEX` lines, with GNU's name escaping.
//! * [`xxhsum`]: xxhsum 0.8.1's reading of the same shapes.
//! * [`b3sum`]: b3sum's stricter reading.
//! * [`hashdeep`]: hashdeep's `%%%% HASHDEEP-1.0` lists (size, several
//!   digests, name), read and written.
//! * `json`: fastsum's JSON Lines output for programs (written through
//!   the renderer), and `json_read`, reading it back.
//! * [`render`]: the one renderer of hashing results (lines, JSON,
//!   messages), for the CLI and the Python package alike.
//! * [`quote`]: names in messages, quoted as coreutils quotes them.
//! * [`read`]: any of them read, a line at a time, into path → digest
//!   entries, for
//!   `fastsum diff`, and [`check`]: such a manifest checked on every core.
//!
//! Each parser is a literal port of the reference tool's rules, because a
//! drop-in must accept and reject exactly the lines the original does.

parsers! {
    pub mod b3sum;
    pub mod gnu;
    pub mod hashdeep;
    pub(crate) mod json_read;
    mod lines;
    pub mod read;
    pub mod xxhsum;
}
#[cfg(feature = "tree")]
pub mod check;
#[cfg(feature = "tree")]
pub(crate) mod json;
pub mod quote;
#[cfg(feature = "tree")]
pub mod render;

use std::borrow::Cow;

/// A piece of a line [`LinePart::write_line`] writes.
#[derive(Clone, Copy, Debug)]
pub enum LinePart<'a> {
    /// Written as it is.
    Text(&'a [u8]),
    /// A file's name, escaped where the line is.
    Name(&'a [u8]),
}

impl LinePart<'_> {
    /// Appends `parts` and a newline to `out`, the names escaped as GNU's,
    /// b3sum's and fastsum's lines escape them: when any name holds a
    /// backslash, a newline or a CR (with `tabs`, a tab too: the line's fields
    /// are tab-separated), the line starts with `\` and in every name those
    /// bytes are written `\\`, `\n`, `\r` (`\t`). The one rule for the lines
    /// of `-c`, `diff`, `scrub` and `dupes`.
    pub fn write_line(out: &mut Vec<u8>, parts: &[LinePart<'_>], tabs: bool) {
        let escapes = |name: &[u8]| needs_escape(name) || (tabs && name.contains(&b'\t'));
        let escape = parts
            .iter()
            .any(|part| matches!(part, LinePart::Name(name) if escapes(name)));
        if escape {
            out.push(b'\\');
        }
        for part in parts {
            match *part {
                LinePart::Name(name) if escape => {
                    for &b in name {
                        match b {
                            b'\t' if tabs => out.extend_from_slice(b"\\t"),
                            _ => write_escaped(&[b], out),
                        }
                    }
                }
                LinePart::Name(bytes) | LinePart::Text(bytes) => out.extend_from_slice(bytes),
            }
        }
        out.push(b'\n');
    }
}

/// True if GNU and b3sum escape this name when printing it: it holds a
/// backslash, a newline or a carriage return. On Windows a backslash
/// separates path components (no name holds one), so it is left alone.
pub(crate) fn needs_escape(name: &[u8]) -> bool {
    name.iter()
        .any(|&b| matches!(b, b'\n' | b'\r') || (b == b'\\' && !cfg!(windows)))
}

/// Appends `name` to `out` with `\` → `\\` (not on Windows, see
/// [`needs_escape`]), newline → `\n`, CR → `\r`.
pub(crate) fn write_escaped(name: &[u8], out: &mut Vec<u8>) {
    for &b in name {
        match b {
            b'\\' if !cfg!(windows) => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

/// Reverses [`write_escaped`]. `None` if the name ends in a lone backslash,
/// has a backslash before anything but `\`, `n` or `r`, or holds a NUL
/// (coreutils' `filename_unescape`).
pub(crate) fn unescape(name: &[u8]) -> Option<Cow<'_, [u8]>> {
    if !name.iter().any(|&b| b == b'\\' || b == 0) {
        return Some(Cow::Borrowed(name));
    }
    let mut out = Vec::with_capacity(name.len());
    let mut bytes = name.iter();
    while let Some(&b) = bytes.next() {
        match b {
            b'\\' => match bytes.next()? {
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b'\\' => out.push(b'\\'),
                _ => return None,
            },
            0 => return None,
            _ => out.push(b),
        }
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips() {
        let name = b"a\\b\nc\rd e";
        assert!(needs_escape(name));
        let mut out = Vec::new();
        write_escaped(name, &mut out);
        assert_eq!(out, b"a\\\\b\\nc\\rd e");
        assert_eq!(unescape(&out).unwrap().as_ref(), name);
    }

    #[test]
    #[cfg(unix)]
    fn a_line_of_names_is_escaped_whole_or_not_at_all() {
        let line = |parts: &[LinePart<'_>], tabs| {
            let mut out = Vec::new();
            LinePart::write_line(&mut out, parts, tabs);
            out
        };
        let (tab, t) = (LinePart::Text(b"\t"), LinePart::Text(b"M"));
        // No name needs it: as they are, the text never escaped.
        assert_eq!(line(&[t, tab, LinePart::Name(b"a b")], true), b"M\ta b\n");
        // One name does: the line starts with `\`, every name escaped.
        let parts = [
            t,
            tab,
            LinePart::Name(b"x\ty"),
            tab,
            LinePart::Name(b"p\\q"),
        ];
        assert_eq!(line(&parts, true), b"\\M\tx\\ty\tp\\\\q\n");
        // Without tabs a tab is an ordinary byte (GNU's `-c` lines)...
        let parts = [LinePart::Name(b"x\ty"), LinePart::Text(b": OK")];
        assert_eq!(line(&parts, false), b"x\ty: OK\n");
        // ...and a newline or CR still escapes the line.
        let parts = [LinePart::Name(b"x\ny\r"), LinePart::Text(b": OK")];
        assert_eq!(line(&parts, false), b"\\x\\ny\\r: OK\n");
    }

    #[test]
    fn bad_escapes_are_rejected() {
        for bad in [&b"a\\"[..], b"a\\t", b"a\0b"] {
            assert!(unescape(bad).is_none(), "{bad:?}");
        }
    }
}
