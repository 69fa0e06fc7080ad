//! The feeder: operands to jobs, directories walked, everything numbered
//! in output order.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::{Mutex, Once};

use crossbeam_channel::Sender;

use super::backlog::Backlog;
use super::prefetch::{self, Item};
use super::{Order, Outcome, Progress, Record, Records, TreeOptions};
use crate::fs::device::DiskKind;
use crate::stage::{Job, Source};
use crate::walk::WalkItem;

/// Files sorted by inode at a time on a rotational disk: the collector
/// may hold as many finished records (about 200 bytes each) waiting for an
/// earlier one, and the window as many jobs.
const INODE_WINDOW: usize = 32 * 1024;

/// The prefetch threads as the feeder sees them: started the first time a
/// file is found cold (a warm run never starts them: their stacks and
/// queue cost RSS), then fed batches.
pub(super) struct Prefetchers<'a> {
    pub shared: &'a prefetch::Shared,
    pub batches: Sender<Vec<Item>>,
    pub start: &'a (dyn Fn() + Sync),
}

/// Where the feeder's numbered work goes: files to the workers, every
/// other record straight to the collector, and how far ahead it may be.
pub(super) struct Out<'a> {
    pub jobs: Sender<Job>,
    pub results: Sender<Records>,
    pub backlog: &'a Backlog,
}

/// The feeder: turns operands into jobs, walking directories, and numbers
/// every job and walk record in output order.
pub(super) fn feed(
    options: &TreeOptions,
    operands: &[Source],
    disks: &[DiskKind],
    prefetch: Option<Prefetchers<'_>>,
    out: Out<'_>,
    progress: &Progress,
) {
    let feeder = Feeder {
        options,
        prefetch,
        out,
        progress,
        next_seq: AtomicU64::new(0),
        next_index: AtomicU64::new(0),
        pending: Mutex::new(Vec::with_capacity(prefetch::BATCH)),
        started: Once::new(),
    };
    for (index, operand) in operands.iter().enumerate() {
        feeder.operand(index, operand, disks[index] == DiskKind::Rotational);
    }
    feeder.finish();
}

/// The feeder's state across operands (shared by the walk's threads with
/// `--unordered`).
struct Feeder<'a> {
    options: &'a TreeOptions,
    prefetch: Option<Prefetchers<'a>>,
    out: Out<'a>,
    progress: &'a Progress,
    /// The next job's or record's place in the output.
    next_seq: AtomicU64,
    /// Jobs sent so far: the prefetchers compare it with the workers'
    /// finished count.
    next_index: AtomicU64,
    /// Files for the prefetchers, sent a batch at a time.
    pending: Mutex<Vec<Item>>,
    /// The prefetchers have been started.
    started: Once,
}

