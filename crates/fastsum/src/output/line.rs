//! A line of text and file names ([`LinePart`]), the names escaped by
//! `crate::escape`'s rules: the one writer of every report line (`diff`,
//! `scrub`, `audit`, `dupes`, `--update`'s changes) and of `-c`'s verdict
//! lines.

use crate::escape::{needs_escape, write_escaped, write_report_escaped};

/// A piece of a line [`LinePart::write_line`] writes.
#[derive(Clone, Copy, Debug)]
pub enum LinePart<'a> {
    /// Written as it is.
    Text(&'a [u8]),
    /// A file's name, escaped where the line is.
    Name(&'a [u8]),
}

impl LinePart<'_> {
    /// Appends `parts` and a newline to `out`, the names escaped: when any
    /// name needs it, the line starts with `\` and every name is escaped.
    /// Without `report` (a checksum line, as GNU's, b3sum's and fastsum's
    /// lists write it, byte for byte) a backslash, a newline and a CR are
    /// written `\\`, `\n`, `\r`. With `report` (a report's line: `diff`,
    /// `scrub`, `audit`, `dupes`, `--update`'s changes, read by people on
    /// terminals and by scripts), a tab is `\t` too (the fields are
    /// tab-separated) and every other control character (C0, DEL, C1, and a
    /// lone byte 0x80-0x9f) is `\xHH`, so no name can forge a line, move
    /// the cursor or recolour a terminal. The one rule for
    /// every line that names a file.
    pub fn write_line(out: &mut Vec<u8>, parts: &[LinePart<'_>], report: bool) {
        let mut escaped = Vec::new();
        let escape = parts.iter().any(|part| match part {
            // Plain ASCII with no control byte and no backslash: as it is,
            // without the escaping pass.
            LinePart::Name(name)
                if report
                    && name
                        .iter()
                        .all(|&b| (0x20..0x7f).contains(&b) && b != b'\\') =>
            {
                false
            }
            LinePart::Name(name) if report => {
                escaped.clear();
                write_report_escaped(name, &mut escaped);
                escaped != *name
            }
            LinePart::Name(name) => needs_escape(name),
            LinePart::Text(_) => false,
        });
        if escape {
            out.push(b'\\');
        }
        for part in parts {
            match *part {
                LinePart::Name(name) if escape && report => write_report_escaped(name, out),
                LinePart::Name(name) if escape => write_escaped(name, out),
                LinePart::Name(bytes) | LinePart::Text(bytes) => out.extend_from_slice(bytes),
            }
        }
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    #[cfg(unix)]
    fn a_report_line_escapes_every_control_character() {
        let line = |name: &[u8]| {
            let mut out = Vec::new();
            let parts = [LinePart::Text(b"A\t"), LinePart::Name(name)];
            LinePart::write_line(&mut out, &parts, true);
            out
        };
        // A name that forges a line, moves the cursor, recolours.
        assert_eq!(
            line(b"evil\nmissing\tpasswd"),
            b"\\A\tevil\\nmissing\\tpasswd\n"
        );
        assert_eq!(line(b"a\x1b[2Jb"), b"\\A\ta\\x1b[2Jb\n");
        assert_eq!(line(b"\x07\x7f\x00"), b"\\A\t\\x07\\x7f\\x00\n");
        // C1 as UTF-8 (U+009B, CSI), and as a lone byte.
        assert_eq!(line("x\u{9b}y".as_bytes()), b"\\A\tx\\xc2\\x9by\n");
        assert_eq!(line(b"x\x9by"), b"\\A\tx\\x9by\n");
        // Printable text, UTF-8 and a Latin-1 byte stay as they are.
        assert_eq!(
            line("caf\u{e9} \u{4e2d}".as_bytes()),
            "A\tcaf\u{e9} \u{4e2d}\n".as_bytes()
        );
        assert_eq!(line(b"caf\xe9"), b"A\tcaf\xe9\n");
        // Every byte: the escaped line holds no control byte but its end.
        for b in 0..=255u8 {
            let out = line(&[b'a', b, b'z']);
            let body = &out[..out.len() - 1];
            let controls = body
                .iter()
                .filter(|&&c| c < 0x20 && c != b'\t' || c == 0x7f)
                .count();
            assert_eq!(controls, 0, "byte {b:#x}: {out:?}");
            assert!(
                !body.iter().any(|c| (0x80..=0x9f).contains(c)),
                "byte {b:#x}: {out:?}"
            );
        }
    }
}
