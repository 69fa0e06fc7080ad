//! File names in messages, quoted as GNU coreutils quotes them (the
//! CLI's messages, and the Dask runner's, which must be the CLI's).
//!
//! coreutils prints names in error messages through gnulib's `quotef`
//! (shell-escape style, quoting only when needed, ':' counted as special)
//! and a few values through `quote` (locale quotes). This is a port of the
//! relevant paths of gnulib's `quotearg_buffer_restyled`.

/// How names and values are quoted in messages: coreutils' quoting for
/// the locale's character set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quoting {
    /// The character set is UTF-8: [`Quoting::quote`] uses ‘’, and
    /// [`Quoting::quotef`] leaves printable multi-byte characters as they
    /// are.
    pub utf8: bool,
}

impl Quoting {
    /// The quoting of the process's locale (UTF-8 when `LC_ALL`,
    /// `LC_CTYPE` or `LANG`, as `setlocale(LC_ALL, "")` resolves them,
    /// names a UTF-8 character set).
    pub fn from_locale() -> Quoting {
        Quoting {
            utf8: utf8_locale(),
        }
    }

    /// gnulib `quotef`: `name` as is when the shell would read it back
    /// unchanged, otherwise in single quotes with `$'\n'`-style escapes.
    pub fn quotef(self, name: &[u8]) -> Vec<u8> {
        quotef(name, self.utf8)
    }

    /// gnulib `quote`: ‘value’ in a UTF-8 locale, 'value' otherwise.
    pub fn quote(self, value: &[u8]) -> Vec<u8> {
        quote(value, self.utf8)
    }
}

/// True when the locale's character set is UTF-8.
fn utf8_locale() -> bool {
    let value = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    value.contains("utf-8") || value.contains("utf8")
}

/// [`Quoting::quotef`].
fn quotef(name: &[u8], utf8: bool) -> Vec<u8> {
    // The characters are walked again for each question rather than held:
    // a name of N bytes costs its quoted copy, not 16 N (a 100 MB name in a
    // check list cost 1.9 GB). The copy's size is counted first and its
    // room reserved fallibly: a name read from a list that memory can hold
    // once but not twice is said by its size, not an abort.
    let chars = || Chars { name, utf8, at: 0 };
    let write = |out: &mut dyn Sink| {
        if !needs_quoting(name, chars()) {
            out.put(name);
        } else if name.contains(&b'\'')
            && chars()
                .enumerate()
                .all(|(i, c)| c_and_shell_compatible(&c, i, name.len()))
        {
            c_quote(chars(), out);
        } else {
            shell_escape_always(chars(), out);
        }
    };
    let mut size = Count(0);
    write(&mut size);
    let mut out = Vec::new();
    if out.try_reserve_exact(size.0).is_err() {
        return format!(
            "(a name of {} bytes, more than memory holds to quote)",
            name.len()
        )
        .into_bytes();
    }
    write(&mut out);
    out
}

/// Where quoted bytes go: counted, then written into room made for them.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

/// Counts what would be written.
struct Count(usize);

impl Sink for Count {
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// [`Quoting::quote`]: gnulib's `locale_quoting_style`, the locale's
/// quote marks with C escapes inside: a control character as `\n`, `\t`
/// ... or `\ooo`, a byte the locale cannot print in octal (every byte
/// past ASCII in the C locale), a backslash and the closing mark escaped.
fn quote(value: &[u8], utf8: bool) -> Vec<u8> {
    let (l, r): (&[u8], &[u8]) = if utf8 {
        ("‘".as_bytes(), "’".as_bytes())
    } else {
        (b"'", b"'")
    };
    let mut out = l.to_vec();
    for c in (Chars {
        name: value,
        utf8,
        at: 0,
    }) {
        match c {
            Char::Printable(b"\\") => out.extend_from_slice(b"\\\\"),
            Char::Printable(bytes) if bytes == r => {
                out.push(b'\\');
                out.extend_from_slice(bytes);
            }
            Char::Printable(bytes) => out.extend_from_slice(bytes),
            Char::Unprintable(b) => {
                out.push(b'\\');
                match b {
                    0x07 => out.push(b'a'),
                    0x08 => out.push(b'b'),
                    0x0c => out.push(b'f'),
                    b'\n' => out.push(b'n'),
                    b'\r' => out.push(b'r'),
                    b'\t' => out.push(b't'),
                    0x0b => out.push(b'v'),
                    _ => out.extend_from_slice(format!("{b:03o}").as_bytes()),
                }
            }
        }
    }
    out.extend_from_slice(r);
    out
}

/// One character of the name: a printable run of bytes, or one byte the
/// locale cannot print.
#[derive(Debug)]
enum Char<'a> {
    Printable(&'a [u8]),
    Unprintable(u8),
}

/// The characters of a name, one at a time.
struct Chars<'a> {
    name: &'a [u8],
    utf8: bool,
    at: usize,
}

