//! fastsum's errors as Python exceptions: the `OSError` family with
//! `errno` and `filename` set (Python picks `FileNotFoundError`,
//! `PermissionError`, `IsADirectoryError` from the errno), `ValueError`
//! for what the caller asked wrongly.

use std::path::Path;

use fastsum::{Error, ErrorKind};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::paths::path_object;

/// The exception for `kind` about `path` (as the caller spelled paths:
/// `bytes_paths`).
pub fn kind_to_err(
    py: Python<'_>,
    kind: &ErrorKind,
    path: Option<&Path>,
    bytes_paths: bool,
) -> PyErr {
    let filename = path.map(|p| path_object(py, p, bytes_paths));
    match kind {
        ErrorKind::Io(e) => {
            let message = fastsum::Error::os_message(e);
            // An error made from a kind (not by the OS) gets the errno of
            // its kind, so that `except FileNotFoundError` catches it as
            // it catches the OS's own.
            match e.raw_os_error().or_else(|| errno_of(e.kind())) {
                Some(errno) => PyOSError::new_err((errno, message, filename)),
                None => PyOSError::new_err((None::<i32>, message, filename)),
            }
        }
        ErrorKind::UnknownAlgorithm { .. }
        | ErrorKind::InvalidGlob { .. }
        | ErrorKind::InvalidHex => PyValueError::new_err(kind.to_string()),
        // A file that changed while read, a loop, the cache: OSError
        // without an errno, the message saying what happened.
        other => PyOSError::new_err((None::<i32>, other.to_string(), filename)),
    }
}

/// The errno Python maps to the exception for `kind`, where one does
/// (these numbers are the same on Linux, macOS, the BSDs and in Python's
/// `errno` on Windows).
fn errno_of(kind: std::io::ErrorKind) -> Option<i32> {
    use std::io::ErrorKind as K;
    Some(match kind {
        K::NotFound => 2,          // ENOENT: FileNotFoundError
        K::PermissionDenied => 13, // EACCES: PermissionError
        K::AlreadyExists => 17,    // EEXIST: FileExistsError
        K::NotADirectory => 20,    // ENOTDIR: NotADirectoryError
        K::IsADirectory => 21,     // EISDIR: IsADirectoryError
        K::Interrupted => 4,       // EINTR: InterruptedError
        _ => return None,
    })
}

/// The exception for a library error.
pub fn to_err(py: Python<'_>, error: &Error, bytes_paths: bool) -> PyErr {
    kind_to_err(py, error.kind(), error.path(), bytes_paths)
}

/// The algorithm called `name`, or `ValueError` listing the valid names.
pub fn algorithm(name: &str) -> PyResult<fastsum::Algorithm> {
    name.parse()
        .map_err(|e: Error| PyValueError::new_err(e.to_string()))
}

/// The algorithm called `name`, over parts of `part_size` bytes when one
/// is given (S3's ETag for md5 and s3etag, its composite checksums for
/// crc32, crc32c, sha1, sha256, sha512, xxh64, xxh3 and xxh128: the CLI's
/// `--part-size`); `ValueError`
/// for a name or size that cannot be.
pub fn algorithm_in_parts(name: &str, part_size: Option<u64>) -> PyResult<fastsum::Algorithm> {
    let algorithm = self::algorithm(name)?;
    match part_size {
        None => Ok(algorithm),
        Some(size) => algorithm.in_parts(size).ok_or_else(|| {
            PyValueError::new_err(format!(
                "part_size={size} does not go with {algorithm}: S3 keeps digests of parts \
                 for s3etag, md5, crc32, crc32c, sha1, sha256, sha512, xxh64, xxh3 and xxh128 \
                 (part sizes above 0)"
            ))
        }),
    }
}

/// A call's walk options (`follow`, `exclude`), its exclude patterns
/// checked before any walk: an invalid glob is a `ValueError` at once.
pub fn walk_options(
    py: Python<'_>,
    follow: bool,
    exclude: Vec<String>,
) -> PyResult<fastsum::walk::WalkOptions> {
    let walk = fastsum::walk::WalkOptions {
        follow_links: follow,
        excludes: exclude,
        ..Default::default()
    };
    walk.check_excludes().map_err(|e| to_err(py, &e, false))?;
    Ok(walk)
}
