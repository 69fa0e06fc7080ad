//! A part of one directory's cache entries as SQLite stores it: a row per
//! (algorithm, directory, part), each a blob of the entries whose names
//! lie in the part's range, so a run loads a tree's entries with about one
//! row per directory instead of one per file, and looks a name up by binary
//! search in the blob as loaded, without decoding it.
//!
//! A directory's parts cover its names: the first starts at the empty
//! name, and each ends where the next starts. A part holds at most
//! [`ROW_MAX`] entries; a store that would make it larger splits it. So a
//! row's cost is bounded whatever the directory's size (one row
//! of a 300,000-entry directory cost SQLite four copies of 27 MB at every
//! store, and a run that loaded it held it whole).
//!
//! Layout (little-endian):
//!
//! ```text
//! u16 lo_len, lo bytes         the first name of the range (the row's key)
//! u32 hi_tag, hi bytes         0: to the end; else hi_len + 1, and the
//!                              first name after the range
//! u32 count
//! u32 offset[count]            where each record starts, sorted by name
//! record[count]:
//!     u16 name_len, name bytes
//!     u32 kind, u64 size, u64 ino, u64 dev, u64 fsid,
//!     i64 mtime_ns, i64 ctime_ns
//!     i64 hashed_at_ns
//!     u8 digest_len, digest bytes
//! u64 check                    XXH3-64 of (directory, algorithm, all above)
//! ```
//!
//! The check covers the row's key too (its directory, its algorithm and,
//! inside the blob, its range's start, compared with the key when loaded),
//! so a damaged page can only make entries vanish (a miss, then a re-read),
//! never hand one file's digest to another.

use std::collections::BTreeMap;

use xxhash_rust::xxh3::Xxh3;

use super::FileStamp;
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::fs::FsId;

/// What the cache remembers of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The file's stamp when it was read (identical before and after).
    pub stamp: FileStamp,
    /// The file system it was read on ([`FsId`]: the stamp does not tell
    /// one file system from another made alike).
    pub fs: FsId,
    /// When the run that read it started.
    pub hashed_at_ns: i64,
    /// The digest of the bytes read.
    pub digest: Digest,
}

impl Entry {
    /// The digest, if the file is on the file system `fs` the entry was
    /// read on, `stamp` is the recorded one, and the entry was settled
    /// when recorded: the cache's whole rule for trusting a digest.
    pub fn answer_for(&self, stamp: &FileStamp, fs: FsId) -> Option<Digest> {
        let same = self.fs == fs && self.stamp == *stamp;
        (same && self.stamp.is_settled_at(self.hashed_at_ns)).then_some(self.digest)
    }
}

/// Entries a row holds at most; a store that would make one larger splits
/// it into rows of about equal counts.
pub(super) const ROW_MAX: usize = 2048;

const RECORD_FIXED: usize = 4 + 8 * 7 + 1;

/// One part of a directory's entries as stored: checked once when loaded,
/// then read in place; held (`Vec<u8>`, the default) or borrowed from
/// SQLite's row (`&[u8]`, while a store merges into it).
#[derive(Clone, Debug)]
pub struct DirEntries<B = Vec<u8>> {
    /// The body: the blob without its check.
    blob: B,
    count: usize,
    /// Where the name after the range lies in the body, if it has one.
    hi: Option<(usize, usize)>,
    /// Where the offset table starts.
    table: usize,
}

/// A row to write: its range's start (its key), its blob, its count.
#[derive(Debug)]
pub struct Row {
    pub lo: Vec<u8>,
    pub blob: Vec<u8>,
    pub count: usize,
}

