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
//!   instead of being walked for ever. Unfollowed links are left out
//!   silently, as `find -type f` leaves them out.
//! * **FIFOs, sockets and devices** are never opened (opening a FIFO blocks
//!   until a writer comes; reading a device may never end): they are
//!   reported as [`WalkItem::Special`] so the caller can say it skipped them.
//! * **Excludes** are gitignore-style globs (`*.log`, `build/`, `/top-only`)
//!   matched relative to the root; an excluded directory is not entered.
//! * **Errors** (an unreadable directory, an entry that vanished between
//!   `readdir` and `stat`) are reported with their path, and the walk goes on.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use crate::error::{Error, ErrorKind, Result};

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

/// Walks `root` in parallel and hands every item to `sink`, from the
/// walker's threads, in no particular order. Returns once the walk is done.
///
/// An invalid exclude glob is the only error returned; everything else
/// arrives as [`WalkItem::Error`].
pub fn walk(root: &Path, options: &WalkOptions, sink: &(dyn Fn(WalkItem) + Sync)) -> Result<()> {
    let (walker, top) = match Walker::new(root, options)? {
        Ok(start) => start,
        Err(item) => {
            sink(item);
            return Ok(());
        }
    };
    let walk = ParallelWalk {
        walker: &walker,
        sink,
        queue: Mutex::new(Queue {
            directories: vec![top],
            busy: 0,
        }),
        ready: Condvar::new(),
    };
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        n => n,
    };
    if threads == 1 {
        walk.run();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| walk.run());
            }
        });
    }
    Ok(())
}

/// Walks `root` on the calling thread and hands every item to `sink` in
/// the byte order of their paths: the order sorting the whole list would
/// give, without holding it. Each directory's entries are sorted by name,
/// a directory's name taken with a `/` after it (`a.txt` comes before the
/// files of `a/`, as `.` sorts before `/`), and each subdirectory is walked
/// at its place. A directory that cannot be read is reported at its place.
///
/// An invalid exclude glob is the only error returned; everything else
/// arrives as [`WalkItem::Error`].
pub fn walk_sorted(
    root: &Path,
    options: &WalkOptions,
    sink: &mut dyn FnMut(WalkItem),
) -> Result<()> {
    let (walker, top) = match Walker::new(root, options)? {
        Ok(start) => start,
        Err(item) => {
            sink(item);
            return Ok(());
        }
    };
    let mut stack = vec![walker.sorted_entries(&top)];
    while let Some(entries) = stack.last_mut() {
        match entries.next() {
            None => {
                stack.pop();
            }
            Some(Found::Item(item)) => sink(item),
            Some(Found::Directory(directory)) => stack.push(walker.sorted_entries(&directory)),
        }
    }
    Ok(())
}

/// A directory still to read.
struct Directory {
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

/// The directories waiting, and how many threads are reading one (the walk
/// is over when none wait and none are busy).
struct Queue {
    directories: Vec<Directory>,
    busy: usize,
}

/// A walk on several threads, sharing a stack of directories.
struct ParallelWalk<'a> {
    walker: &'a Walker<'a>,
    sink: &'a (dyn Fn(WalkItem) + Sync),
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl ParallelWalk<'_> {
    /// One walker thread: reads directories until there are none left.
    fn run(&self) {
        let mut found = Vec::new();
        let mut queue = self.queue.lock().expect("walk queue");
        loop {
            let Some(directory) = queue.directories.pop() else {
                if queue.busy == 0 {
                    self.ready.notify_all();
                    return;
                }
                queue = self.ready.wait(queue).expect("walk queue");
                continue;
            };
            queue.busy += 1;
            drop(queue);
            let read = self
                .walker
                .read(&directory, &mut |_, _, entry| match entry {
                    Found::Item(item) => (self.sink)(item),
                    Found::Directory(child) => found.push(child),
                });
            if let Err(e) = read {
                (self.sink)(error_at(&directory.path, e));
            }
            queue = self.queue.lock().expect("walk queue");
            queue.busy -= 1;
            let more = !found.is_empty();
            queue.directories.append(&mut found);
            if more || queue.busy == 0 {
                self.ready.notify_all();
            }
        }
    }
}

/// What every walk shares: the options, the excludes and the root's device.
struct Walker<'a> {
    options: &'a WalkOptions,
    excludes: Option<ignore::overrides::Override>,
    root_dev: libc::dev_t,
}

impl<'a> Walker<'a> {
    /// The walker and the root as the first directory to read; the root's
    /// error as an item if it cannot be stat-ed. The root is walked even
    /// when it is a symbolic link to a directory.
    fn new(
        root: &Path,
        options: &'a WalkOptions,
    ) -> Result<std::result::Result<(Walker<'a>, Directory), WalkItem>> {
        let excludes = if options.excludes.is_empty() {
            None
        } else {
            Some(exclude_overrides(root, &options.excludes)?)
        };
        let root_stat = match crate::io::stat_path(root) {
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
        };
        let top = Directory {
            path: root.as_os_str().as_bytes().to_vec(),
            ancestry,
        };
        Ok(Ok((walker, top)))
    }

