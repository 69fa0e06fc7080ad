//! GNU coreutils' checksum lines (coreutils 9.10 `cksum.c`; the reading
//! of its tools' lines is in `split.rs`, fastsum's own here).
//!
//! Written by `md5sum` and friends as `HEX  NAME` (text mode), `HEX *NAME`
//! (binary mode) or, with `--tag`, `MD5 (NAME) = HEX`; a name holding `\`,
//! newline or CR is escaped and the line starts with a backslash.

use std::borrow::Cow;

use crate::escape::unescape;
use crate::algo::Algorithm;
use crate::digest::Digest;

mod split;
// Lines are written by the renderer, which whole runs bring.
#[cfg(feature = "tree")]
mod write;

pub use split::Family;
#[cfg(feature = "tree")]
pub(crate) use write::{write_line, Encoding, LineStyle};

/// Which lines a reader accepts, and which algorithm an untagged line means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagPolicy {
    /// md5sum, sha1sum ... sha512sum and b2sum (`Algorithm::Blake2b`, any
    /// length): hex digests, the tool's own tag.
    Only(Algorithm),
    /// `cksum -a NAME -c`: hex or base64 digests; a family's length from
    /// each line; with `sha2`, any SHA-2 tag.
    Cksum(Family),
    /// `cksum -c` without `-a`: only tagged lines, with the tags of its
    /// digests (MD5, SHA1, SHA2-N, SHA256 ... SHA3-N, BLAKE2b, SM3); an
    /// untagged line, or one tagged BSD, SYSV, CRC or CRC32B, is
    /// misformatted.
    CoreutilsTagged,
    /// fastsum's own: any tag fastsum knows (the algorithm is taken from
    /// the tag); untagged lines mean the given algorithm.
    Any(Algorithm),
}

/// One parsed line of a checksum file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckLine<'a> {
    /// The algorithm the line was written with.
    pub algorithm: Algorithm,
    /// The expected digest: the whole digest, or (coreutils' `cksum -c`
    /// reading `MD5-64 (NAME) = ...`) its first bytes.
    pub expected: Digest,
    /// False for a base64 digest written as no digest is (stray bits
    /// under its padding): coreutils compares the text, so it never matches.
    pub matchable: bool,
    /// The file name, unescaped.
    pub name: Cow<'a, [u8]>,
    /// True for `HEX *NAME` lines (binary mode; no effect on GNU systems).
    pub binary: bool,
    /// True for a line that names its algorithm (`TAG (NAME) = DIGEST`,
    /// escaped or not): the shape `--update` writes the list again in.
    pub tagged: bool,
}

impl CheckLine<'_> {
    /// Whether `actual`, the digest of the named file, is what the line
    /// expects (all of it, or the first bytes a shortened tag names).
    pub fn matches(&self, actual: &Digest) -> bool {
        self.matchable
            && actual.parts() == self.expected.parts()
            && actual.as_bytes().starts_with(self.expected.as_bytes())
    }

    /// Whether `line` (this line as read, without its terminator) is byte
    /// for byte the line fastsum writes for what it says: the one rule
    /// of what `--update` can write back (upper-case hex, a second space
    /// before `(`, a name escaped that needs no escape, OpenSSL's
    /// `TAG(NAME)= HEX`, a shortened tag: each reads as this line and is
    /// written otherwise, so a rewrite would change the list's look with
    /// nothing changed). Hex or base64, as the line has it.
    #[cfg(feature = "tree")]
    pub fn written_as_fastsum_writes(&self, line: &[u8], terminator: u8) -> bool {
        let style = match self.tagged {
            true => LineStyle::Tagged,
            false => LineStyle::Untagged {
                binary: self.binary,
            },
        };
        [Encoding::Hex, Encoding::Base64].into_iter().any(|encoding| {
            let mut out = Vec::with_capacity(line.len() + 1);
            let digest = (&self.expected, encoding);
            write_line(&mut out, self.algorithm, digest, &self.name, style, terminator);
            out.pop() == Some(terminator) && out == line
        })
    }
}

/// Reads the lines of checksum files. Keeps the state coreutils keeps
/// from line to line (and list to list): once a "BSD reversed" line
/// (`HEX NAME`, one space) has been seen, lines of the two-space form are
/// read differently, and vice versa; `cksum -c`'s algorithm and length.
#[derive(Clone, Debug)]
pub struct CheckParser {
    policy: TagPolicy,
    /// The coreutils tools' reading (every policy but `Any`).
    split: Option<split::Split>,
    bsd_reversed: Option<bool>,
}

impl CheckParser {
    /// A parser for the lists of one run.
    pub fn new(policy: TagPolicy) -> Self {
        let split = match policy {
            TagPolicy::Only(Algorithm::Blake2b { .. }) => {
                Some(split::Split::new(Some(Family::Blake2b), false))
            }
            TagPolicy::Only(a) => Some(split::Split::new(Some(Family::One(a)), false)),
            TagPolicy::Cksum(family) => Some(split::Split::new(Some(family), true)),
            TagPolicy::CoreutilsTagged => Some(split::Split::new(None, true)),
            TagPolicy::Any(_) => None,
        };
        CheckParser {
            policy,
            split,
            bsd_reversed: None,
        }
    }

