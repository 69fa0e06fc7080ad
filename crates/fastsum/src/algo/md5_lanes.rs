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
//!
//! The widest the CPU supports is chosen at run time ([`LaneWidth::best`]);
//! `FASTSUM_SIMD=scalar|sse2|avx2|avx2x2|avx512|avx512x2` forces one (an unsupported
//! choice falls back to the best supported one below it; `scalar` turns
//! the multi-buffer path off).
//!
//! This module only compresses whole blocks: [`compress_lanes`] advances
//! each lane's state by the same number of 64-byte blocks. Padding, feeding
//! lanes from files and refilling them is the scheduler's work
//! (`crate::multibuffer`).

use super::md5::K;

/// The most lanes any width has.
pub const MAX_LANES: usize = 32;

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
}

impl LaneWidth {
    /// Every width, narrowest first.
    pub const ALL: [LaneWidth; 5] = [
        LaneWidth::Sse2,
        LaneWidth::Avx2,
        LaneWidth::Avx2x2,
        LaneWidth::Avx512,
        LaneWidth::Avx512x2,
    ];

    /// Messages advanced together.
    pub fn lanes(self) -> usize {
        match self {
            LaneWidth::Sse2 => 4,
            LaneWidth::Avx2 => 8,
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
        }
    }

    /// Whether this CPU can run it.
    pub fn is_supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                LaneWidth::Sse2 => true,
                LaneWidth::Avx2 | LaneWidth::Avx2x2 => std::arch::is_x86_feature_detected!("avx2"),
                LaneWidth::Avx512 | LaneWidth::Avx512x2 => {
                    std::arch::is_x86_feature_detected!("avx512f")
                        && std::arch::is_x86_feature_detected!("avx2")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Every width this CPU can run, narrowest first (for tests and
    /// benchmarks).
    pub fn supported() -> Vec<LaneWidth> {
        Self::ALL.into_iter().filter(|w| w.is_supported()).collect()
    }

    /// The width to use: `FASTSUM_SIMD` if set (`scalar` means none),
    /// else the fastest measured on this CPU that it supports (see
    /// `docs/BENCHMARKS.md`). `None`: hash one stream at a time.
    pub fn best() -> Option<LaneWidth> {
        static CHOSEN: std::sync::OnceLock<Option<LaneWidth>> = std::sync::OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let forced = std::env::var("FASTSUM_SIMD").ok();
            Self::choose(forced.as_deref())
        })
    }

