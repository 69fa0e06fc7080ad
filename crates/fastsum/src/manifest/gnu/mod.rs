//! GNU coreutils' checksum lines (coreutils 9.1 `digest.c`).
//!
//! Written by `md5sum` and friends as `HEX  NAME` (text mode), `HEX *NAME`
//! (binary mode) or, with `--tag`, `MD5 (NAME) = HEX`; a name holding `\`,
//! newline or CR is escaped and the line starts with a backslash.

use std::borrow::Cow;

use super::{needs_escape, unescape, write_escaped};
use crate::algo::Algorithm;
use crate::digest::{hex_value, Digest};

/// Which BSD tags a reader accepts, and which algorithm an untagged line means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagPolicy {
    /// Only the tag of the one algorithm (as `md5sum -c` accepts only `MD5`).
    Only(Algorithm),
    /// Any tag fastsum knows (the algorithm is taken from the tag); untagged
    /// lines mean the given algorithm.
    Any(Algorithm),
    /// coreutils 9's `cksum -c` without `-a`: only tagged lines, with the
    /// tags of its digests (MD5, SHA1, SHA224 ... BLAKE2b, SM3); an
    /// untagged line, or one tagged BSD, SYSV or CRC, is misformatted.
    CoreutilsTagged,
}

impl TagPolicy {
    fn default_algorithm(self) -> Option<Algorithm> {
        match self {
            TagPolicy::Only(a) | TagPolicy::Any(a) => Some(a),
            TagPolicy::CoreutilsTagged => None,
        }
    }
}

/// One parsed line of a checksum file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckLine<'a> {
    /// The algorithm the line was written with.
    pub algorithm: Algorithm,
    /// The expected digest.
    pub expected: Digest,
    /// The file name, unescaped.
    pub name: Cow<'a, [u8]>,
    /// True for `HEX *NAME` lines (binary mode; no effect on GNU systems).
    pub binary: bool,
}

/// Reads the lines of one checksum file. Keeps the state GNU keeps per
/// file: once a "BSD reversed" line (`HEX NAME`, one space) has been seen,
/// lines of the two-space form are read differently, and vice versa.
#[derive(Clone, Debug)]
pub struct CheckParser {
    policy: TagPolicy,
    bsd_reversed: Option<bool>,
    /// The tag the last line began with, if it began with one.
    tag_seen: Option<Algorithm>,
}

impl CheckParser {
    /// A parser for one checksum file.
    pub fn new(policy: TagPolicy) -> Self {
        CheckParser {
            policy,
            bsd_reversed: None,
            tag_seen: None,
        }
    }

    /// The algorithm whose tag began the last line parsed, even if the
    /// rest of the line was misformatted (taken once). coreutils' `cksum
    /// -c` names the last such algorithm in its "improperly formatted"
    /// warnings.
    pub fn take_tag_seen(&mut self) -> Option<Algorithm> {
        self.tag_seen.take()
    }

