//! NEON (Advanced SIMD, every aarch64 CPU): 4 lanes of 32 bits. `bsl`
//! (bit select) is MD5's F and G and SHA-1's Ch and Maj in one or two
//! instructions; `orn` gives MD5's I in two; rotates are a shift and a
//! shift-right-and-insert.

#![allow(unsafe_op_in_unsafe_fn)]

use std::arch::aarch64::*;

use super::Vector;

#[derive(Clone, Copy)]
pub(crate) struct Neon(uint32x4_t);

impl Vector for Neon {
    const LANES: usize = 4;
    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        Neon(vdupq_n_u32(x))
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        Neon(vaddq_u32(a.0, b.0))
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        Neon(veorq_u32(a.0, b.0))
    }
    #[inline(always)]
    unsafe fn choose(b: Self, c: Self, d: Self) -> Self {
        // Where b has a 1, c; else d.
        Neon(vbslq_u32(b.0, c.0, d.0))
    }
    #[inline(always)]
    unsafe fn md5_g(b: Self, c: Self, d: Self) -> Self {
        // Where d has a 1, b; else c.
        Neon(vbslq_u32(d.0, b.0, c.0))
    }
    #[inline(always)]
    unsafe fn parity(b: Self, c: Self, d: Self) -> Self {
        Neon(veorq_u32(veorq_u32(b.0, c.0), d.0))
    }
    #[inline(always)]
    unsafe fn md5_i(b: Self, c: Self, d: Self) -> Self {
        Neon(veorq_u32(c.0, vornq_u32(b.0, d.0)))
    }
    #[inline(always)]
    unsafe fn maj(b: Self, c: Self, d: Self) -> Self {
        // Where b and c agree, b; else d.
        Neon(vbslq_u32(veorq_u32(b.0, c.0), d.0, b.0))
    }
    #[inline(always)]
    unsafe fn xor4(a: Self, b: Self, c: Self, d: Self) -> Self {
        Self::xor(Self::xor(a, b), Self::xor(c, d))
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        Neon(vreinterpretq_u32_u8(vrev32q_u8(vreinterpretq_u8_u32(
            self.0,
        ))))
    }
    #[inline(always)]
    unsafe fn rotl(x: Self, s: u32) -> Self {
        // Called with constants only: once inlined, both shifts are
        // immediates (`shl`, `ushr`), the `or` an `orr`.
        let left = vshlq_u32(x.0, vdupq_n_s32(s as i32));
        let right = vshlq_u32(x.0, vdupq_n_s32(s as i32 - 32));
        Neon(vorrq_u32(left, right))
    }
    #[inline(always)]
    unsafe fn load(words: *const u32) -> Self {
        Neon(vld1q_u32(words))
    }
    #[inline(always)]
    unsafe fn store(self, words: *mut u32) {
        vst1q_u32(words, self.0)
    }
    #[inline(always)]
    unsafe fn message_le(lanes: &[*const u8], offset: usize) -> [Self; 16] {
        let mut m = [Neon(vdupq_n_u32(0)); 16];
        for quarter in 0..4 {
            let at = offset + 16 * quarter;
            let load = |l: usize| vreinterpretq_u32_u8(vld1q_u8(lanes[l].add(at)));
            let r = [load(0), load(1), load(2), load(3)];
            // 4x4 transpose of 32-bit words: trn1/trn2 on words, then on
            // 64-bit pairs.
            let t0 = vtrn1q_u32(r[0], r[1]);
            let t1 = vtrn2q_u32(r[0], r[1]);
            let t2 = vtrn1q_u32(r[2], r[3]);
            let t3 = vtrn2q_u32(r[2], r[3]);
            let pairs = |x: uint32x4_t| vreinterpretq_u64_u32(x);
            let words = |x: uint64x2_t| Neon(vreinterpretq_u32_u64(x));
            m[4 * quarter] = words(vtrn1q_u64(pairs(t0), pairs(t2)));
            m[4 * quarter + 1] = words(vtrn1q_u64(pairs(t1), pairs(t3)));
            m[4 * quarter + 2] = words(vtrn2q_u64(pairs(t0), pairs(t2)));
            m[4 * quarter + 3] = words(vtrn2q_u64(pairs(t1), pairs(t3)));
        }
        m
    }
}
