//! A member's directory entry, held for the act: its directory opened
//! once and that directory's real path checked against the [`Scope`],
//! then the last stat and the change itself made through the open
//! directory, never by path again. A directory of the path swapped for a
//! link out of the operands between the checks and the act (the hostile
//! pass over issue 63.12: `renameat2(RENAME_EXCHANGE)` in a loop made
//! `--remove` delete files outside every operand) now finds the held
//! directory, whose real path was checked, or is refused.
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

    fn fd(&self) -> libc::c_int {
        std::os::fd::AsRawFd::as_raw_fd(&self.dir)
    }

    /// Its stamp, through the held directory (a link is not followed).
    pub(super) fn stamp(&self) -> io::Result<FileStamp> {
        crate::fs::stat::stat_at(self.fd(), &self.name, false)
    }

    /// Removes it.
    pub(super) fn remove(&self) -> io::Result<()> {
        // SAFETY: the descriptor is open for the call and the name is
        // NUL-terminated; unlinkat only reads them.
        let r = unsafe { libc::unlinkat(self.fd(), self.name.as_ptr(), 0) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
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

    pub(super) fn remove(&self) -> io::Result<()> {
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
