//! What the stages of `find_duplicates` carry between them: the files met,
//! the inodes still in the running, and the two helpers every stage uses
//! (an edge's hash, keeping what some other item equals).

use std::path::Path;

use crate::digest::Digest;
use crate::fs::dir::DirectoryCursor;
use crate::fs::FileStamp;

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
/// (issue 35: 836 MiB, fclones 826 MiB).
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
    pub(super) fn retain(&mut self, keep: &[bool]) {
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
/// that 30,000 of them cost 1.4 MB (issue 15's memory target).
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

/// XXH3-128 of the first or last [`EDGE`] bytes (a file no longer than
/// that: the whole of it), opened relative to its directory. Fewer bytes
/// than the stat promised is an error: a file no longer than an edge is
/// answered with this hash.
pub(crate) fn hash_edge(
    cursor: &mut DirectoryCursor,
    path: &Path,
    size: u64,
    edge: Edge,
) -> std::result::Result<u128, String> {
    let io = |e| crate::error::ErrorKind::Io(e).to_string();
    let file = cursor.open(path, true).map_err(io)?;
    let start = match edge {
        Edge::Prefix => 0,
        Edge::Suffix => size.saturating_sub(EDGE),
    };
    let want = (size - start).min(EDGE) as usize;
    let mut buffer = [0u8; EDGE as usize];
    let mut filled = 0;
    while filled < want {
        match crate::fs::read_at(&file, &mut buffer[filled..want], start + filled as u64) {
            Ok(0) => return Err(crate::error::ErrorKind::ChangedWhileReading.to_string()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(xxhash_rust::xxh3::xxh3_128(&buffer[..want]))
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
