//! What S3 keeps of an object's bytes, in the order printed (the hardest
//! to forge first): a full-object SHA-256 or SHA-1, a single-part ETag
//! that is the MD5, a full-object CRC (CRC-64/NVME, CRC-32C, CRC-32:
//! anyone who can write to the bucket can make a changed object's CRC
//! equal the old one by setting 8 of its bytes), a composite checksum
//! with its part sizes (GetObjectAttributes, or HeadObject per
//! `partNumber` where the server gives no parts there), then a multipart
//! ETag (`-N`, with the part sizes). `diff` trusts none of them alone: it
//! compares every one ([`claims_of`]), since MD5 collisions
//! are made in seconds and CRCs are forged in fewer. Never an ETag under
//! SSE-KMS or SSE-C, which is no digest of the bytes. Anything else is
//! opaque: the object is never called unchanged on its size alone.

use super::http::{Client, Head};
use crate::algo::Algorithm;

/// A digest algorithm S3 keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Crc64Nvme,
    Crc32c,
    Crc32,
    Sha512,
    Sha256,
    Sha1,
    Md5,
    Xxhash64,
    Xxhash3,
    Xxhash128,
}

impl Kind {
    /// The additional checksums (`x-amz-checksum-NAME`), in the order
    /// preferred: the cryptographic digests, then MD5 (collisions are made
    /// in seconds), then the CRCs and the xxHashes (anyone can forge them).
    const CHECKSUMS: [Kind; 10] = [
        Kind::Sha512,
        Kind::Sha256,
        Kind::Sha1,
        Kind::Md5,
        Kind::Crc64Nvme,
        Kind::Crc32c,
        Kind::Crc32,
        Kind::Xxhash128,
        Kind::Xxhash3,
        Kind::Xxhash64,
    ];

    /// Its name in `x-amz-checksum-NAME` (and the cache).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Crc64Nvme => "crc64nvme",
            Kind::Crc32c => "crc32c",
            Kind::Crc32 => "crc32",
            Kind::Sha512 => "sha512",
            Kind::Sha256 => "sha256",
            Kind::Sha1 => "sha1",
            Kind::Md5 => "md5",
            Kind::Xxhash64 => "xxhash64",
            Kind::Xxhash3 => "xxhash3",
            Kind::Xxhash128 => "xxhash128",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Kind> {
        Kind::CHECKSUMS.into_iter().find(|k| k.name() == name)
    }

    /// fastsum's algorithm of this kind (of the whole input).
    pub(crate) fn algorithm(self) -> Algorithm {
        match self {
            Kind::Crc64Nvme => Algorithm::Crc64Nvme,
            Kind::Crc32c => Algorithm::Crc32c,
            Kind::Crc32 => Algorithm::Crc32,
            Kind::Sha512 => Algorithm::Sha512,
            Kind::Sha256 => Algorithm::Sha256,
            Kind::Sha1 => Algorithm::Sha1,
            Kind::Md5 => Algorithm::Md5,
            Kind::Xxhash64 => Algorithm::Xxh64,
            Kind::Xxhash3 => Algorithm::Xxh3,
            Kind::Xxhash128 => Algorithm::Xxh128,
        }
    }

    /// The kind an algorithm's digests are of (of its parts for
    /// `s3etag` and the composite ones); `None`: S3 keeps none.
    pub(crate) fn of(algorithm: Algorithm) -> Option<Kind> {
        let whole = algorithm.part_layout().map_or(algorithm, |(of, _)| of);
        Kind::CHECKSUMS.into_iter().find(|k| k.algorithm() == whole)
    }

    /// The digest's length in bytes.
    pub(crate) fn len(self) -> usize {
        match self {
            Kind::Crc64Nvme | Kind::Xxhash64 | Kind::Xxhash3 => 8,
            Kind::Crc32c | Kind::Crc32 => 4,
            Kind::Sha512 => 64,
            Kind::Sha256 => 32,
            Kind::Sha1 => 20,
            Kind::Md5 | Kind::Xxhash128 => 16,
        }
    }
}

/// The best digest S3 gave of an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// A digest of the whole object.
    Whole { kind: Kind, value: Vec<u8> },
    /// A digest of the parts' digests (a composite checksum, or a
    /// multipart ETag with `Kind::Md5`), with the parts' sizes.
    Parts {
        kind: Kind,
        value: Vec<u8>,
        parts: Vec<u64>,
    },
    /// No digest of the bytes to be had: why.
    Opaque(String),
}

