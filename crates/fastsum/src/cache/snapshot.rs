//! The entries a run may use, loaded in bulk from the store.

use std::collections::HashMap;
use std::path::Path;

use super::dir_entries::{DirEntries, Entry};
use crate::digest::Digest;
use crate::fs::FileStamp;

/// The entries a run may use, loaded in bulk: absolute directory path
/// bytes to that directory's entries.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub(super) directories: HashMap<Vec<u8>, DirEntries>,
}

/// `absolute` split into the directory and name the cache keys it by.
pub(super) fn split_key(absolute: &Path) -> Option<(&[u8], &[u8])> {
    let name = absolute.file_name()?.as_encoded_bytes();
    let dir = absolute.parent()?.as_os_str().as_encoded_bytes();
    Some((dir, name))
}

impl Snapshot {
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
        let directories = by_dir
            .into_iter()
            .filter_map(|(dir, entries)| {
                let blob = DirEntries::encode(&dir, algorithm, &entries);
                let decoded = DirEntries::decode(&dir, algorithm, blob)?;
                Some((dir, decoded))
            })
            .collect();
        Snapshot { directories }
    }

    /// The cached digest of the file at the absolute `path`, if its current
    /// `stamp` is the one recorded and the entry was settled when recorded.
    pub fn lookup(&self, path: &Path, stamp: &FileStamp) -> Option<Digest> {
        let (dir, name) = split_key(path)?;
        self.directory(dir)?.get(name)?.answer_for(stamp)
    }

    /// The entries of the directory at absolute path `dir`.
    pub fn directory(&self, dir: &[u8]) -> Option<&DirEntries> {
        self.directories.get(dir)
    }

    /// Entries loaded.
    pub fn len(&self) -> usize {
        self.directories.values().map(DirEntries::len).sum()
    }

    /// Whether nothing was loaded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
