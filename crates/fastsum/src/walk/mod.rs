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

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::fs::dir::{Listed, Listing};
use crate::fs::name;
use crate::fs::stat::{kind as file_kind, FileStamp};

mod excludes;
mod parallel;
mod sorted;

/// How to walk.
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// Follow symbolic links (with loop detection).
    pub follow_links: bool,
    /// Do not descend into directories on other file systems.
    pub one_file_system: bool,
    /// Gitignore-style globs of paths to leave out.
    pub excludes: Vec<String>,
    /// Threads of [`WalkOptions::walk`] (0: let the walker choose);
    /// [`WalkOptions::walk_sorted`] walks on the caller's thread.
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
    /// Go at most this many levels below the root, as `find -maxdepth`:
    /// 1 walks the root's own entries only, 0 nothing (None: no limit).
    pub max_depth: Option<usize>,
    /// Report each directory below the root ([`WalkItem::Directory`]),
    /// before its entries: what a directory digest needs to see empty
    /// directories and where each directory's entries end.
    pub directories: bool,
    /// A directory on a generated file system (`/proc`, `/sys`, cgroupfs,
    /// mounted anywhere below the root) is an error item, never entered:
    /// what a directory digest a list asks for needs.
    pub refuse_generated: bool,
}

impl WalkOptions {
    /// Walks `root` in parallel and hands every item to `sink`, from the
    /// walker's threads, in no particular order. Returns once the walk is
    /// done.
    ///
    /// An invalid exclude glob is the only error returned; everything else
    /// arrives as [`WalkItem::Error`].
    pub fn walk(&self, root: &Path, sink: &(dyn Fn(WalkItem) + Sync)) -> Result<()> {
        parallel::walk(root, self, sink)
    }

    /// Walks `root` on the calling thread and hands every item to `sink`
    /// in the byte order of their paths: the order sorting the whole list
    /// would give, without holding it. Each directory's entries are sorted
    /// by name, a directory's name taken with a `/` after it (`a.txt` comes
    /// before the files of `a/`, as `.` sorts before `/`), and each
    /// subdirectory is walked at its place. A directory that cannot be read
    /// is reported at its place.
    ///
    /// An invalid exclude glob is the only error returned; everything else
    /// arrives as [`WalkItem::Error`].
    pub fn walk_sorted(&self, root: &Path, sink: &mut dyn FnMut(WalkItem)) -> Result<()> {
        sorted::walk_sorted(root, self, sink)
    }

