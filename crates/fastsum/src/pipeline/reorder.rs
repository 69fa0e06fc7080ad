//! The collector: records back in the feeder's numbering, each handed on
//! as soon as it is next.

use std::collections::VecDeque;

use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::backlog::Backlog;
use super::{Order, Record, Records, Sink};

/// How long the collector waits for the next batch before it tells the
/// sink the run is idle. Under load batches come faster than this, so a
/// printer writes in large blocks (100,000 small files: 180 writes instead
/// of 1,521 with a flush at every pause); a line waits at most this long
/// for its reader.
const IDLE_AFTER: Duration = Duration::from_millis(2);

/// The next batch of records: at once if one is in, or soon; else after
/// telling `sink` the run is idle (so that a printer flushes what it holds
/// while the workers hash), then waiting. `None` when every sender is done.
fn next_batch(results: &Receiver<Records>, sink: &mut impl Sink) -> Option<Records> {
    match results.recv_timeout(IDLE_AFTER) {
        Ok(records) => Some(records),
        Err(RecvTimeoutError::Disconnected) => None,
        Err(RecvTimeoutError::Timeout) => {
            sink.idle();
            results.recv().ok()
        }
    }
}

/// The collector: hands records to `sink` in `order`, telling `backlog`
/// how far it got, until the records end or `stopped` says the run was
/// told to stop. A stopped run hands out nothing more, even records that
/// are already in (on a fast machine a small tree is hashed whole before
/// the sink sees its first record); dropping `results` then ends the
/// workers, and the backlog is closed so the feeder never waits on a
/// collector that has gone.
pub(super) fn collect(
    order: Order,
    results: Receiver<Records>,
    backlog: &Backlog,
    stopped: impl Fn() -> bool,
    sink: &mut impl Sink,
) {
    hand_out(order, results, backlog, stopped, sink);
    backlog.close();
}

fn hand_out(
    order: Order,
    results: Receiver<Records>,
    backlog: &Backlog,
    stopped: impl Fn() -> bool,
    sink: &mut impl Sink,
) {
    if order == Order::Unordered {
        while let Some(records) = next_batch(&results, sink) {
            for record in records {
                sink.record(record);
                if stopped() {
                    return;
                }
            }
        }
        return;
    }
    // waiting[i] is the record numbered next + i, if it is in.
    let mut next = 0u64;
    let mut waiting: VecDeque<Option<Record>> = VecDeque::new();
    while let Some(records) = next_batch(&results, sink) {
        for record in records {
            let place = usize::try_from(record.seq - next).expect("a place in memory");
            if waiting.len() <= place {
                waiting.resize_with(place + 1, || None);
            }
            waiting[place] = Some(record);
        }
        while let Some(Some(_)) = waiting.front() {
            let record = waiting.pop_front().flatten().expect("front is in");
            sink.record(record);
            next += 1;
            if stopped() {
                return;
            }
        }
        backlog.handed_out(next);
    }
    // Every number is used once, so nothing is left; should a record be
    // missing, the rest still go out in order.
    for record in waiting.into_iter().flatten() {
        sink.record(record);
        if stopped() {
            return;
        }
    }
}
