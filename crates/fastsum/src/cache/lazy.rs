//! A run's entries loaded a directory at a time, as the walk reaches them,
//! and let go once a budget of bytes is held: a run's memory follows its
//! largest directories, not the tree (issue 35: loading every entry under
//! the roots up front held ~128 bytes a file, 122 MiB at 1M files).
//!
//! The walk is sorted and the workers stay close together in it, so the
//! directories held are let go oldest first; one asked for again after it
//! was let go is loaded again (a cost, never a wrong answer). Each load is
//! its own read of the store: rows stored meanwhile (by this run's own
//! batches or another run) may be seen, and every entry still answers only
//! its own settled stamp.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags};

use super::dir_entries::DirEntries;
use crate::algo::Algorithm;

/// Bytes of loaded directories held before the oldest are let go.
const BUDGET: usize = 4 << 20;

/// Rows read from the store in one query, at most.
const READ_AHEAD_ROWS: usize = 64;
const READ_AHEAD_BYTES: usize = 512 << 10;

/// A directory's row as loaded: its path and its entries, if its check
/// held.
type Row = (Vec<u8>, Option<Arc<DirEntries>>);

/// What a held directory costs beside its blob: its key twice (map and
/// queue) and the bookkeeping.
const OVERHEAD: usize = 96;

/// Directories loaded on demand from the cache file.
pub(super) struct Lazy {
    algorithm: Algorithm,
    budget: usize,
    /// The connection loads go through; `None` once a load failed (the
    /// rest of the run misses, and its stores meet the damage).
    reader: Mutex<Option<Connection>>,
    held: Mutex<Held>,
    /// Queries made (for tests).
    queries: std::sync::atomic::AtomicU64,
}

/// The directories loaded and not let go yet; `None` for one the store
/// has no (good) row for.
#[derive(Default)]
struct Held {
    map: HashMap<Vec<u8>, Option<Arc<DirEntries>>>,
    order: VecDeque<Vec<u8>>,
    bytes: usize,
    /// Key ranges read whole (start, last key read; `None`: to the end),
    /// disjoint: a directory inside one and not held has no row, and is
    /// not asked for again (a first run's directories have none; asking
    /// each cost it 10%).
    covered: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl Held {
    /// What is known of `dir` without a query: its row (or that it has
    /// none) if held, that it has none if a range read whole holds it.
    fn known(&self, dir: &[u8]) -> Option<Option<Arc<DirEntries>>> {
        match self.map.get(dir) {
            Some(held) => Some(held.clone()),
            None => self.covering(dir).map(|_| None),
        }
    }

    /// The start of the range read whole that holds `dir`.
    fn covering(&self, dir: &[u8]) -> Option<&[u8]> {
        let (start, end) = self
            .covered
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(dir)))
            .next_back()?;
        end.as_deref().is_none_or(|end| dir <= end).then_some(start)
    }

    /// Notes that every row from `start` to `end` (inclusive; `None`: to
    /// the end) was read.
    fn cover(&mut self, start: &[u8], end: Option<Vec<u8>>) {
        let upper = match &end {
            Some(end) => Bound::Included(end.as_slice()),
            None => Bound::Unbounded,
        };
        let inside: Vec<Vec<u8>> = self
            .covered
            .range::<[u8], _>((Bound::Included(start), upper))
            .map(|(k, _)| k.clone())
            .collect();
        for key in inside {
            self.covered.remove(&key);
        }
        self.covered.insert(start.to_vec(), end);
    }

    fn cost(dir: &[u8], entries: &Option<Arc<DirEntries>>) -> usize {
        2 * dir.len() + OVERHEAD + entries.as_ref().map_or(0, |e| e.bytes())
    }

    /// Holds `entries` for `dir`, letting the oldest go while over budget.
    fn hold(&mut self, dir: &[u8], entries: Option<Arc<DirEntries>>, budget: usize) {
        if self.map.contains_key(dir) {
            return;
        }
        let cost = Self::cost(dir, &entries);
        while self.bytes + cost > budget {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.map.remove(&oldest) {
                self.bytes -= Self::cost(&oldest, &gone);
            }
            // Its range no longer says what is there.
            if let Some(start) = self.covering(&oldest).map(<[u8]>::to_vec) {
                self.covered.remove(&start);
            }
        }
        self.bytes += cost;
        self.order.push_back(dir.to_vec());
        self.map.insert(dir.to_vec(), entries);
    }
}