    /// Checks that every exclude pattern is a valid glob, before any walk.
    pub fn check_excludes(&self) -> Result<()> {
        excludes::check_excludes(&self.excludes)
    }

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
        match kind & file_kind::MASK {
            file_kind::FIFO => Some(SpecialKind::Fifo),
            file_kind::SOCKET => Some(SpecialKind::Socket),
            file_kind::CHAR_DEVICE => Some(SpecialKind::CharDevice),
            file_kind::BLOCK_DEVICE => Some(SpecialKind::BlockDevice),
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
        /// Its inode number as the directory listing gives it (0 where the
        /// platform gives none): the order of a rotational disk.
        ino: u64,
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
    /// A directory below the root, before anything in it (only with
    /// [`WalkOptions::directories`]).
    Directory {
        /// Where it is.
        path: PathBuf,
    },
}

/// A directory still to read.
pub(super) struct Directory {
    /// Its path as the walk spells it (the root, then names joined by `/`).
    path: Vec<u8>,
    /// With links followed: this directory and those above it, to tell a
    /// loop.
    ancestry: Option<Arc<Ancestor>>,
    /// Levels below the root (the root: 0).
    depth: usize,
}

/// A directory on the way down from the root, with links followed.
struct Ancestor {
    dev: u64,
    ino: u64,
    path: PathBuf,
    parent: Option<Arc<Ancestor>>,
}

impl Ancestor {
    /// The directory of this chain that is (`dev`, `ino`), if one is.
    fn find(self: &Arc<Self>, dev: u64, ino: u64) -> Option<&Ancestor> {
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
    root_dev: u64,
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
                dev: root_stat.dev,
                ino: root_stat.ino,
                path: root.to_path_buf(),
                parent: None,
            })
        });
        let walker = Walker {
            options,
            excludes,
            root_dev: root_stat.dev,
            root: name::path_bytes(root).to_vec(),
        };
        let top = Directory {
            path: name::path_bytes(root).to_vec(),
            ancestry,
            depth: 0,
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
        let deepest = self.options.max_depth.unwrap_or(usize::MAX);
        if self.options.stopped() || directory.depth >= deepest {
            return Ok(());
        }
        let only = match &self.options.only_top {
            Some(only) if directory.path == self.root => Some(name::bytes(only)),
            _ => None,
        };
        let mut listing = Listing::open(&directory.path)?;
        let mut path = directory.path.clone();
        if !path.last().is_some_and(|&b| name::is_separator(b)) {
            path.push(name::SEPARATOR);
        }
        let base = path.len();
        let mut name = Vec::new();
        while let Some(listed) = listing.next(&mut name)? {
            if name == b"." || name == b".." || only.is_some_and(|only| only != name) {
                continue;
            }
            path.truncate(base);
            path.extend_from_slice(&name);
            let entry = Entry {
                listing: &listing,
                name: &name,
                path: &path,
                listed,
            };
            if let Some((is_dir, item)) = self.classify(entry, directory, deepest) {
                found(&name, is_dir, item);
            }
        }
        Ok(())
    }

    /// What one entry is, as the walk hands it on, and whether it is a
    /// directory to read; `None` for what is left out without a word
    /// (excluded, deeper than asked, or of no kind a checksum tool reads).
    fn classify(
        &self,
        entry: Entry,
        directory: &Directory,
        deepest: usize,
    ) -> Option<(bool, Found)> {
        let Entry {
            listing,
            name,
            path,
            listed,
        } = entry;
        let error = |e| Some((false, Found::Item(error_at(path, e))));
        let kind = match listed.kind {
            Some(kind) => kind,
            None => match listing.stat(name, false) {
                Ok(st) => st.kind,
                Err(e) => return error(e),
            },
        };
        let (kind, link_target) = if kind != file_kind::SYMLINK {
            (kind, None)
        } else if !self.options.follow_links {
            // Reported, not dropped without a word: the caller
            // says how many were left out, and that -L follows them.
            let item = WalkItem::Special {
                path: name::path_buf(path.to_vec()),
                kind: SpecialKind::Symlink,
            };
            let excluded = excludes::is_excluded(self.excludes.as_ref(), path, false);
            return (!excluded).then_some((false, Found::Item(item)));
        } else {
            match listing.stat(name, true) {
                Ok(st) => (st.kind, Some(st)),
                Err(e) => return error(e),
            }
        };
        let is_dir = kind == file_kind::DIRECTORY;
        if excludes::is_excluded(self.excludes.as_ref(), path, is_dir) {
            return None;
        }
        if is_dir {
            // Its entries would be deeper than asked: not even opened.
            if directory.depth + 1 >= deepest {
                return None;
            }
            let child = self.descend(listing, name, path, link_target, directory)?;
            return Some((true, child));
        }
        let found = match SpecialKind::of_mode(kind) {
            Some(kind) => Found::Item(WalkItem::Special {
                path: name::path_buf(path.to_vec()),
                kind,
            }),
            None if kind == file_kind::FILE => self.file(listing, name, listed.ino, link_target),
            None => return None,
        };
        Some((false, found))
    }

    /// A regular file: its inode (a followed link's is the target's) and,
    /// only when asked (a stat per file the hashing does not need), its
    /// size: `fstatat` in the open directory, or the followed link's stat
    /// already taken.
    fn file(
        &self,
        listing: &Listing,
        name: &[u8],
        ino: u64,
        link_target: Option<FileStamp>,
    ) -> Found {
        let size = match (self.options.sizes, &link_target) {
            (false, _) => None,
            (true, Some(st)) => Some(st.size),
            (true, None) => listing.stat(name, false).ok().map(|st| st.size),
        };
        Found::File {
            size,
            ino: link_target.map_or(ino, |st| st.ino),
        }
    }

    /// The subdirectory `name` (at `path`) as a directory to read, unless
    /// it is on another file system with `--one-file-system` (`None`); a
    /// subdirectory that cannot be stat-ed, or (links followed) that is one
    /// of its own ancestors, is an error item.
    fn descend(
        &self,
        listing: &Listing,
        name: &[u8],
        path: &[u8],
        followed: Option<FileStamp>,
        parent: &Directory,
    ) -> Option<Found> {
        let needs_stat = self.options.one_file_system
            || self.options.refuse_generated
            || parent.ancestry.is_some();
        let st = match followed {
            Some(st) => Some(st),
            None if needs_stat => match listing.stat(name, self.options.follow_links) {
                Ok(st) => Some(st),
                Err(e) => return Some(Found::Item(error_at(path, e))),
            },
            None => None,
        };
        if self.options.one_file_system && st.is_some_and(|st| st.dev != self.root_dev) {
            return None;
        }
        if self.options.refuse_generated && st.is_some_and(|st| crate::fs::generated(st.dev)) {
            let why = "a generated file system (as /proc or /sys): not walked";
            let error = Error::with_path(name::path(path).into_owned(), std::io::Error::other(why));
            return Some(Found::Item(WalkItem::Error(error)));
        }
        let ancestry = match (&parent.ancestry, st) {
            (Some(chain), Some(st)) => {
                if let Some(ancestor) = chain.find(st.dev, st.ino) {
                    let error = Error::with_path(
                        name::path(path).into_owned(),
                        ErrorKind::FilesystemLoop {
                            ancestor: ancestor.path.clone(),
                        },
                    );
                    return Some(Found::Item(WalkItem::Error(error)));
                }
                Some(Arc::new(Ancestor {
                    dev: st.dev,
                    ino: st.ino,
                    path: name::path(path).into_owned(),
                    parent: Some(chain.clone()),
                }))
            }
            _ => None,
        };
        Some(Found::Directory(Directory {
            path: path.to_vec(),
            ancestry,
            depth: parent.depth + 1,
        }))
    }
}

