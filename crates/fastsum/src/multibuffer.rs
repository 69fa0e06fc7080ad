//! The multi-buffer hashing stage: many files' MD5s (or SHA-1s) advanced
//! together in SIMD lanes ([`crate::algo::md5_lanes`],
//! [`crate::algo::sha1_lanes`]).
//!
//! A worker hands [`MultiBufferHasher`] a batch of files. Each lane holds
//! one file: its MD5 state, its own reusable buffer, and how much of the
//! file it has read. One round:
//!
//! 1. **Refill** every idle lane with the next file of the batch (a file
//!    that cannot be opened fails alone, and the lane takes the next one).
//! 2. **Read** into each lane whose buffer holds less than a block, up to
//!    [`LANE_BUFFER`] bytes. At the file's end (`fstat`'s length, or EOF
//!    if that comes first, as the scalar path stops) the lane appends
//!    the padding, so its last blocks are ordinary blocks.
//! 3. **Compress** the number of blocks every busy lane has ready, all
//!    lanes at once; idle lanes run on a block of zeros and are ignored.
//! 4. A lane whose padded blocks are all done has its digest; it is
//!    reported and the lane is free for the next file.
//!
//! **The tail:** when the batch has no files left and few lanes are busy
//! (a few large files at the end), a SIMD step would mostly run empty
//! lanes, so each remaining file is finished by the single-stream
//! compression function from the lane's state.
//!
//! Anything else (other algorithms, standard input, files that are not
//! regular or whose `fstat` length is 0, like `/proc` files) goes to the
//! scalar hasher, so output, errors and ordering are the scalar path's.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;

use crate::algo::md5_lanes::{LaneWidth, MAX_LANES};
use crate::algo::sha1_lanes::Sha1Width;
use crate::algo::Algorithm;
use crate::cache::FileStamp;
use crate::digest::Digest;
use crate::engine::{BatchHasher, Hashed, Job, Operand, ScalarBatchHasher};
use crate::error::ErrorKind;
use crate::io::directory::DirectoryCursor;
use crate::io::FileHasher;

/// Bytes each lane reads at a time: 16 lanes of 64 KiB are 1 MiB of
/// buffers per worker, and one `read` takes most files whole.
pub const LANE_BUFFER: usize = 64 * 1024;

/// Room after the data for MD5's padding (at most 72 bytes).
const PADDING_ROOM: usize = 128;

/// What idle lanes compress (their results are thrown away).
static ZEROS: [u8; LANE_BUFFER + PADDING_ROOM] = [0; LANE_BUFFER + PADDING_ROOM];

/// The lanes' algorithm and SIMD width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// MD5 at this width.
    Md5(LaneWidth),
    /// SHA-1 at this width.
    Sha1(Sha1Width),
}

impl Kernel {
    /// The lanes for `algorithm` on this CPU, if it has any and
    /// `FASTSUM_SIMD` does not turn them off (MD5 and SHA-1 only).
    pub fn for_algorithm(algorithm: Algorithm) -> Option<Kernel> {
        match algorithm {
            Algorithm::Md5 => LaneWidth::best().map(Kernel::Md5),
            Algorithm::Sha1 => sha1_width().map(Kernel::Sha1),
            _ => None,
        }
    }

    /// The algorithm it computes.
    pub fn algorithm(self) -> Algorithm {
        match self {
            Kernel::Md5(_) => Algorithm::Md5,
            Kernel::Sha1(_) => Algorithm::Sha1,
        }
    }

    /// Files advanced together.
    pub fn lanes(self) -> usize {
        match self {
            Kernel::Md5(width) => width.lanes(),
            Kernel::Sha1(width) => width.lanes(),
        }
    }

    fn initial_state(self) -> [u32; 5] {
        match self {
            Kernel::Md5(_) => {
                let [a, b, c, d] = crate::algo::hashers::Md5::INITIAL_STATE;
                [a, b, c, d, 0]
            }
            Kernel::Sha1(_) => crate::algo::sha1_lanes::INIT,
        }
    }

    /// SHA-1 writes its length and its digest words big-endian.
    fn big_endian(self) -> bool {
        matches!(self, Kernel::Sha1(_))
    }

    fn digest_words(self) -> usize {
        match self {
            Kernel::Md5(_) => 4,
            Kernel::Sha1(_) => 5,
        }
    }

