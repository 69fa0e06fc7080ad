//! The stage a run gets unless told otherwise.

#[cfg(feature = "simd")]
use super::lanes::MultiBufferHasher;
use super::{BatchHasher, Job, ScalarBatchHasher, StageResult};
use crate::algo::Algorithm;
use crate::read::{FileHasher, ReadStrategy};

/// The hashing stage a run gets by default: multi-buffer for MD5 where the
/// CPU has lanes, the scalar stage otherwise (and when `--io=mmap` asks for
/// every file to be mapped, which lanes do not do).
pub(crate) enum AutoBatchHasher {
    /// One file at a time.
    Scalar(ScalarBatchHasher),
    /// Many files in SIMD lanes.
    #[cfg(feature = "simd")]
    MultiBuffer(MultiBufferHasher),
}

impl AutoBatchHasher {
    /// The stage for one of `threads` workers hashing `algorithm` read
    /// with `strategy`, reading through `files`.
    pub(crate) fn new(
        algorithm: Algorithm,
        strategy: ReadStrategy,
        threads: usize,
        files: FileHasher,
    ) -> Self {
        if matches!(strategy, ReadStrategy::Mmap) {
            return AutoBatchHasher::Scalar(ScalarBatchHasher::new(algorithm, files));
        }
        #[cfg(feature = "simd")]
        let files = match MultiBufferHasher::for_algorithm(algorithm, threads, files) {
            Ok(lanes) => return AutoBatchHasher::MultiBuffer(lanes),
            Err(files) => files,
        };
        #[cfg(not(feature = "simd"))]
        let _ = threads;
        AutoBatchHasher::Scalar(ScalarBatchHasher::new(algorithm, files))
    }
}

impl BatchHasher for AutoBatchHasher {
    fn max_batch(&self) -> usize {
        match self {
            AutoBatchHasher::Scalar(s) => s.max_batch(),
            #[cfg(feature = "simd")]
            AutoBatchHasher::MultiBuffer(m) => m.max_batch(),
        }
    }

    fn hash_batch(&mut self, batch: &mut Vec<Job>, done: &mut dyn FnMut(Job, StageResult)) {
        match self {
            AutoBatchHasher::Scalar(s) => s.hash_batch(batch, done),
            #[cfg(feature = "simd")]
            AutoBatchHasher::MultiBuffer(m) => m.hash_batch(batch, done),
        }
    }

    fn in_flight(&self) -> bool {
        match self {
            AutoBatchHasher::Scalar(s) => s.in_flight(),
            #[cfg(feature = "simd")]
            AutoBatchHasher::MultiBuffer(m) => m.in_flight(),
        }
    }

    fn flush(&mut self, done: &mut dyn FnMut(Job, StageResult)) {
        match self {
            AutoBatchHasher::Scalar(s) => s.flush(done),
            #[cfg(feature = "simd")]
            AutoBatchHasher::MultiBuffer(m) => m.flush(done),
        }
    }
}
