//! What the stages of `find_duplicates` carry between them: the files met,
//! the inodes still in the running, and the two helpers every stage uses
//! (an edge's hash, keeping what some other item equals).

use std::path::Path;

use crate::digest::Digest;
use crate::fs::dir::DirectoryCursor;
use crate::fs::FileStamp;
use crate::pipeline::{Order, TreeHasher, TreeOptions};
use crate::read::ReadStrategy;

/// Bytes hashed at each end of a file before whole files are: one page,
/// which the kernel reads in one go anyway. On the corpus's `dupes/`
/// (40,800 files, 1.1 GB) the ends cut 30,636 same-size candidates to
/// 12,353 for the whole-file stage. Measured against other lengths
/// (bench/results/BENCHMARKS-LOG.md, medians warm / cold): 4 KiB 0.216 / 1.452 s,
/// 16 KiB 0.209 / 1.429 s, 64 KiB 0.219 / 1.515 s; the corpus's traps
/// that share their first and last 64 KiB need whole files at any length.
pub(crate) const EDGE: u64 = 4096;

/// The whole-file stage reads (does not map) in blocks of this size: a
/// mapped window counts in the resident set, 8 MiB per worker, and on
/// `dupes/` fastsum's peak RSS was 47 MiB mapped against fclones's 18 MiB;
/// 64 KiB blocks stay in the core's cache.
pub(crate) const WHOLE_FILE_READS: usize = 64 * 1024;

/// Paths in one buffer, in the order they were met: a path each
/// (24 bytes of `PathBuf`, and an allocation of its own that the
/// allocator keeps once freed) was the bulk of a 3M-file run's memory
/// (836 MiB, where fclones took 826 MiB).
#[derive(Default)]
pub(crate) struct Paths {
    bytes: Vec<u8>,
    /// Where each path ends in `bytes`.
    ends: Vec<usize>,
}

impl Paths {
    pub(crate) fn push(&mut self, path: &Path) {
        self.bytes
            .extend_from_slice(path.as_os_str().as_encoded_bytes());
        self.ends.push(self.bytes.len());
    }

    /// Every path of `other`, after these.
    pub(crate) fn append(&mut self, other: Paths) {
        let base = self.bytes.len();
        self.bytes.extend_from_slice(&other.bytes);
        self.ends.extend(other.ends.iter().map(|e| e + base));
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Path `i` as bytes.
    pub(crate) fn bytes(&self, i: usize) -> &[u8] {
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1],
        };
        &self.bytes[start..self.ends[i]]
    }

    /// Path `i`.
    pub(crate) fn path(&self, i: usize) -> &Path {
        // SAFETY: the bytes are exactly what `as_encoded_bytes` gave for
        // one whole path in `push` (cut only where a path ends), on this
        // platform and in this process.
        Path::new(unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(self.bytes(i)) })
    }

    /// The indices of the paths in byte order.
    pub(crate) fn sorted(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| self.bytes(a as usize).cmp(self.bytes(b as usize)));
        order
    }
}

/// The files met and stat-ed, in path byte order: the paths as met, the
/// order of those kept, and their stamps.
#[derive(Default)]
pub(crate) struct Candidates {
    pub(crate) paths: Paths,
    /// Candidate `i` is path `order[i]`.
    pub(crate) order: Vec<u32>,
    pub(crate) stamps: Vec<FileStamp>,
}

impl Candidates {
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// The path of candidate `i`.
    pub(crate) fn path(&self, i: usize) -> &Path {
        self.paths.path(self.order[i] as usize)
    }

    /// Keeps only the candidates `keep` says, in order.
    pub(crate) fn retain(&mut self, keep: &[bool]) {
        let mut kept = 0;
        for (i, &k) in keep.iter().enumerate().take(self.len()) {
            if k {
                self.order[kept] = self.order[i];
                self.stamps[kept] = self.stamps[i];
                kept += 1;
            }
        }
        self.order.truncate(kept);
        self.stamps.truncate(kept);
    }

    /// The candidate whose path is `path` (they are in byte order).
    pub(super) fn find(&self, path: &Path) -> Option<usize> {
        let key = path.as_os_str().as_encoded_bytes();
        self.order
            .binary_search_by(|&p| self.paths.bytes(p as usize).cmp(key))
            .ok()
    }
}

/// Which end of a file.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edge {
    Prefix,
    Suffix,
}