    /// The entries of `directory` in the order [`walk_sorted`] reports
    /// them; an error reading it comes last.
    fn sorted_entries(&self, directory: &Directory) -> std::vec::IntoIter<Found> {
        let mut entries: Vec<(usize, bool, Found)> = Vec::new();
        let read = self.read(directory, &mut |name, is_dir, found| {
            entries.push((name.len(), is_dir, found));
        });
        fn name(found: &Found, len: usize) -> &[u8] {
            let path = found.path_bytes();
            &path[path.len().saturating_sub(len)..]
        }
        entries.sort_unstable_by(|a, b| compare_names(name(&a.2, a.0), a.1, name(&b.2, b.0), b.1));
        let mut entries: Vec<Found> = entries.into_iter().map(|(_, _, found)| found).collect();
        if let Err(e) = read {
            entries.push(Found::Item(error_at(&directory.path, e)));
        }
        entries.into_iter()
    }

    /// Reads `directory` and hands each entry to `found`, in `readdir`'s
    /// order, with its name and whether it is a directory (after following
    /// a link). An error opening or reading `directory` itself is returned
    /// (entries read before it were handed on).
    fn read(
        &self,
        directory: &Directory,
        found: &mut dyn FnMut(&[u8], bool, Found),
    ) -> io::Result<()> {
        let mut reader = DirectoryReader::open(&directory.path)?;
        let mut path = directory.path.clone();
        if path.last() != Some(&b'/') {
            path.push(b'/');
        }
        let base = path.len();
        let fd = reader.fd();
        while let Some(entry) = reader.next()? {
            let name = entry.name;
            if name == b"." || name == b".." {
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
            if self.is_excluded(&path, is_dir) {
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
                None if kind == libc::S_IFREG => WalkItem::File { path: file },
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

    fn is_excluded(&self, path: &[u8], is_dir: bool) -> bool {
        self.excludes.as_ref().is_some_and(|excludes| {
            excludes
                .matched(Path::new(OsStr::from_bytes(path)), is_dir)
                .is_ignore()
        })
    }
}

/// One entry of a directory as the walk classifies it.
enum Found {
    /// Something to report: a file, a special file, an error.
    Item(WalkItem),
    /// A subdirectory to read.
    Directory(Directory),
}

impl Found {
    /// The path of the entry (every item the walk makes has one).
    fn path_bytes(&self) -> &[u8] {
        let path = match self {
            Found::Item(WalkItem::File { path } | WalkItem::Special { path, .. }) => path,
            Found::Item(WalkItem::Error(error)) => error.path().unwrap_or(Path::new("")),
            Found::Directory(directory) => return &directory.path,
        };
        path.as_os_str().as_bytes()
    }
}

/// Orders two names of one directory as their paths sort, a directory's
/// name standing for every path under it: as if it ended in `/`.
fn compare_names(a: &[u8], a_is_dir: bool, b: &[u8], b_is_dir: bool) -> std::cmp::Ordering {
    let common = a.len().min(b.len());
    a[..common].cmp(&b[..common]).then_with(|| {
        let slash = |is_dir: bool| is_dir.then_some(&b'/');
        a[common..]
            .iter()
            .chain(slash(a_is_dir))
            .cmp(b[common..].iter().chain(slash(b_is_dir)))
    })
}

/// `fstatat` of `name` (as `readdir` gave it: no NUL inside) in the
/// directory open as `dir_fd`.
fn stat_name(dir_fd: RawFd, name: &[u8], follow: bool) -> io::Result<libc::stat> {
    let name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    crate::io::stat_at(dir_fd, &name, follow)
}

/// `error` as the walk item for `path`.
fn error_at(path: &[u8], error: io::Error) -> WalkItem {
    WalkItem::Error(Error::with_path(Path::new(OsStr::from_bytes(path)), error))
}

/// An open directory stream (`opendir`/`readdir`), closed on drop.
struct DirectoryReader {
    stream: std::ptr::NonNull<libc::DIR>,
}

/// One entry as `readdir` gives it: its name, valid until the next read,
/// and its `d_type`.
struct RawEntry<'a> {
    name: &'a [u8],
    kind: u8,
}

impl DirectoryReader {
    fn open(path: &[u8]) -> io::Result<Self> {
        let c_path =
            CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: `c_path` is NUL-terminated; opendir returns a stream or null.
        let stream = unsafe { libc::opendir(c_path.as_ptr()) };
        std::ptr::NonNull::new(stream)
            .map(|stream| DirectoryReader { stream })
            .ok_or_else(io::Error::last_os_error)
    }

    /// The stream's descriptor, open while the reader lives.
    fn fd(&self) -> RawFd {
        // SAFETY: the stream is open (closed only on drop).
        unsafe { libc::dirfd(self.stream.as_ptr()) }
    }

    /// The next entry, `None` at the end.
    fn next(&mut self) -> io::Result<Option<RawEntry<'_>>> {
        // readdir reports an error only through errno, so clear it first.
        // SAFETY: __errno_location returns this thread's errno slot.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: the stream is open (closed only on drop) and used by this
        // thread alone.
        let entry = unsafe { libc::readdir64(self.stream.as_ptr()) };
        if entry.is_null() {
            let error = io::Error::last_os_error();
            return match error.raw_os_error() {
                Some(0) => Ok(None),
                _ => Err(error),
            };
        }
        // SAFETY: a non-null entry points to a dirent64 that stays valid
        // until the next readdir on this stream, which needs `&mut self`
        // while the returned name borrows it; d_name is NUL-terminated.
        let (name, kind) = unsafe {
            let entry = &*entry;
            (
                CStr::from_ptr(entry.d_name.as_ptr()).to_bytes(),
                entry.d_type,
            )
        };
        Ok(Some(RawEntry { name, kind }))
    }
}

impl Drop for DirectoryReader {
    fn drop(&mut self) {
        // SAFETY: the stream is open and closed only here.
        unsafe { libc::closedir(self.stream.as_ptr()) };
    }
}

/// Checks that every exclude pattern is a valid glob.
pub fn check_excludes(excludes: &[String]) -> Result<()> {
    exclude_overrides(Path::new("/"), excludes).map(drop)
}

/// The excludes as the walker's overrides: each a negated (ignore) glob.
fn exclude_overrides(root: &Path, excludes: &[String]) -> Result<ignore::overrides::Override> {
    let invalid = |glob: &str, e: ignore::Error| {
        let cause = match e {
            ignore::Error::Glob { err, .. } => err,
            other => other.to_string(),
        };
        Error::new(ErrorKind::InvalidGlob {
            glob: glob.to_string(),
            cause,
        })
    };
    let mut overrides = ignore::overrides::OverrideBuilder::new(root);
    for glob in excludes {
        overrides
            .add(&format!("!{glob}"))
            .map_err(|e| invalid(glob, e))?;
    }
    overrides.build().map_err(|e| invalid("", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn collect(root: &Path, options: &WalkOptions) -> (Vec<PathBuf>, Vec<String>) {
        let items = Mutex::new(Vec::new());
        walk(root, options, &|item| items.lock().unwrap().push(item)).unwrap();
        let (mut files, mut other) = (Vec::new(), Vec::new());
        for item in items.into_inner().unwrap() {
            match item {
                WalkItem::File { path } => {
                    files.push(path.strip_prefix(root).unwrap().to_path_buf())
                }
                WalkItem::Special { path, kind } => other.push(format!(
                    "{} {}",
                    path.strip_prefix(root).unwrap().display(),
                    kind.describe()
                )),
                WalkItem::Error(e) => other.push(format!("{:?}", e.kind())),
            }
        }
        files.sort();
        other.sort();
        (files, other)
    }

    #[test]
    fn any_number_of_threads_finds_every_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut expected = Vec::new();
        for a in 0..6 {
            for b in 0..5 {
                let sub = PathBuf::from(format!("d{a}/e{b}"));
                std::fs::create_dir_all(root.join(&sub)).unwrap();
                for f in 0..7 {
                    let file = sub.join(format!("f{f}"));
                    std::fs::write(root.join(&file), "x").unwrap();
                    expected.push(file);
                }
            }
            std::fs::write(root.join(format!("top{a}")), "x").unwrap();
            expected.push(PathBuf::from(format!("top{a}")));
        }
        expected.sort();
        for threads in [1, 2, 4, 7] {
            let options = WalkOptions {
                threads,
                ..WalkOptions::default()
            };
            let (files, other) = collect(root, &options);
            assert_eq!(files, expected, "{threads} threads");
            assert!(other.is_empty());
        }
    }

    #[test]
    fn the_sorted_walk_gives_the_order_of_sorting_every_path() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // Names that sort around `/` (0x2f): ' ', '-', '.', '0', 'A', and
        // bytes past ASCII.
        let dirs: [&[u8]; 6] = [b"a", b"a b", b"a.d", b"a/b", b"a/b.c", b"z\xff"];
        let files: [&[u8]; 13] = [
            b"a.txt",
            b"a-",
            b"a0",
            b"A",
            b"a b/x",
            b"a.d/y",
            b"a/b/c",
            b"a/b.c/d",
            b"a/b/c.txt",
            b"a/b-",
            b"a/b0",
            b"z\xff/q",
            b"\xc3\xa9",
        ];
        for d in dirs {
            std::fs::create_dir_all(root.join(OsStr::from_bytes(d))).unwrap();
        }
        for f in files {
            std::fs::write(root.join(OsStr::from_bytes(f)), "x").unwrap();
        }
        let mut expected: Vec<Vec<u8>> = files
            .iter()
            .map(|f| root.join(OsStr::from_bytes(f)).into_os_string().into_vec())
            .collect();
        expected.sort();
        let mut walked = Vec::new();
        walk_sorted(root, &WalkOptions::default(), &mut |item| {
            if let WalkItem::File { path } = item {
                walked.push(path.into_os_string().into_vec());
            }
        })
        .unwrap();
        assert_eq!(walked, expected);
    }

    #[test]
    fn paths_are_spelled_from_the_root_as_given() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("r")).unwrap();
        std::fs::write(dir.path().join("r/a"), "x").unwrap();
        std::os::unix::fs::symlink("r", dir.path().join("link")).unwrap();
        for (root, expected) in [("r/", "r/a"), ("r", "r/a"), ("link", "link/a")] {
            let root = dir.path().join(root);
            let items = Mutex::new(Vec::new());
            walk(&root, &WalkOptions::default(), &|item| {
                if let WalkItem::File { path } = item {
                    items.lock().unwrap().push(path);
                }
            })
            .unwrap();
            let expected = PathBuf::from(format!("{}/{expected}", dir.path().display()));
            assert_eq!(items.into_inner().unwrap(), [expected]);
        }
    }

