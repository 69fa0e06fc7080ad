//! [`Digest`]: the bytes a hash function produced, and their hex form.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind};

/// The largest digest fastsum produces: SHA-512 and BLAKE2b-512, 64 bytes.
pub(crate) const MAX_DIGEST_LEN: usize = 64;

/// A message digest of up to `MAX_DIGEST_LEN` bytes, kept inline (no
/// allocation per file).
///
/// Bytes are in the canonical order the reference tools print: big-endian
/// for the xxHash family, as `xxhsum` prints them by default, and for the
/// CRCs, as S3 sends them.
///
/// A digest of parts (S3's multipart ETag and composite checksums)
/// also carries the number of parts, written after it as `-N` in
/// every form (`hex-N`, `base64-N`, as S3 writes them); two digests are
/// equal only with the same count (`X-1` is not `X`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest {
    bytes: [u8; MAX_DIGEST_LEN],
    len: u8,
    /// The number of parts, 0 for a digest of the whole input.
    parts: u32,
}

impl Digest {
    /// A digest holding a copy of `bytes`.
    ///
    /// # Panics
    /// If `bytes` is longer than `MAX_DIGEST_LEN`.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        assert!(
            bytes.len() <= MAX_DIGEST_LEN,
            "digest of {} bytes is too long",
            bytes.len()
        );
        let mut d = Digest {
            bytes: [0; MAX_DIGEST_LEN],
            len: bytes.len() as u8,
            parts: 0,
        };
        d.bytes[..bytes.len()].copy_from_slice(bytes);
        d
    }

    /// This digest as the digest of `parts` parts (S3's `-N`; 0: of the
    /// whole input, no suffix).
    pub fn with_parts(mut self, parts: u32) -> Self {
        self.parts = parts;
        self
    }

    /// The number of parts this is a digest of (S3's `-N` of a multipart
    /// ETag or composite checksum), `None` for a digest of the whole input.
    pub fn parts(&self) -> Option<u32> {
        (self.parts != 0).then_some(self.parts)
    }

    /// The digest's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True for a zero-length digest (never produced by a hash function).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Lower-case hex, two characters a byte.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(2 * self.len());
        self.write_hex(&mut s);
        s
    }

    /// Appends the lower-case hex form to `out` without allocating.
    pub fn write_hex(&self, out: &mut String) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for &b in self.as_bytes() {
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
        if let Some(n) = self.parts() {
            out.push_str(&format!("-{n}"));
        }
    }

    /// Appends the lower-case hex form to a byte buffer without allocating
    /// (output lines are built as bytes: file names need not be UTF-8).
    pub fn push_hex(&self, out: &mut Vec<u8>) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for &b in self.as_bytes() {
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        }
        self.push_parts(out);
    }

    /// Appends the base64 form (RFC 4648, `+/`, padded with `=`) to `out`:
    /// `cksum --base64`'s digests, and S3's checksums (`x-amz-checksum-*`:
    /// the base64 of the big-endian bytes, `-N` after a composite one).
    pub fn push_base64(&self, out: &mut Vec<u8>) {
        push_base64(self.as_bytes(), out);
        self.push_parts(out);
    }

    /// The base64 form as a string (see [`Digest::push_base64`]).
    pub fn to_base64(&self) -> String {
        let mut out = Vec::new();
        self.push_base64(&mut out);
        // Base64 and `-N` are ASCII.
        String::from_utf8_lossy(&out).into_owned()
    }

    /// `-N` for a digest of parts.
    fn push_parts(&self, out: &mut Vec<u8>) {
        if let Some(n) = self.parts() {
            out.extend_from_slice(format!("-{n}").as_bytes());
        }
    }

    /// Reads a value as S3 sends it in an `x-amz-checksum-*` header or a
    /// `Checksum*` field: padded base64, with `-N` after a composite
    /// checksum of N parts. `None` for anything else (S3's answers are
    /// outside input).
    pub fn from_s3_checksum(text: &str) -> Option<Digest> {
        let (value, parts) = split_parts(text)?;
        let bytes = decode_base64(value)?;
        (!bytes.is_empty() && bytes.len() <= MAX_DIGEST_LEN)
            .then(|| Digest::from_bytes(&bytes).with_parts(parts))
    }

    /// Reads an S3 ETag: hex (either case), with `-N` after a multipart
    /// upload's, inside double quotes or not (S3 quotes them). `None` for
    /// anything else, an SSE-KMS ETag included only where it is not hex.
    pub fn from_etag(text: &str) -> Option<Digest> {
        let text = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(text);
        let (value, parts) = split_parts(text)?;
        digest_from_hex(value.as_bytes())
            .filter(|d| !d.is_empty())
            .map(|d| d.with_parts(parts))
    }

    /// Reads a padded base64 digest as `cksum -c` accepts it; `None` unless
    /// it is exactly the form [`Digest::push_base64`] writes (the bits
    /// padding leaves over must be zero: coreutils compares the text, so a
    /// digest written otherwise never matches).
    pub fn from_base64(text: &[u8]) -> Option<Digest> {
        let bytes = decode_base64(std::str::from_utf8(text).ok()?)?;
        (!bytes.is_empty() && bytes.len() <= MAX_DIGEST_LEN).then(|| Digest::from_bytes(&bytes))
    }

    /// Parses hex of either case; the length must be even and at most
    /// `2 * MAX_DIGEST_LEN` characters.
    pub fn from_hex(hex: &str) -> Result<Self, Error> {
        digest_from_hex(hex.as_bytes())
            .filter(|d| !d.is_empty())
            .ok_or_else(|| Error::new(ErrorKind::InvalidHex))
    }
}

