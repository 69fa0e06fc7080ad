//! The one dispatch point of the lane kernels (BLAKE3's `platform.rs` is
//! the model): the SIMD [`Width`]s, the CPU and `FASTSUM_SIMD` read once,
//! the width each algorithm takes, and the `#[target_feature]` entry
//! points every algorithm's kernel runs through. MD5 and SHA-1 only write
//! their kernel over a [`Vector`]; nothing here is written twice.
//!
//! `FASTSUM_SIMD=scalar|sse2|avx2|avx2x2|avx512|avx512x2` (x86-64) or
//! `scalar|neon|neonx2` (aarch64) is a ceiling: the
//! widest supported width at or below it is taken (`scalar` turns lanes
//! off, an unknown value is no ceiling). Unset, the fastest width measured
//! on the CPU is taken (bench/results/BENCHMARKS-LOG.md).

use std::sync::OnceLock;

use super::vector::Vector;
use crate::algo::Algorithm;

/// The most lanes any width has.
pub(crate) const MAX_LANES: usize = 32;

/// A SIMD width: how many messages advance together, in which instruction
/// set. The same widths serve every algorithm with lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Width {
    /// 4 lanes of SSE2 (every x86-64).
    Sse2,
    /// 8 lanes of AVX2.
    Avx2,
    /// 16 lanes: two 8-lane AVX2 groups interleaved to hide latency.
    Avx2x2,
    /// 16 lanes of AVX-512 (F and BW: rotates and three-input logic in one
    /// instruction each, byte swaps in one shuffle).
    Avx512,
    /// 32 lanes: two interleaved 16-lane AVX-512 groups.
    Avx512x2,
    /// 4 lanes of NEON (every aarch64).
    Neon,
    /// 8 lanes: two interleaved 4-lane NEON groups.
    Neonx2,
}

impl Width {
    #[cfg(any(test, feature = "bench-internals"))]
    /// Every width, narrowest first.
    pub const ALL: [Width; 7] = [
        Width::Sse2,
        Width::Neon,
        Width::Avx2,
        Width::Neonx2,
        Width::Avx2x2,
        Width::Avx512,
        Width::Avx512x2,
    ];

    /// Messages advanced together.
    pub fn lanes(self) -> usize {
        match self {
            Width::Sse2 | Width::Neon => 4,
            Width::Avx2 | Width::Neonx2 => 8,
            Width::Avx2x2 | Width::Avx512 => 16,
            Width::Avx512x2 => 32,
        }
    }

    /// The name `FASTSUM_SIMD` and the benchmarks take.
    pub fn name(self) -> &'static str {
        match self {
            Width::Sse2 => "sse2",
            Width::Avx2 => "avx2",
            Width::Avx2x2 => "avx2x2",
            Width::Avx512 => "avx512",
            Width::Avx512x2 => "avx512x2",
            Width::Neon => "neon",
            Width::Neonx2 => "neonx2",
        }
    }

    /// Whether this CPU has the instructions. AVX-512 asks for BW as well
    /// as F for every algorithm (SHA-1's byte swaps need it; the one family
    /// with F alone, Xeon Phi, takes AVX2 instead).
    pub fn is_supported(self) -> bool {
        let cpu = super::cpu::cpu();
        match self {
            Width::Sse2 => cpu.sse2,
            Width::Avx2 | Width::Avx2x2 => cpu.avx2,
            Width::Avx512 | Width::Avx512x2 => cpu.avx512f && cpu.avx512bw && cpu.avx2,
            Width::Neon | Width::Neonx2 => cpu.neon,
        }
    }
}

/// An algorithm whose block function runs in lanes: its kernel, written
/// once over any [`Vector`], and the widths it has one for.
pub(crate) trait LaneKernel {
    /// One message's state words.
    type State: Copy;

    /// Whether there is a kernel at `width` at all.
    fn has(width: Width) -> bool;

    /// Whether lanes at `width` beat this CPU's single stream (measured;
    /// see [`choose`]).
    fn beats_one_stream(_width: Width) -> bool {
        true
    }

    /// Advances `states[..V::LANES * G]` by `blocks` 64-byte blocks, `G`
    /// groups of `V::LANES` lanes interleaved step by step.
    ///
    /// # Safety
    /// Runs only inlined into an entry point compiled for `V`'s
    /// instruction set, which the CPU has; `pointers[..V::LANES * G]` are
    /// readable for `blocks * 64` bytes; `states` has as many.
    unsafe fn kernel<V: Vector, const G: usize>(
        states: &mut [Self::State],
        pointers: &[*const u8],
        blocks: usize,
    );
}

/// The MD5 lanes (`super::md5`).
pub(crate) struct Md5Lanes;

/// The SHA-1 lanes (`super::sha1`).
pub(crate) struct Sha1Lanes;

#[cfg(any(test, feature = "bench-internals"))]
/// Every width `K` has a kernel for and this CPU runs, narrowest first.
pub(crate) fn runnable<K: LaneKernel>() -> Vec<Width> {
    Width::ALL
        .into_iter()
        .filter(|w| K::has(*w) && w.is_supported())
        .collect()
}