    fn compress(self, states: &mut [[u32; 5]], data: &[&[u8]], blocks: usize) {
        match self {
            Kernel::Md5(width) => {
                let lanes = width.lanes();
                let mut md5_states = [[0u32; 4]; MAX_LANES];
                for (md5, state) in md5_states.iter_mut().zip(states.iter()) {
                    md5.copy_from_slice(&state[..4]);
                }
                crate::algo::md5_lanes::compress_lanes(
                    width,
                    &mut md5_states[..lanes],
                    data,
                    blocks,
                );
                for (state, md5) in states.iter_mut().zip(&md5_states[..lanes]) {
                    state[..4].copy_from_slice(md5);
                }
            }
            Kernel::Sha1(width) => {
                crate::algo::sha1_lanes::compress_lanes(width, states, data, blocks)
            }
        }
    }

    /// The single-stream compression of whole `blocks`.
    fn compress_one(self, state: &mut [u32; 5], blocks: &[u8]) {
        match self {
            Kernel::Md5(_) => {
                let mut md5 = [state[0], state[1], state[2], state[3]];
                crate::algo::hashers::md5_compress(&mut md5, blocks);
                state[..4].copy_from_slice(&md5);
            }
            Kernel::Sha1(_) => {
                use sha1::digest::generic_array::GenericArray;
                for block in blocks.chunks_exact(64) {
                    sha1::compress(state, std::slice::from_ref(GenericArray::from_slice(block)));
                }
            }
        }
    }
}

/// The SHA-1 width to use: AVX-512 2x16 where the CPU has AVX-512 (1.5x
/// the single 16-lane group), else AVX2 2x8 (1.26x AVX2 x8);
/// `FASTSUM_SIMD` caps it as it caps MD5's (`scalar` or `sse2`: none).
/// Measured against the SHA-NI single stream in docs/BENCHMARKS.md.
fn sha1_width() -> Option<Sha1Width> {
    static CHOSEN: std::sync::OnceLock<Option<Sha1Width>> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let forced = std::env::var("FASTSUM_SIMD")
            .ok()
            .map(|v| v.to_ascii_lowercase());
        let candidates: &[Sha1Width] = match forced.as_deref() {
            Some("scalar" | "none" | "off" | "sse2") => &[],
            Some("avx2") => &[Sha1Width::Avx2],
            Some("avx2x2") => &[Sha1Width::Avx2x2, Sha1Width::Avx2],
            Some("avx512") => &[Sha1Width::Avx512, Sha1Width::Avx2x2, Sha1Width::Avx2],
            _ => &[
                Sha1Width::Avx512x2,
                Sha1Width::Avx512,
                Sha1Width::Avx2x2,
                Sha1Width::Avx2,
            ],
        };
        candidates.iter().copied().find(|w| w.is_supported())
    })
}

/// One lane: a file being hashed, or nothing.
struct Lane {
    job: Option<Job>,
    file: Option<File>,
    state: [u32; 5],
    buffer: Box<[u8]>,
    /// Unhashed bytes are `buffer[start..end]`; `start` is a whole number
    /// of blocks into the stream.
    start: usize,
    end: usize,
    /// Bytes read from the file so far.
    read: u64,
    /// `fstat`'s length: reading stops there.
    len: u64,
    /// The padding is in the buffer: what is left are the final blocks.
    padded: bool,
    /// The file's stamp when opened, when reads are verified.
    opened: Option<FileStamp>,
    /// Tests: fail the read that covers this byte offset.
    #[cfg(test)]
    fail_at: Option<u64>,
}

impl Lane {
    fn new() -> Self {
        Lane {
            job: None,
            file: None,
            state: [0; 5],
            buffer: vec![0; LANE_BUFFER + PADDING_ROOM].into_boxed_slice(),
            start: 0,
            end: 0,
            read: 0,
            len: 0,
            padded: false,
            opened: None,
            #[cfg(test)]
            fail_at: None,
        }
    }

    fn is_busy(&self) -> bool {
        self.job.is_some()
    }

    fn ready_blocks(&self) -> usize {
        (self.end - self.start) / 64
    }

    fn start(
        &mut self,
        job: Job,
        file: File,
        len: u64,
        state: [u32; 5],
        opened: Option<FileStamp>,
    ) {
        self.opened = opened;
        self.job = Some(job);
        self.file = Some(file);
        self.state = state;
        self.start = 0;
        self.end = 0;
        self.read = 0;
        self.len = len;
        self.padded = false;
        #[cfg(test)]
        {
            self.fail_at = self.job.as_ref().and_then(injected_failure);
        }
    }

