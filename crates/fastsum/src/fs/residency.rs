//! The page cache as fastsum asks about it: is a file's first page there,
//! read it ahead, drop it. Linux system calls behind small safe
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

/// [`first_page_resident`], exactly where the kernel can say so: for
/// `--no-cache-pollution`'s gate, where a warm file taken for cold would
/// be dropped from the cache.
pub(crate) fn first_page_cached(file: &File) -> bool {
    #[cfg(target_os = "linux")]
    if !super::portable() {
        if let Some(cached) = cachestat_first_page(file) {
            return cached;
        }
    }
    first_page_resident(file)
}

/// Whether the first page of `file` is in the page cache, from
/// `cachestat(2)` (Linux 6.5): exact, and without side effects, where a
/// `preadv2(RWF_NOWAIT)` that misses starts the page's read (so asking
/// twice may say "cold", then "warm") and may say EAGAIN for a cached page
/// that is locked for a moment (so a warm file may pass for cold; CI
/// twice saw a warm file reported gone after a `--no-cache-pollution` run). The prefetchers keep the `preadv2` probe:
/// its side effect starts a small file's read early (cold small files:
/// 1.28 s with it, 1.42 s with cachestat). `None` where the kernel or the
/// file system does not have it.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn cachestat_first_page(file: &File) -> Option<bool> {
    use std::sync::atomic::{AtomicBool, Ordering};
    // The kernel's `struct cachestat_range` and `struct cachestat`.
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    // 451 in both architectures' tables since Linux 6.5 (libc has no
    // name for it on x86_64 yet).
    const SYS_CACHESTAT: libc::c_long = 451;
    static MISSING: AtomicBool = AtomicBool::new(false);
    if MISSING.load(Ordering::Relaxed) {
        return None;
    }
    let range = Range { off: 0, len: 1 };
    let mut stat = Stat::default();
    // SAFETY: cachestat reads `range` and writes `stat`, both ours and of
    // the kernel's layout, for the duration of the call; the descriptor
    // is open while `file` is borrowed; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut stat as *mut Stat,
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        return Some(stat.nr_cache > 0);
    }
    if io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
        MISSING.store(true, Ordering::Relaxed);
    }
    None
}

/// Other Linux architectures: the `preadv2` probe only.
#[cfg(all(
    target_os = "linux",
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
))]
fn cachestat_first_page(_file: &File) -> Option<bool> {
    None
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
    fadvise(file, offset, len, advice);
}

/// `posix_fadvise`, on the portable path too (for what is not a matter of
/// speed: a scrub's read of the medium).
#[cfg(target_os = "linux")]
fn fadvise(file: &File, offset: u64, len: u64, advice: libc::c_int) {
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
/// read it: `--no-cache-pollution`; or a scrub is about to read it, which
/// must see the bytes on the medium: `TreeOptions::from_disk`). Clean pages
/// only: pages that are dirty, locked or mapped by a process stay. Done on
/// the portable path too: reading the medium is what a scrub is for.
pub(crate) fn drop_cached(path: &Path) {
    #[cfg(target_os = "linux")]
    if let Ok(file) = open_nonblocking(path) {
        fadvise(&file, 0, 0, libc::POSIX_FADV_DONTNEED);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
}
