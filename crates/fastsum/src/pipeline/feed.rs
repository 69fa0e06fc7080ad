//! The feeder: operands to jobs, directories walked, everything numbered
//! in output order.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::{Mutex, Once};

use crossbeam_channel::Sender;

use super::backlog::Backlog;
use super::prefetch::{self, Item};
use super::{Order, Outcome, Progress, Record, Records, TreeOptions};
use crate::fs::device::DiskKind;
use crate::stage::{Job, Source};
use crate::walk::{self, WalkItem};

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
    let Out {
        jobs,
        results,
        backlog,
    } = out;
    let next_seq = AtomicU64::new(0);
    // Jobs sent so far: the prefetchers compare it with the workers'
    // finished count.
    let next_index = AtomicU64::new(0);
    let pending = Mutex::new(Vec::with_capacity(prefetch::BATCH));
    let started = Once::new();
    let send = |job: Job, walked: bool| {
        let index = next_index.fetch_add(1, Ordering::Relaxed);
        if let (Some(p), Source::Path(path)) = (&prefetch, &job.source) {
            if !p.shared.wants(index, path, walked) {
                let _ = jobs.send(job);
                return;
            }
            started.call_once(p.start);
            let item = Item {
                index,
                walked,
                path: path.clone(),
            };
            let mut pending = pending.lock().expect("prefetch batch");
            pending.push(item);
            if pending.len() == prefetch::BATCH {
                let _ = p.batches.send(std::mem::take(&mut *pending));
            }
        }
        let _ = jobs.send(job);
    };
    for (index, operand) in operands.iter().enumerate() {
        // One stat an operand: a directory is walked (with -r); a FIFO,
        // socket or device is opened and read as md5sum reads it, and may
        // wait for its writer.
        let kind = match operand {
            Source::Path(path) => std::fs::metadata(path).ok().map(|m| m.file_type()),
            Source::Stdin => None,
        };
        let path = match operand {
            Source::Path(path) if options.recursive && kind.is_some_and(|k| k.is_dir()) => path,
            _ => {
                progress.files_found.fetch_add(1, Ordering::Relaxed);
                let seq = next_seq.fetch_add(1, Ordering::Relaxed);
                backlog.admit(seq, || {});
                let mut job = Job::new(index, seq, operand.clone());
                job.may_block |= kind.is_some_and(|k| !k.is_file() && !k.is_dir());
                job.verify = options.verify;
                send(job, false);
                continue;
            }
        };
        // On a rotational disk, files go to the workers in inode order, a
        // window at a time (the collector puts the output back in walk
        // order).
        let rotational = disks[index] == DiskKind::Rotational;
        let window = Mutex::new(Vec::new());
        let flush = || {
            let mut window = window.lock().expect("inode window");
            window.sort_by_key(|&(ino, _)| ino);
            for (_, job) in window.drain(..) {
                send(job, true);
            }
        };
        let sink = |item: WalkItem| {
            let seq = next_seq.fetch_add(1, Ordering::Relaxed);
            backlog.admit(seq, flush);
            let (path, outcome) = match item {
                WalkItem::File { path, ino, .. } => {
                    progress.files_found.fetch_add(1, Ordering::Relaxed);
                    let mut job = Job::new(index, seq, Source::Path(path));
                    job.verify = options.verify;
                    if !rotational {
                        send(job, true);
                        return;
                    }
                    let full = {
                        let mut window = window.lock().expect("inode window");
                        window.push((ino, job));
                        window.len() >= INODE_WINDOW
                    };
                    if full {
                        flush();
                    }
                    return;
                }
                WalkItem::Special { path, kind } => (path, Outcome::Skipped(kind)),
                WalkItem::Directory { path } => (path, Outcome::Directory(None)),
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
        flush();
    }
    if let Some(p) = &prefetch {
        let last = std::mem::take(&mut *pending.lock().expect("prefetch batch"));
        if started.is_completed() {
            let _ = p.batches.send(last);
        }
    }
    progress.walk_done.store(true, Ordering::Release);
}
