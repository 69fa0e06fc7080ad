//! The xxHash family through `xxhash-rust`, seed 0 as `xxhsum` uses.
//! Digests are stored big-endian: the "canonical" form `xxhsum` prints.

use super::{Algorithm, StreamHasher};
use crate::digest::Digest;

/// XXH32.
#[derive(Clone)]
pub struct Xxh32(xxhash_rust::xxh32::Xxh32);

impl StreamHasher for Xxh32 {
    fn new(_: Algorithm) -> Self {
        Xxh32(xxhash_rust::xxh32::Xxh32::new(0))
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finalize(self) -> Digest {
        Digest::from_bytes(&self.0.digest().to_be_bytes())
    }
    fn oneshot(_: Algorithm, bytes: &[u8]) -> Digest {
        Digest::from_bytes(&xxhash_rust::xxh32::xxh32(bytes, 0).to_be_bytes())
    }
}

/// XXH64.
#[derive(Clone)]
pub struct Xxh64(xxhash_rust::xxh64::Xxh64);

impl StreamHasher for Xxh64 {
    fn new(_: Algorithm) -> Self {
        Xxh64(xxhash_rust::xxh64::Xxh64::new(0))
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finalize(self) -> Digest {
        Digest::from_bytes(&self.0.digest().to_be_bytes())
    }
    fn oneshot(_: Algorithm, bytes: &[u8]) -> Digest {
        Digest::from_bytes(&xxhash_rust::xxh64::xxh64(bytes, 0).to_be_bytes())
    }
}

/// XXH3, 64-bit output.
#[derive(Clone)]
pub struct Xxh3(xxhash_rust::xxh3::Xxh3);

impl StreamHasher for Xxh3 {
    fn new(_: Algorithm) -> Self {
        Xxh3(xxhash_rust::xxh3::Xxh3::new())
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finalize(self) -> Digest {
        Digest::from_bytes(&self.0.digest().to_be_bytes())
    }
    fn oneshot(_: Algorithm, bytes: &[u8]) -> Digest {
        Digest::from_bytes(&xxhash_rust::xxh3::xxh3_64(bytes).to_be_bytes())
    }
}

/// XXH3, 128-bit output (XXH128).
#[derive(Clone)]
pub struct Xxh128(xxhash_rust::xxh3::Xxh3);

impl StreamHasher for Xxh128 {
    fn new(_: Algorithm) -> Self {
        Xxh128(xxhash_rust::xxh3::Xxh3::new())
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finalize(self) -> Digest {
        Digest::from_bytes(&self.0.digest128().to_be_bytes())
    }
    fn oneshot(_: Algorithm, bytes: &[u8]) -> Digest {
        Digest::from_bytes(&xxhash_rust::xxh3::xxh3_128(bytes).to_be_bytes())
    }
}
