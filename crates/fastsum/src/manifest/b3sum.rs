//! b3sum 1.8's checksum lines: `HEX  NAME` or `BLAKE3 (NAME) = HEX`, lower
//! case hex only, a leading backslash meaning an escaped name. b3sum
//! rejects names it could confuse with others: any NUL or U+FFFD.

use crate::digest::Digest;

/// One parsed b3sum line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct B3Line {
    /// The name as written in the file (still escaped), for messages.
    pub written_name: String,
    /// Whether the line started with a backslash.
    pub escaped: bool,
    /// The file name, unescaped.
    pub path: String,
    /// The expected BLAKE3 digest.
    pub expected: Digest,
}

impl B3Line {
    /// Parses one line (its trailing `\r`/`\n` are trimmed here). On
    /// failure returns b3sum's own message for it.
    pub fn parse(line: &str) -> Result<B3Line, &'static str> {
        parse_line(line)
    }
}

/// [`B3Line::parse`].
pub(crate) fn parse_line(line: &str) -> Result<B3Line, &'static str> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.is_empty() {
        return Err("Empty line");
    }
    let (escaped, rest) = match line.strip_prefix('\\') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (hex, name) = if let Some((hex, name)) = rest.split_once("  ") {
        (hex, name)
    } else if let Some((name, hex)) = rest
        .strip_prefix("BLAKE3 (")
        .and_then(|r| r.rsplit_once(") = "))
    {
        (hex, name)
    } else {
        return Err("Invalid check line format");
    };
    if hex.len() != 64 {
        return Err("Invalid hash length");
    }
    let mut bytes = [0u8; 32];
    let hex_bytes = hex.as_bytes();
    for (byte, pair) in bytes.iter_mut().zip(hex_bytes.chunks_exact(2)) {
        let [high, low] = pair else {
            return Err("Invalid hash length");
        };
        *byte = lower_hex(*high)? << 4 | lower_hex(*low)?;
    }
    let path = if escaped {
        unescape(name)?
    } else {
        name.to_string()
    };
    if path.is_empty() {
        return Err("empty file path");
    }
    if path.contains('\0') {
        return Err("Null character in path");
    }
    if path.contains('\u{FFFD}') {
        return Err("Unicode replacement character in path");
    }
    Ok(B3Line {
        written_name: name.to_string(),
        escaped,
        path,
        expected: Digest::from_bytes(&bytes),
    })
}

fn lower_hex(c: u8) -> Result<u8, &'static str> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        _ => Err("Invalid hex"),
    }
}

fn unescape(name: &str) -> Result<String, &'static str> {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('\\') => out.push('\\'),
                _ => return Err("Invalid backslash escape"),
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    const H: &str = "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85";

    #[test]
    fn reads_both_forms() {
        assert_eq!(parse_line(&format!("{H}  a  b\n")).unwrap().path, "a  b");
        assert_eq!(
            parse_line(&format!("BLAKE3 (x) = y) = {H}")).unwrap().path,
            "x) = y"
        );
        assert_eq!(parse_line(&format!("\\{H}  a\\nb")).unwrap().path, "a\nb");
    }

    #[test]
    fn rejects_what_b3sum_rejects() {
        assert_eq!(
            parse_line(&format!("{}  a", H.to_uppercase())),
            Err("Invalid hex")
        );
        assert_eq!(
            parse_line(&format!("{}  a", &H[2..])),
            Err("Invalid hash length")
        );
        assert_eq!(
            parse_line(&format!("\\{H}  a\\t")),
            Err("Invalid backslash escape")
        );
        assert_eq!(parse_line(&format!("{H}  ")), Err("empty file path"));
        assert_eq!(parse_line("nonsense"), Err("Invalid check line format"));
        assert_eq!(parse_line("\n"), Err("Empty line"));
    }
}