    /// Reads until the buffer is full or the file is done (then pads).
    /// Counts the bytes read in `files`' progress.
    fn fill(&mut self, files: &FileHasher, big_endian: bool) -> io::Result<()> {
        if self.padded {
            return Ok(());
        }
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        let file = self.file.as_mut().expect("a busy lane has its file");
        while self.end < LANE_BUFFER {
            let left = self.len - self.read;
            if left == 0 {
                break;
            }
            let want = (LANE_BUFFER - self.end).min(usize::try_from(left).unwrap_or(usize::MAX));
            #[cfg(test)]
            if self.fail_at.is_some_and(|at| self.read + want as u64 > at) {
                return Err(io::Error::other("injected read failure"));
            }
            match file.read(&mut self.buffer[self.end..self.end + want]) {
                Ok(0) => {
                    // Shorter than fstat said: hash what is there.
                    self.len = self.read;
                    break;
                }
                Ok(n) => {
                    self.end += n;
                    self.read += n as u64;
                    files.note_progress(n as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        if self.read == self.len {
            self.pad(big_endian);
        }
        Ok(())
    }

    /// Appends the padding MD5 and SHA-1 share: 0x80, zeros, the bit
    /// length (little-endian for MD5, big-endian for SHA-1); the unhashed
    /// bytes become a whole number of blocks.
    fn pad(&mut self, big_endian: bool) {
        let bits = self.read.wrapping_mul(8);
        let bits = if big_endian {
            bits.to_be_bytes()
        } else {
            bits.to_le_bytes()
        };
        let padded_end = (self.end + 1 + 8).div_ceil(64) * 64;
        self.buffer[self.end] = 0x80;
        self.buffer[self.end + 1..padded_end - 8].fill(0);
        self.buffer[padded_end - 8..padded_end].copy_from_slice(&bits);
        self.end = padded_end;
        self.padded = true;
    }

    fn is_done(&self) -> bool {
        self.padded && self.start == self.end
    }

    fn digest(&self, kernel: Kernel) -> Digest {
        let words = kernel.digest_words();
        let mut out = [0u8; 20];
        for (bytes, word) in out.chunks_exact_mut(4).zip(&self.state[..words]) {
            let word = if kernel.big_endian() {
                word.to_be_bytes()
            } else {
                word.to_le_bytes()
            };
            bytes.copy_from_slice(&word);
        }
        Digest::from_bytes(&out[..4 * words])
    }

    /// Finishes the lane's file with the single-stream compression, from
    /// its state; a file not read yet goes through `files` whole (mapped if
    /// large).
    fn finish_scalar(
        &mut self,
        kernel: Kernel,
        files: &mut FileHasher,
    ) -> Result<Hashed, ErrorKind> {
        #[cfg(test)]
        let whole = self.fail_at.is_none();
        #[cfg(not(test))]
        let whole = true;
        if whole && self.read == 0 && !self.padded {
            let file = self.file.as_ref().expect("a busy lane has its file");
            let (digest, size) = files.hash_file_counted(kernel.algorithm(), file)?;
            self.read = size;
            return Ok(Hashed { digest, size });
        }
        loop {
            if self.ready_blocks() == 0 {
                self.fill(files, kernel.big_endian())?;
            }
            let ready = self.start + self.ready_blocks() * 64;
            kernel.compress_one(&mut self.state, &self.buffer[self.start..ready]);
            self.start = ready;
            if self.is_done() {
                return Ok(Hashed {
                    digest: self.digest(kernel),
                    size: self.read,
                });
            }
        }
    }

    /// With reads verified: the file's stamp again, on the descriptor
    /// still open; a file that changed while it was read is
    /// [`ErrorKind::ChangedWhileReading`], else its stamp goes to
    /// `verified` with the digest.
    fn verify(
        &self,
        hashed: Hashed,
        verified: &mut Option<Vec<VerifiedRead>>,
    ) -> Result<Hashed, ErrorKind> {
        let (Some(opened), Some(verified), Some(file), Some(job)) = (
            self.opened,
            verified.as_mut(),
            self.file.as_ref(),
            self.job.as_ref(),
        ) else {
            return Ok(hashed);
        };
        let after = FileStamp::of_stat(&crate::io::fstat(file)?);
        if after != opened || hashed.size != opened.size {
            return Err(ErrorKind::ChangedWhileReading);
        }
        if let Operand::Path(path) = &job.source {
            verified.push(VerifiedRead {
                path: path.clone(),
                stamp: opened,
                digest: hashed.digest,
            });
        }
        Ok(hashed)
    }

    fn clear(&mut self) -> Option<Job> {
        self.file = None;
        self.opened = None;
        self.job.take()
    }
}

/// Tests: files named `fail-N-...` fail the read that covers byte N, as a
/// disk error mid-file would.
#[cfg(test)]
fn injected_failure(job: &Job) -> Option<u64> {
    let Operand::Path(path) = &job.source else {
        return None;
    };
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("fail-")?.split('-').next()?.parse().ok()
}

/// A file read in a lane while its stamp stayed the same, for the cache
/// ([`MultiBufferHasher::verifying`]).
#[derive(Clone, Debug)]
pub struct VerifiedRead {
    /// The path as the job named it.
    pub path: PathBuf,
    /// Its stamp, the same when opened and when done.
    pub stamp: FileStamp,
    /// The digest of the bytes read.
    pub digest: Digest,
}

/// The multi-buffer MD5 stage: see the module documentation.
pub struct MultiBufferHasher {
    kernel: Kernel,
    /// With verification on: the reads done since the last take.
    verified: Option<Vec<VerifiedRead>>,
    lanes: Vec<Lane>,
    /// Jobs taken and not yet in a lane.
    pending: VecDeque<Job>,
    scalar: ScalarBatchHasher,
    directory: DirectoryCursor,
}

/// Where a job's bytes go.
enum Opened {
    /// A regular file with its stamp (and so its length), for a lane.
    Lane(File, FileStamp),
    /// Something else already open (a FIFO must not be opened twice).
    Scalar(File),
    /// Standard input.
    Stdin,
}

impl MultiBufferHasher {
    /// A stage using `kernel`'s lanes, with `files` for what it passes to
    /// the scalar path (and for its progress counter).
    pub fn new(kernel: Kernel, files: FileHasher) -> Self {
        MultiBufferHasher {
            kernel,
            verified: None,
            lanes: (0..kernel.lanes()).map(|_| Lane::new()).collect(),
            pending: VecDeque::new(),
            scalar: ScalarBatchHasher::new(files),
            directory: DirectoryCursor::new(),
        }
    }

    /// The stage for one of `threads` workers of a run with `algorithm`:
    /// multi-buffer if it is MD5 or SHA-1, the CPU has a lane width for it
    /// (and `FASTSUM_SIMD` does not say `scalar`), and the process may hold
    /// a file open per lane in every worker; otherwise `files` back.
    pub fn for_algorithm(
        algorithm: Algorithm,
        threads: usize,
        files: FileHasher,
    ) -> Result<Self, FileHasher> {
        match Kernel::for_algorithm(algorithm) {
            Some(kernel) if descriptors_for(threads, kernel.lanes()) => {
                Ok(Self::new(kernel, files))
            }
            _ => Err(files),
        }
    }

    /// Verifies every lane's read as the cache needs it: the file's stamp
    /// when opened and when done must be the same (else the job fails with
    /// [`ErrorKind::ChangedWhileReading`], for the caller to read again),
    /// and each verified read is kept for [`MultiBufferHasher::take_verified`].
    pub fn verifying(mut self) -> Self {
        self.verified = Some(Vec::new());
        self
    }

    /// The lanes' algorithm and width.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The reads verified since the last call.
    pub fn take_verified(&mut self) -> Vec<VerifiedRead> {
        self.verified
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn open(directory: &mut DirectoryCursor, job: &Job) -> Result<Opened, ErrorKind> {
        let Operand::Path(path) = &job.source else {
            return Ok(Opened::Stdin);
        };
        let file = directory.open(path)?;
        let stamp = FileStamp::of_stat(&crate::io::fstat(&file)?);
        if !stamp.is_file() || stamp.size == 0 {
            return Ok(Opened::Scalar(file));
        }
        Ok(Opened::Lane(file, stamp))
    }

    /// Runs the lanes. Without `drain`, returns as soon as a lane is idle
    /// and no job is pending to refill it (the caller brings more); with
    /// it, returns when every job taken is reported.
    fn run(
        &mut self,
        algorithm: Algorithm,
        drain: bool,
        done: &mut dyn FnMut(Job, Result<Hashed, ErrorKind>),
    ) {
        let lane_count = self.lanes.len();
        loop {
            // 1. Refill idle lanes.
            for lane in self.lanes.iter_mut().filter(|l| !l.is_busy()) {
                while let Some(job) = self.pending.pop_front() {
                    let result = match Self::open(&mut self.directory, &job) {
                        Ok(Opened::Lane(file, stamp)) => {
                            let opened = self.verified.is_some().then_some(stamp);
                            lane.start(job, file, stamp.size, self.kernel.initial_state(), opened);
                            break;
                        }
                        Ok(Opened::Scalar(file)) => self
                            .scalar
                            .files()
                            .hash_file_counted(algorithm, &file)
                            .map(|(digest, size)| Hashed { digest, size }),
                        Ok(Opened::Stdin) => self.scalar.hash_source(algorithm, &job.source),
                        Err(e) => Err(e),
                    };
                    done(job, result);
                }
            }
            let busy = self.lanes.iter().filter(|l| l.is_busy()).count();
            if self.pending.is_empty() {
                if busy == 0 || (!drain && busy < lane_count) {
                    return;
                }
                // The tail: finish the last few files one stream at a time
                // (a file not read yet takes the scalar path whole, mapped
                // if large: a lone 1 GiB file is hashed as it always was).
                if drain && busy <= tail_threshold(lane_count) {
                    for lane in self.lanes.iter_mut().filter(|l| l.is_busy()) {
                        let result = lane
                            .finish_scalar(self.kernel, self.scalar.files())
                            .and_then(|hashed| lane.verify(hashed, &mut self.verified));
                        let job = lane.clear().expect("busy");
                        done(job, result);
                    }
                    return;
                }
            }
            // 2. Read where a lane has less than a block.
            let mut failed = false;
            for lane in self.lanes.iter_mut().filter(|l| l.is_busy()) {
                if lane.ready_blocks() == 0 {
                    if let Err(e) = lane.fill(self.scalar.files(), self.kernel.big_endian()) {
                        let job = lane.clear().expect("busy");
                        done(job, Err(e.into()));
                        failed = true;
                    }
                }
            }
            if failed {
                // Refill the failed lanes (or drain) before compressing.
                continue;
            }
            // 3. Compress what every busy lane has ready.
            let blocks = self
                .lanes
                .iter()
                .filter(|l| l.is_busy())
                .map(Lane::ready_blocks)
                .min()
                .unwrap_or(0);
            let mut states = [[0u32; 5]; MAX_LANES];
            let mut data: [&[u8]; MAX_LANES] = [&ZEROS[..]; MAX_LANES];
            for (i, lane) in self.lanes.iter().enumerate() {
                if lane.is_busy() {
                    states[i] = lane.state;
                    data[i] = &lane.buffer[lane.start..lane.end];
                }
            }
            self.kernel
                .compress(&mut states[..lane_count], &data[..lane_count], blocks);
            // 4. Report the lanes that are done.
            for (i, lane) in self.lanes.iter_mut().enumerate() {
                if !lane.is_busy() {
                    continue;
                }
                lane.state = states[i];
                lane.start += blocks * 64;
                if lane.is_done() {
                    let hashed = Hashed {
                        digest: lane.digest(self.kernel),
                        size: lane.read,
                    };
                    let result = lane.verify(hashed, &mut self.verified);
                    let job = lane.clear().expect("busy");
                    done(job, result);
                }
            }
        }
    }
}

/// The hashing stage a run gets by default: multi-buffer for MD5 where the
/// CPU has lanes, the scalar stage otherwise (and when `--io=mmap` asks for
/// every file to be mapped, which lanes do not do).
pub enum AutoBatchHasher {
    /// One file at a time.
    Scalar(ScalarBatchHasher),
    /// Many files in SIMD lanes.
    MultiBuffer(MultiBufferHasher),
}

impl AutoBatchHasher {
    /// The stage for one of `threads` workers hashing `algorithm` read
    /// with `strategy`, reading through `files`.
    pub fn new(
        algorithm: Algorithm,
        strategy: crate::io::ReadStrategy,
        threads: usize,
        files: FileHasher,
    ) -> Self {
        if matches!(strategy, crate::io::ReadStrategy::Mmap) {
            return AutoBatchHasher::Scalar(ScalarBatchHasher::new(files));
        }
        match MultiBufferHasher::for_algorithm(algorithm, threads, files) {
            Ok(lanes) => AutoBatchHasher::MultiBuffer(lanes),
            Err(files) => AutoBatchHasher::Scalar(ScalarBatchHasher::new(files)),
        }
    }
}

impl BatchHasher for AutoBatchHasher {
    fn max_batch(&self) -> usize {
        match self {
            AutoBatchHasher::Scalar(s) => s.max_batch(),
            AutoBatchHasher::MultiBuffer(m) => m.max_batch(),
        }
    }

    fn hash_batch(
        &mut self,
        algorithm: Algorithm,
        batch: &mut Vec<Job>,
        done: &mut dyn FnMut(Job, Result<Hashed, ErrorKind>),
    ) {
        match self {
            AutoBatchHasher::Scalar(s) => s.hash_batch(algorithm, batch, done),
            AutoBatchHasher::MultiBuffer(m) => m.hash_batch(algorithm, batch, done),
        }
    }

    fn in_flight(&self) -> bool {
        match self {
            AutoBatchHasher::Scalar(s) => s.in_flight(),
            AutoBatchHasher::MultiBuffer(m) => m.in_flight(),
        }
    }

    fn flush(
        &mut self,
        algorithm: Algorithm,
        done: &mut dyn FnMut(Job, Result<Hashed, ErrorKind>),
    ) {
        match self {
            AutoBatchHasher::Scalar(s) => s.flush(algorithm, done),
            AutoBatchHasher::MultiBuffer(m) => m.flush(algorithm, done),
        }
    }
}

/// Whether `threads` workers may each hold `lanes` files open at once,
/// with room to spare for directories and the rest: raises the soft limit
/// on open files toward the hard one if that is what it takes. Without
/// this, `-j 4` under `ulimit -n 64` failed files with "Too many open
/// files"; now such a run hashes one file at a time per worker.
fn descriptors_for(threads: usize, lanes: usize) -> bool {
    let needed = (threads.max(1) * (lanes + 8) + 256) as libc::rlim_t;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return false;
    }
    if limit.rlim_cur >= needed {
        return true;
    }
    if limit.rlim_max < needed {
        return false;
    }
    limit.rlim_cur = needed;
    // SAFETY: setrlimit reads the struct it is given; raising the soft
    // limit up to the hard one needs no privilege.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 }
}

/// When at most this many lanes of `lanes` are busy and nothing is left to
/// refill them with, the rest is finished one stream at a time: a SIMD step
/// costs the same with one busy lane as with all of them.
fn tail_threshold(lanes: usize) -> usize {
    (lanes / 8).max(1)
}

impl BatchHasher for MultiBufferHasher {
    /// Lanes stay busy across batches, so batches only need to be large
    /// enough to refill them.
    fn max_batch(&self) -> usize {
        crate::engine::MAX_BATCH_FILES
    }

    fn hash_batch(
        &mut self,
        algorithm: Algorithm,
        batch: &mut Vec<Job>,
        done: &mut dyn FnMut(Job, Result<Hashed, ErrorKind>),
    ) {
        if algorithm != self.kernel.algorithm() {
            return self.scalar.hash_batch(algorithm, batch, done);
        }
        self.pending.extend(batch.drain(..));
        self.run(algorithm, false, done);
    }

    fn in_flight(&self) -> bool {
        !self.pending.is_empty() || self.lanes.iter().any(Lane::is_busy)
    }

    fn flush(
        &mut self,
        algorithm: Algorithm,
        done: &mut dyn FnMut(Job, Result<Hashed, ErrorKind>),
    ) {
        self.run(algorithm, true, done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use md5::Digest as _;
    use proptest::prelude::*;
    use std::io::Write as _;
    use std::path::PathBuf;

    fn reference(data: &[u8]) -> Digest {
        Digest::from_bytes(&md5::Md5::digest(data))
    }

    /// The digest of `data` by the reference crate for `kernel`.
    fn reference_for(kernel: Kernel, data: &[u8]) -> Digest {
        match kernel {
            Kernel::Md5(_) => reference(data),
            Kernel::Sha1(_) => Digest::from_bytes(&sha1::Sha1::digest(data)),
        }
    }

    /// Every kernel this CPU runs: MD5 at each width, SHA-1 at each width.
    fn kernels() -> Vec<Kernel> {
        let sha1 = [
            Sha1Width::Avx2,
            Sha1Width::Avx2x2,
            Sha1Width::Avx512,
            Sha1Width::Avx512x2,
        ]
        .into_iter()
        .filter(|w| w.is_supported())
        .map(Kernel::Sha1);
        LaneWidth::supported()
            .into_iter()
            .map(Kernel::Md5)
            .chain(sha1)
            .collect()
    }

    /// Hashes `files` (contents) with MD5 at `width`, in batches taken
    /// while earlier ones are in flight; each job's result by index.
    fn run(
        width: LaneWidth,
        dir: &std::path::Path,
        files: &[Vec<u8>],
    ) -> Vec<Result<Hashed, String>> {
        let files: Vec<(Vec<u8>, Option<u64>)> = files.iter().map(|f| (f.clone(), None)).collect();
        run_with_failures(Kernel::Md5(width), dir, &files)
    }

    #[test]
    fn with_verification_a_file_changed_in_flight_fails_and_the_rest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let steady = dir.path().join("steady");
        let moving = dir.path().join("moving");
        std::fs::write(&steady, vec![1u8; 100_000]).unwrap();
        std::fs::write(&moving, vec![2u8; 100_000]).unwrap();
        for kernel in kernels() {
            let mut hasher = MultiBufferHasher::new(kernel, FileHasher::new()).verifying();
            let mut results = [None, None];
            let mut record = |job: Job, result: Result<Hashed, ErrorKind>| {
                results[job.operand] = Some(result);
            };
            let mut batch = vec![
                Job {
                    operand: 0,
                    seq: 0,
                    source: Operand::Path(steady.clone()),
                },
                Job {
                    operand: 1,
                    seq: 0,
                    source: Operand::Path(moving.clone()),
                },
            ];
            // Both files are opened into lanes and held (fewer than the
            // lanes: the stage waits for more before reading).
            hasher.hash_batch(kernel.algorithm(), &mut batch, &mut record);
            assert!(hasher.in_flight());
            std::fs::OpenOptions::new()
                .append(true)
                .open(&moving)
                .unwrap()
                .write_all(b"more")
                .unwrap();
            hasher.flush(kernel.algorithm(), &mut record);
            let steady_digest = results[0].take().unwrap().unwrap().digest;
            assert_eq!(steady_digest, reference_for(kernel, &vec![1u8; 100_000]));
            assert!(matches!(
                results[1].take().unwrap(),
                Err(ErrorKind::ChangedWhileReading)
            ));
            let verified = hasher.take_verified();
            assert_eq!(verified.len(), 1, "{kernel:?}");
            assert_eq!(verified[0].path, steady);
            assert_eq!(verified[0].digest, steady_digest);
            // The moving file is rewritten back to its old size for the next kernel.
            std::fs::write(&moving, vec![2u8; 100_000]).unwrap();
        }
    }

    #[test]
    fn the_block_edges_for_sha1_at_every_width() {
        let dir = tempfile::tempdir().unwrap();
        let lengths = [
            0usize, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 70_000,
        ];
        let files: Vec<(Vec<u8>, Option<u64>)> = lengths
            .iter()
            .map(|&n| ((0..n).map(|i| (i * 13 + n) as u8).collect(), None))
            .collect();
        for kernel in kernels()
            .into_iter()
            .filter(|k| k.algorithm() == Algorithm::Sha1)
        {
            let results = run_with_failures(kernel, dir.path(), &files);
            for (result, (content, _)) in results.into_iter().zip(&files) {
                let hashed = result.unwrap();
                assert_eq!(hashed.digest, reference_for(kernel, content), "{kernel:?}");
                assert_eq!(hashed.size, content.len() as u64);
            }
        }
    }

    #[test]
    fn the_block_edges_at_every_width() {
        let dir = tempfile::tempdir().unwrap();
        let lengths = [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000];
        let files: Vec<Vec<u8>> = lengths
            .iter()
            .map(|&n| (0..n).map(|i| (i * 13 + n) as u8).collect())
            .collect();
        for width in LaneWidth::supported() {
            for (result, content) in run(width, dir.path(), &files).into_iter().zip(&files) {
                let hashed = result.unwrap();
                assert_eq!(
                    hashed.digest,
                    reference(content),
                    "{} len {}",
                    width.name(),
                    content.len()
                );
                assert_eq!(hashed.size, content.len() as u64);
            }
        }
    }

    #[test]
    fn large_and_small_files_finish_in_any_order_and_refill_lanes() {
        let dir = tempfile::tempdir().unwrap();
        // More files than lanes, multi-MiB ones among them (several lane
        // buffers each), so lanes refill mid-run and the tail goes scalar.
        let sizes = [
            3 * 1024 * 1024 + 17,
            5,
            70_000,
            0,
            64,
            LANE_BUFFER,
            LANE_BUFFER + 1,
            1,
        ];
        let files: Vec<Vec<u8>> = (0..40)
            .map(|i| {
                let n = sizes[i % sizes.len()] + i;
                (0..n).map(|j| (j ^ (j >> 9) ^ i) as u8).collect()
            })
            .collect();
        for width in LaneWidth::supported() {
            for (result, content) in run(width, dir.path(), &files).into_iter().zip(&files) {
                assert_eq!(
                    result.unwrap().digest,
                    reference(content),
                    "{}",
                    width.name()
                );
            }
        }
    }

    #[test]
    fn a_file_that_fails_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let width = LaneWidth::best().unwrap_or(LaneWidth::Sse2);
        let good = dir.path().join("good");
        std::fs::write(&good, b"good bytes").unwrap();
        let mut batch = vec![
            Job {
                operand: 0,
                seq: 0,
                source: Operand::Path(dir.path().join("missing")),
            },
            Job {
                operand: 1,
                seq: 0,
                source: Operand::Path(good.clone()),
            },
            // A directory opens but cannot be read: EISDIR from the scalar path.
            Job {
                operand: 2,
                seq: 0,
                source: Operand::Path(dir.path().to_path_buf()),
            },
            // Reading it fails with EIO partway (procfs: length 0, scalar).
            Job {
                operand: 3,
                seq: 0,
                source: Operand::Path(PathBuf::from("/proc/self/mem")),
            },
        ];
        let mut hasher = MultiBufferHasher::new(Kernel::Md5(width), FileHasher::new());
        let mut outcomes = vec![None; 4];
        let mut record = |job: Job, result: Result<Hashed, ErrorKind>| {
            outcomes[job.operand] = Some(result.map(|h| h.digest).map_err(|e| e.to_string()));
        };
        hasher.hash_batch(Algorithm::Md5, &mut batch, &mut record);
        hasher.flush(Algorithm::Md5, &mut record);
        assert!(outcomes[0]
            .clone()
            .unwrap()
            .unwrap_err()
            .contains("No such file"));
        assert_eq!(
            outcomes[1].clone().unwrap().unwrap(),
            reference(b"good bytes")
        );
        assert!(outcomes[2].clone().unwrap().is_err());
        assert!(outcomes[3].clone().unwrap().is_err());
    }

    /// Files (content, fail after this many bytes) as one run at `width`:
    /// each result, by index.
    fn run_with_failures(
        kernel: Kernel,
        dir: &std::path::Path,
        files: &[(Vec<u8>, Option<u64>)],
    ) -> Vec<Result<Hashed, String>> {
        let mut batch: Vec<Job> = files
            .iter()
            .enumerate()
            .map(|(i, (content, fail))| {
                let name = match fail {
                    Some(at) => format!("fail-{at}-{i}"),
                    None => format!("f{i}"),
                };
                let path = dir.join(name);
                std::fs::write(&path, content).unwrap();
                Job {
                    operand: i,
                    seq: 0,
                    source: Operand::Path(path),
                }
            })
            .collect();
        let mut results = vec![None; files.len()];
        let mut hasher = MultiBufferHasher::new(kernel, FileHasher::new());
        let algorithm = kernel.algorithm();
        let mut record = |job: Job, result: Result<Hashed, ErrorKind>| {
            assert!(results[job.operand].is_none(), "reported twice");
            results[job.operand] = Some(result.map_err(|e| e.to_string()));
        };
        // Batches of random-ish sizes, as workers take them.
        while !batch.is_empty() {
            let take = (batch.len() / 3).max(1);
            let mut part: Vec<Job> = batch.drain(..take).collect();
            hasher.hash_batch(algorithm, &mut part, &mut record);
        }
        hasher.flush(algorithm, &mut record);
        assert!(!hasher.in_flight());
        results
            .into_iter()
            .map(|r| r.expect("every job reported"))
            .collect()
    }

    fn check_batch(files: &[(Vec<u8>, Option<u64>)]) -> Result<(), TestCaseError> {
        let dir = tempfile::tempdir().unwrap();
        for kernel in kernels() {
            let results = run_with_failures(kernel, dir.path(), files);
            for (result, (content, fail)) in results.into_iter().zip(files) {
                match fail {
                    Some(at) if (*at as usize) < content.len() => {
                        let error = result.unwrap_err();
                        prop_assert!(error.contains("injected"), "{}", error);
                    }
                    _ => prop_assert_eq!(
                        result.unwrap().digest,
                        reference_for(kernel, content),
                        "{:?}",
                        kernel
                    ),
                }
            }
        }
        Ok(())
    }

    fn batch_strategy(max_files: usize) -> impl Strategy<Value = Vec<(Vec<u8>, Option<u64>)>> {
        let length = prop_oneof![
            4 => 0usize..200,
            4 => 0usize..5000,
            2 => 60_000usize..140_000,
            1 => 1_000_000usize..3_000_000,
        ];
        let file = (
            length,
            any::<u8>(),
            proptest::option::weighted(0.1, 0u64..150_000),
        )
            .prop_map(|(len, seed, fail)| {
                let content = (0..len)
                    .map(|i| {
                        (i as u8)
                            .wrapping_mul(seed | 1)
                            .wrapping_add((i >> 8) as u8)
                    })
                    .collect();
                (content, fail)
            });
        proptest::collection::vec(file, 0..max_files)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        /// Random numbers of files, random lengths (0 to multi-MiB), lanes
        /// finishing in every order and refilled mid-run, files failing
        /// mid-read: every width against the `md-5` crate.
        #[test]
        fn any_batch_matches_md5_crate(files in batch_strategy(48)) {
            check_batch(&files)?;
        }
    }

    /// The long-running property target (minutes):
    /// `FASTSUM_SOAK_CASES=5000 cargo test --release -p fastsum -- --ignored lanes_soak`.
    #[test]
    #[ignore]
    fn lanes_soak() {
        let cases = std::env::var("FASTSUM_SOAK_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases));
        runner
            .run(&batch_strategy(120), |files| check_batch(&files))
            .unwrap();
    }
}