/// A directory entry as `readdir` gave it, with its path built.
struct Entry<'a> {
    listing: &'a Listing,
    name: &'a [u8],
    path: &'a [u8],
    listed: Listed,
}

/// One entry of a directory as the walk classifies it.
pub(super) enum Found {
    /// A regular file of the directory being read: its path is the
    /// directory's joined with the name handed beside it, made only when
    /// the file is handed on (a large directory's sorted listing holds
    /// names, not paths).
    File {
        /// As [`WalkItem::File`]'s.
        size: Option<u64>,
        /// As [`WalkItem::File`]'s.
        ino: u64,
    },
    /// Something else to report: a special file, an error.
    Item(WalkItem),
    /// A subdirectory to read.
    Directory(Directory),
}

/// The path of the entry `child` of the directory at `directory`, as the
/// walk spells it.
pub(super) fn child_path(directory: &[u8], child: &[u8]) -> PathBuf {
    let mut path = Vec::with_capacity(directory.len() + 1 + child.len());
    path.extend_from_slice(directory);
    if !path.last().is_some_and(|&b| name::is_separator(b)) {
        path.push(name::SEPARATOR);
    }
    path.extend_from_slice(child);
    name::path_buf(path)
}

/// `error` as the walk item for `path`.
pub(super) fn error_at(path: &[u8], error: io::Error) -> WalkItem {
    WalkItem::Error(Error::with_path(name::path(path).into_owned(), error))
}

#[cfg(test)]
mod tests;
