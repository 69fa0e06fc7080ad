//! The SQLite store: rows keyed (algorithm, directory, part), each a
//! checked blob of the entries of a range of that directory's names
//! (`dir_entries`); loaded in bulk (or a row at a time, `lazy`), written in
//! one transaction, moved aside when damaged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags};

use super::dir_entries::{DirEntries, Entry};
use super::snapshot::{split_key, Snapshot};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::{FileStamp, FsId};

/// The on-disk format; any other value in a cache file is a miss for all
/// of it (the file is moved aside and rebuilt). 3: rows keyed by the
/// algorithm with its parameters (format 2 could answer another's). 4: a
/// directory's entries split into rows of a bounded count. 5: each entry
/// keeps its file system (`FsId`: 4 trusted another file system's entries).
pub(crate) const FORMAT_VERSION: &str = "5";

/// One digest to remember.
#[derive(Clone, Debug)]
pub struct NewEntry {
    /// Absolute path.
    pub path: PathBuf,
    /// The file's stamp, identical before and after the read.
    pub stamp: FileStamp,
    /// The file system it was read on.
    pub fs: FsId,
    /// Its digest.
    pub digest: Digest,
}

/// What one run did with the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Digests answered from the cache.
    pub hits: u64,
    /// Files read and hashed.
    pub misses: u64,
    /// Files read again because they changed while being read.
    pub racy_rereads: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Misses not kept: changed within `settle_window` of the run's start.
    pub too_recent: u64,
    /// Misses not kept: no stamp, or one on a file system whose stamps
    /// vouch for nothing (tmpfs, a generated one).
    pub untrusted: u64,
    /// How long a file must be unchanged before its digest is kept.
    pub settle_window: Duration,
}

/// How long a run waits for others holding the cache file.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// New entries by directory: their names and what to store.
type ByDir<'a> = BTreeMap<&'a [u8], Vec<(&'a [u8], Entry)>>;

/// The settled ones of `entries` (a run that started at `started_ns`),
/// none of a file system never written back, by directory.
fn grouped(entries: &[NewEntry], started_ns: i64) -> ByDir<'_> {
    let mut by_dir: ByDir<'_> = BTreeMap::new();
    for new in entries.iter().filter(|e| e.stamp.vouches_at(started_ns)) {
        if let Some((dir, name)) = split_key(&new.path) {
            let entry = Entry {
                stamp: new.stamp,
                fs: new.fs,
                hashed_at_ns: started_ns,
                digest: new.digest,
            };
            by_dir.entry(dir).or_default().push((name, entry));
        }
    }
    by_dir
}

/// Why a cache file could not be opened: only a broken file is moved aside;
/// a busy one is waited for; anything else (permissions, disk) is an error
/// and the run goes on without the cache.
enum OpenFailure {
    /// Not a cache this version can use: SQLite's word, or why not.
    Broken(String),
    Busy(rusqlite::Error),
    Other(rusqlite::Error),
}

impl From<rusqlite::Error> for OpenFailure {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => OpenFailure::Busy(e),
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
                OpenFailure::Broken(e.to_string())
            }
            _ => OpenFailure::Other(e),
        }
    }
}

/// An open cache file.
pub struct Cache {
    pub(super) connection: Connection,
    pub(super) path: PathBuf,
    /// Said once when the file had to be moved aside.
    notice: Option<String>,
}

/// SQLite's error, typed, with the cache file's path.
pub(super) fn cache_error(path: &Path, source: rusqlite::Error) -> Error {
    Error::with_path(path, ErrorKind::Cache { source })
}

/// The cache file at `path` is unusable for `why` (not SQLite's error: a
/// format version, say) and could not be replaced.
fn unusable(path: &Path, why: String) -> Error {
    Error::with_path(path, ErrorKind::Io(std::io::Error::other(why)))
}

