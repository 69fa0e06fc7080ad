//! The library's one error type: what went wrong, and with which path.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An error from fastsum, carrying the path it concerns (when there is one)
/// and an inspectable [`ErrorKind`].
#[derive(Debug)]
pub struct Error {
    path: Option<PathBuf>,
    kind: ErrorKind,
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system refused an open, read, stat or map.
    #[error("{}", Error::os_message(.0))]
    Io(#[from] io::Error),
    /// The file changed size while it was being read (for example it was
    /// truncated under a memory map), so the bytes hashed are not a
    /// consistent snapshot of any version of the file.
    #[error("file changed while reading")]
    ChangedWhileReading,
    /// A name that is not an algorithm fastsum knows.
    #[error("unknown algorithm '{name}' (valid: {valid})")]
    UnknownAlgorithm {
        /// The name as given.
        name: String,
        /// The valid names, comma separated.
        valid: String,
    },
    /// A digest string that is not hex of the right length.
    #[error("invalid hex digest")]
    InvalidHex,
    /// Following symbolic links led back to a directory already being
    /// walked (GNU find's wording).
    #[error("File system loop detected; '{}' is part of the same file system loop", .ancestor.display())]
    FilesystemLoop {
        /// The directory the link leads back to.
        ancestor: PathBuf,
    },
    /// The checksum cache's database failed (SQLite's own error).
    #[cfg(feature = "cache")]
    #[error("{source}")]
    Cache {
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// A cache session handed to a run of another algorithm
    /// ([`crate::TreeHasher::cache`]): its digests would answer for the
    /// wrong algorithm.
    #[cfg(feature = "cache")]
    #[error("the cache session holds {session}'s digests, not {run}'s")]
    CacheAlgorithm {
        /// The session's algorithm's name.
        session: &'static str,
        /// The run's.
        run: &'static str,
    },
    /// No cache path given, and no `$XDG_CACHE_HOME` or `$HOME` for the
    /// default one ([`crate::cache::Cache::resolve_path`]).
    #[cfg(feature = "cache")]
    #[error("no $XDG_CACHE_HOME or $HOME to put the cache in; give --cache=PATH")]
    NoCacheHome,
    /// Input cut into parts of the sizes S3 listed did not fill them
    /// exactly (`algo::parts::PartLayout::Sizes`).
    #[error("{read} bytes read where the parts listed hold {listed}")]
    PartsMismatch {
        /// The bytes the listed parts hold.
        listed: u64,
        /// The bytes read.
        read: u64,
    },
    /// An `--exclude` pattern that is not a valid glob.
    #[error("invalid exclude pattern '{glob}': {cause}")]
    InvalidGlob {
        /// The pattern as given.
        glob: String,
        /// What is wrong with it.
        cause: String,
    },
}

/// glibc's texts of the errors a file tool meets, which the GNU tools
/// print: the static musl build's C library words several otherwise ("I/O
/// error" for "Input/output error", "Symbolic link loop", "Filename too
/// long" ...), and the release binaries must say what md5sum says. Taken
/// from glibc's strerror (Python's os.strerror on Debian 12); the test
/// below holds them to the C library's where that is glibc.
#[cfg(target_os = "linux")]
const GLIBC_TEXTS: &[(i32, &str)] = &[
    (libc::EPERM, "Operation not permitted"),
    (libc::ENOENT, "No such file or directory"),
    (libc::ESRCH, "No such process"),
    (libc::EINTR, "Interrupted system call"),
    (libc::EIO, "Input/output error"),
    (libc::ENXIO, "No such device or address"),
    (libc::E2BIG, "Argument list too long"),
    (libc::ENOEXEC, "Exec format error"),
    (libc::EBADF, "Bad file descriptor"),
    (libc::ECHILD, "No child processes"),
    (libc::EAGAIN, "Resource temporarily unavailable"),
    (libc::ENOMEM, "Cannot allocate memory"),
    (libc::EACCES, "Permission denied"),
    (libc::EFAULT, "Bad address"),
    (libc::ENOTBLK, "Block device required"),
    (libc::EBUSY, "Device or resource busy"),
    (libc::EEXIST, "File exists"),
    (libc::EXDEV, "Invalid cross-device link"),
    (libc::ENODEV, "No such device"),
    (libc::ENOTDIR, "Not a directory"),
    (libc::EISDIR, "Is a directory"),
    (libc::EINVAL, "Invalid argument"),
    (libc::ENFILE, "Too many open files in system"),
    (libc::EMFILE, "Too many open files"),
    (libc::ENOTTY, "Inappropriate ioctl for device"),
    (libc::ETXTBSY, "Text file busy"),
    (libc::EFBIG, "File too large"),
    (libc::ENOSPC, "No space left on device"),
    (libc::ESPIPE, "Illegal seek"),
    (libc::EROFS, "Read-only file system"),
    (libc::EMLINK, "Too many links"),
    (libc::EPIPE, "Broken pipe"),
    (libc::EDOM, "Numerical argument out of domain"),
    (libc::ERANGE, "Numerical result out of range"),
    (libc::EDEADLK, "Resource deadlock avoided"),
    (libc::ENAMETOOLONG, "File name too long"),
    (libc::ENOLCK, "No locks available"),
    (libc::ENOSYS, "Function not implemented"),
    (libc::ENOTEMPTY, "Directory not empty"),
    (libc::ELOOP, "Too many levels of symbolic links"),
    (libc::ENODATA, "No data available"),
    (libc::EOVERFLOW, "Value too large for defined data type"),
    (
        libc::EILSEQ,
        "Invalid or incomplete multibyte or wide character",
    ),
    (libc::EOPNOTSUPP, "Operation not supported"),
    (libc::ECONNRESET, "Connection reset by peer"),
    (libc::ETIMEDOUT, "Connection timed out"),
    (libc::ECONNREFUSED, "Connection refused"),
    (libc::ESTALE, "Stale file handle"),
    (libc::EDQUOT, "Disk quota exceeded"),
    (libc::ENOMEDIUM, "No medium found"),
    (libc::EUCLEAN, "Structure needs cleaning"),
    (libc::EREMOTEIO, "Remote I/O error"),
];

/// glibc's text of `code`, where the table has it.
fn glibc_text(code: i32) -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    return GLIBC_TEXTS
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, t)| *t);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = code;
        None
    }
}

