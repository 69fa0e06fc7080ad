//! Finding the files under a directory: a parallel walk that reports every
//! regular file, and says why it left anything else out.
//!
//! A checksum tool hashes every file, hidden or `.gitignore`d, so the walk
//! needs none of a code-search walker's filters. It is its own: worker
//! threads share a stack of directories, read each with `readdir` and take
//! every entry's type from it (no `stat` per file), and build each path once
//! in a reused buffer. Against the `ignore` crate's parallel walker, which
//! queued every entry (files too) through its work-stealing deque, it takes
//! half the CPU: 100,000 small files in 29 against 56 ms, the 50,000-file
//! tree in 15.5 against 28 ms (`ignore` still matches the excludes). What it
//! does:
//!
//! * **Symlinks** are not followed unless [`WalkOptions::follow_links`]; then
//!   a link back to an ancestor directory is reported as a
//!   [`ErrorKind::FilesystemLoop`] (the walker compares device and inode)
//!   instead of being walked for ever. Unfollowed links are reported as
//!   [`WalkItem::Special`] of kind [`SpecialKind::Symlink`], never opened,
//!   so that the caller can say what it left out.
//! * **FIFOs, sockets and devices** are never opened (opening a FIFO blocks
//!   until a writer comes; reading a device may never end): they are
//!   reported as [`WalkItem::Special`] so the caller can say it skipped them.
//! * **Excludes** are gitignore-style globs (`*.log`, `build/`, `/top-only`)
//!   matched relative to the root; an excluded directory is not entered.
//! * **Errors** (an unreadable directory, an entry that vanished between
//!   `readdir` and `stat`) are reported with their path, and the walk goes on.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};

mod excludes;
mod parallel;
mod sorted;

pub use excludes::check_excludes;
pub use parallel::walk;
pub use sorted::walk_sorted;

/// How to walk.
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// Follow symbolic links (with loop detection).
    pub follow_links: bool,
    /// Do not descend into directories on other file systems.
    pub one_file_system: bool,
    /// Gitignore-style globs of paths to leave out.
    pub excludes: Vec<String>,
    /// Threads of [`walk`] (0: let the walker choose); [`walk_sorted`]
    /// walks on the caller's thread.
    pub threads: usize,
    /// When set, the walk reads no more directories and ends (a caller
    /// that stopped listening: a Python generator closed early, Ctrl-C).
    pub stop: Option<Arc<AtomicBool>>,
    /// Of the root's own entries, only this one (a name, no `/`) is
    /// walked: one listing shard of a tree split by top-level entry (the
    /// Dask runner), with excludes still matched from the root.
    pub only_top: Option<OsString>,
    /// Give each file's size ([`WalkItem::File::size`]): an `fstatat` in
    /// its directory, cheaper than a `stat` of its path afterwards.
    pub sizes: bool,
}

impl WalkOptions {
    /// Whether the walk has been told to stop.
    pub fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// A kind of file that has no bytes to checksum and is never opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialKind {
    /// A named pipe.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A symbolic link met in a walk that does not follow links.
    Symlink,
}

impl SpecialKind {
    /// The kind of an `S_IFMT` file type, if it is special.
    pub fn of_mode(kind: u32) -> Option<SpecialKind> {
        match kind & libc::S_IFMT {
            libc::S_IFIFO => Some(SpecialKind::Fifo),
            libc::S_IFSOCK => Some(SpecialKind::Socket),
            libc::S_IFCHR => Some(SpecialKind::CharDevice),
            libc::S_IFBLK => Some(SpecialKind::BlockDevice),
            _ => None,
        }
    }

    /// How people call it ("fifo", as `stat -c %F` says "fifo").
    pub fn describe(self) -> &'static str {
        match self {
            SpecialKind::Fifo => "fifo",
            SpecialKind::Socket => "socket",
            SpecialKind::CharDevice => "character special file",
            SpecialKind::BlockDevice => "block special file",
            SpecialKind::Symlink => "symbolic link",
        }
    }
}

/// One thing the walk found.
#[derive(Debug)]
pub enum WalkItem {
    /// A regular file (known from `readdir`'s file type: the walk does
    /// not `stat` files, the hasher's `fstat` on the open file is cheaper
    /// than a second path lookup).
    File {
        /// The root joined with the path below it.
        path: PathBuf,
        /// Its size, with [`WalkOptions::sizes`] (else `None`).
        size: Option<u64>,
    },
    /// A FIFO, socket or device: skipped, never opened.
    Special {
        /// Where it is.
        path: PathBuf,
        /// What it is.
        kind: SpecialKind,
    },
    /// Something that could not be walked; the rest of the walk goes on.
    Error(Error),
}