    /// The tag coreutils names in its "improperly formatted" warnings
    /// now (`cksum -c` without `-a`: the last tag a line began with).
    pub fn type_string(&self) -> &'static str {
        match (&self.split, self.policy) {
            (Some(split), _) => split.type_string(),
            (None, TagPolicy::Any(a)) => a.tag(),
            (None, _) => "",
        }
    }

    /// Parses one line, without its line terminator (strip `\n`, then one
    /// `\r`, as GNU does). `None` for an improperly formatted line.
    pub fn parse<'a>(&mut self, line: &'a [u8]) -> Option<CheckLine<'a>> {
        // A line is a C string to GNU: it ends at the first NUL.
        let s = line.split(|&b| b == 0).next().unwrap_or(line);
        let s_len = line.len();
        if let Some(split) = &mut self.split {
            return split.split(s, s_len);
        }
        let (i, escaped) = line_start(s);
        if let Some((algorithm, after_tag)) = self.match_tag(s.get(i..)?) {
            return parse_tagged(algorithm, s.get(i + after_tag..)?, escaped);
        }
        self.parse_untagged(s, s_len, i, escaped)
    }

    /// fastsum's own reading: if `s` starts with a tag fastsum knows: the algorithm (with BLAKE2b's
    /// length) and the offset of what follows the tag and its length suffix.
    fn match_tag(&mut self, s: &[u8]) -> Option<(Algorithm, usize)> {
        if let Some(found) = sha2_tag(s) {
            return Some(found);
        }
        let mut best: Option<Algorithm> = None;
        // rhash --bsd's `CRC32` tag (the CRC-32 of zlib, SFV's) is crc32's.
        for a in Algorithm::ALL {
            let tag = a.tag().as_bytes();
            if a.is_legacy() && a != Algorithm::Crc32b {
                // crc, bsd and sysv lines are never checked (cksum's and
                // sum's numbers are not digests).
                continue;
            }
            if s.starts_with(tag) {
                // With every tag in play, "XXH3" must not claim "XXH32 (..."
                // and "SHA1" not "SHA128": the tag must end here.
                let next = s.get(tag.len()).copied();
                let ends = matches!(next, Some(b' ' | b'(' | b'-' | b'/'));
                if ends && best.is_none_or(|b| b.tag().len() < tag.len()) {
                    best = Some(a);
                }
            }
        }
        let algorithm = best?;
        let mut i = algorithm.tag().len();
        if s.get(i) == Some(&b'/') {
            // `S3ETAG/8MiB`, `CRC32C/16MiB`: a digest of parts of that size.
            let size = s.get(i + 1..)?;
            let end = size.iter().position(|&b| b == b' ' || b == b'(')?;
            let size = std::str::from_utf8(size.get(..end)?).ok()?;
            let part_size = crate::algo::parts::parse_part_size(size)?;
            return Some((algorithm.in_parts(part_size)?, i + 1 + end));
        }
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
        let TagPolicy::Any(algorithm) = self.policy else {
            return None;
        };
        let variable = matches!(algorithm, Algorithm::Blake2b { .. });
        let min_line = if variable {
            3
        } else if algorithm == Algorithm::Crc32b {
            CRC_ALONE + 2
        } else {
            2 * algorithm.output_len() + 2
        };
        let backslash_next = s.get(i) == Some(&b'\\');
        if s_len.checked_sub(i)? < min_line + usize::from(backslash_next) {
            return None;
        }
        let hex_start = i;
        let hex_len = if algorithm == Algorithm::Crc32b {
            // `rhash --simple`: the CRC alone.
            CRC_ALONE
        } else if variable {
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
        let hex_end = i + hex_len;
        i = hex_end;
        let mut parts = 0;
        if algorithm.part_layout().is_some() && s.get(i) == Some(&b'-') {
            // `HEX-N`: a digest of N parts.
            let n = s.get(i + 1..)?.iter().take_while(|b| b.is_ascii_digit()).count();
            let text = std::str::from_utf8(s.get(i..i + 1 + n)?).ok()?;
            parts = crate::digest::split_parts(text)?.1;
            i += 1 + n;
        }
        if !s.get(i).copied().is_some_and(is_white) {
            return None;
        }
        let expected = parse_hex(s.get(hex_start..hex_end)?)?.with_parts(parts);
        let algorithm = if variable {
            Algorithm::Blake2b {
                output_len: (hex_len / 2) as u8,
            }
        } else {
            algorithm
        };
        let (name_at, binary) = name_start(&mut self.bsd_reversed, s, s_len, i + 1)?;
        let raw_name = s.get(name_at..)?;
        let name = if escaped {
            unescape(raw_name)?
        } else {
            Cow::Borrowed(raw_name)
        };
        Some(CheckLine {
            algorithm,
            expected,
            matchable: true,
            name,
            binary,
            tagged: false,
        })
    }
}

