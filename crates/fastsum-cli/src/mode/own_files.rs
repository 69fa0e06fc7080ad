//! The files an update owns: the list being updated (through its links)
//! and the temporary names `.NAME.fastsum-update.PID` its new version is
//! written under before the rename. The walks of `-r` skip them (an
//! update's list is never one of its own entries), and the update writes
//! and clears them, by these names alone.

use std::path::{Path, PathBuf};

use crate::mode::options::Update;

/// What a temporary name holds between the list's name and the pid.
pub(super) const ASIDE: &[u8] = b".fastsum-update.";

/// Where the list really is: `list`, or the file its links lead to.
pub(super) fn target_of(list: &Path) -> PathBuf {
    std::fs::canonicalize(list).unwrap_or_else(|_| list.to_path_buf())
}

/// The temporary name of an update of `target` by the process `pid`,
/// the list's name kept byte for byte: a lossy name (`\u{fffd}` for a byte
/// that is not UTF-8) was not known as the list's own, so the list named
/// its temporary file, a file that no longer exists once renamed.
pub(super) fn aside_name(target: &Path, pid: u32) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(target.file_name().unwrap_or_default());
    name.push(format!(".fastsum-update.{pid}"));
    target.with_file_name(name)
}

/// Whether `path`, met in the tree being hashed, is the list being updated
/// or a temporary file of an update of it (this run's, or one a killed
/// run left): never an entry of the list that describes the tree
/// (`cd site; fastsum -r --update=SITE.md5` recorded its own
/// temporary file, so `-c` failed and every run reported changes). The
/// name is compared first; only a name that matches costs a look at the
/// directory (the same directory, whatever its spelling).
pub(super) fn is_own_file(update: &Update, path: &Path) -> bool {
    let own = |list: &Path| {
        let (Some(name), Some(own)) = (path.file_name(), list.file_name()) else {
            return false;
        };
        let (name, own) = (name.as_encoded_bytes(), own.as_encoded_bytes());
        let aside = [&b"."[..], own, ASIDE].concat();
        if name != own && !name.starts_with(&aside) {
            return false;
        }
        let directory = |path: &Path| {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            std::fs::canonicalize(parent.unwrap_or(Path::new(".")))
        };
        matches!((directory(path), directory(list)), (Ok(a), Ok(b)) if a == b)
    };
    // The list as named, and its real file when it is a link.
    own(&update.path) || own(&target_of(&update.path))
}
