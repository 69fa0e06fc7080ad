//! `fastsum -r s3://bucket/prefix`: what S3 holds below a prefix as
//! fastsum's lines, each digest one S3 keeps of the object's bytes and
//! given only where it is exactly what `fastsum -a ALGORITHM` computes of
//! those bytes (so that the lines check a local copy with `fastsum -c`).
//!
//! * With an algorithm asked for: a full-object checksum of it (an object
//!   of one part under `--part-size` gives the plain one, as fastsum
//!   does); with `--part-size SIZE`, the composite checksum or multipart
//!   ETag of an upload in parts of SIZE (the last one shorter).
//! * Without: the best digest S3 keeps of each object (as `diff` decides
//!   by), in its own algorithm and part size.
//!
//! Anything else (an opaque ETag, parts of unequal sizes, a multipart
//! upload of one part, another algorithm) is an error naming the object
//! and what S3 does keep, or with [`S3Options::download`] its bytes are
//! streamed and hashed, never stored.

use super::cache::ClaimCache;
use super::claim::{Claim, Kind};
use super::http::Client;
use super::listing::{io_error, listing, shown, DEFAULT_REQUESTS};
use super::{S3Options, S3Url};
use crate::algo::parts::PartSize;
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::{Error, Result};

/// What fastsum hashes an object with under `download` when no algorithm
/// was asked for: CRC-64/NVME, what S3 computes of every new object
/// since December 2024, so the list stays of one algorithm where it can.
pub const DOWNLOAD_ALGORITHM: Algorithm = Algorithm::Crc64Nvme;

/// One object below the prefix and its line's digest.
#[derive(Clone, Debug)]
pub struct S3Object {
    /// `s3://bucket/KEY`, for messages.
    pub url: std::path::PathBuf,
    /// The key below the prefix, as the line names it (empty for a key
    /// refused: see [`S3Object::digest`]).
    pub name: Vec<u8>,
    /// Its size, as listed.
    pub size: u64,
    /// The digest and its algorithm, or why there is none to print.
    pub digest: std::result::Result<(Algorithm, Digest), String>,
}

/// Lists `url` and gives each object (in the listing's order: UTF-8 byte
/// order) with the digest `algorithm` asks for (`None`: the best S3
/// keeps), `options.jobs` requests at once.
///
/// # Errors
/// The listing could not be had or believed, or `algorithm` is one S3
/// keeps none of (without `download`).
pub fn object_digests(
    url: &S3Url,
    algorithm: Option<Algorithm>,
    options: &S3Options,
    sink: &mut dyn FnMut(S3Object),
) -> Result<()> {
    let kind = algorithm.map(|a| (a, Kind::of(a)));
    if let Some((a, None)) = kind.filter(|_| !options.download) {
        let why = format!(
            "S3 keeps no {} digests (it keeps crc64nvme, crc32c, crc32, sha256, sha1 and \
             md5 or s3etag); --download hashes what it reads",
            a.name()
        );
        return Err(Error::with_path(url.to_string(), io_error(why)));
    }
    let config = super::S3Config::from_environment(options.path_style);
    let client = Client::new(&config, &url.bucket)
        .map_err(|e| Error::with_path(url.to_string(), io_error(e)))?;
    let objects = listing(&client, url)?;
    let cache = options
        .cache
        .as_deref()
        .and_then(|path| ClaimCache::open(path, &config));
    let one = |(object, relative): &super::listing::Entry| {
        let relative = relative.as_ref()?;
        let key = std::str::from_utf8(&object.key).map_err(|_| "not UTF-8".to_string())?;
        let only = kind.and_then(|(_, k)| k);
        let claim = claim(
            &client,
            cache.as_ref(),
            &url.bucket,
            object,
            key,
            only,
            algorithm,
        )?;
        match (as_line(&claim, object.size, algorithm), options.download) {
            (Err(_), true) => {
                let a = algorithm.unwrap_or(DOWNLOAD_ALGORITHM);
                let digest = super::download::digest_of(&client, object, a)?;
                Ok((a, digest))
            }
            (line, _) => line.map_err(|why| format!("{why}; --download reads it")),
        }
        .map(|line| (relative.clone(), line))
    };
    let lines = super::listing::in_parallel(&objects, options.jobs, DEFAULT_REQUESTS, &one);
    for ((object, _), line) in objects.iter().zip(lines) {
        let (name, digest) = match line {
            Ok((relative, line)) => (relative.into_bytes(), Ok(line)),
            Err(why) => (Vec::new(), Err(why)),
        };
        sink(S3Object {
            url: shown(url, &object.key),
            name,
            size: object.size,
            digest,
        });
    }
    Ok(())
}

