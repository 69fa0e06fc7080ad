//! The multi-buffer hashing stage: many files' MD5s (or SHA-1s) advanced
//! together in SIMD lanes ([`crate::simd::md5`], [`crate::simd::sha1`]).
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

mod kernel;
mod lane;

use std::collections::VecDeque;
use std::fs::File;

pub use kernel::Kernel;
pub use lane::LANE_BUFFER;
pub(crate) use lane::{LaneRead, PlainRead};

use lane::{Lane, PADDING_ROOM};

use super::{BatchHasher, Hashed, Job, ScalarBatchHasher, Source, StageResult};
use crate::algo::Algorithm;
use crate::error::ErrorKind;
use crate::fs::dir::DirectoryCursor;
use crate::fs::limits::descriptors_for;
use crate::fs::regular::not_regular;
use crate::fs::stat::fstat;
use crate::fs::FileStamp;
use crate::read::FileHasher;
use crate::simd::platform::MAX_LANES;

/// What idle lanes compress (their results are thrown away).
static ZEROS: [u8; LANE_BUFFER + PADDING_ROOM] = [0; LANE_BUFFER + PADDING_ROOM];

/// The multi-buffer MD5 stage: see the module documentation. `R` is how
/// lanes read (tests inject faults there).
pub struct MultiBufferHasher<R: LaneRead = PlainRead> {
    kernel: Kernel,
    reader: R,
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
    /// Something else already open (a FIFO must not be opened twice), or
    /// a part of a file.
    Scalar(File),
    /// Standard input.
    Stdin,
}

impl MultiBufferHasher {
    /// A stage using `kernel`'s lanes, with `files` for what it passes to
    /// the scalar path (and for its progress counter).
    pub fn new(kernel: Kernel, files: FileHasher) -> Self {
        Self::with_reader(kernel, files, PlainRead)
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
}

impl<R: LaneRead> MultiBufferHasher<R> {
    /// A stage whose lanes read through `reader`.
    pub(crate) fn with_reader(kernel: Kernel, files: FileHasher, reader: R) -> Self {
        MultiBufferHasher {
            kernel,
            reader,
            lanes: (0..kernel.lanes()).map(|_| Lane::new()).collect(),
            pending: VecDeque::new(),
            scalar: ScalarBatchHasher::new(kernel.algorithm(), files),
            directory: DirectoryCursor::new(),
        }
    }

    fn open(directory: &mut DirectoryCursor, job: &Job) -> Result<Opened, ErrorKind> {
        let Source::Path(path) = &job.source else {
            return Ok(Opened::Stdin);
        };
        let file = directory.open(path, job.listed)?;
        let stamp = fstat(&file)?;
        if job.listed && !stamp.is_file() {
            return Err(not_regular(&stamp));
        }
        if !stamp.is_file() || stamp.size == 0 || !job.span.is_whole() {
            return Ok(Opened::Scalar(file));
        }
        Ok(Opened::Lane(file, stamp))
    }

    /// Runs the lanes. Without `drain`, returns as soon as a lane is idle
    /// and no job is pending to refill it (the caller brings more); with
    /// it, returns when every job taken is reported.
    fn run(&mut self, drain: bool, done: &mut dyn FnMut(Job, StageResult)) {
        let lane_count = self.lanes.len();
        loop {
            self.refill(done);
            let busy = self.lanes.iter().filter(|l| l.is_busy()).count();
            if self.pending.is_empty() {
                if busy == 0 || (!drain && busy < lane_count) {
                    return;
                }
                if drain && busy <= tail_threshold(lane_count) {
                    return self.finish_one_stream_at_a_time(done);
                }
            }
            if !self.read_where_short(done) {
                // Refill the failed lanes (or drain) before compressing.
                continue;
            }
            self.compress_and_report(done);
        }
    }