/// `value` of an `x-amz-checksum-*` header: base64, then `-N` for a
/// composite one; a wrong length or encoding is an error.
pub(crate) fn checksum_value(kind: Kind, header: &str) -> Result<(Vec<u8>, Option<u64>), String> {
    let (text, parts) = match header.rsplit_once('-') {
        Some((text, n)) => {
            let n = n.parse::<u64>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                format!(
                    "x-amz-checksum-{} {header:?}: a bad part count",
                    kind.name()
                )
            })?;
            (text, Some(n))
        }
        None => (header, None),
    };
    let value = super::base64::decode(text)
        .filter(|v| v.len() == kind.len())
        .ok_or_else(|| {
            format!(
                "x-amz-checksum-{} {header:?} is not {} bytes in base64",
                kind.name(),
                kind.len()
            )
        })?;
    Ok((value, parts))
}

/// The ETag as an MD5 (`Some(None)`) or an MD5 of parts (`Some(Some(N))`);
/// `None` for an ETag of another form (another server's, opaque).
pub(crate) fn etag_md5(etag: &str) -> Option<(Vec<u8>, Option<u64>)> {
    let (hex, parts) = match etag.split_once('-') {
        Some((hex, n)) => (hex, Some(n.parse::<u64>().ok().filter(|&n| n >= 1)?)),
        None => (etag, None),
    };
    if hex.len() != 32 {
        return None;
    }
    let value = (0..16)
        .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    Some((value, parts))
}

impl Claim {
    /// The kind of digest it gives (`None`: opaque).
    pub(crate) fn kind(&self) -> Option<Kind> {
        match self {
            Claim::Whole { kind, .. } | Claim::Parts { kind, .. } => Some(*kind),
            Claim::Opaque(_) => None,
        }
    }

    /// Whether it can be the claim of an object the listing gives as
    /// `size` bytes with `etag` (a cached claim is checked
    /// against what this run's listing says): an MD5 of the whole object
    /// is the single-part ETag, and parts add up to the object.
    pub(crate) fn agrees_with_listing(&self, size: u64, etag: &str) -> bool {
        match self {
            Claim::Whole {
                kind: Kind::Md5,
                value,
            } => etag_md5(etag).is_some_and(|(md5, parts)| parts.is_none() && md5 == *value),
            Claim::Parts { parts, .. } => {
                parts.iter().try_fold(0u64, |a, &p| a.checked_add(p)) == Some(size)
            }
            Claim::Whole { .. } | Claim::Opaque(_) => true,
        }
    }
}

/// Every digest S3 gives of `key` (`size` and `etag` as listed) that
/// fastsum can compute, the one rule `diff` decides by: each
/// full-object checksum, the single-part ETag that is the MD5, each
/// composite checksum whose part sizes are to be had; all of them are
/// compared from one read of the local file, and one that disagrees makes
/// the object modified, so an MD5 collision beside S3's CRC-64/NVME is
/// caught by the CRC and a forged CRC by the MD5. Their order (the
/// hardest to forge first: SHA-256, SHA-1, MD5, the CRCs, the composite
/// ones, the multipart ETag) decides only which one is printed. A
/// checksum S3 gives that cannot be computed here is an opaque claim
/// beside the others: the object is then at best unverifiable. None at
/// all: one `Claim::Opaque` saying why. `Err` for an answer that cannot be believed or a request that
/// failed.
pub(crate) fn claims_of(
    client: &Client,
    key: &str,
    size: u64,
    etag: &str,
) -> Result<Vec<Claim>, String> {
    let head = checked_head(client, key, size, etag)?;
    let composite = head.get("x-amz-checksum-type") == Some("COMPOSITE");
    let (mut strong, mut weak, mut composites) = (Vec::new(), Vec::new(), Vec::new());
    for kind in Kind::CHECKSUMS {
        let Some(header) = head.get(&format!("x-amz-checksum-{}", kind.name())) else {
            continue;
        };
        let (value, parts) = checksum_value(kind, header)?;
        match parts.or(composite.then_some(0)) {
            None if matches!(kind, Kind::Sha512 | Kind::Sha256 | Kind::Sha1) => {
                strong.push(Claim::Whole { kind, value })
            }
            None => weak.push(Claim::Whole { kind, value }),
            Some(n) => composites.push((kind, value, n)),
        }
    }
    let mut claims = strong;
    claims.extend(plain_md5(&head, etag));
    claims.extend(weak);
    claims.extend(unknown_checksums(&head));
    // A checksum S3 gives that cannot be computed here (its part sizes
    // are not to be had) is kept as opaque: the others never decide
    // without it (one that cannot be checked is no agreement).
    for (kind, value, n) in composites {
        match part_sizes(client, key, n, size)? {
            Some(parts) => claims.push(Claim::Parts { kind, value, parts }),
            None => claims.push(Claim::Opaque(format!(
                "a composite {} whose part sizes are not to be had",
                kind.name()
            ))),
        }
    }
    // A multipart ETag: the MD5 of its parts' MD5s, where the part sizes
    // are to be had (one more request, for multipart objects only).
    let multipart = etag_md5(etag).is_some_and(|(_, parts)| parts.is_some());
    if claims.is_empty() || multipart {
        match etag_claim(client, &head, key, size, etag)? {
            Claim::Opaque(_) if !claims.is_empty() => {}
            claim => claims.push(claim),
        }
    }
    Ok(claims)
}

