//! [`Algorithm::Joint`]: every member's digest from one read, joined.

use super::{Algorithm, Hasher, StreamHasher};
use crate::digest::Digest;

/// Each member's hash, fed the same bytes.
#[derive(Clone)]
pub(crate) struct Joint {
    members: Vec<Hasher>,
}

impl StreamHasher for Joint {
    fn new(algorithm: Algorithm) -> Self {
        Joint {
            members: algorithm.members().map(Hasher::new).collect(),
        }
    }
    fn update(&mut self, bytes: &[u8]) {
        for member in &mut self.members {
            member.update(bytes);
        }
    }
    fn finalize(self) -> Digest {
        let digests: Vec<Digest> = self.members.iter().map(Hasher::digest).collect();
        Algorithm::joined(&digests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_joint_digest_is_each_members_and_changes_with_any() {
        let joint = Algorithm::joint(&[Algorithm::Sha256, Algorithm::Md5]).unwrap();
        assert_eq!(
            joint,
            Algorithm::joint(&[Algorithm::Md5, Algorithm::Sha256]).unwrap()
        );
        assert_eq!(joint.to_string(), "md5+sha256");
        let members: Vec<Algorithm> = joint.members().collect();
        assert_eq!(members, [Algorithm::Md5, Algorithm::Sha256]);
        // Computed independently: BLAKE3 of MD5 then SHA-256 of "abc".
        let mut both = Algorithm::Md5.hash_bytes(b"abc").as_bytes().to_vec();
        both.extend_from_slice(Algorithm::Sha256.hash_bytes(b"abc").as_bytes());
        let expected = ::blake3::hash(&both);
        assert_eq!(joint.hash_bytes(b"abc").as_bytes(), expected.as_bytes());
        let mut h = Hasher::new(joint);
        h.update(b"a");
        h.update(b"bc");
        assert_eq!(h.digest(), joint.hash_bytes(b"abc"));
        assert_ne!(joint.hash_bytes(b"abd"), joint.hash_bytes(b"abc"));
        assert_eq!(
            Algorithm::joint(&[Algorithm::Md5, Algorithm::Md5]),
            Some(Algorithm::Md5)
        );
        // A BLAKE2b of any length is a member (a short one deciding alone
        // passed a wrong MD5 beside it).
        let b2 = Algorithm::Blake2b { output_len: 32 };
        let short = Algorithm::joint(&[b2, Algorithm::Md5]).unwrap();
        assert_eq!(short.members().collect::<Vec<_>>(), [Algorithm::Md5, b2]);
        assert_eq!(short.to_string(), "md5+blake2b-256");
        let mut both = Algorithm::Md5.hash_bytes(b"abc").as_bytes().to_vec();
        both.extend_from_slice(b2.hash_bytes(b"abc").as_bytes());
        assert_eq!(
            short.hash_bytes(b"abc").as_bytes(),
            ::blake3::hash(&both).as_bytes()
        );
        assert_ne!(
            Some(short),
            Algorithm::joint(&[Algorithm::Md5, Algorithm::BLAKE2B])
        );
        assert_eq!(Algorithm::joint(&[b2]), Some(b2));
        // BLAKE2b of several lengths: each a member, shortest first (one
        // deciding alone passed an MD5 collision beside a wrong XXH128).
        let b2_8 = Algorithm::Blake2b { output_len: 1 };
        let b2_16 = Algorithm::Blake2b { output_len: 2 };
        let lengths =
            Algorithm::joint(&[Algorithm::Xxh128, b2_16, Algorithm::Md5, b2_8, b2]).unwrap();
        assert_eq!(
            lengths.members().collect::<Vec<_>>(),
            [Algorithm::Md5, b2_8, b2_16, b2, Algorithm::Xxh128]
        );
        assert_eq!(
            lengths.to_string(),
            "md5+blake2b-8+blake2b-16+blake2b-256+xxh128"
        );
        let mut all = Vec::new();
        for one in [Algorithm::Md5, b2_8, b2_16, b2, Algorithm::Xxh128] {
            all.extend_from_slice(one.hash_bytes(b"abc").as_bytes());
        }
        assert_eq!(
            lengths.hash_bytes(b"abc").as_bytes(),
            ::blake3::hash(&all).as_bytes()
        );
        assert_eq!(
            lengths,
            Algorithm::joint(&[b2, b2_8, Algorithm::Md5, b2_16, Algorithm::Xxh128, b2_8]).unwrap(),
            "the order given and repeats aside"
        );
        let two = Algorithm::joint(&[b2_8, Algorithm::BLAKE2B]).unwrap();
        assert_eq!(
            two.members().collect::<Vec<_>>(),
            [b2_8, Algorithm::BLAKE2B]
        );
        assert_eq!(Algorithm::joint(&[Algorithm::Md5, Algorithm::S3ETAG]), None);
        assert_eq!(Algorithm::joint(&[]), None);
    }
}
