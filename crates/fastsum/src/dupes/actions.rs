//! Acting on groups: replace duplicates by links to one kept file, or
//! remove them, safely (a user's data depends on it):
//!
//! * just before touching a member, it and the kept file are stat-ed
//!   again; if either's stamp moved since it was hashed (the cache's rule:
//!   type, size, inode, device, mtime, ctime), the member is skipped;
//! * a member that is the kept file's inode (a hard link of it, or the
//!   very same file reached by another path: `d d/../d`, a symlinked
//!   directory, `-L`) is never acted on: removing or replacing it could
//!   take the kept file with it;
//! * the member's bytes are compared with the kept file's first, and both
//!   are stat-ed again after the comparison: a write during it (which the
//!   comparison may have missed) leaves the member as it is;
//! * the last stat and the act are made under an exclusive `flock` (not
//!   waited for) on the member, opened through its held directory, and
//!   on the kept file: of two runs at once whose member is the other's
//!   kept file, the second finds the lock and leaves its member, or comes
//!   after and finds it gone (never both gone);
//! * the held entry is never the kept file's own (by its directory's
//!   device and inode, and the name: a mount put over the member's
//!   directory after the checks shows the kept file's there);
//! * a removal renames the name aside (`RENAME_NOREPLACE`) and unlinks
//!   only the inode it checked: a file renamed onto the name in the last
//!   instant is put back, never removed;
//! * a link replaces a member atomically: made under a temporary name in
//!   the member's directory, then renamed over it, so a crash leaves the
//!   old file or the link, never neither;
//! * a member [`Scope`] refuses is never acted on: a symbolic link `-L`
//!   followed, a file outside every operand, one file seen twice through
//!   an overlay;
//! * a dry run asks all that a run asks before it acts (the scope, both
//!   stamps), so it says what the run does; only the byte comparison,
//!   which a changed stamp would stop, is left to the run;
//! * the kept file is never touched, so the last copy of a content is
//!   never removed; one failure never stops the others.

use std::path::{Path, PathBuf};

use super::entry::{Entry, Lock};
use super::files::same_bytes;
use super::reflink::{dedupe, Refused};
use super::scope::Scope;
use super::{Group, Member};
use crate::fs::FileStamp;

/// What to do with each duplicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Replace it with a hard link to the kept file.
    Link,
    /// Replace it with a symbolic link to the kept file.
    Symlink,
    /// Share the kept file's extents (copy on write), the kernel comparing
    /// the bytes under its locks (`FIDEDUPERANGE`).
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

/// What happened to one member (the pipeline's per-path outcome is
/// [`crate::pipeline::Outcome`]).
#[derive(Debug, PartialEq, Eq)]
pub enum ActionOutcome {
    /// Done (or, in a dry run, what would be done).
    Done,
    /// Nothing to do: it is the kept file's inode (a hard link of it, or
    /// the kept file itself by another path), so it is left as it is.
    SameFile,
    /// Nothing more to do: it is the very directory entry of this earlier
    /// member (another path to its directory: a bind mount, a followed
    /// link), which was acted on (or, in a dry run, would be) as itself.
    SameEntry(PathBuf),
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
    pub outcome: ActionOutcome,
}

/// The member `keep` chooses.
pub(crate) fn kept_member(group: &Group, keep: Keep) -> &Member {
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

/// The moments of one member's turn that a test can step into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Moment {
    /// Before the member and the kept file are stat-ed again.
    BeforeCheck,
    /// After their bytes compared equal, before the second stat.
    Compared,
    /// After the second stat, before the member's directory is held.
    Checked,
    /// Both files locked and checked once more, just before the act.
    Locked,
}

impl Group {
    /// Applies `action` to every member but the kept one that `scope`
    /// (the search's: [`super::DupesReport::scope`]) lets it act on,
    /// calling `report` for each. With `dry_run`, nothing is touched: each
    /// report says what would be done.
    pub fn act(
        &self,
        scope: &Scope,
        action: Action,
        keep: Keep,
        dry_run: bool,
        report: &mut dyn FnMut(Acted),
    ) {
        act_on_group_hooked(self, scope, action, keep, dry_run, &mut |_, _| {}, report);
    }
}

