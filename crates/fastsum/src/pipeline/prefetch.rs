//! Read-ahead apart from hashing: with a cold page cache the device wants
//! many reads in flight, while hashing wants one thread per core.
//!
//! A few prefetch threads follow the job stream a bounded distance ahead
//! of the workers. For each file they open it, probe whether its first
//! page is in the page cache (`preadv2(RWF_NOWAIT)`, which never waits for
//! the device), and if it is not, ask the kernel to read it
//! (`posix_fadvise(WILLNEED)`: the I/O is queued and the call returns).
//! The workers then find the pages in the cache or under way, and hash.
//! The open also brings the inode in, which is half the cost of a cold
//! small file.
//!
//! Warm runs pay almost nothing: until a probe misses, the prefetchers are
//! *dormant*, get nothing, and the feeder probes one file in
//! [`DORMANT_STRIDE`] itself (so a cold run is found at its first file);
//! after [`QUIET_AFTER`] hits in a row they go dormant again.
//!
//! Measured on the corpus (scripts/bench/cold, bench/results/BENCHMARKS-LOG.md): the
//! 50,000-file tree cold went from 2.5 s to about the read floor, the same
//! as 32 hashing threads, with the hashing left on one worker per core.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::{Outcome, Progress, Record, Sink};
use crate::fs::residency;
use crate::stage::{Job, Source};

/// Files the prefetchers may run ahead of the workers.
const AHEAD_FILES: u64 = 4096;

/// Bytes asked for ahead of the workers (what the page cache holds for
/// us at most, beyond what the workers hold).
const AHEAD_BYTES: u64 = 256 * 1024 * 1024;

/// Bytes asked for per file: a larger file's later windows are read ahead
/// by the file's own reader (the kernel's read-ahead, or the map helper).
const PER_FILE: u64 = 32 * 1024 * 1024;

/// Probes that hit in a row before the prefetchers go dormant.
const QUIET_AFTER: u32 = 32;

/// One file for the prefetchers: its number among the run's jobs (not its
/// output place: the workers' progress counts jobs) and its path.
pub(super) struct Item {
    pub index: u64,
    /// The walk saw a regular file here (an operand may be anything).
    pub walked: bool,
    pub path: PathBuf,
}

/// What the prefetchers share.
#[derive(Default)]
pub(super) struct Shared {
    active: AtomicBool,
    hits_in_a_row: AtomicU32,
    asked_bytes: AtomicU64,
    /// With `--no-cache-pollution`: the output places of files that were
    /// not in the page cache when probed, to be dropped once hashed.
    cold: Option<Mutex<HashSet<u64>>>,
}

impl Shared {
    pub fn new(remember_cold: bool) -> Self {
        Shared {
            cold: remember_cold.then(Mutex::default),
            ..Shared::default()
        }
    }

    /// Whether the file at output place `seq` was found cold (and is
    /// forgotten now).
    pub fn take_cold(&self, seq: u64) -> bool {
        self.cold
            .as_ref()
            .is_some_and(|set| set.lock().expect("cold set").remove(&seq))
    }
}

/// Items go to the prefetchers in batches of this many: one channel
/// hand-over (and thread wake-up) per item cost a warm run 13-16%.
pub(super) const BATCH: usize = 64;

/// While dormant, the feeder probes one file in this many itself (the
/// run's first file included): a probe is an open, a stat, a one-byte
/// read and a close, about 5 µs; one per 64 files cost a warm run 2-3%.
pub(super) const DORMANT_STRIDE: u64 = 512;

impl Shared {
    /// Whether the prefetchers want the files the feeder finds (they are
    /// active); while they are dormant, the feeder probes one file in
    /// [`DORMANT_STRIDE`] (`index` counts the run's jobs) and wakes them if
    /// it is cold.
    pub fn wants(&self, index: u64, path: &Path, walked: bool) -> bool {
        if self.active.load(Ordering::Relaxed) {
            return true;
        }
        if !index.is_multiple_of(DORMANT_STRIDE) {
            return false;
        }
        let cold = matches!(probe(path, true, walked), Some((_, _, false)));
        if cold {
            self.wake();
        }
        cold
    }

    fn wake(&self) {
        self.hits_in_a_row.store(0, Ordering::Relaxed);
        self.active.store(true, Ordering::Relaxed);
    }
}

