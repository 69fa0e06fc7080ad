//! Every escaping of a file's name, in one place, two rules:
//!
//! * a report line's or a message's ([`write_report_escaped`]): no name
//!   may forge a line, move the cursor or recolour a terminal;
//! * a checksum line's, as coreutils and b3sum write it
//!   ([`write_escaped`], read back by [`unescape`]): `\\`, `\n`, `\r`
//!   only, byte for byte as the original tools.
//!
//! The bottom of the library's layers, so that the error type's messages,
//! the formats (`manifest::gnu`) and every report line
//! (`output::LinePart`) use it.

/// Whether `c` may not reach a report line raw: a control character (C0,
/// DEL, C1), or one that makes a name display as another or breaks its
/// line without being a control: the bidirectional formatting characters
/// (U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates,
/// U+200E/U+200F/U+061C marks: `a\u{202E}txt.exe` shows as `aexe.txt`) and
/// the line and paragraph separators (U+2028, U+2029). The one rule of
/// what a report, a message and a JSON string escape.
pub(crate) fn unsafe_in_report(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Appends `name` escaped for a report's line (`output::LinePart`):
/// `\\` (not on Windows, a separator there), `\n`, `\r`, `\t`, and
/// `\xHH` for each byte of any other character [`unsafe_in_report`] names
/// (C0, DEL, C1 as UTF-8, bidirectional formatting, line and paragraph
/// separators) and for a lone byte 0x80-0x9f (C1 to an 8-bit terminal).
pub(crate) fn write_report_escaped(name: &[u8], out: &mut Vec<u8>) {
    let hex = |out: &mut Vec<u8>, b: u8| out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
    let mut rest = name;
    while !rest.is_empty() {
        let (good, bad) = match std::str::from_utf8(rest) {
            Ok(text) => (text, &[][..]),
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                let text = std::str::from_utf8(good).unwrap_or_default();
                (text, bad)
            }
        };
        for c in good.chars() {
            match c {
                '\\' if !cfg!(windows) => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                c if unsafe_in_report(c) => {
                    for &b in c.encode_utf8(&mut [0; 4]).as_bytes() {
                        hex(out, b);
                    }
                }
                c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        // One invalid byte at a time: a C1 byte is escaped, any other
        // (a Latin-1 name) is left as it is.
        if let Some((&b, after)) = bad.split_first() {
            match b {
                0x80..=0x9f => hex(out, b),
                _ => out.push(b),
            }
            rest = after;
        } else {
            rest = bad;
        }
    }
}

/// `path` for a message: as it is, or escaped by [`write_report_escaped`]
/// when it holds a character [`unsafe_in_report`] names (bytes that are
/// not UTF-8 are shown as `Path::display` shows them).
pub(crate) fn display_path(path: &std::path::Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    let controls = String::from_utf8_lossy(bytes).chars().any(unsafe_in_report)
        || bytes.iter().any(|b| (0x80..=0x9f).contains(b));
    if !controls {
        return path.display().to_string();
    }
    let mut out = Vec::new();
    write_report_escaped(bytes, &mut out);
    String::from_utf8_lossy(&out).into_owned()
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
pub(crate) fn unescape(name: &[u8]) -> Option<std::borrow::Cow<'_, [u8]>> {
    if !name.iter().any(|&b| b == b'\\' || b == 0) {
        return Some(std::borrow::Cow::Borrowed(name));
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
    Some(std::borrow::Cow::Owned(out))
}

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
    fn bidi_and_separators_are_escaped_like_controls() {
        for (name, want) in [
            ("e\u{202E}f", "e\\xe2\\x80\\xaef"),
            ("g\u{2028}h", "g\\xe2\\x80\\xa8h"),
            ("i\u{2029}j", "i\\xe2\\x80\\xa9j"),
            ("k\u{2067}l", "k\\xe2\\x81\\xa7l"),
            ("m\u{200F}n", "m\\xe2\\x80\\x8fn"),
            ("o\u{061C}p", "o\\xd8\\x9cp"),
        ] {
            let mut out = Vec::new();
            write_report_escaped(name.as_bytes(), &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), want, "{name:?}");
            assert_eq!(display_path(std::path::Path::new(name)), want);
        }
        // Joiners (emoji sequences, Indic scripts) and other letters stay.
        for name in ["\u{1F468}\u{200D}\u{1F469}", "caf\u{e9}", "\u{5d0}\u{5d1}"] {
            let mut out = Vec::new();
            write_report_escaped(name.as_bytes(), &mut out);
            assert_eq!(out, name.as_bytes());
        }
    }

    #[test]
    fn bad_escapes_are_rejected() {
        for bad in [&b"a\\"[..], b"a\\t", b"a\0b"] {
            assert!(unescape(bad).is_none(), "{bad:?}");
        }
    }
}
