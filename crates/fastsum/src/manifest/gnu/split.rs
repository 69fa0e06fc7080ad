//! coreutils 9.10's reading of one checksum line (`split_3` and
//! `bsd_split_3` in its `src/cksum.c`), for md5sum, sha*sum, b2sum and
//! `cksum -c`, with the state coreutils keeps from line to line: the
//! algorithm a tag last selected and the digest length it last set (both
//! are globals there, so they carry over to the next line and list).

use std::borrow::Cow;

use super::{bsd_split_3, is_white, line_start, name_start, parse_c_number, parse_hex, CheckLine};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::escape::unescape;

/// What `cksum -a` names (coreutils' `enum Algorithm`), as `-c` reads it:
/// one algorithm, or a family whose member each line's length picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// One algorithm: md5, sha1, sha224 ... sha512, sm3 (and the old
    /// checksums, whose lines are never read).
    One(Algorithm),
    /// `sha2`: SHA-224, -256, -384 or -512 by the line's length.
    Sha2,
    /// `sha3`: SHA3-224, -256, -384 or -512 by the line's length.
    Sha3,
    /// `blake2b`: any length from 8 to 512 bits, a multiple of 8.
    Blake2b,
}

impl Family {
    /// `algorithm_tags`: the word this family's tagged lines start with.
    pub fn tag(self) -> &'static str {
        match self {
            Family::One(a) => a.tag(),
            Family::Sha2 => "SHA2",
            Family::Sha3 => "SHA3",
            Family::Blake2b => "BLAKE2b",
        }
    }

    /// `algorithm_bits`: the digest length assumed until a line says one.
    fn default_bits(self) -> u64 {
        match self {
            Family::One(a) => 8 * a.output_len() as u64,
            _ => 512,
        }
    }

    /// The family whose tag is exactly `word` (`argmatch_exact` over
    /// `algorithm_tags`).
    fn from_tag(word: &[u8]) -> Option<Family> {
        const TAGGED: [Algorithm; 11] = [
            Algorithm::Bsd,
            Algorithm::Sysv,
            Algorithm::Crc,
            Algorithm::Crc32b,
            Algorithm::Md5,
            Algorithm::Sha1,
            Algorithm::Sha224,
            Algorithm::Sha256,
            Algorithm::Sha384,
            Algorithm::Sha512,
            Algorithm::Sm3,
        ];
        let one = TAGGED.iter().find(|a| a.tag().as_bytes() == word);
        match (one, word) {
            (Some(&a), _) => Some(Family::One(a)),
            (None, b"SHA2") => Some(Family::Sha2),
            (None, b"SHA3") => Some(Family::Sha3),
            (None, b"BLAKE2b") => Some(Family::Blake2b),
            _ => None,
        }
    }

    /// Whether the length is read from each line (`-l`'s algorithms).
    fn variable(self) -> bool {
        !matches!(self, Family::One(_))
    }

    /// The algorithm of a `bits`-long digest of this family.
    fn member(self, bits: u64) -> Algorithm {
        match (self, bits) {
            (Family::One(a), _) => a,
            (Family::Sha2, 224) => Algorithm::Sha224,
            (Family::Sha2, 256) => Algorithm::Sha256,
            (Family::Sha2, 384) => Algorithm::Sha384,
            (Family::Sha2, _) => Algorithm::Sha512,
            (Family::Sha3, 224) => Algorithm::Sha3_224,
            (Family::Sha3, 256) => Algorithm::Sha3_256,
            (Family::Sha3, 384) => Algorithm::Sha3_384,
            (Family::Sha3, _) => Algorithm::Sha3_512,
            (Family::Blake2b, bits) => Algorithm::Blake2b {
                output_len: (bits / 8).clamp(1, 64) as u8,
            },
        }
    }
}

/// The longest tag `algorithm_from_tag` looks at ("BLAKE2b").
const MAX_TAG_LEN: usize = 7;

/// `BASE64_LENGTH`: the padded base64 length of `bytes` bytes.
fn base64_len(bytes: u64) -> u64 {
    bytes.div_ceil(3) * 4
}

fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// The line-to-line state of coreutils' check, and what the tool is.
#[derive(Clone, Debug)]
pub(super) struct Split {
    /// `cksum` (base64 digests, length suffixes on every tag, three-byte
    /// minimum lines), not one of the fixed tools.
    cksum: bool,
    /// `-a` was given (cksum): untagged lines mean `current`.
    specified: bool,
    /// `cksum_algorithm`: what the lines are read as now.
    current: Family,
    /// `digest_length`, in bits.
    bits: u64,
    /// `digest_hex_bytes`.
    hex_digits: u64,
    /// `min_digest_line_length`.
    min_line: usize,
    /// `bsd_reversed`: `HEX NAME` lines seen (true), `HEX  NAME` (false).
    bsd_reversed: Option<bool>,
}

impl Split {
    /// The state at the start: `family` is the tool's (md5sum: MD5,
    /// b2sum: BLAKE2b) or `cksum -a`'s (`None`: cksum without `-a`).
    pub(super) fn new(family: Option<Family>, cksum: bool) -> Split {
        let current = family.unwrap_or(Family::One(Algorithm::Crc));
        let bits = current.default_bits();
        Split {
            cksum,
            specified: family.is_some(),
            current,
            bits,
            hex_digits: bits / 4,
            min_line: match cksum || current.variable() {
                true => 3,
                false => (bits / 4) as usize + 2,
            },
            bsd_reversed: None,
        }
    }