/// Hex digits of a CRC-32 written alone (rhash, SFV): the start of
/// crc32b's digest, whose byte count follows it (24 digits, as fastsum's
/// own tagged lines write it).
const CRC_ALONE: usize = 8;

/// `( NAME ) = HEX` after the tag: the part after '(' is read as GNU's
/// `bsd_split_3` does (the name ends at the last ')').
fn parse_tagged(algorithm: Algorithm, s: &[u8], escaped: bool) -> Option<CheckLine<'_>> {
    // rhash --bsd pads its tags to one width: `MD5   (NAME) = HEX`.
    let i = s.iter().take_while(|&&b| b == b' ').count();
    if s.get(i) != Some(&b'(') {
        return None;
    }
    let (name, text) = bsd_split_3(s.get(i + 1..)?, escaped)?;
    let expected = tagged_digest(algorithm, text)?;
    Some(CheckLine {
        algorithm,
        expected,
        matchable: true,
        name,
        binary: false,
        tagged: true,
    })
}

/// The digest of a tagged line: hex, or base64 as `--base64` writes it
/// (hex where the text is hex of the digest's length; where the two
/// lengths meet, 4 bytes, base64 ends in `==`, never hex); with `-N`
/// after it for a digest of parts.
fn tagged_digest(algorithm: Algorithm, text: &[u8]) -> Option<Digest> {
    let (value, parts) = crate::digest::split_parts(std::str::from_utf8(text).ok()?)?;
    if parts != 0 && algorithm.part_layout().is_none() {
        return None;
    }
    let len = algorithm.output_len();
    let crc_alone = algorithm == Algorithm::Crc32b && value.len() == CRC_ALONE;
    let hex = (value.len() == 2 * len || crc_alone)
        .then(|| parse_hex(value.as_bytes()))
        .flatten();
    let digest = match hex {
        Some(d) => d,
        None => Digest::from_base64(value.as_bytes()).filter(|d| d.len() == len)?,
    };
    Some(digest.with_parts(parts))
}

/// After an untagged line's digest and its blank (at `i`): where the name
/// starts and whether the line is binary (`*`). A "BSD reversed" line
/// (`HEX NAME`, one space) and the `HEX  NAME` form do not mix in one run:
/// `reversed` remembers which was seen first (coreutils' `bsd_reversed`,
/// against names with leading blanks passed off as the other form).
fn name_start(
    reversed: &mut Option<bool>,
    s: &[u8],
    s_len: usize,
    i: usize,
) -> Option<(usize, bool)> {
    let next = s.get(i).copied();
    if s_len.checked_sub(i)? == 1 || (next != Some(b' ') && next != Some(b'*')) {
        if *reversed == Some(false) {
            return None;
        }
        *reversed = Some(true);
        Some((i, false))
    } else if *reversed != Some(true) {
        *reversed = Some(false);
        Some((i + 1, next == Some(b'*')))
    } else {
        Some((i, false))
    }
}

/// coreutils' `bsd_split_3`: what follows `(` in a tagged line, `NAME) =
/// DIGEST`, the name ending at the last ')' (unescaped if the line began
/// with `\`), blanks around the '='.
fn bsd_split_3(s: &[u8], escaped: bool) -> Option<(Cow<'_, [u8]>, &[u8])> {
    let close = s.iter().rposition(|&b| b == b')')?;
    let raw_name = s.get(..close)?;
    let name = match escaped {
        true => unescape(raw_name)?,
        false => Cow::Borrowed(raw_name),
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
    Some((name, s.get(j..)?))
}

/// Where a check line's text starts: after leading blanks, and after a
/// backslash that says its name is escaped (then `true`).
fn line_start(s: &[u8]) -> (usize, bool) {
    let i = s.iter().take_while(|&&b| is_white(b)).count();
    match s.get(i) == Some(&b'\\') {
        true => (i + 1, true),
        false => (i, false),
    }
}

fn is_white(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn parse_hex(hex: &[u8]) -> Option<Digest> {
    crate::digest::digest_from_hex(hex)
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

#[cfg(test)]
mod tests;

/// `SHA2-224` ... `SHA2-512`, the tags `cksum -a sha2 -c` (coreutils
/// 9.8 on) reads beside the SHA224 ... SHA512 it writes: the algorithm
/// and the tag's length, where `s` starts with one and the tag ends there.
fn sha2_tag(s: &[u8]) -> Option<(Algorithm, usize)> {
    let bits = s.strip_prefix(b"SHA2-")?.get(..3)?;
    let algorithm = match bits {
        b"224" => Algorithm::Sha224,
        b"256" => Algorithm::Sha256,
        b"384" => Algorithm::Sha384,
        b"512" => Algorithm::Sha512,
        _ => return None,
    };
    let end = b"SHA2-".len() + 3;
    matches!(s.get(end), Some(b' ' | b'(')).then_some((algorithm, end))
}
