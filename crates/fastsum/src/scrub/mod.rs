//! Silent corruption found, not guessed: every file whose stamp (kind,
//! size, inode, device, mtime and ctime to the nanosecond) is still the
//! one the cache recorded with its digest is read again, and a different
//! digest now is corruption: the bytes changed without a write the file
//! system knows of (a failing disk, bad memory, a tool that put the mtime
//! back, which ctime would still show). A file whose stamp changed was
//! modified normally: it is reported apart, never as corruption.
//!
//! Every read is verified (the stamp taken when the file is opened and
//! again when it is read must agree), so a file written during the scrub
//! is "changed while reading", not corrupted. A file recorded in the same
//! timestamp tick as it was last written (a racy entry, see
//! [`crate::cache`]) proves nothing either way: it is recorded again, as
//! changed.
//!
//! The tree is walked in order and read a batch at a time on every core;
//! after each batch the cache remembers what was verified (its entries'
//! time is the scrub's: when they were last verified), so an interrupted
//! scrub resumes by passing over what it verified ([`ScrubOptions::resume`],
//! `place.rs`). A corrupted file's entry is left as it was: the next scrub
//! finds it again until someone decides which bytes are right.
//!
//! A recorded digest is replaced only when the file's stamp says it was
//! written, or the file is on another file system (`fs::identity`: images
//! made alike give their files the same stamp, bytes aside), said as such,
//! never as corruption. The same file on a file system mounted again
//! (another loop device, a USB disk under another name) has another device
//! number and the same inode, size and times to the nanosecond: its bytes
//! are compared with the record, not recorded anew. The roots are looked up
//! by their canonical path (`mnt/../mnt/a`, a link to `a`: one key), then
//! as spelled, for entries a run stored under that spelling, then where
//! the root was at the last scrub when its file system is now mounted at
//! another place (`moved.rs`). Every file
//! is opened as a listed one is: a FIFO or device where a file was is
//! refused, never waited on or read.

mod finding;
mod judge;
mod listed;
mod moved;
pub(crate) mod place;

pub use finding::{Finding, ScrubSummary};
use judge::{judge, Pending};
use place::{place_key, resume_state};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::algo::Algorithm;
use crate::cache::{absolute_in, Cache, Entry, NewEntry, Snapshot};
use crate::error::Result;
use crate::fs::stat::now_ns;
use crate::pipeline::{Outcome, Progress, TreeHasher, TreeOptions};
use crate::read::Pace;
use crate::stage::Source;
use crate::walk::{WalkItem, WalkOptions};

/// How to scrub.
#[derive(Clone, Debug)]
pub struct ScrubOptions {
    /// The algorithm of the recorded digests.
    pub algorithm: Algorithm,
    /// Hashing threads.
    pub threads: usize,
    /// How to walk (links are never followed: their targets are elsewhere).
    pub walk: WalkOptions,
    /// At most this many bytes read a second, on average (`None`: as fast
    /// as the disk goes).
    pub limit_rate: Option<u64>,
    /// Read only files not verified within this long; the others are
    /// "not due" and not read.
    pub older_than: Option<Duration>,
    /// Pass over the files an interrupted scrub of the same paths, with
    /// the same algorithm, verified (their entries stored since it
    /// started, their stamps unchanged); read every other.
    pub resume: bool,
    /// Counters for a progress display.
    pub progress: Option<Arc<Progress>>,
    /// Stop after the batch being read when set (its place is kept).
    pub stop: Option<Arc<AtomicBool>>,
}

impl ScrubOptions {
    /// Defaults: `algorithm`, every core, no limit.
    pub fn new(algorithm: Algorithm) -> Self {
        ScrubOptions {
            algorithm,
            threads: crate::pipeline::TreeOptions::available_threads(),
            walk: WalkOptions::default(),
            limit_rate: None,
            older_than: None,
            resume: false,
            progress: None,
            stop: None,
        }
    }
}

/// The run that reads for a scrub: verified reads, at the pace, on every
/// core, stopped when asked.
fn reading_hasher(
    scrub: &ScrubOptions,
    pace: Option<Arc<Pace>>,
    mut options: TreeOptions,
) -> TreeHasher {
    options.threads = scrub.threads.max(1);
    options.verify = true;
    // The bytes on the medium, not the page cache's copy of them: a block
    // rotted under a mounted file system was read from the cache and
    // called verified.
    options.from_disk = true;
    options.pace = pace;
    let mut hasher = TreeHasher::with_options(scrub.algorithm, options);
    if let Some(progress) = &scrub.progress {
        hasher = hasher.progress(progress.clone());
    }
    if let Some(stop) = &scrub.stop {
        hasher = hasher.stop_when(stop.clone());
    }
    hasher
}

