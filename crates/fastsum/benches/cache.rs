//! The cache's cost per run at lookup:store ratios 1:1, 1:10 and 1:100 (as
//! the classic cache-module comparisons measure): a run loads the entries
//! under its root in bulk, looks up 100 files, and stores 100, 1,000 or
//! 10,000 new entries in one transaction.
//!
//! Run: `cargo bench -p fastsum --features bench-internals --bench cache`

use std::path::PathBuf;

use divan::Bencher;
use fastsum::cache::bench::{load_and_look_up, store, FsId, NewEntry};
use fastsum::cache::{Cache, FileStamp};
use fastsum::Algorithm;

fn main() {
    divan::main();
}

const LOOKUPS: usize = 100;

fn stamp(i: usize) -> FileStamp {
    FileStamp {
        kind: libc_regular(),
        size: i as u64,
        ino: i as u64,
        dev: 1,
        mtime_ns: 1_000_000_000,
        ctime_ns: 1_000_000_000,
    }
}

fn libc_regular() -> u32 {
    0o100000
}

fn entry(i: usize) -> NewEntry {
    NewEntry {
        path: PathBuf::from(format!("/bench/root/d{:03}/f{i:06}", i % 100)),
        stamp: stamp(i),
        fs: FsId(1),
        digest: Algorithm::Md5.hash_bytes(&i.to_le_bytes()),
    }
}

/// One run: bulk load, 100 lookups (all hits), then `100 * STORES_PER_LOOKUP`
/// stores, against a cache of 10,000 entries (plus the stored ones).
#[divan::bench(consts = [1, 10, 100], sample_count = 20)]
fn lookup_store_run<const STORES_PER_LOOKUP: usize>(bencher: Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = Cache::open(&dir.path().join("c.sqlite")).unwrap();
    let existing: Vec<NewEntry> = (0..10_000).map(entry).collect();
    let now = now_ns();
    store(&mut cache, Algorithm::Md5, &existing, now).unwrap();
    let root = [PathBuf::from("/bench/root")];
    // The same new keys each time (replaced), so the cache does not grow
    // from sample to sample.
    let fresh: Vec<NewEntry> = (10_000..10_000 + LOOKUPS * STORES_PER_LOOKUP)
        .map(entry)
        .collect();
    bencher.bench_local(|| {
        let probes = (0..LOOKUPS).map(|i| &existing[i * 97 % existing.len()]);
        let hits = load_and_look_up(&mut cache, Algorithm::Md5, &root, probes).unwrap();
        assert_eq!(hits, LOOKUPS);
        store(&mut cache, Algorithm::Md5, &fresh, now).unwrap();
    });
}

/// Directories of the larger caches: 1,000 entries each.
const PER_DIRECTORY: usize = 1_000;

/// A cache of `entries` entries in directories of 1,000, made once per
/// size for every bench that asks (3,000,000 take about half a minute).
fn cache_of(entries: usize) -> std::path::PathBuf {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static MADE: OnceLock<Mutex<HashMap<usize, tempfile::TempDir>>> = OnceLock::new();
    let mut made = MADE.get_or_init(Default::default).lock().unwrap();
    let dir = made.entry(entries).or_insert_with(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = Cache::open(&dir.path().join("c.sqlite")).unwrap();
        let now = now_ns();
        // Stored a directory's worth at a time, as runs store them.
        let mut batch = Vec::with_capacity(100 * PER_DIRECTORY);
        for i in 0..entries {
            batch.push(spread_entry(i));
            if batch.len() == batch.capacity() || i + 1 == entries {
                store(&mut cache, Algorithm::Md5, &batch, now).unwrap();
                batch.clear();
            }
        }
        dir
    });
    dir.path().join("c.sqlite")
}

fn spread_entry(i: usize) -> NewEntry {
    NewEntry {
        path: PathBuf::from(format!(
            "/bench/spread/d{:05}/f{:04}",
            i / PER_DIRECTORY,
            i % PER_DIRECTORY
        )),
        stamp: stamp(i),
        fs: FsId(1),
        digest: Algorithm::Md5.hash_bytes(&i.to_le_bytes()),
    }
}

/// A run's cache work at 1:1, 1:10 and 1:100 stores to lookups
/// (a run over mostly unchanged files looks up far more than it stores),
/// against caches of 10,000 and 3,000,000 entries, the run's root one
/// directory of 1,000 of them (a run over a sub-tree of a large cached
/// tree): load the directory, look up `100 * LOOKUPS_PER_STORE` names (all
/// hits), store 100 new ones (the same each sample, replaced). What a run
/// costs should not grow with the database.
#[divan::bench(args = [10_000, 3_000_000], consts = [1, 10, 100], sample_count = 10)]
fn store_lookup_run_in_a_cache_of<const LOOKUPS_PER_STORE: usize>(
    bencher: Bencher,
    entries: usize,
) {
    const STORES: usize = 100;
    let mut cache = Cache::open(&cache_of(entries)).unwrap();
    let now = now_ns();
    let root = [PathBuf::from("/bench/spread/d00000")];
    let fresh: Vec<NewEntry> = (0..STORES)
        .map(|j| NewEntry {
            path: PathBuf::from(format!("/bench/spread/d00000/new{j:05}")),
            stamp: stamp(j),
            fs: FsId(1),
            digest: Algorithm::Md5.hash_bytes(&j.to_be_bytes()),
        })
        .collect();
    let probes: Vec<NewEntry> = (0..PER_DIRECTORY).map(spread_entry).collect();
    let lookups = STORES * LOOKUPS_PER_STORE;
    bencher
        .counter(divan::counter::ItemsCount::new(lookups + STORES))
        .bench_local(|| {
            let asked = (0..lookups).map(|i| &probes[i * 7 % PER_DIRECTORY]);
            let hits = load_and_look_up(&mut cache, Algorithm::Md5, &root, asked).unwrap();
            assert_eq!(hits, lookups);
            store(&mut cache, Algorithm::Md5, &fresh, now).unwrap();
        });
}

/// Now, in ns since the epoch: when the stored entries were hashed.
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