impl<'a> Iterator for Chars<'a> {
    type Item = Char<'a>;

    fn next(&mut self) -> Option<Char<'a>> {
        let name = self.name;
        let i = self.at;
        let b = *name.get(i)?;
        if b < 0x80 {
            self.at += 1;
            return Some(if (0x20..0x7f).contains(&b) {
                Char::Printable(&name[i..i + 1])
            } else {
                Char::Unprintable(b)
            });
        }
        let len = utf8_len(b);
        if self.utf8 && len > 1 && i + len <= name.len() {
            if let Ok(s) = std::str::from_utf8(&name[i..i + len]) {
                let c = s.chars().next().unwrap_or('\0');
                if !c.is_control() {
                    self.at += len;
                    return Some(Char::Printable(&name[i..i + len]));
                }
                // A valid but unprintable sequence is escaped whole, one
                // byte at a time.
            }
        }
        self.at += 1;
        Some(Char::Unprintable(b))
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    }
}

fn needs_quoting<'a>(name: &[u8], mut chars: impl Iterator<Item = Char<'a>>) -> bool {
    if name.is_empty() {
        return true;
    }
    chars.by_ref().enumerate().any(|(i, c)| match c {
        Char::Unprintable(_) => true,
        Char::Printable(bytes) if bytes.len() > 1 => false,
        Char::Printable(bytes) => match bytes[0] {
            b'#' | b'~' => i == 0,
            b'{' | b'}' => name.len() == 1,
            b' ' | b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>'
            | b'[' | b'\\' | b'^' | b'`' | b'|' | b'\'' | b'?' | b':' => true,
            _ => false,
        },
    })
}

/// gnulib's `c_and_shell_quote_compat`: characters for which C-style
/// double quotes read the same as shell single quotes.
fn c_and_shell_compatible(c: &Char<'_>, index: usize, len: usize) -> bool {
    match c {
        Char::Unprintable(_) => false,
        Char::Printable(bytes) if bytes.len() > 1 => true,
        Char::Printable(bytes) => {
            let b = bytes[0];
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'%' | b'+' | b',' | b'-' | b'.' | b'/' | b':' | b']' | b'_' | b' ' | b'\''
                )
                || (matches!(b, b'#' | b'~') && index == 0)
                || (matches!(b, b'{' | b'}') && len == 1)
        }
    }
}

/// Double quotes, used when the only trouble is a single quote. (gnulib
/// re-runs without its extra "quote these too" set here, so ':' is bare.)
fn c_quote<'a>(chars: impl Iterator<Item = Char<'a>>, out: &mut dyn Sink) {
    out.put(b"\"");
    for c in chars {
        if let Char::Printable(bytes) = c {
            out.put(bytes);
        }
    }
    out.put(b"\"");
}

