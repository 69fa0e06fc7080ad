//! The file system as fastsum meets it: `stat` results and the values made
//! from them ([`stat`]), directories kept open so that a batch's files are
//! resolved by name, and directories listed for the walk ([`dir`]), the
//! process's limit on open files ([`limits`]), what the page cache holds
//! ([`residency`]), the kind of device under a path ([`device`]), and
//! names as bytes ([`name`]). Nothing here hashes.
//!
//! Two paths live here side by side. On Linux, system calls (`openat` and
//! `fstatat` in an open directory, `readdir` with `d_type`, `fstat`,
//! `preadv2`, `posix_fadvise`); everywhere else (macOS, the BSDs, Windows)
//! and on Linux with `FASTSUM_PORTABLE=1`, the standard library only
//! (`read_dir`, open by path, `metadata`), so that CI runs the portable
//! path natively. [`portable`] says which one runs.

// This layer serves every feature (the walk and the pipeline, the cache's
// stamps, the lanes' open directories): with some of them off, parts of
// it go unused (without `tree`, all but what reading one file needs).
#![cfg_attr(
    not(all(feature = "tree", feature = "cache", feature = "simd")),
    allow(dead_code)
)]

pub(crate) mod device;
#[cfg(feature = "tree")]
pub(crate) mod dir;
pub(crate) mod identity;
pub(crate) mod limits;
pub(crate) mod mount;
pub mod name;
#[cfg(feature = "tree")]
pub(crate) mod overlay;
pub(crate) mod regular;
pub(crate) mod residency;
pub(crate) mod roots;
pub mod stat;

pub(crate) use identity::FsId;
// Asked once a device: by the cache and by stamped JSON records (a
// tree's).
#[cfg(any(feature = "cache", feature = "tree"))]
pub(crate) use identity::FsIds;
// The cache, the walk and directory digests ask these; a build without
// them does not.
#[allow(unused_imports)]
pub(crate) use device::{generated, stamps_unreliable};
pub use stat::FileStamp;
#[cfg(feature = "tree")]
pub(crate) use stat::{FileId, FileLen};

/// Whether the portable (standard library) path runs: always off Linux,
/// and on Linux when the environment says `FASTSUM_PORTABLE=1` (read once).
#[cfg(unix)]
pub(crate) fn portable() -> bool {
    #[cfg(target_os = "linux")]
    {
        static PORTABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *PORTABLE.get_or_init(|| {
            std::env::var_os("FASTSUM_PORTABLE").is_some_and(|v| !v.is_empty() && v != "0")
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// Reads up to `buffer.len()` bytes of `file` from `offset` (`pread`),
/// leaving the file's own offset alone on Unix; on Windows the offset moves,
/// which no caller of this relies on.
pub(crate) fn read_at(
    file: &std::fs::File,
    buffer: &mut [u8],
    offset: u64,
) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buffer, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buffer, offset)
    }
}