/// A directory still to read.
pub(super) struct Directory {
    /// Its path as the walk spells it (the root, then names joined by `/`).
    path: Vec<u8>,
    /// With links followed: this directory and those above it, to tell a
    /// loop.
    ancestry: Option<Arc<Ancestor>>,
}

/// A directory on the way down from the root, with links followed.
struct Ancestor {
    dev: libc::dev_t,
    ino: libc::ino_t,
    path: PathBuf,
    parent: Option<Arc<Ancestor>>,
}

impl Ancestor {
    /// The directory of this chain that is (`dev`, `ino`), if one is.
    fn find(self: &Arc<Self>, dev: libc::dev_t, ino: libc::ino_t) -> Option<&Ancestor> {
        let mut at = Some(self);
        while let Some(ancestor) = at {
            if ancestor.dev == dev && ancestor.ino == ino {
                return Some(ancestor);
            }
            at = ancestor.parent.as_ref();
        }
        None
    }
}

/// What every walk shares: the options, the excludes and the root's device.
pub(super) struct Walker<'a> {
    options: &'a WalkOptions,
    excludes: Option<ignore::overrides::Override>,
    root_dev: libc::dev_t,
    /// The root as the walk spells it (to know the root's own entries).
    root: Vec<u8>,
}

impl<'a> Walker<'a> {
    /// The walker and the root as the first directory to read; the root's
    /// error as an item if it cannot be stat-ed. The root is walked even
    /// when it is a symbolic link to a directory.
    pub(super) fn new(
        root: &Path,
        options: &'a WalkOptions,
    ) -> Result<std::result::Result<(Walker<'a>, Directory), WalkItem>> {
        let excludes = if options.excludes.is_empty() {
            None
        } else {
            Some(excludes::exclude_overrides(root, &options.excludes)?)
        };
        let root_stat = match crate::fs::stat::stat_path(root) {
            Ok(st) => st,
            Err(e) => return Ok(Err(WalkItem::Error(Error::with_path(root, e)))),
        };
        let ancestry = options.follow_links.then(|| {
            Arc::new(Ancestor {
                dev: root_stat.st_dev,
                ino: root_stat.st_ino,
                path: root.to_path_buf(),
                parent: None,
            })
        });
        let walker = Walker {
            options,
            excludes,
            root_dev: root_stat.st_dev,
            root: root.as_os_str().as_bytes().to_vec(),
        };
        let top = Directory {
            path: root.as_os_str().as_bytes().to_vec(),
            ancestry,
        };
        Ok(Ok((walker, top)))
    }

    /// Reads `directory` and hands each entry to `found`, in `readdir`'s
    /// order, with its name and whether it is a directory (after following
    /// a link). An error opening or reading `directory` itself is returned
    /// (entries read before it were handed on).
    pub(super) fn read(
        &self,
        directory: &Directory,
        found: &mut dyn FnMut(&[u8], bool, Found),
    ) -> io::Result<()> {
        if self.options.stopped() {
            return Ok(());
        }
        let only = match &self.options.only_top {
            Some(name) if directory.path == self.root => Some(name.as_bytes()),
            _ => None,
        };
        let mut reader = crate::fs::dir::DirectoryReader::open(&directory.path)?;
        let mut path = directory.path.clone();
        if path.last() != Some(&b'/') {
            path.push(b'/');
        }
        let base = path.len();
        let fd = reader.fd();
        while let Some(entry) = reader.next()? {
            let name = entry.name;
            if name == b"." || name == b".." || only.is_some_and(|only| only != name) {
                continue;
            }
            path.truncate(base);
            path.extend_from_slice(name);
            let kind = match entry.kind {
                libc::DT_UNKNOWN => match stat_name(fd, name, false) {
                    Ok(st) => st.st_mode & libc::S_IFMT,
                    Err(e) => {
                        found(name, false, Found::Item(error_at(&path, e)));
                        continue;
                    }
                },
                // DTTOIF: a d_type is its S_IFMT type shifted down 12 bits.
                d_type => u32::from(d_type) << 12,
            };
            let (kind, link_target) = if kind == libc::S_IFLNK {
                if !self.options.follow_links {
                    // Reported, not dropped without a word (issue 13): the
                    // caller says how many were left out, and that -L
                    // follows them.
                    if !excludes::is_excluded(self.excludes.as_ref(), &path, false) {
                        let link = PathBuf::from(OsString::from_vec(path.clone()));
                        let item = WalkItem::Special {
                            path: link,
                            kind: SpecialKind::Symlink,
                        };
                        found(name, false, Found::Item(item));
                    }
                    continue;
                }
                match stat_name(fd, name, true) {
                    Ok(st) => (st.st_mode & libc::S_IFMT, Some(st)),
                    Err(e) => {
                        found(name, false, Found::Item(error_at(&path, e)));
                        continue;
                    }
                }
            } else {
                (kind, None)
            };
            let is_dir = kind == libc::S_IFDIR;
            if excludes::is_excluded(self.excludes.as_ref(), &path, is_dir) {
                continue;
            }
            if is_dir {
                if let Some(child) = self.descend(fd, name, &path, link_target, directory) {
                    found(name, true, child);
                }
                continue;
            }
            let file = PathBuf::from(OsString::from_vec(path.clone()));
            let item = match SpecialKind::of_mode(kind) {
                Some(kind) => WalkItem::Special { path: file, kind },
                None if kind == libc::S_IFREG => {
                    // Sizes only when asked (a stat per file the hashing
                    // does not need): fstatat in the open directory, or
                    // the followed link's stat already taken.
                    let size = match (self.options.sizes, &link_target) {
                        (false, _) => None,
                        (true, Some(st)) => Some(st.st_size as u64),
                        (true, None) => stat_name(fd, name, false).ok().map(|st| st.st_size as u64),
                    };
                    WalkItem::File { path: file, size }
                }
                None => continue,
            };
            found(name, false, Found::Item(item));
        }
        Ok(())
    }

