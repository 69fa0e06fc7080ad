//! Multi-buffer MD5: N independent messages advanced together, one per
//! SIMD lane.
//!
//! A single MD5 stream is one long dependency chain (see [`super::md5`]),
//! but the same step of *different* messages can run side by side: lane
//! `i` of every vector register holds message `i`'s state word. Widths:
//!
//! MD5 has a kernel at every [`Width`]. The widest the CPU supports is
//! chosen at run time, under the `FASTSUM_SIMD` ceiling, and run through
//! the entry points compiled for its instruction set, in
//! `simd/platform.rs`: this module is the kernel alone.
//!
//! This module only compresses whole blocks: [`compress_lanes`] advances
//! each lane's state by the same number of 64-byte blocks. Padding, feeding
//! lanes from files and refilling them is the scheduler's work
//! (`crate::stage::lanes`).

use crate::algo::md5::K;

use super::platform::Width;
use super::platform::{self, LaneKernel, Md5Lanes};

/// Advances `states[i]` by the first `blocks` 64-byte blocks of `data[i]`,
/// for every lane `i < width.lanes()`.
///
/// # Panics
///
/// If `width` is not supported by this CPU, if there are fewer than
/// `width.lanes()` states or data slices, or if a slice is shorter than
/// `blocks * 64` bytes.
pub fn compress_lanes(width: Width, states: &mut [[u32; 4]], data: &[&[u8]], blocks: usize) {
    platform::compress::<Md5Lanes>(width, states, data, blocks);
}

#[cfg(any(test, feature = "bench-internals"))]
/// Every width this CPU runs MD5 at, narrowest first (for tests and
/// benchmarks).
pub fn supported_widths() -> Vec<Width> {
    platform::runnable::<Md5Lanes>()
}

impl LaneKernel for Md5Lanes {
    type State = [u32; 4];

    fn has(_width: Width) -> bool {
        true
    }

    #[inline(always)]
    unsafe fn kernel<V: super::vector::Vector, const G: usize>(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        // SAFETY: the caller's promise (the trait's), passed on as is.
        unsafe { kernel::kernel::<V, G>(states, pointers, blocks) }
    }
}

// SAFETY (for the whole module): the kernel is `unsafe` for one reason
// only, the ISA its vector type needs, and its body is nothing but that
// vector's operations on values and on the lane pointers its caller vouches
// for. It runs only inlined into the platform's `#[target_feature]` entry
// points, which `compress_lanes` reaches after checking the CPU and the
// slices' lengths. Marking each operation `unsafe` again would repeat that
// on every line.
#[allow(unsafe_op_in_unsafe_fn)]
mod kernel {
    use super::super::platform::MAX_LANES;
    use super::super::vector::Vector;
    use super::K;

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
    pub(super) unsafe fn kernel<V: Vector, const G: usize>(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        let lanes = V::LANES * G;
        let mut words = [[0u32; MAX_LANES]; 4];
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
            rounds::<V, G>(&mut a, &mut b, &mut c, &mut d, &m);
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

    /// One block's 64 steps (RFC 1321, 3.4) on every group's state,
    /// unrolled: each step's message word and shift are constants, as the
    /// vector rotate wants them. Inlined into `kernel`, so the state
    /// stays in registers.
    #[inline(always)]
    unsafe fn rounds<V: Vector, const G: usize>(
        a: &mut [V; G],
        b: &mut [V; G],
        c: &mut [V; G],
        d: &mut [V; G],
        m: &[[V; 16]; G],
    ) {
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
        assert!(Width::Sse2.is_supported());
        #[cfg(target_arch = "aarch64")]
        assert!(Width::Neon.is_supported() && Width::Neonx2.is_supported());
        for width in supported_widths() {
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
