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
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// File types as `st_mode & S_IFMT` says them, with POSIX's values on
/// every platform (the cache stores them).
pub mod kind {
    /// The mask of the type bits.
    pub const MASK: u32 = 0o170000;
    /// A regular file.
    pub const FILE: u32 = 0o100000;
    /// A directory.
    pub const DIRECTORY: u32 = 0o040000;
    /// A symbolic link.
    pub const SYMLINK: u32 = 0o120000;
    /// A named pipe.
    pub const FIFO: u32 = 0o010000;
    /// A socket.
    pub const SOCKET: u32 = 0o140000;
    /// A character device.
    pub const CHAR_DEVICE: u32 = 0o020000;
    /// A block device.
    pub const BLOCK_DEVICE: u32 = 0o060000;

    /// The kind of a file type from the standard library, if it is one
    /// of these.
    pub fn of(file_type: &std::fs::FileType) -> Option<u32> {
        if file_type.is_symlink() {
            return Some(SYMLINK);
        }
        if file_type.is_dir() {
            return Some(DIRECTORY);
        }
        if file_type.is_file() {
            return Some(FILE);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            let special = [
                (file_type.is_fifo(), FIFO),
                (file_type.is_socket(), SOCKET),
                (file_type.is_char_device(), CHAR_DEVICE),
                (file_type.is_block_device(), BLOCK_DEVICE),
            ];
            if let Some(&(_, kind)) = special.iter().find(|(is, _)| *is) {
                return Some(kind);
            }
        }
        None
    }
}

/// Files modified less than this long before hashing started are not
/// trusted by their stamp alone (timestamps are coarse on some file
/// systems; 2 s covers FAT's): git's racy-git problem.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// How long after its last change a file's stamp is trusted to say its
/// bytes did not change. A write through a shared mapping
/// moves mtime only when it first dirties a clean page; later writes to
/// that page move nothing until the kernel writes it back and write-protects
/// it again. So a stamp is trusted only once the kernel has surely written
/// back what was dirtied when it was set: its dirty-page expiry plus its
/// writeback interval (`vm.dirty_expire_centisecs` +
/// `vm.dirty_writeback_centisecs`, 30 s + 5 s by default), at least
/// [`RACY_WINDOW`]. With periodic writeback off (interval 0) an hour.
/// `FASTSUM_SETTLE_SECONDS` sets it instead (the test suites set 2: their
/// files are never written through mappings). Read once a process.
pub fn settle_window() -> Duration {
    static WINDOW: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *WINDOW.get_or_init(|| {
        let given = std::env::var("FASTSUM_SETTLE_SECONDS").ok();
        let window = match given.and_then(|s| s.trim().parse::<u64>().ok()) {
            Some(seconds) => Duration::from_secs(seconds),
            None => writeback_window().unwrap_or(DEFAULT_SETTLE_WINDOW),
        };
        window.max(RACY_WINDOW)
    })
}

/// The kernel's defaults: 30 s to expire, 5 s between writebacks.
const DEFAULT_SETTLE_WINDOW: Duration = Duration::from_secs(35);

