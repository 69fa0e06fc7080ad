//! What a scrub says: each file's finding, and the run's counts.

use crate::digest::Digest;

/// What the scrub found for one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Same stamp, same digest.
    Verified,
    /// Same stamp, another digest: the bytes changed behind the file
    /// system's back.
    Corrupted {
        /// The digest recorded.
        recorded: Digest,
        /// The digest of the bytes now.
        actual: Digest,
    },
    /// The stamp changed since it was recorded (or the entry was racy): a
    /// normal modification, recorded again.
    Changed,
    /// Not in the cache: recorded now.
    New,
    /// Recorded on another file system than the one the file is on now
    /// (another image mounted in its place, whatever its stamp): another
    /// file, not compared, recorded now.
    OtherFileSystem,
    /// Verified within `older_than` and unchanged: not read.
    NotDue,
    /// Could not be read (or changed while it was read).
    Failed(String),
    /// Listed without a stamp (`scrub_manifest`): nothing to judge it by.
    Unstamped,
}

/// What a scrub did, in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScrubSummary {
    /// Files verified.
    pub verified: u64,
    /// Files corrupted.
    pub corrupted: u64,
    /// Files modified normally since recorded.
    pub changed: u64,
    /// Files not recorded before.
    pub new: u64,
    /// Files recorded on another file system.
    pub other_file_system: u64,
    /// Files not due.
    pub not_due: u64,
    /// Files (and directories) that could not be read.
    pub failed: u64,
    /// Files listed without a stamp (`scrub_manifest`), not read.
    pub unstamped: u64,
    /// Files passed over because an earlier scrub had verified them
    /// (`resume`).
    pub resumed_past: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Whether it stopped before the end (`stop`): `resume` goes on.
    pub interrupted: bool,
    /// Nothing under the roots was recorded in the scrub's algorithm, and
    /// the cache holds entries there in these: the scrub verified nothing
    /// (every file was new), and its algorithm is likely not the one the
    /// recording runs used.
    pub recorded_in_others: Vec<crate::algo::Algorithm>,
}

impl ScrubSummary {
    /// Counts one finding.
    pub(super) fn count(&mut self, finding: &Finding) {
        match finding {
            Finding::Verified => self.verified += 1,
            Finding::Corrupted { .. } => self.corrupted += 1,
            Finding::Changed => self.changed += 1,
            Finding::New => self.new += 1,
            Finding::OtherFileSystem => self.other_file_system += 1,
            Finding::NotDue => self.not_due += 1,
            Finding::Failed(_) => self.failed += 1,
            Finding::Unstamped => self.unstamped += 1,
        }
    }
}
