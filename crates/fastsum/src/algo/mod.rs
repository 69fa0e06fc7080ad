//! The hash algorithms fastsum speaks, and the one place that dispatches
//! from the runtime [`Algorithm`] value into monomorphized hashing code.
//!
//! Each family lives in its own file and implements `StreamHasher` for
//! the well-kept crate that does the work (RustCrypto, `blake3`,
//! `xxhash-rust`, `crc-fast`). Callers write generic code over `H: StreamHasher` and
//! enter it through `dispatch!`, so the hot loop is
//! compiled once per algorithm with no virtual call per block.

mod blake;
mod crc;
mod dispatch;
mod dynamic;
mod joint;
mod legacy;
pub(crate) mod md5;
mod openssl;
internal! {
    /// Digests of parts (S3's ETag and composite checksums), reached as
    /// [`Algorithm::S3Etag`] and [`Algorithm::Composite`].
    mod parts;
}
mod rustcrypto;
mod xxh;

use std::fmt;
use std::str::FromStr;

use crate::digest::Digest;
use crate::error::{Error, ErrorKind};

pub(crate) use dispatch::{dispatch, hashers};
pub use dynamic::Hasher;
#[cfg(feature = "tree")]
pub(crate) use legacy::legacy_fields;
pub use parts::PartChecksum;

/// A hash algorithm, with its output length where that is variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// MD5 (RFC 1321), 128 bits: `md5sum`.
    Md5,
    /// SHA-1 (FIPS 180-4), 160 bits: `sha1sum`.
    Sha1,
    /// SHA-224, 224 bits: `sha224sum`.
    Sha224,
    /// SHA-256, 256 bits: `sha256sum`.
    Sha256,
    /// SHA-384, 384 bits: `sha384sum`.
    Sha384,
    /// SHA-512, 512 bits: `sha512sum`.
    Sha512,
    /// BLAKE2b (RFC 7693) with the given output length in bytes (1..=64;
    /// 64 is `b2sum`'s default).
    Blake2b {
        /// Output length in bytes.
        output_len: u8,
    },
    /// BLAKE3, 256 bits: `b3sum`.
    Blake3,
    /// XXH32, 32 bits: `xxhsum -H0`.
    Xxh32,
    /// XXH64, 64 bits: `xxhsum` (its default).
    Xxh64,
    /// XXH3, 64 bits: `xxhsum -H3`.
    Xxh3,
    /// XXH128, 128 bits: `xxhsum -H2`.
    Xxh128,
    /// SM3 (GB/T 32905-2016), 256 bits: `cksum -a sm3`.
    Sm3,
    /// SHA3-224 (FIPS 202): `cksum -a sha3 -l 224`.
    Sha3_224,
    /// SHA3-256 (FIPS 202): `cksum -a sha3 -l 256`.
    Sha3_256,
    /// SHA3-384 (FIPS 202): `cksum -a sha3 -l 384`.
    Sha3_384,
    /// SHA3-512 (FIPS 202): `cksum -a sha3 -l 512`.
    Sha3_512,
    /// The CRC-32 of zlib, gzip and PNG (ISO-HDLC, reflected), with the
    /// length beside it: `cksum -a crc32b`.
    Crc32b,
    /// The POSIX CRC-32 with the length appended: `cksum`. Its digest is
    /// the CRC and the byte count (see `legacy_fields`).
    Crc,
    /// The BSD 16-bit checksum: `sum -r`, `cksum -a bsd`.
    Bsd,
    /// The System V checksum: `sum -s`, `cksum -a sysv`.
    Sysv,
    /// The CRC-32 of zlib (as `crc32b`) as a plain digest, big-endian:
    /// S3's `CRC32` (base64 of these bytes).
    Crc32,
    /// CRC-32C (Castagnoli), big-endian: S3's `CRC32C`.
    Crc32c,
    /// CRC-64/NVME, big-endian: S3's `CRC64NVME` (its default checksum).
    Crc64Nvme,
    /// S3's ETag of an upload in parts of `part_size` bytes: the MD5 of
    /// the parts' binary MD5s, and `-N` (N parts); input of one part (or
    /// none) gives its plain MD5, as a single-part upload has
    /// (`parts`).
    S3Etag {
        /// Bytes a part (the last one may be shorter); never 0.
        part_size: u64,
    },
    /// S3's composite checksum of an upload in parts of `part_size`
    /// bytes: the checksum of the parts' binary checksums, and `-N`;
    /// input of one part (or none) gives the plain checksum (`parts`).
    Composite {
        /// The checksum of each part and of the parts' checksums.
        of: PartChecksum,
        /// Bytes a part (the last one may be shorter); never 0.
        part_size: u64,
    },
    /// Every digest a list of several gives a file, as one: the BLAKE3 of
    /// the members' digests one after another, in [`Algorithm::ALL`]'s
    /// order. What `diff`, `contained`, `audit` and `scrub` compare a
    /// list of several digests a file by, so that a file is the same only
    /// when each of its digests agrees (an MD5 collision beside an XXH128,
    /// the SHAttered pair beside an MD5). Made by [`Algorithm::joint`].
    Joint {
        /// Bit `i` set: [`Algorithm::ALL`]`[i]` is a member (BLAKE2b's
        /// bit: one or more BLAKE2b lengths, in `blake2b`).
        set: u32,
        /// Bit `n - 1` set: BLAKE2b of `n` bytes is a member (a list may
        /// give several lengths; each is compared, as `-c` checks each).
        blake2b: u64,
    },
}

