//! The page cache as fastsum asks about it: is a file's first page there,
//! read it ahead, drop it (issue 16). Linux system calls behind small safe
//! functions; the policy is `pipeline/prefetch.rs`'s. On the portable path
//! every file counts as resident (so nothing is read ahead) and advice is
//! not given.

use std::fs::File;
use std::io;
use std::path::Path;

#[cfg(target_os = "linux")]
use std::os::unix::io::AsRawFd;

/// Opens `path` for reading without blocking on a FIFO or taking a
/// terminal (a path may have become one since the walk).
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
    }
    #[cfg(not(unix))]
    {
        File::open(path)
    }
}

/// Whether the first byte of `file` is in the page cache, asked without
/// waiting for the device. A kernel that cannot say counts as cold; the
/// portable path counts every file as resident.
pub(crate) fn first_page_resident(file: &File) -> bool {
    #[cfg(target_os = "linux")]
    if !super::portable() {
        let mut byte = 0u8;
        let iov = libc::iovec {
            iov_base: (&mut byte as *mut u8).cast(),
            iov_len: 1,
        };
        // SAFETY: the iovec points at one byte we own for the duration of
        // the call; the descriptor is open while `file` is borrowed.
        let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, 0, libc::RWF_NOWAIT) };
        return n > 0;
    }
    let _ = file;
    true
}

/// Asks the kernel to read the first `len` bytes of `file` into the page
/// cache, without waiting for them.
pub(crate) fn will_need(file: &File, len: u64) {
    will_need_range(file, 0, len);
}

/// Gives `advice` for `len` bytes of `file` from `offset` (0 and 0: the
/// whole file). Advice only, so a failure is ignored.
#[cfg(target_os = "linux")]
fn advise(file: &File, offset: u64, len: u64, advice: libc::c_int) {
    if super::portable() {
        return;
    }
    // SAFETY: posix_fadvise only reads the descriptor number and the range;
    // the descriptor is open while `file` is borrowed.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            advice,
        );
    }
}

/// Asks the kernel to read `len` bytes of `file` from `offset` into the
/// page cache, without waiting for them.
pub(crate) fn will_need_range(file: &File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    advise(file, offset, len, libc::POSIX_FADV_WILLNEED);
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

/// Tells the kernel the file will be read front to back (a larger
/// read-ahead).
pub(crate) fn advise_sequential(file: &File) {
    #[cfg(target_os = "linux")]
    advise(file, 0, 0, libc::POSIX_FADV_SEQUENTIAL);
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

/// Drops the page cache of the file at `path` (it was cold before this run
/// read it: `--no-cache-pollution`).
pub(crate) fn drop_cached(path: &Path) {
    #[cfg(target_os = "linux")]
    if let Ok(file) = open_nonblocking(path) {
        advise(&file, 0, 0, libc::POSIX_FADV_DONTNEED);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
}
