//! Multi-buffer MD5: N independent messages advanced together, one per
//! SIMD lane.
//!
//! A single MD5 stream is one long dependency chain (see [`super::md5`]),
//! but the same step of *different* messages can run side by side: lane
//! `i` of every vector register holds message `i`'s state word. Widths:
//!
//! | width | lanes | ISA |
//! |---|---:|---|
//! | [`LaneWidth::Sse2`] | 4 | SSE2 (every x86-64) |
//! | [`LaneWidth::Avx2`] | 8 | AVX2 |
//! | [`LaneWidth::Avx2x2`] | 16 | AVX2, two 8-lane groups interleaved to hide latency |
//! | [`LaneWidth::Avx512`] | 16 | AVX-512F (rotate and three-input logic in one instruction each) |
//! | [`LaneWidth::Avx512x2`] | 32 | AVX-512F, two 16-lane groups interleaved |
//! | [`LaneWidth::Neon`] | 4 | NEON (every aarch64) |
//! | [`LaneWidth::Neonx2`] | 8 | NEON, two 4-lane groups interleaved |
//!
//! The widest the CPU supports is chosen at run time, under the
//! `FASTSUM_SIMD` ceiling, in [`super::platform`].
//!
//! This module only compresses whole blocks: [`compress_lanes`] advances
//! each lane's state by the same number of 64-byte blocks. Padding, feeding
//! lanes from files and refilling them is the scheduler's work
//! (`crate::stage::lanes`).

use crate::algo::md5::K;

/// The most lanes any width has.
pub(crate) const MAX_LANES: usize = 32;

/// A SIMD width for [`compress_lanes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaneWidth {
    /// 4 lanes of SSE2.
    Sse2,
    /// 8 lanes of AVX2.
    Avx2,
    /// 16 lanes: two interleaved 8-lane AVX2 groups.
    Avx2x2,
    /// 16 lanes of AVX-512F.
    Avx512,
    /// 32 lanes: two interleaved 16-lane AVX-512F groups.
    Avx512x2,
    /// 4 lanes of NEON (aarch64).
    Neon,
    /// 8 lanes: two interleaved 4-lane NEON groups.
    Neonx2,
}

impl LaneWidth {
    /// Every width, narrowest first.
    pub const ALL: [LaneWidth; 7] = [
        LaneWidth::Sse2,
        LaneWidth::Neon,
        LaneWidth::Avx2,
        LaneWidth::Neonx2,
        LaneWidth::Avx2x2,
        LaneWidth::Avx512,
        LaneWidth::Avx512x2,
    ];

    /// Messages advanced together.
    pub fn lanes(self) -> usize {
        match self {
            LaneWidth::Sse2 | LaneWidth::Neon => 4,
            LaneWidth::Avx2 | LaneWidth::Neonx2 => 8,
            LaneWidth::Avx2x2 | LaneWidth::Avx512 => 16,
            LaneWidth::Avx512x2 => 32,
        }
    }

    /// The name `FASTSUM_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            LaneWidth::Sse2 => "sse2",
            LaneWidth::Avx2 => "avx2",
            LaneWidth::Avx2x2 => "avx2x2",
            LaneWidth::Avx512 => "avx512",
            LaneWidth::Avx512x2 => "avx512x2",
            LaneWidth::Neon => "neon",
            LaneWidth::Neonx2 => "neonx2",
        }
    }

    /// Whether this CPU can run it.
    pub fn is_supported(self) -> bool {
        let cpu = super::cpu::cpu();
        match self {
            LaneWidth::Sse2 => cpu.sse2,
            LaneWidth::Avx2 | LaneWidth::Avx2x2 => cpu.avx2,
            LaneWidth::Avx512 | LaneWidth::Avx512x2 => cpu.avx512f && cpu.avx2,
            LaneWidth::Neon | LaneWidth::Neonx2 => cpu.neon,
        }
    }

    /// Every width this CPU can run, narrowest first (for tests and
    /// benchmarks).
    pub fn supported() -> Vec<LaneWidth> {
        Self::ALL.into_iter().filter(|w| w.is_supported()).collect()
    }
}

