//! What a file is without reading it: `stat` and `fstat` as fastsum calls
//! them, and the values taken from them.
//!
//! [`FileStamp`] identifies one version of a file (the cache trusts a digest
//! only while the stamp is the same, and a stage verifying its read compares
//! the stamp at open with the stamp at the end). [`FileId`] and [`FileLen`]
//! are the newtypes that keep an identity and a length from being mixed up
//! with other integers (dupes groups by both).

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Files modified less than this long before hashing started are not
/// trusted by their stamp alone (timestamps are coarse on some file
/// systems; 2 s covers FAT's): git's racy-git problem.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// A file's identity on this machine: (device, inode). Two paths with the
/// same `FileId` are hard links to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

/// A length or an offset in bytes within a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileLen(pub u64);

impl FileLen {
    /// The number of bytes.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// What identifies a version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    /// `st_mode & S_IFMT`.
    pub kind: u32,
    /// Size in bytes.
    pub size: u64,
    /// Inode number.
    pub ino: u64,
    /// Device.
    pub dev: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// Status-change time, ns since the epoch.
    pub ctime_ns: i64,
}

impl FileStamp {
    /// The stamp of `metadata` (from `stat` or `fstat`).
    pub fn of(metadata: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            kind: metadata.mode() & libc::S_IFMT,
            size: metadata.size(),
            ino: metadata.ino(),
            dev: metadata.dev(),
            mtime_ns: metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec(),
            ctime_ns: metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
        }
    }

    /// The stamp in a raw `stat` buffer.
    pub fn of_stat(st: &libc::stat) -> FileStamp {
        FileStamp {
            kind: st.st_mode & libc::S_IFMT,
            size: st.st_size as u64,
            ino: st.st_ino,
            dev: st.st_dev,
            mtime_ns: st.st_mtime * 1_000_000_000 + st.st_mtime_nsec,
            ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec,
        }
    }

    /// The file's identity (device, inode).
    pub fn id(&self) -> FileId {
        FileId {
            dev: self.dev,
            ino: self.ino,
        }
    }

    /// The file's length.
    pub fn len(&self) -> FileLen {
        FileLen(self.size)
    }

    /// Whether it is the stamp of a regular file.
    pub fn is_file(&self) -> bool {
        self.kind == libc::S_IFREG
    }

    /// Whether a digest of the file taken at `hashed_at_ns` may be trusted
    /// later on the strength of this stamp: both times safely in the past.
    pub fn is_settled_at(&self, hashed_at_ns: i64) -> bool {
        let limit = hashed_at_ns - RACY_WINDOW.as_nanos() as i64;
        self.mtime_ns < limit && self.ctime_ns < limit
    }
}

/// Now, in ns since the epoch.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// `fstat` of an open file. `File::metadata` asks for `statx` with every
/// field, which costs more in the kernel: on 100,000 small files it was
/// 42 ms of CPU against 29 ms for `fstat`.
pub fn fstat(file: &File) -> io::Result<libc::stat> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: an all-zero `stat` is a valid value of that plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open while `file` is borrowed, and `st` is
    // the buffer type fstat writes.
    if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `fstatat` of `name` in the directory open as `dir_fd`, following a
/// symbolic link if `follow`. `dir_fd` must stay open for the call.
pub fn stat_at(
    dir_fd: std::os::fd::RawFd,
    name: &std::ffi::CStr,
    follow: bool,
) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value of that plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    // SAFETY: the caller keeps `dir_fd` open; `name` is NUL-terminated and
    // `st` is the buffer fstatat writes.
    if unsafe { libc::fstatat(dir_fd, name.as_ptr(), &mut st, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `stat` of `path`, following symbolic links.
pub fn stat_path(path: &Path) -> io::Result<libc::stat> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    stat_at(libc::AT_FDCWD, &path, true)
}

/// Whether a `stat` buffer describes a regular file.
pub fn is_regular(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFREG
}
