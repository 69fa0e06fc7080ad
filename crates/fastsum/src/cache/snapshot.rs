//! The entries a run may use: loaded in bulk from the store or a list, or
//! a directory at a time as the run reaches it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::dir_entries::{DirEntries, Entry};
use super::lazy::Lazy;
use crate::digest::Digest;
use crate::fs::FileStamp;

/// The entries a run may use, by absolute directory path bytes.
#[derive(Default)]
pub struct Snapshot {
    pub(super) source: Source,
}

pub(super) enum Source {
    /// Every directory the run may ask for, loaded before it starts.
    Loaded(HashMap<Vec<u8>, Arc<DirEntries>>),
    /// Directories loaded from the store when first asked for.
    Lazy(Box<Lazy>),
}

impl Source {
    /// The loader, for a snapshot loaded as asked.
    #[cfg(test)]
    pub(super) fn lazy(&self) -> Option<&Lazy> {
        match self {
            Source::Lazy(lazy) => Some(lazy),
            Source::Loaded(_) => None,
        }
    }
}

impl Default for Source {
    fn default() -> Self {
        Source::Loaded(HashMap::new())
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Source::Loaded(directories) => write!(f, "Snapshot({} directories)", directories.len()),
            Source::Lazy(_) => write!(f, "Snapshot(loaded as asked)"),
        }
    }
}

/// `absolute` split into the directory and name the cache keys it by.
pub(super) fn split_key(absolute: &Path) -> Option<(&[u8], &[u8])> {
    let name = absolute.file_name()?.as_encoded_bytes();
    let dir = absolute.parent()?.as_os_str().as_encoded_bytes();
    Some((dir, name))
}

impl Snapshot {
    pub(super) fn lazy(lazy: Lazy) -> Snapshot {
        Snapshot {
            source: Source::Lazy(Box::new(lazy)),
        }
    }

    /// Adds a directory loaded in bulk.
    pub(super) fn insert(&mut self, dir: Vec<u8>, entries: DirEntries) {
        if let Source::Loaded(directories) = &mut self.source {
            directories.insert(dir, Arc::new(entries));
        }
    }

    /// A snapshot of `algorithm`'s digests known some other way (a list
    /// written with stamps): each (absolute path, stamp, digest) as if a
    /// run had recorded it at `recorded_ns`.
    pub fn of_entries(
        algorithm: crate::algo::Algorithm,
        entries: impl IntoIterator<Item = (std::path::PathBuf, FileStamp, Digest)>,
        recorded_ns: i64,
    ) -> Snapshot {
        let mut by_dir: HashMap<Vec<u8>, std::collections::BTreeMap<Vec<u8>, Entry>> =
            HashMap::new();
        for (path, stamp, digest) in entries {
            let Some((dir, name)) = split_key(&path) else {
                continue;
            };
            let entry = Entry {
                stamp,
                hashed_at_ns: recorded_ns,
                digest,
            };
            by_dir
                .entry(dir.to_vec())
                .or_default()
                .insert(name.to_vec(), entry);
        }
        let mut snapshot = Snapshot::default();
        for (dir, entries) in by_dir {
            let blob = DirEntries::encode(&dir, algorithm, &entries);
            if let Some(decoded) = DirEntries::decode(&dir, algorithm, blob) {
                snapshot.insert(dir, decoded);
            }
        }
        snapshot
    }

    /// The cached digest of the file at the absolute `path`, if its current
    /// `stamp` is the one recorded and the entry was settled when recorded.
    pub fn lookup(&self, path: &Path, stamp: &FileStamp) -> Option<Digest> {
        let (dir, name) = split_key(path)?;
        self.directory(dir)?.get(name)?.answer_for(stamp)
    }

    /// The entries of the directory at absolute path `dir`.
    pub fn directory(&self, dir: &[u8]) -> Option<Arc<DirEntries>> {
        match &self.source {
            Source::Loaded(directories) => directories.get(dir).cloned(),
            Source::Lazy(lazy) => lazy.directory(dir),
        }
    }

    /// Entries loaded in bulk (0 for one loaded as asked).
    pub fn len(&self) -> usize {
        match &self.source {
            Source::Loaded(directories) => directories.values().map(|d| d.len()).sum(),
            Source::Lazy(_) => 0,
        }
    }

    /// Whether nothing was loaded in bulk.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