    #[test]
    fn a_link_that_cannot_be_followed_is_an_error_and_the_walk_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink("self", root.join("self")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("broken")).unwrap();
        std::fs::write(root.join("file"), "x").unwrap();
        let follow = WalkOptions {
            follow_links: true,
            ..WalkOptions::default()
        };
        let items = Mutex::new(Vec::new());
        walk(root, &follow, &|item| items.lock().unwrap().push(item)).unwrap();
        let mut seen: Vec<String> = items
            .into_inner()
            .unwrap()
            .into_iter()
            .map(|item| match item {
                WalkItem::File { path } => format!("file {}", path.display()),
                WalkItem::Special { path, .. } => format!("special {}", path.display()),
                WalkItem::Error(e) => {
                    format!("error {} {:?}", e.path().unwrap().display(), e.kind())
                }
            })
            .collect();
        seen.sort();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(
            seen[0],
            format!(
                "error {}/broken {:?}",
                root.display(),
                ErrorKind::from(io::Error::from_raw_os_error(libc::ENOENT))
            )
        );
        assert!(
            seen[1].starts_with(&format!("error {}/self ", root.display())),
            "{seen:?}"
        );
        assert_eq!(seen[2], format!("file {}/file", root.display()));
    }

    #[test]
    fn hidden_and_gitignored_files_are_walked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("a.log"), "x").unwrap();
        std::fs::write(root.join(".hidden"), "x").unwrap();
        let (files, other) = collect(root, &WalkOptions::default());
        let names: Vec<_> = files.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(names, [".gitignore", ".hidden", "a.log"]);
        assert!(other.is_empty());
    }

    #[test]
    fn excludes_prune_files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("build/deep")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        for f in ["build/deep/x.c", "src/a.c", "src/a.o", "top.o"] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        let options = WalkOptions {
            excludes: vec!["*.o".into(), "build/".into()],
            ..WalkOptions::default()
        };
        let (files, _) = collect(root, &options);
        assert_eq!(files, [PathBuf::from("src/a.c")]);
    }

    #[test]
    fn fifos_are_reported_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let fifo = root.join("pipe");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: c_path is a valid NUL-terminated path for the call's duration.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        std::fs::write(root.join("file"), "x").unwrap();
        let (files, other) = collect(root, &WalkOptions::default());
        assert_eq!(files, [PathBuf::from("file")]);
        assert_eq!(other, ["pipe fifo"]);
    }

    #[test]
    fn symlinks_are_followed_only_when_asked_and_loops_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/f"), "x").unwrap();
        std::os::unix::fs::symlink("../d", root.join("d/loop")).unwrap();
        std::os::unix::fs::symlink("d/f", root.join("link")).unwrap();
        let (files, other) = collect(root, &WalkOptions::default());
        assert_eq!(files, [PathBuf::from("d/f")]);
        assert!(other.is_empty());
        let follow = WalkOptions {
            follow_links: true,
            ..WalkOptions::default()
        };
        let (files, other) = collect(root, &follow);
        assert_eq!(files, [PathBuf::from("d/f"), PathBuf::from("link")]);
        assert_eq!(other.len(), 1, "{other:?}");
        assert!(other[0].starts_with("FilesystemLoop"), "{other:?}");
    }
}
