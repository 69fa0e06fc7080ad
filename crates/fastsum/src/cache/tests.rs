//! The store and its snapshots: stamps, checks, racy entries, damage.

use std::path::{Path, PathBuf};

use super::*;
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::fs::FsId;

/// The file system the tests' entries were read on.
const FS: FsId = FsId(9);

/// MD5 of "abc" (RFC 1321's test suite), a digest to store.
const MD5_ABC: &str = "900150983cd24fb0d6963f7d28e17f72";
use crate::fs::stat::now_ns;

fn stamp_of(path: &Path) -> FileStamp {
    FileStamp::of(&std::fs::metadata(path).unwrap())
}

/// A directory with file `f` ("abc") and a cache holding its MD5,
/// stored as settled.
fn one_stored_entry() -> (tempfile::TempDir, PathBuf, FileStamp, Digest, Cache) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"abc").unwrap();
    let stamp = stamp_of(&file);
    let later = now_ns() + 10 * 1_000_000_000;
    let mut cache = Cache::open(&dir.path().join("c.sqlite")).unwrap();
    let digest = Digest::from_hex(MD5_ABC).unwrap();
    let entry = NewEntry {
        path: file.clone(),
        fs: FS,
        stamp,
        digest,
    };
    assert_eq!(cache.store(Algorithm::Md5, &[entry], later).unwrap(), 1);
    (dir, file, stamp, digest, cache)
}

#[test]
fn stored_entries_come_back_only_for_the_same_stamp() {
    let (dir, file, stamp, digest, mut cache) = one_stored_entry();
    let snapshot = cache
        .load(Algorithm::Md5, &[dir.path().to_path_buf()])
        .unwrap();
    assert_eq!(snapshot.lookup(&file, &stamp, FS), Some(digest));
    let mut moved = stamp;
    moved.ctime_ns += 1;
    assert_eq!(snapshot.lookup(&file, &moved, FS), None, "ctime differs");
    assert_eq!(
        snapshot.lookup(&file, &stamp, FsId(10)),
        None,
        "another file system, the stamp alike"
    );
    let other = cache
        .load(Algorithm::Sha1, &[dir.path().to_path_buf()])
        .unwrap();
    assert!(other.is_empty(), "another algorithm is a miss");
}

#[test]
fn a_row_that_fails_its_check_is_a_miss_never_an_answer() {
    let (dir, file, stamp, _, mut cache) = one_stored_entry();
    // Flip one bit of the stored digest, as a damaged page would.
    let blob: Vec<u8> = cache
        .connection
        .query_row("SELECT entries FROM dirs", [], |r| r.get(0))
        .unwrap();
    let mut damaged = blob.clone();
    let digest_at = blob.len() - 8 - 1;
    damaged[digest_at] ^= 1;
    cache
        .connection
        .execute("UPDATE dirs SET entries = ?1", [&damaged])
        .unwrap();
    let snapshot = cache
        .load(Algorithm::Md5, &[dir.path().to_path_buf()])
        .unwrap();
    assert_eq!(snapshot.lookup(&file, &stamp, FS), None);
    assert!(snapshot.is_empty());
}

#[test]
fn racy_entries_are_never_stored() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"abc").unwrap();
    let mut cache = Cache::open(&dir.path().join("c.sqlite")).unwrap();
    let entry = NewEntry {
        path: file.clone(),
        fs: FS,
        stamp: stamp_of(&file),
        digest: Digest::from_hex(MD5_ABC).unwrap(),
    };
    // Hashing "started" now: the file was written within the window.
    assert_eq!(cache.store(Algorithm::Md5, &[entry], now_ns()).unwrap(), 0);
}

#[test]
fn a_garbage_file_is_moved_aside_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    std::fs::write(&path, b"this is not a database, not at all, no").unwrap();
    let mut cache = Cache::open(&path).unwrap();
    let notice = cache.take_notice().unwrap();
    assert!(notice.contains("moved aside"), "{notice}");
    assert_eq!(cache.take_notice(), None, "said once");
    assert_eq!(cache.summary().unwrap().entries, 0);
    assert!(dir.path().join("c.sqlite.broken").exists());
    let mut again = Cache::open(&path).unwrap();
    assert_eq!(again.take_notice(), None);
}

