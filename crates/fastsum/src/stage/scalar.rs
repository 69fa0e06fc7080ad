//! The one-file-at-a-time stage.

use std::fs::File;

use super::{BatchHasher, Hashed, Job, Source, Span, StageResult};
use crate::algo::Algorithm;
use crate::error::ErrorKind;
use crate::fs::dir::DirectoryCursor;
use crate::fs::regular::not_regular;
use crate::fs::stat::fstat;
use crate::read::FileHasher;

/// The one-file-at-a-time hasher: a [`FileHasher`] (one read buffer) per
/// worker, small files by the short way.
#[derive(Debug)]
pub(crate) struct ScalarBatchHasher {
    /// The algorithm every job is hashed with.
    algorithm: Algorithm,
    files: FileHasher,
    /// A walk's or a listing's files are opened by name in their open
    /// directory (the last one stays open), not by their whole path.
    directory: DirectoryCursor,
}

impl ScalarBatchHasher {
    /// A hasher of `algorithm` that reads through `files`.
    pub fn new(algorithm: Algorithm, files: FileHasher) -> Self {
        ScalarBatchHasher {
            algorithm,
            files,
            directory: DirectoryCursor::new(),
        }
    }

    /// Hashes one job: standard input, or the span of the file at a path,
    /// verified if the job asks.
    pub fn hash_job(&mut self, job: &Job) -> StageResult {
        let algorithm = self.algorithm;
        match &job.source {
            Source::Stdin => {
                let (digest, size) = self
                    .files
                    .hash_stdin_counted(algorithm)
                    .map_err(ErrorKind::Io)?;
                Ok(Hashed::new(digest, size))
            }
            Source::Path(path) if job.listed => {
                let file = self.directory.open(path, true)?;
                hash_open_with(
                    &mut self.files,
                    algorithm,
                    &file,
                    job.span,
                    job.verify,
                    true,
                )
            }
            Source::Path(path) => {
                let file = File::open(path)?;
                self.hash_open(&file, job.span, job.verify)
            }
        }
    }

    /// Hashes `span` of the open `file`; with `verify`, its stamp before
    /// and after must agree (see [`crate::stage`]).
    pub(crate) fn hash_open(&mut self, file: &File, span: Span, verify: bool) -> StageResult {
        hash_open_with(&mut self.files, self.algorithm, file, span, verify, false)
    }

    /// The reader, for a stage layered on this one (the SIMD lanes).
    #[cfg(feature = "simd")]
    pub(crate) fn files(&mut self) -> &mut FileHasher {
        &mut self.files
    }
}

impl BatchHasher for ScalarBatchHasher {
    /// One file at a time gains nothing from batching itself, but every
    /// batch is one hand-off to the collector (a thread wake-up): on the
    /// 100,000 small files, `-j1 -a xxh3` takes 549 ms with batches of 8
    /// and 494 ms with 64 (tree: 780 vs 763 ms). Fair shares keep the
    /// last, large files spread over the workers.
    fn max_batch(&self) -> usize {
        64
    }

    fn hash_batch(&mut self, batch: &mut Vec<Job>, done: &mut dyn FnMut(Job, StageResult)) {
        for job in batch.drain(..) {
            let result = self.hash_job(&job);
            done(job, result);
        }
    }
}

/// Hashes `span` of the open `file`; with `verify`, its stamp before
/// and after must agree (see [`crate::stage`]); with `listed`, anything
/// but a regular file is an error ([`not_regular`]), not read.
pub(crate) fn hash_open_with(
    files: &mut FileHasher,
    algorithm: Algorithm,
    file: &File,
    span: Span,
    verify: bool,
    listed: bool,
) -> StageResult {
    let before = if verify || (listed && !span.is_whole()) {
        let stamp = fstat(file)?;
        if listed && !stamp.is_file() {
            return Err(not_regular(&stamp));
        }
        Some(stamp).filter(|s| verify && s.can_be_verified())
    } else {
        None
    };
    let (digest, size) = if span.is_whole() {
        files.hash_counted(algorithm, file, listed)?
    } else {
        let len = span.len.map_or(u64::MAX, |l| l.get());
        files.hash_range_counted(algorithm, file, span.start.get(), len)?
    };
    let Some(before) = before else {
        return Ok(Hashed::new(digest, size));
    };
    let after = fstat(file)?;
    if !before.held_through(&after, span.is_whole().then_some(size)) {
        return Err(ErrorKind::ChangedWhileReading);
    }
    Ok(Hashed {
        digest,
        size,
        stamp: Some(before),
    })
}