/// A prefetch thread: takes batches until the feeder is done.
pub(super) fn prefetch(batches: Receiver<Vec<Item>>, shared: &Shared, progress: &Progress) {
    for batch in batches {
        for item in &batch {
            if behind(item, progress) {
                continue;
            }
            while item.index > progress.files_done.load(Ordering::Relaxed) + AHEAD_FILES
                || shared.asked_bytes.load(Ordering::Relaxed)
                    > progress.bytes_done.load(Ordering::Relaxed) + AHEAD_BYTES
            {
                std::thread::sleep(Duration::from_micros(200));
            }
            ask(item, shared);
        }
    }
}

/// Whether the workers are past `item`: they have read it already, or
/// are reading it.
fn behind(item: &Item, progress: &Progress) -> bool {
    item.index < progress.files_done.load(Ordering::Relaxed)
}

/// Opens a regular, non-empty file and says whether its first page is in
/// the page cache (unless `look` is false: then it says "not resident"
/// without asking); `None` for anything else (or a file that cannot be
/// opened: its worker will say why). Also gives the file's length.
///
/// A path not `walked` (an operand, which may be a FIFO or a device) is
/// stat-ed first and opened only if it is a regular file: opening a FIFO
/// is not harmless (it lets a waiting writer go, and closing it then makes
/// the writer's next write fail). A path that turns into one between that
/// stat and the open is still never read from, nor waited on.
fn probe(path: &Path, look: bool, walked: bool) -> Option<(File, u64, bool)> {
    if !walked && !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    // O_NONBLOCK: a path that became a FIFO since the walk must not hang
    // us; only regular files are read.
    let file = residency::open_nonblocking(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    let resident = look && residency::first_page_resident(&file);
    Some((file, meta.len(), resident))
}

/// While active, one file in this many is probed before it is asked for
/// (to notice when the files turn warm): asking for pages that are already
/// in the cache costs little, the probe's read one syscall more per file.
const ACTIVE_STRIDE: u64 = 16;

/// A gate thread (`--no-cache-pollution`): every job passes through the
/// gate threads on its way from the feeder to the workers, so each file is
/// probed before any worker can have read it; the cold ones are remembered
/// (to be dropped once hashed) and, with `read_ahead`, asked for.
pub(super) fn gate(
    jobs_in: Receiver<Job>,
    jobs_out: Sender<Job>,
    shared: &Shared,
    progress: &Progress,
    read_ahead: bool,
) {
    for job in jobs_in {
        if let Source::Path(path) = &job.source {
            let cold = probe(path, false, false)
                .filter(|(file, _, _)| !residency::first_page_cached(file));
            if let Some((file, len, _)) = cold {
                shared
                    .cold
                    .as_ref()
                    .expect("a gate remembers cold files")
                    .lock()
                    .expect("cold set")
                    .insert(job.seq);
                if read_ahead {
                    let len = len.min(PER_FILE);
                    while shared.asked_bytes.load(Ordering::Relaxed)
                        > progress.bytes_done.load(Ordering::Relaxed) + AHEAD_BYTES
                    {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    residency::will_need(&file, len);
                    shared.asked_bytes.fetch_add(len, Ordering::Relaxed);
                }
            }
        }
        if jobs_out.send(job).is_err() {
            return;
        }
    }
}

/// Probes one file (or one in [`ACTIVE_STRIDE`]) and asks for it if it is
/// cold.
fn ask(item: &Item, shared: &Shared) {
    let look = item.index.is_multiple_of(ACTIVE_STRIDE);
    let Some((file, len, resident)) = probe(&item.path, look, item.walked) else {
        return;
    };
    if resident {
        let hits = shared.hits_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        if hits >= QUIET_AFTER {
            shared.active.store(false, Ordering::Relaxed);
        }
        return;
    }
    if look {
        shared.wake();
    }
    let len = len.min(PER_FILE);
    residency::will_need(&file, len);
    shared.asked_bytes.fetch_add(len, Ordering::Relaxed);
}

/// A sink that sends the paths of files found cold to be dropped from the
/// page cache, then hands every record on.
pub(super) struct DroppingSink<'a, S> {
    pub inner: &'a mut S,
    pub shared: &'a Shared,
    pub paths: Sender<PathBuf>,
}

impl<S: Sink> Sink for DroppingSink<'_, S> {
    fn record(&mut self, record: Record) {
        if matches!(record.outcome, Outcome::Hashed(_)) && self.shared.take_cold(record.seq) {
            let _ = self.paths.send(record.path.clone());
        }
        self.inner.record(record);
    }

    fn idle(&mut self) {
        self.inner.idle();
    }
}
