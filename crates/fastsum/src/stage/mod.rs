//! The hashing stage: what a pipeline worker hands a batch of files to.
//!
//! The vocabulary every stage shares lives here: a `Job` (one file, the
//! `Span` of it to hash, whether to verify the read), its [`Source`], the
//! [`Hashed`] result and the `BatchHasher` trait. Stages:
//!
//! * `ScalarBatchHasher`: one file at a time through a
//!   [`FileHasher`](crate::FileHasher);
//! * `lanes::MultiBufferHasher`: MD5 or SHA-1 of many files at once in
//!   SIMD lanes;
//! * `AutoBatchHasher`: the lanes where the algorithm and CPU have them,
//!   the scalar stage otherwise;
//! * the cache's stage (`crate::cache::CachingBatchHasher`) wraps any of
//!   them.
//!
//! **Verified reads** are part of the contract: a job with
//! `Job::verify` set is read with the file's stamp taken when it is
//! opened and again, on the same descriptor, when it is done. If they
//! differ the job fails with [`ErrorKind::ChangedWhileReading`]; if not,
//! [`Hashed::stamp`] carries the stamp, so a caller (the cache) knows
//! which version of the file the digest is of, whatever stage read it.

pub(crate) mod auto;
#[cfg(feature = "simd")]
pub(crate) mod lanes;
pub(crate) mod scalar;

use std::path::PathBuf;

use crate::digest::Digest;
use crate::error::ErrorKind;
use crate::fs::{FileLen, FileStamp};

pub(crate) use auto::AutoBatchHasher;
pub(crate) use scalar::ScalarBatchHasher;

/// The most files a worker hands its hasher at once (a hasher may ask for
/// fewer through [`BatchHasher::max_batch`]).
pub(crate) const MAX_BATCH_FILES: usize = 64;

/// Where a job's bytes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `-`: standard input.
    Stdin,
    /// A file (or, as a pipeline operand with `recursive`, a directory).
    Path(PathBuf),
}

/// The bytes of a file a job covers: all of them, or a range (duplicate
/// finding hashes a prefix, then a suffix, before whole files).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// The first byte.
    pub start: FileLen,
    /// How many bytes from `start` (`None`: to the end of the file).
    pub len: Option<FileLen>,
}

impl Span {
    /// The whole file.
    pub const WHOLE: Span = Span {
        start: FileLen(0),
        len: None,
    };

    /// `len` bytes from `start` (fewer if the file ends first; the lanes'
    /// tests).
    #[cfg(all(test, feature = "simd"))]
    pub fn range(start: u64, len: u64) -> Span {
        Span {
            start: FileLen(start),
            len: Some(FileLen(len)),
        }
    }

    /// Whether it is the whole file.
    pub fn is_whole(&self) -> bool {
        *self == Span::WHOLE
    }
}

/// One file to hash.
#[derive(Debug)]
pub(crate) struct Job {
    /// Index of the operand it came from.
    pub operand: usize,
    /// Its place in the output (every job and walk record of a run has
    /// its own, counted from 0 with no gaps).
    pub seq: u64,
    /// Where its bytes come from.
    pub source: Source,
    /// Which of its bytes to hash.
    pub span: Span,
    /// Verify the read: see the module documentation.
    pub verify: bool,
    /// Its open or read may wait on another process (standard input, a
    /// FIFO, a device operand): what came before it is sent out first.
    pub may_block: bool,
    /// Found as a regular file by a walk or a listing: it is opened
    /// without waiting (it may have become a FIFO since), and anything
    /// but a regular file in its place is an error, never read.
    pub listed: bool,
}

impl Job {
    /// A job for the whole of `source`, unverified.
    pub fn new(operand: usize, seq: u64, source: Source) -> Job {
        Job {
            may_block: source == Source::Stdin,
            listed: false,
            operand,
            seq,
            source,
            span: Span::WHOLE,
            verify: false,
        }
    }
}

/// A file hashed: the digest and the number of bytes it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hashed {
    /// The digest.
    pub digest: Digest,
    /// Bytes read.
    pub size: u64,
    /// For a verified read of a regular file: its stamp, the same when it
    /// was opened and when the read was done; for an answer from the
    /// cache, the stamp its entry was recorded under (from such a read).
    pub stamp: Option<FileStamp>,
}

impl Hashed {
    /// A result with no verified stamp.
    pub fn new(digest: Digest, size: u64) -> Hashed {
        Hashed {
            digest,
            size,
            stamp: None,
        }
    }
}

/// What a stage reports for one job.
pub(crate) type StageResult = std::result::Result<Hashed, ErrorKind>;

/// The hashing stage: hashes a batch of files and reports each one.
///
/// A worker calls it with up to [`BatchHasher::max_batch`] jobs at once. An
/// implementation may hash them in any order and interleaved (a multi-lane
/// hasher advances several at once) but must call `done` exactly once per
/// job, and an error in one file must not affect the others.
pub(crate) trait BatchHasher: Send {
    /// The largest batch worth handing over (at most [`MAX_BATCH_FILES`]).
    /// Workers hand over less when the queue is short, so that the last
    /// files of a run are spread over all workers.
    fn max_batch(&self) -> usize {
        MAX_BATCH_FILES
    }

    /// Takes every job in `batch` (leaving it empty) and hashes it with
    /// the algorithm the stage was built for (a stage is bound to one
    /// algorithm when it is made: no run hands it another), calling `done`
    /// once per job. A stage may hold some jobs
    /// in flight when it returns (the multi-buffer hasher keeps its lanes
    /// busy across batches) and report them in a later call or in
    /// [`BatchHasher::flush`].
    fn hash_batch(&mut self, batch: &mut Vec<Job>, done: &mut dyn FnMut(Job, StageResult));

    /// Whether some jobs taken are not reported yet.
    fn in_flight(&self) -> bool {
        false
    }

    /// Finishes and reports every job still in flight: after the last
    /// batch, and whenever the queue runs dry.
    fn flush(&mut self, done: &mut dyn FnMut(Job, StageResult)) {
        let _ = done;
    }
}
