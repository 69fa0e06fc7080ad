//! Property tests of the one S3 decision: random
//! sets of claims S3 could give of an object (each agreeing with the
//! local bytes, one bit off, or opaque; whole-object or composite at
//! random part sizes) decide as the oracle says, whatever their number
//! and order: one disagreeing claim makes the object modified, an opaque
//! one with none disagreeing leaves no answer, only claims all agreeing
//! make it the same. And claims kept by one endpoint never answer for
//! another, nor against a listing that contradicts them.
//!
//! The oracle computes each claim's digest as S3 defines it (the whole
//! object, or the digest of the concatenated part digests), apart from
//! the one read that `reader_matches` makes of the bytes.

use proptest::prelude::*;

use super::cache::ClaimCache;
use super::claim::{Claim, Kind};
use super::local::reader_matches;
use super::xml::Listed;

const KINDS: [Kind; 10] = [
    Kind::Crc64Nvme,
    Kind::Crc32c,
    Kind::Crc32,
    Kind::Sha512,
    Kind::Sha256,
    Kind::Sha1,
    Kind::Md5,
    Kind::Xxhash64,
    Kind::Xxhash3,
    Kind::Xxhash128,
];

fn digest(kind: Kind, bytes: &[u8]) -> Vec<u8> {
    kind.algorithm().hash_bytes(bytes).as_bytes().to_vec()
}

/// Part sizes that cut `len` bytes at the random `cuts` (each at least 1).
fn parts_of(len: usize, cuts: &[u64]) -> Vec<u64> {
    let mut parts = Vec::new();
    let mut left = len as u64;
    for &cut in cuts {
        if left <= cut {
            break;
        }
        parts.push(cut);
        left -= cut;
    }
    parts.push(left);
    parts
}

/// How a claim is made: agreeing, a bit off, or opaque.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Made {
    Agreeing,
    Off(usize),
    Opaque,
}

fn made() -> impl Strategy<Value = Made> {
    prop_oneof![
        3 => Just(Made::Agreeing),
        1 => any::<usize>().prop_map(Made::Off),
        1 => Just(Made::Opaque),
    ]
}

fn claim(data: &[u8], kind: Kind, cuts: Option<&[u64]>, made: Made) -> Claim {
    if made == Made::Opaque {
        return Claim::Opaque("an SSE-KMS ETag".into());
    }
    let (mut value, parts) = match cuts.filter(|_| !data.is_empty()) {
        None => (digest(kind, data), None),
        Some(cuts) => {
            let parts = parts_of(data.len(), cuts);
            let mut at = 0usize;
            let mut joined = Vec::new();
            for &p in &parts {
                joined.extend(digest(kind, &data[at..at + p as usize]));
                at += p as usize;
            }
            (digest(kind, &joined), Some(parts))
        }
    };
    if let Made::Off(bit) = made {
        let bit = bit % (value.len() * 8);
        value[bit / 8] ^= 1 << (bit % 8);
    }
    match parts {
        None => Claim::Whole { kind, value },
        Some(parts) => Claim::Parts { kind, value, parts },
    }
}

fn listed(size: u64, etag: &str) -> Listed {
    Listed {
        key: b"k".to_vec(),
        size,
        etag: etag.to_owned(),
        last_modified: "2026-12-02T00:00:00.000Z".to_owned(),
    }
}

fn config(endpoint: &str, region: &str) -> super::S3Config {
    super::S3Config {
        endpoint: endpoint.into(),
        region: region.into(),
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn one_disagreeing_claim_decides_and_an_opaque_one_leaves_no_answer(
        data in proptest::collection::vec(any::<u8>(), 0..3000),
        specs in proptest::collection::vec(
            (0..KINDS.len(), proptest::option::of(proptest::collection::vec(1..1500u64, 1..4)), made()),
            1..7,
        ),
    ) {
        let claims: Vec<Claim> = specs
            .iter()
            .map(|(k, cuts, m)| claim(&data, KINDS[*k], cuts.as_deref(), *m))
            .collect();
        let off = specs.iter().any(|(_, _, m)| matches!(m, Made::Off(_)));
        let opaque = specs.iter().any(|(_, _, m)| *m == Made::Opaque);
        let oracle = match (off, opaque) {
            (true, _) => Some(false),
            (false, true) => None,
            (false, false) => Some(true),
        };
        prop_assert_eq!(reader_matches(&claims, &mut &data[..]).unwrap(), oracle);
        // Other bytes of the same length: every checkable claim is a
        // digest of the bytes, so none agrees (bar a CRC collision,
        // which one flipped byte cannot make).
        if !data.is_empty() && claims.iter().any(|c| !matches!(c, Claim::Opaque(_))) {
            let mut other = data.clone();
            other[0] ^= 1;
            prop_assert_eq!(reader_matches(&claims, &mut &other[..]).unwrap(), Some(false));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn kept_claims_answer_only_for_their_endpoint_and_a_listing_that_agrees(
        data in proptest::collection::vec(any::<u8>(), 1..500),
        kinds in proptest::collection::vec(0..KINDS.len(), 1..4),
        other in prop_oneof![Just(("http://127.0.0.1:2", "us-east-1")), Just(("http://127.0.0.1:1", "eu-west-1"))],
        etag_agrees in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claims");
        let md5 = hex(&digest(Kind::Md5, &data));
        let mut claims: Vec<Claim> =
            kinds.iter().map(|&k| claim(&data, KINDS[k], None, Made::Agreeing)).collect();
        // The MD5 kept beside them: the listing's single-part ETag, or
        // (written by a lying endpoint, or a damaged cache) one bit off it.
        let kept_md5 = if etag_agrees { Made::Agreeing } else { Made::Off(3) };
        claims.push(claim(&data, Kind::Md5, None, kept_md5));
        let here = config("http://127.0.0.1:1", "us-east-1");
        let object = listed(data.len() as u64, &md5);
        ClaimCache::open(&path, &here).unwrap().put("b", &object, &claims);
        let there = ClaimCache::open(&path, &config(other.0, other.1)).unwrap();
        prop_assert_eq!(there.get("b", &object), None);
        let kept = ClaimCache::open(&path, &here).unwrap().get("b", &object);
        match etag_agrees {
            true => prop_assert_eq!(kept, Some(claims)),
            false => prop_assert_eq!(kept, None),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
