//! Directories: listing one for the walk ([`Listing`]: on Linux
//! `opendir`/`readdir` with each entry's `d_type`, elsewhere
//! `std::fs::read_dir`), and opening and stat-ing files relative to their
//! directory (`DirectoryCursor`).
//!
//! A worker's files come mostly a directory at a time (the walk sends a
//! directory's files together). Resolving each full path again costs a
//! lookup per component; with the directory kept open, `openat` and
//! `fstatat` resolve one name. On the 50,000-file tree, full-path lookups
//! were a fifth of the CPU of an uncached MD5 run and a third of a cached
//! one. The portable path opens and stats by the full path.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::name;
use super::stat::{kind, FileStamp};
#[cfg(target_os = "linux")]
use std::{
    ffi::{CStr, CString},
    os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
    os::unix::fs::OpenOptionsExt,
};

/// The directory of the last file asked for, kept open.
#[derive(Debug, Default)]
pub struct DirectoryCursor {
    #[cfg(target_os = "linux")]
    current: Option<(PathBuf, OwnedFd)>,
    /// The last name resolved, NUL-terminated (reused: no allocation per
    /// file).
    #[cfg(target_os = "linux")]
    name: Vec<u8>,
}

impl DirectoryCursor {
    /// A cursor with nothing open yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The open directory of `path` and its last component; `None` when
    /// `path` has no plain last name (it ends in `/`, `.` or `..`) or its
    /// directory cannot be opened (then the full path's own error is the
    /// one to report).
    ///
    /// The path is split at its last `/` as bytes: `Path::file_name` and
    /// `Path::parent` parse components, a measurable cost per file.
    #[cfg(target_os = "linux")]
    fn resolve(&mut self, path: &Path) -> Option<(&OwnedFd, &CStr)> {
        use std::os::unix::ffi::OsStrExt;
        if super::portable() {
            return None;
        }
        let bytes = path.as_os_str().as_bytes();
        let (parent, name) = match bytes.iter().rposition(|&b| b == b'/') {
            Some(0) => (&b"/"[..], &bytes[1..]),
            Some(slash) => (&bytes[..slash], &bytes[slash + 1..]),
            None => (&b"."[..], bytes),
        };
        if matches!(name, b"" | b"." | b"..") || name.contains(&0) {
            return None;
        }
        // Bytes, not `Path` equality (which compares component by
        // component, a measurable cost per file).
        let same = self
            .current
            .as_ref()
            .is_some_and(|(p, _)| p.as_os_str().as_bytes() == parent);
        if !same {
            let parent = Path::new(std::ffi::OsStr::from_bytes(parent));
            let directory = File::options()
                .read(true)
                .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
                .open(parent)
                .ok()?;
            self.current = Some((parent.to_path_buf(), directory.into()));
        }
        self.name.clear();
        self.name.extend_from_slice(name);
        self.name.push(0);
        let name = CStr::from_bytes_with_nul(&self.name).ok()?;
        let (_, fd) = self.current.as_ref()?;
        Some((fd, name))
    }

