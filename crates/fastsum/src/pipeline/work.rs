//! A worker: batches from the job queue through its hashing stage.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::{Outcome, Progress, Record, Records, TreeOptions};
use crate::error::Error;
use crate::stage::{BatchHasher, Job, Source, StageResult, MAX_BATCH_FILES};

/// How long a finished record may wait in a worker for the rest of its
/// batch before it is sent on its own: a few large files (the tail of the
/// lanes, `fastsum a.iso b.iso c.iso`) each reach the output as they finish
/// instead of all at the end, while small files still go to the
/// collector a batch at a time (one wake-up per batch: on 100,000 small
/// files, batches of 64 against 8 saved 10% at -j1).
const HOLD_AT_MOST: Duration = Duration::from_millis(20);

/// A worker's finished records on their way to the collector.
struct Outbox<'a> {
    records: Vec<Record>,
    /// When records were last sent (or the worker started).
    since: Instant,
    results: &'a Sender<Records>,
    progress: &'a Progress,
    /// The collector is gone: stop.
    closed: bool,
}

impl Outbox<'_> {
    /// Holds a finished record; sends what is held if the last sending was
    /// long enough ago (a record that took that long to finish goes at
    /// once).
    fn push(&mut self, job: Job, result: StageResult) {
        self.records.push(record_of(job, result));
        if self.since.elapsed() >= HOLD_AT_MOST {
            self.send();
        }
    }

    /// Finishes what `hasher` has in flight and sends everything held;
    /// false once the collector is gone.
    fn flush<B: BatchHasher>(&mut self, hasher: &mut B) -> bool {
        hasher.flush(&mut |job, result| self.push(job, result));
        self.send()
    }

    /// Sends what is held; false once the collector is gone.
    fn send(&mut self) -> bool {
        self.since = Instant::now();
        let records = std::mem::take(&mut self.records);
        if !report(records, self.results, self.progress) {
            self.closed = true;
        }
        !self.closed
    }
}

/// Starts a worker per thread asked for, as many as the system gives (a
/// thread limit is met with fewer workers, not a panic; none is an error).
pub(super) fn spawn_workers<'scope, B: BatchHasher + Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    options: &'scope TreeOptions,
    make_hasher: &(impl Fn(&TreeOptions) -> B + Sync),
    jobs: &Receiver<Job>,
    results: &Sender<Records>,
    progress: &'scope Progress,
) -> crate::error::Result<usize> {
    let mut workers = 0;
    for _ in 0..options.threads {
        let (jobs, results) = (jobs.clone(), results.clone());
        let hasher = make_hasher(options);
        let started = std::thread::Builder::new().spawn_scoped(scope, move || {
            work(options, hasher, jobs, results, progress)
        });
        match started {
            Ok(_) => workers += 1,
            Err(_) if workers > 0 => break,
            Err(e) => return Err(Error::thread_refused(&e)),
        }
    }
    Ok(workers)
}

/// A worker: takes batches from the queue until it is closed and empty.
pub(super) fn work<B: BatchHasher>(
    options: &TreeOptions,
    mut hasher: B,
    jobs: Receiver<Job>,
    results: Sender<Records>,
    progress: &Progress,
) {
    let max_batch = hasher.max_batch().clamp(1, MAX_BATCH_FILES);
    let mut batch = Vec::with_capacity(max_batch);
    let mut outbox = Outbox {
        records: Vec::with_capacity(max_batch),
        since: Instant::now(),
        results: &results,
        progress,
        closed: false,
    };
    let threads = options.threads;
    let mut held_back: Option<Job> = None;
    loop {
        if options.walk.stopped() {
            // Told to stop: what is in flight is dropped with the jobs
            // still queued (the feeder's sends fail once every worker
            // has gone).
            return;
        }
        let first = match held_back.take().map(Ok).unwrap_or_else(|| jobs.try_recv()) {
            Ok(job) => job,
            Err(crossbeam_channel::TryRecvError::Empty) if hasher.in_flight() => {
                // Nothing queued: finish what is in flight rather than
                // hold it while the walk catches up.
                if !outbox.flush(&mut hasher) {
                    return;
                }
                continue;
            }
            Err(_) => match jobs.recv() {
                Ok(job) => job,
                Err(_) => break,
            },
        };
        let sent = if first.may_block {
            hash_alone(&mut hasher, first, &mut outbox)
        } else {
            batch.push(first);
            held_back = take_share(&jobs, &mut batch, threads, max_batch);
            hasher.hash_batch(&mut batch, &mut |job, result| outbox.push(job, result));
            outbox.send()
        };
        if !sent {
            return;
        }
    }
    outbox.flush(&mut hasher);
}

/// Standard input or a FIFO may block for as long as its writer likes:
/// everything before it is finished and sent first, as md5sum prints a
/// file's line before it reads the next; then it is hashed alone and sent.
/// False once the collector is gone.
fn hash_alone<B: BatchHasher>(hasher: &mut B, job: Job, outbox: &mut Outbox<'_>) -> bool {
    if !outbox.flush(hasher) {
        return false;
    }
    hasher.hash_batch(&mut vec![job], &mut |job, result| outbox.push(job, result));
    outbox.flush(hasher)
}

/// Fills `batch` up to a fair share of what is queued, so that all workers
/// stay busy to the end even when the last files are large. A job that may
/// block is not taken into a batch: it is handed back, to go alone.
fn take_share(
    jobs: &Receiver<Job>,
    batch: &mut Vec<Job>,
    threads: usize,
    max_batch: usize,
) -> Option<Job> {
    let share = (jobs.len() / (2 * threads)).clamp(1, max_batch);
    while batch.len() < share {
        match jobs.try_recv() {
            Ok(job) if job.may_block => return Some(job),
            Ok(job) => batch.push(job),
            Err(_) => break,
        }
    }
    None
}

/// A finished job as the collector takes it.
fn record_of(job: Job, result: StageResult) -> Record {
    let path = match job.source {
        Source::Stdin => PathBuf::from("-"),
        Source::Path(path) => path,
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
