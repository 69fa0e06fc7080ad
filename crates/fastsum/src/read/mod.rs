//! How bytes get from disk to the hasher.
//!
//! Everything about reading lives here, with the reasons. The figures come
//! from `scripts/bench/sweep-io` on the standard corpus (one thread, warm cache,
//! medians), recorded in `bench/results/BENCHMARKS-LOG.md` ("I/O sweep").
//!
//! * **Files of at least `MMAP_THRESHOLD` (256 KiB) are mapped**, in
//!   bounded windows, for every algorithm. With MD5 and SHA near 0.8 and
//!   1.6 GB/s the copy out of the page cache is no longer free: on 256 MiB
//!   of 256 KiB files, md5 0.376 s read vs 0.366 s mapped, xxh3 0.051 vs
//!   0.041; on the 1 GiB file md5 1.480 vs 1.420, sha256 0.759 vs 0.663,
//!   xxh3 0.182 vs 0.095. Below 256 KiB the map set-up loses (64 KiB files:
//!   xxh3 0.074 read vs 0.087 mapped; 16 KiB: 0.171 vs 0.280).
//! * **Smaller files are read** into one reusable buffer of
//!   [`ReadStrategy::DEFAULT_BUFFER_SIZE`] (256 KiB), so a file below the threshold takes
//!   one read plus the read that sees EOF: open, fstat, read, read, close;
//!   no read-ahead advice, no map. The buffer is allocated once per
//!   [`FileHasher`] (one per thread). Read sizes from 32 KiB to 4 MiB are
//!   within 4% of each other on the 1 GiB file (4 KiB loses 7-100%: rsync's
//!   lesson), so the size that covers every small file in one call wins.
//! * Memory stays constant whatever the file size: one buffer and at most
//!   one mapped window (see `mmap.rs`, which also turns a file that
//!   shrinks under the map into an error instead of a SIGBUS crash).
//! * `posix_fadvise(SEQUENTIAL)` doubles the kernel's read-ahead for large
//!   files that are read rather than mapped (pipes aside), as GNU coreutils
//!   does.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::algo::{Algorithm, StreamHasher};
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::stat::fstat;
#[cfg(all(unix, feature = "tree"))]
pub(crate) mod blake3_tree;
// Maps only where a truncated map's SIGBUS can be caught (Unix): the
// portable path reads instead.
#[cfg(unix)]
pub(crate) mod mmap;
#[cfg(unix)]
mod sigbus;

pub(crate) use crate::fs::regular::open_regular;

/// Files at least this large are mapped rather than read (see
/// `mmap.rs`). Below it, the map set-up and page-table teardown cost
/// more than the copy they save (module docs).
pub(crate) const MMAP_THRESHOLD: u64 = 256 * 1024;

/// Files at least this large, hashed with other cores free, have their
/// next map window populated by a helper thread (MD5 of 1 GiB:
/// 1.417 s without, bench/results/BENCHMARKS-LOG.md, "Issue 6").
#[cfg(unix)]
pub(crate) const PREFETCH_THRESHOLD: u64 = 64 * 1024 * 1024;

/// BLAKE3 files at least this large are hashed by several threads at once
/// (when [`FileHasher::parallel_large_files`] is on); see `blake3_tree.rs`.
pub(crate) const PARALLEL_THRESHOLD: u64 = 16 * 1024 * 1024;

/// How a file's bytes reach the hasher.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadStrategy {
    /// Pick per file: mmap windows for large regular files with fast
    /// algorithms, streamed reads otherwise.
    #[default]
    Auto,
    /// Always `read(2)` into a buffer of this many bytes.
    Read {
        /// Bytes per read call.
        buffer_size: usize,
    },
    /// Map regular files in bounded windows (falls back to reads for
    /// pipes, devices and files the kernel refuses to map).
    Mmap,
}

impl ReadStrategy {
    /// The read size used unless told otherwise: 256 KiB, so that every
    /// file below `MMAP_THRESHOLD` is read in one call (module docs).
    pub const DEFAULT_BUFFER_SIZE: usize = 256 * 1024;
}

/// A reusable file hasher: owns the read buffer, so a thread hashing many
/// files allocates once.
///
/// ```
/// use fastsum::{Algorithm, FileHasher};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("abc.txt");
/// std::fs::write(&path, b"abc").unwrap();
/// let mut hasher = FileHasher::new();
/// let digest = hasher.hash_path(Algorithm::Sha256, &path).unwrap();
/// assert_eq!(digest.to_hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
/// ```
#[derive(Debug)]
pub struct FileHasher {
    buffer: Vec<u8>,
    strategy: ReadStrategy,
    parallel_large_files: bool,
    meter: Meter,
}

