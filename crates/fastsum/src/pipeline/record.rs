//! What a run hands out: a [`Record`] per path with its [`Outcome`], to a
//! [`Sink`] on the caller's thread, and the [`Progress`] counters.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::digest::Digest;
use crate::error::ErrorKind;
use crate::stage::Hashed;
use crate::walk::SpecialKind;

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
    /// A directory: met during a walk, before its entries (`None`, only
    /// with [`crate::walk::WalkOptions::directories`]), or its directory
    /// digest after them (`Some`, from [`crate::dirdigest`]; the path
    /// then ends with a separator).
    Directory(Option<Digest>),
}

/// One result, for one path.
#[derive(Debug)]
pub struct Record {
    /// Index of the operand it belongs to.
    pub operand: usize,
    /// Its place in the output (see `crate::stage::Job::seq`).
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

/// Counters a progress display can read while a run goes on.
#[derive(Debug, Default)]
pub struct Progress {
    /// Files found so far (walked or named).
    pub files_found: AtomicU64,
    /// Files finished (hashed or failed).
    pub files_done: AtomicU64,
    /// Bytes hashed so far, counted as they are read.
    pub bytes_done: Arc<AtomicU64>,
    /// Every operand is walked: `files_found` is the run's total (unless
    /// `more_to_come`).
    pub walk_done: AtomicBool,
    /// The caller has more files to hand the pipeline after this run (the
    /// next chunk of a list being checked): `files_found` is not final.
    pub more_to_come: AtomicBool,
    /// The bytes the current stage reads in all, when known before it
    /// reads them (dupes' stages, from sizes stat-ed): 0 when not known.
    pub bytes_total: AtomicU64,
    /// `bytes_done` when the current stage began: the stage's bytes are
    /// those past it.
    pub stage_bytes_from: AtomicU64,
    /// What the run is doing, for a run of several stages (dupes: walking,
    /// reading sizes ...); empty for a run of one.
    pub stage: Mutex<&'static str>,
}

impl Progress {
    /// A new stage, `name`, begins: of `files` files when known (else
    /// counted as found, the total not final until `walk_done`), and of
    /// `bytes` bytes when known.
    pub fn begin_stage(&self, name: &'static str, files: Option<u64>, bytes: Option<u64>) {
        *self.stage.lock().expect("not poisoned") = name;
        self.files_found
            .store(files.unwrap_or(0), Ordering::Relaxed);
        self.files_done.store(0, Ordering::Relaxed);
        self.bytes_total
            .store(bytes.unwrap_or(0), Ordering::Relaxed);
        let now = self.bytes_done.load(Ordering::Relaxed);
        self.stage_bytes_from.store(now, Ordering::Relaxed);
        self.walk_done.store(files.is_some(), Ordering::Release);
    }

    /// The current stage's name.
    pub fn stage(&self) -> &'static str {
        *self.stage.lock().expect("not poisoned")
    }
}

/// What workers and the feeder send the collector: finished records.
pub(super) type Records = Vec<Record>;

/// Where a run's records go, on the caller's thread.
///
/// Any `FnMut(Record)` is a sink. A sink that buffers output implements
/// [`Sink::idle`] as well, to flush when the collector has nothing more to
/// hand it for now: output then reaches a terminal or a pipe as soon as it
/// is known, yet is written in batches while results pour in.
pub trait Sink {
    /// The next record, in the run's order.
    fn record(&mut self, record: Record);

    /// No record is ready: the collector is about to wait for the workers.
    fn idle(&mut self) {}
}

impl<F: FnMut(Record)> Sink for F {
    fn record(&mut self, record: Record) {
        self(record)
    }
}