/// No representative: the path is in no size group.
pub(super) const NONE: u32 = u32::MAX;

/// An inode still in the running, through the edge stages: 48 bytes, so
/// that 30,000 of them cost 1.4 MB.
#[derive(Clone, Copy)]
pub(super) struct Item {
    /// Its representative candidate (the inode's first path).
    pub(super) index: u32,
    /// Paths of this inode among the candidates (0: failed to read).
    pub(super) links: u32,
    pub(super) size: u64,
    /// XXH3-128 of the first [`EDGE`] bytes (the whole file if shorter).
    pub(super) prefix: u128,
    /// XXH3-128 of the last [`EDGE`] bytes (0 for a file no longer than
    /// an edge).
    pub(super) suffix: u128,
}

/// An inode with its whole-file digest.
#[derive(Clone, Copy)]
pub(super) struct Whole {
    pub(super) digest: Digest,
    pub(super) index: u32,
    pub(super) links: u32,
    pub(super) size: u64,
}

/// Paths of an inode among the candidates.
pub(super) trait Links {
    fn links(&self) -> u32;
}

impl Links for Item {
    fn links(&self) -> u32 {
        self.links
    }
}

impl Links for Whole {
    fn links(&self) -> u32 {
        self.links
    }
}

/// The one rule of every staged read (`dupes`, `contained`): a file chosen
/// by the stamp its stat stage took is read only as that version of it.
/// What was opened must be a regular file of the same identity, size and
/// times; anything else (a FIFO or a device put in its place, which would
/// be waited on or read forever, a rename over it, a write) is "changed
/// while reading", never a digest of other bytes under its name. Off Unix
/// a path's stat gives no identity (0): the open handle's is then not
/// compared.
pub(crate) fn is_version_of(read: &FileStamp, staged: &FileStamp) -> bool {
    let same_id = read.ino == 0 || staged.ino == 0 || read.id() == staged.id();
    let same_ctime = cfg!(not(unix)) || read.ctime_ns == staged.ctime_ns;
    read.is_file()
        && read.kind == staged.kind
        && read.size == staged.size
        && read.mtime_ns == staged.mtime_ns
        && same_id
        && same_ctime
}

/// The whole-file reader of the staged commands: the files in sorted
/// order, read (not mapped) in [`WHOLE_FILE_READS`] blocks, each opened
/// without waiting and refused unless it is a regular file (a listing's
/// files: a FIFO put in a file's place is never waited on), each read
/// verified (its record carries the stamp it was read under, which
/// [`read_as_staged`] holds to the staged one).
pub(crate) fn staged_hasher(algorithm: crate::Algorithm, threads: usize) -> TreeHasher {
    let mut options = TreeOptions::new();
    options.order = Order::Sorted;
    options.strategy = ReadStrategy::Read {
        buffer_size: WHOLE_FILE_READS,
    };
    options.threads = match threads {
        0 => TreeOptions::available_threads(),
        n => n,
    };
    options.listed = true;
    options.verify = true;
    TreeHasher::with_options(algorithm, options)
}

/// A [`staged_hasher`] record's digest, if it was read from the version
/// of the file `staged` names ([`is_version_of`]); else why not.
pub(crate) fn read_as_staged(
    hashed: &crate::stage::Hashed,
    staged: &FileStamp,
) -> std::result::Result<Digest, String> {
    match hashed.stamp {
        Some(read) if is_version_of(&read, staged) => Ok(hashed.digest),
        _ => Err(crate::error::ErrorKind::ChangedWhileReading.to_string()),
    }
}

/// The whole-file digests of `files` (each path with the stamp its stat
/// stage took), in that order, by `hasher` (a [`staged_hasher`], with the
/// cache or the progress bar its command gives it), each only as the
/// version its stamp names ([`read_as_staged`]); `None` for a file that
/// could not be so read, a problem. The one whole-file stage of `dupes`
/// and `contained`.
pub(crate) fn hash_as_staged(
    hasher: TreeHasher,
    files: Vec<(std::path::PathBuf, FileStamp)>,
    problems: &Problems,
) -> crate::error::Result<Vec<Option<Digest>>> {
    use crate::pipeline::Outcome;
    let mut hashed: Vec<Option<Digest>> = vec![None; files.len()];
    if files.is_empty() {
        return Ok(hashed);
    }
    let (paths, stamps): (Vec<_>, Vec<FileStamp>) = files.into_iter().unzip();
    let operands: Vec<crate::stage::Source> =
        paths.into_iter().map(crate::stage::Source::Path).collect();
    hasher.run(&operands, |record| match record.outcome {
        Outcome::Hashed(h) => match read_as_staged(&h, &stamps[record.operand]) {
            Ok(digest) => hashed[record.operand] = Some(digest),
            Err(why) => problems.add(&record.path, why),
        },
        Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
            problems.add(&record.path, kind.to_string())
        }
        Outcome::Skipped(_) | Outcome::Directory(_) => {
            problems.add(&record.path, "it is no longer a regular file".into())
        }
    })?;
    Ok(hashed)
}