/// Each byte's value as a hex digit, 0xFF for a byte that is not one.
const HEX: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// The digest `hex` spells (an even number of hex digits, at most
/// [`MAX_DIGEST_LEN`] bytes' worth): a table lookup a digit, with no
/// branch a digit (a manifest holds millions of them).
pub(crate) fn digest_from_hex(hex: &[u8]) -> Option<Digest> {
    if !hex.len().is_multiple_of(2) || hex.len() > 2 * MAX_DIGEST_LEN {
        return None;
    }
    let mut d = Digest {
        bytes: [0; MAX_DIGEST_LEN],
        len: (hex.len() / 2) as u8,
        parts: 0,
    };
    let mut bad = 0u8;
    for (byte, pair) in d.bytes.iter_mut().zip(hex.chunks_exact(2)) {
        let [high, low] = pair else { return None };
        let (high, low) = (HEX[usize::from(*high)], HEX[usize::from(*low)]);
        bad |= high | low;
        *byte = (high << 4) | (low & 0x0F);
    }
    (bad & 0xF0 == 0).then_some(d)
}

/// The value of one hex digit of either case.
pub(crate) fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl FromStr for Digest {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Digest::from_hex(s)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        match self.parts() {
            Some(n) => write!(f, "-{n}"),
            None => Ok(()),
        }
    }
}

/// `VALUE-N` split into the value and N (1 or more, decimal, no sign or
/// leading zero); a value without `-` is of the whole input (0).
pub(crate) fn split_parts(text: &str) -> Option<(&str, u32)> {
    match text.rsplit_once('-') {
        None => Some((text, 0)),
        Some((value, n)) => {
            let canonical =
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !n.starts_with('0');
            let parts: u32 = n.parse().ok().filter(|_| canonical)?;
            Some((value, parts))
        }
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

/// Appends `bytes` in standard base64 (RFC 4648, `+/`, padded): digests
/// (`cksum --base64`) and the JSON `_base64` names alike.
pub(crate) fn push_base64(bytes: &[u8], out: &mut Vec<u8>) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for k in 0..4 {
            out.push(match k <= chunk.len() {
                true => ALPHABET[(n >> (18 - 6 * k) & 63) as usize],
                false => b'=',
            });
        }
    }
}

/// Standard base64 (RFC 4648, padded) to bytes.
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    decode_base64_into(text, &mut out).then_some(out)
}

/// [`decode_base64`] appended to `out`, which the caller has made room in
/// (`text.len() / 4 * 3` bytes: a path read from a list is reserved
/// fallibly, so that one memory cannot hold is an error, not an abort);
/// false, `out` in an unspecified state, if it is not strict base64.
pub(crate) fn decode_base64_into(text: &str, out: &mut Vec<u8>) -> bool {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let last = bytes.len() / 4;
    for (i, chunk) in bytes.chunks_exact(4).enumerate() {
        // Strict (RFC 4648 3.5): padding only at the very end, one or two
        // `=`, and the bits it drops must be zero (one spelling a value).
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || pad > 0 && i + 1 != last {
            return false;
        }
        let mut n = 0u32;
        for &c in chunk.iter().take(4 - pad) {
            match value(c) {
                Some(v) => n = (n << 6) | v,
                None => return false,
            }
        }
        n <<= 6 * pad as u32;
        let got = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let (kept, dropped) = got.split_at(3 - pad);
        if dropped.iter().any(|&b| b != 0) {
            return false;
        }
        out.extend_from_slice(kept);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_in_either_case() {
        let d = Digest::from_hex("00FFa5").unwrap();
        assert_eq!(d.as_bytes(), &[0x00, 0xff, 0xa5]);
        assert_eq!(d.to_hex(), "00ffa5");
        assert_eq!(d.to_string(), "00ffa5");
    }

    #[test]
    fn bad_hex_is_rejected() {
        for bad in ["", "0", "0g", "zz", &"00".repeat(65)] {
            assert!(Digest::from_hex(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn base64_is_rfc_4648_and_round_trips() {
        // RFC 4648 section 10's vectors.
        let cases: [(&[u8], &str); 6] = [
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ];
        for (bytes, text) in cases {
            let mut out = Vec::new();
            Digest::from_bytes(bytes).push_base64(&mut out);
            assert_eq!(out, text.as_bytes());
            assert_eq!(
                Digest::from_base64(text.as_bytes()).unwrap().as_bytes(),
                bytes
            );
        }
        // Stray bits under the padding, bad characters, lengths, padding.
        for bad in ["Zh==", "Zm9=", "Zg=", "Z===", "Zm9v!A==", "", "Zg==Zg=="] {
            assert!(Digest::from_base64(bad.as_bytes()).is_none(), "{bad:?}");
        }
    }
}
