//! The collector: records back in the feeder's numbering, each handed on
//! as soon as it is next.

use std::collections::VecDeque;

use crossbeam_channel::Receiver;

use super::{Order, Record, Records};

/// The collector: hands records to `sink` in `order`.
pub(super) fn collect(order: Order, results: Receiver<Records>, sink: &mut impl FnMut(Record)) {
    if order == Order::Unordered {
        for records in results {
            records.into_iter().for_each(&mut *sink);
        }
        return;
    }
    // waiting[i] is the record numbered next + i, if it is in.
    let mut next = 0u64;
    let mut waiting: VecDeque<Option<Record>> = VecDeque::new();
    for records in results {
        for record in records {
            let place = usize::try_from(record.seq - next).expect("a place in memory");
            if waiting.len() <= place {
                waiting.resize_with(place + 1, || None);
            }
            waiting[place] = Some(record);
        }
        while let Some(Some(_)) = waiting.front() {
            let record = waiting.pop_front().flatten().expect("front is in");
            sink(record);
            next += 1;
        }
    }
    // Every number is used once, so nothing is left; should a record be
    // missing, the rest still go out in order.
    waiting.into_iter().flatten().for_each(&mut *sink);
}
