//! Directory digests (docs/DIRECTORY-DIGEST.md, version 1): each
//! directory's digest is the hash of its entries in walk order (kind,
//! name, and the file's digest, the link target's, or the subdirectory's),
//! so one digest stands for a whole tree. Computed as a run's records
//! stream by (`DirectoryDigests`, a [`Sink`] in front of another;
//! [`TreeHasher::run_with_directory_digests`](crate::pipeline::TreeHasher::run_with_directory_digests)):
//! the run walks in sorted order with [`crate::walk::WalkOptions::directories`]
//! set, and each directory's digest is handed on as a record of its own
//! ([`Outcome::Directory`] with the digest) right after its last entry.
//!
//! Nothing is answered for bytes that were not read: a directory with an
//! entry that could not be read or walked gets no digest, nor do those
//! above it (the root's record then says why).
//!
//! ```
//! use fastsum::{Algorithm, Outcome, Source, TreeHasher};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir(dir.path().join("sub")).unwrap();
//! std::fs::write(dir.path().join("sub/a"), b"abc").unwrap();
//! let roots = vec![Source::Path(dir.path().to_path_buf())];
//! let mut digests = Vec::new();
//! TreeHasher::new(Algorithm::Sha256)
//!     .recursive(true)
//!     .run_with_directory_digests(&roots, None, |record: fastsum::Record| {
//!         if let Outcome::Directory(Some(d)) = record.outcome {
//!             digests.push(d);
//!         }
//!     })
//!     .unwrap();
//! assert_eq!(digests.len(), 2); // sub/, then the root
//! ```

mod prune;

use std::path::PathBuf;

pub use prune::Offers;
use prune::Pruner;

use crate::algo::{Algorithm, Hasher};
use crate::digest::Digest;
use crate::error::ErrorKind;
use crate::fs::name;
use crate::pipeline::{Outcome, Record, Sink};
use crate::stage::Source;
use crate::walk::SpecialKind;

/// What every directory's hashed input starts with: the specification's
/// name and version.
pub(crate) const HEADER: &[u8] = b"fastsum directory 1\0";

/// An entry's kind as the specification writes it (one byte).
fn kind_byte(kind: SpecialKind) -> u8 {
    match kind {
        SpecialKind::Symlink => b'l',
        SpecialKind::Fifo => b'p',
        SpecialKind::Socket => b's',
        SpecialKind::CharDevice => b'c',
        SpecialKind::BlockDevice => b'b',
    }
}

impl Algorithm {
    /// Why this algorithm cannot make directory digests, if it cannot:
    /// the old checksums (cksum, sum, crc32b) carry a length beside their
    /// value and are not hashes; S3's digests of parts are of one object.
    pub fn directory_digest_refusal(self) -> Option<String> {
        (self.is_legacy() || self.part_layout().is_some()).then(|| {
            format!("{self} is a checksum, not a hash: directory digests need a hash algorithm")
        })
    }
}

/// A directory open on the way down: its entries absorbed so far.
struct Frame {
    /// Its path as records spell it, with a separator after it.
    prefix: Vec<u8>,
    /// Its name in its parent (empty for the root).
    name: Vec<u8>,
    hasher: Hasher,
    /// An entry below could not be read: no digest.
    broken: bool,
}

impl Frame {
    fn new(algorithm: Algorithm, path: &[u8], name: Vec<u8>) -> Frame {
        let mut prefix = path.to_vec();
        if !prefix.last().is_some_and(|&b| name::is_separator(b)) {
            prefix.push(name::SEPARATOR);
        }
        let mut hasher = Hasher::new(algorithm);
        hasher.update(HEADER);
        Frame {
            prefix,
            name,
            hasher,
            broken: false,
        }
    }

    /// One entry: `KIND SP NAME NUL DIGEST`.
    fn add(&mut self, kind: u8, name: &[u8], digest: &Digest) {
        self.hasher.update(&[kind, b' ']);
        self.hasher.update(name);
        self.hasher.update(&[0]);
        self.hasher.update(digest.as_bytes());
    }
}

/// The [`Sink`] that computes directory digests from a run's records and
/// hands every record on to `inner`, each directory's digest as a record
/// of its own after its entries (post-order: `sub/` before the root).
pub(crate) struct DirectoryDigests<S: Sink> {
    algorithm: Algorithm,
    /// Each operand of the run, `Some` (its path) when it is a directory.
    roots: Vec<Option<Vec<u8>>>,
    /// The operand the records are at.
    operand: usize,
    stack: Vec<Frame>,
    seq: u64,
    inner: S,
}

