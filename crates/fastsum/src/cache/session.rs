//! One run's use of the cache, shared by every worker.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::snapshot::Snapshot;
use super::store::{Cache, NewEntry, RunStats};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::Result;
use crate::fs::stat::now_ns;
use crate::fs::{FileStamp, FsId, FsIds};
use crate::stage::Hashed;

/// `path` made absolute against `cwd`, with `.` components and repeated
/// slashes removed (`..` kept: it may cross a symlink), the cache's key.
/// `std::path::absolute` does the same but asks the kernel for the working
/// directory on every call (9% of a cached run's profile).
pub(crate) fn absolute_in(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.components().collect()
    } else {
        cwd.join(path).components().collect()
    }
}

/// One run's use of the cache: the snapshot it looks up, the entries it
/// will store, its counters. Shared by every worker (and by `-c`).
pub(crate) struct CacheSession {
    algorithm: Algorithm,
    pub(super) snapshot: Snapshot,
    pub(super) cwd: PathBuf,
    started_ns: i64,
    new_entries: Mutex<Pending>,
    /// A connection of its own that stores batches while the run goes
    /// on (so an interrupted run keeps what it learnt), opened when the
    /// first batch is due (an unchanged re-run stores nothing and opens
    /// nothing), and the first error it met.
    writer: Mutex<Writer>,
    write_error: Mutex<Option<crate::error::Error>>,
    hits: AtomicU64,
    misses: AtomicU64,
    racy_rereads: AtomicU64,
    bytes_read: AtomicU64,
    too_recent: AtomicU64,
    untrusted: AtomicU64,
}

/// How often a file that changes while it is read is read again before it
/// is reported as changed.
pub const MAX_REREADS: u32 = 2;

/// What a run stores at a time while it goes on: so many entries, or what
/// a second brought. A run killed (Ctrl-C, SIGTERM, SIGKILL) loses at most
/// one batch; a batch rewrites only the rows its names fall in, each of a
/// bounded count, however large their directory.
const STORE_EVERY: usize = 4096;
const STORE_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// The session's own connection, as far as it got.
enum Writer {
    /// Not needed yet: the file to open when it is.
    Closed(Option<PathBuf>),
    Open(Cache),
    /// It could not be opened, or a store failed: finish stores the rest.
    Gone,
}

/// Entries learnt and not stored yet.
struct Pending {
    entries: Vec<NewEntry>,
    since: std::time::Instant,
}

impl CacheSession {
    /// A session over `snapshot` (loaded for `algorithm`), for a run that
    /// starts now. It answers and stores `algorithm`'s digests only.
    pub(crate) fn new(snapshot: Snapshot, algorithm: Algorithm) -> Self {
        CacheSession {
            algorithm,
            snapshot,
            cwd: std::env::current_dir().unwrap_or_default(),
            started_ns: now_ns(),
            new_entries: Mutex::new(Pending {
                entries: Vec::new(),
                since: std::time::Instant::now(),
            }),
            writer: Mutex::new(Writer::Closed(None)),
            write_error: Mutex::new(None),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            racy_rereads: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            too_recent: AtomicU64::new(0),
            untrusted: AtomicU64::new(0),
        }
    }

