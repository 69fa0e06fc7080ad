//! A local file's digest in the form S3 gave one: the same algorithm, the
//! whole file or its parts at the object's part sizes, from one read.

use std::io::{self, Read};
use std::path::Path;

use super::claim::{Claim, Kind};
use crate::algo::{Algorithm, Hasher};

/// One running digest of a kind S3 keeps.
#[allow(clippy::large_enum_variant)] // two or three of them a file, on the stack.
enum Running {
    Hash(Hasher),
    Crc(crc_fast::Digest, usize),
}

impl Running {
    fn new(kind: Kind) -> Running {
        use crc_fast::CrcAlgorithm as C;
        match kind {
            Kind::Crc64Nvme => Running::Crc(crc_fast::Digest::new(C::Crc64Nvme), 8),
            Kind::Crc32c => Running::Crc(crc_fast::Digest::new(C::Crc32Iscsi), 4),
            Kind::Crc32 => Running::Crc(crc_fast::Digest::new(C::Crc32IsoHdlc), 4),
            Kind::Sha256 => Running::Hash(Hasher::new(Algorithm::Sha256)),
            Kind::Sha1 => Running::Hash(Hasher::new(Algorithm::Sha1)),
            Kind::Md5 => Running::Hash(Hasher::new(Algorithm::Md5)),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Running::Hash(h) => h.update(bytes),
            Running::Crc(c, _) => c.update(bytes),
        }
    }

    /// The digest's bytes (a CRC big-endian, as S3 encodes it).
    fn finish(&self) -> Vec<u8> {
        match self {
            Running::Hash(h) => h.digest().as_bytes().to_vec(),
            Running::Crc(c, width) => c.finalize().to_be_bytes()[8 - width..].to_vec(),
        }
    }
}

/// The digest of `bytes` of `kind`.
pub(crate) fn digest_of(kind: Kind, bytes: &[u8]) -> Vec<u8> {
    let mut running = Running::new(kind);
    running.update(bytes);
    running.finish()
}

/// What `reader` digests to in the layout of `claim` (whole, or the
/// digest of its parts' digests); `None` for an opaque claim.
pub(crate) fn digest_like(claim: &Claim, reader: &mut dyn Read) -> io::Result<Option<Vec<u8>>> {
    let (kind, parts): (Kind, &[u64]) = match claim {
        Claim::Whole { kind, .. } => (*kind, &[]),
        Claim::Parts { kind, parts, .. } => (*kind, parts),
        Claim::Opaque(_) => return Ok(None),
    };
    let mut buffer = vec![0u8; 256 * 1024];
    let mut whole = Running::new(kind);
    let mut part_digests = Vec::new();
    let mut part = Running::new(kind);
    let mut index = 0;
    let mut left_in_part = parts.first().copied().unwrap_or(u64::MAX);
    let mut beyond = false;
    loop {
        let want = usize::try_from(left_in_part).map_or(buffer.len(), |l| l.min(buffer.len()));
        let n = match reader.read(&mut buffer[..want.max(1)]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let bytes = &buffer[..n];
        if parts.is_empty() {
            whole.update(bytes);
            continue;
        }
        beyond |= index == parts.len();
        part.update(bytes);
        left_in_part = left_in_part.saturating_sub(n as u64);
        if left_in_part == 0 && index < parts.len() {
            part_digests.extend(part.finish());
            part = Running::new(kind);
            index += 1;
            left_in_part = parts.get(index).copied().unwrap_or(u64::MAX);
        }
    }
    if parts.is_empty() {
        return Ok(Some(whole.finish()));
    }
    if index != parts.len() || beyond {
        // Shorter or longer than the parts say: not the same bytes.
        return Ok(Some(Vec::new()));
    }
    Ok(Some(digest_of(kind, &part_digests)))
}

/// Whether the file at `path` has the bytes `claim` describes (`None`:
/// the claim is opaque).
pub(crate) fn file_matches(claim: &Claim, path: &Path) -> crate::error::Result<Option<bool>> {
    let mut file = crate::fs::regular::open_regular(path)?;
    let digest = digest_like(claim, &mut file).map_err(|e| {
        crate::error::Error::with_path(path.to_path_buf(), crate::error::ErrorKind::Io(e))
    })?;
    Ok(digest.map(|d| match claim {
        Claim::Whole { value, .. } | Claim::Parts { value, .. } => *value == d,
        Claim::Opaque(_) => false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crcs_are_zlibs_and_castagnolis() {
        // zlib.crc32(b"123456789") == 0xcbf43926; CRC-32C's check 0xe3069283;
        // CRC-64/NVME's check 0xae8b14860a799888 (the catalogue's).
        assert_eq!(
            digest_of(Kind::Crc32, b"123456789"),
            0xcbf4_3926u32.to_be_bytes()
        );
        assert_eq!(
            digest_of(Kind::Crc32c, b"123456789"),
            0xe306_9283u32.to_be_bytes()
        );
        assert_eq!(
            digest_of(Kind::Crc64Nvme, b"123456789"),
            0xae8b_1486_0a79_9888u64.to_be_bytes()
        );
    }

    #[test]
    fn a_multipart_etag_is_the_md5_of_the_part_md5s() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let mut parts = digest_of(Kind::Md5, &data[..4096]);
        parts.extend(digest_of(Kind::Md5, &data[4096..8192]));
        parts.extend(digest_of(Kind::Md5, &data[8192..]));
        let expected = digest_of(Kind::Md5, &parts);
        let claim = Claim::Parts {
            kind: Kind::Md5,
            value: expected.clone(),
            parts: vec![4096, 4096, 10_000 - 8192],
        };
        let got = digest_like(&claim, &mut &data[..]).unwrap().unwrap();
        assert_eq!(got, expected);
        let short = digest_like(&claim, &mut &data[..9000]).unwrap().unwrap();
        assert_ne!(short, expected);
    }
}
