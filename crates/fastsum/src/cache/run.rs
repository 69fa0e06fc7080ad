//! One command's use of the cache from start to end, in one value: the
//! file opened (or none), a session per algorithm loaded, served to the
//! stages that hash ([`TreeHasher::cache`](crate::TreeHasher::cache),
//! `dupes`, `diff`), and what the run learnt stored by
//! [`CacheRun::finish`]. What went wrong on the way is handed back as
//! notices, never printed, and never the end of the run: a cache that
//! cannot be opened or loaded costs reads, not the answer.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::session::CacheSession;
use super::store::{Cache, RunStats};
use crate::algo::Algorithm;
use crate::error::Result;

/// A run's cache: off, the file with the sessions loaded from it, or the
/// answers a list written with stamps gives (nothing stored).
///
/// ```
/// use fastsum::cache::CacheRun;
/// use fastsum::{Algorithm, Source, TreeHasher};
/// let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
/// std::fs::write(dir.path().join("a"), b"abc").unwrap();
/// let roots = [dir.path().to_path_buf()];
/// let mut cache = CacheRun::open(&home.path().join("cache.sqlite"), Algorithm::Md5, &roots);
/// let hasher = TreeHasher::new(Algorithm::Md5).recursive(true).cache(&cache).unwrap();
/// hasher.run(&[Source::Path(dir.path().into())], |_| {}).unwrap();
/// let stats = cache.finish().unwrap();
/// assert_eq!(stats.misses, 1);
/// assert!(cache.take_notices().is_empty());
/// ```
#[derive(Default)]
pub struct CacheRun {
    /// The file, when open (none: off, or answering from a list); in a
    /// Mutex so that the stages on other threads may borrow the run
    /// (SQLite's connection is Send, not Sync); a shared borrow holds it
    /// only to load a session.
    cache: Option<Mutex<Cache>>,
    /// One per algorithm loaded, shared with the stages of each run; in
    /// a Mutex so that a stage that meets a new algorithm (a manifest's,
    /// found only once it is read) loads it through a shared borrow.
    sessions: Mutex<Vec<Arc<CacheSession>>>,
    /// What to tell the user, oldest first.
    notices: Mutex<Vec<String>>,
}

impl CacheRun {
    /// No cache: every file is read.
    pub fn off() -> Self {
        CacheRun::default()
    }

    /// The cache at `path` for a run of `algorithm` over `roots` (the
    /// run's operands, relative or absolute): [`CacheRun::open_file`],
    /// then [`CacheRun::load`]; a session that cannot be loaded is a
    /// notice, and the run goes on without it.
    pub fn open(path: &Path, algorithm: Algorithm, roots: &[PathBuf]) -> Self {
        let run = CacheRun::open_file(path);
        if let Err(e) = run.load(algorithm, roots) {
            run.notice(format!("cache: {e}; going on without it"));
        }
        run
    }

    /// [`CacheRun::open`] for a caller that stops when the cache cannot
    /// be opened or loaded (the Python package raises): the error, not a
    /// notice. A damaged file moved aside is still a notice.
    pub fn try_open(path: &Path, algorithm: Algorithm, roots: &[PathBuf]) -> Result<Self> {
        let mut run = CacheRun {
            cache: Some(Mutex::new(Cache::open(path)?)),
            ..CacheRun::off()
        };
        run.take_cache_notice();
        run.load(algorithm, roots)?;
        Ok(run)
    }

    /// The cache file at `path` opened, no session loaded yet. A damaged
    /// file is moved aside and rebuilt, said in a notice; one that cannot
    /// be opened at all is a notice, and the run is off.
    pub fn open_file(path: &Path) -> Self {
        let mut run = CacheRun::off();
        match Cache::open(path) {
            Ok(cache) => {
                run.cache = Some(Mutex::new(cache));
                run.take_cache_notice();
            }
            Err(e) => run.notice(format!("cache: {e}; going on without it")),
        }
        run
    }

    /// The answers of a list's stamped entries (`session`), nothing stored.
    pub(crate) fn answering(session: CacheSession) -> Self {
        CacheRun {
            sessions: Mutex::new(vec![Arc::new(session)]),
            ..CacheRun::off()
        }
    }

