//! What one read says against the cache's record: verified, corrupted,
//! changed, new or on another file system, and the entry to record. A
//! recorded digest is replaced only when the stamp says the file was
//! written, or the file system is another.

use std::path::{Path, PathBuf};

use super::Finding;
use crate::cache::{Entry, NewEntry};
use crate::digest::Digest;
use crate::fs::{FileStamp, FsId};
use crate::pipeline::Outcome;

/// One file on its way: where it is, its stamp when walked, and what the
/// cache holds for it.
pub(super) struct Pending {
    pub(super) path: PathBuf,
    pub(super) absolute: PathBuf,
    pub(super) entry: Option<Entry>,
}

/// A read's finding, and the entry to record (all but a corrupted file's
/// and a failure's).
pub(super) fn judge(pending: &Pending, outcome: Option<Outcome>) -> (Finding, Option<NewEntry>) {
    let hashed = match outcome {
        Some(Outcome::Hashed(hashed)) => hashed,
        Some(Outcome::Failed(kind) | Outcome::WalkFailed(kind)) => {
            return (Finding::Failed(kind.to_string()), None)
        }
        _ => return (Finding::Failed("not a regular file".into()), None),
    };
    let Some(stamp) = hashed.stamp else {
        return (Finding::Failed("not a regular file".into()), None);
    };
    // Asked per file, not per device: a scrub reads every file anyway.
    let fs = FsId::of_path(&pending.path);
    let entry = NewEntry {
        path: pending.absolute.clone(),
        stamp,
        fs,
        digest: hashed.digest,
    };
    let finding = match &pending.entry {
        None => Finding::New,
        // Same stamp or not, another file: its bytes prove nothing of the
        // recorded file's.
        Some(recorded) if recorded.fs != fs => Finding::OtherFileSystem,
        Some(recorded) => match answer(recorded, &stamp) {
            None => Finding::Changed,
            Some(digest) if digest == hashed.digest => Finding::Verified,
            Some(digest) => {
                let corrupted = Finding::Corrupted {
                    recorded: digest,
                    actual: hashed.digest,
                };
                return (corrupted, None);
            }
        },
    };
    (finding, Some(entry))
}

/// The recorded digest that the file under `now`, on the file system it
/// was recorded on, must still have: the entry's answer, or, where `now`
/// is the recorded stamp but for the device number, the same file on that
/// file system mounted again, whose bytes are compared with the record
/// rather than recorded anew. (Another file system with a file of the
/// same inode, size, mtime and ctime to the nanosecond is common: images
/// made alike; [`judge`] never gets here for one.)
fn answer(recorded: &Entry, now: &FileStamp) -> Option<Digest> {
    recorded.answer_for(now, recorded.fs).or_else(|| {
        let settled = recorded.stamp.is_settled_at(recorded.hashed_at_ns);
        (now.is_remount_of(&recorded.stamp) && settled).then_some(recorded.digest)
    })
}

/// Whether the file at `path` is as `entry` recorded it, by one stat (no
/// read): its stamp, on the same file system.
pub(super) fn unchanged(entry: &Entry, path: &Path) -> bool {
    let stamp = std::fs::symlink_metadata(path).map(|m| FileStamp::of(&m));
    stamp.is_ok_and(|s| entry.answer_for(&s, FsId::of_path(path)).is_some())
}

/// Whether an entry verified at `hashed_at_ns` was verified within `due`
/// of a scrub started at `started_ns`. A time after the start (recorded
/// under a clock set ahead, since put right) is not a recent verification:
/// read as a negative age, it made every such file "not due" until the
/// clock caught up with it, years on for a clock set to 2038.
pub(super) fn verified_within(
    hashed_at_ns: i64,
    started_ns: i64,
    due: std::time::Duration,
) -> bool {
    let age = started_ns
        .checked_sub(hashed_at_ns)
        .and_then(|a| u128::try_from(a).ok());
    age.is_some_and(|age| age < due.as_nanos())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn only_a_past_verification_within_the_period_is_recent() {
        let (now, day) = (1_800_000_000_000_000_000_i64, 86_400_000_000_000_i64);
        let month = Duration::from_secs(30 * 86_400);
        assert!(super::verified_within(now - day, now, month));
        assert!(super::verified_within(now, now, month));
        assert!(!super::verified_within(now - 31 * day, now, month));
        // Recorded under a clock set ahead: due, not recent.
        assert!(!super::verified_within(now + day, now, month));
        assert!(!super::verified_within(i64::MAX, now, month));
        assert!(!super::verified_within(i64::MIN, now, month));
    }
}