/// A checksum S3 gives that fastsum does not know (a newer algorithm):
/// an opaque claim each, in name order, so that the others never decide
/// without it (a digest of the bytes that cannot be checked is no
/// agreement).
fn unknown_checksums(head: &Head) -> Vec<Claim> {
    let mut names: Vec<&str> = head
        .headers
        .keys()
        .filter_map(|name| name.strip_prefix("x-amz-checksum-"))
        .filter(|name| *name != "type" && Kind::from_name(name).is_none())
        .collect();
    names.sort_unstable();
    names
        .into_iter()
        .map(|name| {
            Claim::Opaque(format!(
                "S3 gives an x-amz-checksum-{name}, which fastsum cannot compute"
            ))
        })
        .collect()
}

/// HeadObject of `key`, which must still be the object listed.
fn checked_head(client: &Client, key: &str, size: u64, etag: &str) -> Result<Head, String> {
    let head = client.head(key, None)?;
    if head.status != 200 {
        return Err(format!("HeadObject: HTTP {}", head.status));
    }
    if let Some(name) = head.twice.first() {
        return Err(format!("HeadObject gives {name} twice, with two values"));
    }
    let length = head
        .get("content-length")
        .and_then(|l| l.parse::<u64>().ok());
    let head_etag = head.get("etag").map(|e| e.trim_matches('"'));
    if length != Some(size) || head_etag.is_some_and(|e| e != etag) {
        return Err("the object changed while it was compared (size or ETag)".into());
    }
    Ok(head)
}

/// Why the ETag is no digest of the bytes, if it is not: any server-side
/// encryption but S3's own keys (`AES256`) makes it opaque (SSE-KMS,
/// DSSE-KMS, SSE-C, and any value fastsum does not know: fail closed).
fn etag_opaque(head: &Head) -> Option<String> {
    if head
        .get("x-amz-server-side-encryption-customer-algorithm")
        .is_some()
    {
        return Some("an SSE-C object's ETag is not its MD5".into());
    }
    match head.get("x-amz-server-side-encryption") {
        None | Some("AES256") => None,
        Some(sse) if sse.starts_with("aws:kms") => {
            Some("an SSE-KMS object's ETag is not its MD5".into())
        }
        Some(sse) => Some(format!(
            "the ETag of an object encrypted with {sse:?} is no known MD5"
        )),
    }
}

/// The ETag as the object's MD5, where it is one of a single-part upload
/// that no server-side encryption with KMS or a customer key made opaque.
fn plain_md5(head: &Head, etag: &str) -> Option<Claim> {
    if etag_opaque(head).is_some() {
        return None;
    }
    match etag_md5(etag)? {
        (value, None) => Some(Claim::Whole {
            kind: Kind::Md5,
            value,
        }),
        (_, Some(_)) => None,
    }
}

