//! The entries a run may use: loaded in bulk from the store or a list, or
//! a row at a time as the run reaches it.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::dir_entries::{is_row_of, row_key, DirEntries, Entry};
use super::lazy::Lazy;
use crate::digest::Digest;
use crate::fs::{FileStamp, FsId};

/// The entries a run may use, by absolute directory path bytes and name.
#[derive(Default)]
pub(crate) struct Snapshot {
    pub(super) source: Source,
}

pub(super) enum Source {
    /// Every row the run may ask for, loaded before it starts, by
    /// [`row_key`].
    Loaded(BTreeMap<Vec<u8>, Arc<DirEntries>>),
    /// Rows loaded from the store when first asked for.
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
        Source::Loaded(BTreeMap::new())
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Source::Loaded(rows) => write!(f, "Snapshot({} rows)", rows.len()),
            Source::Lazy(_) => write!(f, "Snapshot(loaded as asked)"),
        }
    }
}

/// The row of `rows` (by [`row_key`]) whose range holds `dir`'s `name`.
pub(super) fn row_holding<'a>(
    rows: &'a BTreeMap<Vec<u8>, Arc<DirEntries>>,
    dir: &[u8],
    name: &[u8],
) -> Option<(&'a Vec<u8>, &'a Arc<DirEntries>)> {
    rows.range(..=row_key(dir, name))
        .next_back()
        .filter(|(key, row)| is_row_of(key, dir) && row.covers(name))
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

    /// Adds a row of `dir` loaded in bulk.
    pub(super) fn insert(&mut self, dir: &[u8], entries: DirEntries) {
        if let Source::Loaded(rows) = &mut self.source {
            rows.insert(row_key(dir, entries.lo()), Arc::new(entries));
        }
    }

    /// A snapshot of `algorithm`'s digests known some other way (a list
    /// written with stamps): each (path, stamp, file system id, digest) as
    /// if a run had recorded it now, the path relative to the working
    /// directory or absolute.
    pub(crate) fn of_entries(
        algorithm: crate::algo::Algorithm,
        entries: impl IntoIterator<Item = (std::path::PathBuf, FileStamp, FsId, Digest)>,
    ) -> Snapshot {
        let recorded_ns = crate::fs::stat::now_ns();
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut by_dir: HashMap<Vec<u8>, std::collections::BTreeMap<Vec<u8>, Entry>> =
            HashMap::new();
        for (path, stamp, fs, digest) in entries {
            let path = super::absolute_in(&cwd, &path);
            let Some((dir, name)) = split_key(&path) else {
                continue;
            };
            // The file system the list says the stamp was taken on (none
            // said: 0, which matches no file system that gives an id, so
            // such a stamp vouches for nothing there).
            let entry = Entry {
                stamp,
                fs,
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
            let blob = DirEntries::encode(&dir, algorithm, (b"", None), &entries);
            if let Some(decoded) = DirEntries::decode(&dir, algorithm, b"", blob) {
                snapshot.insert(&dir, decoded);
            }
        }
        snapshot
    }

    /// The cached digest of the file at the absolute `path`, if its current
    /// `stamp` on the file system `fs` is the one recorded and the entry
    /// was settled when recorded ([`Entry::answer_for`]).
    pub(crate) fn lookup(&self, path: &Path, stamp: &FileStamp, fs: FsId) -> Option<Digest> {
        self.entry(path)?.answer_for(stamp, fs)
    }

    /// What is recorded for the file at the absolute `path`, whatever its
    /// stamp now.
    pub(crate) fn entry(&self, path: &Path) -> Option<Entry> {
        let (dir, name) = split_key(path)?;
        self.row_holding(dir, name)?.get(name)
    }

    /// The row whose range holds `name` of the directory at absolute path
    /// `dir`, if there is one.
    pub(super) fn row_holding(&self, dir: &[u8], name: &[u8]) -> Option<Arc<DirEntries>> {
        match &self.source {
            Source::Loaded(rows) => row_holding(rows, dir, name).map(|(_, row)| row.clone()),
            Source::Lazy(lazy) => lazy.row_holding(dir, name),
        }
    }

    /// Entries loaded in bulk (0 for one loaded as asked).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match &self.source {
            Source::Loaded(rows) => rows.values().map(|d| d.len()).sum(),
            Source::Lazy(_) => 0,
        }
    }

    /// Whether nothing was loaded in bulk.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
