//! The file `--update` writes: beside the list's real file
//! (a symlinked list's target is updated and the link kept), created new
//! with the old file's mode and owner, and renamed over it in one step, so
//! the list is always the old one or the new one. The temporary file is
//! removed if the run is interrupted (SIGINT, SIGTERM, SIGHUP); one that a
//! killed run left is removed when it is provably stale (its process is
//! gone) and reported otherwise.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::mode::own_files::{aside_name, target_of, ASIDE};

/// The new list being written, and the file it will replace.
pub(in crate::mode) struct Aside {
    path: PathBuf,
    target: PathBuf,
}

/// `path` as a message names it: quoted as coreutils quotes names, so a
/// list named `L\nfastsum: ...` cannot forge a line of its own.
pub(in crate::mode) fn named(path: &Path) -> String {
    crate::term::named_path(path)
}

impl Aside {
    /// Creates the new list beside `list`'s real file, with its mode and
    /// owner. `Err` says why nothing can be written.
    pub(in crate::mode) fn create(list: &Path) -> Result<(File, Aside), String> {
        let target = target_of(list);
        let path = aside_name(&target, std::process::id());
        let said = |e: io::Error| format!("{}: {}", named(&path), fastsum::Error::os_message(&e));
        let mut options = std::fs::File::options();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(said)?;
        let aside = Aside { path, target };
        if let Err(why) = aside.keep_mode_and_owner(&file) {
            aside.discard();
            return Err(why);
        }
        interrupt::arm(&aside.path);
        Ok((file, aside))
    }

    /// Gives the new file the old one's owner, then its mode (a change of
    /// owner clears the set-id bits). An owner that cannot be kept is
    /// refused: the list would change hands.
    #[cfg(unix)]
    fn keep_mode_and_owner(&self, file: &File) -> Result<(), String> {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        use std::os::unix::io::AsRawFd;
        let Ok(old) = std::fs::metadata(&self.target) else {
            return Ok(()); // a new list: the umask's mode
        };
        let now = file.metadata().map_err(|e| e.to_string())?;
        if (now.uid(), now.gid()) != (old.uid(), old.gid()) {
            // SAFETY: the descriptor is open while `file` is borrowed.
            if unsafe { libc::fchown(file.as_raw_fd(), old.uid(), old.gid()) } != 0 {
                let e = io::Error::last_os_error();
                return Err(format!(
                    "{}: cannot keep its owner ({}:{}): {}",
                    named(&self.target),
                    old.uid(),
                    old.gid(),
                    fastsum::Error::os_message(&e)
                ));
            }
        }
        let mode = std::fs::Permissions::from_mode(old.mode() & 0o7777);
        file.set_permissions(mode).map_err(|e| e.to_string())
    }

    #[cfg(not(unix))]
    fn keep_mode_and_owner(&self, file: &File) -> Result<(), String> {
        if let Ok(old) = std::fs::metadata(&self.target) {
            file.set_permissions(old.permissions())
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Puts the new list in the old one's place (one rename).
    pub(in crate::mode) fn commit(self) -> io::Result<()> {
        let renamed = std::fs::rename(&self.path, &self.target);
        interrupt::disarm();
        if renamed.is_err() {
            let _ = std::fs::remove_file(&self.path);
        }
        renamed
    }

    /// Removes the new list: the old one stays.
    pub(in crate::mode) fn discard(self) {
        interrupt::disarm();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Says, and removes when provably stale, the temporary files that
/// killed updates of `list` left beside it (`.NAME.fastsum-update.PID`
/// whose process is gone). One whose process still runs is only said: it
/// may be another update at work.
pub(in crate::mode) fn clear_stale(list: &Path, say: &mut dyn FnMut(String)) {
    let target = target_of(list);
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = [&b"."[..], name.as_encoded_bytes(), ASIDE].concat();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .as_encoded_bytes()
            .strip_prefix(&prefix[..])
            .and_then(|pid| std::str::from_utf8(pid).ok())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path();
        if pid == std::process::id() {
            continue;
        }
        if process_alive(pid) {
            say(format!(
                "{}: left by process {pid}, which still runs (another update?): not removed",
                named(&path)
            ));
        } else if std::fs::remove_file(&path).is_ok() {
            say(format!(
                "{}: removed: left by an update that was killed (process {pid} is gone)",
                named(&path)
            ));
        }
    }
}

/// Whether a process `pid` exists (a signal 0 reaches it or is refused).
#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true // cannot tell: never removed
}

/// The temporary file removed on SIGINT, SIGTERM or SIGHUP, before the
/// signal does what it would have done.
#[cfg(unix)]
mod interrupt {
    use std::ffi::CString;
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, Ordering};

    static ASIDE: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    extern "C" fn on_signal(signal: libc::c_int) {
        let path = ASIDE.swap(std::ptr::null_mut(), Ordering::SeqCst);
        // SAFETY: unlink, signal and raise are async-signal-safe; `path`,
        // when set, is a NUL-terminated string leaked by `arm` and never
        // freed once swapped out here.
        unsafe {
            if !path.is_null() {
                libc::unlink(path);
            }
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }

    pub(in crate::mode) fn arm(path: &Path) {
        let Ok(path) = CString::new(path.as_os_str().as_encoded_bytes()) else {
            return;
        };
        let old = ASIDE.swap(path.into_raw(), Ordering::SeqCst);
        if !old.is_null() {
            // SAFETY: `old` came from CString::into_raw in an earlier arm.
            drop(unsafe { CString::from_raw(old) });
        }
        for signal in SIGNALS {
            // SAFETY: installs a handler that only calls async-signal-safe
            // functions.
            unsafe { libc::signal(signal, on_signal as *const () as libc::sighandler_t) };
        }
    }

    pub(in crate::mode) fn disarm() {
        for signal in SIGNALS {
            // SAFETY: restores the default action.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
        let old = ASIDE.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !old.is_null() {
            // SAFETY: `old` came from CString::into_raw in `arm`.
            drop(unsafe { CString::from_raw(old) });
        }
    }
}

#[cfg(not(unix))]
mod interrupt {
    pub(in crate::mode) fn arm(_path: &std::path::Path) {}
    pub(in crate::mode) fn disarm() {}
}
