//! A member's directory entry, held for the act: its directory opened
//! once and that directory's real path checked against the [`Scope`],
//! then the last stat and the change itself made through the open
//! directory, never by path again. A directory of the path swapped for a
//! link out of the operands between the checks and the act
//! (`renameat2(RENAME_EXCHANGE)` in a loop once made `--remove` delete
//! files outside every operand) now finds the held directory, whose real
//! path was checked, or is refused.
//!
//! Off Linux the entry is its path (no `/proc/self/fd` to read a held
//! directory's real path from).

use std::io;
use std::path::{Path, PathBuf};

use super::scope::Scope;
use crate::fs::FileStamp;

/// One member's entry: its directory (held on Linux) and its name.
pub(super) struct Entry {
    #[cfg(target_os = "linux")]
    dir: std::fs::File,
    #[cfg(target_os = "linux")]
    name: std::ffi::CString,
    #[cfg(not(target_os = "linux"))]
    path: PathBuf,
}

#[cfg(target_os = "linux")]
impl Entry {
    /// The entry of `path`, its directory opened and found under an
    /// operand's real path (`Err`: why not).
    pub(super) fn hold(path: &Path, scope: &Scope) -> Result<Entry, String> {
        use std::os::unix::fs::OpenOptionsExt;
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .ok_or_else(|| "it has no file name".to_string())?;
        let name = std::ffi::CString::new(name.as_encoded_bytes())
            .map_err(|_| "its name holds a NUL byte".to_string())?;
        let dir = std::fs::File::options()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(parent)
            .map_err(|e| format!("its directory cannot be opened: {e}"))?;
        let fd = std::os::fd::AsRawFd::as_raw_fd(&dir);
        let real = std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .map_err(|e| format!("its directory's real path cannot be read: {e}"))?;
        let real_entry = real
            .join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name.as_bytes()));
        if !scope.holds(&real_entry) {
            return Err(format!(
                "its directory's real path {} is outside every operand (it changed since it \
                 was checked)",
                crate::escape::display_path(&real)
            ));
        }
        Ok(Entry { dir, name })
    }

    /// Its directory entry as `actions::entry_of` names one: the held
    /// directory's device and inode, and the name.
    pub(super) fn dir_entry(&self) -> Option<(u64, u64, std::ffi::OsString)> {
        use std::os::unix::fs::MetadataExt;
        let dir = self.dir.metadata().ok()?;
        let name =
            <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(self.name.as_bytes());
        Some((dir.dev(), dir.ino(), name.to_os_string()))
    }

    fn fd(&self) -> libc::c_int {
        std::os::fd::AsRawFd::as_raw_fd(&self.dir)
    }

    /// Its stamp, through the held directory (a link is not followed).
    pub(super) fn stamp(&self) -> io::Result<FileStamp> {
        crate::fs::stat::stat_at(self.fd(), &self.name, false)
    }

    /// Opens it through the held directory (no link followed, never
    /// blocking on a FIFO or a device) and takes an exclusive `flock` on
    /// it without waiting; the open file must be the one `expected`
    /// stamps (`Err`: why not, another run's lock included).
    pub(super) fn lock(&self, expected: &FileStamp) -> Result<Lock, String> {
        // SAFETY: the descriptor is open for the call and the name is
        // NUL-terminated; openat only reads them.
        let fd = unsafe {
            libc::openat(
                self.fd(),
                self.name.as_ptr(),
                libc::O_RDONLY
                    | libc::O_NOFOLLOW
                    | libc::O_NONBLOCK
                    | libc::O_NOCTTY
                    | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(format!(
                "it cannot be opened to be locked: {}",
                io::Error::last_os_error()
            ));
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        Lock::take(file, expected, "it")
    }

    /// Removes it, if it is still the file `expected` stamps: the name is
    /// first renamed to a temporary name beside it (`RENAME_NOREPLACE`),
    /// the file under that name stat-ed, and only that file unlinked; a
    /// file renamed onto the name since the last check (by another
    /// process, between the stat and the unlink) is renamed back and left.
    /// Should renaming back fail, the file stays under the temporary name, which the
    /// error names: it is never removed.
    pub(super) fn remove(&self, expected: &FileStamp) -> io::Result<()> {
        let tmp_name = removal_name();
        let tmp = std::ffi::CString::new(tmp_name.clone()).map_err(io::Error::other)?;
        rename_noreplace(self.fd(), &self.name, &tmp)?;
        let parked = crate::fs::stat::stat_at(self.fd(), &tmp, false);
        // A rename moves the ctime (on most file systems); all else, the
        // identity (device, inode) first, must be the checked file's.
        let same = parked.as_ref().is_ok_and(|now| {
            FileStamp {
                ctime_ns: expected.ctime_ns,
                ..*now
            } == *expected
        });
        if same {
            // SAFETY: the descriptor is open for the call and the name is
            // NUL-terminated; unlinkat only reads them.
            if unsafe { libc::unlinkat(self.fd(), tmp.as_ptr(), 0) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            let _ = rename_noreplace(self.fd(), &tmp, &self.name);
            return Err(e);
        }
        let why = match parked {
            Ok(_) => "another file was put at its name just before the removal",
            Err(_) => "it could not be stat-ed under its temporary name",
        };
        match rename_noreplace(self.fd(), &tmp, &self.name) {
            Ok(()) => Err(io::Error::other(format!("{why}: left as it is"))),
            Err(e) => Err(io::Error::other(format!(
                "{why}, and renaming it back failed ({e}): IT IS LEFT UNDER THE NAME {} IN ITS \
                 DIRECTORY (nothing was removed)",
                crate::escape::display_path(Path::new(&crate::fs::name::os_string(tmp_name)))
            ))),
        }
    }

    /// Replaces it with what `make` makes at a temporary name beside it
    /// (a path: the held directory by its descriptor, so that no swap of
    /// the path above can redirect it), renamed over it; cleans up on failure.
    pub(super) fn replace(&self, make: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
        let tmp_name = super::leftovers::temporary_name(self.name.as_bytes(), std::process::id());
        let tmp = std::ffi::CString::new(tmp_name.clone()).map_err(io::Error::other)?;
        let through = PathBuf::from(format!("/proc/self/fd/{}", self.fd()))
            .join(crate::fs::name::os_string(tmp_name));
        make(&through)?;
        // SAFETY: the descriptor is open for the call and both names are
        // NUL-terminated; renameat only reads them.
        let r = unsafe { libc::renameat(self.fd(), tmp.as_ptr(), self.fd(), self.name.as_ptr()) };
        if r != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: as above, for unlinkat.
            unsafe { libc::unlinkat(self.fd(), tmp.as_ptr(), 0) };
            return Err(e);
        }
        Ok(())
    }
}

/// An exclusive `flock` on an open file, released when dropped: two
/// runs acting at once (each one's member the other's kept file) never
/// both act, the second seeing the lock or, after, the file gone.
pub(super) struct Lock {
    #[cfg(unix)]
    _file: std::fs::File,
}

impl Lock {
    /// Locks `file` without waiting; it must be the file `expected`
    /// stamps (`what` names it in the reasons).
    #[cfg(unix)]
    fn take(file: std::fs::File, expected: &FileStamp, what: &str) -> Result<Lock, String> {
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        // SAFETY: `fd` is open (owned by `file`) for the call.
        if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EWOULDBLOCK) => {
                    format!("another run holds {what} (a lock on it): left as it is")
                }
                _ => format!("{what} cannot be locked: {e}"),
            });
        }
        match file.metadata() {
            Ok(m) if FileStamp::of(&m) == *expected => Ok(Lock { _file: file }),
            Ok(_) => Err(format!("{what} changed since it was checked")),
            Err(e) => Err(format!("{what} cannot be stat-ed: {e}")),
        }
    }

    /// Opens `path` (no link followed at its end, never blocking) and
    /// locks it as [`Entry::lock`] does.
    pub(super) fn path(path: &Path, expected: &FileStamp, what: &str) -> Result<Lock, String> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let file = std::fs::File::options()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(path)
                .map_err(|e| format!("{what} cannot be opened to be locked: {e}"))?;
            Lock::take(file, expected, what)
        }
        #[cfg(not(unix))]
        {
            let _ = (path, expected, what);
            Ok(Lock {})
        }
    }
}

