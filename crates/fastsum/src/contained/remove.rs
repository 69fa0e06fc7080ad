//! `contained --remove`: each contained source file removed, with the
//! guarantees of `dupes`' actions (`dupes/actions.rs`, whose code this
//! calls): the scope (under the sources' real paths, no symbolic link,
//! no overlay's layer) asked before each file, in a dry run too; both
//! stamps taken again (the source file's and its archive copy's: either
//! changed since the scan leaves the file); the bytes compared with the
//! copy just before, the stamps again after; the removal through the
//! file's held directory. On top of that, what only `contained` meets:
//!
//! * every archive must be a directory: a manifest vouches for bytes it
//!   does not hold (the copy it names may be gone or changed), so
//!   nothing is removed on its word;
//! * no source may be, hold or lie in an archive (by real path, and by
//!   device and inode up the directories, which sees a bind mount), nor
//!   share a directory with one (by device and inode, anywhere below:
//!   an archive bind-mounted inside a source): a removal there could
//!   take the very copy that makes it safe;
//! * a source path that is its archive copy's inode (a hard link) is
//!   removed: the archive still names the inode, so its bytes stay; but
//!   a source path that is the archive copy's very directory entry (one
//!   entry seen by two paths: a bind mount below the operands) never is.

use std::path::{Path, PathBuf};

use super::{Archive, ContainedReport};
use crate::dupes::actions::{
    act_on, decided_before_acting, restamp_if_only_ctime_moved, same_entry, Acted, Action,
    ActionOutcome,
};
use crate::dupes::Member;
use crate::fs::FileId;

/// [`ContainedReport::remove`].
pub(super) fn remove(
    report: &ContainedReport,
    dry_run: bool,
    out: &mut dyn FnMut(Acted),
) -> Result<(), String> {
    refused(&report.sources, &report.archives)?;
    // Inodes whose ctime our own removals moved (a link count changed).
    let mut touched: Vec<FileId> = Vec::new();
    for verdict in &report.verdicts {
        let Some(copy) = &verdict.copy else {
            continue;
        };
        let Some(stamp) = copy.stamp else {
            return Err("an archive copy without a stamp (not a directory's file)".into());
        };
        let mut member = Member {
            path: verdict.path.clone(),
            stamp: verdict.stamp,
        };
        let mut kept = Member {
            path: copy.path.clone(),
            stamp,
        };
        let outcome =
            if member.id() == kept.id() && same_entry(&member.path, &kept.path) != Some(false) {
                ActionOutcome::SameEntry(kept.path.clone())
            } else if let Some(outcome) =
                decided_before_acting(&member, &kept, &report.scope, Action::Remove, dry_run)
            {
                outcome
            } else {
                for m in [&mut member, &mut kept] {
                    if touched.contains(&m.id()) {
                        restamp_if_only_ctime_moved(m);
                    }
                }
                let outcome = act_on(
                    &member,
                    &kept,
                    &report.scope,
                    Action::Remove,
                    &mut |_, _| {},
                );
                if outcome == ActionOutcome::Done {
                    touched.push(member.id());
                }
                outcome
            };
        out(Acted {
            action: Action::Remove,
            member: member.path,
            kept: kept.path,
            outcome,
        });
    }
    Ok(())
}

/// Why nothing may be removed at all, if so.
pub(super) fn refused(sources: &[PathBuf], archives: &[Archive]) -> Result<(), String> {
    let show = |p: &Path| crate::escape::display_path(p);
    for archive in archives {
        match archive {
            Archive::Tree(_) => {}
            Archive::Manifest(list) => {
                return Err(format!(
                    "{} is a manifest: a list vouches for bytes it does not hold, so nothing \
                     is removed on its word (give the archive's directory)",
                    show(list)
                ))
            }
            #[cfg(feature = "remote")]
            Archive::Remote(tree) => {
                return Err(format!(
                    "{} is on another host: its copies cannot be checked again just before \
                     each removal, so nothing is removed on its listing's word (give a local \
                     directory)",
                    show(tree)
                ))
            }
            #[cfg(feature = "s3")]
            Archive::S3(bucket) => {
                return Err(format!(
                    "{} is in S3: its objects cannot be locked or compared again just before \
                     each removal, so nothing is removed on what S3 says of them (give a \
                     local directory)",
                    show(bucket)
                ))
            }
        }
    }
    disjoint(sources, archives)
}

