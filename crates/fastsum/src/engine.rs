//! The pipeline that hashes many files on every core: operands and walks
//! feed a queue of jobs; a pool of workers takes them in *batches* and hashes
//! them; the caller's thread collects the results and hands them out in a
//! deterministic order.
//!
//! ```text
//!  operands ─► feeder thread ─► (walk::walk, parallel) ─┐
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
//! [`walk::walk_sorted`], which yields paths in byte order, and numbers
//! every job and record as it goes; the collector only has to restore that
//! numbering. Output streams while the run goes on, and the collector holds
//! only the records that finished ahead of an earlier one, never the whole
//! tree. With `--unordered` the walk is [`walk::walk`], on several
//! threads.
//!
//! The hashing stage is the [`BatchHasher`] trait: a worker hands it a batch
//! of files, not one file, so that a multi-lane hasher (several independent
//! MD5 streams advanced together in SIMD registers, fed from several files
//! at once) can take the place of [`ScalarBatchHasher`] without touching the
//! walk, the ordering or the output.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::{ErrorKind, Result};
use crate::io::{FileHasher, ReadStrategy};
use crate::walk::{self, SpecialKind, WalkItem, WalkOptions};

/// The most files a worker hands its hasher at once (a hasher may ask for
/// fewer through [`BatchHasher::max_batch`]).
pub const MAX_BATCH_FILES: usize = 64;

/// Jobs queued ahead of the workers; a walk far ahead of hashing waits.
const JOB_QUEUE: usize = 16 * 1024;

/// The order results are handed out in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Operand by operand as given; within a walked directory, sorted by
    /// path bytes, so two runs over the same tree give identical output.
    #[default]
    Sorted,
    /// Each result as soon as it is ready.
    Unordered,
}

/// What to hash and how.
#[derive(Clone, Debug)]
pub struct TreeOptions {
    /// The algorithm.
    pub algorithm: Algorithm,
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
}

impl TreeOptions {
    /// Defaults: one thread per available core, sorted, not recursive.
    pub fn new(algorithm: Algorithm) -> Self {
        TreeOptions {
            algorithm,
            threads: available_threads(),
            recursive: false,
            order: Order::Sorted,
            walk: WalkOptions::default(),
            strategy: ReadStrategy::Auto,
        }
    }
}

/// The cores this process may use (1 if unknown).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A command-line operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// `-`: standard input.
    Stdin,
    /// A file, or with `recursive` possibly a directory.
    Path(PathBuf),
}

/// One file to hash.
#[derive(Debug)]
pub struct Job {
    /// Index of the operand it came from.
    pub operand: usize,
    /// Its place in the output (every job and walk record of a run has
    /// its own, counted from 0 with no gaps).
    pub seq: u64,
    /// Where its bytes come from.
    pub source: Operand,
}

/// A file hashed: the digest and the number of bytes it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hashed {
    /// The digest.
    pub digest: Digest,
    /// Bytes read.
    pub size: u64,
}

/// How one path ended.
#[derive(Debug)]
pub enum Outcome {
    /// Hashed.
    Hashed(Hashed),
    /// Could not be opened or read.
    Failed(ErrorKind),
    /// A FIFO, socket or device met during a walk: skipped, never opened.
    Skipped(SpecialKind),
    /// A walk error (an unreadable directory, a link loop).
    WalkFailed(ErrorKind),
}

/// One result, for one path.
#[derive(Debug)]
pub struct Record {
    /// Index of the operand it belongs to.
    pub operand: usize,
    /// Its place in the output (see [`Job::seq`]).
    pub seq: u64,
    /// The path as the user will see it (`-` for standard input).
    pub path: PathBuf,
    /// What happened.
    pub outcome: Outcome,
}

impl Record {
    /// Whether this record means the run did not do all it was asked
    /// (skipped special files do not count: they have no bytes to hash).
    pub fn is_failure(&self) -> bool {
        matches!(self.outcome, Outcome::Failed(_) | Outcome::WalkFailed(_))
    }
}

/// The hashing stage: hashes a batch of files and reports each one.
///
/// A worker calls it with up to [`BatchHasher::max_batch`] jobs at once. An
/// implementation may hash them in any order and interleaved (a multi-lane
/// hasher advances several at once) but must call `done` exactly once per
/// job, and an error in one file must not affect the others.
pub trait BatchHasher: Send {
    /// The largest batch worth handing over (at most [`MAX_BATCH_FILES`]).
    /// Workers hand over less when the queue is short, so that the last
    /// files of a run are spread over all workers.
    fn max_batch(&self) -> usize {
        MAX_BATCH_FILES
    }

