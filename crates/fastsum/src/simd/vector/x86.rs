//! SSE2 (4 lanes), AVX2 (8) and AVX-512 (16) vectors.

#![allow(unsafe_op_in_unsafe_fn)]

use std::arch::x86_64::*;

use super::Vector;

#[derive(Clone, Copy)]
pub(crate) struct Sse2(__m128i);

impl Vector for Sse2 {
    const LANES: usize = 4;
    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        Sse2(_mm_set1_epi32(x as i32))
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        Sse2(_mm_add_epi32(a.0, b.0))
    }
    #[inline(always)]
    unsafe fn choose(b: Self, c: Self, d: Self) -> Self {
        Sse2(_mm_xor_si128(
            d.0,
            _mm_and_si128(b.0, _mm_xor_si128(c.0, d.0)),
        ))
    }
    #[inline(always)]
    unsafe fn md5_g(b: Self, c: Self, d: Self) -> Self {
        Sse2(_mm_or_si128(
            _mm_and_si128(b.0, d.0),
            _mm_andnot_si128(d.0, c.0),
        ))
    }
    #[inline(always)]
    unsafe fn parity(b: Self, c: Self, d: Self) -> Self {
        Sse2(_mm_xor_si128(_mm_xor_si128(b.0, c.0), d.0))
    }
    #[inline(always)]
    unsafe fn md5_i(b: Self, c: Self, d: Self) -> Self {
        let not_d = _mm_xor_si128(d.0, _mm_set1_epi32(-1));
        Sse2(_mm_xor_si128(c.0, _mm_or_si128(b.0, not_d)))
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        Sse2(_mm_xor_si128(a.0, b.0))
    }
    #[inline(always)]
    unsafe fn maj(b: Self, c: Self, d: Self) -> Self {
        let bc = _mm_and_si128(b.0, c.0);
        Sse2(_mm_or_si128(bc, _mm_and_si128(d.0, _mm_or_si128(b.0, c.0))))
    }
    #[inline(always)]
    unsafe fn xor4(a: Self, b: Self, c: Self, d: Self) -> Self {
        Self::xor(Self::xor(a, b), Self::xor(c, d))
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // No byte shuffle in SSE2: shifts and masks.
        let x = self.0;
        let low = _mm_or_si128(_mm_slli_epi32::<24>(x), _mm_srli_epi32::<24>(x));
        let mask = _mm_set1_epi32(0x00ff_0000);
        let mid = _mm_or_si128(
            _mm_and_si128(_mm_slli_epi32::<8>(x), mask),
            _mm_and_si128(_mm_srli_epi32::<8>(x), _mm_set1_epi32(0x0000_ff00)),
        );
        Sse2(_mm_or_si128(low, mid))
    }
    #[inline(always)]
    unsafe fn rotl(x: Self, s: u32) -> Self {
        let left = _mm_sll_epi32(x.0, _mm_cvtsi32_si128(s as i32));
        let right = _mm_srl_epi32(x.0, _mm_cvtsi32_si128(32 - s as i32));
        Sse2(_mm_or_si128(left, right))
    }
    #[inline(always)]
    unsafe fn load(words: *const u32) -> Self {
        Sse2(_mm_loadu_si128(words.cast()))
    }
    #[inline(always)]
    unsafe fn store(self, words: *mut u32) {
        _mm_storeu_si128(words.cast(), self.0)
    }
    #[inline(always)]
    unsafe fn message_le(lanes: &[*const u8], offset: usize) -> [Self; 16] {
        let mut m = [Sse2(_mm_setzero_si128()); 16];
        for quarter in 0..4 {
            let at = offset + 16 * quarter;
            let load = |l: usize| _mm_loadu_si128(lanes[l].add(at).cast());
            let r = [load(0), load(1), load(2), load(3)];
            // 4x4 transpose of 32-bit words.
            let t0 = _mm_unpacklo_epi32(r[0], r[1]);
            let t1 = _mm_unpacklo_epi32(r[2], r[3]);
            let t2 = _mm_unpackhi_epi32(r[0], r[1]);
            let t3 = _mm_unpackhi_epi32(r[2], r[3]);
            m[4 * quarter] = Sse2(_mm_unpacklo_epi64(t0, t1));
            m[4 * quarter + 1] = Sse2(_mm_unpackhi_epi64(t0, t1));
            m[4 * quarter + 2] = Sse2(_mm_unpacklo_epi64(t2, t3));
            m[4 * quarter + 3] = Sse2(_mm_unpackhi_epi64(t2, t3));
        }
        m
    }
}

/// 8x8 transpose of 32-bit words: `rows[l]` holds 8 words of lane `l`;
/// the result's vector `j` holds word `j` of every lane.
#[inline(always)]
unsafe fn transpose8(r: [__m256i; 8]) -> [__m256i; 8] {
    let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
    let t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    let t2 = _mm256_unpacklo_epi32(r[2], r[3]);
    let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    let t4 = _mm256_unpacklo_epi32(r[4], r[5]);
    let t5 = _mm256_unpackhi_epi32(r[4], r[5]);
    let t6 = _mm256_unpacklo_epi32(r[6], r[7]);
    let t7 = _mm256_unpackhi_epi32(r[6], r[7]);
    let u0 = _mm256_unpacklo_epi64(t0, t2);
    let u1 = _mm256_unpackhi_epi64(t0, t2);
    let u2 = _mm256_unpacklo_epi64(t1, t3);
    let u3 = _mm256_unpackhi_epi64(t1, t3);
    let u4 = _mm256_unpacklo_epi64(t4, t6);
    let u5 = _mm256_unpackhi_epi64(t4, t6);
    let u6 = _mm256_unpacklo_epi64(t5, t7);
    let u7 = _mm256_unpackhi_epi64(t5, t7);
    [
        _mm256_permute2x128_si256::<0x20>(u0, u4),
        _mm256_permute2x128_si256::<0x20>(u1, u5),
        _mm256_permute2x128_si256::<0x20>(u2, u6),
        _mm256_permute2x128_si256::<0x20>(u3, u7),
        _mm256_permute2x128_si256::<0x31>(u0, u4),
        _mm256_permute2x128_si256::<0x31>(u1, u5),
        _mm256_permute2x128_si256::<0x31>(u2, u6),
        _mm256_permute2x128_si256::<0x31>(u3, u7),
    ]
}

