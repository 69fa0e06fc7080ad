//! A local file's digest in the form S3 gave one: the same algorithm, the
//! whole file or its parts at the object's part sizes, from one read
//! (`algo::parts` cuts the parts and hashes them).

use std::io::{self, Read};
use std::path::Path;

use super::claim::Claim;
use crate::algo::parts::{PartHasher, PartLayout};
use crate::algo::Hasher;
use crate::error::{Error, ErrorKind, Result};

/// Whether `reader`'s bytes are those `claim` describes (`None`: the
/// claim is opaque). Bytes that do not fill the claim's parts exactly
/// are not the same bytes.
fn reader_matches(claim: &Claim, reader: &mut dyn Read) -> io::Result<Option<bool>> {
    #[allow(clippy::large_enum_variant)] // one a file, on the stack.
    enum Running<'a> {
        Whole(Hasher),
        Parts(PartHasher<'a>),
    }
    let (kind, value, mut running) = match claim {
        Claim::Whole { kind, value } => {
            (kind, value, Running::Whole(Hasher::new(kind.algorithm())))
        }
        Claim::Parts { kind, value, parts } => {
            let hasher = PartHasher::new(kind.algorithm(), PartLayout::Sizes(parts));
            (kind, value, Running::Parts(hasher))
        }
        Claim::Opaque(_) => return Ok(None),
    };
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let bytes = buffer.get(..n).unwrap_or_default();
        match &mut running {
            Running::Whole(h) => h.update(bytes),
            Running::Parts(h) => h.update(bytes),
        }
    }
    let digest = match running {
        Running::Whole(h) => h.digest(),
        // Shorter or longer than the parts say: not the same bytes.
        Running::Parts(h) => match h.finish() {
            Ok(digest) => digest,
            Err(_) => return Ok(Some(false)),
        },
    };
    debug_assert_eq!(digest.len(), kind.len());
    Ok(Some(digest.as_bytes() == value.as_slice()))
}

/// Whether the file at `path` has the bytes `claim` describes (`None`:
/// the claim is opaque).
pub(crate) fn file_matches(claim: &Claim, path: &Path) -> Result<Option<bool>> {
    let mut file = crate::fs::regular::open_regular(path)?;
    reader_matches(claim, &mut file)
        .map_err(|e| Error::with_path(path.to_path_buf(), ErrorKind::Io(e)))
}

#[cfg(test)]
mod tests {
    use super::super::claim::Kind;
    use super::*;
    use crate::Algorithm;

    #[test]
    fn crcs_are_s3s_big_endian_bytes() {
        // zlib.crc32(b"123456789") == 0xcbf43926; CRC-32C's check 0xe3069283;
        // CRC-64/NVME's check 0xae8b14860a799888 (the catalogue's).
        for (kind, value) in [
            (Kind::Crc32, 0xcbf4_3926u32.to_be_bytes().to_vec()),
            (Kind::Crc32c, 0xe306_9283u32.to_be_bytes().to_vec()),
            (
                Kind::Crc64Nvme,
                0xae8b_1486_0a79_9888u64.to_be_bytes().to_vec(),
            ),
        ] {
            let claim = Claim::Whole { kind, value };
            assert_eq!(
                reader_matches(&claim, &mut &b"123456789"[..]).unwrap(),
                Some(true)
            );
            assert_eq!(
                reader_matches(&claim, &mut &b"12345678"[..]).unwrap(),
                Some(false)
            );
        }
    }

    #[test]
    fn a_multipart_etag_is_the_md5_of_the_part_md5s() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let md5 = |b: &[u8]| Algorithm::Md5.hash_bytes(b).as_bytes().to_vec();
        let mut parts = md5(&data[..4096]);
        parts.extend(md5(&data[4096..8192]));
        parts.extend(md5(&data[8192..]));
        let claim = Claim::Parts {
            kind: Kind::Md5,
            value: md5(&parts),
            parts: vec![4096, 4096, 10_000 - 8192],
        };
        assert_eq!(reader_matches(&claim, &mut &data[..]).unwrap(), Some(true));
        assert_eq!(
            reader_matches(&claim, &mut &data[..9000]).unwrap(),
            Some(false)
        );
        let mut longer = data.clone();
        longer.push(0);
        assert_eq!(
            reader_matches(&claim, &mut &longer[..]).unwrap(),
            Some(false)
        );
        let opaque = Claim::Opaque(String::new());
        assert_eq!(reader_matches(&opaque, &mut &data[..]).unwrap(), None);
    }
}
