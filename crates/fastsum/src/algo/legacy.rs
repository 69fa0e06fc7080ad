//! The checksums older than digests, as `cksum` and `sum` compute them:
//! the POSIX CRC-32 with the length appended (`cksum`'s default), the BSD
//! 16-bit rotating sum (`sum -r`) and the System V sum (`sum -s`).
//!
//! Their lines carry the input's size beside the checksum (`CRC SIZE`,
//! `SUM BLOCKS`), so the [`Digest`] of each is the checksum followed by
//! the byte count as 8 big-endian bytes: two inputs are equal in these
//! terms exactly when their digests are. [`legacy_fields`] turns one back
//! into the text the tools print.

use super::{Algorithm, StreamHasher};
use crate::digest::Digest;

/// POSIX `cksum`: CRC-32 (polynomial 0x04C11DB7, not reflected) over the
/// bytes and then the length, least significant byte first and no more
/// bytes than it needs, complemented. Through `crc-fast`, which folds with
/// PCLMULQDQ (VPCLMULQDQ where present) on x86-64 and PMULL on aarch64, as
/// coreutils' own `cksum_pclmul` does.
#[derive(Clone)]
pub struct Crc {
    state: crc_fast::Digest,
    len: u64,
}

impl StreamHasher for Crc {
    fn new(_: Algorithm) -> Self {
        Crc {
            state: crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Cksum),
            len: 0,
        }
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.state.update(bytes);
        self.len += bytes.len() as u64;
    }
    fn finalize(mut self) -> Digest {
        let mut n = self.len;
        while n > 0 {
            self.state.update(&[n as u8]);
            n >>= 8;
        }
        let crc = self.state.finalize() as u32;
        with_length(&crc.to_be_bytes(), self.len)
    }
}

/// `cksum -a crc32b`: the CRC-32 of zlib, gzip and PNG (ISO-HDLC:
/// polynomial 0x04C11DB7 reflected, initial and final XOR 0xFFFFFFFF),
/// over the bytes only, through `crc-fast` (PCLMULQDQ, as coreutils'
/// `crc32_update` uses). Printed as `cksum` prints its CRC: the checksum
/// and the byte count.
#[derive(Clone)]
pub struct Crc32b {
    state: crc_fast::Digest,
    len: u64,
}

impl StreamHasher for Crc32b {
    fn new(_: Algorithm) -> Self {
        Crc32b {
            state: crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32IsoHdlc),
            len: 0,
        }
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.state.update(bytes);
        self.len += bytes.len() as u64;
    }
    fn finalize(self) -> Digest {
        let crc = self.state.finalize() as u32;
        with_length(&crc.to_be_bytes(), self.len)
    }
}

/// BSD `sum`: a 16-bit checksum rotated right by one bit before each byte
/// is added.
#[derive(Clone, Default)]
pub struct Bsd {
    sum: u16,
    len: u64,
}

impl StreamHasher for Bsd {
    fn new(_: Algorithm) -> Self {
        Bsd::default()
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        let mut sum = self.sum;
        for &b in bytes {
            sum = sum.rotate_right(1).wrapping_add(u16::from(b));
        }
        self.sum = sum;
        self.len += bytes.len() as u64;
    }
    fn finalize(self) -> Digest {
        with_length(&self.sum.to_be_bytes(), self.len)
    }
}

/// System V `sum`: the bytes added into 32 bits (wrapping), folded twice
/// into 16.
#[derive(Clone, Default)]
pub struct Sysv {
    sum: u32,
    len: u64,
}

impl StreamHasher for Sysv {
    fn new(_: Algorithm) -> Self {
        Sysv::default()
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        // Bytes summed in u64 lanes the compiler vectorises; 2^56 bytes
        // before a lane could overflow, and each block is far shorter.
        let mut total: u64 = 0;
        for chunk in bytes.chunks(1 << 20) {
            total += chunk.iter().map(|&b| u64::from(b)).sum::<u64>();
        }
        self.sum = self.sum.wrapping_add(total as u32);
        self.len += bytes.len() as u64;
    }
    fn finalize(self) -> Digest {
        let r = (self.sum & 0xffff) + (self.sum >> 16);
        let checksum = (r & 0xffff) + (r >> 16);
        with_length(&(checksum as u16).to_be_bytes(), self.len)
    }
}

