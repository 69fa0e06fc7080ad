//! A persistent checksum cache that is never stale.
//!
//! An entry maps (absolute path bytes, algorithm) to a digest, and records
//! the file's identity when it was hashed: type, size, inode, device, mtime
//! and ctime to the nanosecond (a [`FileStamp`]). A lookup succeeds only
//! when the file's current stamp equals the recorded one, so a hit skips
//! the read but never the stat. ctime is the guard that mtime alone is not:
//! `touch -r` or a restored mtime still moves ctime, and a replacement by
//! rename changes the inode.
//!
//! **Racy entries** (git's racy-git problem): a file written in the same
//! timestamp tick as it was hashed can change again without its stamp
//! changing. So an entry is stored only if the file's mtime and ctime are
//! at least [`RACY_WINDOW`] older than the moment hashing started, and not
//! in the future; a racy file is simply hashed again next time.
//!
//! The store is SQLite (WAL mode, a busy timeout so concurrent runs share
//! it), one row per (directory, algorithm) holding that directory's entries
//! as one checked blob ([`dir_entries`]): a run over a tree loads one row
//! per directory, and writes back only the directories where it read
//! something, in one transaction. A cache that cannot be read, or was
//! written by another format version, is moved aside and rebuilt; a row
//! whose check fails is ignored: the cache can cost a re-read, never a
//! wrong answer.

mod dir_entries;

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OpenFlags};

use crate::engine::{BatchHasher, Hashed, Job, Operand, ScalarBatchHasher};
use crate::io::directory::DirectoryCursor;
use crate::io::FileHasher;
use crate::multibuffer::MultiBufferHasher;

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};

pub use dir_entries::{DirEntries, Entry};

/// The on-disk format; any other value in a cache file is a miss for all
/// of it (the file is moved aside and rebuilt).
pub const FORMAT_VERSION: &str = "2";

/// Files modified less than this long before hashing started are not
/// cached (timestamps are coarse on some file systems; 2 s covers FAT's).
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// What identifies a version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    /// `st_mode & S_IFMT`.
    pub kind: u32,
    /// Size in bytes.
    pub size: u64,
    /// Inode number.
    pub ino: u64,
    /// Device.
    pub dev: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// Status-change time, ns since the epoch.
    pub ctime_ns: i64,
}

impl FileStamp {
    /// The stamp of `metadata` (from `stat` or `fstat`).
    pub fn of(metadata: &Metadata) -> FileStamp {
        FileStamp {
            kind: metadata.mode() & libc::S_IFMT,
            size: metadata.size(),
            ino: metadata.ino(),
            dev: metadata.dev(),
            mtime_ns: metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec(),
            ctime_ns: metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
        }
    }

    /// The stamp in a raw `stat` buffer.
    pub fn of_stat(st: &libc::stat) -> FileStamp {
        FileStamp {
            kind: st.st_mode & libc::S_IFMT,
            size: st.st_size as u64,
            ino: st.st_ino,
            dev: st.st_dev,
            mtime_ns: st.st_mtime * 1_000_000_000 + st.st_mtime_nsec,
            ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec,
        }
    }

    /// Whether it is the stamp of a regular file.
    pub fn is_file(&self) -> bool {
        self.kind == libc::S_IFREG
    }

    /// Whether a digest of the file taken at `hashed_at_ns` may be trusted
    /// later on the strength of this stamp: both times safely in the past.
    pub fn is_settled_at(&self, hashed_at_ns: i64) -> bool {
        let limit = hashed_at_ns - RACY_WINDOW.as_nanos() as i64;
        self.mtime_ns < limit && self.ctime_ns < limit
    }
}

/// Now, in ns since the epoch.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The entries a run may use, loaded in bulk: absolute directory path
/// bytes to that directory's entries.
#[derive(Debug, Default)]
pub struct Snapshot {
    directories: HashMap<Vec<u8>, DirEntries>,
}

/// `absolute` split into the directory and name the cache keys it by.
fn split_key(absolute: &Path) -> Option<(&[u8], &[u8])> {
    let name = absolute.file_name()?.as_bytes();
    let dir = absolute.parent()?.as_os_str().as_bytes();
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

/// `path` made absolute against `cwd`, with `.` components and repeated
/// slashes removed (`..` kept: it may cross a symlink), the cache's key.
/// `std::path::absolute` does the same but asks the kernel for the working
/// directory on every call (9% of a cached run's profile).
pub fn absolute_in(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.components().collect()
    } else {
        cwd.join(path).components().collect()
    }
}

/// One run's use of the cache: the snapshot it looks up, the entries it
/// will store, its counters. Shared by every worker (and by `-c`).
pub struct CacheSession {
    snapshot: Snapshot,
    cwd: PathBuf,
    started_ns: i64,
    new_entries: Mutex<Vec<NewEntry>>,
    hits: AtomicU64,
    misses: AtomicU64,
    racy_rereads: AtomicU64,
    bytes_read: AtomicU64,
}

/// How often a file that changes while it is read is read again before it
/// is reported as changed.
pub const MAX_REREADS: u32 = 2;

