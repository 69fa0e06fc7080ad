//! Multi-buffer SHA-1: independent messages advanced together in SIMD
//! lanes, as [`super::md5`] does for MD5. Measured against the SHA-NI
//! single stream in `bench/results/BENCHMARKS-LOG.md` (`cargo bench -p fastsum --bench
//! hashing -- sha1_lanes`); `crate::stage::lanes` runs it for `-a sha1`.
//!
//! Every [`Width`] but SSE2's (4 lanes of plain SIMD lose to one SHA-NI
//! stream): AVX2 (8 lanes), AVX-512 (16 lanes; three-input logic and
//! rotates in one instruction, byte swaps need AVX-512BW) and AVX-512 with
//! two 16-lane groups interleaved step by step (32 lanes), as MD5's widest;
//! on aarch64 NEON (4 lanes) and two NEON groups interleaved (8). The
//! width is chosen and dispatched in `simd/platform.rs`: this module is
//! the kernel alone.

use super::platform::{self, LaneKernel, Sha1Lanes, Width};

/// SHA-1's initial state.
pub const INIT: [u32; 5] = [
    0x6745_2301,
    0xefcd_ab89,
    0x98ba_dcfe,
    0x1032_5476,
    0xc3d2_e1f0,
];

/// Advances `states[i]` by the first `blocks` 64-byte blocks of `data[i]`
/// for every lane `i < width.lanes()`.
///
/// # Panics
///
/// If SHA-1 has no lanes at `width` or this CPU cannot run it, or a lane's
/// data is shorter than `blocks * 64` bytes.
pub fn compress_lanes(width: Width, states: &mut [[u32; 5]], data: &[&[u8]], blocks: usize) {
    platform::compress::<Sha1Lanes>(width, states, data, blocks);
}

#[cfg(any(test, feature = "bench-internals"))]
/// Every width this CPU runs SHA-1 at, narrowest first (for tests and
/// benchmarks).
pub fn supported_widths() -> Vec<Width> {
    platform::runnable::<Sha1Lanes>()
}

impl LaneKernel for Sha1Lanes {
    type State = [u32; 5];

    fn has(width: Width) -> bool {
        width != Width::Sse2
    }

    /// NEON lanes only where the CPU lacks the ARMv8 SHA instructions (a
    /// Raspberry Pi 4's Cortex-A72): SSE2's lesson, that 4 lanes of plain
    /// SIMD lose to a hardware SHA-1 stream, is taken as NEON's too.
    fn beats_one_stream(width: Width) -> bool {
        !(super::cpu::cpu().sha2_instructions && matches!(width, Width::Neon | Width::Neonx2))
    }

    #[inline(always)]
    unsafe fn kernel<V: super::vector::Vector, const G: usize>(
        states: &mut [[u32; 5]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        // SAFETY: the caller's promise (the trait's), passed on as is.
        unsafe { kernel::kernel::<V, G>(states, pointers, blocks) }
    }
}

// SAFETY (for the whole module): as in `simd::md5`, the kernel is `unsafe`
// only for the ISA its vector type needs, and runs only inlined into the
// platform's `#[target_feature]` entry points, which `compress_lanes`
// reaches after checking the CPU and the slices' lengths.
#[allow(unsafe_op_in_unsafe_fn)]
mod kernel {
    use super::super::vector::Vector;

    /// `G` groups of `V::LANES` lanes, interleaved step by step so that the
    /// groups' dependency chains overlap.
    #[inline(always)]
    pub(super) unsafe fn kernel<V: Vector, const G: usize>(
        states: &mut [[u32; 5]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        let lanes = V::LANES * G;
        let mut words = [[0u32; 32]; 5];
        for (lane, state) in states[..lanes].iter().enumerate() {
            for w in 0..5 {
                words[w][lane] = state[w];
            }
        }
        let mut h = [[V::splat(0); 5]; G];
        for (g, state) in h.iter_mut().enumerate() {
            for (w, word) in state.iter_mut().enumerate() {
                *word = V::load(words[w][g * V::LANES..].as_ptr());
            }
        }
        let k = [
            V::splat(0x5a82_7999),
            V::splat(0x6ed9_eba1),
            V::splat(0x8f1b_bcdc),
            V::splat(0xca62_c1d6),
        ];
        for block in 0..blocks {
            let mut w = [[V::splat(0); 16]; G];
            for (g, words) in w.iter_mut().enumerate() {
                let message =
                    V::message_le(&pointers[g * V::LANES..(g + 1) * V::LANES], block * 64);
                for (word, little) in words.iter_mut().zip(message) {
                    *word = little.bswap();
                }
            }
            let mut s = h;
            for t in 0..80 {
                for g in 0..G {
                    let w = &mut w[g];
                    let [a, b, c, d, e] = s[g];
                    if t >= 16 {
                        let x = V::xor4(
                            w[(t - 3) % 16],
                            w[(t - 8) % 16],
                            w[(t - 14) % 16],
                            w[t % 16],
                        );
                        w[t % 16] = V::rotl(x, 1);
                    }
                    let f = match t / 20 {
                        0 => V::choose(b, c, d),
                        2 => V::maj(b, c, d),
                        _ => V::parity(b, c, d),
                    };
                    let kw = V::add(k[t / 20], w[t % 16]);
                    let temp = V::add(V::add(V::rotl(a, 5), f), V::add(e, kw));
                    s[g] = [temp, a, V::rotl(b, 30), c, d];
                }
            }
            for g in 0..G {
                for i in 0..5 {
                    h[g][i] = V::add(h[g][i], s[g][i]);
                }
            }
        }
        for (g, h) in h.iter().enumerate() {
            for (w, v) in h.iter().enumerate() {
                v.store(words[w][g * V::LANES..].as_mut_ptr());
            }
        }
        for (lane, state) in states[..lanes].iter_mut().enumerate() {
            for w in 0..5 {
                state[w] = words[w][lane];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha1::Digest as _;

    /// `message` padded as SHA-1 pads it.
    fn padded(message: &[u8]) -> Vec<u8> {
        let mut out = message.to_vec();
        out.push(0x80);
        while out.len() % 64 != 56 {
            out.push(0);
        }
        out.extend_from_slice(&((message.len() as u64) * 8).to_be_bytes());
        out
    }

    #[test]
    fn every_supported_width_matches_the_sha1_crate() {
        #[cfg(target_arch = "aarch64")]
        assert!(Width::Neon.is_supported() && Width::Neonx2.is_supported());
        for width in supported_widths() {
            for len in [0usize, 55, 56, 64, 119, 1000] {
                let messages: Vec<Vec<u8>> = (0..width.lanes())
                    .map(|l| (0..len).map(|i| (i * 7 + l * 31) as u8).collect())
                    .collect();
                let blocks: Vec<Vec<u8>> = messages.iter().map(|m| padded(m)).collect();
                let slices: Vec<&[u8]> = blocks.iter().map(Vec::as_slice).collect();
                let mut states = vec![INIT; width.lanes()];
                compress_lanes(width, &mut states, &slices, blocks[0].len() / 64);
                for (state, message) in states.iter().zip(&messages) {
                    let digest: Vec<u8> = state.iter().flat_map(|w| w.to_be_bytes()).collect();
                    assert_eq!(
                        digest,
                        sha1::Sha1::digest(message).to_vec(),
                        "{width:?} len {len}"
                    );
                }
            }
        }
    }
}