    /// The tag the warnings about misformatted lines name now.
    pub(super) fn type_string(&self) -> &'static str {
        self.current.tag()
    }

    /// `split_3`: one line (cut at its first NUL as C sees it; `s_len` is
    /// its whole length).
    pub(super) fn split<'a>(&mut self, s: &'a [u8], s_len: usize) -> Option<CheckLine<'a>> {
        let (mut i, escaped) = line_start(s);
        if self.cksum && (!self.specified || self.current == Family::Sha2) {
            let tag = algorithm_from_tag(s.get(i..)?);
            if !self.specified {
                match tag {
                    Some(Family::One(a)) if a.is_legacy() => return None,
                    Some(family) => self.current = family,
                    None => return None,
                }
            } else if matches!(
                tag,
                Some(Family::Sha2 | Family::One(Algorithm::Sha224 | Algorithm::Sha256))
                    | Some(Family::One(Algorithm::Sha384 | Algorithm::Sha512))
            ) {
                self.current = tag?;
            }
        }
        let parse_offset = i;
        let type_string = self.current.tag().as_bytes();
        if s.get(i..)?.starts_with(type_string) {
            i += type_string.len();
            if let Some(line) = self.tagged(s, i, escaped) {
                return line;
            }
            i = parse_offset;
        }
        self.untagged(s, s_len, i, escaped)
    }

    /// After the tag at `i`: the length suffix, then `(NAME) = DIGEST`.
    /// `None`: not a tagged line after all (read it as untagged);
    /// `Some(None)`: misformatted.
    fn tagged<'a>(&mut self, s: &'a [u8], mut i: usize, escaped: bool) -> Option<Option<CheckLine<'a>>> {
        if self.cksum || self.current.variable() {
            self.bits = self.current.default_bits();
            if s.get(i) == Some(&b'-') {
                let Some((length, end)) = s.get(i + 1..).and_then(parse_c_number) else {
                    return Some(None);
                };
                let fits = match self.cksum && matches!(self.current, Family::Sha2 | Family::Sha3) {
                    true => matches!(length, 224 | 256 | 384 | 512),
                    false => length > 0 && length <= self.bits && length.is_multiple_of(8),
                };
                if !fits {
                    return Some(None);
                }
                i += 1 + end;
                self.bits = length;
            }
            self.hex_digits = self.bits / 4;
        }
        if s.get(i) == Some(&b' ') {
            i += 1;
        }
        if s.get(i) != Some(&b'(') {
            return None;
        }
        Some(self.bsd_split(s.get(i + 1..)?, escaped))
    }

    /// `bsd_split_3`: `NAME) = DIGEST`, the name ending at the last ')'.
    fn bsd_split<'a>(&self, s: &'a [u8], escaped: bool) -> Option<CheckLine<'a>> {
        let (name, digest) = bsd_split_3(s, escaped)?;
        let (expected, matchable) = self.expected(digest)?;
        Some(CheckLine {
            algorithm: self.current.member(self.bits),
            expected,
            matchable,
            name,
            binary: false,
            tagged: true,
        })
    }

    /// An untagged line from `i`: `DIGEST  NAME`, `DIGEST *NAME` or the
    /// BSD-reversed `DIGEST NAME`.
    fn untagged<'a>(
        &mut self,
        s: &'a [u8],
        s_len: usize,
        mut i: usize,
        escaped: bool,
    ) -> Option<CheckLine<'a>> {
        let backslash_next = usize::from(s.get(i) == Some(&b'\\'));
        if s_len.checked_sub(i)? < self.min_line + backslash_next {
            return None;
        }
        let start = i;
        if self.current.variable() {
            self.infer_length(s.get(i..)?)?;
        }
        while s.get(i).is_some_and(|&b| !is_white(b)) {
            i += 1;
        }
        if i >= s.len() {
            return None;
        }
        let digest = s.get(start..i)?;
        // The digits are checked before the line can decide the format
        // (a header line of other words leaves it open).
        let (expected, matchable) = self.expected(digest)?;
        let (name_at, binary) = name_start(&mut self.bsd_reversed, s, s_len, i + 1)?;
        let name = name_of(s.get(name_at..)?, escaped)?;
        Some(CheckLine {
            algorithm: self.current.member(self.bits),
            expected,
            matchable,
            name,
            binary,
            tagged: false,
        })
    }

    /// The digest length of an untagged line of a variable family, from
    /// its digest's hex (or, for cksum, base64) characters.
    fn infer_length(&mut self, s: &[u8]) -> Option<()> {
        let hex = s.iter().take_while(|b| b.is_ascii_hexdigit()).count() as u64;
        let mut hex_digits = hex;
        if self.cksum {
            let b64 = s.iter().take_while(|&&b| is_base64(b)).count();
            let equals = s.iter().skip(b64).take_while(|&&b| b == b'=').count() as u64;
            let b64 = b64 as u64;
            if matches!(self.current, Family::Sha2 | Family::Sha3)
                && !matches!(hex / 2, 28 | 32 | 48 | 64)
            {
                hex_digits = [28, 32, 48, 64]
                    .into_iter()
                    .find(|&bytes| base64_len(bytes) == b64 + equals)?
                    * 2;
            } else if self.current == Family::Blake2b && hex < b64 {
                if let Some(bits) = (8..=512)
                    .step_by(8)
                    .find(|&j| base64_len(j / 8) == b64 + equals && j % 3 == equals)
                {
                    hex_digits = bits / 4;
                }
            }
        }
        if hex_digits < 2 || !hex_digits.is_multiple_of(2) || hex_digits > 128 {
            return None;
        }
        self.hex_digits = hex_digits;
        self.bits = hex_digits * 4;
        Some(())
    }

    /// `valid_digits`, and the digest read as base64 (cksum, at its
    /// base64 length) or hex (at `hex_digits`); false: it can match nothing.
    fn expected(&self, digest: &[u8]) -> Option<(Digest, bool)> {
        let len = digest.len() as u64;
        let expected = if self.cksum && len == base64_len(self.bits / 8) {
            let pad = (self.bits % 3) as usize;
            let (body, tail) = digest.split_at(digest.len().checked_sub(pad)?);
            if !body.iter().all(|&b| is_base64(b)) || !tail.iter().all(|&b| b == b'=') {
                return None;
            }
            match Digest::from_base64(digest) {
                Some(d) => (d, true),
                // Not how any digest is written: coreutils compares the
                // text, so it matches nothing.
                None => (Digest::from_bytes(&[]), false),
            }
        } else if len == self.hex_digits {
            (parse_hex(digest)?, true)
        } else {
            return None;
        };
        Some(expected)
    }
}

/// `algorithm_from_tag`: the family whose tag the line starts with (the
/// word up to a blank, '-' or '(').
fn algorithm_from_tag(s: &[u8]) -> Option<Family> {
    let end = s
        .iter()
        .take(MAX_TAG_LEN + 1)
        .position(|&b| is_white(b) || b == b'-' || b == b'(')
        .unwrap_or(s.len().min(MAX_TAG_LEN + 1));
    if end > MAX_TAG_LEN {
        return None;
    }
    Family::from_tag(s.get(..end)?)
}

/// The name as the line holds it, unescaped if the line began with `\`.
fn name_of(raw: &[u8], escaped: bool) -> Option<Cow<'_, [u8]>> {
    match escaped {
        true => unescape(raw),
        false => Some(Cow::Borrowed(raw)),
    }
}
