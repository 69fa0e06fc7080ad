//! The SQLite store: one row per (directory, algorithm), each a checked
//! blob of that directory's entries; loaded in bulk, written in one
//! transaction, moved aside when damaged.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags};

use super::dir_entries::{DirEntries, Entry};
use super::snapshot::{split_key, Snapshot};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::FileStamp;

/// The on-disk format; any other value in a cache file is a miss for all
/// of it (the file is moved aside and rebuilt).
pub const FORMAT_VERSION: &str = "2";

/// One digest to remember.
#[derive(Clone, Debug)]
pub struct NewEntry {
    /// Absolute path.
    pub path: PathBuf,
    /// The file's stamp, identical before and after the read.
    pub stamp: FileStamp,
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
}

/// Figures for `fastsum cache stats`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Entries stored.
    pub entries: u64,
    /// Bytes on disk (database, WAL and shared-memory files).
    pub bytes_on_disk: u64,
    /// Hits and misses of the last run that used the cache.
    pub last_run: Option<(u64, u64)>,
}

/// How long a run waits for others holding the cache file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a cache file could not be opened: only a broken file is moved aside;
/// a busy one is waited for; anything else (permissions, disk) is an error
/// and the run goes on without the cache.
enum OpenFailure {
    Broken(String),
    Busy(String),
    Other(String),
}

impl From<rusqlite::Error> for OpenFailure {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                OpenFailure::Busy(e.to_string())
            }
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
                OpenFailure::Broken(e.to_string())
            }
            _ => OpenFailure::Other(e.to_string()),
        }
    }
}

/// An open cache file.
pub struct Cache {
    connection: Connection,
    path: PathBuf,
    /// Said once when the file had to be moved aside.
    notice: Option<String>,
}

fn cache_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::with_path(path, ErrorKind::Io(std::io::Error::other(e.to_string())))
}

