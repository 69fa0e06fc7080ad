//! How far the feeder may number ahead of the collector: finished records
//! wait in the collector for an earlier one still being hashed, so without
//! a bound one slow file (or a large directory's cache row being loaded)
//! let the other workers pile up records behind it, and the peak memory
//! followed the tree (the reorder buffer was the largest single
//! allocation of a cached re-run over 1M files, 23 MB).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Records numbered and not handed out yet, at most: about 200 bytes each
/// when they wait in the collector, so ~13 MB at worst. Twice the feeder's
/// inode window (a rotational disk's files sorted a window at a time).
pub(super) const BACKLOG: u64 = 64 * 1024;

/// The collector's count of records handed out, which the feeder waits on.
pub(super) struct Backlog {
    /// Off with `--unordered`: records are handed out as they come.
    bounded: bool,
    handed_out: AtomicU64,
    feeder_waits: AtomicBool,
    lock: Mutex<()>,
    moved: Condvar,
}

impl Backlog {
    pub(super) fn new(bounded: bool) -> Self {
        Backlog {
            bounded,
            handed_out: AtomicU64::new(0),
            feeder_waits: AtomicBool::new(false),
            lock: Mutex::new(()),
            moved: Condvar::new(),
        }
    }

    fn admits(&self, seq: u64) -> bool {
        seq < self
            .handed_out
            .load(Ordering::SeqCst)
            .saturating_add(BACKLOG)
    }

    /// The feeder, about to number `seq`: waits until the collector is
    /// within [`BACKLOG`] of it. `before_waiting` sends on whatever the
    /// feeder holds back (every number below `seq` must be on its way, or
    /// the collector could wait on the feeder that waits on it).
    pub(super) fn admit(&self, seq: u64, before_waiting: impl FnOnce()) {
        if !self.bounded || self.admits(seq) {
            return;
        }
        before_waiting();
        let mut guard = self.lock.lock().expect("not poisoned");
        loop {
            self.feeder_waits.store(true, Ordering::SeqCst);
            if self.admits(seq) {
                break;
            }
            // The timeout is a second guard: a wake-up is never needed
            // for progress, only for speed.
            guard = (self.moved)
                .wait_timeout(guard, Duration::from_millis(20))
                .expect("not poisoned")
                .0;
        }
        self.feeder_waits.store(false, Ordering::SeqCst);
    }

    /// The collector has gone (the records ended, or the run was told to
    /// stop): the feeder never waits again.
    pub(super) fn close(&self) {
        self.handed_out(u64::MAX);
    }

    /// The collector has handed out `count` records in all.
    pub(super) fn handed_out(&self, count: u64) {
        self.handed_out.store(count, Ordering::SeqCst);
        if self.feeder_waits.load(Ordering::SeqCst) {
            let _guard = self.lock.lock().expect("not poisoned");
            self.moved.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feeder_waits_for_the_collector_and_sends_what_it_holds_first() {
        let backlog = Backlog::new(true);
        let mut flushed = false;
        backlog.admit(BACKLOG - 1, || flushed = true);
        assert!(!flushed, "within the backlog: no wait");
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let mut flushed = false;
                backlog.admit(BACKLOG + 10, || flushed = true);
                flushed
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(!waiter.is_finished(), "admitted {BACKLOG} ahead");
            backlog.handed_out(11);
            assert!(waiter.join().unwrap(), "held jobs sent before waiting");
        });
        let unbounded = Backlog::new(false);
        unbounded.admit(10 * BACKLOG, || panic!("never waits"));
    }

    #[test]
    fn a_closed_backlog_lets_a_waiting_feeder_go_for_good() {
        let backlog = Backlog::new(true);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| backlog.admit(3 * BACKLOG, || {}));
            std::thread::sleep(Duration::from_millis(50));
            assert!(!waiter.is_finished(), "nothing handed out yet");
            backlog.close();
            waiter.join().unwrap();
        });
        backlog.admit(u64::MAX - 1, || panic!("a closed backlog never waits"));
    }
}