/// The bytes read at once: under a rate limit, half a second's worth.
fn batch_limit(options: &ScrubOptions) -> u64 {
    options
        .limit_rate
        .map_or(BATCH_BYTES, |rate| (rate / 2).max(1))
}

/// Files read at once (fewer when a rate limit makes batches small).
const BATCH_FILES: usize = 16 * 1024;
const BATCH_BYTES: u64 = 256 << 20;

/// One scrub under way.
struct Run<'a> {
    cache: &'a mut Cache,
    snapshot: Snapshot,
    options: &'a ScrubOptions,
    sink: &'a mut dyn FnMut(&Path, &Finding),
    started_ns: i64,
    /// `limit_rate`'s pace, shared by every read of the scrub.
    pace: Option<Arc<Pace>>,
    /// When the interrupted scrub being resumed started: files whose
    /// entries that scrub stored (their time is its start), under their
    /// stamp now, are passed over.
    resume_since: Option<i64>,
    /// Files found corrupted by a scrub, not since verified or rewritten
    /// (absolute path bytes): never passed over (`place::Corrupted`).
    corrupted: place::Corrupted,
    /// Each root's absolute path as spelled, beside its canonical one
    /// (`absolute`): where entries stored under that spelling are found.
    spelled: Vec<PathBuf>,
    absolute: Vec<PathBuf>,
    /// Where each root was at earlier scrubs, if elsewhere (its file
    /// system mounted at another place: `moved.rs`), the latest first.
    before: Vec<Vec<PathBuf>>,
    batch: Vec<Pending>,
    batch_bytes: u64,
    summary: ScrubSummary,
    /// The cache could not be written: the scrub stops with this.
    failure: Option<crate::error::Error>,
}