/// What went wrong with a path, gathered from every thread (the staged
/// commands' problems).
#[derive(Default)]
pub(crate) struct Problems(std::sync::Mutex<Vec<super::Problem>>);

impl Problems {
    pub(crate) fn add(&self, path: &Path, error: String) {
        self.0.lock().expect("not poisoned").push(super::Problem {
            path: path.to_path_buf(),
            error,
        });
    }

    /// In path order (two of one path: in the order of their messages).
    pub(crate) fn sorted(self) -> Vec<super::Problem> {
        let mut problems = self.0.into_inner().expect("not poisoned");
        problems.sort_by(|a, b| a.path.cmp(&b.path).then(a.error.cmp(&b.error)));
        problems
    }
}

/// XXH3-128 of the first or last [`EDGE`] bytes (a file no longer than
/// that: the whole of it), opened relative to its directory, without
/// waiting, and only as the version `staged` names ([`is_version_of`]).
/// Fewer bytes than the stat promised is an error: a file no longer than
/// an edge is answered with this hash.
pub(crate) fn hash_edge(
    cursor: &mut DirectoryCursor,
    path: &Path,
    staged: &FileStamp,
    edge: Edge,
) -> std::result::Result<u128, String> {
    let file = open_as_staged(cursor, path, staged)?;
    let size = staged.size;
    let start = match edge {
        Edge::Prefix => 0,
        Edge::Suffix => size.saturating_sub(EDGE),
    };
    let want = (size - start).min(EDGE) as usize;
    let mut buffer = [0u8; EDGE as usize];
    read_exactly(&file, &mut buffer[..want], start)?;
    Ok(xxhash_rust::xxh3::xxh3_128(&buffer[..want]))
}

/// A file no longer than this is read whole by [`hash_ends`], in the one
/// open that takes its edges: a second open (and its `fstat` and
/// `close`) costs more than reading the bytes between them. On
/// `contained`'s corpus workload (10,000 files a side, median 4.8 KB,
/// `hyperfine -w2 -r15`, means): each edge and the whole file opened
/// apart 0.156 s; read whole up to 16 KiB 0.119 s, 64 KiB 0.107 s,
/// 256 KiB 0.098 s. 64 KiB, one block of the whole-file stage: past it
/// the gain is small, and same-size files that differ early would be
/// read further for nothing.
pub(crate) const WHOLE_IN_ENDS: u64 = 64 * 1024;

/// What one open of a file gives: XXH3-128 of its first and last
/// [`EDGE`] bytes, and of the whole file when it is no longer than
/// [`WHOLE_IN_ENDS`]. Which of these a file gets depends on its size
/// alone, so two files of one size are always compared alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ends {
    /// The first edge's hash; for a file read whole, the whole file's.
    pub(crate) prefix: u128,
    /// The last edge's hash; 0 for a file read whole.
    pub(crate) suffix: u128,
    /// The whole file's hash, for a file read whole.
    pub(crate) whole: Option<u128>,
}

