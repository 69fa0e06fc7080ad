//! The SIMD vectors the multi-buffer kernels are written over
//! ([`super::md5`], [`super::sha1`]): a vector of 32-bit lanes, one message
//! per lane, with the operations both hash functions need. x86-64: SSE2,
//! AVX2 and AVX-512 ([`x86`]; message words loaded with 4x4 / 8x8
//! transposes, AVX-512 doing three-input functions in one `vpternlogd`
//! and rotates in one `vprold`). aarch64: NEON ([`neon`]; `bsl` is MD5's F
//! and G and SHA-1's Ch in one instruction).

// SAFETY (for the whole module): every function here is `unsafe` for one
// reason only, the ISA it needs, and its body is nothing but that ISA's
// intrinsics on values and on the lane pointers its caller vouches for.
// The `Vector` methods run only inlined into the kernels'
// `#[target_feature]` entry points, which are called after checking the
// CPU and the slices' lengths. Marking each intrinsic call `unsafe` again
// would repeat that on every line.
//
// No `std::array::from_fn` or `<[T; N]>::map` here or in the kernels:
// core's wrappers around the closure are not always inlined, and a closure
// compiled outside the `#[target_feature]` entry point cannot inline the
// intrinsics it calls, so each becomes a call. That made the SHA-1 lanes
// 3.4x slower than before on a 50,000-file tree (2026-11-28, a release
// build whose code around them had grown); plain loops over arrays built
// with `splat` or a zero vector inline every time. scripts/check/modules
// refuses them in `simd/`.
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

#[cfg(target_arch = "aarch64")]
pub(crate) mod neon;

/// A vector of `LANES` u32 lanes. Every method is `#[inline(always)]`
/// and only ever runs inlined into a function compiled with the ISA it
/// needs.
#[allow(dead_code)] // each architecture's kernels use their part
pub(crate) trait Vector: Copy {
    const LANES: usize;
    unsafe fn splat(x: u32) -> Self;
    unsafe fn add(a: Self, b: Self) -> Self;
    unsafe fn xor(a: Self, b: Self) -> Self;
    /// `d ^ (b & (c ^ d))`: MD5's F, SHA-1's Ch.
    unsafe fn choose(b: Self, c: Self, d: Self) -> Self;
    /// `(b & d) | (c & !d)`: MD5's G.
    unsafe fn md5_g(b: Self, c: Self, d: Self) -> Self;
    /// `b ^ c ^ d`: MD5's H, SHA-1's Parity.
    unsafe fn parity(b: Self, c: Self, d: Self) -> Self;
    /// `c ^ (b | !d)`: MD5's I.
    unsafe fn md5_i(b: Self, c: Self, d: Self) -> Self;
    /// `(b & c) | (b & d) | (c & d)`: SHA-1's Maj.
    unsafe fn maj(b: Self, c: Self, d: Self) -> Self;
    /// `a ^ b ^ c ^ d`: SHA-1's message schedule.
    unsafe fn xor4(a: Self, b: Self, c: Self, d: Self) -> Self;
    /// Each lane's bytes reversed (big-endian words).
    unsafe fn bswap(self) -> Self;
    unsafe fn rotl(x: Self, s: u32) -> Self;
    /// Lanes `[0, LANES)` of `words`.
    unsafe fn load(words: *const u32) -> Self;
    unsafe fn store(self, words: *mut u32);
    /// The 16 little-endian message words of block `offset / 64` of
    /// each lane's data: word `j` of lane `l` in lane `l` of `m[j]`.
    unsafe fn message_le(lanes: &[*const u8], offset: usize) -> [Self; 16];
}
