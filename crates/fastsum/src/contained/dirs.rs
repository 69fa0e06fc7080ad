//! `contained --dirs`: the directories of the sources that could go
//! whole. A directory is listed when every entry below it (recursively)
//! is a contained file or a directory, and at least one file is: one file
//! not contained, one with a problem (unreadable, changed while read), one
//! symbolic link or special file (which no archive holds: it is no file's
//! bytes), or a directory that could not be read, anywhere below, and it
//! is never listed. Only the topmost of such directories are listed (a
//! listed directory's sub-directories are whole too), largest first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::ContainedReport;

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
        mark(&v.path, v.copy.as_ref().map(|_| v.stamp.size), false);
    }
    for s in &report.skipped {
        mark(&s.path, None, false);
    }
    for p in &report.problems {
        // A directory that could not be read spoils itself too.
        mark(&p.path, None, true);
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
