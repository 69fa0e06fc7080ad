//! `contained --dirs`: the directories of the sources that could go
//! whole. A directory is listed when every entry below it (recursively)
//! is a contained file or a directory, and at least one file is: one file
//! not contained, one with a problem (unreadable, changed while read), one
//! symbolic link or special file (which no archive holds: it is no file's
//! bytes), or a directory that could not be read, anywhere below, and it
//! is never listed. Only the topmost of such directories are listed (a
//! listed directory's sub-directories are whole too), largest first.
//! Each directory that looks whole is read again with nothing left out:
//! an entry an exclude hid, or a mount point the walk did not cross
//! (`--one-file-system`), spoils it too, as does a source that overlaps
//! an archive tree (the whole listing is refused: its copies could be
//! its own files). A file counts only if `--remove` could take it with
//! its copy kept ([`could_go`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::{ArchiveCopy, ContainedReport, Verdict};
use crate::dupes::Member;

/// A directory whose every file is contained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WholeDirectory {
    /// The directory, as walked from its source.
    pub path: PathBuf,
    /// The files below it.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// What is below a directory so far.
#[derive(Default)]
struct Below {
    files: u64,
    bytes: u64,
    /// Something below is not a contained file.
    spoilt: bool,
}

/// [`ContainedReport::whole_directories`].
pub(super) fn whole_directories(report: &ContainedReport) -> Vec<WholeDirectory> {
    let roots: Vec<&Path> = report
        .sources
        .iter()
        .filter(|s| s.is_dir())
        .map(PathBuf::as_path)
        .collect();
    let mut dirs: HashMap<PathBuf, Below> = HashMap::new();
    let mut mark = |path: &Path, contained: Option<u64>, itself: bool| {
        let Some(root) = roots.iter().find(|r| path.starts_with(r)) else {
            return;
        };
        let first = if itself { Some(path) } else { path.parent() };
        for dir in std::iter::successors(first, |d| d.parent()) {
            if !dir.starts_with(root) {
                break;
            }
            let below = dirs.entry(dir.to_path_buf()).or_default();
            match contained {
                Some(size) => {
                    below.files += 1;
                    below.bytes += size;
                }
                None => below.spoilt = true,
            }
        }
    };
    for v in &report.verdicts {
        let could_go = v.copy.as_ref().is_some_and(|c| could_go(report, v, c));
        mark(&v.path, could_go.then_some(v.stamp.size), false);
    }
    for s in &report.skipped {
        mark(&s.path, None, false);
    }
    for p in &report.problems {
        // A directory that could not be read spoils itself too.
        mark(&p.path, None, true);
    }
    // What the walk did not see (left out by an exclude, on another file
    // system under --one-file-system) is no contained file: each
    // directory that looks whole is listed again, raw, and one holding
    // anything else spoils itself and every directory above it.
    let contained: HashSet<&Path> = report
        .verdicts
        .iter()
        .filter(|v| v.copy.as_ref().is_some_and(|c| could_go(report, v, c)))
        .map(|v| v.path.as_path())
        .collect();
    let looks_whole: Vec<PathBuf> = dirs
        .iter()
        .filter(|(_, b)| !b.spoilt && b.files > 0)
        .map(|(d, _)| d.clone())
        .collect();
    for dir in looks_whole {
        if holds_only(&dir, &contained, &dirs) {
            continue;
        }
        let root = roots.iter().find(|r| dir.starts_with(r));
        for up in std::iter::successors(Some(dir.as_path()), |d| d.parent()) {
            if !root.is_some_and(|r| up.starts_with(r)) {
                break;
            }
            if let Some(below) = dirs.get_mut(up) {
                below.spoilt = true;
            }
        }
    }
    let whole = |d: &Path| dirs.get(d).is_some_and(|b| !b.spoilt && b.files > 0);
    let mut listed: Vec<WholeDirectory> = dirs
        .iter()
        .filter(|(d, _)| whole(d))
        .filter(|(d, _)| {
            // Topmost: its parent, within its source, is not whole.
            let root = roots.iter().find(|r| d.starts_with(r));
            !d.parent()
                .is_some_and(|p| root.is_some_and(|r| p.starts_with(r)) && whole(p))
        })
        .map(|(d, b)| WholeDirectory {
            path: d.clone(),
            files: b.files,
            bytes: b.bytes,
        })
        .collect();
    listed.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.path.cmp(&b.path)));
    listed
}

/// Whether every entry of `dir`, read again with nothing left out, is a
/// contained file or a directory the walk saw (or one it did not see that
/// is empty, on `dir`'s file system).
fn holds_only(dir: &Path, contained: &HashSet<&Path>, walked: &HashMap<PathBuf, Below>) -> bool {
    let dev = |m: &std::fs::Metadata| crate::fs::FileStamp::of(m).dev;
    let Ok(here) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else {
            return false;
        };
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return false;
        };
        let fine = if meta.is_dir() {
            dev(&meta) == dev(&here)
                && match walked.contains_key(&path) {
                    true => true,
                    false => std::fs::read_dir(&path).is_ok_and(|mut e| e.next().is_none()),
                }
        } else {
            meta.is_file() && contained.contains(path.as_path())
        };
        if !fine {
            return false;
        }
    }
    true
}

/// Whether a contained file could go with its archive copy kept: not when
/// the copy is its own inode (a hard link, or the one file seen again
/// through a bind mount: which it is cannot always be told), nor where
/// `--remove` would refuse to act on it (a real path outside the sources,
/// a layer of an overlay, one side seen through an overlay). A manifest's
/// entry is not on this machine: its word stands.
fn could_go(report: &ContainedReport, v: &Verdict, copy: &ArchiveCopy) -> bool {
    let Some(stamp) = copy.stamp else {
        return true;
    };
    if stamp.id() == v.stamp.id() {
        return false;
    }
    let member = Member {
        path: v.path.clone(),
        stamp: v.stamp,
    };
    let kept = Member {
        path: copy.path.clone(),
        stamp,
    };
    report.scope.refuses(&member, &kept).is_none()
}
