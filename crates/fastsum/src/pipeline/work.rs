//! A worker: batches from the job queue through its hashing stage.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crossbeam_channel::{Receiver, Sender};

use super::{Outcome, Progress, Record, Records};
use crate::algo::Algorithm;
use crate::stage::{BatchHasher, Job, Source, StageResult, MAX_BATCH_FILES};

/// A worker: takes batches from the queue until it is closed and empty.
pub(super) fn work<B: BatchHasher>(
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