fn check_of(dir: &[u8], algorithm: Algorithm, body: &[u8]) -> u64 {
    let mut check = Xxh3::new();
    check.update(&(dir.len() as u64).to_le_bytes());
    check.update(dir);
    check.update(algorithm.to_string().as_bytes());
    check.update(&[0]);
    check.update(body);
    check.digest()
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A name as stored: at most `u16::MAX` bytes (no file system allows
/// more than 255).
fn clipped(name: &[u8]) -> &[u8] {
    &name[..name.len().min(u16::MAX as usize)]
}

/// The key of `dir`'s row or name `part`, ordered as the store orders
/// (directory, part): a path holds no NUL byte, so the directory's end
/// sorts before any longer directory's.
pub(super) fn row_key(dir: &[u8], part: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(dir.len() + 1 + part.len());
    key.extend_from_slice(dir);
    key.push(0);
    key.extend_from_slice(part);
    key
}

/// Whether `key` (a [`row_key`]) is one of `dir`'s.
pub(super) fn is_row_of(key: &[u8], dir: &[u8]) -> bool {
    key.len() > dir.len() && key.starts_with(dir) && key[dir.len()] == 0
}

impl DirEntries {
    /// Encodes `entries` (sorted by name, as a `BTreeMap` keeps them) as
    /// the row of `dir`'s names from `lo` to `hi`, however many.
    pub fn encode(
        dir: &[u8],
        algorithm: Algorithm,
        (lo, hi): (&[u8], Option<&[u8]>),
        entries: &BTreeMap<Vec<u8>, Entry>,
    ) -> Vec<u8> {
        let sorted = entries
            .iter()
            .map(|(name, entry)| (name.as_slice(), *entry));
        Self::encode_sorted(dir, algorithm, (lo, hi), entries.len(), sorted)
    }

    /// Encodes the `count` `entries`, sorted by name, one per name.
    pub fn encode_sorted<'a>(
        dir: &[u8],
        algorithm: Algorithm,
        (lo, hi): (&[u8], Option<&[u8]>),
        count: usize,
        entries: impl Iterator<Item = (&'a [u8], Entry)>,
    ) -> Vec<u8> {
        let (lo, hi) = (clipped(lo), hi.map(clipped));
        let mut blob = Vec::with_capacity(16 + count * (4 + RECORD_FIXED + 48) + 8);
        blob.extend_from_slice(&(lo.len() as u16).to_le_bytes());
        blob.extend_from_slice(lo);
        let hi_tag = hi.map_or(0, |hi| hi.len() as u32 + 1);
        blob.extend_from_slice(&hi_tag.to_le_bytes());
        blob.extend_from_slice(hi.unwrap_or_default());
        blob.extend_from_slice(&(count as u32).to_le_bytes());
        let table = blob.len();
        blob.resize(table + 4 * count, 0);
        for (i, (name, entry)) in entries.take(count).enumerate() {
            let offset = blob.len() as u32;
            blob[table + 4 * i..table + 4 * i + 4].copy_from_slice(&offset.to_le_bytes());
            let name = clipped(name);
            blob.extend_from_slice(&(name.len() as u16).to_le_bytes());
            blob.extend_from_slice(name);
            let s = entry.stamp;
            blob.extend_from_slice(&s.kind.to_le_bytes());
            for field in [s.size, s.ino, s.dev, entry.fs.0] {
                blob.extend_from_slice(&field.to_le_bytes());
            }
            for field in [s.mtime_ns, s.ctime_ns, entry.hashed_at_ns] {
                blob.extend_from_slice(&field.to_le_bytes());
            }
            let digest = entry.digest.as_bytes();
            blob.push(digest.len() as u8);
            blob.extend_from_slice(digest);
        }
        let check = check_of(dir, algorithm, &blob);
        blob.extend_from_slice(&check.to_le_bytes());
        blob
    }

    /// The rows that replace `dir`'s row of names from `lo` to `hi` (whose
    /// entries are `old`, if it held any) once `new` (sorted by name, one
    /// per name, all in the range) is put in: merged by name, `new`'s
    /// where both have a name, and split into rows of about equal counts
    /// if there are more than [`ROW_MAX`]. The first row keeps `lo`; each
    /// other starts at its first name.
    pub fn merged<B: AsRef<[u8]>>(
        dir: &[u8],
        algorithm: Algorithm,
        (lo, hi): (&[u8], Option<&[u8]>),
        old: Option<&DirEntries<B>>,
        new: &[(&[u8], Entry)],
    ) -> Vec<Row> {
        let mut old = old.into_iter().flat_map(|o| o.iter()).peekable();
        let mut new = new.iter().copied().peekable();
        let all: Vec<(&[u8], Entry)> = std::iter::from_fn(|| match (old.peek(), new.peek()) {
            (Some((o, _)), Some((n, _))) => match o.cmp(n) {
                std::cmp::Ordering::Less => old.next(),
                std::cmp::Ordering::Equal => {
                    old.next();
                    new.next()
                }
                std::cmp::Ordering::Greater => new.next(),
            },
            (Some(_), None) => old.next(),
            (None, _) => new.next(),
        })
        .collect();
        let rows = all.len().div_ceil(ROW_MAX).max(1);
        let bounds: Vec<usize> = (0..=rows).map(|r| r * all.len() / rows).collect();
        bounds
            .windows(2)
            .map(|w| {
                let (start, end) = (w[0], w[1]);
                let row_lo = if start == 0 { lo } else { all[start].0 };
                let row_hi = match all.get(end) {
                    Some((name, _)) => Some(*name),
                    None => hi,
                };
                let part = all[start..end].iter().copied();
                Row {
                    lo: row_lo.to_vec(),
                    blob: Self::encode_sorted(dir, algorithm, (row_lo, row_hi), end - start, part),
                    count: end - start,
                }
            })
            .collect()
    }

    /// The stored `blob` of `dir`'s row keyed `lo`, if its check holds and
    /// every record lies inside it; `None` means damaged: use nothing.
    pub fn decode(
        dir: &[u8],
        algorithm: Algorithm,
        lo: &[u8],
        mut blob: Vec<u8>,
    ) -> Option<DirEntries> {
        let (body_len, count, hi, table) = {
            let view = DirEntries::decode_ref(dir, algorithm, lo, &blob)?;
            (view.blob.len(), view.count, view.hi, view.table)
        };
        blob.truncate(body_len);
        Some(DirEntries {
            blob,
            count,
            hi,
            table,
        })
    }

    /// [`DirEntries::decode`] of a blob read in place.
    pub fn decode_ref<'a>(
        dir: &[u8],
        algorithm: Algorithm,
        lo: &[u8],
        blob: &'a [u8],
    ) -> Option<DirEntries<&'a [u8]>> {
        let body_len = blob.len().checked_sub(8)?;
        let check = u64_at(blob, body_len)?;
        let body = blob.get(..body_len)?;
        if check != check_of(dir, algorithm, body) {
            return None;
        }
        let lo_len = u16_at(body, 0)? as usize;
        // Another row's blob under this key is not this row.
        if body.get(2..2 + lo_len)? != clipped(lo) {
            return None;
        }
        let hi_tag = u32_at(body, 2 + lo_len)? as usize;
        let hi = hi_tag.checked_sub(1).map(|len| (2 + lo_len + 4, len));
        let count_at = 2 + lo_len + 4 + hi.map_or(0, |(_, len)| len);
        if let Some((at, len)) = hi {
            body.get(at..at + len)?;
        }
        let count = u32_at(body, count_at)? as usize;
        let entries = DirEntries {
            blob: body,
            count,
            hi,
            table: count_at + 4,
        };
        // The check makes damage unlikely; the bounds make it harmless; a
        // digest of another length is another algorithm's: the row is not
        // this algorithm's to answer from.
        (0..count)
            .all(|i| {
                entries
                    .record(i)
                    .is_some_and(|(_, e)| e.digest.len() == algorithm.output_len())
            })
            .then_some(entries)
    }
}

