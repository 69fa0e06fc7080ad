//! [`Hasher`]: an incremental hash whose algorithm is chosen at run time,
//! for callers that hold a hash as a value (the Python binding's
//! hashlib-style objects), where `dispatch!` cannot
//! reach: a state per family in one enum, one `match` per call, never per
//! byte.

use super::hashers as h;
use super::{Algorithm, StreamHasher};
use crate::digest::Digest;

/// The state, one variant per hasher type.
#[derive(Clone)]
enum State {
    Md5(h::Md5),
    Sha1(h::Sha1),
    Sha224(h::Sha224),
    Sha256(h::Sha256),
    Sha384(h::Sha384),
    Sha512(h::Sha512),
    Blake2b(h::Blake2b),
    /// Boxed: BLAKE3's state is near 2 KiB (its chaining-value stack).
    Blake3(Box<h::Blake3>),
    Xxh32(h::Xxh32),
    Xxh64(h::Xxh64),
    Xxh3(h::Xxh3),
    Xxh128(h::Xxh128),
    Sm3(h::Sm3),
    Sha3_224(h::Sha3_224),
    Sha3_256(h::Sha3_256),
    Sha3_384(h::Sha3_384),
    Sha3_512(h::Sha3_512),
    Crc(h::Crc),
    Crc32b(h::Crc32b),
    Bsd(h::Bsd),
    Sysv(h::Sysv),
    Crc32(h::Crc32),
    Crc32c(h::Crc32c),
    Crc64Nvme(h::Crc64Nvme),
    /// Boxed: it holds hashers of its own.
    Parts(Box<h::Parts>),
    Joint(Box<h::Joint>),
}

/// An incremental hash of any [`Algorithm`], cloneable mid-stream, whose
/// digest can be read without ending it.
///
/// ```
/// use fastsum::{Algorithm, Hasher};
/// let mut h = Hasher::new(Algorithm::Sha256);
/// h.update(b"ab");
/// let copy = h.clone();
/// h.update(b"c");
/// assert_eq!(h.digest(), Algorithm::Sha256.hash_bytes(b"abc"));
/// assert_eq!(copy.digest(), Algorithm::Sha256.hash_bytes(b"ab"));
/// ```
#[derive(Clone)]
pub struct Hasher {
    algorithm: Algorithm,
    state: State,
}