/// Refused (why) when a source and an archive tree overlap: one is, lies
/// in or holds the other. A source file's copy could then be itself, so
/// neither `--remove` nor `--dirs` ("could go whole") may trust it.
pub(super) fn disjoint(sources: &[PathBuf], archives: &[Archive]) -> Result<(), String> {
    let show = |p: &Path| crate::escape::display_path(p);
    for source in sources {
        for archive in archives {
            let Archive::Tree(tree) = archive else {
                continue;
            };
            if overlap(source, tree)? {
                return Err(format!(
                    "the source {} and the archive {} overlap (one is, or lies in, the other): \
                     its files' copies could be themselves",
                    show(source),
                    show(tree)
                ));
            }
        }
    }
    // A bind mount below the operands shows one directory in both (an
    // archive mounted inside a source, or a source inside an archive),
    // which no path up from either operand sees: any directory found
    // under both, by device and inode, refuses the run.
    let trees = archives.iter().filter_map(|a| match a {
        Archive::Tree(t) => Some(t.as_path()),
        _ => None,
    });
    let archive_dirs = directories_under(trees);
    for source in sources {
        if let Some(shared) = first_directory_in(source, &archive_dirs) {
            return Err(format!(
                "the source {} and an archive share the directory {} (one is mounted inside the \
                 other): a removal could take the archive's own copy",
                show(source),
                show(&shared)
            ));
        }
    }
    Ok(())
}

/// The device and inode of every directory under `roots` (the roots
/// included; symbolic links not followed, mounts crossed). A directory
/// that cannot be read is left out below it: nothing there is reached.
fn directories_under<'a>(
    roots: impl Iterator<Item = &'a Path>,
) -> std::collections::HashSet<FileId> {
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<PathBuf> = roots.map(Path::to_path_buf).collect();
    while let Some(dir) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() || !seen.insert(crate::fs::FileStamp::of(&meta).id()) {
            continue;
        }
        push_subdirectories(&dir, &mut stack);
    }
    seen
}

/// The first directory under `root` (itself included) whose device and
/// inode are in `dirs`.
fn first_directory_in(root: &Path, dirs: &std::collections::HashSet<FileId>) -> Option<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&dir) else {
            continue;
        };
        let id = crate::fs::FileStamp::of(&meta).id();
        if !meta.is_dir() || !seen.insert(id) {
            continue;
        }
        if dirs.contains(&id) {
            return Some(dir);
        }
        push_subdirectories(&dir, &mut stack);
    }
    None
}

/// Pushes the real subdirectories of `dir` (not symbolic links) on `stack`.
fn push_subdirectories(dir: &Path, stack: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            stack.push(entry.path());
        }
    }
}

/// Whether `a` is `b`, lies in it, or holds it: by real paths, and by the
/// device and inode of each directory up from either (a bind mount shows
/// one directory under two real paths).
fn overlap(a: &Path, b: &Path) -> Result<bool, String> {
    let real = |p: &Path| {
        std::fs::canonicalize(p).map_err(|e| {
            format!(
                "{}: {}",
                crate::escape::display_path(p),
                crate::error::ErrorKind::Io(e)
            )
        })
    };
    let (ra, rb) = (real(a)?, real(b)?);
    if ra.starts_with(&rb) || rb.starts_with(&ra) {
        return Ok(true);
    }
    let id = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| crate::fs::FileStamp::of(&m).id())
    };
    let up = |from: &Path, to: &Path| {
        let target = id(to);
        target.is_some() && from.ancestors().any(|d| id(d) == target)
    };
    Ok(up(&ra, &rb) || up(&rb, &ra))
}