/// Advances `states[i]` by the first `blocks` 64-byte blocks of `data[i]`,
/// for every lane `i < width.lanes()`.
///
/// # Panics
///
/// If `width` is not supported by this CPU, if there are fewer than
/// `width.lanes()` states or data slices, or if a slice is shorter than
/// `blocks * 64` bytes.
pub fn compress_lanes(width: LaneWidth, states: &mut [[u32; 4]], data: &[&[u8]], blocks: usize) {
    let lanes = width.lanes();
    assert!(
        width.is_supported(),
        "{} is not supported here",
        width.name()
    );
    assert!(states.len() >= lanes && data.len() >= lanes);
    assert!(data[..lanes].iter().all(|d| d.len() >= blocks * 64));
    let mut pointers = [std::ptr::null::<u8>(); MAX_LANES];
    for (p, d) in pointers.iter_mut().zip(data) {
        *p = d.as_ptr();
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the CPU supports `width` (asserted above), and every lane's
    // pointer is valid for `blocks * 64` bytes of reading (asserted above;
    // the slices outlive this call).
    unsafe {
        kernels::compress(width, states, &pointers, blocks)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    unreachable!("no lane width is supported here");
}

// SAFETY (for the whole module): every function here is `unsafe` for one
// reason only, the ISA it needs, and its body is nothing but that ISA's
// intrinsics on values and on the lane pointers its caller vouches for.
// The `Vector` methods run only inlined into the `#[target_feature]` entry
// points below, which `compress_lanes` calls after checking the CPU and
// the slices' lengths. Marking each intrinsic call `unsafe` again would
// repeat that on every line.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[allow(unsafe_op_in_unsafe_fn)]
mod kernels {
    #[cfg(target_arch = "aarch64")]
    use super::super::vector::neon::Neon;
    #[cfg(target_arch = "x86_64")]
    use super::super::vector::x86::{Avx2, Avx512, Sse2};
    use super::super::vector::Vector;
    use super::{LaneWidth, K};

    /// # Safety
    /// The CPU supports `width`; `pointers[..width.lanes()]` readable for
    /// `blocks * 64` bytes; `states` has as many.
    pub(super) unsafe fn compress(
        width: LaneWidth,
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        match width {
            #[cfg(target_arch = "x86_64")]
            LaneWidth::Sse2 => compress_sse2(states, pointers, blocks),
            #[cfg(target_arch = "x86_64")]
            LaneWidth::Avx2 => compress_avx2(states, pointers, blocks),
            #[cfg(target_arch = "x86_64")]
            LaneWidth::Avx2x2 => compress_avx2x2(states, pointers, blocks),
            #[cfg(target_arch = "x86_64")]
            LaneWidth::Avx512 => compress_avx512(states, pointers, blocks),
            #[cfg(target_arch = "x86_64")]
            LaneWidth::Avx512x2 => compress_avx512x2(states, pointers, blocks),
            #[cfg(target_arch = "aarch64")]
            LaneWidth::Neon => compress_neon(states, pointers, blocks),
            #[cfg(target_arch = "aarch64")]
            LaneWidth::Neonx2 => compress_neonx2(states, pointers, blocks),
            #[allow(unreachable_patterns)]
            _ => unreachable!("{} is not an instruction set of this target", width.name()),
        }
    }

    macro_rules! step {
        ($f:ident, $g:expr, $a:ident, $b:ident, $c:ident, $d:ident, $m:ident, $i:expr, $w:expr, $s:expr) => {
            for g in 0..$g {
                let t = V::add(V::add($a[g], V::splat(K[$i])), $m[g][$w]);
                let t = V::add(t, V::$f($b[g], $c[g], $d[g]));
                $a[g] = V::add($b[g], V::rotl(t, $s));
            }
        };
    }

    macro_rules! four {
        ($f:ident, $g:expr, $a:ident, $b:ident, $c:ident, $d:ident, $m:ident, $i:expr, [$w0:expr, $w1:expr, $w2:expr, $w3:expr], [$s0:expr, $s1:expr, $s2:expr, $s3:expr]) => {
            step!($f, $g, $a, $b, $c, $d, $m, $i, $w0, $s0);
            step!($f, $g, $d, $a, $b, $c, $m, $i + 1, $w1, $s1);
            step!($f, $g, $c, $d, $a, $b, $m, $i + 2, $w2, $s2);
            step!($f, $g, $b, $c, $d, $a, $m, $i + 3, $w3, $s3);
        };
    }

    /// `G` groups of `V::LANES` lanes, interleaved step by step so that the
    /// groups' chains overlap.
    #[inline(always)]
    unsafe fn kernel<V: Vector, const G: usize>(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        let lanes = V::LANES * G;
        let mut words = [[0u32; super::MAX_LANES]; 4];
        for (lane, state) in states[..lanes].iter().enumerate() {
            for w in 0..4 {
                words[w][lane] = state[w];
            }
        }
        let mut a = [V::splat(0); G];
        let mut b = a;
        let mut c = a;
        let mut d = a;
        for g in 0..G {
            a[g] = V::load(words[0][g * V::LANES..].as_ptr());
            b[g] = V::load(words[1][g * V::LANES..].as_ptr());
            c[g] = V::load(words[2][g * V::LANES..].as_ptr());
            d[g] = V::load(words[3][g * V::LANES..].as_ptr());
        }
        for block in 0..blocks {
            let offset = block * 64;
            // The message words, built in place: zeroing the array first
            // was a 2 KiB memset per block, and without it AVX-512 2x16
            // runs at 9.8 instead of 8.8 GB/s (the other widths unchanged).
            let mut words = [const { std::mem::MaybeUninit::<[V; 16]>::uninit() }; G];
            for (g, w) in words.iter_mut().enumerate() {
                w.write(V::message_le(
                    &pointers[g * V::LANES..(g + 1) * V::LANES],
                    offset,
                ));
            }
            // SAFETY: every element was written just above, and an array of
            // `MaybeUninit<T>` has the size and alignment of the array of
            // `T`.
            let m: [[V; 16]; G] = unsafe { std::mem::transmute_copy(&words) };
            let (a0, b0, c0, d0) = (a, b, c, d);
            four!(choose, G, a, b, c, d, m, 0, [0, 1, 2, 3], [7, 12, 17, 22]);
            four!(choose, G, a, b, c, d, m, 4, [4, 5, 6, 7], [7, 12, 17, 22]);
            four!(choose, G, a, b, c, d, m, 8, [8, 9, 10, 11], [7, 12, 17, 22]);
            four!(
                choose,
                G,
                a,
                b,
                c,
                d,
                m,
                12,
                [12, 13, 14, 15],
                [7, 12, 17, 22]
            );
            four!(md5_g, G, a, b, c, d, m, 16, [1, 6, 11, 0], [5, 9, 14, 20]);
            four!(md5_g, G, a, b, c, d, m, 20, [5, 10, 15, 4], [5, 9, 14, 20]);
            four!(md5_g, G, a, b, c, d, m, 24, [9, 14, 3, 8], [5, 9, 14, 20]);
            four!(md5_g, G, a, b, c, d, m, 28, [13, 2, 7, 12], [5, 9, 14, 20]);
            four!(
                parity,
                G,
                a,
                b,
                c,
                d,
                m,
                32,
                [5, 8, 11, 14],
                [4, 11, 16, 23]
            );
            four!(parity, G, a, b, c, d, m, 36, [1, 4, 7, 10], [4, 11, 16, 23]);
            four!(parity, G, a, b, c, d, m, 40, [13, 0, 3, 6], [4, 11, 16, 23]);
            four!(
                parity,
                G,
                a,
                b,
                c,
                d,
                m,
                44,
                [9, 12, 15, 2],
                [4, 11, 16, 23]
            );
            four!(md5_i, G, a, b, c, d, m, 48, [0, 7, 14, 5], [6, 10, 15, 21]);
            four!(md5_i, G, a, b, c, d, m, 52, [12, 3, 10, 1], [6, 10, 15, 21]);
            four!(md5_i, G, a, b, c, d, m, 56, [8, 15, 6, 13], [6, 10, 15, 21]);
            four!(md5_i, G, a, b, c, d, m, 60, [4, 11, 2, 9], [6, 10, 15, 21]);
            for g in 0..G {
                a[g] = V::add(a[g], a0[g]);
                b[g] = V::add(b[g], b0[g]);
                c[g] = V::add(c[g], c0[g]);
                d[g] = V::add(d[g], d0[g]);
            }
        }
        for g in 0..G {
            a[g].store(words[0][g * V::LANES..].as_mut_ptr());
            b[g].store(words[1][g * V::LANES..].as_mut_ptr());
            c[g].store(words[2][g * V::LANES..].as_mut_ptr());
            d[g].store(words[3][g * V::LANES..].as_mut_ptr());
        }
        for (lane, state) in states[..lanes].iter_mut().enumerate() {
            for w in 0..4 {
                state[w] = words[w][lane];
            }
        }
    }

    /// # Safety
    /// `pointers[..4]` readable for `blocks * 64` bytes; `states` has 4.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn compress_sse2(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Sse2, 1>(states, pointers, blocks)
    }

    /// # Safety
    /// AVX2 present; `pointers[..8]` readable for `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compress_avx2(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx2, 1>(states, pointers, blocks)
    }

    /// # Safety
    /// AVX2 present; `pointers[..16]` readable for `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compress_avx2x2(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx2, 2>(states, pointers, blocks)
    }

    /// # Safety
    /// AVX-512F and AVX2 present; `pointers[..16]` readable for
    /// `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn compress_avx512(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx512, 1>(states, pointers, blocks)
    }

    /// # Safety
    /// AVX-512F and AVX2 present; `pointers[..32]` readable for
    /// `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn compress_avx512x2(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx512, 2>(states, pointers, blocks)
    }

    /// # Safety
    /// NEON present; `pointers[..4]` readable for `blocks * 64` bytes.
    #[cfg(target_arch = "aarch64")]
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn compress_neon(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Neon, 1>(states, pointers, blocks)
    }

    /// # Safety
    /// NEON present; `pointers[..8]` readable for `blocks * 64` bytes.
    #[cfg(target_arch = "aarch64")]
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn compress_neonx2(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Neon, 2>(states, pointers, blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::md5::{compress, INIT};

    #[test]
    fn every_supported_width_matches_the_scalar_compression() {
        // Every CPU of these targets has the narrowest width at least.
        #[cfg(target_arch = "x86_64")]
        assert!(LaneWidth::Sse2.is_supported());
        #[cfg(target_arch = "aarch64")]
        assert!(LaneWidth::Neon.is_supported() && LaneWidth::Neonx2.is_supported());
        for width in LaneWidth::supported() {
            let lanes = width.lanes();
            for blocks in [0, 1, 2, 5] {
                let data: Vec<Vec<u8>> = (0..lanes)
                    .map(|l| {
                        (0..blocks * 64)
                            .map(|i| (i * 31 + l * 7 + blocks) as u8)
                            .collect()
                    })
                    .collect();
                let slices: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
                let mut states: Vec<[u32; 4]> = (0..lanes)
                    .map(|l| INIT.map(|w| w.wrapping_add(l as u32)))
                    .collect();
                let expected: Vec<[u32; 4]> = states
                    .iter()
                    .zip(&data)
                    .map(|(s, d)| {
                        let mut s = *s;
                        compress(&mut s, d);
                        s
                    })
                    .collect();
                compress_lanes(width, &mut states, &slices, blocks);
                assert_eq!(states, expected, "{} with {blocks} blocks", width.name());
            }
        }
    }
}
