//! Finding the files under a directory: a parallel walk that reports every
//! regular file, and says why it left anything else out.
//!
//! The walk is the `ignore` crate's parallel walker (ripgrep's) with all of
//! its ignore-file handling off: a checksum tool hashes every file, hidden or
//! `.gitignore`d. What it does instead:
//!
//! * **Symlinks** are not followed unless [`WalkOptions::follow_links`]; then
//!   a link back to an ancestor directory is reported as a
//!   [`ErrorKind::FilesystemLoop`] (the walker compares device and inode)
//!   instead of being walked for ever. Unfollowed links are left out
//!   silently, as `find -type f` leaves them out.
//! * **FIFOs, sockets and devices** are never opened (opening a FIFO blocks
//!   until a writer comes; reading a device may never end): they are
//!   reported as [`WalkItem::Special`] so the caller can say it skipped them.
//! * **Excludes** are gitignore-style globs (`*.log`, `build/`, `/top-only`)
//!   matched relative to the root; an excluded directory is not entered.
//! * **Errors** (an unreadable directory, an entry that vanished between
//!   `readdir` and `stat`) are reported with their path, and the walk goes on.

use std::fs::FileType;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};

/// How to walk.
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// Follow symbolic links (with loop detection).
    pub follow_links: bool,
    /// Do not descend into directories on other file systems.
    pub one_file_system: bool,
    /// Gitignore-style globs of paths to leave out.
    pub excludes: Vec<String>,
    /// Walker threads (0: let the walker choose).
    pub threads: usize,
}

/// A kind of file that has no bytes to checksum and is never opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialKind {
    /// A named pipe.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
}

impl SpecialKind {
    /// The kind of `file_type`, if it is special.
    pub fn of(file_type: FileType) -> Option<SpecialKind> {
        if file_type.is_fifo() {
            Some(SpecialKind::Fifo)
        } else if file_type.is_socket() {
            Some(SpecialKind::Socket)
        } else if file_type.is_char_device() {
            Some(SpecialKind::CharDevice)
        } else if file_type.is_block_device() {
            Some(SpecialKind::BlockDevice)
        } else {
            None
        }
    }

    /// How people call it ("fifo", as `stat -c %F` says "fifo").
    pub fn describe(self) -> &'static str {
        match self {
            SpecialKind::Fifo => "fifo",
            SpecialKind::Socket => "socket",
            SpecialKind::CharDevice => "character special file",
            SpecialKind::BlockDevice => "block special file",
        }
    }
}

/// One thing the walk found.
#[derive(Debug)]
pub enum WalkItem {
    /// A regular file (known from `readdir`'s file type: the walk does
    /// not `stat` files, the hasher's `fstat` on the open file is cheaper
    /// than a second path lookup).
    File {
        /// The root joined with the path below it.
        path: PathBuf,
    },
    /// A FIFO, socket or device: skipped, never opened.
    Special {
        /// Where it is.
        path: PathBuf,
        /// What it is.
        kind: SpecialKind,
    },
    /// Something that could not be walked; the rest of the walk goes on.
    Error(Error),
}

/// Walks `root` in parallel and hands every item to `sink`, from the
/// walker's threads, in no particular order. Returns once the walk is done.
///
/// An invalid exclude glob is the only error returned; everything else
/// arrives as [`WalkItem::Error`].
pub fn walk(root: &Path, options: &WalkOptions, sink: &(dyn Fn(WalkItem) + Sync)) -> Result<()> {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .follow_links(options.follow_links)
        .same_file_system(options.one_file_system)
        .threads(options.threads);
    if !options.excludes.is_empty() {
        builder.overrides(exclude_overrides(root, &options.excludes)?);
    }
    builder.build_parallel().run(|| {
        Box::new(move |result| {
            match result {
                Ok(entry) => {
                    if let Some(item) = classify(&entry) {
                        sink(item);
                    }
                }
                Err(e) => sink(WalkItem::Error(convert_error(e, root))),
            }
            ignore::WalkState::Continue
        })
    });
    Ok(())
}

/// Checks that every exclude pattern is a valid glob.
pub fn check_excludes(excludes: &[String]) -> Result<()> {
    exclude_overrides(Path::new("/"), excludes).map(drop)
}

