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

/// The parsers of outside input (manifest/ and remote/ declare theirs
/// through it): nothing in them may panic (no unwrap,
/// expect, panic, or index or slice that could fail: every slice through
/// `get`), and the fuzz targets (`crate::fuzzing`) run them in CI.
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
pub mod cache;
pub mod diff;
pub mod digest;
pub mod dirdigest;
pub mod dupes;
pub mod error;
pub(crate) mod fs;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod manifest;
pub mod pipeline;
pub mod read;
pub mod remote;
pub mod scrub;
pub mod simd;
pub mod stage;
pub mod walk;

pub use algo::{Algorithm, Hasher, StreamHasher};
pub use digest::Digest;
pub use error::{Error, ErrorKind, Result};
pub use fs::device::DiskKind;
pub use fs::{name, portable, FileId, FileLen, FileStamp};
pub use pipeline::{Order, Outcome, Progress, Record, Sink, TreeHasher, TreeOptions};
pub use read::{hash_path, FileHasher, ReadStrategy};
pub use stage::Source;
