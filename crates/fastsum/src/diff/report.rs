//! What a diff reports: changes (by kind, with each side's entry),
//! problems, and the totals.

use std::path::{Path, PathBuf};

use crate::digest::Digest;

/// What a change is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// Only on the new side.
    Added,
    /// The same key, other bytes.
    Modified,
    /// A removed and an added entry with the same bytes.
    Moved,
    /// Only on the old side.
    Removed,
    /// A file on one side, a symlink on the other.
    Typechange,
    /// The same bytes (listed only when asked for).
    Unchanged,
    /// The same size, and no digest of the other side's bytes to be had
    /// (an S3 object whose ETag is opaque): never called unchanged.
    Unverifiable,
}

impl ChangeKind {
    /// Its name (`added`, `moved` ...), as `--json` and `changes/EXPECTED` say it.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Moved => "moved",
            ChangeKind::Removed => "removed",
            ChangeKind::Typechange => "typechange",
            ChangeKind::Unchanged => "unchanged",
            ChangeKind::Unverifiable => "unverifiable",
        }
    }

    /// `git diff --name-status`'s letter.
    pub fn letter(self) -> char {
        match self {
            ChangeKind::Added => 'A',
            ChangeKind::Modified => 'M',
            ChangeKind::Moved => 'R',
            ChangeKind::Removed => 'D',
            ChangeKind::Typechange => 'T',
            ChangeKind::Unchanged => '=',
            ChangeKind::Unverifiable => '?',
        }
    }
}

/// A file, a symlink or a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A symbolic link (its content is its target).
    Symlink,
    /// A directory (two local trees only: its path ends in `/`; it is the
    /// same on both sides when both have it, whatever it holds).
    Directory,
}

/// One side of a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The path relative to the side's root (bytes as on disk).
    pub path: PathBuf,
    /// File or symlink.
    pub kind: EntryKind,
    /// Its size, where known.
    pub size: Option<u64>,
    /// Its digest, where one was taken or listed.
    pub digest: Option<Digest>,
}

/// One change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// What happened.
    pub kind: ChangeKind,
    /// The old side's entry (none for an addition).
    pub old: Option<Entry>,
    /// The new side's entry (none for a removal).
    pub new: Option<Entry>,
}

impl Change {
    /// The path it sorts by: the old one, or the new one for an addition.
    pub fn sort_path(&self) -> &Path {
        self.old
            .as_ref()
            .or(self.new.as_ref())
            .map_or(Path::new(""), |e| e.path.as_path())
    }
}

/// What `diff` reports.
// One event at a time, handed straight to the caller's sink: boxing each
// change would cost an allocation per compared path. (Windows' paths are
// wider, which is where the lint's threshold is crossed.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum DiffEvent {
    /// A change (or, with `all`, an unchanged entry), in path order.
    Change(Change),
    /// Something that could not be compared: a path and why. The rest of
    /// the comparison is still done.
    Problem {
        /// The path (a file, or the manifest).
        path: PathBuf,
        /// Why.
        error: String,
    },
    /// An entry of a tree the comparison left out, and what it is: a
    /// FIFO, socket or device (no bytes to compare), or a symbolic link
    /// against a side that lists regular files only. Nothing is left out
    /// without one of these (a plan lists them).
    LeftOut {
        /// The entry's path, relative to its side's root (as a change's).
        path: PathBuf,
        /// What it is ("fifo", "socket", "character special file", "block
        /// special file", "symbolic link").
        what: &'static str,
    },
    /// A remote side was hashed on its host by this method.
    RemoteMethod {
        /// The side, `host:path`.
        operand: String,
        /// The method that ran there.
        method: crate::remote::Method,
        /// Whether that was the fastsum uploaded for this run.
        uploaded: bool,
        /// Why `--upload-self` could not send it (another method ran).
        upload_failed: Option<String>,
    },
}

/// The totals of a diff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiffSummary {
    /// Changes by kind: added, modified, moved, removed, typechange.
    pub added: u64,
    /// Modified entries.
    pub modified: u64,
    /// Moved entries.
    pub moved: u64,
    /// Removed entries.
    pub removed: u64,
    /// Typechanges.
    pub typechanges: u64,
    /// Entries with the same content.
    pub unchanged: u64,
    /// Entries whose sameness could not be verified (S3 objects with an
    /// opaque digest): counted as changes.
    pub unverifiable: u64,
    /// Problems reported.
    pub problems: u64,
    /// Symbolic links left out: a tree's against a manifest or a remote
    /// side, and those a remote side's listing left out.
    pub symlinks_left_out: u64,
    /// FIFOs, sockets and devices left out of a tree (each also a
    /// [`DiffEvent::LeftOut`]).
    pub specials_left_out: u64,
    /// Bytes of the new side's added and modified files, where known.
    pub bytes_changed: u64,
    /// Added and modified files whose size the new side did not give (a
    /// remote method without sizes, a manifest): not in `bytes_changed`.
    pub sizes_unknown: u64,
}

impl DiffSummary {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.added
            + self.modified
            + self.moved
            + self.removed
            + self.typechanges
            + self.unverifiable
            > 0
    }
}
