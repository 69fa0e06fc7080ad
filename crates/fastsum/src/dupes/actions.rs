//! Acting on groups: replace duplicates by links to one kept file, or
//! remove them, safely (a user's data depends on it):
//!
//! * just before touching a member, it and the kept file are stat-ed
//!   again; if either's stamp moved since it was hashed (the cache's rule:
//!   type, size, inode, device, mtime, ctime), the member is skipped;
//! * the member's bytes are compared with the kept file's first;
//! * a link replaces a member atomically: made under a temporary name in
//!   the member's directory, then renamed over it, so a crash leaves the
//!   old file or the link, never neither;
//! * the kept file is never touched, so the last copy of a content is
//!   never removed; one failure never stops the others.

use std::path::{Path, PathBuf};

use super::files::same_bytes;
use super::{Group, Member};
use crate::fs::FileStamp;

/// What to do with each duplicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Replace it with a hard link to the kept file.
    Link,
    /// Replace it with a symbolic link to the kept file.
    Symlink,
    /// Replace it with a copy-on-write clone of the kept file (`FICLONE`).
    Reflink,
    /// Remove it.
    Remove,
}

impl Action {
    /// How the report names it.
    pub fn name(self) -> &'static str {
        match self {
            Action::Link => "link",
            Action::Symlink => "symlink",
            Action::Reflink => "reflink",
            Action::Remove => "remove",
        }
    }
}

/// Which member of a group is kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Keep {
    /// The first path in byte order.
    #[default]
    First,
    /// The one modified longest ago (ties: the first).
    Oldest,
    /// The one modified last (ties: the first).
    Newest,
}

/// What happened to one member.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done (or, in a dry run, what would be done).
    Done,
    /// Left as it was, and why (it or the kept file changed, ...).
    Skipped(String),
    /// Tried and failed, and why; the member is as it was.
    Failed(String),
}

/// One member acted on.
#[derive(Debug)]
pub struct Acted {
    /// The action.
    pub action: Action,
    /// The duplicate.
    pub member: PathBuf,
    /// The file kept.
    pub kept: PathBuf,
    /// How it went.
    pub outcome: Outcome,
}

/// The member `keep` chooses.
pub fn kept_member(group: &Group, keep: Keep) -> &Member {
    let first = &group.members[0];
    match keep {
        Keep::First => first,
        Keep::Oldest => group.members.iter().fold(first, |best, m| {
            if m.stamp.mtime_ns < best.stamp.mtime_ns {
                m
            } else {
                best
            }
        }),
        Keep::Newest => group.members.iter().fold(first, |best, m| {
            if m.stamp.mtime_ns > best.stamp.mtime_ns {
                m
            } else {
                best
            }
        }),
    }
}

/// Applies `action` to every member of `group` but the kept one, calling
/// `before` just before each member is checked (a test's seam; the CLI
/// passes a no-op) and `report` for each. With `dry_run`, nothing is
/// touched: each report says what would be done.
pub fn act_on_group(
    group: &Group,
    action: Action,
    keep: Keep,
    dry_run: bool,
    before: &mut dyn FnMut(&Path),
    report: &mut dyn FnMut(Acted),
) {
    let mut kept = kept_member(group, keep).clone();
    // Inodes whose link count (and so ctime) our own actions moved.
    let mut touched: Vec<crate::fs::FileId> = Vec::new();
    for member in &group.members {
        if member.path == kept.path {
            continue;
        }
        let outcome = if dry_run {
            Outcome::Done
        } else {
            before(&member.path);
            let mut member = member.clone();
            if member.id() == kept.id() {
                // A hard link of the kept file: our own links moved its
                // ctime; it is the kept file's stamp now.
                member.stamp = kept.stamp;
            } else if touched.contains(&member.id()) {
                // Another path of this inode was replaced a moment ago:
                // its ctime moved by our hand; all else must be as hashed.
                if let Ok(m) = std::fs::symlink_metadata(&member.path) {
                    let now = FileStamp::of(&m);
                    let same_but_ctime = FileStamp {
                        ctime_ns: member.stamp.ctime_ns,
                        ..now
                    } == member.stamp;
                    if same_but_ctime {
                        member.stamp = now;
                    }
                }
            }
            let outcome = act_on(&member, &kept, action);
            if outcome == Outcome::Done {
                touched.push(member.id());
            }
            if outcome == Outcome::Done {
                // Linking to the kept file moves its link count and ctime,
                // nothing else: take its stamp again for the next member
                // (any other change is caught by the byte comparison).
                if let Ok(m) = std::fs::symlink_metadata(&kept.path) {
                    let now = FileStamp::of(&m);
                    let same_but_ctime = FileStamp {
                        ctime_ns: kept.stamp.ctime_ns,
                        ..now
                    } == kept.stamp;
                    if same_but_ctime {
                        kept.stamp = now;
                    }
                }
            }
            outcome
        };
        report(Acted {
            action,
            member: member.path.clone(),
            kept: kept.path.clone(),
            outcome,
        });
    }
}

