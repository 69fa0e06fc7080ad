//! The feeder: operands to jobs, directories walked, everything numbered
//! in output order.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_channel::Sender;

use super::{Order, Outcome, Progress, Record, Records, TreeOptions};
use crate::stage::{Job, Source};
use crate::walk::{self, WalkItem};

/// The feeder: turns operands into jobs, walking directories, and numbers
/// every job and walk record in output order.
pub(super) fn feed(
    options: &TreeOptions,
    operands: &[Source],
    jobs: Sender<Job>,
    results: Sender<Records>,
    progress: &Progress,
) {
    let next_seq = AtomicU64::new(0);
    for (index, operand) in operands.iter().enumerate() {
        let path = match operand {
            Source::Path(path) if options.recursive && path.is_dir() => path,
            _ => {
                progress.files_found.fetch_add(1, Ordering::Relaxed);
                let seq = next_seq.fetch_add(1, Ordering::Relaxed);
                let job = Job::new(index, seq, operand.clone());
                let _ = jobs.send(job);
                continue;
            }
        };
        let sink = |item: WalkItem| {
            let seq = next_seq.fetch_add(1, Ordering::Relaxed);
            let (path, outcome) = match item {
                WalkItem::File { path } => {
                    progress.files_found.fetch_add(1, Ordering::Relaxed);
                    let job = Job::new(index, seq, Source::Path(path));
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
    progress.walk_done.store(true, Ordering::Release);
}