    /// The directory `path`'s file is in, as spelled in `path` (`.` for a
    /// bare name), if it is open.
    pub fn directory(&self) -> Option<&Path> {
        #[cfg(target_os = "linux")]
        return self.current.as_ref().map(|(p, _)| p.as_path());
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Opens `path` for reading, as `File::open` does (following symlinks);
    /// with `listed`, without waiting (a FIFO opens at once, for the
    /// caller to refuse: see [`crate::read::open_regular`]).
    pub fn open(&mut self, path: &Path, listed: bool) -> io::Result<File> {
        #[cfg(target_os = "linux")]
        if let Some((directory, name)) = self.resolve(path) {
            let flags = if listed {
                libc::O_NONBLOCK | libc::O_NOCTTY
            } else {
                0
            };
            // SAFETY: `directory` is an open descriptor we own, `name` is
            // NUL-terminated; openat returns a new descriptor or -1.
            let fd = unsafe {
                libc::openat(
                    directory.as_raw_fd(),
                    name.as_ptr(),
                    libc::O_RDONLY | libc::O_CLOEXEC | flags,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` was just returned by openat and is owned by no
            // one else.
            return Ok(unsafe { File::from_raw_fd(fd) });
        }
        if listed {
            return super::residency::open_nonblocking(path);
        }
        File::open(path)
    }

    /// `stat(path)`, following symlinks, as `std::fs::metadata` does.
    pub fn stat(&mut self, path: &Path) -> io::Result<FileStamp> {
        #[cfg(target_os = "linux")]
        if let Some((directory, name)) = self.resolve(path) {
            return super::stat::stat_at(directory.as_raw_fd(), name, true);
        }
        super::stat::stat_path(path)
    }

    /// `lstat(path)`: a symbolic link's own stamp, never its target's
    /// (`contained` follows no link inside a tree).
    pub fn lstat(&mut self, path: &Path) -> io::Result<FileStamp> {
        #[cfg(target_os = "linux")]
        if let Some((directory, name)) = self.resolve(path) {
            return super::stat::stat_at(directory.as_raw_fd(), name, false);
        }
        std::fs::symlink_metadata(path).map(|m| FileStamp::of(&m))
    }
}

/// An open directory stream (`opendir`/`readdir`), closed on drop.
#[cfg(target_os = "linux")]
struct DirectoryReader {
    stream: std::ptr::NonNull<libc::DIR>,
}

/// One entry as `readdir` gives it: its name, valid until the next read,
/// and its `d_type`.
#[cfg(target_os = "linux")]
struct RawEntry<'a> {
    /// The entry's name (no NUL).
    name: &'a [u8],
    /// Its `d_type`.
    kind: u8,
    /// Its `d_ino`.
    ino: u64,
}

#[cfg(target_os = "linux")]
impl DirectoryReader {
    /// Opens the directory at `path` (bytes, no NUL inside).
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
        let (name, kind, ino) = unsafe {
            let entry = &*entry;
            (
                CStr::from_ptr(entry.d_name.as_ptr()).to_bytes(),
                entry.d_type,
                entry.d_ino,
            )
        };
        Ok(Some(RawEntry { name, kind, ino }))
    }
}

#[cfg(target_os = "linux")]
impl Drop for DirectoryReader {
    fn drop(&mut self) {
        // SAFETY: the stream is open and closed only here.
        unsafe { libc::closedir(self.stream.as_ptr()) };
    }
}

/// What a listing says of one entry besides its name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Listed {
    /// Its type (`kind::*`), if the listing gives it.
    pub kind: Option<u32>,
    /// Its inode number (0 where the platform gives none).
    pub ino: u64,
}

/// A directory being listed: its entries' names and, where the listing
/// says, their types; and a `stat` of an entry by name.
pub(crate) struct Listing {
    inner: Lister,
}

enum Lister {
    #[cfg(target_os = "linux")]
    Readdir(DirectoryReader),
    Std {
        entries: std::fs::ReadDir,
        directory: PathBuf,
    },
}

impl Listing {
    /// Lists the directory at `path` (a name's bytes, see [`name`]).
    pub(crate) fn open(path: &[u8]) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        if !super::portable() {
            return Ok(Listing {
                inner: Lister::Readdir(DirectoryReader::open(path)?),
            });
        }
        let directory = name::path_buf(path.to_vec());
        Ok(Listing {
            inner: Lister::Std {
                entries: std::fs::read_dir(&directory)?,
                directory,
            },
        })
    }

    /// The next entry: its name into `name` (replacing what was there),
    /// its type (`kind::*`) if the listing gives it, and its inode number
    /// (0 where the platform gives none); `None` at the end. `.` and `..`
    /// may come too.
    pub(crate) fn next(&mut self, name: &mut Vec<u8>) -> io::Result<Option<Listed>> {
        name.clear();
        match &mut self.inner {
            #[cfg(target_os = "linux")]
            Lister::Readdir(reader) => Ok(reader.next()?.map(|entry| {
                name.extend_from_slice(entry.name);
                Listed {
                    // DTTOIF: a d_type is its S_IFMT type shifted down 12 bits.
                    kind: (entry.kind != libc::DT_UNKNOWN).then(|| u32::from(entry.kind) << 12),
                    ino: entry.ino,
                }
            })),
            Lister::Std { entries, .. } => {
                let Some(entry) = entries.next().transpose()? else {
                    return Ok(None);
                };
                name.extend_from_slice(name::bytes(&entry.file_name()));
                #[cfg(unix)]
                let ino = std::os::unix::fs::DirEntryExt::ino(&entry);
                #[cfg(not(unix))]
                let ino = 0;
                Ok(Some(Listed {
                    kind: entry.file_type().ok().and_then(|t| kind::of(&t)),
                    ino,
                }))
            }
        }
    }

    /// The stamp of the entry `name` (following a symbolic link if
    /// `follow`).
    pub(crate) fn stat(&self, name: &[u8], follow: bool) -> io::Result<FileStamp> {
        match &self.inner {
            #[cfg(target_os = "linux")]
            Lister::Readdir(reader) => {
                let name =
                    CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
                super::stat::stat_at(reader.fd(), &name, follow)
            }
            Lister::Std { directory, .. } => {
                let path = directory.join(name::os_str(name));
                if follow {
                    super::stat::stat_path(&path)
                } else {
                    super::stat::lstat_path(&path)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_listing_takes_the_path_the_switch_says() {
        #[cfg(target_os = "linux")]
        assert_eq!(
            super::super::portable(),
            std::env::var_os("FASTSUM_PORTABLE").is_some_and(|v| !v.is_empty() && v != "0")
        );
        let dir = tempfile::tempdir().unwrap();
        let listing = Listing::open(super::name::path_bytes(dir.path())).unwrap();
        let is_std = matches!(listing.inner, Lister::Std { .. });
        assert_eq!(is_std, super::super::portable());
    }

    #[test]
    fn opens_and_stats_like_the_full_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/one"), b"1").unwrap();
        std::fs::write(dir.path().join("a/two"), b"22").unwrap();
        std::fs::write(dir.path().join("three"), b"333").unwrap();
        let mut cursor = DirectoryCursor::new();
        for (name, content) in [("a/one", "1"), ("a/two", "22"), ("three", "333")] {
            let path = dir.path().join(name);
            let mut text = String::new();
            cursor
                .open(&path, false)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            assert_eq!(text, content);
            assert_eq!(cursor.stat(&path).unwrap().size as usize, content.len());
        }
        let missing = cursor.open(&dir.path().join("a/none"), false).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let no_dir = cursor.open(&dir.path().join("nodir/x"), false).unwrap_err();
        assert_eq!(no_dir.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            cursor.stat(&dir.path().join("nodir/x")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn names_that_are_not_plain_take_the_full_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/one"), b"1").unwrap();
        let mut cursor = DirectoryCursor::new();
        let is_dir = |st: FileStamp| st.is_dir();
        // A name right under `/`.
        assert!(is_dir(cursor.stat(Path::new("/tmp")).unwrap()));
        // `.`, `..` and a trailing slash name the directory itself.
        for name in ["a/.", "a/..", "a/"] {
            let path = PathBuf::from(format!("{}/{name}", dir.path().display()));
            assert!(is_dir(cursor.stat(&path).unwrap()), "{name}");
        }
        // A slash too many is still the file.
        let doubled = PathBuf::from(format!("{}/a//one", dir.path().display()));
        assert_eq!(cursor.stat(&doubled).unwrap().size, 1);
        let file_as_dir = PathBuf::from(format!("{}/a/one/", dir.path().display()));
        assert!(cursor.open(&file_as_dir, false).is_err());
    }
}
