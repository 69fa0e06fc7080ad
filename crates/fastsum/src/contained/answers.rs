//! What the stages carry between them, and what they share with the
//! manifests': each source file's answer so far, the problems met, and
//! the whole-file digests of a list of paths.

use std::path::PathBuf;

use super::{ArchiveCopy, ContainedOptions};
use crate::algo::Algorithm;
use crate::digest::Digest;
pub(super) use crate::dupes::items::Problems;
use crate::dupes::items::{hash_as_staged, staged_hasher, Candidates};
use crate::error::Result;
use crate::fs::FileStamp;

/// What each source file has come to so far.
pub(super) struct Answers {
    pub(super) copies: Vec<Option<ArchiveCopy>>,
    /// A problem was met (its verdict is withheld).
    pub(super) trouble: Vec<bool>,
    /// Files an archive could not rule out (an S3 object of their size
    /// that S3 gives no digest of), each with why: a problem at the end
    /// unless another archive holds them.
    pub(super) doubts: Vec<(usize, String)>,
}

impl Answers {
    /// Every source file open, nothing in doubt.
    pub(super) fn new(files: usize) -> Answers {
        Answers {
            copies: vec![None; files],
            trouble: vec![false; files],
            doubts: Vec::new(),
        }
    }

    /// Each file still open that an archive could not rule out is a
    /// problem: neither contained (no copy was shown to hold it) nor not
    /// contained (one might).
    pub(super) fn settle_doubts(&mut self, src: &Candidates, problems: &Problems) {
        for (i, why) in std::mem::take(&mut self.doubts) {
            if self.open(i) {
                self.trouble[i] = true;
                problems.add(src.path(i), why);
            }
        }
    }

    /// Still open: neither contained nor in trouble.
    pub(super) fn open(&self, i: usize) -> bool {
        self.copies[i].is_none() && !self.trouble[i]
    }
}

/// The digests of `files` (each path with the stamp its stat stage took)
/// in `algorithm`, in that order, on every core, by `dupes`' own
/// whole-file stage (`dupes::items::hash_as_staged`: each read only as the
/// version its stamp names), from the cache, `algorithm`'s session loaded
/// on first use (a manifest's or a remote listing's algorithm is known
/// only once it is read: its source files are answered as the trees'
/// are, and one that cannot be loaded is a notice, the files read);
/// `None` for a file that could not be so read: a problem.
pub(super) fn hash_paths(
    files: Vec<(PathBuf, FileStamp)>,
    algorithm: Algorithm,
    options: &ContainedOptions<'_>,
    problems: &Problems,
) -> Result<Vec<Option<Digest>>> {
    #[allow(unused_mut)]
    let mut hasher = staged_hasher(algorithm, options.threads);
    #[cfg(feature = "cache")]
    if let Some(cache) = options.cache {
        // The entries are loaded lazily, a directory at a time, whatever
        // the prefix (`/`: every source's files may be asked).
        match cache.load(algorithm, &[PathBuf::from("/")]) {
            Ok(()) if cache.serves(algorithm) => hasher = hasher.cache(cache)?,
            Ok(()) => {}
            Err(e) => cache.notice(format!("cache: {e}; {algorithm} digests read uncached")),
        }
    }
    hash_as_staged(hasher, files, problems)
}
