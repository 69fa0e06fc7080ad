//! A scrub against a manifest that carries stamps (`fastsum -r --json
//! --stamps`) instead of the cache: each listed file is read again,
//! verified, and if its stamp (size, inode, device, mtime and ctime to the
//! nanosecond) is still the listed one, a digest that differs is
//! corruption. A file whose stamp moved was modified normally ("changed");
//! one listed without a stamp cannot be judged ("unstamped", not read);
//! one that is gone or not a regular file now could not be read. The list is
//! only read, never written (`fastsum -r --update` brings it up to date).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{reading_hasher, Finding, ScrubOptions, ScrubSummary};
use crate::error::Result;
use crate::fs::{name, FileStamp};
use crate::manifest::read::{Manifest, ManifestEntry};
use crate::pipeline::{Outcome, TreeOptions};
use crate::read::Pace;
use crate::stage::Source;

/// Whether two stamps are one version of one file (the kind aside: a
/// list's stamps are of regular files). The device number is not
/// compared: the same file on a file system mounted again (another loop
/// device, a USB disk under another name) has the same inode, size and
/// times to the nanosecond and another device, and its bytes must be
/// compared with the list, not called "changed".
fn same(a: &FileStamp, b: &FileStamp) -> bool {
    a.is_remount_of(&FileStamp { kind: a.kind, ..*b })
}

impl ScrubOptions {
    /// Scrubs the files `manifest` lists (of the options' algorithm) against
    /// their listed stamps and digests, handing each finding to `sink` in the
    /// list's order. One verified run reads every stamped file (a file whose
    /// stamp moved is read too, and found changed by the stamp its read was
    /// verified under). `walk`, `resume` and `older_than` do not
    /// apply. Errors: the run could not start.
    pub fn scrub_manifest(
        &self,
        manifest: &Manifest,
        sink: &mut dyn FnMut(&Path, &Finding),
    ) -> Result<ScrubSummary> {
        scrub_manifest(manifest, self, sink)
    }
}

/// [`ScrubOptions::scrub_manifest`].
fn scrub_manifest(
    manifest: &Manifest,
    options: &ScrubOptions,
    sink: &mut dyn FnMut(&Path, &Finding),
) -> Result<ScrubSummary> {
    let pace = options.limit_rate.map(|rate| Arc::new(Pace::new(rate)));
    let mut summary = ScrubSummary::default();
    let entries = &manifest.entries;
    // The stamped entries are the run's operands, by their place in the list.
    let stamped: Vec<(usize, &ManifestEntry)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.stamp.is_some())
        .collect();
    let operands: Vec<Source> = stamped
        .iter()
        .map(|(_, e)| Source::Path(name::path(&e.path).into_owned()))
        .collect();
    let mut next = 0; // the next entry to say
    let mut tree = TreeOptions::new();
    // A list's paths: a FIFO or device there is refused, never waited on
    // or read without end.
    tree.listed = true;
    let hasher = reading_hasher(options, pace, tree);
    // The file systems met, asked once per device (a statfs and a stat a
    // file cost as much again as a cached run's stats).
    let mut ids = crate::fs::FsIds::default();
    hasher.run(&operands, |record| {
        let Some(&(at, listed)) = stamped.get(record.operand) else {
            return;
        };
        unstamped(entries, &mut next, at, &mut summary, sink);
        let finding = judge(listed, &record.path, record.outcome, &mut ids, &mut summary);
        summary.count(&finding);
        sink(&record.path, &finding);
        next = at + 1;
    })?;
    let stop = options.stop.as_ref();
    summary.interrupted = stop.is_some_and(|s| s.load(Ordering::Relaxed));
    if !summary.interrupted {
        unstamped(entries, &mut next, entries.len(), &mut summary, sink);
    }
    Ok(summary)
}

/// Says the entries from `next` to `end` (unstamped: not read), and
/// moves `next` past them.
fn unstamped(
    entries: &[ManifestEntry],
    next: &mut usize,
    end: usize,
    summary: &mut ScrubSummary,
    sink: &mut dyn FnMut(&Path, &Finding),
) {
    for entry in entries.get(*next..end).unwrap_or_default() {
        summary.count(&Finding::Unstamped);
        sink(&name::path(&entry.path), &Finding::Unstamped);
    }
    *next = (*next).max(end);
}

/// What a listed file's read says against its listed stamp, file system
/// and digest. A stamp taken on another file system than the file's now
/// (the list's `"fsid"`; a list without one is judged by the stamp
/// alone, as before) says nothing of these bytes: another file system,
/// never corrupted (the cache's rule, `fs::identity`).
fn judge(
    listed: &ManifestEntry,
    path: &Path,
    outcome: Outcome,
    ids: &mut crate::fs::FsIds,
    summary: &mut ScrubSummary,
) -> Finding {
    let Some(stamp) = listed.stamp.as_deref().copied() else {
        return Finding::Unstamped;
    };
    let mut elsewhere =
        |now: &FileStamp| listed.fsid != 0 && ids.of(now.dev, path).0 != listed.fsid;
    match outcome {
        Outcome::Hashed(hashed) => {
            summary.bytes_read += hashed.size;
            match hashed.stamp {
                Some(now) if !same(&now, &stamp) => Finding::Changed,
                Some(now) if elsewhere(&now) => Finding::OtherFileSystem,
                Some(_) if hashed.digest == listed.digest => Finding::Verified,
                Some(_) => Finding::Corrupted {
                    recorded: listed.digest,
                    actual: hashed.digest,
                },
                None => Finding::Failed("not a regular file".into()),
            }
        }
        Outcome::Failed(kind) | Outcome::WalkFailed(kind) => Finding::Failed(kind.to_string()),
        _ => Finding::Failed("not a regular file".into()),
    }
}
