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
//! it). A run loads the entries it may need in one query and writes new
//! ones back in one transaction. A cache that cannot be read, or was
//! written by another format version, is moved aside and rebuilt: the cache
//! can cost a re-read, never a wrong answer.

use std::collections::HashMap;
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
use crate::io::FileHasher;

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};

/// The on-disk format; any other value in a cache file is a miss for all
/// of it (the file is moved aside and rebuilt).
pub const FORMAT_VERSION: &str = "1";

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

/// The entries a run may use, loaded in bulk: path bytes to stamp, digest
/// and when it was hashed.
#[derive(Debug, Default)]
pub struct Snapshot {
    entries: HashMap<Vec<u8>, (FileStamp, Digest, i64)>,
}

impl Snapshot {
    /// The cached digest of `path`, if the file's current `stamp` is the one
    /// recorded and the entry was settled when recorded.
    pub fn lookup(&self, path: &Path, stamp: &FileStamp) -> Option<Digest> {
        let (recorded, digest, hashed_at) = self.entries.get(path.as_os_str().as_bytes())?;
        (recorded == stamp && recorded.is_settled_at(*hashed_at)).then_some(*digest)
    }

    /// Entries loaded.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was loaded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
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
    /// one made; [`Cache::notice`] then says so.
    pub fn open(path: &Path) -> Result<Cache> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::with_path(dir, e))?;
        }
        match Self::open_retrying(path) {
            Ok(connection) => Ok(Cache {
                connection,
                path: path.to_path_buf(),
                notice: None,
            }),
            Err(OpenFailure::Other(why) | OpenFailure::Busy(why)) => Err(cache_error(path, why)),
            Err(OpenFailure::Broken(why)) => {
                let aside = PathBuf::from(format!("{}.broken", path.display()));
                std::fs::rename(path, &aside).map_err(|e| Error::with_path(path, e))?;
                for suffix in ["-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
                let connection = Self::open_retrying(path).map_err(|e| match e {
                    OpenFailure::Broken(why) | OpenFailure::Busy(why) | OpenFailure::Other(why) => {
                        cache_error(path, why)
                    }
                })?;
                Ok(Cache {
                    connection,
                    path: path.to_path_buf(),
                    notice: Some(format!(
                        "cache {}: {why}; moved aside to {} and rebuilt",
                        path.display(),
                        aside.display()
                    )),
                })
            }
        }
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
            connection.execute_batch(
                "BEGIN IMMEDIATE;
                 CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS entries(
                     path BLOB NOT NULL, algorithm TEXT NOT NULL,
                     kind INTEGER NOT NULL, size INTEGER NOT NULL,
                     ino INTEGER NOT NULL, dev INTEGER NOT NULL,
                     mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
                     hashed_at_ns INTEGER NOT NULL, digest BLOB NOT NULL,
                     PRIMARY KEY(path, algorithm)) WITHOUT ROWID;
                 INSERT OR IGNORE INTO meta(key, value) VALUES('format', '1');
                 COMMIT;",
            )?;
            let version: Option<String> = connection
                .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
                    r.get(0)
                })
                .ok();
            Ok(version)
        };
        match setup() {
            Ok(Some(v)) if v == FORMAT_VERSION => {
                // A truncated or damaged file can open and still be broken.
                let check: String = connection
                    .query_row("PRAGMA quick_check", [], |r| r.get(0))
                    .map_err(OpenFailure::from)?;
                if check == "ok" {
                    Ok(connection)
                } else {
                    Err(OpenFailure::Broken(format!("damaged ({check})")))
                }
            }
            Ok(Some(v)) => Err(OpenFailure::Broken(format!(
                "format version {v}, not {FORMAT_VERSION}"
            ))),
            Ok(None) => Err(OpenFailure::Broken("no format version".into())),
            Err(e) => Err(OpenFailure::from(e)),
        }
    }

    /// What to tell the user once, if the file had to be rebuilt.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// Where the cache lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Loads every entry for `algorithm` whose path starts with one of
    /// `prefixes` (absolute paths), in one query per prefix.
    pub fn load(&self, algorithm: Algorithm, prefixes: &[PathBuf]) -> Result<Snapshot> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT path, kind, size, ino, dev, mtime_ns, ctime_ns, hashed_at_ns, digest
                 FROM entries WHERE algorithm = ?1 AND path >= ?2 AND path < ?3",
            )
            .map_err(|e| cache_error(&self.path, e))?;
        let mut snapshot = Snapshot::default();
        for prefix in prefixes {
            let low = prefix.as_os_str().as_bytes().to_vec();
            // Everything that starts with `low`: up to `low` + 0xff..., i.e.
            // below `low` with its last byte incremented (0xff never ends a
            // path prefix we pass: they end in a name or '/').
            let mut high = low.clone();
            match high.last_mut() {
                Some(b) if *b < 0xff => *b += 1,
                _ => high.push(0xff),
            }
            let rows = statement
                .query_map(params![algorithm.name(), low, high], |row| {
                    let stamp = FileStamp {
                        kind: row.get::<_, i64>(1)? as u32,
                        size: row.get::<_, i64>(2)? as u64,
                        ino: row.get::<_, i64>(3)? as u64,
                        dev: row.get::<_, i64>(4)? as u64,
                        mtime_ns: row.get(5)?,
                        ctime_ns: row.get(6)?,
                    };
                    let digest: Vec<u8> = row.get(8)?;
                    Ok((
                        row.get::<_, Vec<u8>>(0)?,
                        stamp,
                        row.get::<_, i64>(7)?,
                        digest,
                    ))
                })
                .map_err(|e| cache_error(&self.path, e))?;
            for row in rows {
                let (path, stamp, hashed_at, digest) =
                    row.map_err(|e| cache_error(&self.path, e))?;
                if digest.len() == algorithm.output_len() {
                    snapshot
                        .entries
                        .insert(path, (stamp, Digest::from_bytes(&digest), hashed_at));
                }
            }
        }
        Ok(snapshot)
    }

    /// Stores `entries` hashed by a run that started at `started_ns`, in one
    /// transaction. Entries that were not settled then are left out.
    pub fn store(
        &mut self,
        algorithm: Algorithm,
        entries: &[NewEntry],
        started_ns: i64,
    ) -> Result<usize> {
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| cache_error(&self.path, e))?;
        let mut stored = 0;
        {
            let mut insert = transaction
                .prepare(
                    "INSERT OR REPLACE INTO entries
                     (path, algorithm, kind, size, ino, dev, mtime_ns, ctime_ns, hashed_at_ns, digest)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .map_err(|e| cache_error(&self.path, e))?;
            for entry in entries.iter().filter(|e| e.stamp.is_settled_at(started_ns)) {
                let s = entry.stamp;
                insert
                    .execute(params![
                        entry.path.as_os_str().as_bytes(),
                        algorithm.name(),
                        s.kind as i64,
                        s.size as i64,
                        s.ino as i64,
                        s.dev as i64,
                        s.mtime_ns,
                        s.ctime_ns,
                        started_ns,
                        entry.digest.as_bytes()
                    ])
                    .map_err(|e| cache_error(&self.path, e))?;
                stored += 1;
            }
        }
        transaction
            .commit()
            .map_err(|e| cache_error(&self.path, e))?;
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

    /// Entries, size on disk and the last run's hits and misses.
    pub fn summary(&self) -> Result<Summary> {
        let entries: i64 = self
            .connection
            .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
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

    /// Drops entries whose file is gone; returns how many.
    pub fn prune(&mut self) -> Result<u64> {
        let paths: Vec<Vec<u8>> = {
            let mut statement = self
                .connection
                .prepare("SELECT DISTINCT path FROM entries")
                .map_err(|e| cache_error(&self.path, e))?;
            let rows = statement
                .query_map([], |r| r.get::<_, Vec<u8>>(0))
                .map_err(|e| cache_error(&self.path, e))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(|e| cache_error(&self.path, e))?
        };
        let gone: Vec<&Vec<u8>> = paths
            .iter()
            .filter(|p| std::fs::symlink_metadata(std::ffi::OsStr::from_bytes(p)).is_err())
            .collect();
        let transaction = self
            .connection
            .transaction()
            .map_err(|e| cache_error(&self.path, e))?;
        let mut removed = 0;
        for path in gone {
            removed += transaction
                .execute("DELETE FROM entries WHERE path = ?1", [path])
                .map_err(|e| cache_error(&self.path, e))? as u64;
        }
        transaction
            .commit()
            .map_err(|e| cache_error(&self.path, e))?;
        Ok(removed)
    }

    /// Drops every entry; returns how many there were.
    pub fn clear(&mut self) -> Result<u64> {
        let removed = self
            .connection
            .execute("DELETE FROM entries", [])
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
    /// read with `files`, with `fstat` before and after; a file that changed
    /// meanwhile is read again (up to [`MAX_REREADS`] times) and otherwise
    /// fails with [`ErrorKind::ChangedWhileReading`] and is not remembered.
    pub fn hash_path(
        &self,
        files: &mut FileHasher,
        algorithm: Algorithm,
        path: &Path,
    ) -> std::result::Result<Hashed, ErrorKind> {
        let metadata = std::fs::metadata(path)?;
        let absolute = absolute_in(&self.cwd, path);
        if metadata.is_file() {
            if let Some(digest) = self.snapshot.lookup(&absolute, &FileStamp::of(&metadata)) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(Hashed {
                    digest,
                    size: metadata.len(),
                });
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
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
pub struct CachingBatchHasher {
    session: Arc<CacheSession>,
    scalar: ScalarBatchHasher,
}

impl CachingBatchHasher {
    /// A worker's hasher over the shared `session`.
    pub fn new(session: Arc<CacheSession>, files: FileHasher) -> Self {
        CachingBatchHasher {
            session,
            scalar: ScalarBatchHasher::new(files),
        }
    }
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
        for job in batch.drain(..) {
            let result = match &job.source {
                Operand::Path(path) => self.session.hash_path(self.scalar.files(), algorithm, path),
                stdin => self.scalar.hash_source(algorithm, stdin),
            };
            done(job, result);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp_of(path: &Path) -> FileStamp {
        FileStamp::of(&std::fs::metadata(path).unwrap())
    }

    #[test]
    fn stored_entries_come_back_only_for_the_same_stamp() {
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
        let cache = Cache::open(&path).unwrap();
        assert!(
            cache.notice().unwrap().contains("moved aside"),
            "{:?}",
            cache.notice()
        );
        assert_eq!(cache.summary().unwrap().entries, 0);
        assert!(dir.path().join("c.sqlite.broken").exists());
        let again = Cache::open(&path).unwrap();
        assert_eq!(again.notice(), None);
    }
}