    /// Loads a session of `algorithm` over `roots` (its entries a
    /// directory at a time as the runs reach them): the stages of
    /// `algorithm`'s runs are answered from then on. Nothing to do when
    /// it is loaded already or the file is not open; the error is why it
    /// could not be (the runs of `algorithm` go uncached). A shared
    /// borrow: a stage loads the algorithm it meets while the run goes.
    pub fn load(&self, algorithm: Algorithm, roots: &[PathBuf]) -> Result<()> {
        let Some(cache) = self.cache.as_ref() else {
            return Ok(());
        };
        let mut cache = cache.lock().expect("not poisoned");
        // Asked under the file's lock: two stages loading one algorithm
        // at once load it once.
        if self.serves(algorithm) {
            return Ok(());
        }
        let loaded = cache.session(algorithm, roots);
        if let Some(notice) = cache.take_notice() {
            self.notice(notice);
        }
        self.sessions_held().push(Arc::new(loaded?));
        Ok(())
    }

    /// Whether `algorithm`'s digests are answered (a session is loaded).
    pub fn serves(&self, algorithm: Algorithm) -> bool {
        self.session(algorithm).is_some()
    }

    /// Whether the cache file is open: [`CacheRun::finish`] stores into
    /// it and counts the run.
    pub fn is_open(&self) -> bool {
        self.cache.is_some()
    }

    /// The session of `algorithm`, if loaded.
    pub(crate) fn session(&self, algorithm: Algorithm) -> Option<Arc<CacheSession>> {
        let sessions = self.sessions_held();
        sessions
            .iter()
            .find(|s| s.algorithm() == algorithm)
            .cloned()
    }

    /// An algorithm a session is loaded for (to name in a refusal).
    pub(crate) fn loaded(&self) -> Option<Algorithm> {
        self.sessions_held().first().map(|s| s.algorithm())
    }

    fn sessions_held(&self) -> std::sync::MutexGuard<'_, Vec<Arc<CacheSession>>> {
        self.sessions.lock().expect("not poisoned")
    }

    /// Adds `notice` to what the run has to tell.
    pub(crate) fn notice(&self, notice: String) {
        self.notices.lock().expect("not poisoned").push(notice);
    }

    /// What to tell the user since last asked, oldest first: a damaged
    /// file moved aside, a cache that could not be opened or loaded, a
    /// store that failed. Each is a line without the program's name.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(self.notices.get_mut().expect("not poisoned"))
    }

    /// Stores what every session learnt (one transaction each, racy
    /// entries left out), records each one's counts, and ends the run:
    /// the cache is off afterwards. The counts added up, or `None` when
    /// the file was not open or no session's store went through (each
    /// failure is a notice).
    ///
    /// The stages hold the sessions only while they hash
    /// ([`TreeHasher::run`](crate::TreeHasher::run) joins its workers
    /// before it returns), so what a stage learnt is stored here however
    /// many copies of a hasher still exist: none is left behind.
    pub fn finish(&mut self) -> Option<RunStats> {
        self.store_all(&mut |notices, e| notices.push(format!("cache: {e}")))
    }

    /// [`CacheRun::finish`] for a caller that stops on a failed store:
    /// the first failure is the error (every session is stored all the
    /// same, and the notices of a damaged file kept).
    pub fn try_finish(&mut self) -> Result<Option<RunStats>> {
        let mut first = None;
        let total = self.store_all(&mut |_, e| {
            first.get_or_insert(e);
        });
        match first {
            Some(e) => Err(e),
            None => Ok(total),
        }
    }

    /// Stores every session in turn, each failure handed to `failed`
    /// (with the notices, to say it in its place: after the notice of the
    /// file it found damaged).
    fn store_all(
        &mut self,
        failed: &mut dyn FnMut(&mut Vec<String>, crate::error::Error),
    ) -> Option<RunStats> {
        let sessions = std::mem::take(self.sessions.get_mut().expect("not poisoned"));
        let mut cache = self.cache.take()?.into_inner().expect("not poisoned");
        let notices = self.notices.get_mut().expect("not poisoned");
        let mut total: Option<RunStats> = None;
        for session in sessions {
            let finished = session.finish(&mut cache);
            if let Some(notice) = cache.take_notice() {
                notices.push(notice);
            }
            match finished {
                Ok(stats) => *total.get_or_insert_with(RunStats::default) += stats,
                Err(e) => failed(notices, e),
            }
        }
        total
    }

    fn take_cache_notice(&mut self) {
        let cache = self
            .cache
            .as_mut()
            .map(|c| c.get_mut().expect("not poisoned"));
        if let Some(notice) = cache.and_then(Cache::take_notice) {
            self.notice(notice);
        }
    }
}
