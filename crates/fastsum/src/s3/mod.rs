//! S3 and the services that speak its API as a side of a diff
//! (`s3://bucket/prefix`), decided by the checksums S3 keeps of each
//! object rather than by size and time.
//!
//! The listing (ListObjectsV2, every page, bounded by `bounds.rs`) gives
//! keys, sizes and ETags; a key on both sides with one size is decided by
//! every digest S3 keeps of the object (`claim.rs`: full-object
//! checksums, the MD5 ETag, composite checksums with their part sizes),
//! each computed locally in the same form from one read; one that
//! disagrees is a change. An object with no digest of its bytes is
//! `unverifiable` (never unchanged on its size alone), or with
//! [`S3Options::download`] streamed and compared. Keys are untrusted
//! (`keys.rs`); answers that cannot be believed are errors naming the key.
//!
//! The client is `rusty-s3` (SigV4 signing, no I/O) over `ureq` (blocking
//! HTTP, rustls): a few small crates instead of the official SDK's async
//! runtime and C build (docs/BENCHMARKS.md has both clean-build times).
//! Built with the `s3` cargo feature only. The comparison with a local
//! tree is `diff/s3_side.rs` (this module knows nothing of diffs).

mod base64;
mod bounds;
pub(crate) mod cache;
pub(crate) mod claim;
mod config;
pub(crate) mod download;
pub(crate) mod http;
mod keys;
pub(crate) mod listing;
pub(crate) mod local;
internal! {
    /// An object's digests as S3 keeps them, and the algorithm a download
    /// is hashed in: `-r s3://`'s.
    mod objects;
}
#[cfg(test)]
mod properties;
pub(crate) mod xml;

use std::path::PathBuf;

pub(crate) use config::S3Config;
pub use keys::S3Url;

/// How S3 sides are reached and decided.
#[derive(Clone, Debug, Default)]
pub struct S3Options {
    /// Path-style addressing even where the configuration does not say
    /// so (`--s3-path-style`).
    pub path_style: bool,
    /// Stream and compare objects whose only digest is opaque, instead of
    /// reporting them unverifiable.
    pub download: bool,
    /// Requests in flight at once (0: 32).
    pub jobs: usize,
    /// Keep what S3 said of each object in this SQLite file.
    pub cache: Option<PathBuf>,
}