impl CacheSession {
    /// A session over `snapshot`, for a run that starts now.
    pub fn new(snapshot: Snapshot) -> Self {
        CacheSession {
            snapshot,
            cwd: std::env::current_dir().unwrap_or_default(),
            started_ns: now_ns(),
            new_entries: Mutex::new(Vec::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            racy_rereads: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
        }
    }

    /// The digest of the file at `path`: from the cache if its stamp
    /// matches a settled entry (after a `stat`, never instead of one), else
    /// read (see [`CacheSession::read`]).
    pub fn hash_path(
        &self,
        files: &mut FileHasher,
        algorithm: Algorithm,
        path: &Path,
    ) -> std::result::Result<Hashed, ErrorKind> {
        let metadata = std::fs::metadata(path)?;
        let absolute = absolute_in(&self.cwd, path);
        let stamp = FileStamp::of(&metadata);
        if stamp.is_file() {
            if let Some(digest) = self.snapshot.lookup(&absolute, &stamp) {
                return Ok(self.hit(digest, stamp.size));
            }
        }
        self.note_miss();
        self.read(files, algorithm, path, absolute)
    }

    fn note_miss(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    /// Files read elsewhere (in SIMD lanes) with their stamp the same when
    /// opened and when done: remembered as `read` remembers its own.
    fn remember(&self, reads: Vec<crate::multibuffer::VerifiedRead>) {
        if reads.is_empty() {
            return;
        }
        let mut entries = self.new_entries.lock().expect("not poisoned");
        for read in reads {
            entries.push(NewEntry {
                path: absolute_in(&self.cwd, &read.path),
                stamp: read.stamp,
                digest: read.digest,
            });
        }
    }

    fn hit(&self, digest: Digest, size: u64) -> Hashed {
        self.hits.fetch_add(1, Ordering::Relaxed);
        Hashed { digest, size }
    }

    /// Reads and hashes the file at `path` (cache key `absolute`) with
    /// `files`, with `fstat` before and after; a file that changed meanwhile
    /// is read again (up to [`MAX_REREADS`] times) and otherwise fails with
    /// [`ErrorKind::ChangedWhileReading`] and is not remembered.
    pub fn read(
        &self,
        files: &mut FileHasher,
        algorithm: Algorithm,
        path: &Path,
        absolute: PathBuf,
    ) -> std::result::Result<Hashed, ErrorKind> {
        let mut attempt = 0;
        loop {
            let file = File::open(path)?;
            let before = file.metadata()?;
            let (digest, size) = files.hash_file_counted(algorithm, &file)?;
            self.bytes_read.fetch_add(size, Ordering::Relaxed);
            if !before.is_file() {
                return Ok(Hashed { digest, size });
            }
            let stamp = FileStamp::of(&before);
            if FileStamp::of(&file.metadata()?) == stamp && size == stamp.size {
                self.new_entries
                    .lock()
                    .expect("not poisoned")
                    .push(NewEntry {
                        path: absolute,
                        stamp,
                        digest,
                    });
                return Ok(Hashed { digest, size });
            }
            if attempt == MAX_REREADS {
                return Err(ErrorKind::ChangedWhileReading);
            }
            attempt += 1;
            self.racy_rereads.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The run's counters so far.
    pub fn stats(&self) -> RunStats {
        RunStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            racy_rereads: self.racy_rereads.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
        }
    }

    /// Writes what this run learned into `cache` (one transaction; racy
    /// entries left out) and records the run's hit rate.
    pub fn finish(self, cache: &mut Cache, algorithm: Algorithm) -> Result<RunStats> {
        let stats = self.stats();
        let entries = self.new_entries.into_inner().expect("not poisoned");
        cache.store(algorithm, &entries, self.started_ns)?;
        cache.record_run(&stats)?;
        Ok(stats)
    }
}

/// The hashing stage with the cache in front: one per worker. Paths go
/// through the shared [`CacheSession`]; standard input, which has no
/// identity to cache, straight to the scalar hasher.
///
/// A batch's files mostly share a directory (the walk sends a directory's
/// files together), so the worker keeps that directory open and stats each
/// file relative to it (`fstatat`): on a cached re-run the stats are nearly
/// all the work, and a full path lookup per file was a third of it.
pub struct CachingBatchHasher {
    session: Arc<CacheSession>,
    scalar: ScalarBatchHasher,
    /// Misses go here when the algorithm has SIMD lanes (reads verified).
    lanes: Option<MultiBufferHasher>,
    directory: DirectoryCursor,
    /// The cache's key for the cursor's directory: (as spelled, absolute).
    absolute_directory: Option<(PathBuf, PathBuf)>,
}

impl CachingBatchHasher {
    /// A worker's hasher over the shared `session`.
    pub fn new(session: Arc<CacheSession>, files: FileHasher) -> Self {
        CachingBatchHasher {
            session,
            scalar: ScalarBatchHasher::new(files),
            lanes: None,
            directory: DirectoryCursor::new(),
            absolute_directory: None,
        }
    }

    /// Misses read in SIMD lanes by `lanes` (its reads verified: a file
    /// whose stamp moved while it was read is read again here).
    pub fn with_lanes(mut self, lanes: Option<MultiBufferHasher>) -> Self {
        self.lanes = lanes.map(MultiBufferHasher::verifying);
        self
    }

    /// The stat (relative to the open directory) and the lookup: a hit, or
    /// the cache key of a miss.
    fn look_up(&mut self, path: &Path) -> std::result::Result<Looked, ErrorKind> {
        let stamp = FileStamp::of_stat(&self.directory.stat(path)?);
        let (Some(directory), Some(name)) = (self.directory.directory(), path.file_name()) else {
            let absolute = absolute_in(&self.session.cwd, path);
            if stamp.is_file() {
                if let Some(digest) = self.session.snapshot.lookup(&absolute, &stamp) {
                    return Ok(Looked::Hit(self.session.hit(digest, stamp.size)));
                }
            }
            return Ok(Looked::Miss(absolute));
        };
        let known = self
            .absolute_directory
            .as_ref()
            .is_some_and(|(d, _)| d.as_os_str().as_bytes() == directory.as_os_str().as_bytes());
        if !known {
            let absolute = absolute_in(&self.session.cwd, directory);
            self.absolute_directory = Some((directory.to_path_buf(), absolute));
        }
        let (_, absolute) = self.absolute_directory.as_ref().expect("just set");
        if stamp.is_file() {
            let digest = self
                .session
                .snapshot
                .directory(absolute.as_os_str().as_bytes())
                .and_then(|entries| entries.get(name.as_bytes()))
                .and_then(|entry| entry.answer_for(&stamp));
            if let Some(digest) = digest {
                return Ok(Looked::Hit(self.session.hit(digest, stamp.size)));
            }
        }
        Ok(Looked::Miss(absolute.join(name)))
    }

    /// Runs `misses` (or, with `None`, what is in flight) through the
    /// lanes; a read the lanes saw change is read again on the scalar
    /// path, which re-reads or reports it.
    fn hash_in_lanes(
        &mut self,
        algorithm: Algorithm,
        misses: Option<&mut Vec<Job>>,
        done: &mut dyn FnMut(Job, std::result::Result<Hashed, ErrorKind>),
    ) {
        let CachingBatchHasher {
            session,
            scalar,
            lanes,
            ..
        } = self;
        let Some(lanes) = lanes.as_mut() else {
            return;
        };
        let mut relay = |job: Job, result: std::result::Result<Hashed, ErrorKind>| {
            let result = match (result, &job.source) {
                (Err(ErrorKind::ChangedWhileReading), Operand::Path(path)) => {
                    session.racy_rereads.fetch_add(1, Ordering::Relaxed);
                    let absolute = absolute_in(&session.cwd, path);
                    session.read(scalar.files(), algorithm, path, absolute)
                }
                (Ok(hashed), _) => {
                    session.bytes_read.fetch_add(hashed.size, Ordering::Relaxed);
                    Ok(hashed)
                }
                (other, _) => other,
            };
            done(job, result);
        };
        match misses {
            Some(misses) => lanes.hash_batch(algorithm, misses, &mut relay),
            None => lanes.flush(algorithm, &mut relay),
        }
        session.remember(lanes.take_verified());
    }
}

/// What the cache says of a path.
enum Looked {
    /// Answered without a read.
    Hit(Hashed),
    /// To be read; the absolute path is its cache key.
    Miss(PathBuf),
}

impl BatchHasher for CachingBatchHasher {
    fn max_batch(&self) -> usize {
        self.scalar.max_batch()
    }

    fn hash_batch(
        &mut self,
        algorithm: Algorithm,
        batch: &mut Vec<Job>,
        done: &mut dyn FnMut(Job, std::result::Result<Hashed, ErrorKind>),
    ) {
        let lanes = self
            .lanes
            .as_ref()
            .is_some_and(|l| l.kernel().algorithm() == algorithm);
        let mut misses = Vec::new();
        for job in batch.drain(..) {
            let Operand::Path(path) = &job.source else {
                let result = self.scalar.hash_source(algorithm, &job.source);
                done(job, result);
                continue;
            };
            let result = match self.look_up(path) {
                Ok(Looked::Hit(hashed)) => Ok(hashed),
                Ok(Looked::Miss(absolute)) => {
                    self.session.note_miss();
                    if lanes {
                        misses.push(job);
                        continue;
                    }
                    self.session
                        .read(self.scalar.files(), algorithm, path, absolute)
                }
                Err(e) => Err(e),
            };
            done(job, result);
        }
        if !misses.is_empty() {
            self.hash_in_lanes(algorithm, Some(&mut misses), done);
        }
    }

    fn in_flight(&self) -> bool {
        self.lanes.as_ref().is_some_and(|l| l.in_flight())
    }

    fn flush(
        &mut self,
        algorithm: Algorithm,
        done: &mut dyn FnMut(Job, std::result::Result<Hashed, ErrorKind>),
    ) {
        self.hash_in_lanes(algorithm, None, done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
