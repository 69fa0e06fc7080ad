//! MD5 (RFC 1321), with a compression function scheduled for latency.
//!
//! MD5 is one long dependency chain: each of the 64 steps needs the result
//! of the step before, so a single stream runs at the latency of that chain,
//! not at the CPU's width. What shortens the chain, per step (with `b` the
//! value the previous step just produced):
//!
//! * `a + K[i] + M[i]` never waits for `b`: it is added first.
//! * **F** = `d ^ (b & (c ^ d))`: `c ^ d` is ready early; two operations
//!   (and, xor) after `b`.
//! * **G** = `(b & d) + (c & !d)`: the two terms never share a bit, so `|`
//!   can be `+`, and `c & !d` is added before `b` arrives; one operation
//!   (and) after `b`, then the add. (The textbook form costs one more.)
//! * **H** = `b ^ (c ^ d)`: one xor after `b`.
//! * **I** = `c ^ (b | !d)`: `!d` ready early; two operations after `b`.
//!
//! Then add, rotate, add `b`. The `md-5` crate writes the functions in
//! their textbook form; this one, measured in `bench/results/BENCHMARKS-LOG.md`, is
//! faster and is what [`super::hashers::Md5`] uses. It is checked against
//! `md-5` by the known-answer vectors and a property test below.

use super::{Algorithm, StreamHasher};
use crate::digest::Digest;

pub(crate) const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// `floor(abs(sin(i + 1)) * 2^32)`, RFC 1321's table T.
pub(crate) const K: [u32; 64] = [
    0xd76a_a478,
    0xe8c7_b756,
    0x2420_70db,
    0xc1bd_ceee,
    0xf57c_0faf,
    0x4787_c62a,
    0xa830_4613,
    0xfd46_9501,
    0x6980_98d8,
    0x8b44_f7af,
    0xffff_5bb1,
    0x895c_d7be,
    0x6b90_1122,
    0xfd98_7193,
    0xa679_438e,
    0x49b4_0821,
    0xf61e_2562,
    0xc040_b340,
    0x265e_5a51,
    0xe9b6_c7aa,
    0xd62f_105d,
    0x0244_1453,
    0xd8a1_e681,
    0xe7d3_fbc8,
    0x21e1_cde6,
    0xc337_07d6,
    0xf4d5_0d87,
    0x455a_14ed,
    0xa9e3_e905,
    0xfcef_a3f8,
    0x676f_02d9,
    0x8d2a_4c8a,
    0xfffa_3942,
    0x8771_f681,
    0x6d9d_6122,
    0xfde5_380c,
    0xa4be_ea44,
    0x4bde_cfa9,
    0xf6bb_4b60,
    0xbebf_bc70,
    0x289b_7ec6,
    0xeaa1_27fa,
    0xd4ef_3085,
    0x0488_1d05,
    0xd9d4_d039,
    0xe6db_99e5,
    0x1fa2_7cf8,
    0xc4ac_5665,
    0xf429_2244,
    0x432a_ff97,
    0xab94_23a7,
    0xfc93_a039,
    0x655b_59c3,
    0x8f0c_cc92,
    0xffef_f47d,
    0x8584_5dd1,
    0x6fa8_7e4f,
    0xfe2c_e6e0,
    0xa301_4314,
    0x4e08_11a1,
    0xf753_7e82,
    0xbd3a_f235,
    0x2ad7_d2bb,
    0xeb86_d391,
];

