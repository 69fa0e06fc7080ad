//! The cache as a pipeline stage, in front of any other stage.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::dir_entries::DirEntries;
use super::session::{absolute_in, CacheSession, MAX_REREADS};
use crate::error::ErrorKind;
use crate::fs::dir::DirectoryCursor;
use crate::fs::FsIds;
use crate::stage::{BatchHasher, Hashed, Job, Source, StageResult};

/// The hashing stage with the cache in front: one per worker, over the
/// shared [`CacheSession`]. A hit answers without a read; a miss goes to
/// the `inner` stage with its read verified (see [`crate::stage`]), and a
/// verified result is remembered under the stamp the inner stage saw. A
/// file that changed while it was read goes through the inner stage again,
/// up to [`MAX_REREADS`] times, then fails as changed. Standard input, which
/// has no identity to cache, goes straight to the inner stage.
///
/// A batch's files mostly share a directory (the walk sends a directory's
/// files together), so the worker keeps that directory open and stats each
/// file relative to it (`fstatat`): on a cached re-run the stats are nearly
/// all the work, and a full path lookup per file was a third of it.
pub struct CachingBatchHasher<B: BatchHasher> {
    session: Arc<CacheSession>,
    inner: B,
    directory: DirectoryCursor,
    /// The cursor's directory as the cache knows it, and the row last
    /// looked up in it.
    known_directory: Option<KnownDirectory>,
    /// Re-reads so far of the jobs that changed while read, by `seq`.
    rereads: HashMap<u64, u32>,
    /// The file systems met, by device: asked once a run.
    fs_ids: FsIds,
}

/// A directory the worker looks names up in.
struct KnownDirectory {
    /// As spelled.
    spelled: PathBuf,
    /// The cache's key for it: absolute.
    absolute: PathBuf,
    /// The row last looked up: most names that follow are in its range.
    row: Option<Arc<DirEntries>>,
}

/// What the cache says of a path.
enum Looked {
    /// Answered without a read.
    Hit(Hashed),
    /// To be read, verified, and remembered.
    Miss,
    /// To be read as it is and never remembered: a file whose size says
    /// nothing of its bytes (size 0 with content, a `/proc` or `/sys`
    /// file generated as it is read) or whose stamp never vouches for them
    /// (tmpfs, ramfs: never written back).
    Uncacheable,
}

impl<B: BatchHasher> CachingBatchHasher<B> {
    /// A worker's stage over the shared `session`, reading misses with
    /// `inner`, a stage of the session's algorithm ([`crate::TreeHasher::cache`]
    /// refuses a session of another).
    pub fn new(session: Arc<CacheSession>, inner: B) -> Self {
        CachingBatchHasher {
            session,
            inner,
            directory: DirectoryCursor::new(),
            known_directory: None,
            rereads: HashMap::new(),
            fs_ids: FsIds::default(),
        }
    }

    /// The stat (relative to the open directory) and the lookup.
    fn look_up(&mut self, path: &Path) -> Result<Looked, ErrorKind> {
        let stamp = self.directory.stat(path)?;
        if !stamp.is_file() {
            return Ok(Looked::Miss);
        }
        if stamp.size == 0 || crate::fs::stamps_unreliable(stamp.dev) {
            return Ok(Looked::Uncacheable);
        }
        let fs = self.fs_ids.of(stamp.dev, path);
        let (Some(directory), Some(name)) = (self.directory.directory(), path.file_name()) else {
            let absolute = absolute_in(&self.session.cwd, path);
            return Ok(match self.session.snapshot.lookup(&absolute, &stamp, fs) {
                Some(digest) => Looked::Hit(self.session.hit(digest, stamp)),
                None => Looked::Miss,
            });
        };
        let known = self.known_directory.as_ref().is_some_and(|d| {
            d.spelled.as_os_str().as_encoded_bytes() == directory.as_os_str().as_encoded_bytes()
        });
        if !known {
            self.known_directory = Some(KnownDirectory {
                spelled: directory.to_path_buf(),
                absolute: absolute_in(&self.session.cwd, directory),
                row: None,
            });
        }
        let known = self.known_directory.as_mut().expect("just set");
        let name = name.as_encoded_bytes();
        if !known.row.as_ref().is_some_and(|row| row.covers(name)) {
            let dir = known.absolute.as_os_str().as_encoded_bytes();
            known.row = self.session.snapshot.row_holding(dir, name);
        }
        let digest = (known.row.as_ref())
            .and_then(|row| row.get(name))
            .and_then(|entry| entry.answer_for(&stamp, fs));
        Ok(match digest {
            Some(digest) => Looked::Hit(self.session.hit(digest, stamp)),
            None => Looked::Miss,
        })
    }

    /// Hands `misses` (or, with `None`, what is in flight) to the inner
    /// stage, then again whatever changed while it was read, until nothing
    /// is left to re-read.
    fn read_misses(
        &mut self,
        mut misses: Option<&mut Vec<Job>>,
        done: &mut dyn FnMut(Job, StageResult),
    ) {
        let CachingBatchHasher {
            session,
            inner,
            rereads,
            fs_ids,
            ..
        } = self;
        let mut again: Vec<Job> = Vec::new();
        loop {
            let mut retry = std::mem::take(&mut again);
            let batch = misses.take();
            let mut relay = |job: Job, result: StageResult| {
                let Source::Path(path) = &job.source else {
                    return done(job, result);
                };
                match result {
                    Err(ErrorKind::ChangedWhileReading) if job.verify => {
                        let count = rereads.entry(job.seq).or_insert(0);
                        if *count < MAX_REREADS {
                            *count += 1;
                            session.note_reread();
                            again.push(job);
                            return;
                        }
                        rereads.remove(&job.seq);
                        done(job, Err(ErrorKind::ChangedWhileReading));
                    }
                    Ok(hashed) => {
                        rereads.remove(&job.seq);
                        session.note_read(path, &hashed, fs_ids);
                        done(job, Ok(hashed));
                    }
                    Err(e) => {
                        rereads.remove(&job.seq);
                        done(job, Err(e));
                    }
                }
            };
            match batch {
                Some(batch) => inner.hash_batch(batch, &mut relay),
                None if retry.is_empty() => inner.flush(&mut relay),
                None => {
                    inner.hash_batch(&mut retry, &mut relay);
                    // Re-reads are rare: finish them now rather than carry
                    // them in flight.
                    inner.flush(&mut relay);
                }
            }
            if again.is_empty() {
                return;
            }
        }
    }
}

impl<B: BatchHasher> BatchHasher for CachingBatchHasher<B> {
    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }

    fn hash_batch(&mut self, batch: &mut Vec<Job>, done: &mut dyn FnMut(Job, StageResult)) {
        let mut misses = Vec::with_capacity(batch.len());
        for mut job in batch.drain(..) {
            let Source::Path(path) = &job.source else {
                misses.push(job);
                continue;
            };
            match self.look_up(path) {
                Ok(Looked::Hit(hashed)) => done(job, Ok(hashed)),
                Ok(Looked::Miss) => {
                    self.session.note_miss();
                    job.verify = true;
                    misses.push(job);
                }
                Ok(Looked::Uncacheable) => {
                    self.session.note_miss();
                    misses.push(job);
                }
                Err(e) => done(job, Err(e)),
            }
        }
        if !misses.is_empty() {
            self.read_misses(Some(&mut misses), done);
        }
    }

    fn in_flight(&self) -> bool {
        self.inner.in_flight()
    }

    fn flush(&mut self, done: &mut dyn FnMut(Job, StageResult)) {
        self.read_misses(None, done);
    }
}