fn shell_escape_always<'a>(chars: impl Iterator<Item = Char<'a>>, out: &mut dyn Sink) {
    out.put(b"'");
    let mut in_dollar = false;
    let escape = |out: &mut dyn Sink, in_dollar: &mut bool, text: &[u8]| {
        if !*in_dollar {
            out.put(b"'$'");
            *in_dollar = true;
        }
        out.put(text);
    };
    for c in chars {
        match c {
            Char::Unprintable(b) => {
                let named: Option<&[u8]> = match b {
                    b'\n' => Some(b"\\n"),
                    b'\r' => Some(b"\\r"),
                    b'\t' => Some(b"\\t"),
                    0x07 => Some(b"\\a"),
                    0x08 => Some(b"\\b"),
                    0x0c => Some(b"\\f"),
                    0x0b => Some(b"\\v"),
                    _ => None,
                };
                match named {
                    Some(text) => escape(out, &mut in_dollar, text),
                    None => {
                        let text = [
                            b'\\',
                            b'0' + (b >> 6),
                            b'0' + ((b >> 3) & 7),
                            b'0' + (b & 7),
                        ];
                        escape(out, &mut in_dollar, &text);
                    }
                }
            }
            Char::Printable(bytes) => {
                // A `'` right after an escape closes `$'...'` itself
                // (`'$'\303'\''`, as gnulib writes it), no `''` first.
                if in_dollar && bytes != b"'" {
                    out.put(b"''");
                }
                in_dollar = false;
                if bytes == b"'" {
                    out.put(b"'\\''");
                } else {
                    out.put(bytes);
                }
            }
        }
    }
    out.put(b"'");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &[u8]) -> String {
        String::from_utf8_lossy(&quotef(s, true)).into_owned()
    }

    /// Expectations taken from coreutils 9.1 `md5sum` error messages.
    #[test]
    fn quotes_as_coreutils_does() {
        assert_eq!(q(b"missing/x"), "missing/x");
        assert_eq!(q(b"miss\nx"), "'miss'$'\\n''x'");
        assert_eq!(q(b"it's"), "\"it's\"");
        assert_eq!(q(b"it's:x"), "\"it's:x\"");
        assert_eq!(q(b"a\x01b"), "'a'$'\\001''b'");
        assert_eq!(q(b"a?b"), "'a?b'");
        assert_eq!(q(b"{"), "'{'");
        assert_eq!(q("\u{e9}\n".as_bytes()), "'\u{e9}'$'\\n'");
        assert_eq!(q(b"a:b"), "'a:b'");
        assert_eq!(q(b"~x"), "'~x'");
        assert_eq!(q(b"x~"), "x~");
        assert_eq!(q(b"#a"), "'#a'");
        assert_eq!(q(b"a#"), "a#");
        assert_eq!(q(b"miss ing"), "'miss ing'");
        assert_eq!(q(b"\xff\xfe"), "''$'\\377\\376'");
        assert_eq!(q(b"\xff'"), "''$'\\377'\\'''");
        assert_eq!(q(b"a\n'b"), "'a'$'\\n'\\''b'");
        assert_eq!(q("é".as_bytes()), "é");
        assert_eq!(q(b"standard input"), "'standard input'");
    }

    /// gnulib's `quote`: C escapes inside the locale's marks (the
    /// expectations written from gnulib's rules, and held beside the 9.11
    /// programs by the CLI's `coreutils_911` tests).
    #[test]
    fn quote_escapes_as_gnulib_locale_style() {
        let c = Quoting { utf8: false };
        let u = Quoting { utf8: true };
        assert_eq!(c.quote(b"8\n"), b"'8\\n'");
        assert_eq!(c.quote(b"a\\b"), b"'a\\\\b'");
        assert_eq!(c.quote(b"it's"), b"'it\\'s'");
        assert_eq!(c.quote("é".as_bytes()), b"'\\303\\251'");
        assert_eq!(c.quote(b"\x01\x7f\t"), b"'\\001\\177\\t'");
        assert_eq!(u.quote("é's".as_bytes()), "‘é's’".as_bytes());
        assert_eq!(u.quote("a’\n\u{ff}".as_bytes()), "‘a\\’\\nÿ’".as_bytes());
        assert_eq!(u.quote(b"\xff"), "‘\\377’".as_bytes());
    }
}