impl Run<'_> {
    /// Walks the root `operand` in order, reading its files a batch at a
    /// time.
    fn scrub_root(&mut self, operand: usize, root: &Path) -> Result<()> {
        let absolute = self.absolute[operand].clone();
        if !root.is_dir() {
            let size = std::fs::metadata(root).map_or(0, |m| m.len());
            self.consider(operand, root.to_path_buf(), absolute, size);
            return self.read_batch();
        }
        let mut walk = self.options.walk.clone();
        walk.follow_links = false;
        walk.sizes = true;
        walk.walk_sorted(root, &mut |item| {
            if self.failure.is_some() || self.summary.interrupted {
                return;
            }
            match item {
                WalkItem::File { path, size, .. } => {
                    let below = path.strip_prefix(root).unwrap_or(&path);
                    let absolute = absolute.join(below);
                    self.consider(operand, path, absolute, size.unwrap_or(0));
                }
                WalkItem::Error(e) => {
                    let path = e.path().map(Path::to_path_buf).unwrap_or_default();
                    self.found(&path, Finding::Failed(e.kind().to_string()));
                }
                // A FIFO, device or link where a recorded file was: said,
                // never read.
                WalkItem::Special { path, .. } => {
                    let below = path.strip_prefix(root).unwrap_or(&path);
                    if self.recorded(operand, &absolute.join(below)).is_some() {
                        self.found(&path, Finding::Failed("not a regular file".into()));
                    }
                }
                WalkItem::Directory { .. } => {}
            }
        })?;
        match self.failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn found(&mut self, path: &Path, finding: Finding) {
        self.summary.count(&finding);
        (self.sink)(path, &finding);
    }

    /// One file of the root `operand` met (`size` bytes as walked):
    /// passed over (verified by the scrub being resumed, not due), or
    /// queued to be read.
    fn consider(&mut self, operand: usize, path: PathBuf, absolute: PathBuf, size: u64) {
        // A file found corrupted is read every time until it is verified
        // or rewritten: never resumed past, never "not due".
        let skippable = !self.corrupted.holds(&absolute);
        let entry = self.recorded(operand, &absolute);
        let unchanged = |entry: &Entry| judge::unchanged(entry, &path);
        if let (Some(entry), Some(since), true) = (&entry, self.resume_since, skippable) {
            // Stored by the interrupted scrub itself, and by nothing else.
            if entry.hashed_at_ns == since && unchanged(entry) {
                self.summary.resumed_past += 1;
                return;
            }
        }
        if let (Some(entry), Some(due), true) = (&entry, self.options.older_than, skippable) {
            let recent = judge::verified_within(entry.hashed_at_ns, self.started_ns, due);
            if recent && unchanged(entry) {
                self.found(&path, Finding::NotDue);
                return;
            }
        }
        self.batch_bytes += size;
        self.batch.push(Pending {
            path,
            absolute,
            entry,
        });
        if self.batch.len() >= BATCH_FILES || self.batch_bytes >= self.batch_limit() {
            if let Err(e) = self.read_batch() {
                self.failure = Some(e);
            }
        }
    }

    /// Reads the batch (at the pace, under a rate limit), compares, and
    /// records what was verified and where the scrub is.
    fn read_batch(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let operands: Vec<Source> = batch.iter().map(|p| Source::Path(p.path.clone())).collect();
        let mut options = TreeOptions::new();
        // Walked as files, opened as a list's: a FIFO or device that took
        // a file's place is refused, not waited on.
        options.listed = true;
        let hasher = self.hasher(options);
        let mut outcomes: Vec<Option<Outcome>> = batch.iter().map(|_| None).collect();
        hasher.run(&operands, |record| {
            outcomes[record.operand] = Some(record.outcome)
        })?;
        let mut keep = Vec::new();
        for (pending, outcome) in batch.iter().zip(outcomes) {
            if let Some(Outcome::Hashed(hashed)) = &outcome {
                self.summary.bytes_read += hashed.size;
            }
            let (finding, entry) = judge(pending, outcome);
            keep.extend(entry);
            let noted = self.corrupted.note(self.cache, &pending.absolute, &finding);
            self.found(&pending.path, finding);
            noted?;
        }
        self.keep(&keep)?;
        let stop = self.options.stop.as_ref();
        self.summary.interrupted = stop.is_some_and(|s| s.load(Ordering::Relaxed));
        Ok(())
    }

    /// The bytes read between two saves of the place: under a rate limit,
    /// half a second's worth, so a killed scrub loses little.
    fn batch_limit(&self) -> u64 {
        batch_limit(self.options)
    }

    /// The run that reads for the scrub.
    fn hasher(&self, options: TreeOptions) -> TreeHasher {
        reading_hasher(self.options, self.pace.clone(), options)
    }

    /// No file to pass over (no `older_than`, no place to resume from) and
    /// no pace: the whole scrub is one run over the roots, walked and read
    /// as `-r` reads them; what was verified, and the place, are kept
    /// every [`BATCH_FILES`] files or [`BATCH_BYTES`].
    fn scrub_in_one_run(&mut self, roots: &[PathBuf]) -> Result<()> {
        let mut options = TreeOptions::new();
        options.recursive = true;
        options.walk = self.options.walk.clone();
        options.walk.follow_links = false;
        let hasher = self.hasher(options);
        let operands: Vec<Source> = roots.iter().cloned().map(Source::Path).collect();
        let mut keep = Vec::new();
        let (mut unsaved, limit) = (0, BATCH_BYTES);
        hasher.run(&operands, |record| {
            if self.failure.is_some() {
                return;
            }
            let root = &roots[record.operand];
            let below = record.path.strip_prefix(root).unwrap_or(&record.path);
            let mut full = self.absolute[record.operand].clone();
            if !below.as_os_str().is_empty() {
                full.push(below);
            }
            let pending = Pending {
                entry: self.recorded(record.operand, &full),
                path: record.path,
                absolute: full,
            };
            let finding = match record.outcome {
                // A FIFO, device or link where a recorded file was: said.
                Outcome::Skipped(_) if pending.entry.is_some() => {
                    Finding::Failed("not a regular file".into())
                }
                Outcome::Skipped(_) | Outcome::Directory(_) => return,
                Outcome::WalkFailed(kind) => Finding::Failed(kind.to_string()),
                outcome => {
                    if let Outcome::Hashed(hashed) = &outcome {
                        self.summary.bytes_read += hashed.size;
                        unsaved += hashed.size;
                    }
                    let (finding, entry) = judge(&pending, Some(outcome));
                    keep.extend(entry);
                    let noted = self.corrupted.note(self.cache, &pending.absolute, &finding);
                    self.failure = self.failure.take().or(noted.err());
                    finding
                }
            };
            self.found(&pending.path, finding);
            if keep.len() >= BATCH_FILES || unsaved >= limit {
                unsaved = 0;
                let kept = self.keep(&std::mem::take(&mut keep));
                self.failure = kept.err();
            }
        })?;
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        self.keep(&keep)?;
        let stop = self.options.stop.as_ref();
        self.summary.interrupted = stop.is_some_and(|s| s.load(Ordering::Relaxed));
        Ok(())
    }

    /// Stores what was read (each entry's time is the scrub's start: a
    /// resumed scrub passes over it).
    fn keep(&mut self, entries: &[NewEntry]) -> Result<()> {
        self.cache
            .store(self.options.algorithm, entries, self.started_ns)?;
        self.corrupted.save(self.cache)
    }

    /// What the cache holds for the file at `absolute` (below the root
    /// `operand`'s canonical path), or under the root's spelling, or where
    /// the root was at the last scrub.
    fn recorded(&self, operand: usize, absolute: &Path) -> Option<Entry> {
        self.snapshot.entry(absolute).or_else(|| {
            let below = absolute.strip_prefix(&self.absolute[operand]).ok()?;
            let under = |root: &Path| match below.as_os_str().is_empty() {
                true => self.snapshot.entry(root),
                false => self.snapshot.entry(&root.join(below)),
            };
            under(&self.spelled[operand])
                .or_else(|| self.before[operand].iter().find_map(|root| under(root)))
        })
    }
}

