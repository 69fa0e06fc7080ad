//! What the stages carry between them, and what they share with the
//! manifests': each source file's answer so far, the problems met, and
//! the whole-file digests of a list of paths.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{ArchiveCopy, ContainedOptions};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::dupes::items::WHOLE_FILE_READS;
use crate::dupes::Problem;
use crate::error::Result;
use crate::pipeline::{Order, Outcome, TreeHasher};
use crate::read::ReadStrategy;
use crate::stage::Source;

/// What went wrong, gathered from every thread.
#[derive(Default)]
pub(super) struct Problems(Mutex<Vec<Problem>>);

impl Problems {
    pub(super) fn add(&self, path: &Path, error: String) {
        self.0.lock().expect("not poisoned").push(Problem {
            path: path.to_path_buf(),
            error,
        });
    }

    pub(super) fn sorted(self) -> Vec<Problem> {
        let mut problems = self.0.into_inner().expect("not poisoned");
        problems.sort_by(|a, b| a.path.cmp(&b.path).then(a.error.cmp(&b.error)));
        problems
    }
}

/// What each source file has come to so far.
pub(super) struct Answers {
    pub(super) copies: Vec<Option<ArchiveCopy>>,
    /// A problem was met (its verdict is withheld).
    pub(super) trouble: Vec<bool>,
}

impl Answers {
    /// Still open: neither contained nor in trouble.
    pub(super) fn open(&self, i: usize) -> bool {
        self.copies[i].is_none() && !self.trouble[i]
    }
}

/// The digests of `paths` in `algorithm`, in that order, on every core
/// (`None` for a file that could not be read: a problem).
pub(super) fn hash_paths(
    paths: Vec<PathBuf>,
    algorithm: Algorithm,
    options: &ContainedOptions<'_>,
    problems: &Problems,
) -> Result<Vec<Option<Digest>>> {
    let threads = options.threads;
    let mut hashed: Vec<Option<Digest>> = vec![None; paths.len()];
    if paths.is_empty() {
        return Ok(hashed);
    }
    let operands: Vec<Source> = paths.into_iter().map(Source::Path).collect();
    #[allow(unused_mut)]
    let mut hasher = TreeHasher::new(algorithm)
        .order(Order::Sorted)
        .strategy(ReadStrategy::Read {
            buffer_size: WHOLE_FILE_READS,
        })
        .threads(match threads {
            0 => crate::pipeline::TreeOptions::available_threads(),
            n => n,
        });
    #[cfg(feature = "cache")]
    if let Some(cache) = options.cache.filter(|c| c.serves(algorithm)) {
        hasher = hasher.cache(cache)?;
    }
    hasher.run(&operands, |record| match record.outcome {
        Outcome::Hashed(h) => hashed[record.operand] = Some(h.digest),
        Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
            problems.add(&record.path, kind.to_string())
        }
        Outcome::Skipped(_) | Outcome::Directory(_) => {
            problems.add(&record.path, "it is no longer a regular file".into())
        }
    })?;
    Ok(hashed)
}
