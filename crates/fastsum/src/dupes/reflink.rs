//! `--reflink`: a member's extents shared with the kept file's by the
//! kernel, which compares the bytes under its own locks first.

use std::path::Path;

/// Why the kernel did not share a member's bytes with the kept file's.
pub(super) enum Refused {
    /// The bytes differ (the kernel compared them; only Linux's does).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Differ,
    /// The call failed.
    Io(std::io::Error),
}

/// Reflinks are shared on Linux only here.
#[cfg(not(target_os = "linux"))]
pub(super) fn dedupe(_kept: &Path, _member: &Path, _size: u64) -> Result<(), Refused> {
    Err(Refused::Io(std::io::Error::other(
        "reflinks (copy-on-write clones) are made on Linux only; --link makes hard links",
    )))
}

/// `kept` to read and `member` to share into, opened without waiting: a
/// FIFO in a file's place since the check opens at once, and the kernel
/// refuses to share its range. Write access is what the kernel asks of
/// the destination; a file we may not open for writing but own is
/// accepted read-only.
#[cfg(target_os = "linux")]
fn open_pair(kept: &Path, member: &Path) -> Result<(std::fs::File, std::fs::File), Refused> {
    use std::os::unix::fs::OpenOptionsExt;
    let src = crate::fs::residency::open_nonblocking(kept).map_err(Refused::Io)?;
    let dest = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(member)
        .or_else(|_| crate::fs::residency::open_nonblocking(member))
        .map_err(Refused::Io)?;
    Ok((src, dest))
}

/// Shares `member`'s extents with `kept`'s through `ioctl(FIDEDUPERANGE)`:
/// the kernel locks both files, compares their bytes and shares them only
/// where they are equal (unlike `FICLONE`, which copies whatever is there
/// at the moment: a write between a comparison and a clone would be lost).
#[cfg(target_os = "linux")]
pub(super) fn dedupe(kept: &Path, member: &Path, size: u64) -> Result<(), Refused> {
    use std::os::fd::AsRawFd;
    /// `struct file_dedupe_range` with one `struct file_dedupe_range_info`.
    #[repr(C)]
    struct DedupeRange {
        src_offset: u64,
        src_length: u64,
        dest_count: u16,
        reserved1: u16,
        reserved2: u32,
        dest_fd: i64,
        dest_offset: u64,
        bytes_deduped: u64,
        status: i32,
        reserved: u32,
    }
    /// `_IOWR(0x94, 54, struct file_dedupe_range)`: the header is 24 bytes.
    const FIDEDUPERANGE: libc::c_ulong = 0xC018_9436;
    /// Bytes asked for in one call (btrfs shares at most 16 MiB a call).
    const CHUNK: u64 = 16 << 20;
    const DIFFERS: i32 = 1;
    let unsupported = || {
        Refused::Io(std::io::Error::other(
            "this file system cannot make reflinks (copy-on-write clones); --link makes hard links",
        ))
    };
    let (src, dest) = open_pair(kept, member)?;
    let mut offset = 0u64;
    while offset < size {
        let mut range = DedupeRange {
            src_offset: offset,
            src_length: (size - offset).min(CHUNK),
            dest_count: 1,
            reserved1: 0,
            reserved2: 0,
            dest_fd: i64::from(dest.as_raw_fd()),
            dest_offset: offset,
            bytes_deduped: 0,
            status: 0,
            reserved: 0,
        };
        // SAFETY: `range` is a `struct file_dedupe_range` followed by the
        // one `file_dedupe_range_info` that `dest_count` announces, laid
        // out as the kernel's (repr(C), the same field types); it lives
        // across the call, which reads it and writes only its info part.
        let rc = unsafe { libc::ioctl(src.as_raw_fd(), FIDEDUPERANGE as _, &mut range) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EOPNOTSUPP | libc::EXDEV | libc::EINVAL | libc::ENOTTY) => unsupported(),
                _ => Refused::Io(e),
            });
        }
        match range.status {
            DIFFERS => return Err(Refused::Differ),
            s if s < 0 => {
                return Err(match -s {
                    libc::EOPNOTSUPP | libc::EINVAL => unsupported(),
                    errno => Refused::Io(std::io::Error::from_raw_os_error(errno)),
                })
            }
            _ if range.bytes_deduped == 0 => {
                return Err(Refused::Io(std::io::Error::other(
                    "the kernel shared no bytes (the file may have shrunk)",
                )))
            }
            _ => offset += range.bytes_deduped,
        }
    }
    Ok(())
}