impl Algorithm {
    /// BLAKE2b-512, as `b2sum` computes by default.
    pub const BLAKE2B: Algorithm = Algorithm::Blake2b { output_len: 64 };

    /// S3's ETag for the part size the AWS CLI and boto3 upload with
    /// (`parts::DEFAULT_PART_SIZE`, 8 MiB).
    pub const S3ETAG: Algorithm = Algorithm::S3Etag {
        part_size: parts::DEFAULT_PART_SIZE,
    };

    /// Every algorithm, in the order they are listed to users.
    pub const ALL: [Algorithm; 25] = [
        Algorithm::Md5,
        Algorithm::Sha1,
        Algorithm::Sha224,
        Algorithm::Sha256,
        Algorithm::Sha384,
        Algorithm::Sha512,
        Algorithm::BLAKE2B,
        Algorithm::Blake3,
        Algorithm::Xxh32,
        Algorithm::Xxh64,
        Algorithm::Xxh3,
        Algorithm::Xxh128,
        Algorithm::Sm3,
        Algorithm::Sha3_224,
        Algorithm::Sha3_256,
        Algorithm::Sha3_384,
        Algorithm::Sha3_512,
        Algorithm::Crc32,
        Algorithm::Crc32c,
        Algorithm::Crc64Nvme,
        Algorithm::S3ETAG,
        Algorithm::Crc,
        Algorithm::Crc32b,
        Algorithm::Bsd,
        Algorithm::Sysv,
    ];

