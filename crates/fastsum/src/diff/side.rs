//! Each side of a diff as a stream of entries in byte order of their keys
//! (paths relative to the side's root): a tree walked in sorted order (or
//! hashed in sorted order when the other side is a manifest), or a
//! manifest read, re-rooted and sorted (`manifest_side.rs`).

use std::path::{Path, PathBuf};

use crossbeam_channel::Receiver;

use super::{DiffOptions, EntryKind};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::pipeline::{Outcome, Record, TreeHasher};
use crate::remote::{hash_remote, Method, Remote, RemoteOptions};
use crate::stage::Source;
use crate::walk::{SpecialKind, WalkItem};

/// Entries queued ahead of the merge, per side.
const AHEAD: usize = 4096;

/// One entry of a side, or something wrong at a path.
#[derive(Clone, Debug)]
pub(super) enum Listed {
    /// A file or symlink.
    Entry(Found),
    /// A path that could not be listed or hashed (`key` may be empty for a
    /// whole-side problem).
    Problem {
        key: Vec<u8>,
        path: PathBuf,
        error: String,
    },
    /// Symbolic links left out, counted only: a remote host's listing
    /// (its host said how many, not which).
    SymlinksLeftOut(u64),
    /// An entry of a local tree left out, with its path: a symbolic link
    /// (the other side lists regular files only: a manifest, a remote
    /// host) or a FIFO, socket or device.
    LeftOut { key: Vec<u8>, kind: SpecialKind },
}

/// An entry of a side.
#[derive(Clone, Debug)]
pub(super) struct Found {
    /// The key: the path relative to the side's root.
    pub key: Vec<u8>,
    /// Where it is on disk (trees only).
    pub path: Option<PathBuf>,
    pub kind: EntryKind,
    pub size: Option<u64>,
    pub digest: Option<Digest>,
    /// It is there but could not be read (reported): it matches its key on
    /// the other side and makes no change.
    pub unreadable: bool,
}

/// The key of `path` under `root` (as the walk spells it: `root/...`).
pub(crate) fn key_of(root: &Path, path: &Path) -> Vec<u8> {
    let root = root.as_os_str().as_encoded_bytes();
    let path = path.as_os_str().as_encoded_bytes();
    let rest = path.strip_prefix(root).unwrap_or(path);
    let rest = if root.ends_with(b"/") {
        rest
    } else {
        rest.strip_prefix(b"/").unwrap_or(rest)
    };
    rest.to_vec()
}

/// A directory below a tree's root as an entry: its key ends in `/`, so it
/// sorts where the sorted walk meets it (just before what it holds).
fn directory(root: &Path, path: PathBuf) -> Found {
    let mut key = key_of(root, &path);
    key.push(b'/');
    Found {
        key,
        path: Some(path),
        kind: EntryKind::Directory,
        size: None,
        digest: None,
        unreadable: false,
    }
}

