//! Multi-buffer SHA-1: independent messages advanced together in SIMD
//! lanes, as [`super::md5`] does for MD5. Measured against the SHA-NI
//! single stream in `docs/BENCHMARKS-LOG.md` (`cargo bench -p fastsum --bench
//! hashing -- sha1_lanes`); `crate::stage::lanes` runs it for `-a sha1`.
//!
//! Widths: AVX2 (8 lanes), AVX-512 (16 lanes; three-input logic and
//! rotates in one instruction, byte swaps need AVX-512BW) and AVX-512 with
//! two 16-lane groups interleaved step by step (32 lanes), as MD5's widest;
//! on aarch64 NEON (4 lanes) and two NEON groups interleaved (8).

/// A SIMD width for [`compress_lanes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sha1Width {
    /// 8 lanes of AVX2.
    Avx2,
    /// 16 lanes: two interleaved 8-lane AVX2 groups.
    Avx2x2,
    /// 16 lanes of AVX-512F/BW.
    Avx512,
    /// 32 lanes: two interleaved 16-lane AVX-512F/BW groups.
    Avx512x2,
    /// 4 lanes of NEON (aarch64).
    Neon,
    /// 8 lanes: two interleaved 4-lane NEON groups.
    Neonx2,
}

impl Sha1Width {
    /// Every width.
    pub const ALL: [Sha1Width; 6] = [
        Sha1Width::Neon,
        Sha1Width::Avx2,
        Sha1Width::Neonx2,
        Sha1Width::Avx2x2,
        Sha1Width::Avx512,
        Sha1Width::Avx512x2,
    ];

    /// The name `FASTSUM_SIMD` and the benchmarks take.
    pub fn name(self) -> &'static str {
        match self {
            Sha1Width::Avx2 => "avx2",
            Sha1Width::Avx2x2 => "avx2x2",
            Sha1Width::Avx512 => "avx512",
            Sha1Width::Avx512x2 => "avx512x2",
            Sha1Width::Neon => "neon",
            Sha1Width::Neonx2 => "neonx2",
        }
    }

    /// Every width this CPU can run.
    pub fn supported() -> Vec<Sha1Width> {
        Self::ALL.into_iter().filter(|w| w.is_supported()).collect()
    }

    /// Messages advanced together.
    pub fn lanes(self) -> usize {
        match self {
            Sha1Width::Neon => 4,
            Sha1Width::Avx2 | Sha1Width::Neonx2 => 8,
            Sha1Width::Avx2x2 => 16,
            Sha1Width::Avx512 => 16,
            Sha1Width::Avx512x2 => 32,
        }
    }

    /// Whether this CPU can run it.
    pub fn is_supported(self) -> bool {
        let cpu = super::cpu::cpu();
        match self {
            Sha1Width::Avx2 | Sha1Width::Avx2x2 => cpu.avx2,
            Sha1Width::Avx512 | Sha1Width::Avx512x2 => cpu.avx512f && cpu.avx512bw && cpu.avx2,
            Sha1Width::Neon | Sha1Width::Neonx2 => cpu.neon,
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
    let mut pointers = [std::ptr::null::<u8>(); 32];
    for (p, d) in pointers.iter_mut().zip(data) {
        *p = d.as_ptr();
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the CPU supports `width` and every lane's pointer is valid for
    // `blocks * 64` bytes (both asserted above).
    unsafe {
        kernels::compress(width, states, &pointers, blocks)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    unreachable!("no lane width is supported here");
}

// SAFETY (for the whole module): as in `simd::md5`, every function is
// `unsafe` only for the ISA it needs, runs only inlined into the
// `#[target_feature]` entry points, which `compress_lanes` calls after
// checking the CPU and the slices' lengths.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[allow(unsafe_op_in_unsafe_fn)]
mod kernels {
    #[cfg(target_arch = "aarch64")]
    use super::super::vector::neon::Neon;
    #[cfg(target_arch = "x86_64")]
    use super::super::vector::x86::{Avx2, Avx512};
    use super::super::vector::Vector;
    use super::Sha1Width;

    /// # Safety
    /// The CPU supports `width`; `pointers[..width.lanes()]` readable for
    /// `blocks * 64` bytes; `states` has as many.
    pub(super) unsafe fn compress(
        width: Sha1Width,
        states: &mut [[u32; 5]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        match width {
            #[cfg(target_arch = "x86_64")]
            Sha1Width::Avx2 => compress_avx2(states, pointers, blocks),
            #[cfg(target_arch = "x86_64")]
            Sha1Width::Avx2x2 => compress_avx2x2(states, pointers, blocks),
            #[cfg(target_arch = "x86_64")]
            Sha1Width::Avx512 => compress_avx512(states, pointers, blocks),
            #[cfg(target_arch = "x86_64")]
            Sha1Width::Avx512x2 => compress_avx512x2(states, pointers, blocks),
            #[cfg(target_arch = "aarch64")]
            Sha1Width::Neon => compress_neon(states, pointers, blocks),
            #[cfg(target_arch = "aarch64")]
            Sha1Width::Neonx2 => compress_neonx2(states, pointers, blocks),
            #[allow(unreachable_patterns)]
            _ => unreachable!("{width:?} is not an instruction set of this target"),
        }
    }

    /// `G` groups of `V::LANES` lanes, interleaved step by step so that the
    /// groups' dependency chains overlap.
    #[inline(always)]
    unsafe fn kernel<V: Vector, const G: usize>(
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
        let mut h: [[V; 5]; G] = std::array::from_fn(|g| {
            std::array::from_fn(|w| V::load(words[w][g * V::LANES..].as_ptr()))
        });
        let k = [
            V::splat(0x5a82_7999),
            V::splat(0x6ed9_eba1),
            V::splat(0x8f1b_bcdc),
            V::splat(0xca62_c1d6),
        ];
        for block in 0..blocks {
            let mut w: [[V; 16]; G] = std::array::from_fn(|g| {
                V::message_le(&pointers[g * V::LANES..(g + 1) * V::LANES], block * 64)
                    .map(|v| v.bswap())
            });
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

    /// # Safety
    /// AVX2 present; `pointers[..8]` readable for `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compress_avx2(
        states: &mut [[u32; 5]],
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
        states: &mut [[u32; 5]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx2, 2>(states, pointers, blocks)
    }

    /// # Safety
    /// AVX-512F/BW and AVX2 present; `pointers[..16]` readable for
    /// `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn compress_avx512(
        states: &mut [[u32; 5]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx512, 1>(states, pointers, blocks)
    }

    /// # Safety
    /// AVX-512F/BW and AVX2 present; `pointers[..32]` readable for
    /// `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn compress_avx512x2(
        states: &mut [[u32; 5]],
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
        states: &mut [[u32; 5]],
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
        states: &mut [[u32; 5]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Neon, 2>(states, pointers, blocks)
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
        assert!(Sha1Width::Neon.is_supported() && Sha1Width::Neonx2.is_supported());
        for width in Sha1Width::supported() {
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