    /// Parses one line, without its line terminator (strip `\n`, then one
    /// `\r`, as GNU does). `None` for an improperly formatted line.
    pub fn parse<'a>(&mut self, line: &'a [u8]) -> Option<CheckLine<'a>> {
        // A line is a C string to GNU: it ends at the first NUL.
        let s = line.split(|&b| b == 0).next().unwrap_or(line);
        let s_len = line.len();
        let mut i = 0;
        while s.get(i).copied().is_some_and(is_white) {
            i += 1;
        }
        let escaped = s.get(i) == Some(&b'\\');
        if escaped {
            i += 1;
        }
        if let Some((algorithm, after_tag)) = self.match_tag(s.get(i..)?) {
            return parse_tagged(algorithm, s.get(i + after_tag..)?, escaped);
        }
        self.parse_untagged(s, s_len, i, escaped)
    }

    /// If `s` starts with an accepted tag: the algorithm (with BLAKE2b's
    /// length) and the offset of what follows the tag and its length suffix.
    fn match_tag(&mut self, s: &[u8]) -> Option<(Algorithm, usize)> {
        let candidates: &[Algorithm] = match self.policy {
            TagPolicy::Only(ref a) => std::slice::from_ref(a),
            TagPolicy::Any(_) | TagPolicy::CoreutilsTagged => &Algorithm::ALL,
        };
        let coreutils_only = matches!(self.policy, TagPolicy::CoreutilsTagged);
        let mut best: Option<Algorithm> = None;
        for &a in candidates {
            if coreutils_only && !a.is_coreutils_digest() {
                continue;
            }
            let tag = a.tag().as_bytes();
            if a.is_legacy() {
                // crc, bsd and sysv lines are never checked.
                continue;
            }
            if s.starts_with(tag) {
                // With every tag in play, "XXH3" must not claim "XXH32 (..."
                // and "SHA1" not "SHA128": the tag must end here.
                let next = s.get(tag.len()).copied();
                let ends = matches!(self.policy, TagPolicy::Only(_))
                    || matches!(next, Some(b' ' | b'(' | b'-'));
                if ends && best.is_none_or(|b| b.tag().len() < tag.len()) {
                    best = Some(a);
                }
            }
        }
        let algorithm = best?;
        self.tag_seen = Some(algorithm);
        let mut i = algorithm.tag().len();
        if let Algorithm::Blake2b { .. } = algorithm {
            // coreutils' b2sum: the byte after the tag is consumed whatever
            // it is, unless it is '(' (OpenSSL's "BLAKE2b(NAME)= HEX").
            let next = s.get(i).copied();
            let mut output_bits = 512u64;
            if next == Some(b'-') {
                let (bits, end) = parse_c_number(s.get(i + 1..)?)?;
                if !(bits > 0 && bits <= 512 && bits % 8 == 0) {
                    return None;
                }
                output_bits = bits;
                i += 1 + end;
            } else if next.is_none() {
                // "BLAKE2b" alone: nothing follows the tag.
                return None;
            } else if next != Some(b'(') {
                i += 1;
            }
            let algorithm = Algorithm::Blake2b {
                output_len: (output_bits / 8) as u8,
            };
            return Some((algorithm, i));
        }
        Some((algorithm, i))
    }

    fn parse_untagged<'a>(
        &mut self,
        s: &'a [u8],
        s_len: usize,
        mut i: usize,
        escaped: bool,
    ) -> Option<CheckLine<'a>> {
        let algorithm = self.policy.default_algorithm()?;
        let variable = matches!(algorithm, Algorithm::Blake2b { .. });
        let min_line = if variable {
            3
        } else {
            2 * algorithm.output_len() + 2
        };
        let backslash_next = s.get(i) == Some(&b'\\');
        if s_len.checked_sub(i)? < min_line + usize::from(backslash_next) {
            return None;
        }
        let hex_start = i;
        let hex_len = if variable {
            let n = s
                .get(i..)?
                .iter()
                .take_while(|b| b.is_ascii_hexdigit())
                .count();
            if n < 2 || n % 2 != 0 || n > 128 {
                return None;
            }
            n
        } else {
            2 * algorithm.output_len()
        };
        i += hex_len;
        if !s.get(i).copied().is_some_and(is_white) {
            return None;
        }
        let expected = parse_hex(s.get(hex_start..i)?)?;
        let algorithm = if variable {
            Algorithm::Blake2b {
                output_len: (hex_len / 2) as u8,
            }
        } else {
            algorithm
        };
        i += 1;
        let mut binary = false;
        let rest = s_len - i;
        let next = s.get(i).copied();
        if rest == 1 || (next != Some(b' ') && next != Some(b'*')) {
            if self.bsd_reversed == Some(false) {
                return None;
            }
            self.bsd_reversed = Some(true);
        } else if self.bsd_reversed != Some(true) {
            self.bsd_reversed = Some(false);
            binary = next == Some(b'*');
            i += 1;
        }
        let raw_name = s.get(i..)?;
        let name = if escaped {
            unescape(raw_name)?
        } else {
            Cow::Borrowed(raw_name)
        };
        Some(CheckLine {
            algorithm,
            expected,
            name,
            binary,
        })
    }
}