/// The kernel's dirty-page expiry plus its writeback interval, where it
/// says them.
fn writeback_window() -> Option<Duration> {
    let centisecs = |name: &str| -> Option<u64> {
        let text = std::fs::read_to_string(format!("/proc/sys/vm/{name}")).ok()?;
        text.trim().parse().ok()
    };
    let expire = centisecs("dirty_expire_centisecs")?;
    Some(match centisecs("dirty_writeback_centisecs")? {
        0 => Duration::from_secs(3600),
        interval => Duration::from_millis((expire + interval) * 10),
    })
}

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
    /// The stamp of `metadata` (from `stat` or `fstat`). Off Unix the
    /// standard library gives no file identity: `dev` and `ino` are 0
    /// there, and `fstat` fills them in from the open handle.
    pub fn of(metadata: &std::fs::Metadata) -> FileStamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileStamp {
                kind: metadata.mode() & kind::MASK,
                size: metadata.size(),
                ino: metadata.ino(),
                dev: metadata.dev(),
                mtime_ns: metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec(),
                ctime_ns: metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
            }
        }
        #[cfg(not(unix))]
        {
            let kind = kind::of(&metadata.file_type()).unwrap_or(0);
            let ns = |time: io::Result<SystemTime>| {
                time.ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i64)
            };
            let mtime_ns = ns(metadata.modified());
            FileStamp {
                kind,
                size: metadata.len(),
                ino: 0,
                dev: 0,
                mtime_ns,
                // Windows' change time is not in stable std's metadata:
                // [`fstat`] reads it from the handle; until then the later
                // of creation and last write stands for it.
                ctime_ns: ns(metadata.created()).max(mtime_ns),
            }
        }
    }

    /// The stamp in a raw `stat` buffer.
    #[cfg(target_os = "linux")]
    pub(crate) fn of_stat(st: &libc::stat) -> FileStamp {
        FileStamp {
            kind: st.st_mode & kind::MASK,
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
        self.kind == kind::FILE
    }

    /// Whether a read of this file can be held to this stamp (a verified
    /// read): a regular file, not one of a generated file system, whose
    /// bytes are made as they are read (/proc, /sys: their stat says 0 or
    /// 4096).
    pub(crate) fn can_be_verified(&self) -> bool {
        self.is_file() && !super::device::generated(self.dev)
    }

    /// Whether `after`, taken on the open descriptor when a read of
    /// `read` bytes (`None`: a part, not the whole file) ended, shows the
    /// file as this stamp did when it was opened; else it changed while
    /// it was read. The one rule of every verified read.
    pub(crate) fn held_through(&self, after: &FileStamp, read: Option<u64>) -> bool {
        after == self && read.is_none_or(|n| n == self.size)
    }

    /// Whether a whole read of `read` bytes, from a file opened under this
    /// stamp and ending under `after` (both on the open descriptor), is a
    /// read of one version of the file: the stamp held through it, where
    /// the file can be verified, true where it cannot (/proc, /sys, not a
    /// regular file). For a caller that reads a file itself (the CLI's
    /// several digests from one read): false is "file changed while
    /// reading", never a digest.
    pub fn vouches_for_read(&self, after: &FileStamp, read: u64) -> bool {
        !self.can_be_verified() || self.held_through(after, Some(read))
    }

    /// Whether it is the stamp of a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == kind::DIRECTORY
    }

    /// Whether it is the stamp of a symbolic link (not followed).
    pub fn is_symlink(&self) -> bool {
        self.kind == kind::SYMLINK
    }

    /// Whether a digest of the file taken at `hashed_at_ns` may be trusted
    /// later on the strength of this stamp: both times at least
    /// `fs::stat::settle_window` in the past.
    pub fn is_settled_at(&self, hashed_at_ns: i64) -> bool {
        let window = i64::try_from(settle_window().as_nanos()).unwrap_or(i64::MAX);
        let limit = hashed_at_ns.saturating_sub(window);
        self.mtime_ns < limit && self.ctime_ns < limit
    }
}

impl FileStamp {
    /// Whether `other` is this stamp but for the device number: the same
    /// version of the same file on a file system mounted again (another
    /// loop device, a USB disk under another name), as scrub and the cache
    /// tell it. The kind is compared too.
    pub(crate) fn is_remount_of(&self, other: &FileStamp) -> bool {
        *self
            == FileStamp {
                dev: self.dev,
                ..*other
            }
    }

    /// Whether this stamp vouches for a digest taken at `hashed_at_ns`:
    /// settled ([`FileStamp::is_settled_at`]) and on a file system that is
    /// written back (not tmpfs, ramfs, nor a generated one).
    pub(crate) fn vouches_at(&self, hashed_at_ns: i64) -> bool {
        self.is_settled_at(hashed_at_ns) && !super::device::stamps_unreliable(self.dev)
    }
}