    /// The GNU coreutils tool that computes it without options
    /// (`md5sum`, `sha256sum`, `b2sum` for 512-bit BLAKE2b), if one does.
    pub fn gnu_tool(self) -> Option<&'static str> {
        Some(match self {
            Algorithm::Md5 => "md5sum",
            Algorithm::Sha1 => "sha1sum",
            Algorithm::Sha224 => "sha224sum",
            Algorithm::Sha256 => "sha256sum",
            Algorithm::Sha384 => "sha384sum",
            Algorithm::Sha512 => "sha512sum",
            Algorithm::Blake2b { output_len: 64 } => "b2sum",
            _ => return None,
        })
    }

    /// Whether coreutils' `cksum -a` computes it as a digest, with a tagged
    /// line `cksum -c` reads (MD5, SHA-1, SHA-2, SHA-3, BLAKE2b, SM3; not
    /// the CRCs, BSD and SysV sums, nor BLAKE3 and xxHash).
    pub fn is_coreutils_digest(self) -> bool {
        self.gnu_tool().is_some()
            || self.is_sha3()
            || matches!(self, Algorithm::Blake2b { .. } | Algorithm::Sm3)
    }

    /// SHA3-224, -256, -384 or -512.
    pub fn is_sha3(self) -> bool {
        matches!(
            self,
            Algorithm::Sha3_224 | Algorithm::Sha3_256 | Algorithm::Sha3_384 | Algorithm::Sha3_512
        )
    }

    /// The name fastsum uses for this algorithm (`md5`, `blake2b`, `xxh128` ...);
    /// BLAKE2b with a short output is `blake2b-256` and the like.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Md5 => "md5",
            Algorithm::Sha1 => "sha1",
            Algorithm::Sha224 => "sha224",
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha384 => "sha384",
            Algorithm::Sha512 => "sha512",
            Algorithm::Blake2b { .. } => "blake2b",
            Algorithm::Blake3 => "blake3",
            Algorithm::Xxh32 => "xxh32",
            Algorithm::Xxh64 => "xxh64",
            Algorithm::Xxh3 => "xxh3",
            Algorithm::Xxh128 => "xxh128",
            Algorithm::Sm3 => "sm3",
            Algorithm::Sha3_224 => "sha3-224",
            Algorithm::Sha3_256 => "sha3-256",
            Algorithm::Sha3_384 => "sha3-384",
            Algorithm::Sha3_512 => "sha3-512",
            Algorithm::Crc => "crc",
            Algorithm::Crc32b => "crc32b",
            Algorithm::Bsd => "bsd",
            Algorithm::Sysv => "sysv",
            Algorithm::Crc32 => "crc32",
            Algorithm::Crc32c => "crc32c",
            Algorithm::Crc64Nvme => "crc64nvme",
            Algorithm::S3Etag { .. } => "s3etag",
            Algorithm::Composite { of, .. } => of.algorithm().name(),
            Algorithm::Joint { .. } => "joint",
        }
    }

    /// The label the reference tools print in BSD (`--tag`) lines:
    /// `MD5`, `SHA256`, `BLAKE2b`, `BLAKE3`, `XXH64` ...
    pub fn tag(self) -> &'static str {
        match self {
            Algorithm::Md5 => "MD5",
            Algorithm::Sha1 => "SHA1",
            Algorithm::Sha224 => "SHA224",
            Algorithm::Sha256 => "SHA256",
            Algorithm::Sha384 => "SHA384",
            Algorithm::Sha512 => "SHA512",
            Algorithm::Blake2b { .. } => "BLAKE2b",
            Algorithm::Blake3 => "BLAKE3",
            Algorithm::Xxh32 => "XXH32",
            Algorithm::Xxh64 => "XXH64",
            Algorithm::Xxh3 => "XXH3",
            Algorithm::Xxh128 => "XXH128",
            Algorithm::Sm3 => "SM3",
            Algorithm::Sha3_224 => "SHA3-224",
            Algorithm::Sha3_256 => "SHA3-256",
            Algorithm::Sha3_384 => "SHA3-384",
            Algorithm::Sha3_512 => "SHA3-512",
            Algorithm::Crc => "CRC",
            Algorithm::Crc32b => "CRC32B",
            Algorithm::Bsd => "BSD",
            Algorithm::Sysv => "SYSV",
            Algorithm::Crc32 => "CRC32",
            Algorithm::Crc32c => "CRC32C",
            Algorithm::Crc64Nvme => "CRC64NVME",
            Algorithm::S3Etag { .. } => "S3ETAG",
            Algorithm::Composite { of, .. } => of.algorithm().tag(),
            Algorithm::Joint { .. } => "JOINT",
        }
    }

    /// The length of this algorithm's digest in bytes.
    pub fn output_len(self) -> usize {
        match self {
            Algorithm::Md5 => 16,
            Algorithm::Sha1 => 20,
            Algorithm::Sha224 => 28,
            Algorithm::Sha256 => 32,
            Algorithm::Sha384 => 48,
            Algorithm::Sha512 => 64,
            Algorithm::Blake2b { output_len } => output_len as usize,
            Algorithm::Blake3 => 32,
            Algorithm::Xxh32 => 4,
            Algorithm::Xxh64 | Algorithm::Xxh3 => 8,
            Algorithm::Xxh128 => 16,
            Algorithm::Sm3 => 32,
            Algorithm::Sha3_224 => 28,
            Algorithm::Sha3_256 => 32,
            Algorithm::Sha3_384 => 48,
            Algorithm::Sha3_512 => 64,
            // The checksum, then the byte count (8 bytes).
            Algorithm::Crc | Algorithm::Crc32b => 12,
            Algorithm::Bsd | Algorithm::Sysv => 10,
            Algorithm::Crc32 | Algorithm::Crc32c => 4,
            Algorithm::Crc64Nvme => 8,
            Algorithm::S3Etag { .. } => 16,
            Algorithm::Composite { of, .. } => of.algorithm().output_len(),
            Algorithm::Joint { .. } => 32,
        }
    }

    /// For a digest of parts ([`Algorithm::S3Etag`],
    /// [`Algorithm::Composite`]): the algorithm of each part and the part
    /// size. `None` for the others.
    pub fn part_layout(self) -> Option<(Algorithm, u64)> {
        match self {
            Algorithm::S3Etag { part_size } => Some((Algorithm::Md5, part_size)),
            Algorithm::Composite { of, part_size } => Some((of.algorithm(), part_size)),
            _ => None,
        }
    }

    /// This algorithm over parts of `part_size` bytes, as S3 keeps it for
    /// a multipart upload: MD5 (or `s3etag`) gives the ETag, CRC-32,
    /// CRC-32C, SHA-1 and SHA-256 their composite checksums. `None` for
    /// the others (CRC-64/NVME is kept of whole objects only).
    pub fn in_parts(self, part_size: u64) -> Option<Algorithm> {
        let part_size = (part_size > 0).then_some(part_size)?;
        match self {
            Algorithm::Md5 | Algorithm::S3Etag { .. } => Some(Algorithm::S3Etag { part_size }),
            Algorithm::Composite { of, .. } => Some(Algorithm::Composite { of, part_size }),
            other => PartChecksum::of(other).map(|of| Algorithm::Composite { of, part_size }),
        }
    }

    /// True for `cksum`'s and `sum`'s checksums (crc, crc32b, bsd, sysv):
    /// printed as numbers with the size (see `legacy_fields`), never
    /// checked with `-c`.
    pub fn is_legacy(self) -> bool {
        matches!(
            self,
            Algorithm::Crc | Algorithm::Crc32b | Algorithm::Bsd | Algorithm::Sysv
        )
    }

    /// The one algorithm whose digest is every one of `members`' at once
    /// ([`Algorithm::Joint`]), or the member itself where they name one.
    /// `None` for none, and where one is a digest of parts (S3's ETag, a
    /// composite checksum) or another joint one.
    pub fn joint(members: &[Algorithm]) -> Option<Algorithm> {
        let (mut set, mut blake2b) = (0u32, 0u64);
        for member in members {
            match *member {
                Algorithm::Blake2b {
                    output_len: output_len @ 1..=64,
                } => {
                    set |= 1 << JOINT_BLAKE2B_AT;
                    blake2b |= 1 << (output_len - 1);
                }
                m if m.part_layout().is_some() || m == Algorithm::S3ETAG => return None,
                m => set |= 1 << Algorithm::ALL.iter().position(|a| *a == m)?,
            }
        }
        let joint = Algorithm::Joint { set, blake2b };
        match joint.members().count() {
            0 => None,
            1 => joint.members().next(),
            _ => Some(joint),
        }
    }

    /// The algorithms a digest of this one is made of: a joint one's
    /// members in [`Algorithm::ALL`]'s order, any other itself.
    /// A joint one's BLAKE2b members come in the order of their lengths.
    pub fn members(self) -> impl Iterator<Item = Algorithm> {
        let (set, blake2b) = match self {
            Algorithm::Joint { set, blake2b } => (set, blake2b),
            _ => (0, 0),
        };
        let own = (!matches!(self, Algorithm::Joint { .. })).then_some(self);
        let joined = Algorithm::ALL
            .into_iter()
            .enumerate()
            .filter(move |(i, _)| *i < 32 && set & (1 << i) != 0)
            .flat_map(move |(i, a)| {
                let one = (i != JOINT_BLAKE2B_AT).then_some(a);
                // The 64 lengths are looked at for BLAKE2b's place only.
                let blake2bs = (i == JOINT_BLAKE2B_AT)
                    .then_some(blake2b)
                    .into_iter()
                    .flat_map(|mask| (1..=64u8).filter(move |n| mask & (1 << (n - 1)) != 0))
                    .map(|output_len| Algorithm::Blake2b { output_len });
                one.into_iter().chain(blake2bs)
            });
        own.into_iter().chain(joined)
    }

    /// The joint digest ([`Algorithm::Joint`]) of the members' digests,
    /// given in [`Algorithm::members`]' order: the one place both a list's
    /// digests and a file's are joined.
    pub fn joined<'a>(digests: impl IntoIterator<Item = &'a Digest>) -> Digest {
        let mut hasher = ::blake3::Hasher::new();
        for digest in digests {
            hasher.update(digest.as_bytes());
        }
        Digest::from_bytes(hasher.finalize().as_bytes())
    }

    /// The valid names, comma separated, for error messages.
    pub fn valid_names() -> String {
        Algorithm::ALL
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Hashes a byte slice.
    ///
    /// ```
    /// use fastsum::Algorithm;
    /// assert_eq!(Algorithm::Md5.hash_bytes(b"abc").to_hex(), "900150983cd24fb0d6963f7d28e17f72");
    /// ```
    pub fn hash_bytes(self, bytes: &[u8]) -> Digest {
        crate::algo::dispatch!(self, H => H::oneshot(self, bytes))
    }
}

