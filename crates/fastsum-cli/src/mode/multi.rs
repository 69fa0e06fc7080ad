//! Several digests from one read: `fastsum -a md5 -a sha256 [-r] FILE...`
//! (as rhash and hashdeep do). Each file is read once, so that a record's
//! digests all describe the same bytes: a small one into a buffer every
//! algorithm absorbs, a large one in blocks handed to one thread per
//! algorithm, so two digests cost about the slower one's time, not the sum. Output: one BSD-tagged
//! line per algorithm and file (as `cksum -a` writes them, so `-c` checks
//! them all), or one JSON record per file with a `digests` object (with
//! `--stamps`, the file's stamp beside them). `--update` of such a list
//! hashes here, each unchanged file's digests taken from the list's
//! stamps where it has them.

use std::fs::File;
use std::io::{self, Read};
use std::sync::mpsc::{self, SyncSender};
use std::sync::Arc;

use fastsum::walk::{SpecialKind, WalkItem};
use fastsum::{Algorithm, Digest, ErrorKind, FileStamp, Hasher};
use rayon::prelude::*;

use crate::mode::options::Options;
use crate::mode::run::Run;

/// Files hashed together (in parallel), then printed in order.
const BATCH: usize = 256;
/// Files at least this large get a thread per algorithm.
const THREADED_FROM: u64 = 8 << 20;

/// One input: its name as printed, and where its bytes come from.
enum Input {
    File(Vec<u8>),
    Stdin,
}

/// Hashes every operand (walked with `-r`) with every algorithm of `o`;
/// false if anything failed.
pub(super) fn hash_operands(run: &mut Run, o: &Options, names: &[Vec<u8>]) -> bool {
    let mut ok = true;
    let mut inputs: Vec<Input> = Vec::new();
    let mut symlinks = 0u64;
    for name in names {
        let path = fastsum::name::path(name).into_owned();
        if crate::mode::remote::elsewhere(run, o, name) {
            // Never read as a local file named `s3:` or `host:` (it would
            // say "No such file", about the wrong thing).
            ok = false;
            run.file_error(
                name,
                "more than one -a is not available for s3:// and HOST:PATH operands",
            );
        } else if name == b"-" {
            inputs.push(Input::Stdin);
        } else if o.tree.recursive && path.is_dir() {
            let walked = o.tree.walk.walk_sorted(&path, &mut |item| match item {
                // The list being updated is never one of its own entries.
                WalkItem::File { path, .. } if is_own_file(o, &path) => {}
                WalkItem::File { path, .. } => {
                    inputs.push(Input::File(fastsum::name::path_bytes(&path).to_vec()))
                }
                WalkItem::Special {
                    kind: SpecialKind::Symlink,
                    ..
                } => symlinks += 1,
                WalkItem::Special { path, kind } => {
                    let name = fastsum::name::path_bytes(&path).to_vec();
                    run.file_error(
                        &name,
                        &format!("skipped {} (not a regular file)", kind.describe()),
                    );
                }
                WalkItem::Directory { .. } => {}
                WalkItem::Error(e) => {
                    ok = false;
                    let name = fastsum::name::path_bytes(e.path().unwrap_or(&path)).to_vec();
                    run.file_error(&name, &e.kind().to_string());
                }
            });
            if let Err(e) = walked {
                ok = false;
                run.file_error(name, &e.kind().to_string());
            }
        } else {
            inputs.push(Input::File(name.clone()));
        }
        // Printed as they are done, a batch at a time.
        for batch in inputs.chunks(BATCH) {
            let results: Vec<_> = batch.par_iter().map(|input| digests_of(input, o)).collect();
            for (input, result) in batch.iter().zip(results) {
                ok &= print(run, o, input, result);
            }
        }
        inputs.clear();
    }
    if symlinks > 0 {
        let what = crate::term::count(symlinks, "symbolic link", "symbolic links");
        run.notice(format!("{what} left out (-L follows them)").as_bytes());
    }
    ok
}

/// Whether `path` is the list `--update` rewrites (or its temporary file).
fn is_own_file(o: &Options, path: &std::path::Path) -> bool {
    o.update
        .as_ref()
        .is_some_and(|update| crate::mode::own_files::is_own_file(update, path))
}