/// Words `half * 8 .. half * 8 + 8` of 8 lanes, transposed.
#[inline(always)]
pub(crate) unsafe fn message_half8(lanes: &[*const u8], at: usize) -> [__m256i; 8] {
    let mut rows = [_mm256_setzero_si256(); 8];
    for (row, lane) in rows.iter_mut().zip(lanes) {
        *row = _mm256_loadu_si256(lane.add(at).cast());
    }
    transpose8(rows)
}

#[derive(Clone, Copy)]
pub(crate) struct Avx2(__m256i);

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
    unsafe fn choose(b: Self, c: Self, d: Self) -> Self {
        Avx2(_mm256_xor_si256(
            d.0,
            _mm256_and_si256(b.0, _mm256_xor_si256(c.0, d.0)),
        ))
    }
    #[inline(always)]
    unsafe fn md5_g(b: Self, c: Self, d: Self) -> Self {
        Avx2(_mm256_or_si256(
            _mm256_and_si256(b.0, d.0),
            _mm256_andnot_si256(d.0, c.0),
        ))
    }
    #[inline(always)]
    unsafe fn parity(b: Self, c: Self, d: Self) -> Self {
        Avx2(_mm256_xor_si256(_mm256_xor_si256(b.0, c.0), d.0))
    }
    #[inline(always)]
    unsafe fn md5_i(b: Self, c: Self, d: Self) -> Self {
        let not_d = _mm256_xor_si256(d.0, _mm256_set1_epi32(-1));
        Avx2(_mm256_xor_si256(c.0, _mm256_or_si256(b.0, not_d)))
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        Avx2(_mm256_xor_si256(a.0, b.0))
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
    unsafe fn bswap(self) -> Self {
        let swap = _mm256_setr_epi8(
            3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10,
            9, 8, 15, 14, 13, 12,
        );
        Avx2(_mm256_shuffle_epi8(self.0, swap))
    }
    #[inline(always)]
    unsafe fn rotl(x: Self, s: u32) -> Self {
        let left = _mm256_sll_epi32(x.0, _mm_cvtsi32_si128(s as i32));
        let right = _mm256_srl_epi32(x.0, _mm_cvtsi32_si128(32 - s as i32));
        Avx2(_mm256_or_si256(left, right))
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
    unsafe fn message_le(lanes: &[*const u8], offset: usize) -> [Self; 16] {
        let low = message_half8(lanes, offset);
        let high = message_half8(lanes, offset + 32);
        let mut m = [Avx2(_mm256_setzero_si256()); 16];
        for j in 0..8 {
            m[j] = Avx2(low[j]);
            m[j + 8] = Avx2(high[j]);
        }
        m
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Avx512(__m512i);

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
    // Three-input logic in one instruction: the immediate is the truth
    // table of (b, c, d) -> result, bit index b*4 + c*2 + d.
    #[inline(always)]
    unsafe fn choose(b: Self, c: Self, d: Self) -> Self {
        Avx512(_mm512_ternarylogic_epi32::<0xCA>(b.0, c.0, d.0))
    }
    #[inline(always)]
    unsafe fn md5_g(b: Self, c: Self, d: Self) -> Self {
        Avx512(_mm512_ternarylogic_epi32::<0xE4>(b.0, c.0, d.0))
    }
    #[inline(always)]
    unsafe fn parity(b: Self, c: Self, d: Self) -> Self {
        Avx512(_mm512_ternarylogic_epi32::<0x96>(b.0, c.0, d.0))
    }
    #[inline(always)]
    unsafe fn md5_i(b: Self, c: Self, d: Self) -> Self {
        Avx512(_mm512_ternarylogic_epi32::<0x39>(b.0, c.0, d.0))
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        Avx512(_mm512_xor_si512(a.0, b.0))
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
    /// Needs AVX-512BW where it is inlined (SHA-1's entry point has it).
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        let swap128 = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
        Avx512(_mm512_shuffle_epi8(self.0, _mm512_broadcast_i32x4(swap128)))
    }
    #[inline(always)]
    unsafe fn rotl(x: Self, s: u32) -> Self {
        Avx512(_mm512_rolv_epi32(x.0, _mm512_set1_epi32(s as i32)))
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
    unsafe fn message_le(lanes: &[*const u8], offset: usize) -> [Self; 16] {
        let (first, second) = lanes.split_at(8);
        let low = [message_half8(first, offset), message_half8(second, offset)];
        let high = [
            message_half8(first, offset + 32),
            message_half8(second, offset + 32),
        ];
        let mut m = [Avx512(_mm512_setzero_si512()); 16];
        for (j, word) in m.iter_mut().enumerate() {
            let halves = if j < 8 { &low } else { &high };
            let w = j % 8;
            *word = Avx512(_mm512_inserti64x4::<1>(
                _mm512_castsi256_si512(halves[0][w]),
                halves[1][w],
            ));
        }
        m
    }
}