    /// The subdirectory `name` (at `path`) as a directory to read, unless
    /// it is on another file system with `--one-file-system` (`None`); a
    /// subdirectory that cannot be stat-ed, or (links followed) that is one
    /// of its own ancestors, is an error item.
    fn descend(
        &self,
        dir_fd: RawFd,
        name: &[u8],
        path: &[u8],
        followed: Option<libc::stat>,
        parent: &Directory,
    ) -> Option<Found> {
        let needs_stat = self.options.one_file_system || parent.ancestry.is_some();
        let st = match followed {
            Some(st) => Some(st),
            None if needs_stat => match stat_name(dir_fd, name, self.options.follow_links) {
                Ok(st) => Some(st),
                Err(e) => return Some(Found::Item(error_at(path, e))),
            },
            None => None,
        };
        if self.options.one_file_system && st.is_some_and(|st| st.st_dev != self.root_dev) {
            return None;
        }
        let ancestry = match (&parent.ancestry, st) {
            (Some(chain), Some(st)) => {
                if let Some(ancestor) = chain.find(st.st_dev, st.st_ino) {
                    let error = Error::with_path(
                        Path::new(OsStr::from_bytes(path)),
                        ErrorKind::FilesystemLoop {
                            ancestor: ancestor.path.clone(),
                        },
                    );
                    return Some(Found::Item(WalkItem::Error(error)));
                }
                Some(Arc::new(Ancestor {
                    dev: st.st_dev,
                    ino: st.st_ino,
                    path: PathBuf::from(OsStr::from_bytes(path)),
                    parent: Some(chain.clone()),
                }))
            }
            _ => None,
        };
        Some(Found::Directory(Directory {
            path: path.to_vec(),
            ancestry,
        }))
    }
}

/// One entry of a directory as the walk classifies it.
pub(super) enum Found {
    /// Something to report: a file, a special file, an error.
    Item(WalkItem),
    /// A subdirectory to read.
    Directory(Directory),
}

impl Found {
    /// The path of the entry (every item the walk makes has one).
    fn path_bytes(&self) -> &[u8] {
        let path = match self {
            Found::Item(WalkItem::File { path, .. } | WalkItem::Special { path, .. }) => path,
            Found::Item(WalkItem::Error(error)) => error.path().unwrap_or(Path::new("")),
            Found::Directory(directory) => return &directory.path,
        };
        path.as_os_str().as_bytes()
    }
}

/// `fstatat` of `name` (as `readdir` gave it: no NUL inside) in the
/// directory open as `dir_fd`.
fn stat_name(dir_fd: RawFd, name: &[u8], follow: bool) -> io::Result<libc::stat> {
    let name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    crate::fs::stat::stat_at(dir_fd, &name, follow)
}

/// `error` as the walk item for `path`.
pub(super) fn error_at(path: &[u8], error: io::Error) -> WalkItem {
    WalkItem::Error(Error::with_path(Path::new(OsStr::from_bytes(path)), error))
}

#[cfg(test)]
mod tests;