/// The checks, then the action, for one member.
fn act_on(member: &Member, kept: &Member, action: Action) -> Outcome {
    let now = |path: &Path| std::fs::symlink_metadata(path).map(|m| FileStamp::of(&m));
    match (now(&member.path), now(&kept.path)) {
        (Ok(m), Ok(k)) => {
            if m != member.stamp {
                return Outcome::Skipped("it changed since it was hashed".into());
            }
            if k != kept.stamp {
                return Outcome::Skipped("the kept file changed since it was hashed".into());
            }
        }
        (Err(e), _) => return Outcome::Skipped(format!("it cannot be stat-ed: {e}")),
        (_, Err(e)) => return Outcome::Skipped(format!("the kept file cannot be stat-ed: {e}")),
    }
    let same_inode = member.id() == kept.id();
    if same_inode && matches!(action, Action::Link | Action::Reflink) {
        return Outcome::Done;
    }
    if !same_inode && !same_bytes(&member.path, &kept.path) {
        return Outcome::Skipped("its bytes differ from the kept file's".into());
    }
    let result = match action {
        Action::Remove => std::fs::remove_file(&member.path),
        Action::Link => replace(&member.path, |tmp| std::fs::hard_link(&kept.path, tmp)),
        Action::Symlink => {
            let target = std::path::absolute(&kept.path).unwrap_or_else(|_| kept.path.clone());
            replace(&member.path, |tmp| symlink(&target, tmp))
        }
        Action::Reflink => replace(&member.path, |tmp| reflink(&kept.path, tmp)),
    };
    match result {
        Ok(()) => Outcome::Done,
        Err(e) => Outcome::Failed(crate::error::ErrorKind::Io(e).to_string()),
    }
}

/// Makes the replacement under a temporary name beside `member` with
/// `make`, then renames it over `member` (atomic); cleans up on failure.
fn replace(member: &Path, make: impl FnOnce(&Path) -> std::io::Result<()>) -> std::io::Result<()> {
    let dir = member
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = member.file_name().unwrap_or_default().as_encoded_bytes();
    let mut tmp_name = b".fastsum-".to_vec();
    tmp_name.extend_from_slice(&name[..name.len().min(64)]);
    tmp_name.extend_from_slice(format!(".{}.tmp", std::process::id()).as_bytes());
    let tmp = dir.join(crate::fs::name::os_string(tmp_name));
    make(&tmp)?;
    if let Err(e) = std::fs::rename(&tmp, member) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

/// A symbolic link at `link` to the file `target`.
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, link);
    #[cfg(windows)]
    return std::os::windows::fs::symlink_file(target, link);
}

/// A copy-on-write clone of `source` at `dest`: not made off Linux here.
#[cfg(not(target_os = "linux"))]
fn reflink(_source: &Path, _dest: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "reflinks (copy-on-write clones) are made on Linux only; --link makes hard links",
    ))
}

/// A copy-on-write clone of `source` at `dest` (`ioctl(FICLONE)`), where
/// the file system has them.
#[cfg(target_os = "linux")]
fn reflink(source: &Path, dest: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    const FICLONE: libc::c_ulong = 0x4004_9409;
    let src = std::fs::File::open(source)?;
    let out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dest)?;
    // SAFETY: both descriptors are open for the call; FICLONE reads the
    // source descriptor number passed as the argument and writes nothing
    // to our memory.
    let rc = unsafe { libc::ioctl(out.as_raw_fd(), FICLONE as _, src.as_raw_fd()) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        drop(out);
        let _ = std::fs::remove_file(dest);
        return Err(match e.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::EXDEV | libc::EINVAL) => std::io::Error::other(
                "this file system cannot make reflinks (copy-on-write clones); --link makes hard links",
            ),
            _ => e,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dupes::{find_duplicates, DupesOptions};

    fn groups(dir: &Path) -> Vec<Group> {
        find_duplicates(&[dir.to_path_buf()], &DupesOptions::new(), false)
            .unwrap()
            .groups
    }

    #[test]
    fn a_member_changed_between_hashing_and_acting_is_skipped_and_nothing_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", "b", "c"] {
            std::fs::write(dir.path().join(name), b"same bytes").unwrap();
        }
        let found = groups(dir.path());
        assert_eq!(found.len(), 1);
        let mut acted = Vec::new();
        // The seam: "b" is rewritten (same size, other bytes) after it was
        // hashed and just before it is checked.
        let mut before = |path: &Path| {
            if path.ends_with("b") {
                std::fs::write(path, b"SAME BYTES").unwrap();
            }
        };
        act_on_group(
            &found[0],
            Action::Remove,
            Keep::First,
            false,
            &mut before,
            &mut |a| acted.push(a),
        );
        assert_eq!(acted.len(), 2);
        let b = acted.iter().find(|a| a.member.ends_with("b")).unwrap();
        assert!(
            matches!(&b.outcome, Outcome::Skipped(why) if why.contains("changed")),
            "{b:?}"
        );
        assert_eq!(std::fs::read(dir.path().join("b")).unwrap(), b"SAME BYTES");
        assert!(!dir.path().join("c").exists(), "c was removed");
        assert_eq!(std::fs::read(dir.path().join("a")).unwrap(), b"same bytes");
    }

    #[test]
    fn links_replace_atomically_and_keep_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["x1", "x2", "x3"] {
            std::fs::write(dir.path().join(name), b"content").unwrap();
        }
        let found = groups(dir.path());
        let mut acted = Vec::new();
        act_on_group(
            &found[0],
            Action::Link,
            Keep::Newest,
            false,
            &mut |_| {},
            &mut |a| acted.push(a),
        );
        assert!(
            acted.iter().all(|a| a.outcome == Outcome::Done),
            "{acted:?}"
        );
        use std::os::unix::fs::MetadataExt;
        let inodes: std::collections::HashSet<u64> = ["x1", "x2", "x3"]
            .iter()
            .map(|n| std::fs::metadata(dir.path().join(n)).unwrap().ino())
            .collect();
        assert_eq!(inodes.len(), 1);
        for n in ["x1", "x2", "x3"] {
            assert_eq!(std::fs::read(dir.path().join(n)).unwrap(), b"content");
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("fastsum"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
