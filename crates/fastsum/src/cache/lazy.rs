//! A run's entries loaded a row at a time, as the walk reaches them, and
//! let go once a budget of bytes is held: a run's memory is bounded, not
//! the tree's (loading every entry under the roots up front held
//! ~128 bytes a file, 122 MiB at 1M files; holding a directory's entries
//! whole held 27 MB for one of 300,000 files).
//!
//! The walk is sorted and the workers stay close together in it, so the
//! rows held are let go oldest first; one asked for again after it was let
//! go is loaded again (a cost, never a wrong answer). Each load is its own
//! read of the store: rows stored meanwhile (by this run's own batches or
//! another run) may be seen, and every entry still answers only its own
//! name and settled stamp.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use super::dir_entries::{is_row_of, row_key, DirEntries};
use crate::algo::Algorithm;

/// Bytes of loaded rows held before the oldest are let go.
const BUDGET: usize = 4 << 20;

/// Rows read from the store in one query, at most.
const READ_AHEAD_ROWS: usize = 64;
const READ_AHEAD_BYTES: usize = 512 << 10;

/// A row as loaded: its key ([`row_key`]) and its entries, if its check
/// held.
type Row = (Vec<u8>, Option<Arc<DirEntries>>);

/// What a held row costs beside its blob: its key twice (map and queue)
/// and the bookkeeping.
const OVERHEAD: usize = 96;

/// Rows loaded on demand from the cache file.
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