/// One input's digests (each algorithm's), its size, and its stamp where
/// it was the same before and after the read.
struct Hashed {
    digests: Vec<Digest>,
    size: u64,
    stamp: Option<FileStamp>,
}

/// The digests of one input with each algorithm of `o`: from the list
/// being updated when its stamps say the file is the one listed, else
/// read.
fn digests_of(input: &Input, o: &Options) -> Result<Hashed, ErrorKind> {
    let algorithms = o.algorithms.all();
    let name = match input {
        Input::Stdin => {
            let (digests, size) =
                read_all(io::stdin().lock(), algorithms).map_err(ErrorKind::Io)?;
            return Ok(Hashed {
                digests,
                size,
                stamp: None,
            });
        }
        Input::File(name) => name,
    };
    let path = fastsum::name::path(name);
    let file = File::open(&*path).map_err(ErrorKind::Io)?;
    let meta = file.metadata().map_err(ErrorKind::Io)?;
    let before = FileStamp::of(&meta);
    let listed = o
        .several_answers
        .as_ref()
        .and_then(|a| a.answer(&path, &before));
    if let Some(digests) = listed {
        let digests = digests.to_vec();
        return Ok(Hashed {
            digests,
            size: before.size,
            stamp: Some(before),
        });
    }
    let (digests, size) =
        match meta.is_file() && meta.len() >= THREADED_FROM && algorithms.len() > 1 {
            true => hash_threaded(&file, algorithms)?,
            false => read_all(&file, algorithms).map_err(ErrorKind::Io)?,
        };
    let after = file.metadata().map(|m| FileStamp::of(&m)).ok();
    // A verified read, as one algorithm's is (fastsum's own mode): a file
    // that changed while read gets no digest. Every digest here is of the
    // one read, but that read can straddle a write (a torn state the file
    // never held: the several -a path printed and listed such digests,
    // exit 0).
    let held = after.is_some_and(|after| before.vouches_for_read(&after, size));
    if o.tree.verify && !held {
        return Err(ErrorKind::ChangedWhileReading);
    }
    let stamp = (meta.is_file() && after == Some(before)).then_some(before);
    Ok(Hashed {
        digests,
        size,
        stamp,
    })
}

