//! A local file's digest in the form S3 gave one: the same algorithm, the
//! whole file or its parts at the object's part sizes, from one read
//! (`algo::parts` cuts the parts and hashes them).

use std::io::{self, Read};
use std::path::Path;

use super::claim::Claim;
use crate::algo::parts::{PartHasher, PartLayout};
use crate::algo::Hasher;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};

/// The digest of `reader`'s bytes in each claim's form (its algorithm, of
/// the whole or of its parts at the claim's part sizes), from one read:
/// `None` for an opaque claim, and for parts the bytes do not fill
/// exactly (shorter or longer than the parts say: not the same bytes).
/// A claim's own value is not looked at: `contained` asks for the forms
/// of several objects' claims at once.
pub(crate) fn digests_in_forms(
    claims: &[Claim],
    reader: &mut dyn Read,
) -> io::Result<Vec<Option<Digest>>> {
    #[allow(clippy::large_enum_variant)] // a few a file, on the stack.
    enum Running<'a> {
        Whole(Hasher),
        Parts(PartHasher<'a>),
        Opaque,
    }
    let mut running: Vec<Running> = claims
        .iter()
        .map(|claim| match claim {
            Claim::Whole { kind, .. } => Running::Whole(Hasher::new(kind.algorithm())),
            Claim::Parts { kind, parts, .. } => {
                Running::Parts(PartHasher::new(kind.algorithm(), PartLayout::Sizes(parts)))
            }
            Claim::Opaque(_) => Running::Opaque,
        })
        .collect();
    if running.iter().all(|r| matches!(r, Running::Opaque)) {
        return Ok(vec![None; claims.len()]);
    }
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let bytes = buffer.get(..n).unwrap_or_default();
        for hasher in &mut running {
            match hasher {
                Running::Whole(h) => h.update(bytes),
                Running::Parts(h) => h.update(bytes),
                Running::Opaque => {}
            }
        }
    }
    Ok(running
        .into_iter()
        .map(|hasher| match hasher {
            Running::Whole(h) => Some(h.digest()),
            Running::Parts(h) => h.finish().ok(),
            Running::Opaque => None,
        })
        .collect())
}

/// Whether the digests of some bytes in the forms of `claims` (as
/// [`digests_in_forms`] gives them) make those bytes the ones every claim
/// describes: `Some(false)` when one disagrees (one is enough:
/// every digest S3 gives must agree), `None` when none does but one is opaque, else `Some(true)`.
pub(crate) fn claims_agree(claims: &[Claim], digests: &[Option<Digest>]) -> Option<bool> {
    let mut opaque = false;
    for (claim, digest) in claims.iter().zip(digests) {
        let value = match claim {
            Claim::Whole { value, .. } | Claim::Parts { value, .. } => value,
            Claim::Opaque(_) => {
                opaque = true;
                continue;
            }
        };
        if digest.as_ref().map(Digest::as_bytes) != Some(value.as_slice()) {
            return Some(false);
        }
    }
    (!opaque).then_some(true)
}

/// Whether `reader`'s bytes are those every one of `claims` describes,
/// hashed in each claim's form from the one read (`None`: no claim
/// disagrees, but one is opaque).
pub(super) fn reader_matches(claims: &[Claim], reader: &mut dyn Read) -> io::Result<Option<bool>> {
    if claims.iter().all(|c| matches!(c, Claim::Opaque(_))) {
        return Ok(None);
    }
    let digests = digests_in_forms(claims, reader)?;
    Ok(claims_agree(claims, &digests))
}