/// `( NAME ) = HEX` after the tag: the part after '(' is read as GNU's
/// `bsd_split_3` does (the name ends at the last ')').
fn parse_tagged(algorithm: Algorithm, s: &[u8], escaped: bool) -> Option<CheckLine<'_>> {
    let mut i = 0;
    if s.first() == Some(&b' ') {
        i += 1;
    }
    if s.get(i) != Some(&b'(') {
        return None;
    }
    let s = s.get(i + 1..)?;
    if s.is_empty() {
        return None;
    }
    let close = s.iter().rposition(|&b| b == b')')?;
    let raw_name = s.get(..close)?;
    let name = if escaped {
        unescape(raw_name)?
    } else {
        Cow::Borrowed(raw_name)
    };
    let mut j = close + 1;
    while s.get(j).copied().is_some_and(is_white) {
        j += 1;
    }
    if s.get(j) != Some(&b'=') {
        return None;
    }
    j += 1;
    while s.get(j).copied().is_some_and(is_white) {
        j += 1;
    }
    let hex = s.get(j..)?;
    if hex.len() != 2 * algorithm.output_len() {
        return None;
    }
    let expected = parse_hex(hex)?;
    Some(CheckLine {
        algorithm,
        expected,
        name,
        binary: false,
    })
}

fn is_white(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn parse_hex(hex: &[u8]) -> Option<Digest> {
    if !hex.len().is_multiple_of(2) || hex.len() > 128 {
        return None;
    }
    let mut bytes = [0u8; 64];
    for (byte, pair) in bytes.iter_mut().zip(hex.chunks_exact(2)) {
        let [high, low] = pair else { return None };
        *byte = hex_value(*high)? << 4 | hex_value(*low)?;
    }
    Some(Digest::from_bytes(bytes.get(..hex.len() / 2)?))
}

/// `strtoumax(s, &end, 0)`: optional leading white space and '+', then a
/// decimal, `0x` hex or `0` octal number. Returns the value and the offset
/// just past it.
fn parse_c_number(s: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    while s
        .get(i)
        .is_some_and(|b| *b == b' ' || (b'\t'..=b'\r').contains(b))
    {
        i += 1;
    }
    if s.get(i) == Some(&b'+') {
        i += 1;
    }
    let (radix, start) = if s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && s.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        (16, i + 2)
    } else if s.get(i) == Some(&b'0') {
        (8, i)
    } else {
        (10, i)
    };
    let mut value: u64 = 0;
    let mut j = start;
    while let Some(d) = s.get(j).and_then(|&c| (c as char).to_digit(radix)) {
        value = value
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(d))?;
        j += 1;
    }
    if j == start {
        return None;
    }
    Some((value, j))
}

/// How a digest line is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineStyle {
    /// `HEX  NAME` (text mode) or `HEX *NAME` (binary mode).
    Untagged {
        /// Binary mode: `*` before the name.
        binary: bool,
    },
    /// `TAG (NAME) = HEX`.
    Tagged,
}