/// Reads `reader` to its end, each buffer absorbed by every algorithm in
/// turn (small files: the batch's parallelism is across files).
fn read_all(mut reader: impl Read, algorithms: &[Algorithm]) -> io::Result<(Vec<Digest>, u64)> {
    let mut hashers: Vec<Hasher> = algorithms.iter().map(|&a| Hasher::new(a)).collect();
    let mut buffer = vec![0u8; 256 << 10];
    let mut total = 0u64;
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                for h in &mut hashers {
                    h.update(&buffer[..n]);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((hashers.iter().map(Hasher::digest).collect(), total))
}

/// A large file hashed by one thread per algorithm from ONE read of its
/// bytes: this thread reads blocks and hands each to every algorithm's
/// thread, so that every digest of a record describes the same bytes even
/// while another process writes the file (one read per algorithm gave an
/// MD5 of one content and a SHA-256 of another in one record, exit 0).
/// The slowest algorithm sets the pace; a thread that cannot be started
/// leaves the file to [`read_all`], on this thread alone.
fn hash_threaded(
    mut file: impl Read,
    algorithms: &[Algorithm],
) -> Result<(Vec<Digest>, u64), ErrorKind> {
    std::thread::scope(|scope| {
        let mut senders = Vec::with_capacity(algorithms.len());
        let mut threads = Vec::with_capacity(algorithms.len());
        for &algorithm in algorithms {
            let (sender, blocks) = mpsc::sync_channel::<Arc<Vec<u8>>>(BLOCKS_AHEAD);
            let spawned = std::thread::Builder::new().spawn_scoped(scope, move || {
                let mut hasher = Hasher::new(algorithm);
                for block in blocks {
                    hasher.update(&block);
                }
                hasher.digest()
            });
            match spawned {
                Ok(thread) => {
                    senders.push(sender);
                    threads.push(thread);
                }
                // Nothing read yet: the file is read on this thread.
                Err(_) => {
                    drop(senders);
                    return read_all(&mut file, algorithms).map_err(ErrorKind::Io);
                }
            }
        }
        let read = broadcast(&mut file, &senders);
        drop(senders);
        let digests = threads
            .into_iter()
            .map(|t| t.join().expect("a hashing thread does not panic"))
            .collect();
        read.map(|size| (digests, size))
    })
}

/// Blocks a large file is read in, and how many of them an algorithm's
/// thread may lag behind the reading (memory: about
/// `(BLOCKS_AHEAD + 2) * BLOCK` whatever the file's size).
const BLOCK: usize = 4 << 20;
const BLOCKS_AHEAD: usize = 4;

/// Reads `reader` to its end, each block once, sent to every receiver;
/// the number of bytes read. A block memory cannot hold is an error.
fn broadcast(
    mut reader: impl Read,
    receivers: &[SyncSender<Arc<Vec<u8>>>],
) -> Result<u64, ErrorKind> {
    let mut total = 0u64;
    loop {
        let mut block = Vec::new();
        block
            .try_reserve_exact(BLOCK)
            .map_err(|_| ErrorKind::Io(io::Error::from(io::ErrorKind::OutOfMemory)))?;
        let n = (&mut reader)
            .take(BLOCK as u64)
            .read_to_end(&mut block)
            .map_err(ErrorKind::Io)?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
        let block = Arc::new(block);
        for receiver in receivers {
            // A receiver gone is a thread that ended: its join says why.
            let _ = receiver.send(Arc::clone(&block));
        }
    }
}

/// One input's lines (or JSON record), or its error; false for an error.
fn print(run: &mut Run, o: &Options, input: &Input, result: Result<Hashed, ErrorKind>) -> bool {
    let name: &[u8] = match input {
        Input::File(name) => name,
        Input::Stdin => b"-",
    };
    let read = match result {
        Ok(done) => done,
        Err(kind) => {
            run.hashing_error(name, &kind);
            return false;
        }
    };
    if let Some(written) = &mut run.written {
        written.push(name, read.size, &read.digests);
    }
    // The renderer's format: hashdeep's line, a JSON record, or tagged
    // lines (the algorithms were checked when the options were resolved).
    let digests: Vec<(Algorithm, Digest)> = o
        .algorithms
        .all()
        .iter()
        .copied()
        .zip(read.digests)
        .collect();
    let (size, stamp) = (read.size, read.stamp.as_ref());
    let out = run.out.stdout_buf();
    if let Err(why) = o
        .renderer
        .render_digests_stamped(name, size, &digests, stamp, out)
    {
        run.file_error(name, why);
        return false;
    }
    run.out.commit();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader whose bytes differ at every read (as a file written while
    /// read does), keeping what it handed out.
    struct Moving {
        left: usize,
        turn: u8,
        given: Vec<u8>,
    }

    impl Read for &mut Moving {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.left).min(1 << 20 | self.turn as usize);
            self.turn = self.turn.wrapping_add(1);
            buf[..n].fill(self.turn);
            self.given.extend_from_slice(&buf[..n]);
            self.left -= n;
            Ok(n)
        }
    }

    /// Every algorithm's digest is the digest of the bytes read once.
    #[test]
    fn every_digest_is_of_the_one_read() {
        let algorithms = [Algorithm::Md5, Algorithm::Sha256, Algorithm::Blake3];
        let mut moving = Moving {
            left: 3 * BLOCK + 12_345,
            turn: 0,
            given: Vec::new(),
        };
        let (digests, size) = hash_threaded(&mut moving, &algorithms).unwrap();
        assert_eq!(size, moving.given.len() as u64);
        assert_eq!(size, 3 * BLOCK as u64 + 12_345);
        for (algorithm, digest) in algorithms.iter().zip(digests) {
            let mut one = Hasher::new(*algorithm);
            one.update(&moving.given);
            assert_eq!(digest, one.digest(), "{algorithm:?}");
        }
    }
}