/// The rows loaded and not let go yet, by [`row_key`]; `None` for one
/// whose check failed.
#[derive(Default)]
struct Held {
    map: BTreeMap<Vec<u8>, Option<Arc<DirEntries>>>,
    order: VecDeque<Vec<u8>>,
    bytes: usize,
    /// Key ranges read whole (start, last key read; `None`: to the end),
    /// disjoint: a name inside one that no held row's range holds has no
    /// entry, and is not asked for again (a first run's directories have
    /// no rows; asking for each cost it 10%).
    covered: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl Held {
    /// What is known of `dir`'s `name` without a query: the row whose
    /// range holds it, or that no row does (`Some(None)`).
    fn known(&self, dir: &[u8], name: &[u8]) -> Option<Option<Arc<DirEntries>>> {
        let key = row_key(dir, name);
        let below = self.map.range(..=key.clone()).next_back();
        if let Some((row_of, Some(row))) = below {
            if is_row_of(row_of, dir) && row.covers(name) {
                return Some(Some(row.clone()));
            }
        }
        let start = self.covering(&key)?;
        // Every row from `start` to the name is held: the one below it
        // does not hold it, or none of the directory's starts before it.
        let none = below.is_some_and(|(row_of, _)| row_of.as_slice() >= start)
            || start <= row_key(dir, b"").as_slice();
        none.then_some(None)
    }

    /// The start of the range read whole that holds `key`.
    fn covering(&self, key: &[u8]) -> Option<&[u8]> {
        let (start, end) = self
            .covered
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)))
            .next_back()?;
        end.as_deref().is_none_or(|end| key <= end).then_some(start)
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

    fn cost(key: &[u8], entries: &Option<Arc<DirEntries>>) -> usize {
        2 * key.len() + OVERHEAD + entries.as_ref().map_or(0, |e| e.bytes())
    }

    /// Holds the row `key`, letting the oldest go while over budget.
    fn hold(&mut self, key: &[u8], entries: Option<Arc<DirEntries>>, budget: usize) {
        if self.map.contains_key(key) {
            return;
        }
        let cost = Self::cost(key, &entries);
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
        self.order.push_back(key.to_vec());
        self.map.insert(key.to_vec(), entries);
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

    /// The row whose range holds `name` of the directory at absolute
    /// path `dir`, if there is one.
    pub(super) fn row_holding(&self, dir: &[u8], name: &[u8]) -> Option<Arc<DirEntries>> {
        if let Some(known) = self.held.lock().expect("not poisoned").known(dir, name) {
            return known;
        }
        let mut reader = self.reader.lock().expect("not poisoned");
        // Workers reach a row together: the one that waited takes what
        // the other loaded.
        if let Some(known) = self.held.lock().expect("not poisoned").known(dir, name) {
            return known;
        }
        let (start, rows, to_the_end) = match reader.as_ref().map(|c| self.load_from(c, dir, name))
        {
            Some(Ok(loaded)) => loaded,
            // The rest of the run misses (and its stores meet the damage).
            Some(Err(_)) => {
                *reader = None;
                return None;
            }
            None => return None,
        };
        let key = row_key(dir, name);
        let asked = rows
            .iter()
            .rev()
            .find(|(row_of, _)| *row_of <= key)
            .filter(|(row_of, row)| {
                is_row_of(row_of, dir) && row.as_ref().is_some_and(|r| r.covers(name))
            })
            .cloned();
        let mut held = self.held.lock().expect("not poisoned");
        let end = match to_the_end {
            true => None,
            false => rows.last().map(|(last, _)| last.clone()),
        };
        held.cover(&start, end);
        for (row_of, entries) in rows {
            held.hold(&row_of, entries, self.budget);
        }
        let (row_of, row) = asked?;
        held.hold(&row_of, row.clone(), self.budget);
        row
    }

    /// The row whose range holds `dir`'s `name` (or, if there is none, the
    /// directory's first) and the rows after it in the store's order (the
    /// walk's order but for names holding bytes below `/`), up to
    /// [`READ_AHEAD_ROWS`] or [`READ_AHEAD_BYTES`]: a query costs about
    /// three rows of a scan, and the walk asks for the next ones soon.
    /// A row whose check fails comes back as `None`. Also says where the
    /// read started (a [`row_key`]), and whether the rows ran out.
    fn load_from(
        &self,
        connection: &Connection,
        dir: &[u8],
        name: &[u8],
    ) -> rusqlite::Result<(Vec<u8>, Vec<Row>, bool)> {
        self.queries
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let algorithm = self.algorithm.to_string();
        let floor: Option<Vec<u8>> = connection
            .prepare_cached(
                "SELECT max(part) FROM dirs WHERE algorithm = ?1 AND dir = ?2 AND part <= ?3",
            )?
            .query_row(params![algorithm, dir, name], |r| r.get(0))
            .optional()?
            .flatten();
        let floor = floor.unwrap_or_default();
        // A row value: SQLite seeks to it in the key (with `dir >= ?2 AND
        // (dir > ?2 OR ...)` it scanned from the directory's first row,
        // reading a 300,000-entry directory's rows 24 times over).
        let mut statement = connection.prepare_cached(
            "SELECT dir, part, entries FROM dirs
             WHERE algorithm = ?1 AND (dir, part) >= (?2, ?3)
             ORDER BY dir, part",
        )?;
        let mut rows = statement.query(params![algorithm, dir, floor])?;
        let (mut loaded, mut bytes) = (Vec::new(), 0);
        while let Some(row) = rows.next()? {
            let row_dir: Vec<u8> = row.get(0)?;
            let part: Vec<u8> = row.get(1)?;
            let blob: Vec<u8> = row.get(2)?;
            bytes += blob.len();
            let entries = DirEntries::decode(&row_dir, self.algorithm, &part, blob).map(Arc::new);
            loaded.push((row_key(&row_dir, &part), entries));
            if loaded.len() >= READ_AHEAD_ROWS || bytes >= READ_AHEAD_BYTES {
                return Ok((row_key(dir, &floor), loaded, false));
            }
        }
        Ok((row_key(dir, &floor), loaded, true))
    }

    /// Bytes held now, rows held, and queries made (for tests).
    #[cfg(test)]
    pub(super) fn held(&self) -> (usize, usize, u64) {
        let held = self.held.lock().expect("not poisoned");
        let queries = self.queries.load(std::sync::atomic::Ordering::Relaxed);
        (held.bytes, held.map.len(), queries)
    }
}