impl<S: Sink> DirectoryDigests<S> {
    /// Digests of the directories among `operands` (the run's, in order)
    /// and below them, in `algorithm`; `Err` says why the algorithm
    /// cannot ([`Algorithm::directory_digest_refusal`]).
    pub fn new(algorithm: Algorithm, operands: &[Source], inner: S) -> Result<Self, String> {
        if let Some(why) = algorithm.directory_digest_refusal() {
            return Err(why);
        }
        let roots = operands
            .iter()
            .map(|operand| match operand {
                Source::Path(p) if p.is_dir() => Some(name::path_bytes(p).to_vec()),
                _ => None,
            })
            .collect();
        Ok(DirectoryDigests {
            algorithm,
            roots,
            operand: 0,
            stack: Vec::new(),
            seq: 0,
            inner,
        })
    }

    /// Closes what is still open: the last operands' directories (an
    /// empty directory operand has no record to open it). Call it after
    /// the run.
    pub fn finish(&mut self) -> &mut S {
        self.advance_to(self.roots.len());
        &mut self.inner
    }

    /// Closes every operand before `operand` (each directory root opened,
    /// if no record did, and closed), then opens `operand`'s root.
    fn advance_to(&mut self, operand: usize) {
        while self.operand < operand.min(self.roots.len()) {
            self.open_root();
            while !self.stack.is_empty() {
                self.close();
            }
            self.operand += 1;
        }
        if operand < self.roots.len() {
            self.open_root();
        }
    }

    fn open_root(&mut self) {
        if let (true, Some(Some(root))) = (self.stack.is_empty(), self.roots.get(self.operand)) {
            if !root.is_empty() {
                let frame = Frame::new(self.algorithm, &root.clone(), Vec::new());
                self.stack.push(frame);
                // Opened once: a later call for the same operand finds it
                // closed and leaves it so.
                self.roots[self.operand] = Some(Vec::new());
            }
        }
    }

    /// The directory on top is complete: its digest goes into its parent
    /// and out as a record (a broken one marks its parent broken; the
    /// root's record then says why it has none).
    fn close(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        let digest = frame.hasher.digest();
        let mut path = frame.prefix;
        let outcome = match (frame.broken, self.stack.last_mut()) {
            (true, Some(parent)) => {
                parent.broken = true;
                return;
            }
            (true, None) => Outcome::Failed(ErrorKind::Io(std::io::Error::other(
                "no directory digest: something below it could not be read",
            ))),
            (false, parent) => {
                if let Some(parent) = parent {
                    parent.add(b'd', &frame.name, &digest);
                }
                Outcome::Directory(Some(digest))
            }
        };
        if let Outcome::Failed(_) = outcome {
            path.pop(); // a message names the directory as given
        }
        self.inner.record(Record {
            operand: self.operand,
            seq: self.seq,
            path: name::path_buf(path),
            outcome,
        });
    }

    /// Takes `record` into the directory it is in (closing those it is
    /// not in); returns it as it goes on (a link whose target could not
    /// be read becomes that failure).
    fn absorb(&mut self, mut record: Record) -> Record {
        let path = name::path_bytes(&record.path).to_vec();
        while let Some(top) = self.stack.last() {
            if path.len() > top.prefix.len() && path.starts_with(&top.prefix) {
                break;
            }
            self.close();
        }
        let Some(top) = self.stack.last_mut() else {
            return record; // an operand that is not a directory
        };
        let entry = path[top.prefix.len()..].to_vec();
        if entry.iter().any(|&b| name::is_separator(b)) {
            // Deeper than a directory the walk reported: never in a
            // sorted walk, and never taken as a complete listing.
            top.broken = true;
            return record;
        }
        match &record.outcome {
            Outcome::Hashed(h) => top.add(b'f', &entry, &h.digest),
            Outcome::Directory(None) => {
                let frame = Frame::new(self.algorithm, &path, entry);
                self.stack.push(frame);
            }
            Outcome::Skipped(SpecialKind::Symlink) => match std::fs::read_link(&record.path) {
                Ok(target) => {
                    let target = self.algorithm.hash_bytes(name::path_bytes(&target));
                    top.add(b'l', &entry, &target);
                }
                Err(e) => {
                    self.stack.iter_mut().for_each(|f| f.broken = true);
                    record.outcome = Outcome::Failed(ErrorKind::Io(e));
                }
            },
            Outcome::Skipped(kind) => {
                let empty = self.algorithm.hash_bytes(b"");
                top.add(kind_byte(*kind), &entry, &empty);
            }
            Outcome::Failed(_) | Outcome::WalkFailed(_) | Outcome::Directory(Some(_)) => {
                self.stack.iter_mut().for_each(|f| f.broken = true);
            }
        }
        record
    }
}