fn etag_claim(
    client: &Client,
    head: &Head,
    key: &str,
    size: u64,
    etag: &str,
) -> Result<Claim, String> {
    if let Some(why) = etag_opaque(head) {
        return Ok(Claim::Opaque(why));
    }
    Ok(match etag_md5(etag) {
        Some((value, None)) => Claim::Whole {
            kind: Kind::Md5,
            value,
        },
        Some((value, Some(n))) => match part_sizes(client, key, n, size)? {
            Some(parts) => Claim::Parts {
                kind: Kind::Md5,
                value,
                parts,
            },
            None => Claim::Opaque("a multipart ETag whose part sizes are not to be had".into()),
        },
        None => Claim::Opaque(format!("no checksum, and the ETag {etag:?} is no MD5")),
    })
}

/// The sizes of an object's `n` parts (`n` 0: as many as the server
/// says), from GetObjectAttributes, else HeadObject per part; `None` where
/// neither gives them. Sizes that do not add up to the object are a lie.
fn part_sizes(client: &Client, key: &str, n: u64, size: u64) -> Result<Option<Vec<u64>>, String> {
    // One request a part at most: never more parts than S3 allows.
    super::bounds::at_most_parts(n, "its checksum or ETag")?;
    let attributes = client.attributes(key).ok();
    let n = match (n, attributes.as_ref().and_then(|a| a.parts_count)) {
        (0, Some(count)) => count,
        (0, None) => return Ok(None),
        (n, _) => n,
    };
    super::bounds::at_most_parts(n, "GetObjectAttributes")?;
    let mut parts: Vec<(u64, u64)> = attributes.map(|a| a.part_sizes).unwrap_or_default();
    parts.sort_unstable();
    let numbered = parts.iter().map(|p| p.0).eq(1..=n);
    let sizes = if numbered {
        parts.into_iter().map(|p| p.1).collect()
    } else {
        let mut sizes = Vec::new();
        for part in 1..=n {
            let head = client.head(key, Some(part))?;
            let length = head
                .get("content-length")
                .and_then(|l| l.parse::<u64>().ok());
            match (head.status, length) {
                (200 | 206, Some(length)) => sizes.push(length),
                _ => return Ok(None),
            }
        }
        sizes
    };
    let total: u64 = sizes.iter().sum();
    if total != size {
        return Err(format!(
            "the {n} part sizes add up to {total}, the object is {size} bytes"
        ));
    }
    Ok(Some(sizes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_headers_are_read_strictly() {
        let (v, n) = checksum_value(Kind::Crc32, "AAAAAA==").unwrap();
        assert_eq!((v, n), (vec![0; 4], None));
        let (_, n) = checksum_value(Kind::Crc32, "AAAAAA==-3").unwrap();
        assert_eq!(n, Some(3));
        assert!(checksum_value(Kind::Crc32, "AAAAAAAA").is_err());
        assert!(checksum_value(Kind::Sha256, "AAAAAA==").is_err());
        assert!(checksum_value(Kind::Crc32, "AAAAAA==-0").is_err());
        assert!(checksum_value(Kind::Crc32, "!!!!").is_err());
    }

    #[test]
    fn a_checksum_fastsum_does_not_know_is_opaque() {
        let mut headers = std::collections::HashMap::new();
        for name in [
            "x-amz-checksum-crc32",
            "x-amz-checksum-type",
            "x-amz-checksum-sha3-256",
        ] {
            headers.insert(name.to_string(), "AAAAAA==".to_string());
        }
        headers.insert("x-amz-checksum-blake9".into(), "x".into());
        let head = Head {
            status: 200,
            headers,
            twice: Vec::new(),
        };
        let opaque: Vec<String> = unknown_checksums(&head)
            .into_iter()
            .map(|c| match c {
                Claim::Opaque(why) => why,
                other => panic!("not opaque: {other:?}"),
            })
            .collect();
        assert_eq!(opaque.len(), 2, "{opaque:?}");
        assert!(opaque[0].contains("x-amz-checksum-blake9"), "{opaque:?}");
        assert!(opaque[1].contains("x-amz-checksum-sha3-256"), "{opaque:?}");
    }

    #[test]
    fn etags_that_are_md5s() {
        let md5 = "d41d8cd98f00b204e9800998ecf8427e";
        assert_eq!(etag_md5(md5).unwrap().1, None);
        assert_eq!(etag_md5(&format!("{md5}-2")).unwrap().1, Some(2));
        assert!(etag_md5("abc").is_none());
        assert!(etag_md5(&format!("{md5}-x")).is_none());
    }
}