/// Advances `states[i]` by the first `blocks` 64-byte blocks of `data[i]`,
/// for every lane `i < width.lanes()`, with `K`'s kernel.
///
/// # Panics
///
/// If `K` has no kernel at `width` or this CPU cannot run it, if there are
/// fewer than `width.lanes()` states or data slices, or if a slice is
/// shorter than `blocks * 64` bytes.
pub(crate) fn compress<K: LaneKernel>(
    width: Width,
    states: &mut [K::State],
    data: &[&[u8]],
    blocks: usize,
) {
    let lanes = width.lanes();
    assert!(
        K::has(width) && width.is_supported(),
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
        entry::dispatch::<K>(width, states, &pointers, blocks)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    unreachable!("no lane width is supported here");
}

/// The entry points: one per instruction set, each compiled for it, each
/// running any algorithm's kernel at its vector type.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod entry {
    #[cfg(target_arch = "aarch64")]
    use super::super::vector::neon::Neon;
    #[cfg(target_arch = "x86_64")]
    use super::super::vector::x86::{Avx2, Avx512, Sse2};
    use super::{LaneKernel, Width};

    /// # Safety
    /// The CPU supports `width`; `pointers[..width.lanes()]` readable for
    /// `blocks * 64` bytes; `states` has as many.
    pub(super) unsafe fn dispatch<K: LaneKernel>(
        width: Width,
        states: &mut [K::State],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        // SAFETY: every arm runs the entry point compiled for `width`'s
        // instruction set, which the caller found on this CPU, with the
        // caller's pointers and states, as it promised them.
        unsafe {
            match width {
                #[cfg(target_arch = "x86_64")]
                Width::Sse2 => sse2::<K>(states, pointers, blocks),
                #[cfg(target_arch = "x86_64")]
                Width::Avx2 => avx2::<K, 1>(states, pointers, blocks),
                #[cfg(target_arch = "x86_64")]
                Width::Avx2x2 => avx2::<K, 2>(states, pointers, blocks),
                #[cfg(target_arch = "x86_64")]
                Width::Avx512 => avx512::<K, 1>(states, pointers, blocks),
                #[cfg(target_arch = "x86_64")]
                Width::Avx512x2 => avx512::<K, 2>(states, pointers, blocks),
                #[cfg(target_arch = "aarch64")]
                Width::Neon => neon::<K, 1>(states, pointers, blocks),
                #[cfg(target_arch = "aarch64")]
                Width::Neonx2 => neon::<K, 2>(states, pointers, blocks),
                #[allow(unreachable_patterns)]
                _ => unreachable!("{} is not an instruction set of this target", width.name()),
            }
        }
    }

    /// # Safety
    /// `pointers[..4]` readable for `blocks * 64` bytes; `states` has 4.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    unsafe fn sse2<K: LaneKernel>(states: &mut [K::State], pointers: &[*const u8], blocks: usize) {
        // SAFETY: compiled for SSE2, which every x86-64 has; the rest is
        // the caller's promise.
        unsafe { K::kernel::<Sse2, 1>(states, pointers, blocks) }
    }

    /// # Safety
    /// AVX2 present; `pointers[..8 * G]` readable for `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2<K: LaneKernel, const G: usize>(
        states: &mut [K::State],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        // SAFETY: compiled for AVX2, which the caller found; the pointers
        // are the caller's promise.
        unsafe { K::kernel::<Avx2, G>(states, pointers, blocks) }
    }

    /// # Safety
    /// AVX-512F/BW and AVX2 present; `pointers[..16 * G]` readable for
    /// `blocks * 64` bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    unsafe fn avx512<K: LaneKernel, const G: usize>(
        states: &mut [K::State],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        // SAFETY: compiled for AVX-512F/BW, which the caller found; the
        // pointers are the caller's promise.
        unsafe { K::kernel::<Avx512, G>(states, pointers, blocks) }
    }

    /// # Safety
    /// NEON present; `pointers[..4 * G]` readable for `blocks * 64` bytes.
    #[cfg(target_arch = "aarch64")]
    #[target_feature(enable = "neon")]
    unsafe fn neon<K: LaneKernel, const G: usize>(
        states: &mut [K::State],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        // SAFETY: compiled for NEON, which the caller found; the pointers
        // are the caller's promise.
        unsafe { K::kernel::<Neon, G>(states, pointers, blocks) }
    }
}

/// What `FASTSUM_SIMD` allows, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ceiling {
    /// No lanes at all.
    Scalar,
    /// Up to SSE2's 4 lanes.
    Sse2,
    /// Up to one NEON group (aarch64).
    Neon,
    /// Up to two interleaved NEON groups.
    Neonx2,
    /// Up to one AVX2 group.
    Avx2,
    /// Up to two interleaved AVX2 groups.
    Avx2x2,
    /// Up to one AVX-512 group.
    Avx512,
    /// Anything (two interleaved AVX-512 groups is the widest).
    Unlimited,
}