impl<B: AsRef<[u8]>> DirEntries<B> {
    /// Number of entries.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.blob.as_ref().len()
    }

    /// The first name of the range.
    pub fn lo(&self) -> &[u8] {
        let b = self.blob.as_ref();
        let len = u16_at(b, 0).unwrap_or(0) as usize;
        b.get(2..2 + len).unwrap_or_default()
    }

    /// The first name after the range, if it does not run to the end.
    pub fn hi(&self) -> Option<&[u8]> {
        self.hi.map(|(at, len)| &self.blob.as_ref()[at..at + len])
    }

    /// Whether `name` lies in the range: the row answers for it, with an
    /// entry or without one.
    pub fn covers(&self, name: &[u8]) -> bool {
        // Most rows hold a whole directory: no comparison at all.
        let lo = self.lo();
        (lo.is_empty() || name >= lo) && self.hi().is_none_or(|hi| name < hi)
    }

    fn record(&self, i: usize) -> Option<(&[u8], Entry)> {
        let b = self.blob.as_ref();
        let at = u32_at(b, self.table + 4 * i)? as usize;
        let name_len = u16_at(b, at)? as usize;
        let name = b.get(at + 2..at + 2 + name_len)?;
        let f = at + 2 + name_len;
        let digest_len = *b.get(f + RECORD_FIXED - 1)? as usize;
        let digest = b.get(f + RECORD_FIXED..f + RECORD_FIXED + digest_len)?;
        if digest_len > crate::digest::MAX_DIGEST_LEN {
            return None;
        }
        let stamp = FileStamp {
            kind: u32_at(b, f)?,
            size: u64_at(b, f + 4)?,
            ino: u64_at(b, f + 12)?,
            dev: u64_at(b, f + 20)?,
            mtime_ns: u64_at(b, f + 36)? as i64,
            ctime_ns: u64_at(b, f + 44)? as i64,
        };
        let entry = Entry {
            stamp,
            fs: FsId(u64_at(b, f + 28)?),
            hashed_at_ns: u64_at(b, f + 52)? as i64,
            digest: Digest::from_bytes(digest),
        };
        Some((name, entry))
    }

    fn name(&self, i: usize) -> &[u8] {
        self.record_name(i).unwrap_or_default()
    }

    fn record_name(&self, i: usize) -> Option<&[u8]> {
        let b = self.blob.as_ref();
        let at = u32_at(b, self.table + 4 * i)? as usize;
        let name_len = u16_at(b, at)? as usize;
        b.get(at + 2..at + 2 + name_len)
    }

    /// The entry for `name`.
    pub fn get(&self, name: &[u8]) -> Option<Entry> {
        let (mut low, mut high) = (0, self.count);
        while low < high {
            let mid = low + (high - low) / 2;
            match self.name(mid).cmp(name) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return self.record(mid).map(|(_, e)| e),
            }
        }
        None
    }

    /// Every entry, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], Entry)> + '_ {
        (0..self.count).filter_map(|i| self.record(i))
    }

    /// The entries as a map, to change and encode again.
    pub fn to_map(&self) -> BTreeMap<Vec<u8>, Entry> {
        self.iter().map(|(n, e)| (n.to_vec(), e)).collect()
    }
}