/// `x`, hidden from the optimizer. LLVM likes to re-associate
/// `a + M + K + f(b)` so that the constant `K` is added last, which puts an
/// extra add on the chain after `f(b)`; making `a + M + K` opaque keeps the
/// sum that does not depend on `b` computed off the critical path.
#[inline(always)]
fn off_chain(x: u32) -> u32 {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    {
        let mut x = x;
        // SAFETY: the template is a comment: no instruction is emitted, no
        // memory or flags are touched; the value passes through a register
        // unchanged.
        unsafe {
            std::arch::asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        x
    }
    #[cfg(target_arch = "aarch64")]
    {
        let mut x = x;
        // SAFETY: as above: an empty template, the value stays in a register.
        unsafe {
            std::arch::asm!("/* {0:w} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        x
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    {
        x
    }
}

macro_rules! step {
    (F, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
        $a = off_chain($a.wrapping_add($m).wrapping_add($k))
            .wrapping_add($d ^ ($b & ($c ^ $d)))
            .rotate_left($s)
            .wrapping_add($b);
    };
    (G, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
        $a = off_chain($a.wrapping_add($m).wrapping_add($k).wrapping_add($c & !$d))
            .wrapping_add($b & $d)
            .rotate_left($s)
            .wrapping_add($b);
    };
    (H, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
        $a = off_chain($a.wrapping_add($m).wrapping_add($k))
            .wrapping_add($b ^ ($c ^ $d))
            .rotate_left($s)
            .wrapping_add($b);
    };
    (I, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
        $a = off_chain($a.wrapping_add($m).wrapping_add($k))
            .wrapping_add($c ^ ($b | !$d))
            .rotate_left($s)
            .wrapping_add($b);
    };
}

/// Four steps of one round, with the message word indices and shifts.
macro_rules! four {
    ($f:ident, $a:ident, $b:ident, $c:ident, $d:ident, $m:ident, $i:expr, [$m0:expr, $m1:expr, $m2:expr, $m3:expr], [$s0:expr, $s1:expr, $s2:expr, $s3:expr]) => {
        step!($f, $a, $b, $c, $d, $m[$m0], K[$i], $s0);
        step!($f, $d, $a, $b, $c, $m[$m1], K[$i + 1], $s1);
        step!($f, $c, $d, $a, $b, $m[$m2], K[$i + 2], $s2);
        step!($f, $b, $c, $d, $a, $m[$m3], K[$i + 3], $s3);
    };
}

/// Absorbs `blocks` (a whole number of 64-byte blocks) into `state`.
// Not inlined: one copy of this large body serves every caller.
#[inline(never)]
pub fn compress(state: &mut [u32; 4], blocks: &[u8]) {
    debug_assert_eq!(blocks.len() % 64, 0);
    for block in blocks.chunks_exact(64) {
        let mut m = [0u32; 16];
        for (word, bytes) in m.iter_mut().zip(block.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        let [mut a, mut b, mut c, mut d] = *state;
        four!(F, a, b, c, d, m, 0, [0, 1, 2, 3], [7, 12, 17, 22]);
        four!(F, a, b, c, d, m, 4, [4, 5, 6, 7], [7, 12, 17, 22]);
        four!(F, a, b, c, d, m, 8, [8, 9, 10, 11], [7, 12, 17, 22]);
        four!(F, a, b, c, d, m, 12, [12, 13, 14, 15], [7, 12, 17, 22]);
        four!(G, a, b, c, d, m, 16, [1, 6, 11, 0], [5, 9, 14, 20]);
        four!(G, a, b, c, d, m, 20, [5, 10, 15, 4], [5, 9, 14, 20]);
        four!(G, a, b, c, d, m, 24, [9, 14, 3, 8], [5, 9, 14, 20]);
        four!(G, a, b, c, d, m, 28, [13, 2, 7, 12], [5, 9, 14, 20]);
        four!(H, a, b, c, d, m, 32, [5, 8, 11, 14], [4, 11, 16, 23]);
        four!(H, a, b, c, d, m, 36, [1, 4, 7, 10], [4, 11, 16, 23]);
        four!(H, a, b, c, d, m, 40, [13, 0, 3, 6], [4, 11, 16, 23]);
        four!(H, a, b, c, d, m, 44, [9, 12, 15, 2], [4, 11, 16, 23]);
        four!(I, a, b, c, d, m, 48, [0, 7, 14, 5], [6, 10, 15, 21]);
        four!(I, a, b, c, d, m, 52, [12, 3, 10, 1], [6, 10, 15, 21]);
        four!(I, a, b, c, d, m, 56, [8, 15, 6, 13], [6, 10, 15, 21]);
        four!(I, a, b, c, d, m, 60, [4, 11, 2, 9], [6, 10, 15, 21]);
        a = a.wrapping_add(state[0]);
        b = b.wrapping_add(state[1]);
        c = c.wrapping_add(state[2]);
        d = d.wrapping_add(state[3]);
        *state = [a, b, c, d];
    }
}

/// A streaming MD5: state, a partial block, and the length so far.
#[derive(Clone)]
pub struct Md5 {
    state: [u32; 4],
    pending: [u8; 64],
    pending_len: usize,
    total_len: u64,
}

impl Default for Md5 {
    fn default() -> Self {
        Md5 {
            state: INIT,
            pending: [0; 64],
            pending_len: 0,
            total_len: 0,
        }
    }
}

impl Md5 {
    /// The state before any block (the lanes start from it).
    #[cfg(feature = "simd")]
    pub const INITIAL_STATE: [u32; 4] = INIT;

    /// Absorbs `bytes`.
    pub fn absorb(&mut self, mut bytes: &[u8]) {
        self.total_len = self.total_len.wrapping_add(bytes.len() as u64);
        if self.pending_len > 0 {
            let take = (64 - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < 64 {
                return;
            }
            compress(&mut self.state, &self.pending);
            self.pending_len = 0;
        }
        let whole = bytes.len() / 64 * 64;
        let (blocks, rest) = bytes.split_at(whole);
        compress(&mut self.state, blocks);
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// Pads, and returns the 16-byte digest.
    pub fn finish(mut self) -> [u8; 16] {
        let bit_len = self.total_len.wrapping_mul(8);
        let mut tail = [0u8; 128];
        tail[..self.pending_len].copy_from_slice(&self.pending[..self.pending_len]);
        tail[self.pending_len] = 0x80;
        let tail_len = if self.pending_len < 56 { 64 } else { 128 };
        tail[tail_len - 8..tail_len].copy_from_slice(&bit_len.to_le_bytes());
        compress(&mut self.state, &tail[..tail_len]);
        let mut out = [0u8; 16];
        for (bytes, word) in out.chunks_exact_mut(4).zip(self.state) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        out
    }
}

impl StreamHasher for Md5 {
    fn new(_: Algorithm) -> Self {
        Self::default()
    }
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.absorb(bytes);
    }
    fn finalize(self) -> Digest {
        Digest::from_bytes(&self.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use md5::Digest as _;
    use proptest::prelude::*;

    fn reference(data: &[u8]) -> [u8; 16] {
        md5::Md5::digest(data).into()
    }

    #[test]
    fn every_length_around_the_padding_edges_matches_md5_crate() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 131 + 7) as u8).collect();
        for len in 0..=300 {
            let mut h = Md5::default();
            h.absorb(&data[..len]);
            assert_eq!(h.finish(), reference(&data[..len]), "length {len}");
        }
    }

    proptest! {
        #[test]
        fn any_split_matches_md5_crate(data in proptest::collection::vec(any::<u8>(), 0..5000), cuts in proptest::collection::vec(0usize..5000, 0..8)) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (data.len() + 1)).collect();
            cuts.sort_unstable();
            let mut h = Md5::default();
            let mut start = 0;
            for cut in cuts {
                h.absorb(&data[start..cut]);
                start = cut;
            }
            h.absorb(&data[start..]);
            prop_assert_eq!(h.finish(), reference(&data));
        }
    }
}