/// Whether `e` says the file is damaged (then it is moved aside).
fn is_damage(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode;
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// The rows whose directory is `prefix` or lies below it: `[low, high)`
/// in byte order (`high` is `prefix` with its last byte incremented, so a
/// sibling such as `/a/b2` for `/a/b` is loaded too, and does no harm).
fn range_of(prefix: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let low = prefix.to_vec();
    let mut high = low.clone();
    match high.last_mut() {
        Some(b) if *b < 0xff => *b += 1,
        _ => high.push(0xff),
    }
    (low, high)
}

impl Cache {
    /// `$XDG_CACHE_HOME/fastsum/cache.sqlite`, or `~/.cache/...`.
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("fastsum").join("cache.sqlite"))
    }

    /// Opens (creating if needed) the cache at `path`. A file that is not a
    /// readable cache of this format is moved to `PATH.broken` and a new
    /// one made; [`Cache::take_notice`] then says so. Damage found later,
    /// while loading or storing, is handled the same way.
    pub fn open(path: &Path) -> Result<Cache> {
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
            OpenFailure::Broken(why) | OpenFailure::Busy(why) | OpenFailure::Other(why) => {
                cache_error(path, why)
            }
        })
    }

    /// Damage found after opening: the file is moved aside and a new one
    /// takes its place.
    fn rebuild(&mut self, why: &rusqlite::Error) -> Result<()> {
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
            connection.execute_batch(
                "BEGIN IMMEDIATE;
                 CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS dirs(
                     dir BLOB NOT NULL, algorithm TEXT NOT NULL,
                     count INTEGER NOT NULL, entries BLOB NOT NULL,
                     PRIMARY KEY(dir, algorithm)) WITHOUT ROWID;
                 INSERT OR IGNORE INTO meta(key, value) VALUES('format', '2');
                 COMMIT;",
            )?;
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
    pub fn load(&mut self, algorithm: Algorithm, prefixes: &[PathBuf]) -> Result<Snapshot> {
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
            "SELECT dir, entries FROM dirs WHERE algorithm = ?1 AND dir >= ?2 AND dir < ?3",
        )?;
        let mut exact = self
            .connection
            .prepare_cached("SELECT dir, entries FROM dirs WHERE algorithm = ?1 AND dir = ?2")?;
        let mut snapshot = Snapshot::default();
        let mut add = |row: &rusqlite::Row| -> rusqlite::Result<()> {
            let dir: Vec<u8> = row.get(0)?;
            let blob: Vec<u8> = row.get(1)?;
            if let Some(entries) = DirEntries::decode(&dir, algorithm, blob) {
                snapshot.directories.insert(dir, entries);
            }
            Ok(())
        };
        for prefix in prefixes {
            let prefix = prefix.as_os_str().as_bytes();
            let (low, high) = range_of(prefix);
            let mut rows = below.query(params![algorithm.name(), low, high])?;
            while let Some(row) = rows.next()? {
                add(row)?;
            }
            if let Some(parent) = Path::new(OsStr::from_bytes(prefix)).parent() {
                let mut rows =
                    exact.query(params![algorithm.name(), parent.as_os_str().as_bytes()])?;
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
    pub fn store(
        &mut self,
        algorithm: Algorithm,
        entries: &[NewEntry],
        started_ns: i64,
    ) -> Result<usize> {
        let mut by_dir: BTreeMap<&[u8], Vec<(&[u8], Entry)>> = BTreeMap::new();
        for new in entries.iter().filter(|e| e.stamp.is_settled_at(started_ns)) {
            if let Some((dir, name)) = split_key(&new.path) {
                let entry = Entry {
                    stamp: new.stamp,
                    hashed_at_ns: started_ns,
                    digest: new.digest,
                };
                by_dir.entry(dir).or_default().push((name, entry));
            }
        }
        if by_dir.is_empty() {
            return Ok(0);
        }
        match self.store_rows(algorithm, &by_dir) {
            Ok(stored) => Ok(stored),
            Err(e) if is_damage(&e) => {
                self.rebuild(&e)?;
                self.store_rows(algorithm, &by_dir)
                    .map_err(|e| cache_error(&self.path, e))
            }
            Err(e) => Err(cache_error(&self.path, e)),
        }
    }

    fn store_rows(
        &mut self,
        algorithm: Algorithm,
        by_dir: &BTreeMap<&[u8], Vec<(&[u8], Entry)>>,
    ) -> rusqlite::Result<usize> {
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut stored = 0;
        {
            let mut select = transaction
                .prepare("SELECT entries FROM dirs WHERE dir = ?1 AND algorithm = ?2")?;
            let mut insert = transaction.prepare(
                "INSERT OR REPLACE INTO dirs (dir, algorithm, count, entries)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (dir, new_entries) in by_dir {
                use rusqlite::OptionalExtension;
                let current: Option<Vec<u8>> = select
                    .query_row(params![dir, algorithm.name()], |r| r.get(0))
                    .optional()?;
                let mut merged = current
                    .and_then(|blob| DirEntries::decode(dir, algorithm, blob))
                    .map(|entries| entries.to_map())
                    .unwrap_or_default();
                for (name, entry) in new_entries {
                    merged.insert(name.to_vec(), *entry);
                    stored += 1;
                }
                let blob = DirEntries::encode(dir, algorithm, &merged);
                insert.execute(params![dir, algorithm.name(), merged.len() as i64, blob])?;
            }
        }
        transaction.commit()?;
        Ok(stored)
    }

    /// Remembers a run's hits and misses for `fastsum cache stats`.
    pub fn record_run(&mut self, stats: &RunStats) -> Result<()> {
        self.connection
            .execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES('last_run', ?1)",
                [format!("{} {}", stats.hits, stats.misses)],
            )
            .map_err(|e| cache_error(&self.path, e))?;
        Ok(())
    }

    /// Entries, size on disk and the last run's hits and misses. Folds the
    /// write-ahead log into the file first, so the size is the file's.
    pub fn summary(&self) -> Result<Summary> {
        let _ = self
            .connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        let entries: i64 = self
            .connection
            .query_row("SELECT coalesce(sum(count), 0) FROM dirs", [], |r| r.get(0))
            .map_err(|e| cache_error(&self.path, e))?;
        let bytes_on_disk = ["", "-wal", "-shm"]
            .iter()
            .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", self.path.display())).ok())
            .map(|m| m.len())
            .sum();
        let last_run = self
            .connection
            .query_row("SELECT value FROM meta WHERE key = 'last_run'", [], |r| {
                r.get::<_, String>(0)
            })
            .ok()
            .and_then(|v| {
                let (h, m) = v.split_once(' ')?;
                Some((h.parse().ok()?, m.parse().ok()?))
            });
        Ok(Summary {
            entries: entries as u64,
            bytes_on_disk,
            last_run,
        })
    }

    /// Drops entries whose file is gone (and rows that fail their check);
    /// returns how many entries were dropped.
    pub fn prune(&mut self) -> Result<u64> {
        let error = |path: &Path, e: rusqlite::Error| cache_error(path, e);
        let rows: Vec<(Vec<u8>, String, i64, Vec<u8>)> = {
            let mut statement = self
                .connection
                .prepare("SELECT dir, algorithm, count, entries FROM dirs")
                .map_err(|e| error(&self.path, e))?;
            let rows = statement
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .map_err(|e| error(&self.path, e))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(|e| error(&self.path, e))?
        };
        let transaction = self
            .connection
            .transaction()
            .map_err(|e| error(&self.path, e))?;
        let mut removed = 0;
        for (dir, algorithm_name, count, blob) in rows {
            let entries = algorithm_name
                .parse::<Algorithm>()
                .ok()
                .and_then(|algorithm| {
                    Some((algorithm, DirEntries::decode(&dir, algorithm, blob)?))
                });
            let Some((algorithm, entries)) = entries else {
                removed += count.max(0) as u64;
                transaction
                    .execute(
                        "DELETE FROM dirs WHERE dir = ?1 AND algorithm = ?2",
                        params![dir, algorithm_name],
                    )
                    .map_err(|e| error(&self.path, e))?;
                continue;
            };
            let mut kept = entries.to_map();
            let before = kept.len();
            let dir_path = Path::new(OsStr::from_bytes(&dir));
            kept.retain(|name, _| {
                std::fs::symlink_metadata(dir_path.join(OsStr::from_bytes(name))).is_ok()
            });
            if kept.len() == before {
                continue;
            }
            removed += (before - kept.len()) as u64;
            if kept.is_empty() {
                transaction.execute(
                    "DELETE FROM dirs WHERE dir = ?1 AND algorithm = ?2",
                    params![dir, algorithm_name],
                )
            } else {
                transaction.execute(
                    "UPDATE dirs SET count = ?3, entries = ?4 WHERE dir = ?1 AND algorithm = ?2",
                    params![
                        dir,
                        algorithm_name,
                        kept.len() as i64,
                        DirEntries::encode(&dir, algorithm, &kept)
                    ],
                )
            }
            .map_err(|e| error(&self.path, e))?;
        }
        transaction.commit().map_err(|e| error(&self.path, e))?;
        Ok(removed)
    }

    /// Drops every entry; returns how many there were.
    pub fn clear(&mut self) -> Result<u64> {
        let removed: i64 = self
            .connection
            .query_row("SELECT coalesce(sum(count), 0) FROM dirs", [], |r| r.get(0))
            .map_err(|e| cache_error(&self.path, e))?;
        self.connection
            .execute("DELETE FROM dirs", [])
            .map_err(|e| cache_error(&self.path, e))?;
        let _ = self.connection.execute_batch("VACUUM");
        Ok(removed as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let digest = Algorithm::Md5.hash_bytes(b"abc");
        let entry = NewEntry {
            path: file.clone(),
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
        assert_eq!(snapshot.lookup(&file, &stamp), Some(digest));
        let mut moved = stamp;
        moved.ctime_ns += 1;
        assert_eq!(snapshot.lookup(&file, &moved), None, "ctime differs");
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
        assert_eq!(snapshot.lookup(&file, &stamp), None);
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
            stamp: stamp_of(&file),
            digest: Algorithm::Md5.hash_bytes(b"abc"),
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
}