/// Decodes `body` sealed with a check that holds, as a lying cache file
/// would hand it over, and uses every entry it yields: the fuzz target
/// `cache-rows`. A row that decodes merges with a new entry into rows
/// that decode again and hold it.
/// Returns how many times it decoded.
#[cfg(all(test, feature = "remote"))]
pub(crate) fn fuzz_row(body: &[u8]) -> usize {
    let mut decoded = 0;
    let (dir, algorithm) = (&b"/d"[..], Algorithm::Md5);
    let mut blob = body.to_vec();
    blob.extend_from_slice(&check_of(dir, algorithm, body).to_le_bytes());
    // The key the row says it has, and the empty one.
    let lo_len = u16_at(body, 0).unwrap_or(0) as usize;
    let lo = body.get(2..2 + lo_len).unwrap_or_default();
    for lo in [lo, b""] {
        let Some(row) = DirEntries::decode_ref(dir, algorithm, lo, &blob) else {
            continue;
        };
        decoded += 1;
        let names: Vec<&[u8]> = row.iter().map(|(name, _)| name).collect();
        for name in &names {
            let _ = (row.get(name), row.covers(name));
        }
        let new_name = [row.lo(), b"~"].concat();
        let entry = Entry {
            stamp: FileStamp {
                kind: 0o100000,
                size: 0,
                ino: 1,
                dev: 1,
                mtime_ns: 0,
                ctime_ns: 0,
            },
            fs: FsId(1),
            hashed_at_ns: 0,
            digest: algorithm.hash_bytes(b""),
        };
        let range = (row.lo(), row.hi());
        for new in DirEntries::merged(dir, algorithm, range, Some(&row), &[(&new_name, entry)]) {
            let again = DirEntries::decode(dir, algorithm, &new.lo, new.blob);
            assert!(again.is_some(), "a merged row decodes");
        }
    }
    decoded
}

#[cfg(test)]
#[path = "dir_entries_tests.rs"]
mod tests;
