//! What one read says against the cache's record: verified, corrupted,
//! changed or new, and the entry to record. A recorded digest is replaced
//! only when the stamp says the file was written.

use std::path::PathBuf;

use super::Finding;
use crate::cache::{Entry, NewEntry};
use crate::digest::Digest;
use crate::fs::FileStamp;
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
    let entry = NewEntry {
        path: pending.absolute.clone(),
        stamp,
        digest: hashed.digest,
    };
    let finding = match &pending.entry {
        None => Finding::New,
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

/// The recorded digest that the file under `now` must still have: the
/// entry's answer, or, where `now` is the recorded stamp but for the
/// device number, the same file on a file system mounted again, whose
/// bytes are compared with the record rather than recorded anew (a
/// different filesystem with a file of the same inode, size, mtime and
/// ctime to the nanosecond is not a case to plan for).
fn answer(recorded: &Entry, now: &FileStamp) -> Option<Digest> {
    recorded.answer_for(now).or_else(|| {
        let settled = recorded.stamp.is_settled_at(recorded.hashed_at_ns);
        (now.is_remount_of(&recorded.stamp) && settled).then_some(recorded.digest)
    })
}
