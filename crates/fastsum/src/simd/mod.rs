//! Many messages hashed at once, one per SIMD lane: the MD5 and SHA-1
//! block functions over N lanes ([`md5`], [`sha1`]), the vector types they
//! are written over (`vector`), and the one place that chooses a width for
//! this CPU and `FASTSUM_SIMD` and dispatches every kernel (`platform`: one
//! [`Width`] for both algorithms). Feeding lanes from files is
//! the lane stage's work (`crate::stage::lanes`).
//!
//! Public for benchmarks and for callers that batch messages themselves.

mod cpu;
pub mod md5;
pub(crate) mod platform;
pub mod sha1;
mod vector;

pub use platform::Width;