impl Hasher {
    /// A fresh hash.
    pub fn new(algorithm: Algorithm) -> Hasher {
        let state = crate::algo::dispatch!(algorithm, H => State::from(H::new(algorithm)));
        Hasher { algorithm, state }
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Absorbs more input.
    pub fn update(&mut self, bytes: &[u8]) {
        match &mut self.state {
            State::Md5(s) => s.update(bytes),
            State::Sha1(s) => s.update(bytes),
            State::Sha224(s) => s.update(bytes),
            State::Sha256(s) => s.update(bytes),
            State::Sha384(s) => s.update(bytes),
            State::Sha512(s) => s.update(bytes),
            State::Blake2b(s) => s.update(bytes),
            State::Blake3(s) => s.update(bytes),
            State::Xxh32(s) => s.update(bytes),
            State::Xxh64(s) => s.update(bytes),
            State::Xxh3(s) => s.update(bytes),
            State::Xxh128(s) => s.update(bytes),
            State::Sm3(s) => s.update(bytes),
            State::Sha3_224(s) => s.update(bytes),
            State::Sha3_256(s) => s.update(bytes),
            State::Sha3_384(s) => s.update(bytes),
            State::Sha3_512(s) => s.update(bytes),
            State::Crc(s) => s.update(bytes),
            State::Crc32b(s) => s.update(bytes),
            State::Bsd(s) => s.update(bytes),
            State::Sysv(s) => s.update(bytes),
            State::Crc32(s) => s.update(bytes),
            State::Crc32c(s) => s.update(bytes),
            State::Crc64Nvme(s) => s.update(bytes),
            State::Parts(s) => s.update(bytes),
            State::Joint(s) => s.update(bytes),
        }
    }

    /// The digest of everything absorbed so far; the hash goes on.
    pub fn digest(&self) -> Digest {
        match self.state.clone() {
            State::Md5(s) => s.finalize(),
            State::Sha1(s) => s.finalize(),
            State::Sha224(s) => s.finalize(),
            State::Sha256(s) => s.finalize(),
            State::Sha384(s) => s.finalize(),
            State::Sha512(s) => s.finalize(),
            State::Blake2b(s) => s.finalize(),
            State::Blake3(s) => (*s).finalize(),
            State::Xxh32(s) => s.finalize(),
            State::Xxh64(s) => s.finalize(),
            State::Xxh3(s) => s.finalize(),
            State::Xxh128(s) => s.finalize(),
            State::Sm3(s) => s.finalize(),
            State::Sha3_224(s) => s.finalize(),
            State::Sha3_256(s) => s.finalize(),
            State::Sha3_384(s) => s.finalize(),
            State::Sha3_512(s) => s.finalize(),
            State::Crc(s) => s.finalize(),
            State::Crc32b(s) => s.finalize(),
            State::Bsd(s) => s.finalize(),
            State::Sysv(s) => s.finalize(),
            State::Crc32(s) => s.finalize(),
            State::Crc32c(s) => s.finalize(),
            State::Crc64Nvme(s) => s.finalize(),
            State::Parts(s) => (*s).finalize(),
            State::Joint(s) => (*s).finalize(),
        }
    }

    /// The bytes the algorithm compresses at a time (hashlib's
    /// `block_size`): 64 for MD5, SHA-1, SHA-224/256, SM3, BLAKE3 and
    /// XXH3; 128 for SHA-384/512 and BLAKE2b; SHA-3's rate (144, 136, 104,
    /// 72 bytes); xxHash's stripes (16, 32) for XXH32 and XXH64; 1 for the
    /// CRCs and the byte-serial old checksums; a digest of parts, its
    /// parts' algorithm's.
    pub fn block_size(&self) -> usize {
        match self.algorithm {
            Algorithm::Sha384 | Algorithm::Sha512 | Algorithm::Blake2b { .. } => 128,
            Algorithm::Xxh32 => 16,
            Algorithm::Xxh64 => 32,
            Algorithm::Sha3_224 => 144,
            Algorithm::Sha3_256 => 136,
            Algorithm::Sha3_384 => 104,
            Algorithm::Sha3_512 => 72,
            Algorithm::Crc
            | Algorithm::Crc32b
            | Algorithm::Bsd
            | Algorithm::Sysv
            | Algorithm::Crc32
            | Algorithm::Crc32c
            | Algorithm::Crc64Nvme => 1,
            a => match a.part_layout() {
                Some((of, _)) => Hasher::new(of).block_size(),
                None => 64,
            },
        }
    }
}

macro_rules! from_state {
    ($($variant:ident),*) => {
        $(impl From<h::$variant> for State {
            fn from(s: h::$variant) -> State {
                State::$variant(s)
            }
        })*
    };
}

from_state!(
    Md5, Sha1, Sha224, Sha256, Sha384, Sha512, Blake2b, Xxh32, Xxh64, Xxh3, Xxh128, Sm3, Sha3_224,
    Sha3_256, Sha3_384, Sha3_512, Crc, Crc32b, Bsd, Sysv, Crc32, Crc32c, Crc64Nvme
);

impl From<h::Parts> for State {
    fn from(s: h::Parts) -> State {
        State::Parts(Box::new(s))
    }
}

impl From<h::Joint> for State {
    fn from(s: h::Joint) -> State {
        State::Joint(Box::new(s))
    }
}

impl From<h::Blake3> for State {
    fn from(s: h::Blake3) -> State {
        State::Blake3(Box::new(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Every algorithm per case, in a debug build: 32 cases is plenty.
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn pieces_and_copies_equal_one_shot(
            data in proptest::collection::vec(any::<u8>(), 0..3000),
            cuts in proptest::collection::vec(0usize..3000, 0..6),
        ) {
            for algorithm in Algorithm::ALL {
                let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
                cuts.sort_unstable();
                let mut h = Hasher::new(algorithm);
                let mut at = 0;
                for cut in cuts {
                    h.update(&data[at..cut]);
                    at = cut;
                    // Reading the digest mid-stream does not end it.
                    prop_assert_eq!(h.digest(), algorithm.hash_bytes(&data[..at]));
                }
                let copy = h.clone();
                h.update(&data[at..]);
                prop_assert_eq!(h.digest(), algorithm.hash_bytes(&data));
                prop_assert_eq!(copy.digest(), algorithm.hash_bytes(&data[..at]));
                prop_assert_eq!(h.algorithm(), algorithm);
            }
        }
    }
}
