//! The page cache as fastsum asks about it: is a file's first page there,
//! read it ahead, drop it (issue 16). Linux system calls behind small safe
//! functions; the policy is `pipeline/prefetch.rs`'s.

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Opens `path` for reading without blocking on a FIFO or taking a
/// terminal (a path may have become one since the walk).
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// Whether the first byte of `file` is in the page cache, asked without
/// waiting for the device. A kernel that cannot say counts as cold.
pub(crate) fn first_page_resident(file: &File) -> bool {
    let mut byte = 0u8;
    let iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    // SAFETY: the iovec points at one byte we own for the duration of the
    // call; the descriptor is open while `file` is borrowed.
    let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, 0, libc::RWF_NOWAIT) };
    n > 0
}

/// Asks the kernel to read the first `len` bytes of `file` into the page
/// cache, without waiting for them.
pub(crate) fn will_need(file: &File, len: u64) {
    will_need_range(file, 0, len);
}

/// Asks the kernel to read `len` bytes of `file` from `offset` into the
/// page cache, without waiting for them.
pub(crate) fn will_need_range(file: &File, offset: u64, len: u64) {
    // SAFETY: posix_fadvise only reads the descriptor number and the range;
    // the descriptor is open while `file` is borrowed. Advice only, so a
    // failure is ignored.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_WILLNEED,
        );
    }
}

/// Drops the page cache of the file at `path` (it was cold before this run
/// read it: `--no-cache-pollution`).
pub(crate) fn drop_cached(path: &Path) {
    let Ok(file) = open_nonblocking(path) else {
        return;
    };
    // SAFETY: as in `will_need`.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}