/// Whether `e` says the file is damaged (then it is moved aside).
pub(super) fn is_damage(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode;
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// The rows whose directory is `prefix` or lies below it: `[low, high)`
/// in byte order (`high` is `prefix` with its last byte incremented, so a
/// sibling such as `/a/b2` for `/a/b` is loaded too, and does no harm).
pub(super) fn range_of(prefix: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let low = prefix.to_vec();
    let mut high = low.clone();
    match high.last_mut() {
        Some(b) if *b < 0xff => *b += 1,
        _ => high.push(0xff),
    }
    (low, high)
}

impl Cache {
    /// Opens (creating if needed) the cache at `path`. A file that is not a
    /// readable cache of this format is moved to `PATH.broken` and a new
    /// one made; [`Cache::take_notice`] then says so. Damage found later,
    /// while loading or storing, is handled the same way.
    pub fn open(path: &Path) -> Result<Cache> {
        // SQLite would say "unable to open database file", naming no cause.
        if path.is_dir() {
            let e = std::io::Error::from(std::io::ErrorKind::IsADirectory);
            return Err(Error::with_path(path, ErrorKind::Io(e)));
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::with_path(dir, e))?;
        }
        let cache = match Self::open_retrying(path) {
            Ok(connection) => Cache {
                connection,
                path: path.to_path_buf(),
                notice: None,
            },
            Err(OpenFailure::Other(why) | OpenFailure::Busy(why)) => {
                return Err(cache_error(path, why))
            }
            Err(OpenFailure::Broken(why)) => {
                let connection = Self::move_aside_and_create(path)?;
                let mut cache = Cache {
                    connection,
                    path: path.to_path_buf(),
                    notice: None,
                };
                cache.say_moved_aside(&why);
                return Ok(cache);
            }
        };
        Ok(cache)
    }

    fn aside_path(path: &Path) -> PathBuf {
        PathBuf::from(format!("{}.broken", path.display()))
    }

    fn say_moved_aside(&mut self, why: &str) {
        self.notice = Some(format!(
            "cache {}: {why}; moved aside to {} and rebuilt",
            self.path.display(),
            Self::aside_path(&self.path).display()
        ));
    }

    fn move_aside_and_create(path: &Path) -> Result<Connection> {
        std::fs::rename(path, Self::aside_path(path)).map_err(|e| Error::with_path(path, e))?;
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        Self::open_retrying(path).map_err(|e| match e {
            OpenFailure::Broken(why) => unusable(path, why),
            OpenFailure::Busy(e) | OpenFailure::Other(e) => cache_error(path, e),
        })
    }

    /// Damage found after opening: the file is moved aside and a new one
    /// takes its place.
    pub(super) fn rebuild(&mut self, why: &rusqlite::Error) -> Result<()> {
        let fresh = Self::move_aside_and_create(&self.path)?;
        // The old connection goes with its file.
        drop(std::mem::replace(&mut self.connection, fresh));
        self.say_moved_aside(&why.to_string());
        Ok(())
    }

    /// Opens, waiting out other runs that hold the file (switching to WAL
    /// or creating the tables needs a moment of exclusive access, which
    /// SQLite reports as busy without always calling the busy handler).
    fn open_retrying(path: &Path) -> std::result::Result<Connection, OpenFailure> {
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match Self::open_checked(path) {
                Err(OpenFailure::Busy(_)) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(OpenFailure::Busy(why)) => return Err(OpenFailure::Other(why)),
                other => return other,
            }
        }
    }

    fn format_version(connection: &Connection) -> rusqlite::Result<Option<String>> {
        use rusqlite::OptionalExtension;
        connection
            .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
                r.get(0)
            })
            .optional()
    }

    fn open_checked(path: &Path) -> std::result::Result<Connection, OpenFailure> {
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        )
        .map_err(OpenFailure::from)?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(OpenFailure::from)?;
        let setup = || -> rusqlite::Result<Option<String>> {
            connection.pragma_update(None, "journal_mode", "WAL")?;
            connection.pragma_update(None, "synchronous", "NORMAL")?;
            // Closing would fold the WAL into the file and sync it: the
            // next writer's checkpoint does that, not every run's exit.
            connection.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )?;
            match Self::format_version(&connection) {
                Ok(Some(version)) => return Ok(Some(version)),
                Ok(None) => return Ok(None),
                // No tables yet: a new file.
                Err(_) => {}
            }
            connection.execute_batch(&format!(
                "BEGIN IMMEDIATE;
                 CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS dirs(
                     algorithm TEXT NOT NULL, dir BLOB NOT NULL, part BLOB NOT NULL,
                     count INTEGER NOT NULL, entries BLOB NOT NULL,
                     PRIMARY KEY(algorithm, dir, part)) WITHOUT ROWID;
                 INSERT OR IGNORE INTO meta(key, value) VALUES('format', '{FORMAT_VERSION}');
                 COMMIT;"
            ))?;
            Self::format_version(&connection)
        };
        // A damaged file is found when it is read (a load or store that
        // meets a bad page moves it aside then), not by checking every
        // page of it on every run: rows carry their own checks.
        match setup() {
            Ok(Some(v)) if v == FORMAT_VERSION => Ok(connection),
            Ok(Some(v)) => Err(OpenFailure::Broken(format!(
                "format version {v}, not {FORMAT_VERSION}"
            ))),
            Ok(None) => Err(OpenFailure::Broken("no format version".into())),
            Err(e) => Err(OpenFailure::from(e)),
        }
    }

    /// What to tell the user once, if the file had to be moved aside.
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    /// Where the cache lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Loads every directory's entries for `algorithm` at or below one of
    /// the absolute `prefixes`, and the directory holding each prefix (for
    /// a file named on its own). A damaged file is moved aside and the
    /// snapshot is empty; a damaged row is left out.
    pub(crate) fn load(&mut self, algorithm: Algorithm, prefixes: &[PathBuf]) -> Result<Snapshot> {
        match self.load_rows(algorithm, prefixes) {
            Ok(snapshot) => Ok(snapshot),
            Err(e) if is_damage(&e) => {
                self.rebuild(&e)?;
                Ok(Snapshot::default())
            }
            Err(e) => Err(cache_error(&self.path, e)),
        }
    }

    fn load_rows(&self, algorithm: Algorithm, prefixes: &[PathBuf]) -> rusqlite::Result<Snapshot> {
        let mut below = self.connection.prepare_cached(
            "SELECT dir, part, entries FROM dirs WHERE algorithm = ?1 AND dir >= ?2 AND dir < ?3",
        )?;
        let mut exact = self.connection.prepare_cached(
            "SELECT dir, part, entries FROM dirs WHERE algorithm = ?1 AND dir = ?2",
        )?;
        let mut snapshot = Snapshot::default();
        let mut add = |row: &rusqlite::Row| -> rusqlite::Result<()> {
            let dir: Vec<u8> = row.get(0)?;
            let part: Vec<u8> = row.get(1)?;
            let blob: Vec<u8> = row.get(2)?;
            if let Some(entries) = DirEntries::decode(&dir, algorithm, &part, blob) {
                snapshot.insert(&dir, entries);
            }
            Ok(())
        };
        for prefix in prefixes {
            let prefix = prefix.as_os_str().as_encoded_bytes();
            let (low, high) = range_of(prefix);
            let mut rows = below.query(params![algorithm.to_string(), low, high])?;
            while let Some(row) = rows.next()? {
                add(row)?;
            }
            if let Some(parent) = crate::fs::name::path(prefix).parent() {
                let mut rows = exact.query(params![
                    algorithm.to_string(),
                    parent.as_os_str().as_encoded_bytes()
                ])?;
                while let Some(row) = rows.next()? {
                    add(row)?;
                }
            }
        }
        Ok(snapshot)
    }

    /// Stores `entries` hashed by a run that started at `started_ns`, in one
    /// transaction, merged into what their directories hold (another run may
    /// have stored there since this one loaded). Entries that were not
    /// settled then are left out. Returns how many were stored.
    pub(crate) fn store(
        &mut self,
        algorithm: Algorithm,
        entries: &[NewEntry],
        started_ns: i64,
    ) -> Result<usize> {
        self.store_grouped(algorithm, grouped(entries, started_ns))
    }

    fn store_grouped(&mut self, algorithm: Algorithm, mut by_dir: ByDir<'_>) -> Result<usize> {
        if by_dir.is_empty() {
            return Ok(0);
        }
        let stored = by_dir.values().map(Vec::len).sum();
        // By name, the batch's last word on a name kept (a stable sort of
        // the reversed batch puts it first of its name).
        for new in by_dir.values_mut() {
            new.reverse();
            new.sort_by(|a, b| a.0.cmp(b.0));
            new.dedup_by(|a, b| a.0 == b.0);
        }
        match self.store_rows(algorithm, &by_dir) {
            Ok(()) => Ok(stored),
            Err(e) if is_damage(&e) => {
                self.rebuild(&e)?;
                self.store_rows(algorithm, &by_dir)
                    .map_err(|e| cache_error(&self.path, e))?;
                Ok(stored)
            }
            Err(e) => Err(cache_error(&self.path, e)),
        }
    }

    /// Each directory's new entries (sorted by name, one per name) merged
    /// into the rows whose ranges hold them: a row is read (in place, not
    /// copied out) and rewritten, split if it grew past its bound.
    fn store_rows(&mut self, algorithm: Algorithm, by_dir: &ByDir<'_>) -> rusqlite::Result<()> {
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut rows = RowWriter::new(&transaction, algorithm)?;
            for (dir, new) in by_dir {
                let mut rest: &[(&[u8], Entry)] = new;
                while !rest.is_empty() {
                    let taken = rows.put(dir, rest)?;
                    rest = &rest[taken..];
                }
            }
        }
        transaction.commit()
    }

    /// Remembers a run's hits and misses for `fastsum cache stats`.
    pub(crate) fn record_run(&mut self, stats: &RunStats) -> Result<()> {
        self.connection
            .execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES('last_run', ?1)",
                [format!("{} {}", stats.hits, stats.misses)],
            )
            .map_err(|e| cache_error(&self.path, e))?;
        Ok(())
    }
}

