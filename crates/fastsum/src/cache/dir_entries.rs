//! One directory's cache entries as SQLite stores them: a single blob per
//! (directory, algorithm), so a run loads a tree's entries with one row per
//! directory instead of one per file, and looks a name up by binary search
//! in the blob as loaded, without decoding it.
//!
//! Layout (little-endian):
//!
//! ```text
//! u32 count
//! u32 offset[count]            where each record starts, sorted by name
//! record[count]:
//!     u16 name_len, name bytes
//!     u32 kind, u64 size, u64 ino, u64 dev, i64 mtime_ns, i64 ctime_ns
//!     i64 hashed_at_ns
//!     u8 digest_len, digest bytes
//! u64 check                    XXH3-64 of (directory, algorithm, all above)
//! ```
//!
//! The check covers the row's key too, so a damaged page can only make an
//! entry vanish (a miss, then a re-read), never hand one file's digest to
//! another.

use std::collections::BTreeMap;

use xxhash_rust::xxh3::Xxh3;

use super::FileStamp;
use crate::algo::Algorithm;
use crate::digest::Digest;

/// What the cache remembers of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The file's stamp when it was read (identical before and after).
    pub stamp: FileStamp,
    /// When the run that read it started.
    pub hashed_at_ns: i64,
    /// The digest of the bytes read.
    pub digest: Digest,
}

impl Entry {
    /// The digest, if `stamp` is the recorded one and the entry was settled
    /// when recorded.
    pub fn answer_for(&self, stamp: &FileStamp) -> Option<Digest> {
        (self.stamp == *stamp && self.stamp.is_settled_at(self.hashed_at_ns)).then_some(self.digest)
    }
}

const RECORD_FIXED: usize = 4 + 8 * 6 + 1;

/// A directory's entries as stored: checked once when loaded, then read in
/// place; held (`Vec<u8>`, the default) or borrowed from SQLite's row
/// (`&[u8]`, while a store merges into it: a large directory's row is not
/// copied once more for that).
#[derive(Clone, Debug)]
pub struct DirEntries<B = Vec<u8>> {
    /// The body: the blob without its check.
    blob: B,
    count: usize,
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

impl DirEntries {
    /// Encodes `entries` (sorted by name, as a `BTreeMap` keeps them) for
    /// the row (`dir`, `algorithm`).
    pub fn encode(dir: &[u8], algorithm: Algorithm, entries: &BTreeMap<Vec<u8>, Entry>) -> Vec<u8> {
        let sorted = entries
            .iter()
            .map(|(name, entry)| (name.as_slice(), *entry));
        Self::encode_sorted(dir, algorithm, entries.len(), sorted)
    }