/// The claim printed of `object`: of kind `only` if given, else the first
/// of S3's claims (their order: `claim.rs`) that gives the line `want`
/// asks for; from the claim cache where it holds this very object's
/// claims, else asked of S3. Only the whole set (`claims_of`) is kept:
/// `diff` compares every claim the cache holds, so a set of one kind
/// would make it trust that one alone.
fn claim(
    client: &Client,
    cache: Option<&ClaimCache>,
    bucket: &str,
    object: &super::xml::Listed,
    key: &str,
    only: Option<Kind>,
    want: Option<Algorithm>,
) -> std::result::Result<Claim, String> {
    // Of the kind asked, printed or refused by `as_line` with its reason.
    let pick = |claims: &[Claim]| {
        let mut found = claims.iter().filter(|c| match only {
            Some(kind) => c.kind() == Some(kind),
            None => as_line(c, object.size, want).is_ok(),
        });
        found.next().cloned()
    };
    let cached = cache.and_then(|c| c.get(bucket, object));
    if let Some(claim) = cached.as_deref().and_then(pick) {
        return Ok(claim);
    }
    let claims = super::claim::claims_of(client, key, object.size, &object.etag)?;
    if let Some(c) = cache {
        c.put(bucket, object, &claims);
    }
    if let Some(claim) = pick(&claims) {
        return Ok(claim);
    }
    Ok(match (only, &claims[..]) {
        // Of another kind than asked: what S3 keeps, said.
        (Some(kind), _) if kind != Kind::Md5 => {
            let mut kept: Vec<&str> = claims
                .iter()
                .filter_map(|c| c.kind().filter(|k| *k != Kind::Md5).map(Kind::name))
                .collect();
            kept.dedup();
            kept.push("an ETag");
            Claim::Opaque(format!(
                "S3 keeps no {} of it ({})",
                kind.name(),
                kept.join(", ").replacen(", an ETag", " and an ETag", 1)
            ))
        }
        (_, [first, ..]) => first.clone(),
        (_, []) => Claim::Opaque("S3 gave nothing of it".into()),
    })
}

/// How fastsum names a claim's form: `CRC64NVME`, `CRC32C/5MiB`, `MD5`,
/// `S3ETAG/8MiB`.
fn form(algorithm: Algorithm) -> String {
    match algorithm.part_layout() {
        Some((_, size)) => format!("{}/{}", algorithm.tag(), PartSize(size)),
        None => algorithm.tag().to_string(),
    }
}

/// The line `claim` gives under `want` (`None`: its own form), or why
/// none: never a digest fastsum would not compute of the same bytes.
fn as_line(
    claim: &Claim,
    size: u64,
    want: Option<Algorithm>,
) -> std::result::Result<(Algorithm, Digest), String> {
    let (own, digest) = match claim {
        Claim::Opaque(why) => return Err(why.clone()),
        Claim::Whole { kind, value } => (kind.algorithm(), Digest::from_bytes(value)),
        Claim::Parts { kind, value, parts } => {
            let own = in_parts(kind.algorithm(), parts)?;
            let n = u32::try_from(parts.len()).unwrap_or(u32::MAX);
            (own, Digest::from_bytes(value).with_parts(n))
        }
    };
    let Some(want) = want else {
        return Ok((own, digest));
    };
    // One part under --part-size is the plain digest, as fastsum gives.
    let one_part = want
        .part_layout()
        .is_some_and(|(of, part)| of == own && size <= part);
    match want == own || one_part {
        true => Ok((want, digest)),
        false => Err(format!("S3 keeps {} of it, not {}", form(own), form(want))),
    }
}

/// The algorithm of an upload in `parts`: all of one size but a shorter
/// (non-empty) last one, as `--part-size` cuts, and two or more.
fn in_parts(of: Algorithm, parts: &[u64]) -> std::result::Result<Algorithm, String> {
    let name = of.name();
    let (first, last) = match parts {
        [] | [_] => {
            return Err(format!(
                "a multipart upload of one part: S3's {name} of it (-1) is of its part's \
                 {name}, which fastsum gives for no file"
            ))
        }
        [first, .., last] => (*first, *last),
    };
    let regular =
        parts[..parts.len() - 1].iter().all(|&p| p == first) && (1..=first).contains(&last);
    let algorithm = of.in_parts(first).filter(|_| regular).ok_or_else(|| {
        let sizes: Vec<String> = parts
            .iter()
            .take(4)
            .map(|&p| PartSize(p).to_string())
            .collect();
        format!(
            "uploaded in parts of unequal sizes ({}{}): no --part-size gives S3's {name} of it",
            sizes.join(", "),
            if parts.len() > 4 { ", ..." } else { "" }
        )
    })?;
    Ok(algorithm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_printed_only_in_the_form_asked() {
        let whole = Claim::Whole {
            kind: Kind::Crc32c,
            value: vec![1, 2, 3, 4],
        };
        let (a, d) = as_line(&whole, 10, None).unwrap();
        assert_eq!((a, d.to_hex()), (Algorithm::Crc32c, "01020304".into()));
        assert!(as_line(&whole, 10, Some(Algorithm::Crc32)).is_err());
        let parted = Algorithm::Crc32c.in_parts(16);
        assert_eq!(as_line(&whole, 16, parted).unwrap().0, parted.unwrap());
        assert!(as_line(&whole, 17, parted).is_err());
        let parts = Claim::Parts {
            kind: Kind::Md5,
            value: vec![0; 16],
            parts: vec![8, 8, 3],
        };
        let (a, d) = as_line(&parts, 19, None).unwrap();
        assert_eq!(
            (a, d.parts()),
            (Algorithm::S3Etag { part_size: 8 }, Some(3))
        );
        assert!(as_line(&parts, 19, Some(Algorithm::S3ETAG)).is_err());
        assert!(as_line(&parts, 19, Some(Algorithm::Md5)).is_err());
        for bad in [vec![19], vec![8, 3, 8], vec![8, 9], vec![8, 0]] {
            let claim = Claim::Parts {
                kind: Kind::Md5,
                value: vec![0; 16],
                parts: bad,
            };
            assert!(as_line(&claim, 19, None).is_err());
        }
    }
}