    /// [`LaneWidth::best`] for a given `FASTSUM_SIMD` value.
    pub fn choose(forced: Option<&str>) -> Option<LaneWidth> {
        let ceiling = match forced.map(str::to_ascii_lowercase).as_deref() {
            Some("scalar" | "none" | "off") => return None,
            Some(name) => Self::ALL.into_iter().find(|w| w.name() == name),
            None => None,
        };
        // Preference order, best first, as measured (docs/BENCHMARKS.md).
        let preference = [
            LaneWidth::Avx512x2,
            LaneWidth::Avx512,
            LaneWidth::Avx2x2,
            LaneWidth::Avx2,
            LaneWidth::Sse2,
        ];
        let start = ceiling.map_or(0, |c| preference.iter().position(|w| *w == c).unwrap_or(0));
        preference[start..]
            .iter()
            .copied()
            .find(|w| w.is_supported())
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
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU supports `width` (asserted above), and every lane's
    // pointer is valid for `blocks * 64` bytes of reading (asserted above;
    // the slices outlive this call).
    unsafe {
        match width {
            LaneWidth::Sse2 => x86::compress_sse2(states, &pointers, blocks),
            LaneWidth::Avx2 => x86::compress_avx2(states, &pointers, blocks),
            LaneWidth::Avx2x2 => x86::compress_avx2x2(states, &pointers, blocks),
            LaneWidth::Avx512 => x86::compress_avx512(states, &pointers, blocks),
            LaneWidth::Avx512x2 => x86::compress_avx512x2(states, &pointers, blocks),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("no lane width is supported off x86-64");
}

// SAFETY (for the whole module): every function here is `unsafe` for one
// reason only, the ISA it needs, and its body is nothing but that ISA's
// intrinsics on values and on the lane pointers its caller vouches for.
// The `Vector` methods run only inlined into the `#[target_feature]` entry
// points below, which `compress_lanes` calls after checking the CPU and
// the slices' lengths. Marking each intrinsic call `unsafe` again would
// repeat that on every line.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_op_in_unsafe_fn)]
pub(crate) mod x86 {
    use super::K;
    use std::arch::x86_64::*;

    /// The operations the kernel needs from a vector of `LANES` u32 lanes.
    /// Every method is `#[inline(always)]` and only ever runs inlined into
    /// a function compiled with the ISA it needs.
    pub(super) trait Vector: Copy {
        const LANES: usize;
        unsafe fn splat(x: u32) -> Self;
        unsafe fn add(a: Self, b: Self) -> Self;
        /// `d ^ (b & (c ^ d))`
        unsafe fn f(b: Self, c: Self, d: Self) -> Self;
        /// `(b & d) | (c & !d)`
        unsafe fn g(b: Self, c: Self, d: Self) -> Self;
        /// `b ^ c ^ d`
        unsafe fn h(b: Self, c: Self, d: Self) -> Self;
        /// `c ^ (b | !d)`
        unsafe fn i(b: Self, c: Self, d: Self) -> Self;
        unsafe fn rotl(x: Self, s: u32) -> Self;
        /// Lanes `[0, LANES)` of `words`.
        unsafe fn load(words: *const u32) -> Self;
        unsafe fn store(self, words: *mut u32);
        /// The 16 message words of block `offset / 64` of each lane's
        /// data, word `j` of lane `l` in lane `l` of `m[j]`.
        unsafe fn message(lanes: &[*const u8], offset: usize) -> [Self; 16];
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
            let mut m = [[V::splat(0); 16]; G];
            for g in 0..G {
                m[g] = V::message(&pointers[g * V::LANES..(g + 1) * V::LANES], offset);
            }
            let (a0, b0, c0, d0) = (a, b, c, d);
            four!(f, G, a, b, c, d, m, 0, [0, 1, 2, 3], [7, 12, 17, 22]);
            four!(f, G, a, b, c, d, m, 4, [4, 5, 6, 7], [7, 12, 17, 22]);
            four!(f, G, a, b, c, d, m, 8, [8, 9, 10, 11], [7, 12, 17, 22]);
            four!(f, G, a, b, c, d, m, 12, [12, 13, 14, 15], [7, 12, 17, 22]);
            four!(g, G, a, b, c, d, m, 16, [1, 6, 11, 0], [5, 9, 14, 20]);
            four!(g, G, a, b, c, d, m, 20, [5, 10, 15, 4], [5, 9, 14, 20]);
            four!(g, G, a, b, c, d, m, 24, [9, 14, 3, 8], [5, 9, 14, 20]);
            four!(g, G, a, b, c, d, m, 28, [13, 2, 7, 12], [5, 9, 14, 20]);
            four!(h, G, a, b, c, d, m, 32, [5, 8, 11, 14], [4, 11, 16, 23]);
            four!(h, G, a, b, c, d, m, 36, [1, 4, 7, 10], [4, 11, 16, 23]);
            four!(h, G, a, b, c, d, m, 40, [13, 0, 3, 6], [4, 11, 16, 23]);
            four!(h, G, a, b, c, d, m, 44, [9, 12, 15, 2], [4, 11, 16, 23]);
            four!(i, G, a, b, c, d, m, 48, [0, 7, 14, 5], [6, 10, 15, 21]);
            four!(i, G, a, b, c, d, m, 52, [12, 3, 10, 1], [6, 10, 15, 21]);
            four!(i, G, a, b, c, d, m, 56, [8, 15, 6, 13], [6, 10, 15, 21]);
            four!(i, G, a, b, c, d, m, 60, [4, 11, 2, 9], [6, 10, 15, 21]);
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

    #[derive(Clone, Copy)]
    struct Sse2(__m128i);

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
        unsafe fn f(b: Self, c: Self, d: Self) -> Self {
            Sse2(_mm_xor_si128(
                d.0,
                _mm_and_si128(b.0, _mm_xor_si128(c.0, d.0)),
            ))
        }
        #[inline(always)]
        unsafe fn g(b: Self, c: Self, d: Self) -> Self {
            Sse2(_mm_or_si128(
                _mm_and_si128(b.0, d.0),
                _mm_andnot_si128(d.0, c.0),
            ))
        }
        #[inline(always)]
        unsafe fn h(b: Self, c: Self, d: Self) -> Self {
            Sse2(_mm_xor_si128(_mm_xor_si128(b.0, c.0), d.0))
        }
        #[inline(always)]
        unsafe fn i(b: Self, c: Self, d: Self) -> Self {
            let not_d = _mm_xor_si128(d.0, _mm_set1_epi32(-1));
            Sse2(_mm_xor_si128(c.0, _mm_or_si128(b.0, not_d)))
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
        unsafe fn message(lanes: &[*const u8], offset: usize) -> [Self; 16] {
            let mut m = [Sse2(_mm_setzero_si128()); 16];
            for quarter in 0..4 {
                let at = offset + 16 * quarter;
                let r: [__m128i; 4] =
                    std::array::from_fn(|l| _mm_loadu_si128(lanes[l].add(at).cast()));
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
    pub(crate) unsafe fn transpose8(r: [__m256i; 8]) -> [__m256i; 8] {
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
        transpose8(std::array::from_fn(|l| {
            _mm256_loadu_si256(lanes[l].add(at).cast())
        }))
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
        unsafe fn f(b: Self, c: Self, d: Self) -> Self {
            Avx2(_mm256_xor_si256(
                d.0,
                _mm256_and_si256(b.0, _mm256_xor_si256(c.0, d.0)),
            ))
        }
        #[inline(always)]
        unsafe fn g(b: Self, c: Self, d: Self) -> Self {
            Avx2(_mm256_or_si256(
                _mm256_and_si256(b.0, d.0),
                _mm256_andnot_si256(d.0, c.0),
            ))
        }
        #[inline(always)]
        unsafe fn h(b: Self, c: Self, d: Self) -> Self {
            Avx2(_mm256_xor_si256(_mm256_xor_si256(b.0, c.0), d.0))
        }
        #[inline(always)]
        unsafe fn i(b: Self, c: Self, d: Self) -> Self {
            let not_d = _mm256_xor_si256(d.0, _mm256_set1_epi32(-1));
            Avx2(_mm256_xor_si256(c.0, _mm256_or_si256(b.0, not_d)))
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
        unsafe fn message(lanes: &[*const u8], offset: usize) -> [Self; 16] {
            let low = message_half8(lanes, offset);
            let high = message_half8(lanes, offset + 32);
            std::array::from_fn(|j| Avx2(if j < 8 { low[j] } else { high[j - 8] }))
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
        // Three-input logic in one instruction: the immediate is the truth
        // table of (b, c, d) -> result, bit index b*4 + c*2 + d.
        #[inline(always)]
        unsafe fn f(b: Self, c: Self, d: Self) -> Self {
            Avx512(_mm512_ternarylogic_epi32::<0xCA>(b.0, c.0, d.0))
        }
        #[inline(always)]
        unsafe fn g(b: Self, c: Self, d: Self) -> Self {
            Avx512(_mm512_ternarylogic_epi32::<0xE4>(b.0, c.0, d.0))
        }
        #[inline(always)]
        unsafe fn h(b: Self, c: Self, d: Self) -> Self {
            Avx512(_mm512_ternarylogic_epi32::<0x96>(b.0, c.0, d.0))
        }
        #[inline(always)]
        unsafe fn i(b: Self, c: Self, d: Self) -> Self {
            Avx512(_mm512_ternarylogic_epi32::<0x39>(b.0, c.0, d.0))
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
        unsafe fn message(lanes: &[*const u8], offset: usize) -> [Self; 16] {
            let (first, second) = lanes.split_at(8);
            let low = [message_half8(first, offset), message_half8(second, offset)];
            let high = [
                message_half8(first, offset + 32),
                message_half8(second, offset + 32),
            ];
            std::array::from_fn(|j| {
                let halves = if j < 8 { &low } else { &high };
                let w = j % 8;
                Avx512(_mm512_inserti64x4::<1>(
                    _mm512_castsi256_si512(halves[0][w]),
                    halves[1][w],
                ))
            })
        }
    }

    /// # Safety
    /// `pointers[..4]` readable for `blocks * 64` bytes; `states` has 4.
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
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn compress_avx512x2(
        states: &mut [[u32; 4]],
        pointers: &[*const u8],
        blocks: usize,
    ) {
        kernel::<Avx512, 2>(states, pointers, blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::md5::{compress, INIT};

    #[test]
    fn every_supported_width_matches_the_scalar_compression() {
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

    #[test]
    fn the_forced_width_is_a_ceiling_and_scalar_turns_lanes_off() {
        assert_eq!(LaneWidth::choose(Some("scalar")), None);
        assert_eq!(LaneWidth::choose(Some("sse2")), Some(LaneWidth::Sse2));
        if LaneWidth::Avx2.is_supported() {
            assert_eq!(LaneWidth::choose(Some("AVX2")), Some(LaneWidth::Avx2));
        }
        let best = LaneWidth::choose(None);
        assert!(best.is_some_and(LaneWidth::is_supported));
        assert_eq!(LaneWidth::choose(Some("no-such-width")), best);
    }
}