/// BLAKE2b's place in [`Algorithm::ALL`]: its bit in a joint set.
const JOINT_BLAKE2B_AT: usize = 6;
const _: () = assert!(matches!(
    Algorithm::ALL[JOINT_BLAKE2B_AT],
    Algorithm::Blake2b { .. }
));

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Algorithm::Blake2b { output_len } if output_len != 64 => {
                write!(f, "blake2b-{}", u32::from(output_len) * 8)
            }
            Algorithm::S3Etag { .. } | Algorithm::Composite { .. }
                if *self != Algorithm::S3ETAG =>
            {
                let part_size = self.part_layout().map_or(0, |(_, size)| size);
                write!(f, "{}/{}", self.name(), parts::PartSize(part_size))
            }
            Algorithm::Joint { .. } => {
                let names: Vec<String> = self.members().map(|a| a.to_string()).collect();
                f.write_str(&names.join("+"))
            }
            a => f.write_str(a.name()),
        }
    }
}

impl FromStr for Algorithm {
    type Err = Error;

    /// Parses a name, case-insensitively: the names of [`Algorithm::name`],
    /// `blake2b-BITS` for a shorter BLAKE2b, and a few common aliases
    /// (`sha-256`, `b2`, `b3`, `xxh3_64`, `xxhash64`).
    fn from_str(s: &str) -> Result<Self, Error> {
        let unknown = || {
            Error::new(ErrorKind::UnknownAlgorithm {
                name: s.to_string(),
                valid: Algorithm::valid_names(),
            })
        };
        if let Some((name, size)) = s.split_once('/') {
            // `NAME/PART-SIZE`: a digest of parts (`s3etag/16MiB`, `crc32c/8MiB`).
            let whole: Algorithm = name.parse()?;
            let part_size = parts::parse_part_size(size).ok_or_else(unknown)?;
            return whole.in_parts(part_size).ok_or_else(unknown);
        }
        let lower = s.to_ascii_lowercase();
        let algorithm = match lower.as_str() {
            "md5" => Algorithm::Md5,
            "sha1" | "sha-1" => Algorithm::Sha1,
            "sha224" | "sha-224" => Algorithm::Sha224,
            "sha256" | "sha-256" => Algorithm::Sha256,
            "sha384" | "sha-384" => Algorithm::Sha384,
            "sha512" | "sha-512" => Algorithm::Sha512,
            "blake2b" | "blake2" | "b2" | "blake2b-512" => Algorithm::BLAKE2B,
            "blake3" | "b3" => Algorithm::Blake3,
            "xxh32" | "xxhash32" => Algorithm::Xxh32,
            "xxh64" | "xxhash64" => Algorithm::Xxh64,
            "xxh3" | "xxh3_64" | "xxh3-64" => Algorithm::Xxh3,
            "xxh128" | "xxh3_128" | "xxh3-128" => Algorithm::Xxh128,
            "sm3" => Algorithm::Sm3,
            "sha3-224" | "sha3_224" => Algorithm::Sha3_224,
            "sha3-256" | "sha3_256" | "sha3" => Algorithm::Sha3_256,
            "sha3-384" | "sha3_384" => Algorithm::Sha3_384,
            "sha3-512" | "sha3_512" => Algorithm::Sha3_512,
            "crc" | "cksum" => Algorithm::Crc,
            "crc32b" => Algorithm::Crc32b,
            "bsd" => Algorithm::Bsd,
            "sysv" => Algorithm::Sysv,
            "crc32" | "crc-32" => Algorithm::Crc32,
            "crc32c" | "crc-32c" => Algorithm::Crc32c,
            "crc64nvme" | "crc64-nvme" | "crc-64-nvme" => Algorithm::Crc64Nvme,
            "s3etag" | "s3-etag" | "etag" => Algorithm::S3ETAG,
            other => match other
                .strip_prefix("blake2b-")
                .and_then(|b| b.parse::<u32>().ok())
            {
                Some(bits) if bits % 8 == 0 && (8..=512).contains(&bits) => Algorithm::Blake2b {
                    output_len: (bits / 8) as u8,
                },
                _ => return Err(unknown()),
            },
        };
        Ok(algorithm)
    }
}

