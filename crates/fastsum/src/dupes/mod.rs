//! `fastsum dupes`: groups of files with identical bytes.
//!
//! Stages, each on what survived the last (fclones' plan, with fastsum's
//! walk, pipeline and cache):
//!
//! 1. **walk and stat** every operand (a path met twice counts once);
//! 2. **group by size** (a file alone in its size has no duplicate);
//! 3. **collapse hard links**: paths of one inode are one content, hashed
//!    once; a group needs two inodes unless `hard_links`;
//! 4. **prefix**, 5. **suffix**: a short hash of the first and the last
//!    `EDGE` bytes splits most groups of one size without reading whole
//!    files;
//! 6. **whole file** in the chosen algorithm (through the pipeline: every
//!    core, the lanes for MD5/SHA-1, the cache in front when given);
//! 7. with `verify`, the bytes of every member compared with the first's.
//!
//! Groups come out ordered by size (largest first), then digest; paths in
//! byte order.

pub mod actions;
pub mod dirs;
mod entry;
pub(crate) mod files;
pub(crate) mod items;
pub mod leftovers;
mod reflink;
pub mod scope;
mod stages;

use std::path::PathBuf;
use std::sync::Arc;

use crate::algo::Algorithm;
#[cfg(feature = "cache")]
use crate::cache::CacheRun;
use crate::digest::Digest;
use crate::error::Result;
use crate::fs::{FileId, FileStamp};
use crate::walk::WalkOptions;

/// How to look for duplicates.
#[derive(Clone)]
pub struct DupesOptions<'a> {
    /// The digest of the whole-file stage (and the one printed).
    pub algorithm: Algorithm,
    /// How directories are walked (links, file systems, excludes).
    pub walk: WalkOptions,
    /// Threads (0: every core).
    pub threads: usize,
    /// Smallest file considered.
    pub min_size: u64,
    /// Largest file considered.
    pub max_size: Option<u64>,
    /// Empty files form a group too.
    pub empty: bool,
    /// Paths that share an inode count as duplicates.
    pub hard_links: bool,
    /// Compare the bytes of every member with the first's.
    pub verify: bool,
    /// Whole-file digests from and to this cache (borrowed: the run
    /// stores what it learnt once every stage is done with it).
    #[cfg(feature = "cache")]
    pub cache: Option<&'a CacheRun>,
    /// Without the cache there is nothing to borrow.
    #[cfg(not(feature = "cache"))]
    _no_cache: std::marker::PhantomData<&'a ()>,
    /// Counters for a progress display: `files_found` counts the files
    /// the walk meets; then, for the whole-file stage, the candidates to
    /// hash (`files_found` reset to them), `files_done` and `bytes_done`.
    pub progress: Option<Arc<crate::pipeline::Progress>>,
}

impl DupesOptions<'_> {
    /// The defaults: xxh3-128, every core, no empty files, no hard links.
    pub fn new() -> Self {
        DupesOptions {
            algorithm: Algorithm::Xxh128,
            walk: WalkOptions::default(),
            threads: 0,
            min_size: 0,
            max_size: None,
            empty: false,
            hard_links: false,
            verify: false,
            progress: None,
            #[cfg(feature = "cache")]
            cache: None,
            #[cfg(not(feature = "cache"))]
            _no_cache: std::marker::PhantomData,
        }
    }
}

impl Default for DupesOptions<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// One file of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its path, as walked from its operand.
    pub path: PathBuf,
    /// Its identity and stamp when it was stat-ed (the actions check it
    /// again before touching the file).
    pub stamp: FileStamp,
}

impl Member {
    /// Device and inode.
    pub fn id(&self) -> FileId {
        self.stamp.id()
    }
}

/// Files with identical bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Their size.
    pub size: u64,
    /// Their whole-file digest.
    pub digest: Digest,
    /// The files, in byte order of their paths.
    pub members: Vec<Member>,
}

impl Group {
    /// Bytes that one copy per content would save: the size times the
    /// number of inodes past the first (hard links cost nothing).
    pub fn redundant_bytes(&self) -> u64 {
        let mut ids: Vec<FileId> = self.members.iter().map(Member::id).collect();
        ids.sort();
        ids.dedup();
        self.size * (ids.len() as u64).saturating_sub(1)
    }
}

/// Something that could not be read or stat-ed: the rest goes on.
#[derive(Clone, Debug)]
pub struct Problem {
    /// The path.
    pub path: PathBuf,
    /// Why.
    pub error: String,
}

/// What a search found.
#[derive(Debug, Default)]
pub struct DupesReport {
    /// The groups, largest size first, then by digest.
    pub groups: Vec<Group>,
    /// Files that have no duplicate (filled when asked for).
    pub unique: Vec<PathBuf>,
    /// What could not be read.
    pub problems: Vec<Problem>,
    /// Temporary names an interrupted action left (never counted as files).
    pub leftovers: Vec<leftovers::Leftover>,
    /// Where the groups' actions may act: under the operands' real paths,
    /// never through an overlay onto its layer ([`scope::Scope`]).
    pub scope: scope::Scope,
}

impl DupesOptions<'_> {
    /// Finds the groups of identical files under `operands`; with `unique`,
    /// also lists the files that have none.
    pub fn find_duplicates(&self, operands: &[PathBuf], unique: bool) -> Result<DupesReport> {
        stages::run(operands, self, unique)
    }
}