fn with_length(checksum: &[u8], len: u64) -> Digest {
    let mut bytes = [0u8; 12];
    bytes[..checksum.len()].copy_from_slice(checksum);
    bytes[checksum.len()..checksum.len() + 8].copy_from_slice(&len.to_be_bytes());
    Digest::from_bytes(&bytes[..checksum.len() + 8])
}

/// What `cksum`/`sum` print for a legacy digest, before the name:
/// `CRC SIZE` for crc, `%05d %5s` (checksum, 1 KiB blocks rounded up) for
/// bsd, `%d %s` (checksum, 512-byte blocks rounded up) for sysv. `None` for
/// the digest algorithms.
#[cfg(any(test, feature = "tree"))]
pub fn legacy_fields(algorithm: Algorithm, digest: &Digest) -> Option<String> {
    let bytes = digest.as_bytes();
    let split = bytes.len().checked_sub(8)?;
    let (checksum, len) = bytes.split_at(split);
    let len = u64::from_be_bytes(len.try_into().ok()?);
    let blocks = |size: u64| len / size + u64::from(len % size != 0);
    match algorithm {
        Algorithm::Crc | Algorithm::Crc32b => {
            let crc = u32::from_be_bytes(checksum.try_into().ok()?);
            Some(format!("{crc} {len}"))
        }
        Algorithm::Bsd => {
            let sum = u16::from_be_bytes(checksum.try_into().ok()?);
            Some(format!("{sum:05} {:>5}", blocks(1024)))
        }
        Algorithm::Sysv => {
            let sum = u16::from_be_bytes(checksum.try_into().ok()?);
            Some(format!("{sum} {}", blocks(512)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bit-at-a-time CRC as POSIX describes it, independent of crc-fast.
    fn posix_cksum(bytes: &[u8]) -> u32 {
        let mut crc: u32 = 0;
        let mut feed = |b: u8| {
            crc ^= u32::from(b) << 24;
            for _ in 0..8 {
                crc = if crc & 0x8000_0000 != 0 {
                    (crc << 1) ^ 0x04C1_1DB7
                } else {
                    crc << 1
                };
            }
        };
        for &b in bytes {
            feed(b);
        }
        let mut n = bytes.len() as u64;
        while n > 0 {
            feed(n as u8);
            n >>= 8;
        }
        !crc
    }

    #[test]
    fn crc_matches_the_posix_definition_in_any_split() {
        let data: Vec<u8> = (0..70_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for len in [0, 1, 2, 15, 16, 63, 64, 255, 256, 4095, 65_537, 70_000] {
            let want = posix_cksum(&data[..len]);
            let whole = Algorithm::Crc.hash_bytes(&data[..len]);
            let fields = legacy_fields(Algorithm::Crc, &whole).unwrap();
            assert_eq!(fields, format!("{want} {len}"));
            let mut split = Crc::new(Algorithm::Crc);
            for piece in data[..len].chunks(1000) {
                split.update(piece);
            }
            assert_eq!(split.finalize(), whole, "{len}");
        }
        // `printf 'hello\n' | cksum` with GNU coreutils: 3015617425 6.
        assert_eq!(
            legacy_fields(Algorithm::Crc, &Algorithm::Crc.hash_bytes(b"hello\n")).unwrap(),
            "3015617425 6"
        );
    }

    #[test]
    fn sums_as_sum_prints_them() {
        // `printf 'hello\n' | sum` and `| sum -s` with GNU coreutils.
        let d = Algorithm::Bsd.hash_bytes(b"hello\n");
        assert_eq!(legacy_fields(Algorithm::Bsd, &d).unwrap(), "36979     1");
        let d = Algorithm::Sysv.hash_bytes(b"hello\n");
        assert_eq!(legacy_fields(Algorithm::Sysv, &d).unwrap(), "542 1");
        let empty = Algorithm::Bsd.hash_bytes(b"");
        assert_eq!(
            legacy_fields(Algorithm::Bsd, &empty).unwrap(),
            "00000     0"
        );
        // Block counts round up: 1025 bytes are 2 KiB blocks, 3 sectors.
        let d = Algorithm::Bsd.hash_bytes(&[0u8; 1025]);
        assert!(legacy_fields(Algorithm::Bsd, &d)
            .unwrap()
            .ends_with("     2"));
        let d = Algorithm::Sysv.hash_bytes(&[0u8; 1025]);
        assert_eq!(legacy_fields(Algorithm::Sysv, &d).unwrap(), "0 3");
        assert_eq!(legacy_fields(Algorithm::Md5, &d), None);
    }
}