/// Whether the file at `path` has the bytes every one of `claims`
/// describes (`None`: none disagrees, but one is opaque).
pub(crate) fn file_matches(claims: &[Claim], path: &Path) -> Result<Option<bool>> {
    let mut file = crate::fs::regular::open_regular(path)?;
    reader_matches(claims, &mut file)
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
                reader_matches(std::slice::from_ref(&claim), &mut &b"123456789"[..]).unwrap(),
                Some(true)
            );
            assert_eq!(
                reader_matches(std::slice::from_ref(&claim), &mut &b"12345678"[..]).unwrap(),
                Some(false)
            );
        }
    }

    #[test]
    fn s3s_newer_checksums_are_their_canonical_big_endian_bytes() {
        // xxhash's check values of the empty input (xxhsum -H1, -H3, -H2
        // print these), and hashlib's MD5 and SHA-512 of "abc".
        let hex = |h: &str| {
            crate::digest::Digest::from_hex(h)
                .unwrap()
                .as_bytes()
                .to_vec()
        };
        for (kind, input, value) in [
            (Kind::Xxhash64, &b""[..], "ef46db3751d8e999"),
            (Kind::Xxhash3, b"", "2d06800538d394c2"),
            (Kind::Xxhash128, b"", "99aa06d3014798d86001c324468d497f"),
            (Kind::Md5, b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (
                Kind::Sha512,
                b"abc",
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
                 2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            ),
        ] {
            let claim = Claim::Whole {
                kind,
                value: hex(value),
            };
            assert_eq!(claim.kind().map(Kind::len), Some(value.len() / 2));
            assert_eq!(
                reader_matches(std::slice::from_ref(&claim), &mut &input[..]).unwrap(),
                Some(true),
                "{kind:?}"
            );
            assert_eq!(
                reader_matches(std::slice::from_ref(&claim), &mut &b"x"[..]).unwrap(),
                Some(false),
                "{kind:?}"
            );
            assert_eq!(Kind::from_name(kind.name()), Some(kind));
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
        assert_eq!(
            reader_matches(std::slice::from_ref(&claim), &mut &data[..]).unwrap(),
            Some(true)
        );
        assert_eq!(
            reader_matches(std::slice::from_ref(&claim), &mut &data[..9000]).unwrap(),
            Some(false)
        );
        let mut longer = data.clone();
        longer.push(0);
        assert_eq!(
            reader_matches(std::slice::from_ref(&claim), &mut &longer[..]).unwrap(),
            Some(false)
        );
        let opaque = Claim::Opaque(String::new());
        assert_eq!(
            reader_matches(std::slice::from_ref(&opaque), &mut &data[..]).unwrap(),
            None
        );
    }

    #[test]
    fn one_claim_that_disagrees_is_a_difference_whatever_the_others_say() {
        // Two 128-byte files with one MD5 (Wang et al.'s published pair):
        // the ETag agrees, the CRC-64/NVME S3 keeps of the other does not.
        let hex = |h: &str| {
            (0..h.len() / 2)
                .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
                .collect::<Vec<u8>>()
        };
        let a = hex("d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f8955ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5bd8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70");
        let b = hex("d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f8955ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5bd8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70");
        assert_ne!(a, b);
        let md5 = Algorithm::Md5.hash_bytes(&a).as_bytes().to_vec();
        assert_eq!(md5, Algorithm::Md5.hash_bytes(&b).as_bytes());
        let crc = Algorithm::Crc64Nvme.hash_bytes(&a).as_bytes().to_vec();
        let claims = [
            Claim::Whole {
                kind: Kind::Md5,
                value: md5,
            },
            Claim::Whole {
                kind: Kind::Crc64Nvme,
                value: crc,
            },
        ];
        assert_eq!(reader_matches(&claims, &mut &a[..]).unwrap(), Some(true));
        assert_eq!(
            reader_matches(&claims[..1], &mut &b[..]).unwrap(),
            Some(true)
        );
        assert_eq!(reader_matches(&claims, &mut &b[..]).unwrap(), Some(false));
        let with_opaque = [claims[1].clone(), Claim::Opaque(String::new())];
        assert_eq!(
            reader_matches(&with_opaque, &mut &b[..]).unwrap(),
            Some(false)
        );
        // Agreeing beside one that cannot be checked: no answer.
        assert_eq!(reader_matches(&with_opaque, &mut &a[..]).unwrap(), None);
    }
}
