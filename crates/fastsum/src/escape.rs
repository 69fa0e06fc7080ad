//! The one escaping rule for a file's name in a report line or a message
//! (issue 51.17): no name may forge a line, move the cursor or recolour a
//! terminal. The bottom of the library's layers, so that the error type's
//! messages and every report line (`manifest::LinePart`) use it.

/// Appends `name` escaped for a report's line (`LinePart::write_line`):
/// `\\` (not on Windows, a separator there), `\n`, `\r`, `\t`, and
/// `\xHH` for each byte of any other control character (C0, DEL, C1 as
/// UTF-8) and for a lone byte 0x80-0x9f (C1 to an 8-bit terminal).
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
                c if c.is_control() => {
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
/// when it holds a control character (bytes that are not UTF-8 are shown
/// as `Path::display` shows them).
pub(crate) fn display_path(path: &std::path::Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    let controls = String::from_utf8_lossy(bytes).chars().any(char::is_control)
        || bytes.iter().any(|b| (0x80..=0x9f).contains(b));
    if !controls {
        return path.display().to_string();
    }
    let mut out = Vec::new();
    write_report_escaped(bytes, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}