    /// Gives each idle lane the next pending file; what a lane does not
    /// take (standard input, a FIFO, a part of a file, an empty file, a
    /// file that fails to open) is hashed on the scalar path and reported
    /// at once.
    fn refill(&mut self, done: &mut dyn FnMut(Job, StageResult)) {
        for lane in self.lanes.iter_mut().filter(|l| !l.is_busy()) {
            while let Some(job) = self.pending.pop_front() {
                let result = match Self::open(&mut self.directory, &job) {
                    Ok(Opened::Lane(file, stamp)) => {
                        let opened = (job.verify && stamp.can_be_verified()).then_some(stamp);
                        lane.start(job, file, stamp.size, self.kernel.initial_state(), opened);
                        break;
                    }
                    Ok(Opened::Scalar(file)) => self.scalar.hash_open(&file, job.span, job.verify),
                    Ok(Opened::Stdin) => self.scalar.hash_job(&job),
                    Err(e) => Err(e),
                };
                done(job, result);
            }
        }
    }

    /// The tail: the last few files finished one stream at a time (a file
    /// not read yet takes the scalar path whole, mapped if large: a lone
    /// 1 GiB file is hashed as it always was).
    fn finish_one_stream_at_a_time(&mut self, done: &mut dyn FnMut(Job, StageResult)) {
        for lane in self.lanes.iter_mut().filter(|l| l.is_busy()) {
            let result = lane
                .finish_scalar(self.kernel, &mut self.reader, self.scalar.files())
                .and_then(|hashed| lane.verify(hashed));
            let job = lane.clear().expect("busy");
            done(job, result);
        }
    }

    /// Reads where a busy lane has less than a block; a lane whose read
    /// fails is reported and cleared. False if any failed.
    fn read_where_short(&mut self, done: &mut dyn FnMut(Job, StageResult)) -> bool {
        let mut ok = true;
        let big_endian = self.kernel.big_endian();
        for lane in self.lanes.iter_mut().filter(|l| l.is_busy()) {
            if lane.ready_blocks() > 0 {
                continue;
            }
            if let Err(e) = lane.fill(&mut self.reader, self.scalar.files(), big_endian) {
                let job = lane.clear().expect("busy");
                done(job, Err(e.into()));
                ok = false;
            }
        }
        ok
    }

    /// Compresses the blocks every busy lane has ready (as many as the
    /// shortest has), then reports the lanes whose files are done.
    fn compress_and_report(&mut self, done: &mut dyn FnMut(Job, StageResult)) {
        let lane_count = self.lanes.len();
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
        for (i, lane) in self.lanes.iter_mut().enumerate() {
            if !lane.is_busy() {
                continue;
            }
            lane.state = states[i];
            lane.start += blocks * 64;
            if lane.is_done() {
                let hashed = Hashed::new(lane.digest(self.kernel), lane.read);
                let result = lane.verify(hashed);
                let job = lane.clear().expect("busy");
                done(job, result);
            }
        }
    }
}

/// When at most this many lanes of `lanes` are busy and nothing is left to
/// refill them with, the rest is finished one stream at a time: a SIMD step
/// costs the same with one busy lane as with all of them.
fn tail_threshold(lanes: usize) -> usize {
    (lanes / 8).max(1)
}

/// Lanes stay busy across batches, so batches need only be large enough to
/// refill them: the default `max_batch` (`MAX_BATCH_FILES`) does.
impl<R: LaneRead> BatchHasher for MultiBufferHasher<R> {
    fn hash_batch(&mut self, batch: &mut Vec<Job>, done: &mut dyn FnMut(Job, StageResult)) {
        self.pending.extend(batch.drain(..));
        self.run(false, done);
    }

    fn in_flight(&self) -> bool {
        !self.pending.is_empty() || self.lanes.iter().any(Lane::is_busy)
    }

    fn flush(&mut self, done: &mut dyn FnMut(Job, StageResult)) {
        self.run(true, done);
    }
}

#[cfg(test)]
mod tests;
