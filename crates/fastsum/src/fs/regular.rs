//! The one open of a path taken from a list, a cache or a manifest:
//! regular files only, never waiting (a FIFO in a list must not hang the
//! run).

use std::fs::File;
use std::path::Path;

use super::stat::fstat;
use super::FileStamp;
use crate::error::{Error, ErrorKind, Result};

/// A path taken from a walk, a list, a cache or a manifest that is not a
/// regular file now (a FIFO, a device, a socket, a directory): an error,
/// never read, so a FIFO put in its place cannot make a run wait for a
/// writer, `/dev/zero` cannot be read without end, and no digest is
/// answered for bytes that were not a file's. A directory says "Is a
/// directory" (as md5sum does of one), anything else "not a regular
/// file". The one rule of every listed open: [`open_regular`], and the
/// pipeline's listed jobs (`stage/`).
pub(crate) fn not_regular(stamp: &FileStamp) -> ErrorKind {
    #[cfg(unix)]
    if stamp.is_dir() {
        return ErrorKind::Io(std::io::Error::from_raw_os_error(libc::EISDIR));
    }
    let _ = stamp;
    ErrorKind::Io(std::io::Error::other("not a regular file"))
}

/// Opens a path taken from a list, a cache or a manifest for reading:
/// without waiting (`O_NONBLOCK`: a FIFO opens at once), then `fstat` on
/// the descriptor, and anything but a regular file refused (a directory
/// is "Is a directory", anything else "not a regular file"). Every
/// command that opens such a path goes through it or through the
/// pipeline's listed jobs, which apply the same rule.
pub fn open_regular(path: &Path) -> Result<File> {
    let file = super::residency::open_nonblocking(path).map_err(|e| Error::with_path(path, e))?;
    let stamp = fstat(&file).map_err(|kind| Error::with_path(path, kind))?;
    if !stamp.is_file() {
        return Err(Error::with_path(path, not_regular(&stamp)));
    }
    Ok(file)
}