impl<S: Sink> Sink for &mut DirectoryDigests<S> {
    fn record(&mut self, record: Record) {
        self.seq = record.seq;
        self.advance_to(record.operand);
        // An unreadable root is reported at the root's own path.
        if let (Outcome::WalkFailed(_), Some(top)) = (&record.outcome, self.stack.last_mut()) {
            top.broken = true;
        }
        let record = self.absorb(record);
        self.inner.record(record);
    }

    fn idle(&mut self) {
        self.inner.idle();
    }
}

impl crate::pipeline::TreeHasher {
    /// This hasher walking as directory digests need: sorted, with a
    /// record for each directory (the digests follow the sorted walk).
    pub(crate) fn walking_directories(self) -> Self {
        let mut walk = self.options().walk.clone();
        walk.directories = true;
        self.order(crate::pipeline::Order::Sorted).walk(walk)
    }

    /// The directory digests of the tree at `root` through this run (its
    /// algorithm, cache and progress; it is set to walk sorted, with
    /// directories): `found` gets each directory's path (ending in a
    /// separator) and digest as it is complete, `problem` each path that
    /// could not be read and why. Returns the root's digest (a file's own
    /// when `root` is a file), `None` when anything could not be read.
    /// `Err`: the algorithm cannot make directory digests, the run could
    /// not start, or `root` is on a generated file system.
    pub fn tree_digests(
        self,
        root: PathBuf,
        found: &mut dyn FnMut(&std::path::Path, &Digest),
        problem: &mut dyn FnMut(PathBuf, String),
    ) -> std::result::Result<Option<Digest>, String> {
        // A generated file system (/proc, /sys, cgroupfs) is never walked
        // for a digest: `/proc/self/pagemap` reads without end (51.18).
        if let Ok(meta) = std::fs::metadata(&root) {
            if crate::fs::generated(crate::fs::FileStamp::of(&meta).dev) {
                return Err("a generated file system (as /proc or /sys): not walked".into());
            }
        }
        let mut walk = self.options().walk.clone();
        walk.refuse_generated = true;
        let hasher = self.walk(walk).recursive(true).walking_directories();
        let algorithm = hasher.algorithm();
        let operands = [Source::Path(root)];
        // The root's record comes last (post-order): the last digest seen.
        let mut answer = None;
        let mut failed = false;
        let sink = |record: Record| match record.outcome {
            Outcome::Directory(Some(d)) => {
                found(&record.path, &d);
                answer = Some(d);
            }
            Outcome::Hashed(h) => answer = Some(h.digest),
            Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
                failed = true;
                problem(record.path, kind.to_string());
            }
            _ => {}
        };
        let mut digests = DirectoryDigests::new(algorithm, &operands, sink)?;
        hasher
            .run_into(&operands, &mut digests)
            .map_err(|e| e.to_string())?;
        digests.finish();
        drop(digests);
        Ok(answer.filter(|_| !failed))
    }

    /// [`run_into`](crate::pipeline::TreeHasher::run_into) with directory
    /// digests: `sink` gets every record and, after a directory's last
    /// entry, the directory's own ([`Outcome::Directory`] with its digest;
    /// post-order, `sub/` before the root). The run is walked sorted, with
    /// directories, whatever this hasher was set to (the digests follow
    /// the sorted walk). With `offers` (a receiver's digests, for a run
    /// over one directory; [`Offers`]), each directory whose digest is
    /// offered is left out with all below it; a run over anything but one
    /// directory is then an ordinary one. `Err`: the algorithm cannot make
    /// directory digests, or the run could not start.
    pub fn run_with_directory_digests(
        &self,
        operands: &[Source],
        offers: Option<&Offers>,
        sink: impl Sink,
    ) -> crate::error::Result<()> {
        let hasher = self.clone().walking_directories();
        let refused = |why: String| crate::error::Error::new(std::io::Error::other(why));
        match (offers, operands) {
            (None, _) => {
                let mut digests =
                    DirectoryDigests::new(hasher.algorithm(), operands, sink).map_err(refused)?;
                let result = hasher.run_into(operands, &mut digests);
                digests.finish();
                result
            }
            (Some(offers), [Source::Path(root)]) => {
                let mut pruner = Pruner::new(offers.clone(), root, sink);
                let mut digests = DirectoryDigests::new(hasher.algorithm(), operands, &mut pruner)
                    .map_err(refused)?;
                let result = hasher.run_into(operands, &mut digests);
                digests.finish();
                drop(digests);
                pruner.finish();
                result
            }
            (Some(_), _) => self.run_into(operands, sink),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{TreeHasher, TreeOptions};

    /// Every directory digest of a run over `operands`, as (path, hex),
    /// and the failures' paths.
    fn run(operands: &[Source]) -> (Vec<(String, String)>, Vec<String>) {
        let mut options = TreeOptions::new();
        options.recursive = true;
        options.walk.directories = true;
        let (mut digests, mut failures) = (Vec::new(), Vec::new());
        let sink = |record: Record| {
            let path = record.path.display().to_string();
            match record.outcome {
                Outcome::Directory(Some(d)) => digests.push((path, d.to_hex())),
                Outcome::Failed(_) | Outcome::WalkFailed(_) => failures.push(path),
                _ => {}
            }
        };
        let mut sink = DirectoryDigests::new(Algorithm::Md5, operands, sink).unwrap();
        TreeHasher::with_options(Algorithm::Md5, options)
            .run_into(operands, &mut sink)
            .unwrap();
        sink.finish();
        drop(sink);
        (digests, failures)
    }

    #[test]
    fn empty_directories_files_and_several_operands_each_get_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let p = |name: &str| dir.path().join(name);
        for d in ["e1", "e2", "full/sub"] {
            std::fs::create_dir_all(p(d)).unwrap();
        }
        std::fs::write(p("file"), b"x").unwrap();
        std::fs::write(p("full/sub/a"), b"a").unwrap();
        let ops: Vec<Source> = ["e1", "file", "full", "e2"]
            .map(|n| Source::Path(p(n)))
            .to_vec();
        let (digests, failures) = run(&ops);
        let empty = Algorithm::Md5.hash_bytes(HEADER).to_hex();
        let names: Vec<String> = digests
            .iter()
            .map(|(path, _)| {
                path.strip_prefix(&dir.path().display().to_string())
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["/e1/", "/full/sub/", "/full/", "/e2/"]);
        assert_eq!((&digests[0].1, &digests[3].1), (&empty, &empty));
        assert!(failures.is_empty());
        // Records for a file operand pass through, no directory record.
        assert_eq!(run(&[Source::Path(p("file"))]).0, []);
    }

    #[test]
    fn a_failure_takes_the_digests_above_it_and_no_others() {
        // Records as a walk would send them: t/ok/ complete, t/bad/ with
        // a file that could not be read.
        let root = PathBuf::from("t");
        let record = |seq, path: &str, outcome| Record {
            operand: 0,
            seq,
            path: PathBuf::from(path),
            outcome,
        };
        let hashed =
            |d: &[u8]| Outcome::Hashed(crate::stage::Hashed::new(Algorithm::Md5.hash_bytes(d), 1));
        let io = || Outcome::Failed(ErrorKind::Io(std::io::Error::other("bad")));
        let mut got = Vec::new();
        let mut sink = DirectoryDigests {
            algorithm: Algorithm::Md5,
            roots: vec![Some(crate::fs::name::path_bytes(&root).to_vec())],
            operand: 0,
            stack: Vec::new(),
            seq: 0,
            inner: |r: Record| got.push((r.path.display().to_string(), r.outcome)),
        };
        for r in [
            record(0, "t/bad", Outcome::Directory(None)),
            record(1, "t/bad/x", io()),
            record(2, "t/bad/y", hashed(b"y")),
            record(3, "t/ok", Outcome::Directory(None)),
            record(4, "t/ok/z", hashed(b"z")),
        ] {
            (&mut sink).record(r);
        }
        sink.finish();
        drop(sink);
        let shown: Vec<String> = got
            .iter()
            .map(|(path, outcome)| match outcome {
                Outcome::Directory(Some(_)) => format!("{path} digest"),
                Outcome::Failed(e) => format!("{path} failed: {e}"),
                _ => path.clone(),
            })
            .collect();
        assert_eq!(
            shown,
            [
                "t/bad",
                "t/bad/x failed: bad",
                "t/bad/y",
                "t/ok",
                "t/ok/z",
                "t/ok/ digest",
                "t failed: no directory digest: something below it could not be read",
            ]
        );
    }
}
