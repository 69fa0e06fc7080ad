//! The CPU and `FASTSUM_SIMD`, read once: every lane width the crate uses
//! is chosen here and nowhere else (BLAKE3's `platform.rs` is the model).
//!
//! `FASTSUM_SIMD=scalar|sse2|avx2|avx2x2|avx512|avx512x2` (x86-64) or
//! `scalar|neon|neonx2` (aarch64) is a ceiling: the
//! widest supported width at or below it is taken (`scalar` turns lanes
//! off, an unknown value is no ceiling). Unset, the fastest width measured
//! on the CPU is taken (docs/BENCHMARKS-LOG.md).

use std::sync::OnceLock;

pub use super::cpu::cpu;
use super::md5::LaneWidth;
use super::sha1::Sha1Width;

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

/// The MD5 width under `ceiling` on this CPU, best first as measured:
/// AVX-512 2x16, AVX-512 x16, AVX2 2x8, AVX2 x8, SSE2 x4; on aarch64 two
/// interleaved NEON groups, then one (reasoned, not measured: no aarch64
/// hardware here, and time under qemu means nothing; two independent
/// chains keep the SIMD pipes of cores with 2-4 of them busy, as the x86
/// 2x widths do; instruction counts in docs/BENCHMARKS-LOG.md).
pub(crate) fn md5_width(ceiling: Ceiling) -> Option<LaneWidth> {
    [
        (LaneWidth::Avx512x2, Ceiling::Unlimited),
        (LaneWidth::Avx512, Ceiling::Avx512),
        (LaneWidth::Avx2x2, Ceiling::Avx2x2),
        (LaneWidth::Avx2, Ceiling::Avx2),
        (LaneWidth::Sse2, Ceiling::Sse2),
        (LaneWidth::Neonx2, Ceiling::Neonx2),
        (LaneWidth::Neon, Ceiling::Neon),
    ]
    .into_iter()
    .find(|(width, level)| *level <= ceiling && width.is_supported())
    .map(|(width, _)| width)
}

/// The SHA-1 width under `ceiling` on this CPU: AVX-512 2x16 where the CPU
/// has AVX-512 (1.5x the single 16-lane group), else AVX2 2x8 (1.26x AVX2
/// x8); SSE2 has no SHA-1 lanes (they lose to SHA-NI). Measured against
/// the SHA-NI single stream in docs/BENCHMARKS-LOG.md. On aarch64, NEON lanes
/// only where the CPU lacks the ARMv8 SHA instructions (a Raspberry Pi 4's
/// Cortex-A72): SSE2's lesson, that 4 lanes of plain SIMD lose to a
/// hardware SHA-1 stream, is taken as NEON's too.
pub(crate) fn sha1_width(ceiling: Ceiling) -> Option<Sha1Width> {
    let hardware_sha = super::cpu::cpu().sha2_instructions;
    [
        (Sha1Width::Avx512x2, Ceiling::Unlimited),
        (Sha1Width::Avx512, Ceiling::Avx512),
        (Sha1Width::Avx2x2, Ceiling::Avx2x2),
        (Sha1Width::Avx2, Ceiling::Avx2),
        (Sha1Width::Neonx2, Ceiling::Neonx2),
        (Sha1Width::Neon, Ceiling::Neon),
    ]
    .into_iter()
    .filter(|(width, _)| !(hardware_sha && matches!(width, Sha1Width::Neon | Sha1Width::Neonx2)))
    .find(|(width, level)| *level <= ceiling && width.is_supported())
    .map(|(width, _)| width)
}

/// The MD5 width this process uses (`None`: one stream at a time).
pub fn md5_lanes() -> Option<LaneWidth> {
    static CHOSEN: OnceLock<Option<LaneWidth>> = OnceLock::new();
    *CHOSEN.get_or_init(|| md5_width(Ceiling::from_env()))
}

/// The SHA-1 width this process uses (`None`: one stream at a time).
pub fn sha1_lanes() -> Option<Sha1Width> {
    static CHOSEN: OnceLock<Option<Sha1Width>> = OnceLock::new();
    *CHOSEN.get_or_init(|| sha1_width(Ceiling::from_env()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forced_width_is_a_ceiling_and_scalar_turns_lanes_off() {
        let choose = |value| md5_width(Ceiling::parse(value));
        assert_eq!(choose(Some("scalar")), None);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(choose(Some("sse2")), Some(LaneWidth::Sse2));
        #[cfg(target_arch = "aarch64")]
        {
            assert_eq!(choose(Some("neon")), Some(LaneWidth::Neon));
            assert_eq!(choose(Some("neonx2")), Some(LaneWidth::Neonx2));
            assert_eq!(choose(None), Some(LaneWidth::Neonx2));
        }
        if LaneWidth::Avx2.is_supported() {
            assert_eq!(choose(Some("AVX2")), Some(LaneWidth::Avx2));
        }
        let best = choose(None);
        assert!(best.is_some_and(LaneWidth::is_supported));
        assert_eq!(choose(Some("no-such-width")), best);
    }

    #[test]
    fn sha1_follows_the_same_ceiling_and_has_no_sse2_lanes() {
        let choose = |value| sha1_width(Ceiling::parse(value));
        assert_eq!(choose(Some("scalar")), None);
        assert_eq!(choose(Some("sse2")), None);
        if Sha1Width::Avx2.is_supported() {
            assert_eq!(choose(Some("avx2")), Some(Sha1Width::Avx2));
            assert_eq!(choose(Some("avx2x2")), Some(Sha1Width::Avx2x2));
        }
        assert_eq!(choose(Some("no-such-width")), choose(None));
    }
}
