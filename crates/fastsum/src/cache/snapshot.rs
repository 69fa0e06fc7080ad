//! The entries a run may use, loaded in bulk from the store.

use std::collections::HashMap;
use std::path::Path;

use super::dir_entries::DirEntries;
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
