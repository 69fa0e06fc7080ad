//! Which thread runs which stage of a run (`super::hash_operands_with`
//! starts them in this order): the gates, the feeder with the prefetchers
//! it starts, and the collector on the caller's thread.

use std::path::PathBuf;

use crossbeam_channel::{Receiver, Sender};

use super::backlog::Backlog;
use super::{feed, prefetch, reorder, Progress, Records, Sink, TreeOptions, JOB_QUEUE};
use crate::fs;
use crate::fs::device::DiskKind;
use crate::stage::{Job, Source};

/// With `drop_cold`, `io_depth` gates (one at least) stand between the
/// feeder and the workers, each probing a job's file before passing it on;
/// returns the queue the feeder fills. The gates hold the workers' queue
/// now: it closes when they end.
pub(super) fn start_gates<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    workers: Sender<Job>,
    shared: &'scope prefetch::Shared,
    progress: &'scope Progress,
    io_depth: usize,
) -> Sender<Job> {
    // Made only for a gated run: a bounded channel fills in every slot
    // when made (16 Ki jobs: 1.5 MiB of RSS).
    let (gate_tx, gate_rx) = crossbeam_channel::bounded::<Job>(JOB_QUEUE);
    for _ in 0..io_depth.max(1) {
        let (gate_rx, job_tx) = (gate_rx.clone(), workers.clone());
        let read_ahead = io_depth > 0;
        scope.spawn(move || prefetch::gate(gate_rx, job_tx, shared, progress, read_ahead));
    }
    gate_tx
}

/// The feeder, on a thread of its own: walks and numbers the operands into
/// `out`. With `following` prefetchers, it starts them when it meets cold
/// files and hands them what the workers will read next.
#[allow(clippy::too_many_arguments)] // each stage's handles, passed once
pub(super) fn start_feeder<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    options: &'scope TreeOptions,
    operands: &'scope [Source],
    disks: &'scope [DiskKind],
    out: feed::Out<'scope>,
    shared: &'scope prefetch::Shared,
    progress: &'scope Progress,
    following: usize,
) {
    let (item_tx, item_rx) = crossbeam_channel::bounded::<Vec<prefetch::Item>>(if following > 0 {
        JOB_QUEUE / prefetch::BATCH
    } else {
        0
    });
    scope.spawn(move || {
        let start = move || {
            for _ in 0..following {
                let item_rx = item_rx.clone();
                scope.spawn(move || prefetch::prefetch(item_rx, shared, progress));
            }
        };
        let items = (following > 0).then_some(feed::Prefetchers {
            shared,
            batches: item_tx,
            start: &start,
        });
        feed::feed(options, operands, disks, items, out, progress)
    });
}

/// The collector, on the caller's thread: the records to `sink` in the
/// run's order. With `drop_cold`, the files found cold are dropped from
/// the page cache once their record is out (hashed), on a thread of their
/// own.
pub(super) fn collect<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    options: &TreeOptions,
    results: Receiver<Records>,
    backlog: &Backlog,
    shared: &prefetch::Shared,
    sink: &mut impl Sink,
) {
    let stopped = || options.walk.stopped();
    if !options.drop_cold {
        return reorder::collect(options.order, results, backlog, stopped, sink);
    }
    let (drop_tx, drop_rx) = crossbeam_channel::unbounded::<PathBuf>();
    scope.spawn(move || {
        drop_rx
            .into_iter()
            .for_each(|p| fs::residency::drop_cached(&p))
    });
    let mut sink = prefetch::DroppingSink {
        inner: sink,
        shared,
        paths: drop_tx,
    };
    reorder::collect(options.order, results, backlog, stopped, &mut sink);
}