    /// The one algorithm whose digests this session answers and stores.
    pub(crate) fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    pub(super) fn note_miss(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    /// A file read again because it changed while it was read.
    pub(super) fn note_reread(&self) {
        self.racy_rereads.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether a read of the file at `absolute` under `stamp` on the file
    /// system `fs` gave another digest than the one recorded on that file
    /// system under the same stamp but for the device number: the same
    /// file on a file system mounted again, whose bytes changed with no
    /// write the file system knows of. The record is kept (scrub reports
    /// the corruption), never replaced by the new bytes. On
    /// another file system it is another file: recorded anew.
    fn contradicts_record(
        &self,
        absolute: &Path,
        stamp: &FileStamp,
        fs: FsId,
        digest: &Digest,
    ) -> bool {
        let Some(recorded) = self.snapshot.entry(absolute) else {
            return false;
        };
        recorded.fs == fs
            && recorded.stamp.dev != stamp.dev
            && stamp.is_remount_of(&recorded.stamp)
            && recorded.digest != *digest
    }

    /// A miss read: its bytes counted and, if the read was verified, its
    /// digest remembered under its stamp and its file system (asked of
    /// `fs_ids`, the worker's).
    pub(super) fn note_read(&self, path: &Path, hashed: &Hashed, fs_ids: &mut FsIds) {
        self.bytes_read.fetch_add(hashed.size, Ordering::Relaxed);
        let Some(stamp) = hashed.stamp else {
            // No stamp to vouch for it (tmpfs ...): never kept.
            self.untrusted.fetch_add(1, Ordering::Relaxed);
            return;
        };
        // Counted here, left out when stored (`store::grouped`): the
        // stats say why a fresh copy gets no hits next time.
        if !stamp.is_settled_at(self.started_ns) {
            self.too_recent.fetch_add(1, Ordering::Relaxed);
        } else if !stamp.vouches_at(self.started_ns) {
            self.untrusted.fetch_add(1, Ordering::Relaxed);
        }
        let absolute = absolute_in(&self.cwd, path);
        let fs = fs_ids.of(stamp.dev, path);
        if self.contradicts_record(&absolute, &stamp, fs, &hashed.digest) {
            return;
        }
        let batch = {
            let mut pending = self.new_entries.lock().expect("not poisoned");
            pending.entries.push(NewEntry {
                path: absolute,
                stamp,
                fs,
                digest: hashed.digest,
            });
            let due =
                pending.entries.len() >= STORE_EVERY || pending.since.elapsed() >= STORE_AFTER;
            if !due {
                return;
            }
            pending.since = std::time::Instant::now();
            std::mem::take(&mut pending.entries)
        };
        self.store_now(&batch);
    }

    /// Stores `batch` through the session's own connection (a worker
    /// thread pays for it, once per batch); the first failure is kept for
    /// `CacheSession::finish` to report, and what failed is left for it.
    fn store_now(&self, batch: &[NewEntry]) {
        let mut writer = self.writer.lock().expect("not poisoned");
        if let Writer::Closed(path) = &*writer {
            *writer = match path.as_deref().map(Cache::open) {
                Some(Ok(cache)) => Writer::Open(cache),
                _ => Writer::Gone,
            };
        }
        let stored = match &mut *writer {
            Writer::Open(cache) => cache.store(self.algorithm, batch, self.started_ns),
            _ => Ok(0),
        };
        let open = matches!(*writer, Writer::Open(_));
        if !open || stored.is_err() {
            if let Err(e) = stored {
                *writer = Writer::Gone;
                self.write_error
                    .lock()
                    .expect("not poisoned")
                    .get_or_insert(e);
            }
            self.new_entries
                .lock()
                .expect("not poisoned")
                .entries
                .extend_from_slice(batch);
        }
    }

    pub(super) fn hit(&self, digest: Digest, stamp: crate::fs::FileStamp) -> Hashed {
        self.hits.fetch_add(1, Ordering::Relaxed);
        Hashed {
            digest,
            size: stamp.size,
            stamp: Some(stamp),
        }
    }

    /// The run's counters so far.
    pub(crate) fn stats(&self) -> RunStats {
        RunStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            racy_rereads: self.racy_rereads.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            too_recent: self.too_recent.load(Ordering::Relaxed),
            untrusted: self.untrusted.load(Ordering::Relaxed),
            settle_window: crate::fs::stat::settle_window(),
        }
    }

    /// Writes what this run learned into `cache` (one transaction; racy
    /// entries left out) under the session's own algorithm, and records
    /// the run's hit rate. Through a shared reference: a stage's copy of
    /// the session may outlive the run (a hasher kept by its caller),
    /// and what the run learnt is stored all the same.
    pub(crate) fn finish(&self, cache: &mut Cache) -> Result<RunStats> {
        let stats = self.stats();
        {
            // Its own connection closed first; a later run through a kept
            // copy would open it again.
            let mut writer = self.writer.lock().expect("not poisoned");
            if let Writer::Open(own) = &*writer {
                *writer = Writer::Closed(Some(own.path().to_path_buf()));
            }
        }
        let entries = std::mem::take(&mut self.new_entries.lock().expect("not poisoned").entries);
        cache.store(self.algorithm, &entries, self.started_ns)?;
        if let Some(e) = self.write_error.lock().expect("not poisoned").take() {
            return Err(e);
        }
        cache.record_run(&stats)?;
        Ok(stats)
    }
}

impl Cache {
    /// A session for a run of `algorithm` over `prefixes` (the run's
    /// operands, relative to the working directory or absolute): their
    /// entries loaded a directory at a time as the run asks (in bulk if
    /// the file cannot be opened twice), and only `algorithm`'s digests
    /// answered and stored by it. The one way a run starts using the cache.
    pub(crate) fn session(
        &mut self,
        algorithm: Algorithm,
        prefixes: &[PathBuf],
    ) -> Result<CacheSession> {
        if algorithm.part_layout().is_some() {
            // Rows keep a digest's bytes, not S3's `-N` beside them.
            let why = format!("the cache does not keep digests of parts ({algorithm}) yet");
            let e = std::io::Error::new(std::io::ErrorKind::Unsupported, why);
            return Err(crate::Error::with_path(self.path(), e));
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        let prefixes: Vec<PathBuf> = prefixes.iter().map(|p| absolute_in(&cwd, p)).collect();
        let prefixes = &prefixes[..];
        let snapshot =
            match super::lazy::Lazy::open(self.path(), algorithm, super::store::BUSY_TIMEOUT) {
                Ok(lazy) => Snapshot::lazy(lazy),
                Err(_) => self.load(algorithm, prefixes)?,
            };
        let session = CacheSession::new(snapshot, algorithm);
        // A second connection for the batches stored as the run goes (the
        // file is in WAL mode), opened when the first is due; without one,
        // finish stores everything.
        *session.writer.lock().expect("not poisoned") =
            Writer::Closed(Some(self.path().to_path_buf()));
        Ok(session)
    }
}

impl std::ops::AddAssign for RunStats {
    /// The counts of two runs (or two sessions of one, `-c` with several
    /// algorithms) added up.
    fn add_assign(&mut self, other: RunStats) {
        self.hits += other.hits;
        self.misses += other.misses;
        self.racy_rereads += other.racy_rereads;
        self.bytes_read += other.bytes_read;
        self.too_recent += other.too_recent;
        self.untrusted += other.untrusted;
        self.settle_window = self.settle_window.max(other.settle_window);
    }
}