impl Feeder<'_> {
    /// The next place in the output, once the backlog lets the feeder that
    /// far ahead (`before_waiting` runs first if it must wait).
    fn number(&self, before_waiting: impl FnOnce()) -> u64 {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        self.out.backlog.admit(seq, before_waiting);
        seq
    }

    /// A job to the workers; its file to the prefetchers first when they
    /// want it (started the first time one is wanted).
    fn send(&self, job: Job, walked: bool) {
        let index = self.next_index.fetch_add(1, Ordering::Relaxed);
        if let (true, Source::Path(path)) = (self.options.from_disk, &job.source) {
            // Before the prefetchers and the workers see it: what they
            // read comes from the device (`TreeOptions::from_disk`).
            crate::fs::residency::drop_cached(path);
        }
        if let (Some(p), Source::Path(path)) = (&self.prefetch, &job.source) {
            if p.shared.wants(index, path, walked) {
                self.started.call_once(p.start);
                let item = Item {
                    index,
                    walked,
                    path: path.clone(),
                };
                let mut pending = self.pending.lock().expect("prefetch batch");
                pending.push(item);
                if pending.len() == prefetch::BATCH {
                    let _ = p.batches.send(std::mem::take(&mut *pending));
                }
            }
        }
        let _ = self.out.jobs.send(job);
    }

    /// One operand, with one stat: a directory is walked (with -r); a
    /// FIFO, socket or device is opened and read as md5sum reads it, and
    /// may wait for its writer.
    fn operand(&self, index: usize, operand: &Source, rotational: bool) {
        if let (true, Source::Path(_)) = (self.options.listed, operand) {
            return self.listed(index, operand);
        }
        let kind = match operand {
            Source::Path(path) => std::fs::metadata(path).ok().map(|m| m.file_type()),
            Source::Stdin => None,
        };
        match operand {
            Source::Path(path) if self.options.recursive && kind.is_some_and(|k| k.is_dir()) => {
                self.walk(index, path, rotational)
            }
            _ => {
                self.progress.files_found.fetch_add(1, Ordering::Relaxed);
                let seq = self.number(|| {});
                let mut job = Job::new(index, seq, operand.clone());
                job.may_block |= kind.is_some_and(|k| !k.is_file() && !k.is_dir());
                job.verify = self.options.verify;
                self.send(job, false);
            }
        }
    }

    /// A file a listing found: to the workers as a walk's file goes, with
    /// no stat (the worker's open says what it is now).
    fn listed(&self, index: usize, operand: &Source) {
        self.progress.files_found.fetch_add(1, Ordering::Relaxed);
        let seq = self.number(|| {});
        let mut job = Job::new(index, seq, operand.clone());
        job.listed = true;
        job.verify = self.options.verify;
        self.send(job, true);
    }

    /// A directory operand walked, each entry numbered as met: files to
    /// the workers (on a rotational disk in inode order, a window at a
    /// time: the collector puts the output back in walk order), anything
    /// else straight to the collector.
    fn walk(&self, index: usize, root: &Path, rotational: bool) {
        let window = Mutex::new(Vec::new());
        let flush = || {
            let mut window = window.lock().expect("inode window");
            window.sort_by_key(|&(ino, _)| ino);
            for (_, job) in window.drain(..) {
                self.send(job, true);
            }
        };
        let sink = |item: WalkItem| {
            let seq = self.number(flush);
            let (path, ino) = match walked(index, seq, item) {
                Walked::File { path, ino } => (path, ino),
                Walked::Record(record) => {
                    let _ = self.out.results.send(vec![record]);
                    return;
                }
            };
            self.progress.files_found.fetch_add(1, Ordering::Relaxed);
            let mut job = Job::new(index, seq, Source::Path(path));
            job.listed = true;
            job.verify = self.options.verify;
            if !rotational {
                return self.send(job, true);
            }
            let full = {
                let mut window = window.lock().expect("inode window");
                window.push((ino, job));
                window.len() >= INODE_WINDOW
            };
            if full {
                flush();
            }
        };
        // Globs were validated up front, so neither can fail.
        let _ = match self.options.order {
            Order::Sorted => self.options.walk.walk_sorted(root, &mut |item| sink(item)),
            Order::Unordered => self.options.walk.walk(root, &sink),
        };
        flush();
    }

    /// The last prefetch batch out; every operand is walked.
    fn finish(&self) {
        if let Some(p) = &self.prefetch {
            let last = std::mem::take(&mut *self.pending.lock().expect("prefetch batch"));
            if self.started.is_completed() {
                let _ = p.batches.send(last);
            }
        }
        self.progress.walk_done.store(true, Ordering::Release);
    }
}

/// A walk entry as the feeder takes it: a file to hash, or a record
/// straight to the collector.
enum Walked {
    File { path: PathBuf, ino: u64 },
    Record(Record),
}

/// Sorts a walk entry: a file becomes a job; anything else (a special
/// file left out, a directory, an error) is its record at `seq`.
fn walked(operand: usize, seq: u64, item: WalkItem) -> Walked {
    let (path, outcome) = match item {
        WalkItem::File { path, ino, .. } => return Walked::File { path, ino },
        WalkItem::Special { path, kind } => (path, Outcome::Skipped(kind)),
        WalkItem::Directory { path } => (path, Outcome::Directory(None)),
        WalkItem::Error(error) => {
            let path = error.path().map(PathBuf::from).unwrap_or_default();
            (path, Outcome::WalkFailed(error.into_kind()))
        }
    };
    Walked::Record(Record {
        operand,
        seq,
        path,
        outcome,
    })
}