/// An incremental hash function: the interface generic hashing code is
/// written against. One implementation per algorithm family.
pub(crate) trait StreamHasher {
    /// A fresh state for `algorithm` (which must be one this type serves).
    fn new(algorithm: Algorithm) -> Self;
    /// Absorbs more input.
    fn update(&mut self, bytes: &[u8]);
    /// The digest of everything absorbed.
    fn finalize(self) -> Digest;
    /// The digest of `bytes` alone. Hashers whose library has a faster
    /// one-shot function than its streaming state override this (xxHash:
    /// 9-38% faster in `benches/hashing.rs`, `overhead_xxh3`).
    fn oneshot(algorithm: Algorithm, bytes: &[u8]) -> Digest
    where
        Self: Sized,
    {
        let mut hasher = Self::new(algorithm);
        hasher.update(bytes);
        hasher.finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(a.to_string().parse::<Algorithm>().unwrap(), a);
            assert_eq!(a.hash_bytes(b"").len(), a.output_len(), "{a}");
        }
        let short: Algorithm = "BLAKE2b-256".parse().unwrap();
        assert_eq!(short, Algorithm::Blake2b { output_len: 32 });
        assert_eq!(short.to_string(), "blake2b-256");
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = "crc16".parse::<Algorithm>().unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("crc16") && msg.contains("sha256") && msg.contains("xxh128"),
            "{msg}"
        );
        assert!("blake2b-12".parse::<Algorithm>().is_err());
        assert!("blake2b-1024".parse::<Algorithm>().is_err());
    }
}
