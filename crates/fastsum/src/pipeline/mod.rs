//! The pipeline that hashes many files on every core: operands and walks
//! feed a queue of jobs; a pool of workers takes them in *batches* and hashes
//! them; the caller's thread collects the results and hands them out in a
//! deterministic order.
//!
//! ```text
//!  operands ─► feeder thread ─► (WalkOptions::walk) ────┐
//!                  │                                     ▼
//!                  │ specials, walk errors        job queue (bounded)
//!                  ▼                                     │ batches: a fair share, ≤ max_batch
//!            result channel ◄── Vec<Record> ── workers × threads, each a BatchHasher
//!                  │
//!                  ▼
//!  collector (caller's thread): puts records back in the feeder's order
//!  and calls `sink` as soon as the next one is in (or at once with
//!  Order::Unordered)
//! ```
//!
//! In sorted order the feeder walks each directory on its own thread with
//! [`WalkOptions::walk_sorted`], which yields paths in byte order, and numbers
//! every job and record as it goes; the collector only has to restore that
//! numbering. Output streams while the run goes on, and the collector holds
//! only the records that finished ahead of an earlier one, never the whole
//! tree. With `--unordered` the walk is [`WalkOptions::walk`], on several
//! threads.
//!
//! The hashing stage is the `BatchHasher` trait: a worker hands it a batch
//! of files, not one file, so that a multi-lane hasher (several independent
//! MD5 streams advanced together in SIMD registers, fed from several files
//! at once) can take the place of `ScalarBatchHasher` without touching the
//! walk, the ordering or the output.

mod backlog;
mod feed;
mod prefetch;
mod record;
mod reorder;
mod threads;
mod work;

use record::Records;
pub use record::{Outcome, Progress, Record, Sink};

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::algo::Algorithm;
#[cfg(feature = "cache")]
use crate::cache::{CacheSession, CachingBatchHasher};
use crate::error::Result;
use crate::fs::device::DiskKind;
use crate::read::{FileHasher, ReadStrategy};
use crate::stage::{AutoBatchHasher, BatchHasher, Job, Source};
use crate::walk::WalkOptions;

/// Jobs queued ahead of the workers; a walk far ahead of hashing waits.
const JOB_QUEUE: usize = 16 * 1024;

/// Batches of records finished ahead of the collector.
const RESULT_QUEUE: usize = 1024;

/// Prefetch threads unless told otherwise (`--io-depth`): how many opens
/// and read-ahead requests may wait on the device at once, apart from the
/// hashing threads. Chosen by measurement (bench/results/BENCHMARKS-LOG.md, "Issue 16").
pub(crate) const DEFAULT_IO_DEPTH: usize = 8;

/// Prefetch threads when an operand is on a rotational disk: one, going
/// through the files in inode order, so the head sweeps instead of
/// hopping between several files (on an emulated 7200 rpm disk, 5,000
/// files: 3.0 s with one, 4.6 s with two, 5.2 s with eight, 26.6 s with
/// none and two workers reading; bench/results/BENCHMARKS-LOG.md).
pub(crate) const ROTATIONAL_IO_DEPTH: usize = 1;

/// The order results are handed out in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Source by operand as given; within a walked directory, sorted by
    /// path bytes, so two runs over the same tree give identical output.
    #[default]
    Sorted,
    /// Each result as soon as it is ready.
    Unordered,
}