impl Lazy {
    /// Loads from the cache file at `path` (a connection of its own, so
    /// workers load while the owner's connection is borrowed elsewhere),
    /// waiting up to `busy` for other runs that hold it.
    pub(super) fn open(
        path: &Path,
        algorithm: Algorithm,
        busy: Duration,
    ) -> rusqlite::Result<Lazy> {
        Self::with_budget(path, algorithm, busy, BUDGET)
    }

    /// As [`Lazy::open`], holding at most `budget` bytes (and at least the
    /// last directory loaded).
    pub(super) fn with_budget(
        path: &Path,
        algorithm: Algorithm,
        busy: Duration,
        budget: usize,
    ) -> rusqlite::Result<Lazy> {
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        connection.busy_timeout(busy)?;
        Ok(Lazy {
            algorithm,
            budget,
            reader: Mutex::new(Some(connection)),
            held: Mutex::new(Held::default()),
            queries: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The entries of the directory at absolute path `dir`.
    pub(super) fn directory(&self, dir: &[u8]) -> Option<Arc<DirEntries>> {
        if let Some(known) = self.held.lock().expect("not poisoned").known(dir) {
            return known;
        }
        let mut reader = self.reader.lock().expect("not poisoned");
        // Workers reach a directory together: the one that waited takes
        // what the other loaded.
        if let Some(known) = self.held.lock().expect("not poisoned").known(dir) {
            return known;
        }
        let (rows, to_the_end) = match reader.as_ref().map(|c| self.load_from(c, dir)) {
            Some(Ok(rows)) => rows,
            // The rest of the run misses (and its stores meet the damage).
            Some(Err(_)) => {
                *reader = None;
                return None;
            }
            None => return None,
        };
        let mut held = self.held.lock().expect("not poisoned");
        let end = match to_the_end {
            true => None,
            false => rows.last().map(|(last, _)| last.clone()),
        };
        held.cover(dir, end);
        let mut asked = None;
        for (row_dir, entries) in rows {
            if row_dir == dir {
                asked = entries.clone();
            }
            held.hold(&row_dir, entries, self.budget);
        }
        held.hold(dir, asked.clone(), self.budget);
        asked
    }

    /// The row of `dir` and the rows after it in the store's order (the
    /// walk's order but for names holding bytes below `/`), up to
    /// [`READ_AHEAD_ROWS`] or [`READ_AHEAD_BYTES`]: a query costs about
    /// three rows of a scan, and the walk asks for the next ones soon.
    /// A row whose check fails comes back as `None`.
    /// Also says whether the rows ran out (no row after the last).
    fn load_from(&self, connection: &Connection, dir: &[u8]) -> rusqlite::Result<(Vec<Row>, bool)> {
        self.queries
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut statement = connection.prepare_cached(
            "SELECT dir, entries FROM dirs WHERE dir >= ?2 AND algorithm = ?1 ORDER BY dir",
        )?;
        let mut rows = statement.query(params![self.algorithm.to_string(), dir])?;
        let (mut loaded, mut bytes) = (Vec::new(), 0);
        while let Some(row) = rows.next()? {
            let row_dir: Vec<u8> = row.get(0)?;
            let blob: Vec<u8> = row.get(1)?;
            bytes += blob.len();
            let entries = DirEntries::decode(&row_dir, self.algorithm, blob).map(Arc::new);
            loaded.push((row_dir, entries));
            if loaded.len() >= READ_AHEAD_ROWS || bytes >= READ_AHEAD_BYTES {
                return Ok((loaded, false));
            }
        }
        Ok((loaded, true))
    }

    /// Bytes held now, directories held, and queries made (for tests).
    #[cfg(test)]
    pub(super) fn held(&self) -> (usize, usize, u64) {
        let held = self.held.lock().expect("not poisoned");
        let queries = self.queries.load(std::sync::atomic::Ordering::Relaxed);
        (held.bytes, held.map.len(), queries)
    }
}