    /// Takes every job in `batch` (leaving it empty) and hashes it with
    /// `algorithm`, calling `done` once per job. A stage may hold some jobs
    /// in flight when it returns (the multi-buffer hasher keeps its lanes
    /// busy across batches) and report them in a later call or in
    /// [`BatchHasher::flush`].
    fn hash_batch(
        &mut self,
        algorithm: Algorithm,
        batch: &mut Vec<Job>,
        done: &mut dyn FnMut(Job, std::result::Result<Hashed, ErrorKind>),
    );

    /// Whether some jobs taken are not reported yet.
    fn in_flight(&self) -> bool {
        false
    }

    /// Finishes and reports every job still in flight: after the last
    /// batch, and whenever the queue runs dry.
    fn flush(
        &mut self,
        algorithm: Algorithm,
        done: &mut dyn FnMut(Job, std::result::Result<Hashed, ErrorKind>),
    ) {
        let _ = (algorithm, done);
    }
}

/// The one-file-at-a-time hasher: a [`FileHasher`] (one read buffer) per
/// worker, small files by the short way.
#[derive(Debug)]
pub struct ScalarBatchHasher {
    files: FileHasher,
}

impl ScalarBatchHasher {
    /// A hasher that reads through `files`.
    pub fn new(files: FileHasher) -> Self {
        ScalarBatchHasher { files }
    }

    /// Hashes one operand: standard input, or the file at a path.
    pub fn hash_source(
        &mut self,
        algorithm: Algorithm,
        source: &Operand,
    ) -> std::result::Result<Hashed, ErrorKind> {
        let (digest, size) = match source {
            Operand::Stdin => self
                .files
                .hash_stdin_counted(algorithm)
                .map_err(ErrorKind::Io)?,
            Operand::Path(path) => {
                let file = std::fs::File::open(path)?;
                self.files.hash_file_counted(algorithm, &file)?
            }
        };
        Ok(Hashed { digest, size })
    }