impl Ceiling {
    /// The ceiling a `FASTSUM_SIMD` value names (case-insensitive).
    pub fn parse(value: Option<&str>) -> Ceiling {
        match value.map(str::to_ascii_lowercase).as_deref() {
            Some("scalar" | "none" | "off") => Ceiling::Scalar,
            Some("sse2") => Ceiling::Sse2,
            Some("neon") => Ceiling::Neon,
            Some("neonx2") => Ceiling::Neonx2,
            Some("avx2") => Ceiling::Avx2,
            Some("avx2x2") => Ceiling::Avx2x2,
            Some("avx512") => Ceiling::Avx512,
            _ => Ceiling::Unlimited,
        }
    }

    /// The process's ceiling, from `FASTSUM_SIMD` read once.
    pub fn from_env() -> Ceiling {
        static CEILING: OnceLock<Ceiling> = OnceLock::new();
        *CEILING.get_or_init(|| Ceiling::parse(std::env::var("FASTSUM_SIMD").ok().as_deref()))
    }
}

/// The widths best first, as measured for both algorithms, each with the
/// ceiling that allows it. x86-64: AVX-512 2x16, AVX-512 x16, AVX2 2x8,
/// AVX2 x8, SSE2 x4 (MD5's 2x16 is 1.5x its x16, SHA-1's AVX2 2x8 1.26x
/// its x8: bench/results/BENCHMARKS-LOG.md). aarch64: two interleaved NEON groups,
/// then one (reasoned, not measured: no aarch64 hardware here, and time
/// under qemu means nothing; two independent chains keep the SIMD pipes
/// of cores with 2-4 of them busy, as the x86 2x widths do; instruction
/// counts in bench/results/BENCHMARKS-LOG.md).
const BEST_FIRST: [(Width, Ceiling); 7] = [
    (Width::Avx512x2, Ceiling::Unlimited),
    (Width::Avx512, Ceiling::Avx512),
    (Width::Avx2x2, Ceiling::Avx2x2),
    (Width::Avx2, Ceiling::Avx2),
    (Width::Sse2, Ceiling::Sse2),
    (Width::Neonx2, Ceiling::Neonx2),
    (Width::Neon, Ceiling::Neon),
];

/// The best width for `K` under `ceiling` on this CPU (`None`: one stream
/// at a time).
pub(crate) fn choose<K: LaneKernel>(ceiling: Ceiling) -> Option<Width> {
    BEST_FIRST
        .into_iter()
        .find(|(width, level)| {
            *level <= ceiling
                && K::has(*width)
                && K::beats_one_stream(*width)
                && width.is_supported()
        })
        .map(|(width, _)| width)
}

/// The width this process hashes `algorithm` at (`None`: one stream at a
/// time, or an algorithm without lanes), chosen once.
pub(crate) fn lanes_for(algorithm: Algorithm) -> Option<Width> {
    static MD5: OnceLock<Option<Width>> = OnceLock::new();
    static SHA1: OnceLock<Option<Width>> = OnceLock::new();
    match algorithm {
        Algorithm::Md5 => *MD5.get_or_init(|| choose::<Md5Lanes>(Ceiling::from_env())),
        Algorithm::Sha1 => *SHA1.get_or_init(|| choose::<Sha1Lanes>(Ceiling::from_env())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forced_width_is_a_ceiling_and_scalar_turns_lanes_off() {
        let choose = |value| choose::<Md5Lanes>(Ceiling::parse(value));
        assert_eq!(choose(Some("scalar")), None);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(choose(Some("sse2")), Some(Width::Sse2));
        #[cfg(target_arch = "aarch64")]
        {
            assert_eq!(choose(Some("neon")), Some(Width::Neon));
            assert_eq!(choose(Some("neonx2")), Some(Width::Neonx2));
            assert_eq!(choose(None), Some(Width::Neonx2));
        }
        if Width::Avx2.is_supported() {
            assert_eq!(choose(Some("AVX2")), Some(Width::Avx2));
        }
        let best = choose(None);
        assert!(best.is_some_and(Width::is_supported));
        assert_eq!(choose(Some("no-such-width")), best);
    }

    #[test]
    fn sha1_follows_the_same_ceiling_and_has_no_sse2_lanes() {
        let choose = |value| choose::<Sha1Lanes>(Ceiling::parse(value));
        assert_eq!(choose(Some("scalar")), None);
        assert_eq!(choose(Some("sse2")), None);
        assert!(!runnable::<Sha1Lanes>().contains(&Width::Sse2));
        if Width::Avx2.is_supported() {
            assert_eq!(choose(Some("avx2")), Some(Width::Avx2));
            assert_eq!(choose(Some("avx2x2")), Some(Width::Avx2x2));
        }
        assert_eq!(choose(Some("no-such-width")), choose(None));
    }

    #[test]
    #[should_panic(expected = "sse2 is not supported here")]
    fn a_width_without_a_kernel_is_refused() {
        let mut states = [[0u32; 5]; 4];
        let data = [&[][..]; 4];
        compress::<Sha1Lanes>(Width::Sse2, &mut states, &data, 0);
    }
}