/// A tree walked in sorted order on its own thread: files and symlinks,
/// not read (the merge compares contents where it must).
pub(super) fn walk_tree(root: PathBuf, options: &DiffOptions) -> Receiver<Listed> {
    let (tx, rx) = crossbeam_channel::bounded(AHEAD);
    let walk_options = options.walk.clone();
    let progress = options.progress.clone();
    std::thread::spawn(move || {
        let mut sink = |item: WalkItem| {
            let entry = matches!(
                item,
                WalkItem::File { .. }
                    | WalkItem::Special {
                        kind: SpecialKind::Symlink,
                        ..
                    }
            );
            if let (Some(p), true) = (&progress, entry) {
                p.files_found
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            let listed = match item {
                WalkItem::File { path, .. } => Listed::Entry(Found {
                    key: key_of(&root, &path),
                    path: Some(path),
                    kind: EntryKind::File,
                    size: None,
                    digest: None,
                    unreadable: false,
                }),
                WalkItem::Special {
                    path,
                    kind: SpecialKind::Symlink,
                } => Listed::Entry(Found {
                    key: key_of(&root, &path),
                    path: Some(path),
                    kind: EntryKind::Symlink,
                    size: None,
                    digest: None,
                    unreadable: false,
                }),
                WalkItem::Directory { path } => Listed::Entry(directory(&root, path)),
                // FIFOs, sockets, devices: not entries, never opened, but
                // said (a plan lists them).
                WalkItem::Special { path, kind } => Listed::LeftOut {
                    key: key_of(&root, &path),
                    kind,
                },
                WalkItem::Error(e) => {
                    let path = e.path().map(Path::to_path_buf).unwrap_or_default();
                    Listed::Problem {
                        key: key_of(&root, &path),
                        path,
                        error: e.kind().to_string(),
                    }
                }
            };
            let _ = tx.send(listed);
        };
        if let Err(e) = walk_options.walk_sorted(&root, &mut sink) {
            let _ = tx.send(Listed::Problem {
                key: Vec::new(),
                path: root.clone(),
                error: e.to_string(),
            });
        }
    });
    rx
}

/// A tree hashed with `algorithm` through the pipeline (sorted, streamed,
/// the cache in front if given): against a manifest, which carries no
/// symlinks (they are counted, left out), or against another tree with the
/// cache (`symlinks`: they are entries, compared by target).
pub(super) fn hash_tree(
    root: PathBuf,
    algorithm: Algorithm,
    options: &DiffOptions,
    symlinks: bool,
) -> Receiver<Listed> {
    let (tx, rx) = crossbeam_channel::bounded(AHEAD);
    let directories = options.walk.directories;
    let hasher = TreeHasher::new(algorithm)
        .verify(true)
        .recursive(true)
        .threads(options.threads)
        .walk(options.walk.clone());
    let mut hasher = options.cached(hasher);
    if let Some(progress) = &options.progress {
        hasher = hasher.progress(progress.clone());
    }
    std::thread::spawn(move || {
        let operand = [Source::Path(root.clone())];
        let result = hasher.run(&operand, |record| {
            if let Some(listed) = listed_of(&root, record, symlinks, directories) {
                let _ = tx.send(listed);
            }
        });
        if let Err(e) = result {
            let _ = tx.send(Listed::Problem {
                key: Vec::new(),
                path: root,
                error: e.to_string(),
            });
        }
    });
    rx
}

/// What a hashed tree's record is to the diff (`symlinks`: entries, or
/// left out; `directories`: entries, or nothing); special files are left
/// out, each said (`DiffEvent::LeftOut`).
pub(super) fn listed_of(
    root: &Path,
    record: Record,
    symlinks: bool,
    directories: bool,
) -> Option<Listed> {
    let key = key_of(root, &record.path);
    Some(match record.outcome {
        Outcome::Hashed(hashed) => Listed::Entry(Found {
            key,
            path: Some(record.path),
            kind: EntryKind::File,
            size: Some(hashed.size),
            digest: Some(hashed.digest),
            unreadable: false,
        }),
        Outcome::Skipped(SpecialKind::Symlink) if symlinks => Listed::Entry(Found {
            key,
            path: Some(record.path),
            kind: EntryKind::Symlink,
            size: None,
            digest: None,
            unreadable: false,
        }),
        Outcome::Directory(_) if directories => Listed::Entry(directory(root, record.path)),
        Outcome::Directory(_) => return None,
        Outcome::Skipped(kind) => Listed::LeftOut { key, kind },
        Outcome::Failed(kind) | Outcome::WalkFailed(kind) => Listed::Problem {
            key,
            path: record.path,
            error: kind.to_string(),
        },
    })
}

/// A remote tree hashed on its host, keyed by paths relative to the
/// remote path, sorted. Files it could not read are problems at their
/// keys (they make no change); a listing that did not arrive whole is an
/// error, never a shorter tree.
pub(super) fn remote_side(
    remote: &Remote,
    algorithm: Algorithm,
    options: &RemoteOptions,
) -> crate::error::Result<Fetched> {
    let mut records = Vec::new();
    let listing = hash_remote(remote, algorithm, options, &mut |r| records.push(r))?;
    let shown = |path: &[u8]| {
        let mut name = format!("{}:", remote.host).into_bytes();
        name.extend_from_slice(path);
        crate::fs::name::path_buf(name)
    };
    let mut matched = Vec::new();
    let mut listed: Vec<Listed> = records
        .into_iter()
        .filter(|record| {
            if record.directory {
                let key = remote_key(&remote.path, &record.path);
                matched.push(key.strip_suffix(b"/").unwrap_or(&key).to_vec());
            }
            !record.directory
        })
        .map(|record| {
            let key = remote_key(&remote.path, &record.path);
            match record.digest {
                Ok(digest) => Listed::Entry(Found {
                    key,
                    path: None,
                    kind: EntryKind::File,
                    size: None,
                    digest: Some(digest),
                    unreadable: false,
                }),
                Err(error) => Listed::Problem {
                    key,
                    path: shown(&record.path),
                    error,
                },
            }
        })
        .collect();
    let key = |l: &Listed| match l {
        Listed::Entry(f) => f.key.clone(),
        Listed::Problem { key, .. } | Listed::LeftOut { key, .. } => key.clone(),
        Listed::SymlinksLeftOut(_) => Vec::new(),
    };
    listed.sort_by_key(key);
    if listing.symlinks_left_out > 0 {
        listed.insert(0, Listed::SymlinksLeftOut(listing.symlinks_left_out));
    }
    Ok(Fetched {
        method: listing.method,
        uploaded: listing.uploaded,
        upload_failed: listing.upload_failed,
        listed,
        matched,
    })
}

/// A remote side as it arrived, with how it was hashed.
pub(super) struct Fetched {
    pub(super) method: Method,
    pub(super) uploaded: bool,
    pub(super) upload_failed: Option<String>,
    pub(super) listed: Vec<Listed>,
    /// The offered directories the host said match (their keys).
    pub(super) matched: Vec<Vec<u8>>,
}

/// A remote file's key: its path without the remote root and the slashes
/// after it; the root itself (a single file) is keyed by its name.
fn remote_key(root: &[u8], path: &[u8]) -> Vec<u8> {
    match path.strip_prefix(root) {
        Some(rest)
            if !rest.is_empty() && (root.is_empty() || rest[0] == b'/' || root.ends_with(b"/")) =>
        {
            let start = rest.iter().position(|&b| b != b'/').unwrap_or(rest.len());
            rest[start..].to_vec()
        }
        Some(_) => path.rsplit(|&b| b == b'/').next().unwrap_or(path).to_vec(),
        None => path.to_vec(),
    }
}