/// A name for a file about to be removed, beside it:
/// `.fastsum-remove-PID-NANOS` (never shaped as the actions' leftovers,
/// `.fastsum-NAME.PID.tmp`, so that clearing those never takes it).
#[cfg(target_os = "linux")]
fn removal_name() -> Vec<u8> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(".fastsum-remove-{}-{nanos}", std::process::id()).into_bytes()
}

/// `renameat2(dir, from, dir, to, RENAME_NOREPLACE)`.
#[cfg(target_os = "linux")]
fn rename_noreplace(
    dir: libc::c_int,
    from: &std::ffi::CStr,
    to: &std::ffi::CStr,
) -> io::Result<()> {
    // SAFETY: the descriptor is open for the call and both names are
    // NUL-terminated; renameat2 only reads them. The raw system call
    // (not libc's wrapper, missing from some C libraries) takes these
    // arguments in this order.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            dir,
            from.as_ptr(),
            dir,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
impl Entry {
    pub(super) fn hold(path: &Path, _scope: &Scope) -> Result<Entry, String> {
        Ok(Entry {
            path: path.to_path_buf(),
        })
    }

    pub(super) fn stamp(&self) -> io::Result<FileStamp> {
        std::fs::symlink_metadata(&self.path).map(|m| FileStamp::of(&m))
    }

    pub(super) fn lock(&self, expected: &FileStamp) -> Result<Lock, String> {
        Lock::path(&self.path, expected, "it")
    }

    pub(super) fn dir_entry(&self) -> Option<(u64, u64, std::ffi::OsString)> {
        None
    }

    pub(super) fn remove(&self, _expected: &FileStamp) -> io::Result<()> {
        std::fs::remove_file(&self.path)
    }

    pub(super) fn replace(&self, make: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
        let dir = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = self.path.file_name().unwrap_or_default().as_encoded_bytes();
        let tmp_name = super::leftovers::temporary_name(name, std::process::id());
        let tmp = dir.join(crate::fs::name::os_string(tmp_name));
        make(&tmp)?;
        if let Err(e) = std::fs::rename(&tmp, &self.path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(())
    }
}
