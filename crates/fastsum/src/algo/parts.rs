//! Digests of parts, as S3 keeps them for a multipart upload:
//! the **multipart ETag** (the MD5 of the parts' binary MD5s, then `-N`)
//! and the **composite checksums** (CRC-32, CRC-32C, SHA-1, SHA-256,
//! SHA-512, XXH64, XXH3 or XXH128 of the parts' binary checksums, then
//! `-N`), computed from one read of the
//! input, cutting it into parts as it streams by.
//!
//! Two ways in:
//! * [`Algorithm::S3Etag`] and [`Algorithm::Composite`], with one part
//!   size, as any other algorithm (the CLI's `-a s3etag --part-size 8MiB`):
//!   input of one part (or none) gives the plain digest, as a single-part
//!   upload (`PutObject`) has;
//! * [`PartHasher`] and [`hash_reader`] for a layout S3
//!   reported (a part size, or each part's size from
//!   `GetObjectAttributes`): always the multipart form, `-1` included.
//!
//! S3 keeps CRC-64/NVME of whole objects only, and its "full object"
//! CRC-32 and CRC-32C of a multipart upload equal the plain CRC of the
//! whole object: those are [`Algorithm::Crc64Nvme`], [`Algorithm::Crc32`]
//! and [`Algorithm::Crc32c`] (AWS S3 User Guide, "Checking object
//! integrity": composite types CRC32, CRC32C, SHA1, SHA256; full-object
//! types CRC64NVME, CRC32, CRC32C).

use std::fmt;
use std::io::Read;

use super::{Algorithm, Hasher, StreamHasher};
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};

/// The part size `aws s3 cp` and boto3 upload with (s3transfer's
/// `multipart_chunksize` and `multipart_threshold`, both 8 MiB).
pub const DEFAULT_PART_SIZE: u64 = 8 << 20;

/// The checksums S3 keeps as composite values of parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PartChecksum {
    /// CRC-32 (zlib's): S3's `CRC32`.
    Crc32,
    /// CRC-32C: S3's `CRC32C`.
    Crc32c,
    /// SHA-1: S3's `SHA1`.
    Sha1,
    /// SHA-256: S3's `SHA256`.
    Sha256,
    /// SHA-512: S3's `SHA512`.
    Sha512,
    /// XXH64: S3's `XXHASH64`.
    Xxh64,
    /// XXH3 (64 bits): S3's `XXHASH3`.
    Xxh3,
    /// XXH3 of 128 bits: S3's `XXHASH128`.
    Xxh128,
}

impl PartChecksum {
    /// Every one, in the order they are listed to users.
    pub const ALL: [PartChecksum; 8] = [
        PartChecksum::Crc32,
        PartChecksum::Crc32c,
        PartChecksum::Sha1,
        PartChecksum::Sha256,
        PartChecksum::Sha512,
        PartChecksum::Xxh64,
        PartChecksum::Xxh3,
        PartChecksum::Xxh128,
    ];

    /// The algorithm of each part and of the whole.
    pub fn algorithm(self) -> Algorithm {
        match self {
            PartChecksum::Crc32 => Algorithm::Crc32,
            PartChecksum::Crc32c => Algorithm::Crc32c,
            PartChecksum::Sha1 => Algorithm::Sha1,
            PartChecksum::Sha256 => Algorithm::Sha256,
            PartChecksum::Sha512 => Algorithm::Sha512,
            PartChecksum::Xxh64 => Algorithm::Xxh64,
            PartChecksum::Xxh3 => Algorithm::Xxh3,
            PartChecksum::Xxh128 => Algorithm::Xxh128,
        }
    }

    /// The one whose algorithm is `algorithm`, if S3 keeps it composite.
    pub fn of(algorithm: Algorithm) -> Option<PartChecksum> {
        PartChecksum::ALL
            .into_iter()
            .find(|p| p.algorithm() == algorithm)
    }
}

/// How an upload was cut into parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartLayout<'a> {
    /// Parts of this many bytes, the last one shorter (what the AWS CLI,
    /// boto3 and the SDKs' transfer managers do). Never 0.
    Every(u64),
    /// Each part's size, in order (`GetObjectAttributes`' `ObjectParts`).
    Sizes(&'a [u64]),
}

impl PartLayout<'_> {
    /// The size of part `index` (from 0); `None` past the last listed.
    fn size(&self, index: u64) -> Option<u64> {
        match self {
            PartLayout::Every(size) => Some((*size).max(1)),
            PartLayout::Sizes(sizes) => sizes.get(usize::try_from(index).ok()?).copied(),
        }
    }
}

/// Cuts a stream into parts and hashes each, and the parts' digests.
#[derive(Clone)]
struct Cutter {
    of: Algorithm,
    part: Hasher,
    /// The digest of the parts' digests so far.
    outer: Hasher,
    /// Bytes in the part being hashed.
    in_part: u64,
    /// Parts closed.
    count: u64,
    /// The first part's digest (the whole, for input of one part).
    first: Option<Digest>,
    /// Bytes read past the last listed part (`PartLayout::Sizes`).
    overflow: bool,
    total: u64,
}

impl Cutter {
    fn new(of: Algorithm) -> Cutter {
        Cutter {
            of,
            part: Hasher::new(of),
            outer: Hasher::new(of),
            in_part: 0,
            count: 0,
            first: None,
            overflow: false,
            total: 0,
        }
    }

    fn update(&mut self, mut bytes: &[u8], layout: &PartLayout<'_>) {
        self.total += bytes.len() as u64;
        while !bytes.is_empty() {
            let Some(limit) = layout.size(self.count) else {
                self.overflow = true;
                return;
            };
            if self.in_part >= limit {
                // Closed only once more bytes come: input of exactly N
                // parts has N parts, not an empty N+1st.
                self.close();
                continue;
            }
            let room = usize::try_from(limit - self.in_part).unwrap_or(usize::MAX);
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            self.part.update(now);
            self.in_part += now.len() as u64;
            bytes = rest;
        }
    }