/// Now, in ns since the epoch.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The stamp of an open file. On Linux `fstat`: `File::metadata` asks for
/// `statx` with every field, which costs more in the kernel (on 100,000
/// small files it was 42 ms of CPU against 29 ms for `fstat`). On Windows
/// the handle also gives the volume and file index (`dev`, `ino`).
pub fn fstat(file: &File) -> io::Result<FileStamp> {
    #[cfg(target_os = "linux")]
    if !super::portable() {
        use std::os::unix::io::AsRawFd;
        // SAFETY: an all-zero `stat` is a valid value of that plain C struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: the descriptor is open while `file` is borrowed, and `st`
        // is the buffer fstat writes.
        if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        return Ok(FileStamp::of_stat(&st));
    }
    #[allow(unused_mut)]
    let mut stamp = FileStamp::of(&file.metadata()?);
    #[cfg(windows)]
    windows_identity(file, &mut stamp)?;
    Ok(stamp)
}

/// Fills in the stamp's identity (volume serial, file index) and change
/// time from the open handle.
#[cfg(windows)]
fn windows_identity(file: &File, stamp: &mut FileStamp) -> io::Result<()> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        FileBasicInfo, GetFileInformationByHandle, GetFileInformationByHandleEx,
        BY_HANDLE_FILE_INFORMATION, FILE_BASIC_INFO,
    };
    let handle = file.as_raw_handle();
    // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is a valid value of
    // that plain C struct.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open while `file` is borrowed; the call writes
    // one BY_HANDLE_FILE_INFORMATION through the pointer it is given.
    if unsafe { GetFileInformationByHandle(handle, &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    stamp.dev = u64::from(info.dwVolumeSerialNumber);
    stamp.ino = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
    // SAFETY: as above, for FILE_BASIC_INFO.
    let mut basic: FILE_BASIC_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open; the buffer is one FILE_BASIC_INFO and its
    // size is the size passed.
    let ok = unsafe {
        GetFileInformationByHandleEx(
            handle,
            FileBasicInfo,
            (&mut basic as *mut FILE_BASIC_INFO).cast(),
            std::mem::size_of::<FILE_BASIC_INFO>() as u32,
        )
    };
    if ok != 0 {
        // 100 ns ticks since 1601 to ns since 1970.
        const EPOCH_DIFFERENCE_TICKS: i64 = 116_444_736_000_000_000;
        stamp.ctime_ns = (basic.ChangeTime - EPOCH_DIFFERENCE_TICKS).saturating_mul(100);
    }
    Ok(())
}

/// `fstatat` of `name` in the directory open as `dir_fd`, following a
/// symbolic link if `follow`. `dir_fd` must stay open for the call.
#[cfg(target_os = "linux")]
pub(crate) fn stat_at(
    dir_fd: std::os::fd::RawFd,
    name: &std::ffi::CStr,
    follow: bool,
) -> io::Result<FileStamp> {
    // SAFETY: an all-zero `stat` is a valid value of that plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    // SAFETY: the caller keeps `dir_fd` open; `name` is NUL-terminated and
    // `st` is the buffer fstatat writes.
    if unsafe { libc::fstatat(dir_fd, name.as_ptr(), &mut st, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FileStamp::of_stat(&st))
}

/// The stamp of `path`, following symbolic links (`stat`); on Windows the
/// path is opened to learn its identity (directories too).
pub fn stat_path(path: &Path) -> io::Result<FileStamp> {
    #[cfg(target_os = "linux")]
    if !super::portable() {
        let path = std::ffi::CString::new(super::name::path_bytes(path))
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        return stat_at(libc::AT_FDCWD, &path, true);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_FLAG_BACKUP_SEMANTICS: needed to open a directory.
        const BACKUP_SEMANTICS: u32 = 0x0200_0000;
        let file = File::options()
            .read(true)
            .custom_flags(BACKUP_SEMANTICS)
            .open(path)?;
        fstat(&file)
    }
    #[cfg(not(windows))]
    {
        Ok(FileStamp::of(&std::fs::metadata(path)?))
    }
}

/// The stamp of `path` itself, a symbolic link not followed (`lstat`).
pub fn lstat_path(path: &Path) -> io::Result<FileStamp> {
    let metadata = std::fs::symlink_metadata(path)?;
    // Windows' identity comes from a handle (see `stat_path`); elsewhere
    // the metadata has it all.
    if cfg!(windows) && !metadata.file_type().is_symlink() {
        return stat_path(path);
    }
    Ok(FileStamp::of(&metadata))
}