impl ScrubOptions {
    /// Scrubs the trees (or files) at `roots` against the cache's entries for
    /// the options' algorithm, handing each file's finding to `sink` in path
    /// order (verified and not-due files too: the caller picks what to say).
    /// Errors: the cache could not be read or written.
    pub fn scrub(
        &self,
        cache: &mut Cache,
        roots: &[PathBuf],
        sink: &mut dyn FnMut(&Path, &Finding),
    ) -> Result<ScrubSummary> {
        let (roots, refused) = scrubbable(roots, sink);
        let roots = &roots[..];
        let (spelled, absolute) = root_paths(roots);
        let moved = moved::Moved::load(cache, &absolute)?;
        let mut prefixes = absolute.clone();
        prefixes.extend(spelled.iter().filter(|s| !absolute.contains(s)).cloned());
        prefixes.extend(moved.before.iter().flatten().cloned());
        // Kept from the start, the places before it too: a scrub killed
        // at any point leaves every place looked in again.
        let snapshot = cache.load(self.algorithm, &prefixes)?;
        let recorded_in_others = cache.recorded_only_in_others(self.algorithm, &prefixes)?;
        moved.remember(cache, &absolute)?;
        let key = place_key(self.algorithm, &absolute);
        let now = now_ns();
        let resume_since = match self.resume {
            true => resume_state(cache, &key, now)?,
            false => None,
        };
        // A resumed scrub's entries carry the interrupted one's time, so a
        // second interruption resumes past both.
        let started_ns = resume_since.unwrap_or(now);
        // Kept from the start: a scrub killed at any point resumes from
        // what it stored.
        cache.set_note(&key, Some(&place::note(started_ns)))?;
        let corrupted = place::Corrupted::load(cache, self.algorithm)?;
        let mut run = Run {
            cache,
            snapshot,
            options: self,
            sink,
            started_ns,
            pace: self.limit_rate.map(|rate| Arc::new(Pace::new(rate))),
            resume_since,
            corrupted,
            spelled,
            absolute,
            before: moved.before,
            batch: Vec::new(),
            batch_bytes: 0,
            summary: ScrubSummary {
                failed: refused,
                recorded_in_others,
                ..ScrubSummary::default()
            },
            failure: None,
        };
        // A rate-limited scrub goes a batch at a time too: the pipeline hands
        // results on a worker's batch at a time, and what was verified must
        // be kept every half second's worth.
        let unhindered = self.limit_rate.is_none() && self.older_than.is_none();
        if unhindered && run.resume_since.is_none() {
            run.scrub_in_one_run(roots)?;
        } else {
            for (operand, root) in roots.iter().enumerate() {
                run.scrub_root(operand, root)?;
                if run.summary.interrupted {
                    break;
                }
            }
            if !run.summary.interrupted {
                run.read_batch()?;
            }
        }
        run.corrupted.save(run.cache)?;
        if !run.summary.interrupted {
            run.cache.set_note(&key, None)?;
        }
        Ok(run.summary)
    }
}

/// Each root's absolute path as spelled, and its canonical one (the
/// spelled one when it has none).
fn root_paths(roots: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let spelled: Vec<PathBuf> = roots.iter().map(|r| absolute_in(&cwd, r)).collect();
    let absolute = roots
        .iter()
        .zip(&spelled)
        .map(|(root, spelled)| std::fs::canonicalize(root).unwrap_or_else(|_| spelled.clone()))
        .collect();
    (spelled, absolute)
}

/// The roots a scrub walks: each once (`a a`, `a a/x`), and none that is
/// neither a directory nor a regular file (a FIFO, a device, a link to
/// one), which is said and never read; how many were refused.
fn scrubbable(roots: &[PathBuf], sink: &mut dyn FnMut(&Path, &Finding)) -> (Vec<PathBuf>, u64) {
    let mut refused = 0;
    let roots = crate::fs::roots::distinct_roots(roots)
        .into_iter()
        .filter(|root| match std::fs::metadata(root) {
            Ok(meta) if !meta.is_dir() && !meta.is_file() => {
                sink(root, &Finding::Failed("not a regular file".into()));
                refused += 1;
                false
            }
            _ => true,
        })
        .collect();
    (roots, refused)
}