    fn close(&mut self) {
        let done = std::mem::replace(&mut self.part, Hasher::new(self.of));
        let digest = done.digest();
        self.outer.update(digest.as_bytes());
        self.first.get_or_insert(digest);
        self.count += 1;
        self.in_part = 0;
    }

    /// Closes the last part (an empty input is one empty part); the
    /// digest of the parts' digests and the number of parts.
    fn finish(mut self) -> (Cutter, Digest) {
        if self.in_part > 0 || self.count == 0 {
            self.close();
        }
        // More parts than a u32 holds need a part size of a few bytes on
        // gigabytes; S3 allows 10,000.
        let parts = u32::try_from(self.count).unwrap_or(u32::MAX);
        let digest = self.outer.digest().with_parts(parts);
        (self, digest)
    }
}

/// The `StreamHasher` of [`Algorithm::S3Etag`] and
/// [`Algorithm::Composite`]: parts of one size; input of one part gives
/// the plain digest, as a single-part upload has.
#[derive(Clone)]
pub(crate) struct Parts {
    cutter: Cutter,
    part_size: u64,
}

impl StreamHasher for Parts {
    fn new(algorithm: Algorithm) -> Self {
        let (of, part_size) = algorithm.part_layout().unwrap_or((algorithm, u64::MAX));
        Parts {
            cutter: Cutter::new(of),
            part_size,
        }
    }
    fn update(&mut self, bytes: &[u8]) {
        self.cutter
            .update(bytes, &PartLayout::Every(self.part_size));
    }
    fn finalize(self) -> Digest {
        let (cutter, digest) = self.cutter.finish();
        match (cutter.count, cutter.first) {
            (1, Some(whole)) => whole,
            _ => digest,
        }
    }
}

/// An incremental digest of parts in a given layout, always in the
/// multipart form (`-N`, `-1` included): what S3 holds for an object
/// uploaded in those parts.
///
/// ```
/// use fastsum::algo::parts::{PartHasher, PartLayout};
/// use fastsum::Algorithm;
/// let mut h = PartHasher::new(Algorithm::Md5, PartLayout::Every(3));
/// h.update(b"abcd");
/// let etag = h.finish().unwrap();
/// let parts = [Algorithm::Md5.hash_bytes(b"abc"), Algorithm::Md5.hash_bytes(b"d")];
/// let joined: Vec<u8> = parts.iter().flat_map(|d| d.as_bytes().to_vec()).collect();
/// assert_eq!(etag.to_hex(), format!("{}-2", Algorithm::Md5.hash_bytes(&joined).to_hex()));
/// ```
#[derive(Clone)]
pub struct PartHasher<'a> {
    cutter: Cutter,
    layout: PartLayout<'a>,
}

impl<'a> PartHasher<'a> {
    /// A fresh digest of parts hashed with `of` (MD5 for an ETag, or a
    /// [`PartChecksum`]'s algorithm; any algorithm works).
    pub fn new(of: Algorithm, layout: PartLayout<'a>) -> PartHasher<'a> {
        PartHasher {
            cutter: Cutter::new(of),
            layout,
        }
    }

    /// Absorbs more input.
    pub fn update(&mut self, bytes: &[u8]) {
        self.cutter.update(bytes, &self.layout);
    }

    /// The digest of the parts' digests, with their number.
    ///
    /// # Errors
    /// [`ErrorKind::PartsMismatch`] when the input does not fill the
    /// listed sizes exactly.
    pub fn finish(self) -> std::result::Result<Digest, ErrorKind> {
        let layout = self.layout;
        let (cutter, digest) = self.cutter.finish();
        if let PartLayout::Sizes(sizes) = layout {
            let listed: u64 = sizes.iter().sum();
            if cutter.overflow || cutter.total != listed || cutter.count != sizes.len() as u64 {
                return Err(ErrorKind::PartsMismatch {
                    listed,
                    read: cutter.total,
                });
            }
        }
        Ok(digest)
    }
}

/// The digest of `reader`'s bytes cut into parts (see [`PartHasher`]),
/// read through a buffer of 1 MiB. For a file named by outside input,
/// open it with `fastsum::read::open_regular` (regular files only, never
/// waiting) and hand it here.
pub fn hash_reader(of: Algorithm, layout: PartLayout<'_>, mut reader: impl Read) -> Result<Digest> {
    let mut hasher = PartHasher::new(of, layout);
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => hasher.update(buffer.get(..n).unwrap_or_default()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::new(e)),
        }
    }
    hasher.finish().map_err(Error::new)
}

/// A part size as people write it: `8MiB`, `8M`, `8MB` (1024-based, as
/// the AWS CLI reads `multipart_chunksize`), `5242880`, `64KiB`, `1G`.
/// `None` for 0 or anything else.
pub fn parse_part_size(text: &str) -> Option<u64> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    let n: u64 = number.parse().ok()?;
    n.checked_mul(1 << shift).filter(|&size| size > 0)
}

/// A part size as fastsum writes it: `8MiB`, `64KiB`, `1GiB`, or the
/// bytes when it is not a whole number of KiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartSize(pub u64);

impl fmt::Display for PartSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")];
        match units
            .iter()
            .find(|(shift, _)| self.0 != 0 && self.0.is_multiple_of(1u64 << shift))
        {
            Some((shift, unit)) => write!(f, "{}{unit}", self.0 >> shift),
            None => write!(f, "{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests;