/// [`Group::act`], calling `hook` at each [`Moment`] of a member's turn:
/// the tests' seam for changing a file between the check and the act.
pub(crate) fn act_on_group_hooked(
    group: &Group,
    scope: &Scope,
    action: Action,
    keep: Keep,
    dry_run: bool,
    hook: &mut dyn FnMut(&Path, Moment),
    report: &mut dyn FnMut(Acted),
) {
    let mut kept = kept_member(group, keep).clone();
    // Inodes whose link count (and so ctime) our own actions moved.
    let mut touched: Vec<crate::fs::FileId> = Vec::new();
    let entries = entries_named_twice(group);
    for (i, member) in group.members.iter().enumerate() {
        if member.path == kept.path {
            continue;
        }
        let outcome = if member.id() == kept.id() {
            // Never acted on, in a dry run neither: the same inode by
            // another name, or the kept file itself by another path.
            ActionOutcome::SameFile
        } else if let Some(earlier) = earlier_entry(group, &entries, i) {
            // Acted on (or not) as that member: in a dry run and a run alike.
            ActionOutcome::SameEntry(earlier.to_path_buf())
        } else if let Some(outcome) = decided_before_acting(member, &kept, scope, action, dry_run) {
            outcome
        } else {
            hook(&member.path, Moment::BeforeCheck);
            let mut member = member.clone();
            if touched.contains(&member.id()) {
                // Another path of this inode was replaced a moment ago:
                // its ctime moved by our hand; all else must be as hashed.
                restamp_if_only_ctime_moved(&mut member);
            }
            let outcome = act_on(&member, &kept, scope, action, &mut *hook);
            if outcome == ActionOutcome::Done {
                touched.push(member.id());
                // Linking to the kept file moves its link count and ctime,
                // nothing else: take its stamp again for the next member
                // (any other change is caught by the byte comparison).
                restamp_if_only_ctime_moved(&mut kept);
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

/// What is decided about `member` before it is touched, in a dry run and
/// a run alike: refused by the scope or by what the file systems can
/// make; in a dry run, the stamps' check and the answer. `None`: a run
/// goes on to [`act_on`].
pub(crate) fn decided_before_acting(
    member: &Member,
    kept: &Member,
    scope: &Scope,
    action: Action,
    dry_run: bool,
) -> Option<ActionOutcome> {
    if let Some(why) = scope.refuses(member, kept) {
        Some(ActionOutcome::Skipped(why))
    } else if let Some(why) = cannot_be_made(action, &member.path, &kept.path) {
        Some(ActionOutcome::Skipped(why))
    } else if dry_run {
        Some(match unchanged(member, kept, "since it was hashed") {
            Some(why) => ActionOutcome::Skipped(why),
            None => ActionOutcome::Done,
        })
    } else {
        None
    }
}

/// Takes `member`'s stamp again if only its ctime moved (our own action
/// on another path of its inode moved it: the link count changed); any
/// other change leaves the old stamp, for the check to refuse.
pub(crate) fn restamp_if_only_ctime_moved(member: &mut Member) {
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

/// Whether `a` and `b` are one directory entry (the device and inode of
/// the directory each is named in, and the name), whatever paths reach
/// them: a bind mount or overlapping operands show one entry twice.
/// `None`: one of them cannot be told (its directory cannot be stat-ed).
pub(crate) fn same_entry(a: &Path, b: &Path) -> Option<bool> {
    Some(entry_of(a)? == entry_of(b)?)
}

/// For each member whose inode another member also has, its directory
/// entry: the device and inode of the directory it is named in, and its
/// name (an entry is one by these, whatever path reached its directory);
/// `None` for the others (most: nothing is stat-ed for them).
fn entries_named_twice(group: &Group) -> Vec<Option<(u64, u64, std::ffi::OsString)>> {
    group
        .members
        .iter()
        .map(|member| {
            let shared = group
                .members
                .iter()
                .filter(|m| m.id() == member.id())
                .count()
                > 1;
            shared.then(|| entry_of(&member.path)).flatten()
        })
        .collect()
}

/// The path of a member before member `i` that is its directory entry.
fn earlier_entry<'g>(
    group: &'g Group,
    entries: &[Option<(u64, u64, std::ffi::OsString)>],
    i: usize,
) -> Option<&'g Path> {
    let entry = entries[i].as_ref()?;
    let j = (0..i).find(|&j| entries[j].as_ref() == Some(entry))?;
    Some(&group.members[j].path)
}

#[cfg(unix)]
pub(crate) fn entry_of(path: &Path) -> Option<(u64, u64, std::ffi::OsString)> {
    use std::os::unix::fs::MetadataExt;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = std::fs::metadata(parent).ok()?;
    Some((dir.dev(), dir.ino(), path.file_name()?.to_os_string()))
}

#[cfg(not(unix))]
pub(crate) fn entry_of(_path: &Path) -> Option<(u64, u64, std::ffi::OsString)> {
    None
}

/// What the file systems cannot make for `action` between the member and
/// the kept file, asked in the dry run and the run alike (the dry run
/// said "would link" of a pair on two mounts of one file system, and
/// "would reflink" on ext4; the run then failed with EXDEV or "cannot make
/// reflinks"): a hard link or a reflink never crosses a mount (their
/// mount ids differ, a bind mount included), and a reflink is never asked
/// of a file system type that makes none.
fn cannot_be_made(action: Action, member: &Path, kept: &Path) -> Option<String> {
    use crate::fs::mount::{fs_type, mount_id};
    let what = match action {
        Action::Link => "a hard link",
        Action::Reflink => "a reflink",
        Action::Remove | Action::Symlink => return None,
    };
    let apart = match (mount_id(member), mount_id(kept)) {
        (Some(a), Some(b)) => a != b,
        _ => false,
    };
    if apart {
        return Some(format!(
            "{what} cannot cross mounts: it is on another mount than the kept file"
        ));
    }
    let no_reflinks = action == Action::Reflink && fs_type(member).is_some_and(makes_no_reflinks);
    no_reflinks.then(|| {
        "this file system cannot make reflinks (copy-on-write clones); --link makes hard links"
            .to_string()
    })
}

/// File system types (`f_type`) that make no reflinks: ext2/3/4, tmpfs,
/// ramfs, FAT, exFAT, NTFS (both drivers), F2FS. Any other is tried
/// (Btrfs, XFS with reflink=1, bcachefs ... make them; one that cannot
/// fails the run with the same message).
fn makes_no_reflinks(kind: u64) -> bool {
    matches!(
        kind,
        0xEF53
            | 0x0102_1994
            | 0x8584_58f6
            | 0x4d44
            | 0x2011_BAB0
            | 0x5346_544e
            | 0x7366_746e
            | 0xF2F5_2010
    )
}

/// The checks, then the action, for one member (never the kept file's
/// inode: [`Group::act`] leaves those out).
pub(crate) fn act_on(
    member: &Member,
    kept: &Member,
    scope: &Scope,
    action: Action,
    hook: &mut dyn FnMut(&Path, Moment),
) -> ActionOutcome {
    if let Some(why) = unchanged(member, kept, "since it was hashed") {
        return ActionOutcome::Skipped(why);
    }
    if action == Action::Reflink {
        // The kernel compares the bytes and shares them under its own
        // locks: no window for a writer.
        return match dedupe(&kept.path, &member.path, member.stamp.size) {
            Ok(()) => ActionOutcome::Done,
            Err(Refused::Differ) => {
                ActionOutcome::Skipped("its bytes differ from the kept file's".into())
            }
            Err(Refused::Io(e)) => {
                ActionOutcome::Failed(crate::error::ErrorKind::Io(e).to_string())
            }
        };
    }
    if !same_bytes(&member.path, &kept.path) {
        return ActionOutcome::Skipped("its bytes differ from the kept file's".into());
    }
    hook(&member.path, Moment::Compared);
    // A write while the bytes were compared moved the stamp (ctime at
    // least): the comparison may have missed it, so nothing is done.
    if let Some(why) = unchanged(member, kept, "while it was compared with the kept file") {
        return ActionOutcome::Skipped(why);
    }
    hook(&member.path, Moment::Checked);
    let (entry, _locks) = match held_and_locked(member, kept, scope) {
        Ok(held) => held,
        Err(why) => return ActionOutcome::Skipped(why),
    };
    hook(&member.path, Moment::Locked);
    let result = match action {
        Action::Remove => entry.remove(&member.stamp),
        Action::Link => entry.replace(|tmp| std::fs::hard_link(&kept.path, tmp)),
        Action::Symlink => {
            let target = std::path::absolute(&kept.path).unwrap_or_else(|_| kept.path.clone());
            entry.replace(|tmp| symlink(&target, tmp))
        }
        // Shared by the kernel above, after its own comparison.
        Action::Reflink => Ok(()),
    };
    match result {
        Ok(()) => ActionOutcome::Done,
        Err(e) => ActionOutcome::Failed(crate::error::ErrorKind::Io(e).to_string()),
    }
}

/// The member's entry held (its directory opened and found in the scope:
/// a directory of the path swapped since is no way out), both files
/// locked and both stamps checked again under the locks (`Err`: why the
/// member is left).
fn held_and_locked(
    member: &Member,
    kept: &Member,
    scope: &Scope,
) -> Result<(Entry, (Lock, Option<Lock>)), String> {
    // From here on through its directory, held and found in the scope
    // (a directory of the path swapped since is no way out).
    let entry = Entry::hold(&member.path, scope)?;
    // The held entry must not be the kept file's own entry (its
    // directory's device and inode, and the name): a bind mount put over
    // a directory of the path since the checks shows the kept file's
    // directory there, and removing the member would take the kept file.
    if entry
        .dir_entry()
        .is_some_and(|held| entry_of(&kept.path) == Some(held))
    {
        return Err(
            "its directory is now the kept file's own (a mount over it since the checks): \
             it is the kept file's very entry, left as it is"
                .into(),
        );
    }
    // Both locked (an exclusive flock each, not waited for) from here
    // through the act, and both stat-ed again under the locks: a second
    // run at once whose member is our kept file and whose kept file is
    // our member either finds a lock and leaves its member, or comes after
    // and finds our member gone: two crosswise runs never take both
    // copies.
    // One inode (`contained`: a hard link of the archive copy) is locked
    // once: a second lock of it, by this very run, would be refused.
    let locks = (
        entry.lock(&member.stamp)?,
        match member.id() == kept.id() {
            true => None,
            false => Some(Lock::path(&kept.path, &kept.stamp, "the kept file")?),
        },
    );
    if let Some(why) = unchanged(member, kept, "while it was compared with the kept file") {
        return Err(why);
    }
    match entry.stamp() {
        Ok(now) if now == member.stamp => {}
        Ok(_) => return Err("it changed while it was compared".into()),
        Err(e) => return Err(format!("it cannot be stat-ed: {e}")),
    }
    Ok((entry, locks))
}

/// Why the member or the kept file is not as it was hashed (`when`
/// says since when), or `None` when both stamps still hold.
fn unchanged(member: &Member, kept: &Member, when: &str) -> Option<String> {
    let now = |path: &Path| std::fs::symlink_metadata(path).map(|m| FileStamp::of(&m));
    match (now(&member.path), now(&kept.path)) {
        (Ok(m), _) if m != member.stamp => Some(format!("it changed {when}")),
        (_, Ok(k)) if k != kept.stamp => Some(format!("the kept file changed {when}")),
        (Ok(_), Ok(_)) => None,
        (Err(e), _) => Some(format!("it cannot be stat-ed: {e}")),
        (_, Err(e)) => Some(format!("the kept file cannot be stat-ed: {e}")),
    }
}

/// A symbolic link at `link` to the file `target`.
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, link);
    #[cfg(windows)]
    return std::os::windows::fs::symlink_file(target, link);
}

#[cfg(test)]
mod tests;
