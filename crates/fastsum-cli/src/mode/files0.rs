//! `--files0-from=F`: the operands as NUL-terminated names read from F
//! (`-`: standard input), coreutils' convention for `du` and `wc`, so that
//! `find ... -print0 | fastsum --files0-from=-` takes any name.
//!
//! The names are read as a stream, a bounded batch at a time
//! (4M names held at once took 458 MB; `du --files0-from` holds one): the
//! run hashes and prints a batch before it reads the next, in the list's
//! order.

use crate::mode::run::Ended;
use std::io::{BufRead, BufReader};

use crate::mode::run::Run;

/// The most names a batch holds, and the most bytes of names: a batch
/// stays a few MB whatever the list's length (64Ki names of ~100 bytes).
const BATCH_NAMES: usize = 1 << 16;
const BATCH_BYTES: usize = 8 << 20;

/// A `--files0-from` list being read.
pub(super) struct Names {
    source: Vec<u8>,
    reader: Box<dyn BufRead>,
    /// How many names (empty ones too) were read: a message's `F:N:`.
    seen: usize,
    done: bool,
}

impl Names {
    /// Opens `source`; `Err(status)` (the message out) if it cannot be.
    pub(super) fn open(run: &mut Run, source: &[u8]) -> Result<Names, Ended> {
        run.working = true;
        let reader: Box<dyn BufRead> = match source {
            b"-" => Box::new(BufReader::new(std::io::stdin())),
            path => match std::fs::File::open(&*fastsum::name::path(path)) {
                Ok(file) => Box::new(BufReader::new(file)),
                Err(e) => return Err(cannot_read(run, source, &e)),
            },
        };
        Ok(Names {
            source: source.to_vec(),
            reader,
            seen: 0,
            done: false,
        })
    }

    /// The next batch of names (empty when the list is done). An empty
    /// name is said (`F:N: invalid zero-length file name`, as du says it)
    /// and left out, as is a name `-` when the list is standard input;
    /// the run's `operand_errors` is set. `Err(status)` if the list cannot
    /// be read on.
    pub(super) fn next_batch(&mut self, run: &mut Run) -> Result<Vec<Vec<u8>>, Ended> {
        let (mut names, mut bytes) = (Vec::new(), 0);
        while !self.done && names.len() < BATCH_NAMES && bytes < BATCH_BYTES {
            let mut name = Vec::new();
            match fastsum::manifest::lines::read_line(&mut self.reader, 0, &mut name) {
                Ok(0) => {
                    self.done = true;
                    break;
                }
                Ok(_) => {}
                // Said as before a name was taken (a directory given as
                // the list fails here, on its first read).
                Err(e) => return Err(cannot_read(run, &self.source, &e)),
            }
            if name.last() == Some(&0) {
                name.pop();
            } else {
                // The last name needs no terminator.
                self.done = true;
            }
            self.seen += 1;
            if self.refused(run, &name) {
                run.operand_errors = true;
                continue;
            }
            bytes += name.len();
            names.push(name);
        }
        Ok(names)
    }

    /// Every name left, in one vector (for the runs that need the whole
    /// set at once: `--update`, `--prune-matching`, `-c`, `--raw`).
    pub(super) fn read_all(&mut self, run: &mut Run) -> Result<Vec<Vec<u8>>, Ended> {
        let mut all = Vec::new();
        loop {
            let batch = self.next_batch(run)?;
            if batch.is_empty() && self.done {
                return Ok(all);
            }
            all.extend(batch);
        }
    }

    /// True when the list is read to its end.
    pub(super) fn done(&self) -> bool {
        self.done
    }

    /// Says why `name` cannot be an operand, if it cannot.
    fn refused(&self, run: &mut Run, name: &[u8]) -> bool {
        if name.is_empty() {
            let mut m = match &self.source[..] {
                b"-" => b"-".to_vec(),
                source => run.quoting.quote(source),
            };
            let at = format!(":{}: invalid zero-length file name", self.seen);
            m.extend_from_slice(at.as_bytes());
            run.error(&m);
            return true;
        }
        if name == b"-" && self.source == b"-" {
            // Standard input is the list: it cannot be an operand too
            // (du's and wc's words).
            run.error(b"when reading file names from stdin, no file name of '-' allowed");
            return true;
        }
        false
    }
}

/// `cannot open F for reading: CAUSE`, du's words for either failure; the
/// status to exit with.
pub(super) fn cannot_read(run: &mut Run, source: &[u8], e: &std::io::Error) -> Ended {
    let mut m = b"cannot open ".to_vec();
    m.extend(run.quoting.quote(source));
    m.extend_from_slice(b" for reading: ");
    m.extend_from_slice(fastsum::Error::os_message(e).as_bytes());
    run.error(&m);
    Ended(1)
}