/// Holds reads to a rate shared by every thread that takes from it: each
/// read's bytes are taken as they go, and a read ahead of the rate waits
/// until its bytes are due (`fastsum scrub --limit-rate`).
#[derive(Debug)]
pub(crate) struct Pace {
    rate: u64,
    start: std::time::Instant,
    bytes: AtomicU64,
}

impl Pace {
    /// At most `rate` bytes a second on average, from now.
    // Only scrub (the `cache` feature) sets a pace.
    #[cfg_attr(not(feature = "cache"), allow(dead_code))]
    pub fn new(rate: u64) -> Pace {
        Pace {
            rate: rate.max(1),
            start: std::time::Instant::now(),
            bytes: AtomicU64::new(0),
        }
    }

    /// `bytes` read: waits until they are due.
    pub fn take(&self, bytes: u64) {
        let total = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let due = std::time::Duration::from_secs_f64(total as f64 / self.rate as f64);
        if let Some(wait) = due.checked_sub(self.start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
}

/// Where a read's bytes are counted as they go: a progress counter, and a
/// pace that holds reads to a rate.
#[derive(Clone, Debug, Default)]
pub(crate) struct Meter {
    counter: Option<Arc<AtomicU64>>,
    pace: Option<Arc<Pace>>,
}

impl Meter {
    /// A meter counting into `counter` only.
    #[cfg(test)]
    pub(crate) fn counting(counter: Arc<AtomicU64>) -> Meter {
        Meter {
            counter: Some(counter),
            pace: None,
        }
    }

    /// `bytes` more were read (a chunk, a window).
    pub(crate) fn add(&self, bytes: u64) {
        if let Some(counter) = &self.counter {
            counter.fetch_add(bytes, Ordering::Relaxed);
        }
        if let Some(pace) = &self.pace {
            pace.take(bytes);
        }
    }
}

impl Default for FileHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl FileHasher {
    /// A hasher with the default strategy and buffer size.
    pub fn new() -> Self {
        Self::with_strategy(ReadStrategy::Auto)
    }

    /// A hasher that reads with `strategy`.
    pub fn with_strategy(strategy: ReadStrategy) -> Self {
        let size = match strategy {
            ReadStrategy::Read { buffer_size } => buffer_size.max(1),
            ReadStrategy::Auto | ReadStrategy::Mmap => ReadStrategy::DEFAULT_BUFFER_SIZE,
        };
        FileHasher {
            buffer: vec![0; size],
            strategy,
            parallel_large_files: false,
            meter: Meter::default(),
        }
    }

    /// Lets one large BLAKE3 file be hashed by all of rayon's threads (as
    /// b3sum does, but in bounded windows). Off by default: a caller that
    /// already runs one hasher per core gains nothing from it.
    pub fn parallel_large_files(mut self, on: bool) -> Self {
        self.parallel_large_files = on;
        self
    }

    /// Adds every byte hashed to `counter` as the hash goes (for progress
    /// reports on large files).
    pub fn count_bytes_in(mut self, counter: Arc<AtomicU64>) -> Self {
        self.meter.counter = Some(counter);
        self
    }

    /// Holds every read to `pace`'s rate (as the bytes go, so a large file
    /// is read at the rate too, not in one burst).
    // The pipeline (the `tree` feature) is the one caller.
    #[cfg_attr(not(feature = "tree"), allow(dead_code))]
    pub(crate) fn paced(mut self, pace: Option<Arc<Pace>>) -> Self {
        self.meter.pace = pace;
        self
    }

    /// The strategy in use.
    pub fn strategy(&self) -> ReadStrategy {
        self.strategy
    }

    /// Opens a path taken from a list (`open_regular`: regular files
    /// only, never waiting) and hashes it, verified: its stamp when opened
    /// and when read must agree, or it changed while it was read (a file
    /// unlinked, renamed over or rewritten during the read got "OK" from
    /// `-c`). Errors carry the path.
    pub fn hash_listed(&mut self, algorithm: Algorithm, path: &Path) -> Result<Digest> {
        let file = open_regular(path)?;
        let with_path = |kind: ErrorKind| Error::with_path(path, kind);
        let before = crate::fs::stat::fstat(&file).map_err(|e| with_path(ErrorKind::Io(e)))?;
        let (digest, size) = self
            .hash_counted(algorithm, &file, true)
            .map_err(with_path)?;
        let after = crate::fs::stat::fstat(&file).map_err(|e| with_path(ErrorKind::Io(e)))?;
        if before.can_be_verified() && !before.held_through(&after, Some(size)) {
            return Err(with_path(ErrorKind::ChangedWhileReading));
        }
        Ok(digest)
    }

    /// Opens and hashes the file at `path`. Errors carry the path.
    pub fn hash_path(&mut self, algorithm: Algorithm, path: &Path) -> Result<Digest> {
        let file = File::open(path).map_err(|e| Error::with_path(path, e))?;
        self.hash_file(algorithm, &file)
            .map_err(|kind| Error::with_path(path, kind))
    }

    /// Hashes an open file from its current position to its end.
    pub fn hash_file(&mut self, algorithm: Algorithm, file: &File) -> Result<Digest, ErrorKind> {
        self.hash_file_counted(algorithm, file).map(|(d, _)| d)
    }

    /// Adds `bytes` to the progress counter, if there is one (for a
    /// stage that reads files itself, as the multi-buffer hasher does).
    pub fn note_progress(&self, bytes: u64) {
        self.meter.add(bytes);
    }

    /// [`FileHasher::hash_file`], also returning the bytes hashed.
    pub fn hash_file_counted(
        &mut self,
        algorithm: Algorithm,
        file: &File,
    ) -> Result<(Digest, u64), ErrorKind> {
        self.hash_counted(algorithm, file, false)
    }

    /// [`FileHasher::hash_file_counted`]; with `regular_only`, anything
    /// but a regular file is refused (`not_regular`) and is not read.
    pub(crate) fn hash_counted(
        &mut self,
        algorithm: Algorithm,
        file: &File,
        regular_only: bool,
    ) -> Result<(Digest, u64), ErrorKind> {
        let st = fstat(file)?;
        let is_file = st.is_file();
        if regular_only && !is_file {
            return Err(crate::fs::regular::not_regular(&st));
        }
        let len = st.size;
        if is_file
            && self.parallel_large_files
            && algorithm == Algorithm::Blake3
            && len >= PARALLEL_THRESHOLD
            && !matches!(self.strategy, ReadStrategy::Read { .. })
        {
            #[cfg(all(unix, feature = "tree"))]
            if !crate::fs::portable() {
                let digest = blake3_tree::hash_file(file, len, &self.meter)?;
                return Ok((digest, len));
            }
        }
        // Maps only on Unix and not on the portable path (module docs).
        #[cfg(unix)]
        {
            let use_map = is_file
                && !crate::fs::portable()
                && match self.strategy {
                    ReadStrategy::Auto => mapping_wins(algorithm) && len >= MMAP_THRESHOLD,
                    ReadStrategy::Mmap => len > 0,
                    ReadStrategy::Read { .. } => false,
                };
            if use_map {
                let prefetch = self.parallel_large_files && len >= PREFETCH_THRESHOLD;
                if let Some(digest) =
                    mmap::hash_mapped(algorithm, file, len, &self.meter, prefetch)?
                {
                    return Ok((digest, len));
                }
            }
        }
        // Small files take the short way: no read-ahead advice (one
        // syscall more than the read itself), no map set-up, and no read
        // just to see EOF once fstat's length has been read.
        let known_len = if is_file && len < SMALL_FILE_LIMIT {
            Some(len)
        } else {
            if is_file {
                crate::fs::residency::advise_sequential(file);
            }
            None
        };
        let meter = &self.meter;
        let buffer = &mut self.buffer;
        crate::algo::dispatch!(algorithm, H => hash_reader_with::<H>(algorithm, file, buffer, meter, known_len))
            .map_err(ErrorKind::from)
    }

    /// Hashes `len` bytes of `file` from byte `start` (fewer if the file
    /// ends first) with positioned reads, leaving the file's offset alone;
    /// returns the digest and the bytes hashed. For a part of a file
    /// (duplicate finding's prefixes and suffixes): one read or two, so no
    /// map.
    pub fn hash_range_counted(
        &mut self,
        algorithm: Algorithm,
        file: &File,
        start: u64,
        len: u64,
    ) -> Result<(Digest, u64), ErrorKind> {
        let reader = RangeReader {
            file,
            at: start,
            left: len,
        };
        self.hash_reader_counted(algorithm, reader)
            .map_err(ErrorKind::from)
    }

    /// Hashes everything `reader` yields; returns the digest and byte count.
    fn hash_reader_counted(
        &mut self,
        algorithm: Algorithm,
        reader: impl Read,
    ) -> io::Result<(Digest, u64)> {
        let meter = &self.meter;
        crate::algo::dispatch!(algorithm, H => hash_reader_with::<H>(algorithm, reader, &mut self.buffer, meter, None))
    }

    /// Hashes everything `reader` yields, in reads of the buffer's size.
    pub fn hash_reader(&mut self, algorithm: Algorithm, reader: impl Read) -> io::Result<Digest> {
        self.hash_reader_counted(algorithm, reader).map(|(d, _)| d)
    }

    /// Reads `reader` to its end through this hasher's buffer, handing each
    /// chunk to `sink`: for callers with hash states of their own (keyed
    /// BLAKE3, extendable output).
    pub fn read_with(
        &mut self,
        mut reader: impl Read,
        mut sink: impl FnMut(&[u8]),
    ) -> io::Result<()> {
        loop {
            match reader.read(&mut self.buffer) {
                Ok(0) => return Ok(()),
                Ok(n) => sink(&self.buffer[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Hashes standard input.
    pub fn hash_stdin(&mut self, algorithm: Algorithm) -> io::Result<Digest> {
        self.hash_reader(algorithm, io::stdin().lock())
    }

    /// Hashes standard input; returns the digest and the bytes read.
    pub fn hash_stdin_counted(&mut self, algorithm: Algorithm) -> io::Result<(Digest, u64)> {
        self.hash_reader_counted(algorithm, io::stdin().lock())
    }
}

/// `read(2)` of a byte range through `pread`.
struct RangeReader<'a> {
    file: &'a File,
    at: u64,
    left: u64,
}

impl Read for RangeReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let want = buffer
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let n = crate::fs::read_at(self.file, &mut buffer[..want], self.at)?;
        self.at += n as u64;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Files smaller than this take the short way: `open`, `fstat`, reads to
/// EOF, `close`; no read-ahead advice and no map (module docs).
pub(crate) const SMALL_FILE_LIMIT: u64 = MMAP_THRESHOLD;

/// Whether a memory map beats reads for `algorithm` on a file of at least
/// [`MMAP_THRESHOLD`] bytes: for every algorithm (module docs).
#[cfg(unix)]
fn mapping_wins(_algorithm: Algorithm) -> bool {
    true
}

/// The hot loop, monomorphized per algorithm: read, absorb, repeat, until
/// EOF or, for a regular file whose length `fstat` gave (`known_len`), until
/// that many bytes are in: the file as it was when it was stat'ed, without
/// a further read that would only return 0. (Reads that return less do not
/// stop it: FUSE may return short reads, and files in /proc report 0.)
fn hash_reader_with<H: StreamHasher>(
    algorithm: Algorithm,
    mut reader: impl Read,
    buffer: &mut [u8],
    meter: &Meter,
    known_len: Option<u64>,
) -> io::Result<(Digest, u64)> {
    let mut hasher = H::new(algorithm);
    let mut total = 0u64;
    loop {
        match reader.read(buffer) {
            Ok(0) => return Ok((hasher.finalize(), total)),
            Ok(n) => {
                hasher.update(&buffer[..n]);
                total += n as u64;
                meter.add(n as u64);
                if known_len == Some(total) {
                    return Ok((hasher.finalize(), total));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn every_read_size_gives_the_same_digest() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        for algorithm in Algorithm::ALL {
            let expected = algorithm.hash_bytes(&data);
            for size in [1, 63, 64, 4096, 65_537, ReadStrategy::DEFAULT_BUFFER_SIZE] {
                let mut h = FileHasher::with_strategy(ReadStrategy::Read { buffer_size: size });
                assert_eq!(
                    h.hash_reader(algorithm, Cursor::new(&data)).unwrap(),
                    expected,
                    "{algorithm} read size {size}"
                );
            }
        }
    }

    #[test]
    fn a_missing_file_names_its_path() {
        let err = FileHasher::new()
            .hash_path(Algorithm::Md5, Path::new("/nonexistent/fastsum-test"))
            .unwrap_err();
        assert_eq!(err.path(), Some(Path::new("/nonexistent/fastsum-test")));
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn files_whose_stat_size_lies_are_read_to_eof() {
        // /proc files report size 0 but have content: the short way must
        // not stop at fstat's length when that is not where EOF is.
        let expected = std::fs::read("/proc/version").unwrap();
        assert!(!expected.is_empty());
        let digest = FileHasher::new()
            .hash_path(Algorithm::Md5, Path::new("/proc/version"))
            .unwrap();
        assert_eq!(digest, Algorithm::Md5.hash_bytes(&expected));
    }

    #[test]
    fn a_directory_is_a_read_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = FileHasher::new()
            .hash_path(Algorithm::Md5, dir.path())
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EISDIR));
    }
}
