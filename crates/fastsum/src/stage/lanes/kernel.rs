//! What the lanes compute: an algorithm (MD5 or SHA-1) at a SIMD width.

use crate::algo::Algorithm;
use crate::simd::platform::{lanes_for, MAX_LANES};
use crate::simd::Width;

/// The lanes' algorithm and SIMD width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// MD5 at this width.
    Md5(Width),
    /// SHA-1 at this width.
    Sha1(Width),
}

impl Kernel {
    /// The lanes for `algorithm` on this CPU, if it has any and
    /// `FASTSUM_SIMD` does not turn them off (MD5 and SHA-1 only).
    pub fn for_algorithm(algorithm: Algorithm) -> Option<Kernel> {
        match algorithm {
            Algorithm::Md5 => lanes_for(algorithm).map(Kernel::Md5),
            Algorithm::Sha1 => lanes_for(algorithm).map(Kernel::Sha1),
            _ => None,
        }
    }

    /// The algorithm it computes.
    pub fn algorithm(self) -> Algorithm {
        match self {
            Kernel::Md5(_) => Algorithm::Md5,
            Kernel::Sha1(_) => Algorithm::Sha1,
        }
    }

    /// Files advanced together.
    pub fn lanes(self) -> usize {
        let (Kernel::Md5(width) | Kernel::Sha1(width)) = self;
        width.lanes()
    }

    pub(super) fn initial_state(self) -> [u32; 5] {
        match self {
            Kernel::Md5(_) => {
                let [a, b, c, d] = crate::algo::hashers::Md5::INITIAL_STATE;
                [a, b, c, d, 0]
            }
            Kernel::Sha1(_) => crate::simd::sha1::INIT,
        }
    }

    /// SHA-1 writes its length and its digest words big-endian.
    pub(super) fn big_endian(self) -> bool {
        matches!(self, Kernel::Sha1(_))
    }

    pub(super) fn digest_words(self) -> usize {
        match self {
            Kernel::Md5(_) => 4,
            Kernel::Sha1(_) => 5,
        }
    }

    pub(super) fn compress(self, states: &mut [[u32; 5]], data: &[&[u8]], blocks: usize) {
        match self {
            Kernel::Md5(width) => {
                let lanes = width.lanes();
                let mut md5_states = [[0u32; 4]; MAX_LANES];
                for (md5, state) in md5_states.iter_mut().zip(states.iter()) {
                    md5.copy_from_slice(&state[..4]);
                }
                crate::simd::md5::compress_lanes(width, &mut md5_states[..lanes], data, blocks);
                for (state, md5) in states.iter_mut().zip(&md5_states[..lanes]) {
                    state[..4].copy_from_slice(md5);
                }
            }
            Kernel::Sha1(width) => crate::simd::sha1::compress_lanes(width, states, data, blocks),
        }
    }

    /// The single-stream compression of whole `blocks`.
    pub(super) fn compress_one(self, state: &mut [u32; 5], blocks: &[u8]) {
        match self {
            Kernel::Md5(_) => {
                let mut md5 = [state[0], state[1], state[2], state[3]];
                crate::algo::hashers::md5_compress(&mut md5, blocks);
                state[..4].copy_from_slice(&md5);
            }
            Kernel::Sha1(_) => {
                use sha1::digest::generic_array::GenericArray;
                for block in blocks.chunks_exact(64) {
                    sha1::compress(state, std::slice::from_ref(GenericArray::from_slice(block)));
                }
            }
        }
    }
}