/// Appends one output line as GNU `md5sum` prints it. With `terminator`
/// NUL (`-z`), names are not escaped.
pub fn write_line(
    out: &mut Vec<u8>,
    algorithm: Algorithm,
    digest: &Digest,
    name: &[u8],
    style: LineStyle,
    terminator: u8,
) {
    let escape = terminator == b'\n' && needs_escape(name);
    if escape {
        out.push(b'\\');
    }
    let write_name = |out: &mut Vec<u8>| {
        if escape {
            write_escaped(name, out);
        } else {
            out.extend_from_slice(name);
        }
    };
    match style {
        LineStyle::Tagged => {
            out.extend_from_slice(algorithm.tag().as_bytes());
            if let Algorithm::Blake2b { output_len } = algorithm {
                if output_len != 64 {
                    out.extend_from_slice(format!("-{}", u32::from(output_len) * 8).as_bytes());
                }
            }
            out.extend_from_slice(b" (");
            write_name(out);
            out.extend_from_slice(b") = ");
            digest.push_hex(out);
        }
        LineStyle::Untagged { binary } => {
            digest.push_hex(out);
            out.push(b' ');
            out.push(if binary { b'*' } else { b' ' });
            write_name(out);
        }
    }
    out.push(terminator);
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABC_MD5: &str = "900150983cd24fb0d6963f7d28e17f72";

    fn parse_one(policy: TagPolicy, line: &str) -> Option<(Algorithm, String, String, bool)> {
        CheckParser::new(policy).parse(line.as_bytes()).map(|l| {
            (
                l.algorithm,
                l.expected.to_hex(),
                String::from_utf8_lossy(&l.name).into_owned(),
                l.binary,
            )
        })
    }

    #[test]
    fn reads_text_binary_and_tagged_lines() {
        let md5 = TagPolicy::Only(Algorithm::Md5);
        assert_eq!(parse_one(md5, &format!("{ABC_MD5}  a b")).unwrap().2, "a b");
        assert!(parse_one(md5, &format!("{ABC_MD5} *a")).unwrap().3);
        assert_eq!(
            parse_one(md5, &format!("MD5 (x) y) = {}", ABC_MD5.to_uppercase()))
                .unwrap()
                .2,
            "x) y"
        );
        assert_eq!(
            parse_one(md5, &format!("\\MD5 (a\\nb) = {ABC_MD5}"))
                .unwrap()
                .2,
            "a\nb"
        );
        assert!(parse_one(md5, &format!("SHA1 (a) = {ABC_MD5}")).is_none());
        assert!(parse_one(md5, ABC_MD5).is_none());
        assert!(parse_one(md5, &format!("{}  a", &ABC_MD5[1..])).is_none());
        assert!(parse_one(md5, &format!("\\{ABC_MD5}  a\\tb")).is_none());
    }

    #[test]
    fn any_tag_takes_the_algorithm_from_the_tag() {
        let any = TagPolicy::Any(Algorithm::Md5);
        let (a, ..) = parse_one(any, "XXH32 (f) = 32d153ff").unwrap();
        assert_eq!(a, Algorithm::Xxh32);
        let (a, ..) = parse_one(any, "XXH3 (f) = 78af5f94892f3950").unwrap();
        assert_eq!(a, Algorithm::Xxh3);
        let (a, ..) = parse_one(any, &format!("BLAKE2b-128 (f) = {ABC_MD5}")).unwrap();
        assert_eq!(a, Algorithm::Blake2b { output_len: 16 });
    }

    #[test]
    fn b2sum_lines_carry_their_length() {
        let b2 = TagPolicy::Only(Algorithm::BLAKE2B);
        let (a, ..) = parse_one(b2, &format!("{ABC_MD5}  f")).unwrap();
        assert_eq!(a, Algorithm::Blake2b { output_len: 16 });
        let (a, ..) = parse_one(b2, &format!("BLAKE2b-0x80 (f) = {ABC_MD5}")).unwrap();
        assert_eq!(a, Algorithm::Blake2b { output_len: 16 });
        assert!(parse_one(b2, &format!("BLAKE2b-12 (f) = {ABC_MD5}")).is_none());
    }

    #[test]
    fn bsd_reversed_and_gnu_lines_do_not_mix() {
        let mut p = CheckParser::new(TagPolicy::Only(Algorithm::Md5));
        assert!(p.parse(format!("{ABC_MD5} f").as_bytes()).is_some());
        let line = format!("{ABC_MD5}  g");
        let l = p.parse(line.as_bytes()).unwrap();
        assert_eq!(l.name.as_ref(), b" g");
        let mut p = CheckParser::new(TagPolicy::Only(Algorithm::Md5));
        assert!(p.parse(format!("{ABC_MD5}  f").as_bytes()).is_some());
        assert!(p.parse(format!("{ABC_MD5} fg").as_bytes()).is_none());
    }

    #[test]
    fn writes_lines_as_md5sum_does() {
        let d = Algorithm::Md5.hash_bytes(b"abc");
        let mut out = Vec::new();
        write_line(
            &mut out,
            Algorithm::Md5,
            &d,
            b"a\nb",
            LineStyle::Untagged { binary: false },
            b'\n',
        );
        write_line(&mut out, Algorithm::Md5, &d, b"a", LineStyle::Tagged, b'\n');
        write_line(
            &mut out,
            Algorithm::Md5,
            &d,
            b"a\nb",
            LineStyle::Untagged { binary: true },
            0,
        );
        let expected = format!("\\{ABC_MD5}  a\\nb\nMD5 (a) = {ABC_MD5}\n{ABC_MD5} *a\nb\0");
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}