/// How to hash a tree (the algorithm is the run's: [`TreeHasher::new`]).
#[derive(Clone, Debug)]
pub struct TreeOptions {
    /// Hashing threads (at least 1).
    pub threads: usize,
    /// Walk directories given as operands (otherwise they fail as the GNU
    /// tools fail them: "Is a directory").
    pub recursive: bool,
    /// The output order.
    pub order: Order,
    /// How to walk.
    pub walk: WalkOptions,
    /// How each file is read.
    pub strategy: ReadStrategy,
    /// Prefetch threads reading ahead of the workers when the page cache
    /// is cold (0: none); `None`: by the device, `DEFAULT_IO_DEPTH`, or
    /// `ROTATIONAL_IO_DEPTH` when an operand is on a rotational disk.
    /// See `prefetch.rs`.
    pub io_depth: Option<usize>,
    /// Drop from the page cache, once hashed, the files that were not in
    /// it before (`--no-cache-pollution`).
    pub drop_cold: bool,
    /// The device under the operands: under a directory on a rotational
    /// one, files are read in inode order; with any operand on one, fewer
    /// reads wait at once and each file has one reader (see [`DiskKind`]).
    pub disk: DiskKind,
    /// Verified reads: a regular file's stamp is taken when it is opened
    /// and again when it is read, they must agree ("file changed while
    /// reading" otherwise), and the record carries it
    /// ([`crate::stage::Hashed::stamp`]): what a digest is compared with a
    /// recorded one by (`scrub`).
    pub verify: bool,
    /// Holds every read of the run to a rate ([`crate::read::Pace`]).
    pub(crate) pace: Option<Arc<crate::read::Pace>>,
    /// Every file read from the device, not the page cache (`scrub`): the
    /// feeder drops each file's cached pages before the prefetchers and
    /// the workers see it (a block rotted under a mounted file system was
    /// read from the cache and called verified). Dropped by the workers
    /// instead, the pages the prefetchers had just read would be read twice.
    pub(crate) from_disk: bool,
    /// The operands are regular files a listing found (the Dask runner's
    /// shards): each is hashed as a walk's file is, not stat'ed first,
    /// never waited on, and an error if something else took its place.
    pub listed: bool,
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions::new()
    }
}

impl TreeOptions {
    /// Defaults: one thread per available core, sorted, not recursive.
    pub fn new() -> Self {
        TreeOptions {
            threads: TreeOptions::available_threads(),
            recursive: false,
            order: Order::Sorted,
            walk: WalkOptions::default(),
            strategy: ReadStrategy::Auto,
            io_depth: None,
            drop_cold: false,
            disk: DiskKind::Auto,
            verify: false,
            pace: None,
            from_disk: false,
            listed: false,
        }
    }

    /// The cores this process may use (1 if unknown): the threads a run
    /// has unless told otherwise.
    pub fn available_threads() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// A run over many files on every core: the pipeline with its stages
/// assembled (the SIMD lanes where the algorithm has them, the cache in
/// front when given). The CLI, the bindings and the subcommands all start
/// runs here.
///
/// ```
/// use fastsum::{Algorithm, Source, TreeHasher};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a"), b"abc").unwrap();
/// let mut digests = Vec::new();
/// TreeHasher::new(Algorithm::Md5)
///     .recursive(true)
///     .threads(2)
///     .run(&[Source::Path(dir.path().into())], |record| digests.push(record))
///     .unwrap();
/// assert_eq!(digests.len(), 1);
/// ```
#[derive(Clone)]
pub struct TreeHasher {
    algorithm: Algorithm,
    options: TreeOptions,
    #[cfg(feature = "cache")]
    cache: Option<Arc<CacheSession>>,
    progress: Option<Arc<Progress>>,
}

impl TreeHasher {
    /// A run with `algorithm` and [`TreeOptions::new`]'s defaults.
    pub fn new(algorithm: Algorithm) -> Self {
        Self::with_options(algorithm, TreeOptions::new())
    }

    /// A run with `algorithm` and these options.
    pub fn with_options(algorithm: Algorithm, options: TreeOptions) -> Self {
        TreeHasher {
            algorithm,
            options,
            #[cfg(feature = "cache")]
            cache: None,
            progress: None,
        }
    }

    /// Hashing threads (at least 1).
    pub fn threads(mut self, threads: usize) -> Self {
        self.options.threads = threads;
        self
    }

    /// The operands are regular files a listing found
    /// ([`TreeOptions::listed`]).
    pub fn listed(mut self, on: bool) -> Self {
        self.options.listed = on;
        self
    }

    /// Verified reads ([`TreeOptions::verify`]): a file that changed
    /// while it was read is an error, never a digest.
    pub fn verify(mut self, on: bool) -> Self {
        self.options.verify = on;
        self
    }

    /// Walk directories given as operands.
    pub fn recursive(mut self, on: bool) -> Self {
        self.options.recursive = on;
        self
    }