/// Entries for `dirs` directories of `per_dir` files each under `root`
/// (not on disk: stamps made up, stored as settled), and the cache file.
fn many_directories(root: &Path, dirs: usize, per_dir: usize) -> (PathBuf, Vec<NewEntry>) {
    let path = root.join("c.sqlite");
    let mut cache = Cache::open(&path).unwrap();
    let entries: Vec<NewEntry> = (0..dirs * per_dir)
        .map(|i| NewEntry {
            path: root.join(format!("d{}", i / per_dir)).join(format!("f{i}")),
            fs: FS,
            stamp: FileStamp {
                kind: 0o100000,
                size: 1 + i as u64,
                ino: 10 + i as u64,
                dev: 1,
                mtime_ns: 1_000,
                ctime_ns: 2_000,
            },
            digest: Algorithm::Md5.hash_bytes(&i.to_le_bytes()),
        })
        .collect();
    let stored = cache.store(Algorithm::Md5, &entries, now_ns()).unwrap();
    assert_eq!(stored, entries.len());
    (path, entries)
}

/// A run's memory is bounded: its entries are loaded a directory at a
/// time and let go past a budget; every entry still answers after its
/// directory was let go and loaded again, and only for its own stamp and algorithm.
#[test]
fn directories_loaded_as_asked_stay_within_the_budget_and_answer_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (path, entries) = many_directories(dir.path(), 40, 50);
    let lazy = lazy::Lazy::with_budget(&path, Algorithm::Md5, store::BUSY_TIMEOUT, 20_000).unwrap();
    let snapshot = Snapshot::lazy(lazy);
    for _pass in 0..2 {
        for e in &entries {
            assert_eq!(snapshot.lookup(&e.path, &e.stamp, FS), Some(e.digest));
            let mut other = e.stamp;
            other.ino += 1;
            assert_eq!(snapshot.lookup(&e.path, &other, FS), None);
        }
    }
    let Snapshot { source } = &snapshot;
    let Some(lazy) = source.lazy() else {
        panic!("loaded in bulk")
    };
    let (bytes, held, _) = lazy.held();
    assert!(bytes <= 20_000, "{bytes} bytes held");
    assert!((1..40).contains(&held), "{held} directories held");
    let other =
        Snapshot::lazy(lazy::Lazy::open(&path, Algorithm::Sha1, store::BUSY_TIMEOUT).unwrap());
    assert_eq!(other.lookup(&entries[0].path, &entries[0].stamp, FS), None);
    assert!(other.row_holding(b"/nowhere", b"f").is_none());
}

/// A row damaged after the run started is a miss, never another answer.
#[test]
fn a_row_damaged_under_a_lazy_snapshot_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let (path, entries) = many_directories(dir.path(), 2, 3);
    let snapshot =
        Snapshot::lazy(lazy::Lazy::open(&path, Algorithm::Md5, store::BUSY_TIMEOUT).unwrap());
    let cache = Cache::open(&path).unwrap();
    let d1 = dir.path().join("d1");
    let blob: Vec<u8> = cache
        .connection
        .query_row(
            "SELECT entries FROM dirs WHERE dir = ?1",
            [d1.as_os_str().as_encoded_bytes()],
            |r| r.get(0),
        )
        .unwrap();
    let mut damaged = blob;
    let at = damaged.len() - 9;
    damaged[at] ^= 1;
    cache
        .connection
        .execute(
            "UPDATE dirs SET entries = ?1 WHERE dir = ?2",
            rusqlite::params![damaged, d1.as_os_str().as_encoded_bytes()],
        )
        .unwrap();
    let (first, last) = (&entries[0], &entries[5]);
    assert_eq!(
        snapshot.lookup(&first.path, &first.stamp, FS),
        Some(first.digest)
    );
    assert_eq!(snapshot.lookup(&last.path, &last.stamp, FS), None);
}