    /// Encodes the `count` `entries`, sorted by name, one per name.
    pub fn encode_sorted<'a>(
        dir: &[u8],
        algorithm: Algorithm,
        count: usize,
        entries: impl Iterator<Item = (&'a [u8], Entry)>,
    ) -> Vec<u8> {
        let mut blob = Vec::with_capacity(4 + count * (4 + RECORD_FIXED + 48) + 8);
        blob.extend_from_slice(&(count as u32).to_le_bytes());
        let table = blob.len();
        blob.resize(table + 4 * count, 0);
        for (i, (name, entry)) in entries.take(count).enumerate() {
            let offset = blob.len() as u32;
            blob[table + 4 * i..table + 4 * i + 4].copy_from_slice(&offset.to_le_bytes());
            let name = &name[..name.len().min(u16::MAX as usize)];
            blob.extend_from_slice(&(name.len() as u16).to_le_bytes());
            blob.extend_from_slice(name);
            let s = entry.stamp;
            blob.extend_from_slice(&s.kind.to_le_bytes());
            for field in [s.size, s.ino, s.dev] {
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

    /// The row of `dir` with `new` put in: `old`'s entries and `new`'s
    /// (sorted by name, one per name) merged by name, `new`'s where both
    /// have a name. Without a map of names: a large directory's row is
    /// rewritten with one allocation, its blob. Returns the blob and its
    /// number of entries.
    pub fn merged<B: AsRef<[u8]>>(
        dir: &[u8],
        algorithm: Algorithm,
        old: Option<&DirEntries<B>>,
        new: &[(&[u8], Entry)],
    ) -> (Vec<u8>, usize) {
        let merge = || {
            let mut old = old.into_iter().flat_map(|o| o.iter()).peekable();
            let mut new = new.iter().copied().peekable();
            std::iter::from_fn(move || match (old.peek(), new.peek()) {
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
        };
        let count = merge().count();
        (Self::encode_sorted(dir, algorithm, count, merge()), count)
    }

    /// The stored `blob` of row (`dir`, `algorithm`), if its check holds
    /// and every record lies inside it; `None` means damaged: use nothing.
    pub fn decode(dir: &[u8], algorithm: Algorithm, mut blob: Vec<u8>) -> Option<DirEntries> {
        let (body_len, count) = {
            let view = DirEntries::decode_ref(dir, algorithm, &blob)?;
            (view.blob.len(), view.count)
        };
        blob.truncate(body_len);
        Some(DirEntries { blob, count })
    }

    /// [`DirEntries::decode`] of a blob read in place.
    pub fn decode_ref<'a>(
        dir: &[u8],
        algorithm: Algorithm,
        blob: &'a [u8],
    ) -> Option<DirEntries<&'a [u8]>> {
        let body_len = blob.len().checked_sub(8)?;
        let check = u64_at(blob, body_len)?;
        let body = blob.get(..body_len)?;
        if check != check_of(dir, algorithm, body) {
            return None;
        }
        let count = u32_at(body, 0)? as usize;
        let entries = DirEntries { blob: body, count };
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
    pub fn len(&self) -> usize {
        self.count
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.blob.as_ref().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn record(&self, i: usize) -> Option<(&[u8], Entry)> {
        let b = self.blob.as_ref();
        let at = u32_at(b, 4 + 4 * i)? as usize;
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
            mtime_ns: u64_at(b, f + 28)? as i64,
            ctime_ns: u64_at(b, f + 36)? as i64,
        };
        let entry = Entry {
            stamp,
            hashed_at_ns: u64_at(b, f + 44)? as i64,
            digest: Digest::from_bytes(digest),
        };
        Some((name, entry))
    }

    fn name(&self, i: usize) -> &[u8] {
        self.record_name(i).unwrap_or_default()
    }

    fn record_name(&self, i: usize) -> Option<&[u8]> {
        let b = self.blob.as_ref();
        let at = u32_at(b, 4 + 4 * i)? as usize;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: u64) -> Entry {
        Entry {
            stamp: FileStamp {
                kind: 0o100000,
                size: i,
                ino: 1000 + i,
                dev: 7,
                mtime_ns: -5,
                ctime_ns: i as i64 * 3,
            },
            hashed_at_ns: 10_000_000_000,
            digest: Algorithm::Sha256.hash_bytes(&i.to_le_bytes()),
        }
    }

    fn sample() -> BTreeMap<Vec<u8>, Entry> {
        (0..50u64)
            .map(|i| (format!("name-{}", i * 7919 % 101).into_bytes(), entry(i)))
            .chain([
                (b"\xff\xfe odd".to_vec(), entry(77)),
                (Vec::new(), entry(78)),
            ])
            .collect()
    }

    #[test]
    fn encoded_entries_come_back_by_name() {
        let map = sample();
        let blob = DirEntries::encode(b"/d", Algorithm::Sha256, &map);
        let entries = DirEntries::decode(b"/d", Algorithm::Sha256, blob).unwrap();
        assert_eq!(entries.len(), map.len());
        for (name, entry) in &map {
            assert_eq!(entries.get(name), Some(*entry), "{name:?}");
        }
        assert_eq!(entries.get(b"name-"), None);
        assert_eq!(entries.get(b"zzz"), None);
        assert_eq!(entries.to_map(), map);
    }

    /// A merge gives what inserting into a map of the old entries gives.
    #[test]
    fn a_merge_equals_a_map_updated() {
        let old_map = sample();
        let old = DirEntries::decode(
            b"/d",
            Algorithm::Sha256,
            DirEntries::encode(b"/d", Algorithm::Sha256, &old_map),
        )
        .unwrap();
        let mut new: Vec<(Vec<u8>, Entry)> = (40..70u64)
            .map(|i| {
                (
                    format!("name-{}", i * 7919 % 101).into_bytes(),
                    entry(i + 1000),
                )
            })
            .chain([(b"a".to_vec(), entry(5)), (b"\xff\xff".to_vec(), entry(6))])
            .collect();
        new.sort_by(|a, b| a.0.cmp(&b.0));
        new.dedup_by(|a, b| a.0 == b.0);
        let borrowed: Vec<(&[u8], Entry)> = new.iter().map(|(n, e)| (n.as_slice(), *e)).collect();
        let mut expected = old_map.clone();
        expected.extend(new.iter().cloned());
        for old in [Some(&old), None] {
            let (blob, count) = DirEntries::merged(b"/d", Algorithm::Sha256, old, &borrowed);
            let merged = DirEntries::decode(b"/d", Algorithm::Sha256, blob).unwrap();
            let want = match old {
                Some(_) => expected.clone(),
                None => new.iter().cloned().collect(),
            };
            assert_eq!(merged.to_map(), want);
            assert_eq!(count, want.len());
        }
    }

    #[test]
    fn any_damage_or_another_key_is_rejected() {
        let blob = DirEntries::encode(b"/d", Algorithm::Sha256, &sample());
        assert!(DirEntries::decode(b"/e", Algorithm::Sha256, blob.clone()).is_none());
        assert!(DirEntries::decode(b"/d", Algorithm::Sha512, blob.clone()).is_none());
        for at in [0, 5, blob.len() / 2, blob.len() - 1] {
            let mut damaged = blob.clone();
            damaged[at] ^= 0x10;
            assert!(DirEntries::decode(b"/d", Algorithm::Sha256, damaged).is_none());
        }
        for len in [0, 3, 8, blob.len() - 1] {
            let cut = blob[..len].to_vec();
            assert!(DirEntries::decode(b"/d", Algorithm::Sha256, cut).is_none());
        }
    }

    #[test]
    fn an_entry_answers_only_its_own_settled_stamp() {
        let e = entry(3);
        assert_eq!(e.answer_for(&e.stamp), Some(e.digest));
        let mut other = e.stamp;
        other.ino += 1;
        assert_eq!(e.answer_for(&other), None);
        let racy = Entry {
            hashed_at_ns: e.stamp.ctime_ns,
            ..e
        };
        assert_eq!(racy.answer_for(&racy.stamp), None);
    }
}
