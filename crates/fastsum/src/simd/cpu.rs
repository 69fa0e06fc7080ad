//! The CPU's instruction sets, detected once (each kernel asks here).

use std::sync::OnceLock;

/// The instruction sets the lane kernels use, detected once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cpu {
    /// SSE2 (every x86-64).
    pub sse2: bool,
    /// AVX2.
    pub avx2: bool,
    /// AVX-512F.
    pub avx512f: bool,
    /// AVX-512BW (SHA-1's byte swaps).
    pub avx512bw: bool,
    /// NEON (Advanced SIMD; every aarch64 CPU).
    pub neon: bool,
    /// The ARMv8 SHA-1/SHA-256 instructions (what the RustCrypto crates
    /// use for one stream when present).
    pub sha2_instructions: bool,
}

/// This CPU.
pub fn cpu() -> Cpu {
    static CPU: OnceLock<Cpu> = OnceLock::new();
    *CPU.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Cpu {
    Cpu {
        sse2: true,
        avx2: std::arch::is_x86_feature_detected!("avx2"),
        avx512f: std::arch::is_x86_feature_detected!("avx512f"),
        avx512bw: std::arch::is_x86_feature_detected!("avx512bw"),
        ..Cpu::default()
    }
}

#[cfg(target_arch = "aarch64")]
fn detect() -> Cpu {
    Cpu {
        neon: std::arch::is_aarch64_feature_detected!("neon"),
        sha2_instructions: std::arch::is_aarch64_feature_detected!("sha2"),
        ..Cpu::default()
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detect() -> Cpu {
    Cpu::default()
}
