//! xxhsum 0.8.1's checksum lines (`cli/xxhsum.c`, `XSUM_parseLine`).
//!
//! `HEX  NAME` where the hex length picks the algorithm (8: XXH32,
//! 16: XXH64, 32: XXH128), or `TAG (NAME) = HEX` with tags XXH32, XXH64,
//! XXH3, XXH128 and their `_LE` (little-endian display) variants. xxhsum
//! does not escape names.

use crate::algo::Algorithm;
use crate::digest::{hex_value, Digest};

/// One parsed xxhsum line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XxhLine<'a> {
    /// The algorithm named by the tag or implied by the hex length.
    pub algorithm: Algorithm,
    /// The expected digest, in canonical (big-endian) byte order.
    pub expected: Digest,
    /// The file name: everything after the separator.
    pub name: &'a [u8],
}

impl XxhLine<'_> {
    /// Appends an xxhsum output line: `HEX  NAME` or `TAG (NAME) = HEX`,
    /// hex in big- or little-endian order. XXH3 is always written tagged,
    /// as xxhsum 0.8.1 does, because its untagged form could not be told
    /// from XXH64's.
    pub fn write(
        out: &mut Vec<u8>,
        algorithm: Algorithm,
        digest: &Digest,
        name: &[u8],
        tagged: bool,
        little_endian: bool,
    ) {
        let mut hex = String::with_capacity(2 * digest.len());
        if little_endian {
            let reversed: Vec<u8> = digest.as_bytes().iter().rev().copied().collect();
            Digest::from_bytes(&reversed).write_hex(&mut hex);
        } else {
            digest.write_hex(&mut hex);
        }
        if tagged || algorithm == Algorithm::Xxh3 {
            out.extend_from_slice(algorithm.tag().as_bytes());
            if little_endian {
                out.extend_from_slice(b"_LE");
            }
            out.extend_from_slice(b" (");
            out.extend_from_slice(name);
            out.extend_from_slice(b") = ");
            out.extend_from_slice(hex.as_bytes());
        } else {
            out.extend_from_slice(hex.as_bytes());
            out.extend_from_slice(b"  ");
            out.extend_from_slice(name);
        }
        out.push(b'\n');
    }

    /// Parses a line (without its `\n`). `little_endian` is xxhsum's
    /// `--little-endian` flag, which applies to untagged lines; tagged
    /// lines say their order with `_LE`. `None` for an improperly
    /// formatted line.
    pub fn parse(line: &[u8], little_endian: bool) -> Option<XxhLine<'_>> {
        parse_line(line, little_endian)
    }
}

/// [`XxhLine::parse`].
pub(crate) fn parse_line(line: &[u8], little_endian: bool) -> Option<XxhLine<'_>> {
    // xxhsum works on C strings.
    let line = line.split(|&b| b == 0).next().unwrap_or(line);
    let first_space = line.iter().position(|&b| b == b' ')?;
    if first_space + 1 >= line.len() {
        return None;
    }
    let (algorithm, hex, reverse) = if line.get(first_space + 1) == Some(&b'(') {
        let last_space = line.iter().rposition(|&b| b == b' ')?;
        if last_space < first_space + 5 {
            return None;
        }
        if line.get(last_space - 3..last_space) != Some(b") =") {
            return None;
        }
        let tag = line.get(..first_space)?;
        let reverse = tag.windows(3).any(|w| w == b"_LE");
        // The C code tests these prefixes in this order, each overriding
        // the last; XXH64 is the default.
        let mut algorithm = Algorithm::Xxh64;
        if tag.starts_with(b"XXH3") {
            algorithm = Algorithm::Xxh3;
        }
        if tag.starts_with(b"XXH32") {
            algorithm = Algorithm::Xxh32;
        }
        if tag.starts_with(b"XXH64") {
            algorithm = Algorithm::Xxh64;
        }
        if tag.starts_with(b"XXH128") {
            algorithm = Algorithm::Xxh128;
        }
        let name = line.get(first_space + 2..last_space - 3)?;
        let hex = line.get(last_space + 1..)?;
        let expected = canonical_from_hex(algorithm, hex, reverse)?;
        return Some(XxhLine {
            algorithm,
            expected,
            name,
        });
    } else {
        let hex = line.get(..first_space)?;
        let algorithm = match hex.len() {
            8 => Algorithm::Xxh32,
            16 => Algorithm::Xxh64,
            32 => Algorithm::Xxh128,
            _ => return None,
        };
        (algorithm, hex, little_endian)
    };
    let expected = canonical_from_hex(algorithm, hex, reverse)?;
    // The second separator byte may be anything (a '*' for instance).
    let name = line.get(first_space + 2..)?;
    Some(XxhLine {
        algorithm,
        expected,
        name,
    })
}

fn canonical_from_hex(algorithm: Algorithm, hex: &[u8], reverse: bool) -> Option<Digest> {
    let len = match (hex.len(), algorithm) {
        (8, Algorithm::Xxh32) => 4,
        (16, Algorithm::Xxh64 | Algorithm::Xxh3) => 8,
        (32, Algorithm::Xxh128) => 16,
        _ => return None,
    };
    let mut bytes = [0u8; 16];
    for (i, byte) in bytes.iter_mut().enumerate().take(len) {
        let j = if reverse { len - 1 - i } else { i };
        let [high, low] = hex.get(2 * j..2 * j + 2)? else {
            return None;
        };
        *byte = hex_value(*high)? << 4 | hex_value(*low)?;
    }
    Some(Digest::from_bytes(bytes.get(..len)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_length_picks_the_algorithm() {
        assert_eq!(
            parse_line(b"32d153ff  a", false).unwrap().algorithm,
            Algorithm::Xxh32
        );
        assert_eq!(
            parse_line(b"44bc2cf5ad770999 *a", false).unwrap().name,
            b"a"
        );
        assert_eq!(
            parse_line(b"06b05ab6733a618578af5f94892f3950  a", false)
                .unwrap()
                .algorithm,
            Algorithm::Xxh128
        );
        assert!(parse_line(b"06b05ab6  733a6", false).is_some());
        assert!(parse_line(b"06b05ab  a", false).is_none());
    }

    #[test]
    fn tags_and_little_endian() {
        let l = parse_line(b"XXH3 (a b) = 78af5f94892f3950", false).unwrap();
        assert_eq!((l.algorithm, l.name), (Algorithm::Xxh3, &b"a b"[..]));
        let le = parse_line(b"XXH64_LE (a) = 990977adf52cbc44", false).unwrap();
        assert_eq!(le.expected.to_hex(), "44bc2cf5ad770999");
        let le = parse_line(b"990977adf52cbc44  a", true).unwrap();
        assert_eq!(le.expected.to_hex(), "44bc2cf5ad770999");
    }
}