    /// The order records are handed out in.
    pub fn order(mut self, order: Order) -> Self {
        self.options.order = order;
        self
    }

    /// How to walk.
    pub fn walk(mut self, walk: WalkOptions) -> Self {
        self.options.walk = walk;
        self
    }

    /// How each file is read.
    pub fn strategy(mut self, strategy: ReadStrategy) -> Self {
        self.options.strategy = strategy;
        self
    }

    /// Prefetch threads (0: none; see [`TreeOptions::io_depth`]).
    pub fn io_depth(mut self, depth: usize) -> Self {
        self.options.io_depth = Some(depth);
        self
    }

    /// Drop the files that were cold before the run from the page cache
    /// once hashed ([`TreeOptions::drop_cold`]).
    pub fn drop_cold(mut self, on: bool) -> Self {
        self.options.drop_cold = on;
        self
    }

    /// Answer from (and feed) `cache`'s session of the run's algorithm.
    /// Prefetching is off with a cache: most files are answered without
    /// reading them, and reading them ahead would undo that. A cache that
    /// is off leaves the run uncached.
    ///
    /// The session must be for the run's algorithm (the one the stages
    /// are built for): a cache loaded for another only is refused with
    /// [`ErrorKind::CacheAlgorithm`](crate::ErrorKind::CacheAlgorithm),
    /// never used or skipped silently.
    #[cfg(feature = "cache")]
    pub fn cache(mut self, cache: &crate::cache::CacheRun) -> Result<Self> {
        let run = self.algorithm;
        match (cache.session(run), cache.loaded()) {
            (Some(session), _) => self.cache = Some(session),
            (None, Some(other)) => {
                return Err(crate::error::Error::new(
                    crate::error::ErrorKind::CacheAlgorithm {
                        session: other.name(),
                        run: run.name(),
                    },
                ))
            }
            (None, None) => {}
        }
        Ok(self)
    }

    /// Stop early when `flag` is set: the walk reads no more directories,
    /// the workers take no more jobs, the sink is handed no more records
    /// (not even those already hashed), and [`TreeHasher::run`] returns
    /// with the records handed out so far (the Python binding sets it when a
    /// generator is closed or on Ctrl-C).
    pub fn stop_when(mut self, flag: Arc<AtomicBool>) -> Self {
        self.options.walk.stop = Some(flag);
        self
    }

