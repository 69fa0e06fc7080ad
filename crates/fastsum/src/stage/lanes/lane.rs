//! One lane: a file's state in the SIMD registers' lane, its buffer, how
//! far it is read; and the seam through which lanes read (where tests
//! inject faults).

use std::fs::File;
use std::io::{self, Read};

use super::kernel::Kernel;
use crate::digest::Digest;
use crate::error::ErrorKind;
use crate::fs::stat::fstat;
use crate::fs::FileStamp;
use crate::read::FileHasher;
use crate::stage::{Hashed, Job, StageResult};

/// Bytes each lane reads at a time: 16 lanes of 64 KiB are 1 MiB of
/// buffers per worker, and one `read` takes most files whole.
pub const LANE_BUFFER: usize = 64 * 1024;

/// Room after the data for MD5's padding (at most 72 bytes).
pub(super) const PADDING_ROOM: usize = 128;

/// How a lane reads its file. Production reads with `read(2)`
/// ([`PlainRead`]); tests put a reader here that fails where they say.
pub(crate) trait LaneRead: Send {
    /// Whether `job`'s file, not read by the lanes yet, may be finished
    /// whole on the scalar path (which reads without this seam).
    fn whole_to_scalar(&self, job: &Job) -> bool {
        let _ = job;
        true
    }

    /// Reads into `buffer` from `file`, which is `job`'s file at byte
    /// `offset` (reads are sequential).
    fn read(
        &mut self,
        job: &Job,
        file: &mut File,
        offset: u64,
        buffer: &mut [u8],
    ) -> io::Result<usize>;
}

/// `read(2)`, nothing more.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PlainRead;

impl LaneRead for PlainRead {
    fn read(&mut self, _: &Job, file: &mut File, _: u64, buffer: &mut [u8]) -> io::Result<usize> {
        file.read(buffer)
    }
}

/// One lane: a file being hashed, or nothing.
pub(super) struct Lane {
    pub(super) job: Option<Job>,
    pub(super) file: Option<File>,
    pub(super) state: [u32; 5],
    pub(super) buffer: Box<[u8]>,
    /// Unhashed bytes are `buffer[start..end]`; `start` is a whole number
    /// of blocks into the stream.
    pub(super) start: usize,
    pub(super) end: usize,
    /// Bytes read from the file so far.
    pub(super) read: u64,
    /// `fstat`'s length: reading stops there.
    pub(super) len: u64,
    /// The padding is in the buffer: what is left are the final blocks.
    pub(super) padded: bool,
    /// The file's stamp when opened, when the job asks for its read to be
    /// verified.
    pub(super) opened: Option<FileStamp>,
}

impl Lane {
    pub(super) fn new() -> Self {
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
        }
    }

    pub(super) fn is_busy(&self) -> bool {
        self.job.is_some()
    }

    pub(super) fn ready_blocks(&self) -> usize {
        (self.end - self.start) / 64
    }

    pub(super) fn start(
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
    }

    /// Reads until the buffer is full or the file is done (then pads).
    /// Counts the bytes read in `files`' progress.
    pub(super) fn fill<R: LaneRead>(
        &mut self,
        reader: &mut R,
        files: &FileHasher,
        big_endian: bool,
    ) -> io::Result<()> {
        if self.padded {
            return Ok(());
        }
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        let file = self.file.as_mut().expect("a busy lane has its file");
        let job = self.job.as_ref().expect("a busy lane has its job");
        while self.end < LANE_BUFFER {
            let left = self.len - self.read;
            if left == 0 {
                break;
            }
            let want = (LANE_BUFFER - self.end).min(usize::try_from(left).unwrap_or(usize::MAX));
            match reader.read(
                job,
                file,
                self.read,
                &mut self.buffer[self.end..self.end + want],
            ) {
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
    pub(super) fn pad(&mut self, big_endian: bool) {
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

    pub(super) fn is_done(&self) -> bool {
        self.padded && self.start == self.end
    }

    pub(super) fn digest(&self, kernel: Kernel) -> Digest {
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
    pub(super) fn finish_scalar<R: LaneRead>(
        &mut self,
        kernel: Kernel,
        reader: &mut R,
        files: &mut FileHasher,
    ) -> StageResult {
        let job = self.job.as_ref().expect("a busy lane has its job");
        if self.read == 0 && !self.padded && reader.whole_to_scalar(job) {
            let file = self.file.as_ref().expect("a busy lane has its file");
            let (digest, size) = files.hash_file_counted(kernel.algorithm(), file)?;
            self.read = size;
            return Ok(Hashed::new(digest, size));
        }
        loop {
            if self.ready_blocks() == 0 {
                self.fill(reader, files, kernel.big_endian())?;
            }
            let ready = self.start + self.ready_blocks() * 64;
            kernel.compress_one(&mut self.state, &self.buffer[self.start..ready]);
            self.start = ready;
            if self.is_done() {
                return Ok(Hashed::new(self.digest(kernel), self.read));
            }
        }
    }

    /// For a job that asks for a verified read: the file's stamp again,
    /// on the descriptor still open; a file that changed while it was read
    /// is [`ErrorKind::ChangedWhileReading`], else the result carries the
    /// stamp.
    pub(super) fn verify(&self, hashed: Hashed) -> StageResult {
        let (Some(opened), Some(file)) = (self.opened, self.file.as_ref()) else {
            return Ok(hashed);
        };
        let after = fstat(file)?;
        if !opened.held_through(&after, Some(hashed.size)) {
            return Err(ErrorKind::ChangedWhileReading);
        }
        Ok(Hashed {
            stamp: Some(opened),
            ..hashed
        })
    }

    pub(super) fn clear(&mut self) -> Option<Job> {
        self.file = None;
        self.opened = None;
        self.job.take()
    }
}
