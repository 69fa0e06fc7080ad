//! The CRCs S3 keeps of objects: CRC-32 (zlib's), CRC-32C
//! (Castagnoli, iSCSI) and CRC-64/NVME (S3's default since 2025), as plain
//! digests: the CRC alone, big-endian, which is the byte order S3 sends
//! (`x-amz-checksum-crc32c` is the base64 of these bytes). All three
//! through `crc-fast`, which folds with PCLMULQDQ/VPCLMULQDQ on x86-64
//! and PMULL on aarch64 (and the CRC32 instructions for CRC-32C); figures
//! against `crc32fast` and zlib in docs/BENCHMARKS.md.
//!
//! `crc32b` (legacy.rs) is the same CRC-32 as `cksum -a crc32b` prints
//! it, in decimal with the size; `crc32` here is the digest alone.

use super::{Algorithm, StreamHasher};
use crate::digest::Digest;

/// Defines a `StreamHasher` over one `crc-fast` algorithm whose CRC is
/// `$bytes` bytes wide.
macro_rules! crc_hasher {
    ($(#[$doc:meta])* $name:ident, $crc:ident, $width:ty) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name(crc_fast::Digest);

        impl StreamHasher for $name {
            fn new(_: Algorithm) -> Self {
                $name(crc_fast::Digest::new(crc_fast::CrcAlgorithm::$crc))
            }
            #[inline]
            fn update(&mut self, bytes: &[u8]) {
                self.0.update(bytes);
            }
            fn finalize(self) -> Digest {
                // crc-fast returns every width in a u64.
                Digest::from_bytes(&(self.0.finalize() as $width).to_be_bytes())
            }
            fn oneshot(_: Algorithm, bytes: &[u8]) -> Digest {
                let crc = crc_fast::checksum(crc_fast::CrcAlgorithm::$crc, bytes);
                Digest::from_bytes(&(crc as $width).to_be_bytes())
            }
        }
    };
}

crc_hasher!(
    /// CRC-32/ISO-HDLC (zlib, gzip, PNG, S3's `CRC32`).
    Crc32,
    Crc32IsoHdlc,
    u32
);
crc_hasher!(
    /// CRC-32C (Castagnoli; iSCSI, ext4, S3's `CRC32C`).
    Crc32c,
    Crc32Iscsi,
    u32
);
crc_hasher!(
    /// CRC-64/NVME (S3's `CRC64NVME`, its default checksum).
    Crc64Nvme,
    Crc64Nvme,
    u64
);

#[cfg(test)]
mod tests {
    use super::*;

    /// A bit-at-a-time reflected CRC, independent of crc-fast: `poly` is
    /// the reflected polynomial, initial value and final XOR all ones.
    fn reflected(bytes: &[u8], poly: u64, width: u32) -> u64 {
        let mask = u64::MAX >> (64 - width);
        let mut crc = mask;
        for &b in bytes {
            crc ^= u64::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ poly
                } else {
                    crc >> 1
                };
            }
        }
        crc ^ mask
    }

    #[test]
    fn check_values_of_the_catalogue() {
        // The "check" of each in the CRC catalogue (reveng): the CRC of
        // "123456789".
        let check = b"123456789";
        assert_eq!(Algorithm::Crc32.hash_bytes(check).to_hex(), "cbf43926");
        assert_eq!(Algorithm::Crc32c.hash_bytes(check).to_hex(), "e3069283");
        assert_eq!(
            Algorithm::Crc64Nvme.hash_bytes(check).to_hex(),
            "ae8b14860a799888"
        );
        // The CRC of nothing is 0 for all three (all ones, complemented).
        for a in [Algorithm::Crc32, Algorithm::Crc32c, Algorithm::Crc64Nvme] {
            assert!(a.hash_bytes(b"").as_bytes().iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn crcs_match_the_bitwise_definition_in_any_split() {
        let data: Vec<u8> = (0..70_000u32).map(|i| (i * 31 + i / 7) as u8).collect();
        let cases = [
            (Algorithm::Crc32, 0xEDB8_8320, 32),
            (Algorithm::Crc32c, 0x82F6_3B78, 32),
            (Algorithm::Crc64Nvme, 0x9A6C_9329_AC4B_C9B5, 64),
        ];
        for (algorithm, poly, width) in cases {
            for len in [0, 1, 7, 16, 63, 64, 255, 256, 4095, 65_537, 70_000] {
                let want = reflected(&data[..len], poly, width);
                let whole = algorithm.hash_bytes(&data[..len]);
                let bytes = whole.as_bytes();
                let mut got = [0u8; 8];
                got[8 - bytes.len()..].copy_from_slice(bytes);
                assert_eq!(u64::from_be_bytes(got), want, "{algorithm} {len}");
                let mut split = crate::Hasher::new(algorithm);
                for piece in data[..len].chunks(999) {
                    split.update(piece);
                }
                assert_eq!(split.digest(), whole, "{algorithm} {len}");
            }
        }
    }
}