/// A range of keys read whole answers for the directories in it that have
/// no row, without another query: a first run (no rows at all) queries
/// once; directories between rows are not asked for.
#[test]
fn directories_without_a_row_are_not_asked_for_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (path, entries) = many_directories(dir.path(), 3, 2);
    let snapshot =
        Snapshot::lazy(lazy::Lazy::open(&path, Algorithm::Md5, store::BUSY_TIMEOUT).unwrap());
    let root = dir.path().as_os_str().as_encoded_bytes().to_vec();
    let asked = |name: &str| {
        let mut key = root.clone();
        key.extend_from_slice(name.as_bytes());
        snapshot.row_holding(&key, b"f").map(|e| e.len())
    };
    // Rows d0, d1, d2; one query from /d0 reads them all, to the end.
    assert_eq!(asked("/d0"), Some(2));
    for name in ["/d0a", "/d1", "/d15", "/d2", "/d3", "/e"] {
        let want = ["/d1", "/d2"].contains(&name).then_some(2);
        assert_eq!(asked(name), want, "{name}");
    }
    let Snapshot { source } = &snapshot;
    assert_eq!(source.lazy().unwrap().held().2, 1);
    // Before the range: asked, and answered rightly.
    assert_eq!(asked("/a"), None);
    assert_eq!(source.lazy().unwrap().held().2, 2);
    let e = &entries[5];
    assert_eq!(snapshot.lookup(&e.path, &e.stamp, FS), Some(e.digest));
}

/// Entries named `f000000`... in `dir`, stamped long ago (settled).
fn named_entries(dir: &Path, range: std::ops::Range<usize>, salt: u64) -> Vec<NewEntry> {
    range
        .map(|i| NewEntry {
            path: dir.join(format!("f{i:06}")),
            fs: FS,
            stamp: FileStamp {
                kind: 0o100000,
                size: i as u64,
                ino: 100 + i as u64,
                dev: 1,
                mtime_ns: 1_000,
                ctime_ns: 2_000,
            },
            digest: Algorithm::Md5.hash_bytes(&(i as u64 ^ salt).to_le_bytes()),
        })
        .collect()
}

/// Each row of `dir`: its key, count and decoded entries, in order.
fn rows_of(cache: &Cache, dir: &Path) -> Vec<(Vec<u8>, i64, dir_entries::DirEntries)> {
    let dir = dir.as_os_str().as_encoded_bytes();
    let mut statement = cache
        .connection
        .prepare("SELECT part, count, entries FROM dirs WHERE dir = ?1 ORDER BY part")
        .unwrap();
    let rows = statement
        .query_map([dir], |r| {
            let part: Vec<u8> = r.get(0)?;
            let blob: Vec<u8> = r.get(2)?;
            let entries = dir_entries::DirEntries::decode(dir, Algorithm::Md5, &part, blob);
            Ok((part, r.get(1)?, entries.expect("check holds")))
        })
        .unwrap();
    rows.collect::<rusqlite::Result<_>>().unwrap()
}

