//! fastsum: fast file checksums with constant memory.
//!
//! The library does all the work behind the `fastsum` command: the hash
//! algorithms ([`Algorithm`]), the [`Digest`] type, the I/O that feeds
//! bytes from disk to the hasher ([`FileHasher`]), and the checksum-file
//! formats of md5sum, sha*sum, b2sum, b3sum and xxhsum ([`manifest`]).
//! It prints nothing and never exits the process.
//!
//! ```
//! use fastsum::{Algorithm, Digest, FileHasher};
//!
//! // A byte slice.
//! let d: Digest = Algorithm::Md5.hash_bytes(b"abc");
//! assert_eq!(d.to_hex(), "900150983cd24fb0d6963f7d28e17f72");
//!
//! // A file, reusing one buffer for every file this thread hashes.
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("hello");
//! std::fs::write(&path, b"hello\n").unwrap();
//! let mut hasher = FileHasher::new();
//! let d = hasher.hash_path(Algorithm::Xxh64, &path).unwrap();
//! assert_eq!(d.to_hex(), "e4c191d091bd8853");
//! ```
//!
//! # Features
//!
//! All are on by default. With `default-features = false` the library is
//! the algorithms, one file or stream at a time ([`Algorithm`], [`Hasher`],
//! [`FileHasher`]) and the manifest parsers, and builds none of the
//! walker, thread pools, SQLite or SSH code.
//!
//! * `tree`: whole trees on every core (`TreeHasher`, the walk, directory
//!   digests, `dupes`, `contained`);
//! * `cache`: the SQLite cache of digests (`TreeHasher::cache`) and
//!   `scrub`; implies `tree`;
//! * `remote`: other hosts over SSH; implies `tree`;
//! * `simd`: multi-buffer MD5 and SHA-1 in SIMD lanes; implies `tree`;
//! * `diff` is there when both `cache` and `remote` are (either side of a
//!   diff may be a cached tree or a host);
//! * `fuzzing` (not default): the fuzz harness, for other crates' tests;
//! * `bench-internals` (not default): the SIMD lane kernels and, with
//!   `cache`, the cache's raw store and bulk load (`cache::bench`), public
//!   for this crate's benches and examples only (no stability promised).

/// A module the CLI and the Python package reach that is not the
/// library's API (a format's own line parser, records rendered as lines
/// and messages, a name's escaping, the one safe open, S3's object internals): public and
/// hidden from the docs with the `cli-internals` feature, which those two
/// turn on; crate-private without it, where what only they call is unused
/// (so dead code is not asked about there). No stability is promised.
macro_rules! internal {
    ($(#[$attr:meta])* mod $name:ident;) => {
        $(#[$attr])*
        #[cfg(feature = "cli-internals")]
        #[doc(hidden)]
        pub mod $name;
        $(#[$attr])*
        #[cfg(not(feature = "cli-internals"))]
        #[allow(dead_code)]
        pub(crate) mod $name;
    };
}

/// The parsers of outside input (manifest/ is declared through it whole,
/// remote/ and signed/ declare theirs through it): nothing in them may
/// panic (no unwrap, expect, panic, or index or slice that could fail:
/// every slice through `get`), and the fuzz targets (`crate::fuzzing`)
/// run them in CI.
macro_rules! parsers {
    ($($vis:vis mod $name:ident;)*) => {$(
        #[cfg_attr(
            not(test),
            deny(
                clippy::unwrap_used,
                clippy::expect_used,
                clippy::panic,
                clippy::indexing_slicing
            )
        )]
        $vis mod $name;
    )*};
}

pub mod algo;
#[cfg(feature = "cache")]
pub mod cache;
// Is this tree's every file somewhere in those? (on dupes' stages)
#[cfg(feature = "tree")]
pub mod contained;
// Trees, manifests and hosts: a diff takes any of them on either side.
#[cfg(all(feature = "remote", feature = "cache"))]
pub mod diff;
pub mod digest;
#[cfg(feature = "tree")]
pub mod dirdigest;
#[cfg(feature = "tree")]
pub mod dupes;
pub mod error;
mod escape;
pub(crate) mod fs;
#[cfg(any(all(test, feature = "remote"), feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
parsers! {
    pub mod manifest;
}
internal! {
    /// Records rendered as lists, JSON and messages, a report's lines, a
    /// list checked on every core: the front ends' presentation.
    mod output;
}
#[cfg(feature = "tree")]
pub mod pipeline;
pub mod read;
#[cfg(feature = "remote")]
pub mod remote;
#[cfg(feature = "s3")]
pub mod s3;
#[cfg(feature = "cache")]
pub mod scrub;
#[cfg(feature = "signed")]
pub mod signed;
// The lane kernels are the library's own: public only to its benches and
// examples (`bench-internals`), never part of the API.
#[cfg(all(feature = "simd", feature = "bench-internals"))]
pub mod simd;
#[cfg(all(feature = "simd", not(feature = "bench-internals")))]
pub(crate) mod simd;
#[cfg(feature = "tree")]
pub mod stage;
#[cfg(feature = "tree")]
pub mod walk;

pub use algo::{Algorithm, Hasher};
pub use digest::Digest;
pub use error::{Error, ErrorKind};
pub use fs::device::DiskKind;
pub use fs::FileStamp;
// A name's escaping and the one safe open of a path from a list: every
// report line and every list the CLI reads goes through them.
#[cfg(feature = "cli-internals")]
#[doc(hidden)]
pub use fs::{name, regular::open_regular};
#[cfg(feature = "tree")]
pub use pipeline::{Order, Outcome, Progress, Record, Sink, TreeHasher, TreeOptions};
pub use read::{FileHasher, ReadStrategy};
#[cfg(feature = "tree")]
pub use stage::Source;