/// The excludes as the walker's overrides: each a negated (ignore) glob.
fn exclude_overrides(root: &Path, excludes: &[String]) -> Result<ignore::overrides::Override> {
    let invalid = |glob: &str, e: ignore::Error| {
        let cause = match e {
            ignore::Error::Glob { err, .. } => err,
            other => other.to_string(),
        };
        Error::new(ErrorKind::InvalidGlob {
            glob: glob.to_string(),
            cause,
        })
    };
    let mut overrides = ignore::overrides::OverrideBuilder::new(root);
    for glob in excludes {
        overrides
            .add(&format!("!{glob}"))
            .map_err(|e| invalid(glob, e))?;
    }
    overrides.build().map_err(|e| invalid("", e))
}

/// What `entry` is to a checksum tool (`None`: a directory or an unfollowed
/// link, nothing to report).
fn classify(entry: &ignore::DirEntry) -> Option<WalkItem> {
    let file_type = entry.file_type()?;
    if file_type.is_dir() || file_type.is_symlink() {
        return None;
    }
    let path = entry.path().to_path_buf();
    if let Some(kind) = SpecialKind::of(file_type) {
        return Some(WalkItem::Special { path, kind });
    }
    Some(WalkItem::File { path })
}

/// The walker's error as fastsum's: the innermost path and cause.
fn convert_error(error: ignore::Error, fallback_path: &Path) -> Error {
    let mut path = fallback_path.to_path_buf();
    let mut error = error;
    loop {
        error = match error {
            ignore::Error::WithPath { path: p, err } => {
                path = p;
                *err
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                *err
            }
            ignore::Error::Partial(mut errors) if !errors.is_empty() => errors.swap_remove(0),
            ignore::Error::Loop { ancestor, child } => {
                return Error::with_path(child, ErrorKind::FilesystemLoop { ancestor })
            }
            ignore::Error::Io(e) => return Error::with_path(path, e),
            other => {
                return Error::with_path(path, io::Error::other(other.to_string()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn collect(root: &Path, options: &WalkOptions) -> (Vec<PathBuf>, Vec<String>) {
        let items = Mutex::new(Vec::new());
        walk(root, options, &|item| items.lock().unwrap().push(item)).unwrap();
        let (mut files, mut other) = (Vec::new(), Vec::new());
        for item in items.into_inner().unwrap() {
            match item {
                WalkItem::File { path } => {
                    files.push(path.strip_prefix(root).unwrap().to_path_buf())
                }
                WalkItem::Special { path, kind } => other.push(format!(
                    "{} {}",
                    path.strip_prefix(root).unwrap().display(),
                    kind.describe()
                )),
                WalkItem::Error(e) => other.push(format!("{:?}", e.kind())),
            }
        }
        files.sort();
        other.sort();
        (files, other)
    }

    #[test]
    fn hidden_and_gitignored_files_are_walked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("a.log"), "x").unwrap();
        std::fs::write(root.join(".hidden"), "x").unwrap();
        let (files, other) = collect(root, &WalkOptions::default());
        let names: Vec<_> = files.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(names, [".gitignore", ".hidden", "a.log"]);
        assert!(other.is_empty());
    }

    #[test]
    fn excludes_prune_files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("build/deep")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        for f in ["build/deep/x.c", "src/a.c", "src/a.o", "top.o"] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        let options = WalkOptions {
            excludes: vec!["*.o".into(), "build/".into()],
            ..WalkOptions::default()
        };
        let (files, _) = collect(root, &options);
        assert_eq!(files, [PathBuf::from("src/a.c")]);
    }

    #[test]
    fn fifos_are_reported_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let fifo = root.join("pipe");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: c_path is a valid NUL-terminated path for the call's duration.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        std::fs::write(root.join("file"), "x").unwrap();
        let (files, other) = collect(root, &WalkOptions::default());
        assert_eq!(files, [PathBuf::from("file")]);
        assert_eq!(other, ["pipe fifo"]);
    }

    #[test]
    fn symlinks_are_followed_only_when_asked_and_loops_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/f"), "x").unwrap();
        std::os::unix::fs::symlink("../d", root.join("d/loop")).unwrap();
        std::os::unix::fs::symlink("d/f", root.join("link")).unwrap();
        let (files, other) = collect(root, &WalkOptions::default());
        assert_eq!(files, [PathBuf::from("d/f")]);
        assert!(other.is_empty());
        let follow = WalkOptions {
            follow_links: true,
            ..WalkOptions::default()
        };
        let (files, other) = collect(root, &follow);
        assert_eq!(files, [PathBuf::from("d/f"), PathBuf::from("link")]);
        assert_eq!(other.len(), 1, "{other:?}");
        assert!(other[0].starts_with("FilesystemLoop"), "{other:?}");
    }
}
