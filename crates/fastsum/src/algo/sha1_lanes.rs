//! Multi-buffer SHA-1: independent messages advanced together in SIMD
//! lanes, as [`super::md5_lanes`] does for MD5. Measured against the SHA-NI
//! single stream in `docs/BENCHMARKS.md` (`cargo bench -p fastsum --bench
//! hashing -- sha1_lanes`); not yet wired into the pipeline.
//!
//! Widths: AVX2 (8 lanes) and AVX-512 (16 lanes; three-input logic and
//! rotates in one instruction, byte swaps need AVX-512BW).

/// A SIMD width for [`compress_lanes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sha1Width {
    /// 8 lanes of AVX2.
    Avx2,
    /// 16 lanes of AVX-512F/BW.
    Avx512,
}

impl Sha1Width {
    /// Messages advanced together.
    pub fn lanes(self) -> usize {
        match self {
            Sha1Width::Avx2 => 8,
            Sha1Width::Avx512 => 16,
        }
    }

    /// Whether this CPU can run it.
    pub fn is_supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Sha1Width::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
                Sha1Width::Avx512 => {
                    std::arch::is_x86_feature_detected!("avx512f")
                        && std::arch::is_x86_feature_detected!("avx512bw")
                        && std::arch::is_x86_feature_detected!("avx2")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}

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
/// If `width` is not supported here, or a lane's data is shorter than
/// `blocks * 64` bytes.
pub fn compress_lanes(width: Sha1Width, states: &mut [[u32; 5]], data: &[&[u8]], blocks: usize) {
    let lanes = width.lanes();
    assert!(width.is_supported(), "not supported here");
    assert!(states.len() >= lanes && data.len() >= lanes);
    assert!(data[..lanes].iter().all(|d| d.len() >= blocks * 64));
    let mut pointers = [std::ptr::null::<u8>(); 16];
    for (p, d) in pointers.iter_mut().zip(data) {
        *p = d.as_ptr();
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU supports `width` and every lane's pointer is valid for
    // `blocks * 64` bytes (both asserted above).
    unsafe {
        match width {
            Sha1Width::Avx2 => x86::compress_avx2(states, &pointers, blocks),
            Sha1Width::Avx512 => x86::compress_avx512(states, &pointers, blocks),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("no lane width is supported off x86-64");
}

// SAFETY (for the whole module): as in `md5_lanes::x86`, every function is
// `unsafe` only for the ISA it needs, runs only inlined into the
// `#[target_feature]` entry points, which `compress_lanes` calls after
// checking the CPU and the slices' lengths.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_op_in_unsafe_fn)]
mod x86 {
    use super::super::md5_lanes::x86::message_half8;
    use std::arch::x86_64::*;

    trait Vector: Copy {
        const LANES: usize;
        unsafe fn splat(x: u32) -> Self;
        unsafe fn add(a: Self, b: Self) -> Self;
        unsafe fn xor(a: Self, b: Self) -> Self;
        unsafe fn rotl(x: Self, s: u32) -> Self;
        /// `(b & c) | (!b & d)`
        unsafe fn ch(b: Self, c: Self, d: Self) -> Self;
        /// `b ^ c ^ d`
        unsafe fn parity(b: Self, c: Self, d: Self) -> Self;
        /// `(b & c) | (b & d) | (c & d)`
        unsafe fn maj(b: Self, c: Self, d: Self) -> Self;
        /// `a ^ b ^ c`, then `^ d` (the schedule's four-way xor).
        unsafe fn xor4(a: Self, b: Self, c: Self, d: Self) -> Self;
        unsafe fn load(words: *const u32) -> Self;
        unsafe fn store(self, words: *mut u32);
        /// The 16 big-endian message words of each lane's block at `offset`.
        unsafe fn message(lanes: &[*const u8], offset: usize) -> [Self; 16];
    }

    #[inline(always)]
    unsafe fn kernel<V: Vector>(states: &mut [[u32; 5]], pointers: &[*const u8], blocks: usize) {
        let mut words = [[0u32; 16]; 5];
        for (lane, state) in states[..V::LANES].iter().enumerate() {
            for w in 0..5 {
                words[w][lane] = state[w];
            }
        }
        let mut h: [V; 5] = std::array::from_fn(|w| V::load(words[w].as_ptr()));
        let k = [
            V::splat(0x5a82_7999),
            V::splat(0x6ed9_eba1),
            V::splat(0x8f1b_bcdc),
            V::splat(0xca62_c1d6),
        ];
        for block in 0..blocks {
            let mut w = V::message(&pointers[..V::LANES], block * 64);
            let [mut a, mut b, mut c, mut d, mut e] = h;
            for t in 0..80 {
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
                    0 => V::ch(b, c, d),
                    2 => V::maj(b, c, d),
                    _ => V::parity(b, c, d),
                };
                let kw = V::add(k[t / 20], w[t % 16]);
                let temp = V::add(V::add(V::rotl(a, 5), f), V::add(e, kw));
                e = d;
                d = c;
                c = V::rotl(b, 30);
                b = a;
                a = temp;
            }
            h = [
                V::add(h[0], a),
                V::add(h[1], b),
                V::add(h[2], c),
                V::add(h[3], d),
                V::add(h[4], e),
            ];
        }
        for (w, v) in h.iter().enumerate() {
            v.store(words[w].as_mut_ptr());
        }
        for (lane, state) in states[..V::LANES].iter_mut().enumerate() {
            for w in 0..5 {
                state[w] = words[w][lane];
            }
        }
    }

    #[derive(Clone, Copy)]
    struct Avx2(__m256i);

    impl Vector for Avx2 {
        const LANES: usize = 8;
        #[inline(always)]
        unsafe fn splat(x: u32) -> Self {
            Avx2(_mm256_set1_epi32(x as i32))
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            Avx2(_mm256_add_epi32(a.0, b.0))
        }
        #[inline(always)]
        unsafe fn xor(a: Self, b: Self) -> Self {
            Avx2(_mm256_xor_si256(a.0, b.0))
        }
        #[inline(always)]
        unsafe fn rotl(x: Self, s: u32) -> Self {
            let left = _mm256_sll_epi32(x.0, _mm_cvtsi32_si128(s as i32));
            let right = _mm256_srl_epi32(x.0, _mm_cvtsi32_si128(32 - s as i32));
            Avx2(_mm256_or_si256(left, right))
        }
        #[inline(always)]
        unsafe fn ch(b: Self, c: Self, d: Self) -> Self {
            Avx2(_mm256_xor_si256(
                d.0,
                _mm256_and_si256(b.0, _mm256_xor_si256(c.0, d.0)),
            ))
        }
        #[inline(always)]
        unsafe fn parity(b: Self, c: Self, d: Self) -> Self {
            Avx2(_mm256_xor_si256(_mm256_xor_si256(b.0, c.0), d.0))
        }
        #[inline(always)]
        unsafe fn maj(b: Self, c: Self, d: Self) -> Self {
            let bc = _mm256_and_si256(b.0, c.0);
            Avx2(_mm256_or_si256(
                bc,
                _mm256_and_si256(d.0, _mm256_or_si256(b.0, c.0)),
            ))
        }
        #[inline(always)]
        unsafe fn xor4(a: Self, b: Self, c: Self, d: Self) -> Self {
            Self::xor(Self::xor(a, b), Self::xor(c, d))
        }
        #[inline(always)]
        unsafe fn load(words: *const u32) -> Self {
            Avx2(_mm256_loadu_si256(words.cast()))
        }
        #[inline(always)]
        unsafe fn store(self, words: *mut u32) {
            _mm256_storeu_si256(words.cast(), self.0)
        }
        #[inline(always)]
        unsafe fn message(lanes: &[*const u8], offset: usize) -> [Self; 16] {
            let swap = _mm256_setr_epi8(
                3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11,
                10, 9, 8, 15, 14, 13, 12,
            );
            let low = message_half8(lanes, offset);
            let high = message_half8(lanes, offset + 32);
            std::array::from_fn(|j| {
                let v = if j < 8 { low[j] } else { high[j - 8] };
                Avx2(_mm256_shuffle_epi8(v, swap))
            })
        }
    }

    #[derive(Clone, Copy)]
    struct Avx512(__m512i);

    impl Vector for Avx512 {
        const LANES: usize = 16;
        #[inline(always)]
        unsafe fn splat(x: u32) -> Self {
            Avx512(_mm512_set1_epi32(x as i32))
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            Avx512(_mm512_add_epi32(a.0, b.0))
        }
        #[inline(always)]
        unsafe fn xor(a: Self, b: Self) -> Self {
            Avx512(_mm512_xor_si512(a.0, b.0))
        }
        #[inline(always)]
        unsafe fn rotl(x: Self, s: u32) -> Self {
            Avx512(_mm512_rolv_epi32(x.0, _mm512_set1_epi32(s as i32)))
        }
        #[inline(always)]
        unsafe fn ch(b: Self, c: Self, d: Self) -> Self {
            Avx512(_mm512_ternarylogic_epi32::<0xCA>(b.0, c.0, d.0))
        }
        #[inline(always)]
        unsafe fn parity(b: Self, c: Self, d: Self) -> Self {
            Avx512(_mm512_ternarylogic_epi32::<0x96>(b.0, c.0, d.0))
        }
        #[inline(always)]
        unsafe fn maj(b: Self, c: Self, d: Self) -> Self {
            Avx512(_mm512_ternarylogic_epi32::<0xE8>(b.0, c.0, d.0))
        }
        #[inline(always)]
        unsafe fn xor4(a: Self, b: Self, c: Self, d: Self) -> Self {
            Avx512(_mm512_ternarylogic_epi32::<0x96>(
                a.0,
                b.0,
                Self::xor(c, d).0,
            ))
        }
        #[inline(always)]
        unsafe fn load(words: *const u32) -> Self {
            Avx512(_mm512_loadu_si512(words.cast()))
        }
        #[inline(always)]
        unsafe fn store(self, words: *mut u32) {
            _mm512_storeu_si512(words.cast(), self.0)
        }
        #[inline(always)]
        unsafe fn message(lanes: &[*const u8], offset: usize) -> [Self; 16] {
            let swap128 = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
            let swap = _mm512_broadcast_i32x4(swap128);
            let (first, second) = lanes.split_at(8);
            let low = [message_half8(first, offset), message_half8(second, offset)];
            let high = [
                message_half8(first, offset + 32),
                message_half8(second, offset + 32),
            ];
            std::array::from_fn(|j| {
                let halves = if j < 8 { &low } else { &high };
                let w = j % 8;
                let v = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(halves[0][w]), halves[1][w]);
                Avx512(_mm512_shuffle_epi8(v, swap))
            })
        }
    }

    /// # Safety
    /// AVX2 present; `pointers[..8]` readable for `blocks * 64` bytes.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compress_avx2(
        states: &mut [[u32; 5]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx2>(states, pointers, blocks)
    }

    /// # Safety
    /// AVX-512F/BW and AVX2 present; `pointers[..16]` readable for
    /// `blocks * 64` bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn compress_avx512(
        states: &mut [[u32; 5]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx512>(states, pointers, blocks)
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
        for width in [Sha1Width::Avx2, Sha1Width::Avx512] {
            if !width.is_supported() {
                continue;
            }
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