/// Both ends of a file (or all of a short one) in one open, with
/// [`hash_edge`]'s rules: relative to its directory, without waiting,
/// only as the version `staged` names, fewer bytes than the stat
/// promised an error. `buffer` is the caller's, reused from file to file.
pub(crate) fn hash_ends(
    cursor: &mut DirectoryCursor,
    path: &Path,
    staged: &FileStamp,
    buffer: &mut Vec<u8>,
) -> std::result::Result<Ends, String> {
    let file = open_as_staged(cursor, path, staged)?;
    let size = staged.size;
    if size <= WHOLE_IN_ENDS {
        buffer.resize(size as usize, 0);
        read_exactly(&file, buffer, 0)?;
        let whole = xxhash_rust::xxh3::xxh3_128(buffer);
        return Ok(Ends {
            prefix: whole,
            suffix: 0,
            whole: Some(whole),
        });
    }
    buffer.resize(EDGE as usize, 0);
    read_exactly(&file, buffer, 0)?;
    let prefix = xxhash_rust::xxh3::xxh3_128(buffer);
    read_exactly(&file, buffer, size - EDGE)?;
    let suffix = xxhash_rust::xxh3::xxh3_128(buffer);
    Ok(Ends {
        prefix,
        suffix,
        whole: None,
    })
}

/// `path` opened relative to its directory without waiting, if what is
/// open is the version `staged` names ([`is_version_of`]).
fn open_as_staged(
    cursor: &mut DirectoryCursor,
    path: &Path,
    staged: &FileStamp,
) -> std::result::Result<std::fs::File, String> {
    let io = |e| crate::error::ErrorKind::Io(e).to_string();
    let file = cursor.open(path, true).map_err(io)?;
    let opened = crate::fs::stat::fstat(&file).map_err(io)?;
    if !is_version_of(&opened, staged) {
        return Err(crate::error::ErrorKind::ChangedWhileReading.to_string());
    }
    Ok(file)
}