/// Writes new entries into the rows whose ranges hold them.
struct RowWriter<'c> {
    algorithm: Algorithm,
    name: String, // as the key spells it
    holding: rusqlite::CachedStatement<'c>,
    first: rusqlite::CachedStatement<'c>,
    insert: rusqlite::CachedStatement<'c>,
}

impl<'c> RowWriter<'c> {
    fn new(connection: &'c Connection, algorithm: Algorithm) -> rusqlite::Result<Self> {
        Ok(RowWriter {
            algorithm,
            name: algorithm.to_string(),
            // The row whose range holds a name, and where the next starts.
            holding: connection.prepare_cached(
                "SELECT part, entries, (SELECT min(n.part) FROM dirs n
                     WHERE n.algorithm = ?1 AND n.dir = ?2 AND n.part > o.part)
                 FROM dirs o WHERE o.algorithm = ?1 AND o.dir = ?2 AND o.part <= ?3
                 ORDER BY o.part DESC LIMIT 1",
            )?,
            first: connection
                .prepare_cached("SELECT min(part) FROM dirs WHERE algorithm = ?1 AND dir = ?2")?,
            insert: connection.prepare_cached(
                "INSERT OR REPLACE INTO dirs (algorithm, dir, part, count, entries)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
        })
    }

    /// Puts the first of `new` (sorted by name) and those after it that
    /// share its row into that row; returns how many it put.
    fn put(&mut self, dir: &[u8], new: &[(&[u8], Entry)]) -> rusqlite::Result<usize> {
        use rusqlite::types::ValueRef;
        use rusqlite::OptionalExtension;
        let algorithm = self.algorithm;
        let within = |hi: Option<&[u8]>| new.partition_point(|(n, _)| hi.is_none_or(|hi| *n < hi));
        let merged = self
            .holding
            .query_row(params![self.name, dir, new[0].0], |r| {
                let lo: Vec<u8> = r.get(0)?;
                let hi: Option<Vec<u8>> = r.get(2)?;
                // A damaged row's entries are lost, its range kept.
                let old = match r.get_ref(1)? {
                    ValueRef::Blob(blob) => DirEntries::decode_ref(dir, algorithm, &lo, blob),
                    _ => None,
                };
                let taken = within(hi.as_deref());
                let range = (lo.as_slice(), hi.as_deref());
                Ok((
                    DirEntries::merged(dir, algorithm, range, old.as_ref(), &new[..taken]),
                    taken,
                ))
            })
            .optional()?;
        let (rows, taken) = match merged {
            Some(merged) => merged,
            // No row starts at or before the first name: a new directory
            // (its first row starts at the empty name).
            None => {
                let hi: Option<Vec<u8>> = self
                    .first
                    .query_row(params![self.name, dir], |r| r.get(0))?;
                let taken = within(hi.as_deref());
                let range = (&b""[..], hi.as_deref());
                let rows =
                    DirEntries::merged::<Vec<u8>>(dir, algorithm, range, None, &new[..taken]);
                (rows, taken)
            }
        };
        for row in rows {
            let count = row.count as i64;
            self.insert
                .execute(params![self.name, dir, row.lo, count, row.blob])?;
        }
        // The row holding `new[0]` takes it; at least one ends the loop.
        Ok(taken.max(1))
    }
}