/// A directory's entries are kept in rows of at most ROW_MAX,
/// whose ranges tile its names, whatever order its batches come in; a
/// batch rewrites the rows its names fall in, an update replaces, and
/// every entry answers from a bulk snapshot and from one loaded as asked
/// within its budget.
#[test]
fn a_large_directory_is_kept_in_rows_of_a_bounded_count() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    let n = 20_000;
    let mut entries = named_entries(&big, 0..n, 0);
    // Batches in no order of names: every row is met again.
    let order: Vec<usize> = (0..n).map(|i| i * 7919 % n).collect();
    let shuffled: Vec<NewEntry> = order.iter().map(|&i| entries[i].clone()).collect();
    let path = dir.path().join("c.sqlite");
    let mut cache = Cache::open(&path).unwrap();
    let later = now_ns() + 10 * 1_000_000_000;
    for batch in shuffled.chunks(4096) {
        assert_eq!(
            cache.store(Algorithm::Md5, batch, later).unwrap(),
            batch.len()
        );
    }
    // Half of them again with other digests: replaced, not added.
    let changed = named_entries(&big, 0..n / 2, 0xabc);
    cache.store(Algorithm::Md5, &changed, later).unwrap();
    entries[..n / 2].clone_from_slice(&changed);
    let rows = rows_of(&cache, &big);
    assert!(
        rows.len() >= n / dir_entries::ROW_MAX,
        "{} rows",
        rows.len()
    );
    assert_eq!(rows.iter().map(|r| r.1).sum::<i64>(), n as i64);
    assert_eq!(cache.summary().unwrap().entries, n as u64);
    assert_eq!(rows[0].0, b"");
    for (part, count, decoded) in &rows {
        assert!(*count as usize <= dir_entries::ROW_MAX, "{count}");
        assert_eq!(
            (decoded.lo(), decoded.len()),
            (part.as_slice(), *count as usize)
        );
    }
    for pair in rows.windows(2) {
        assert_eq!(pair[0].2.hi(), Some(pair[1].0.as_slice()));
    }
    assert_eq!(rows.last().unwrap().2.hi(), None);
    let bulk = cache
        .load(Algorithm::Md5, &[dir.path().to_path_buf()])
        .unwrap();
    let budget = 600_000;
    let lazy = lazy::Lazy::with_budget(&path, Algorithm::Md5, store::BUSY_TIMEOUT, budget);
    let lazy = Snapshot::lazy(lazy.unwrap());
    for e in &entries {
        assert_eq!(bulk.lookup(&e.path, &e.stamp, FS), Some(e.digest));
        assert_eq!(lazy.lookup(&e.path, &e.stamp, FS), Some(e.digest));
    }
    let (bytes, _, queries) = lazy.source.lazy().unwrap().held();
    assert!(bytes <= budget, "{bytes} bytes held");
    assert!(
        queries < rows.len() as u64,
        "{queries} queries for {} rows",
        rows.len()
    );
    // Names between and beyond the stored ones: misses, never answers.
    for name in ["f", "f0000005", "g", "e"] {
        assert_eq!(lazy.lookup(&big.join(name), &entries[5].stamp, FS), None);
    }
}

/// A row put under another row's key (a damaged page, or a lying file)
/// answers nothing: its range's start is checked against its key.
#[test]
fn a_row_under_another_key_answers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    let entries = named_entries(&big, 0..5_000, 0);
    let path = dir.path().join("c.sqlite");
    let mut cache = Cache::open(&path).unwrap();
    cache
        .store(Algorithm::Md5, &entries, now_ns() + 10_000_000_000)
        .unwrap();
    let rows = rows_of(&cache, &big);
    assert!(rows.len() >= 3);
    // The last row's blob under the second row's key.
    let last: Vec<u8> = cache
        .connection
        .query_row(
            "SELECT entries FROM dirs WHERE part = ?1",
            [&rows.last().unwrap().0],
            |r| r.get(0),
        )
        .unwrap();
    cache
        .connection
        .execute(
            "UPDATE dirs SET entries = ?1 WHERE part = ?2",
            rusqlite::params![last, rows[1].0],
        )
        .unwrap();
    let bulk = cache
        .load(Algorithm::Md5, &[dir.path().to_path_buf()])
        .unwrap();
    let lazy =
        Snapshot::lazy(lazy::Lazy::open(&path, Algorithm::Md5, store::BUSY_TIMEOUT).unwrap());
    let second = rows[1].1 as usize;
    for (i, e) in entries.iter().enumerate() {
        let in_second = (rows[0].1 as usize..rows[0].1 as usize + second).contains(&i);
        let want = (!in_second).then_some(e.digest);
        assert_eq!(bulk.lookup(&e.path, &e.stamp, FS), want, "{i}");
        assert_eq!(lazy.lookup(&e.path, &e.stamp, FS), want, "{i}");
    }
}