    /// The reader, for a hasher layered on this one (the cache).
    pub fn files(&mut self) -> &mut FileHasher {
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

    fn hash_batch(
        &mut self,
        algorithm: Algorithm,
        batch: &mut Vec<Job>,
        done: &mut dyn FnMut(Job, std::result::Result<Hashed, ErrorKind>),
    ) {
        for job in batch.drain(..) {
            let result = self.hash_source(algorithm, &job.source);
            done(job, result);
        }
    }
}

/// Counters a progress display can read while a run goes on.
#[derive(Debug, Default)]
pub struct Progress {
    /// Files found so far (walked or named).
    pub files_found: AtomicU64,
    /// Files finished (hashed or failed).
    pub files_done: AtomicU64,
    /// Bytes hashed so far, counted as they are read.
    pub bytes_done: Arc<AtomicU64>,
}

/// What workers and the feeder send the collector: finished records.
type Records = Vec<Record>;

/// Hashes every operand (walking directories when `options.recursive`) on
/// `options.threads` workers using [`ScalarBatchHasher`]s, and calls `sink`
/// on the caller's thread for every record, in `options.order`.
///
/// Per-file problems are records, not errors: the run always goes on. The
/// only error returned is an invalid exclude pattern, before any work.
pub fn hash_operands(
    options: &TreeOptions,
    operands: &[Operand],
    progress: &Progress,
    sink: impl FnMut(Record),
) -> Result<()> {
    hash_operands_with(options, operands, progress, sink, |options| {
        crate::multibuffer::AutoBatchHasher::new(
            options.algorithm,
            options.strategy,
            options.threads,
            FileHasher::with_strategy(options.strategy)
                .parallel_large_files(options.threads > 1)
                .count_bytes_in(progress.bytes_done.clone()),
        )
    })
}

/// [`hash_operands`] with the hashing stage of one's choice:
/// `make_hasher` is called once per worker thread.
pub fn hash_operands_with<B: BatchHasher>(
    options: &TreeOptions,
    operands: &[Operand],
    progress: &Progress,
    mut sink: impl FnMut(Record),
    make_hasher: impl Fn(&TreeOptions) -> B + Sync,
) -> Result<()> {
    walk::check_excludes(&options.walk.excludes)?;
    let mut options = options.clone();
    // Standard input read by two workers at once would be split between
    // them; one worker reads operands strictly in order, as the GNU tools.
    if operands.iter().filter(|o| **o == Operand::Stdin).count() > 1 {
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
    let options = &options;

    let (job_tx, job_rx) = crossbeam_channel::bounded::<Job>(JOB_QUEUE);
    let (result_tx, result_rx) = crossbeam_channel::unbounded::<Records>();
    std::thread::scope(|scope| {
        for _ in 0..options.threads {
            let job_rx = job_rx.clone();
            let result_tx = result_tx.clone();
            let hasher = make_hasher(options);
            scope.spawn(move || {
                work(
                    options.algorithm,
                    options.threads,
                    hasher,
                    job_rx,
                    result_tx,
                    progress,
                )
            });
        }
        drop(job_rx);
        let feeder_results = result_tx.clone();
        scope.spawn(move || feed(options, operands, job_tx, feeder_results, progress));
        drop(result_tx);
        collect(options.order, result_rx, &mut sink);
    });
    Ok(())
}

/// The feeder: turns operands into jobs, walking directories, and numbers
/// every job and walk record in output order.
fn feed(
    options: &TreeOptions,
    operands: &[Operand],
    jobs: Sender<Job>,
    results: Sender<Records>,
    progress: &Progress,
) {
    let next_seq = AtomicU64::new(0);
    for (index, operand) in operands.iter().enumerate() {
        let path = match operand {
            Operand::Path(path) if options.recursive && path.is_dir() => path,
            _ => {
                progress.files_found.fetch_add(1, Ordering::Relaxed);
                let job = Job {
                    operand: index,
                    seq: next_seq.fetch_add(1, Ordering::Relaxed),
                    source: operand.clone(),
                };
                let _ = jobs.send(job);
                continue;
            }
        };
        let sink = |item: WalkItem| {
            let seq = next_seq.fetch_add(1, Ordering::Relaxed);
            let (path, outcome) = match item {
                WalkItem::File { path } => {
                    progress.files_found.fetch_add(1, Ordering::Relaxed);
                    let job = Job {
                        operand: index,
                        seq,
                        source: Operand::Path(path),
                    };
                    let _ = jobs.send(job);
                    return;
                }
                WalkItem::Special { path, kind } => (path, Outcome::Skipped(kind)),
                WalkItem::Error(error) => {
                    let path = error.path().map(PathBuf::from).unwrap_or_default();
                    (path, Outcome::WalkFailed(error.into_kind()))
                }
            };
            let record = Record {
                operand: index,
                seq,
                path,
                outcome,
            };
            let _ = results.send(vec![record]);
        };
        // Globs were validated up front, so neither can fail.
        let _ = match options.order {
            Order::Sorted => walk::walk_sorted(path, &options.walk, &mut |item| sink(item)),
            Order::Unordered => walk::walk(path, &options.walk, &sink),
        };
    }
}

/// A worker: takes batches from the queue until it is closed and empty.
fn work<B: BatchHasher>(
    algorithm: Algorithm,
    threads: usize,
    mut hasher: B,
    jobs: Receiver<Job>,
    results: Sender<Records>,
    progress: &Progress,
) {
    let max_batch = hasher.max_batch().clamp(1, MAX_BATCH_FILES);
    let mut batch = Vec::with_capacity(max_batch);
    loop {
        let first = match jobs.try_recv() {
            Ok(job) => job,
            Err(crossbeam_channel::TryRecvError::Empty) if hasher.in_flight() => {
                // Nothing queued: finish what is in flight rather than
                // hold it while the walk catches up.
                let mut records = Vec::new();
                hasher.flush(algorithm, &mut |job, result| {
                    records.push(record_of(job, result));
                });
                if !report(records, &results, progress) {
                    return;
                }
                continue;
            }
            Err(_) => match jobs.recv() {
                Ok(job) => job,
                Err(_) => break,
            },
        };
        batch.push(first);
        // Take a fair share of what is queued: all workers stay busy to
        // the end even when the last files are large.
        let share = (jobs.len() / (2 * threads)).clamp(1, max_batch);
        while batch.len() < share {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let mut records = Vec::with_capacity(batch.len());
        hasher.hash_batch(algorithm, &mut batch, &mut |job, result| {
            records.push(record_of(job, result));
        });
        if !report(records, &results, progress) {
            return;
        }
    }
    let mut records = Vec::new();
    hasher.flush(algorithm, &mut |job, result| {
        records.push(record_of(job, result));
    });
    report(records, &results, progress);
}

/// A finished job as the collector takes it.
fn record_of(job: Job, result: std::result::Result<Hashed, ErrorKind>) -> Record {
    let path = match job.source {
        Operand::Stdin => PathBuf::from("-"),
        Operand::Path(path) => path,
    };
    let outcome = match result {
        Ok(hashed) => Outcome::Hashed(hashed),
        Err(kind) => Outcome::Failed(kind),
    };
    Record {
        operand: job.operand,
        seq: job.seq,
        path,
        outcome,
    }
}

/// Sends a worker's finished records to the collector; false once the
/// collector is gone.
fn report(records: Vec<Record>, results: &Sender<Records>, progress: &Progress) -> bool {
    if records.is_empty() {
        return true;
    }
    progress
        .files_done
        .fetch_add(records.len() as u64, Ordering::Relaxed);
    results.send(records).is_ok()
}

/// The collector: hands records to `sink` in `order`.
fn collect(order: Order, results: Receiver<Records>, sink: &mut impl FnMut(Record)) {
    if order == Order::Unordered {
        for records in results {
            records.into_iter().for_each(&mut *sink);
        }
        return;
    }
    // waiting[i] is the record numbered next + i, if it is in.
    let mut next = 0u64;
    let mut waiting: VecDeque<Option<Record>> = VecDeque::new();
    for records in results {
        for record in records {
            let place = usize::try_from(record.seq - next).expect("a place in memory");
            if waiting.len() <= place {
                waiting.resize_with(place + 1, || None);
            }
            waiting[place] = Some(record);
        }
        while let Some(Some(_)) = waiting.front() {
            let record = waiting.pop_front().flatten().expect("front is in");
            sink(record);
            next += 1;
        }
    }
    // Every number is used once, so nothing is left; should a record be
    // missing, the rest still go out in order.
    waiting.into_iter().flatten().for_each(&mut *sink);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (name, len) in [
            ("b/z", 10),
            ("b/a", 0),
            ("a.txt", 3),
            ("a/b", 4_000_000),
            ("a b/c", 7),
            ("c", 65),
        ] {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            std::fs::write(path, bytes).unwrap();
        }
        dir
    }

    fn run(options: &TreeOptions, operands: &[Operand]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        hash_operands(options, operands, &Progress::default(), |r| {
            let what = match r.outcome {
                Outcome::Hashed(h) => h.digest.to_hex(),
                Outcome::Failed(k) | Outcome::WalkFailed(k) => format!("error: {k}"),
                Outcome::Skipped(k) => format!("skipped {}", k.describe()),
            };
            out.push((r.path.display().to_string(), what));
        })
        .unwrap();
        out
    }

    #[test]
    fn walked_files_come_sorted_by_path_bytes_with_correct_digests() {
        let dir = tree();
        let root = dir.path();
        let mut options = TreeOptions::new(Algorithm::Md5);
        options.recursive = true;
        for threads in [1, 2, 8] {
            options.threads = threads;
            let out = run(&options, &[Operand::Path(root.to_path_buf())]);
            let names: Vec<_> = out
                .iter()
                .map(|(p, _)| {
                    Path::new(p)
                        .strip_prefix(root)
                        .unwrap()
                        .display()
                        .to_string()
                })
                .collect();
            // '/' (0x2f) sorts after ' ' and '.', before letters.
            assert_eq!(
                names,
                ["a b/c", "a.txt", "a/b", "b/a", "b/z", "c"],
                "-j {threads}"
            );
            for (path, digest) in &out {
                let bytes = std::fs::read(path).unwrap();
                assert_eq!(*digest, Algorithm::Md5.hash_bytes(&bytes).to_hex());
            }
        }
    }

    #[test]
    fn operands_keep_their_order_and_failures_their_place() {
        let dir = tree();
        let root = dir.path();
        let operands = [
            Operand::Path(root.join("c")),
            Operand::Path(root.join("missing")),
            Operand::Path(root.join("b")),
            Operand::Path(root.join("a.txt")),
        ];
        let mut options = TreeOptions::new(Algorithm::Sha256);
        options.threads = 4;
        let out = run(&options, &operands);
        let names: Vec<_> = out.iter().map(|(p, _)| p.clone()).collect();
        let expected: Vec<_> = ["c", "missing", "b", "a.txt"]
            .iter()
            .map(|n| root.join(n).display().to_string())
            .collect();
        assert_eq!(names, expected);
        assert_eq!(out[1].1, "error: No such file or directory");
        assert_eq!(out[2].1, "error: Is a directory");
    }

    #[test]
    fn unordered_gives_the_same_set() {
        let dir = tree();
        let mut options = TreeOptions::new(Algorithm::Xxh3);
        options.recursive = true;
        let sorted = run(&options, &[Operand::Path(dir.path().to_path_buf())]);
        options.order = Order::Unordered;
        let mut unordered = run(&options, &[Operand::Path(dir.path().to_path_buf())]);
        unordered.sort();
        assert_eq!(sorted, unordered);
    }

    /// A hashing stage taking one file at a time that holds the file named
    /// `last` until `seen` says the sink has had an earlier record (or ten
    /// seconds pass).
    struct HoldingLast {
        last: &'static str,
        seen: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
        waited_in_vain: Arc<std::sync::atomic::AtomicBool>,
        files: ScalarBatchHasher,
    }

    impl BatchHasher for HoldingLast {
        fn max_batch(&self) -> usize {
            1
        }

        fn hash_batch(
            &mut self,
            algorithm: Algorithm,
            batch: &mut Vec<Job>,
            done: &mut dyn FnMut(Job, std::result::Result<Hashed, ErrorKind>),
        ) {
            let is_last = batch
                .iter()
                .any(|job| matches!(&job.source, Operand::Path(p) if p.ends_with(self.last)));
            if is_last {
                let (seen, signal) = &*self.seen;
                let guard = seen.lock().unwrap();
                let (guard, _) = signal
                    .wait_timeout_while(guard, std::time::Duration::from_secs(10), |seen| !*seen)
                    .unwrap();
                if !*guard {
                    self.waited_in_vain.store(true, Ordering::Relaxed);
                }
            }
            self.files.hash_batch(algorithm, batch, done);
        }
    }

    #[test]
    fn sorted_output_streams_before_the_walk_is_hashed() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..100 {
            std::fs::write(dir.path().join(format!("f{i:03}")), i.to_string()).unwrap();
        }
        let seen = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let waited_in_vain = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut options = TreeOptions::new(Algorithm::Md5);
        options.recursive = true;
        options.threads = 2;
        let mut names = Vec::new();
        hash_operands_with(
            &options,
            &[Operand::Path(dir.path().to_path_buf())],
            &Progress::default(),
            |r| {
                if r.path.ends_with("f050") {
                    *seen.0.lock().unwrap() = true;
                    seen.1.notify_all();
                }
                names.push(r.path);
            },
            |_| HoldingLast {
                last: "f099",
                seen: seen.clone(),
                waited_in_vain: waited_in_vain.clone(),
                files: ScalarBatchHasher::new(FileHasher::new()),
            },
        )
        .unwrap();
        assert!(
            !waited_in_vain.load(Ordering::Relaxed),
            "f050 was held back until the whole directory was hashed"
        );
        assert_eq!(names.len(), 100);
        assert!(names.windows(2).all(|w| w[0] < w[1]));
    }

    /// A hashing stage that records the batches it was given.
    struct Recording(Arc<std::sync::Mutex<Vec<usize>>>, ScalarBatchHasher);

    impl BatchHasher for Recording {
        fn hash_batch(
            &mut self,
            algorithm: Algorithm,
            batch: &mut Vec<Job>,
            done: &mut dyn FnMut(Job, std::result::Result<Hashed, ErrorKind>),
        ) {
            self.0.lock().unwrap().push(batch.len());
            // Finish them in reverse, as a lane hasher might.
            batch.reverse();
            self.1.hash_batch(algorithm, batch, done);
        }
    }

    #[test]
    fn the_hashing_stage_receives_batches_and_order_survives_any_completion_order() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..500 {
            std::fs::write(dir.path().join(format!("f{i:03}")), i.to_string()).unwrap();
        }
        let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut options = TreeOptions::new(Algorithm::Md5);
        options.recursive = true;
        options.threads = 1;
        let mut names = Vec::new();
        hash_operands_with(
            &options,
            &[Operand::Path(dir.path().to_path_buf())],
            &Progress::default(),
            |r| names.push(r.path),
            |_| Recording(sizes.clone(), ScalarBatchHasher::new(FileHasher::new())),
        )
        .unwrap();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(names.len(), 500);
        let sizes = sizes.lock().unwrap();
        assert_eq!(sizes.iter().sum::<usize>(), 500);
        assert!(sizes.iter().all(|&n| n <= MAX_BATCH_FILES));
    }
}