/// Fills `buffer` from `offset`; the file ending first means it changed
/// since its stat.
fn read_exactly(
    file: &std::fs::File,
    buffer: &mut [u8],
    offset: u64,
) -> std::result::Result<(), String> {
    let mut filled = 0;
    while filled < buffer.len() {
        match crate::fs::read_at(file, &mut buffer[filled..], offset + filled as u64) {
            Ok(0) => return Err(crate::error::ErrorKind::ChangedWhileReading.to_string()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(crate::error::ErrorKind::Io(e).to_string()),
        }
    }
    Ok(())
}

/// Keeps the items some other item equals in `order`;
/// with `hard_links`, an inode with several paths shares with itself.
/// Sorting, not a map: nothing beyond the array itself is allocated.
pub(super) fn keep_shared<T: Links>(
    items: &mut Vec<T>,
    hard_links: bool,
    order: impl Fn(&T, &T) -> std::cmp::Ordering,
) {
    items.sort_unstable_by(&order);
    let mut keep = Vec::with_capacity(items.len());
    for run in items.chunk_by(|a, b| order(a, b).is_eq()) {
        keep.extend(
            run.iter()
                .map(|item| run.len() >= 2 || (hard_links && item.links() >= 2)),
        );
    }
    let mut flags = keep.into_iter();
    items.retain(|_| flags.next().unwrap_or(false));
}

#[cfg(all(test, unix))]
mod tests {
    //! The staged-read rule, class by class: whatever takes a staged
    //! file's place between its stat and its read is refused at once
    //! (never waited on, never read as the file).

    use super::*;
    use std::path::PathBuf;

    /// A file of 10,000 bytes and the stamp a stat stage takes of it.
    fn staged(dir: &Path) -> (PathBuf, FileStamp) {
        let path = dir.join("f");
        std::fs::write(&path, vec![7u8; 10_000]).unwrap();
        let stamp = crate::fs::stat::lstat_path(&path).unwrap();
        (path, stamp)
    }

    /// A swap: what it puts there, and the doing of it.
    type Swap = (&'static str, Box<dyn Fn()>);

    /// What each swap puts in the staged file's place.
    fn swaps(dir: &Path, path: &Path) -> Vec<Swap> {
        let (p, d) = (path.to_path_buf(), dir.to_path_buf());
        let fifo = {
            let p = p.clone();
            move || {
                std::fs::remove_file(&p).unwrap();
                let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
                // SAFETY: `c` is a NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }
        };
        let device = {
            let p = p.clone();
            move || {
                std::fs::remove_file(&p).unwrap();
                std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
            }
        };
        let renamed = {
            let (p, d) = (p.clone(), d.clone());
            move || {
                let other = d.join("other");
                std::fs::write(&other, vec![7u8; 10_000]).unwrap();
                std::fs::rename(&other, &p).unwrap();
            }
        };
        let written = move || {
            std::fs::write(&p, vec![8u8; 10_001]).unwrap();
        };
        vec![
            ("a FIFO", Box::new(fifo)),
            ("a link to /dev/zero", Box::new(device)),
            ("another file renamed over it", Box::new(renamed)),
            ("a write", Box::new(written)),
        ]
    }

    /// Runs `check` on a staged file after each swap, in a tree of its own.
    fn after_each_swap(check: impl Fn(&str, &Path, &FileStamp)) {
        for n in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let (path, stamp) = staged(dir.path());
            let (what, swap) = swaps(dir.path(), &path).swap_remove(n);
            swap();
            check(what, &path, &stamp);
        }
    }

    #[test]
    fn an_edge_is_never_read_from_what_took_the_files_place() {
        after_each_swap(|what, path, stamp| {
            let mut cursor = DirectoryCursor::new();
            for edge in [Edge::Prefix, Edge::Suffix] {
                let got = hash_edge(&mut cursor, path, stamp, edge);
                assert!(got.is_err(), "{what}: an edge hashed: {got:?}");
            }
        });
    }

    #[test]
    fn ends_are_never_read_from_what_took_the_files_place() {
        after_each_swap(|what, path, stamp| {
            let got = hash_ends(&mut DirectoryCursor::new(), path, stamp, &mut Vec::new());
            assert!(got.is_err(), "{what}: ends hashed: {got:?}");
        });
    }

    /// A short file's ends are its whole hash (so files of one size are
    /// compared alike, by that); a longer one's its first and last page,
    /// with no whole hash; one buffer serves file after file.
    #[test]
    fn ends_are_the_whole_of_a_short_file_and_the_edges_of_a_long_one() {
        let dir = tempfile::tempdir().unwrap();
        let xxh = xxhash_rust::xxh3::xxh3_128;
        let mut buffer = Vec::new();
        let mut cursor = DirectoryCursor::new();
        for size in [
            0usize,
            1,
            4096,
            4097,
            WHOLE_IN_ENDS as usize,
            WHOLE_IN_ENDS as usize + 1,
        ] {
            let bytes: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let path = dir.path().join(format!("f{size}"));
            std::fs::write(&path, &bytes).unwrap();
            let stamp = FileStamp::of(&std::fs::symlink_metadata(&path).unwrap());
            let ends = hash_ends(&mut cursor, &path, &stamp, &mut buffer).unwrap();
            let want = match size as u64 <= WHOLE_IN_ENDS {
                true => Ends {
                    prefix: xxh(&bytes),
                    suffix: 0,
                    whole: Some(xxh(&bytes)),
                },
                false => Ends {
                    prefix: xxh(&bytes[..4096]),
                    suffix: xxh(&bytes[size - 4096..]),
                    whole: None,
                },
            };
            assert_eq!(ends, want, "{size} bytes");
        }
    }

    #[test]
    fn a_whole_file_is_never_read_from_what_took_the_files_place() {
        after_each_swap(|what, path, stamp| {
            let mut answers = Vec::new();
            staged_hasher(crate::Algorithm::Xxh128, 2)
                .run(
                    &[crate::stage::Source::Path(path.to_path_buf())],
                    |record| {
                        answers.push(match record.outcome {
                            crate::pipeline::Outcome::Hashed(h) => read_as_staged(&h, stamp),
                            other => Err(format!("{other:?}")),
                        })
                    },
                )
                .unwrap();
            assert_eq!(answers.len(), 1, "{what}");
            assert!(answers[0].is_err(), "{what}: read as the file: {answers:?}");
        });
    }

    #[test]
    fn the_staged_version_itself_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let (path, stamp) = staged(dir.path());
        let mut cursor = DirectoryCursor::new();
        let edge = hash_edge(&mut cursor, &path, &stamp, Edge::Prefix).unwrap();
        assert_eq!(edge, xxhash_rust::xxh3::xxh3_128(&[7u8; 4096]));
        let mut got = None;
        staged_hasher(crate::Algorithm::Xxh128, 1)
            .run(&[crate::stage::Source::Path(path)], |record| {
                if let crate::pipeline::Outcome::Hashed(h) = record.outcome {
                    got = Some(read_as_staged(&h, &stamp));
                }
            })
            .unwrap();
        let want = xxhash_rust::xxh3::xxh3_128(&[7u8; 10_000]).to_be_bytes();
        assert_eq!(got.unwrap().unwrap().as_bytes(), &want[..]);
    }
}