    /// Count files and bytes in `progress` as the run goes.
    pub fn progress(mut self, progress: Arc<Progress>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// The options as set.
    pub fn options(&self) -> &TreeOptions {
        &self.options
    }

    /// The run's algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Hashes every operand (walking directories when recursive) and calls
    /// `sink` on the caller's thread for every record, in the run's order.
    ///
    /// Per-file problems are records, not errors: the run always goes on.
    /// The only error returned is an invalid exclude pattern, before any
    /// work.
    pub fn run(&self, operands: &[Source], sink: impl FnMut(Record)) -> Result<()> {
        self.run_into(operands, sink)
    }

    /// [`TreeHasher::run`] into a [`Sink`] that also hears when the run is
    /// idle (to flush buffered output).
    pub fn run_into(&self, operands: &[Source], sink: impl Sink) -> Result<()> {
        let local = Progress::default();
        let progress = self.progress.as_deref().unwrap_or(&local);
        let files = |options: &TreeOptions| {
            AutoBatchHasher::new(
                self.algorithm,
                options.strategy,
                options.threads,
                FileHasher::with_strategy(options.strategy)
                    .parallel_large_files(
                        options.threads > 1 && options.disk != DiskKind::Rotational,
                    )
                    .count_bytes_in(progress.bytes_done.clone())
                    .paced(options.pace.clone()),
            )
        };
        #[cfg(feature = "cache")]
        if let Some(session) = &self.cache {
            let options = TreeOptions {
                io_depth: Some(0),
                ..self.options.clone()
            };
            return hash_operands_with(&options, operands, progress, sink, |options| {
                CachingBatchHasher::new(session.clone(), files(options))
            });
        }
        hash_operands_with(&self.options, operands, progress, sink, files)
    }
}

/// A run with the hashing stage of one's choice (the default stages are
/// [`TreeHasher`]'s):
/// `make_hasher` is called once per worker thread.
///
/// The stages, each on threads of its own: the workers, the gates (with
/// `drop_cold`), the feeder (and the prefetchers it starts), then the
/// collector on the caller's thread until the records end.
pub(crate) fn hash_operands_with<B: BatchHasher>(
    options: &TreeOptions,
    operands: &[Source],
    progress: &Progress,
    mut sink: impl Sink,
    make_hasher: impl Fn(&TreeOptions) -> B + Sync,
) -> Result<()> {
    options.walk.check_excludes()?;
    let Resolved {
        options,
        disks,
        io_depth,
    } = resolve(options, operands);
    let (options, disks) = (&options, &disks[..]);
    let (job_tx, job_rx) = crossbeam_channel::bounded::<Job>(JOB_QUEUE);
    // Bounded, so that a sink that stops taking records (a slow pipe, a
    // paused Python generator) holds the workers back instead of letting
    // finished records pile up: the collector takes batches in any order,
    // so a full queue only waits for the sink, never for a worker.
    let (result_tx, result_rx) = crossbeam_channel::bounded::<Records>(RESULT_QUEUE);
    // With --no-cache-pollution, every job passes a gate that probes it
    // first (prefetch::gate); otherwise the prefetchers follow the jobs
    // when the files are cold (prefetch::prefetch).
    let gated = options.drop_cold;
    let shared = &prefetch::Shared::new(gated);
    let backlog = &backlog::Backlog::new(options.order == Order::Sorted);
    std::thread::scope(|scope| {
        work::spawn_workers(scope, options, &make_hasher, &job_rx, &result_tx, progress)?;
        drop(job_rx);
        let jobs = if gated {
            threads::start_gates(scope, job_tx, shared, progress, io_depth)
        } else {
            job_tx
        };
        let following = if gated { 0 } else { io_depth };
        let out = feed::Out {
            jobs,
            results: result_tx,
            backlog,
        };
        threads::start_feeder(
            scope, options, operands, disks, out, shared, progress, following,
        );
        threads::collect(scope, options, result_rx, backlog, shared, &mut sink);
        Ok(())
    })
}

/// A run's options as its stages see them, with what the operands decide.
struct Resolved {
    options: TreeOptions,
    /// The kind of disk each operand is on.
    disks: Vec<DiskKind>,
    /// Prefetch threads.
    io_depth: usize,
}

/// Settles what the options leave open for these operands: threads, walk
/// threads, each operand's disk and the prefetch depth.
fn resolve(options: &TreeOptions, operands: &[Source]) -> Resolved {
    let mut options = options.clone();
    // Standard input read by two workers at once would be split between
    // them; one worker reads operands strictly in order, as the GNU tools.
    if operands.iter().filter(|o| **o == Source::Stdin).count() > 1 {
        options.threads = 1;
    }
    options.threads = options.threads.max(1);
    if options.walk.threads == 0 {
        // For --unordered (a sorted run walks on the feeder's thread):
        // half as many walkers as workers, as with multi-buffer MD5 the
        // workers need the cores more (2 cores, tree: 290 vs 300 ms;
        // small files: 334 vs 348 ms, one walker against two).
        options.walk.threads = (options.threads / 2).max(1);
    }
    // What kind of disk each operand is on: on a rotational one, files
    // go in inode order and fewer reads wait at once.
    let disks = options.disk.resolve_all(operands.iter().map(|o| match o {
        Source::Path(path) => Some(path.as_path()),
        _ => None,
    }));
    let rotational = disks.contains(&DiskKind::Rotational);
    let io_depth = options.io_depth.unwrap_or(if rotational {
        ROTATIONAL_IO_DEPTH
    } else {
        DEFAULT_IO_DEPTH
    });
    // The stages see the run's disk resolved: with any operand on a
    // rotational disk, one reader per file (no map helper, no BLAKE3
    // threads at other offsets of the same file: on the emulated disk a
    // 300 MiB file took 3.3 s with the helper, 2.8 s without).
    options.disk = if rotational {
        DiskKind::Rotational
    } else {
        DiskKind::Solid
    };
    Resolved {
        options,
        disks,
        io_depth,
    }
}

#[cfg(test)]
mod tests;
