//! BLAKE2b (variable output length, as `b2sum -l`) and BLAKE3.

use blake2::digest::{Update, VariableOutput};

use super::{Algorithm, StreamHasher};
use crate::digest::{Digest, MAX_DIGEST_LEN};

/// BLAKE2b through the `blake2` crate, with the output length fixed at
/// construction (BLAKE2b's parameter block includes it, so a short digest
/// is not a truncation of the long one).
#[derive(Clone)]
pub struct Blake2b(blake2::Blake2bVar);

impl StreamHasher for Blake2b {
    fn new(algorithm: Algorithm) -> Self {
        let len = match algorithm {
            Algorithm::Blake2b { output_len } => output_len as usize,
            other => unreachable!("Blake2b hasher built for {other}"),
        };
        Blake2b(blake2::Blake2bVar::new(len).expect("BLAKE2b output length is 1..=64"))
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finalize(self) -> Digest {
        let mut out = [0u8; MAX_DIGEST_LEN];
        let len = self.0.output_size();
        self.0
            .finalize_variable(&mut out[..len])
            .expect("buffer sized to output");
        Digest::from_bytes(&out[..len])
    }
}

/// BLAKE3 through the `blake3` crate (SIMD chosen at run time).
#[derive(Clone, Default)]
pub struct Blake3(blake3::Hasher);

impl StreamHasher for Blake3 {
    fn new(_: Algorithm) -> Self {
        Self::default()
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finalize(self) -> Digest {
        Digest::from_bytes(self.0.finalize().as_bytes())
    }
}