impl Error {
    /// The C library's text for an I/O error ("No such file or directory"),
    /// without Rust's " (os error N)" suffix, so messages match the GNU
    /// tools.
    pub fn os_message(e: &io::Error) -> String {
        if let Some(text) = e.raw_os_error().and_then(glibc_text) {
            return text.into();
        }
        match e.raw_os_error() {
            Some(code) => {
                let full = io::Error::from_raw_os_error(code).to_string();
                match full.rfind(" (os error ") {
                    Some(i) => full[..i].to_string(),
                    None => full,
                }
            }
            None => e.to_string(),
        }
    }

    /// A thread the system would not start (`ulimit -v`, `ulimit -u`, a
    /// cgroup's pids limit): said in the words the CLI's panic hook uses
    /// for a spawn that panics, so both read alike.
    #[cfg(feature = "tree")]
    pub(crate) fn thread_refused(e: &io::Error) -> Self {
        let why = format!("cannot start a thread ({})", Error::os_message(e));
        Error::new(ErrorKind::Io(io::Error::new(e.kind(), why)))
    }

    /// An error about `path`.
    pub fn with_path(path: impl Into<PathBuf>, kind: impl Into<ErrorKind>) -> Self {
        Error {
            path: Some(path.into()),
            kind: kind.into(),
        }
    }

    /// An error that concerns no path.
    pub fn new(kind: impl Into<ErrorKind>) -> Self {
        Error {
            path: None,
            kind: kind.into(),
        }
    }

    /// The path this error concerns, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// What went wrong, without the path.
    pub fn into_kind(self) -> ErrorKind {
        self.kind
    }

    /// The OS error number behind this error, if it came from the OS.
    pub fn raw_os_error(&self) -> Option<i32> {
        match &self.kind {
            ErrorKind::Io(e) => e.raw_os_error(),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: {}", crate::escape::display_path(p), self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            #[cfg(feature = "cache")]
            ErrorKind::Cache { source } => Some(source),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::new(e)
    }
}

/// A `Result` whose error is [`Error`].
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Where the C library is glibc, its words are the table's: the table
    /// is what a glibc build prints, and the musl build prints it too.
    #[test]
    #[cfg(target_env = "gnu")]
    fn the_table_is_glibcs_own_words() {
        for &(code, text) in GLIBC_TEXTS {
            let libc_words = io::Error::from_raw_os_error(code).to_string();
            assert_eq!(
                libc_words.split(" (os error ").next(),
                Some(text),
                "errno {code}"
            );
        }
    }

    #[test]
    fn messages_take_the_tables_words_and_the_c_librarys_beyond_it() {
        let eio = io::Error::from_raw_os_error(libc::EIO);
        assert_eq!(Error::os_message(&eio), "Input/output error");
        let eloop = io::Error::from_raw_os_error(libc::ELOOP);
        assert_eq!(
            Error::os_message(&eloop),
            "Too many levels of symbolic links"
        );
        // Not in the table: the C library's words, without Rust's suffix.
        let other = io::Error::from_raw_os_error(libc::ENOTSOCK);
        assert!(!Error::os_message(&other).contains("os error"));
    }
}
