//! One run's state: where output and messages go, the exit status so
//! far, and the cache as `-c` uses it.

use std::path::PathBuf;
use std::sync::Arc;

use fastsum::cache::CacheRun;
use fastsum::{Algorithm, FileHasher};

use crate::personality::Tool;
use crate::term::count;
use crate::term::output::{Buffering, Output};

/// A run that ends early: what it had to say is said (through [`Run`]'s
/// messages, or `--help` on stdout), and this is the exit status it asks
/// (a command line refused is mapped to fastsum's 2 once, in
/// `mode::run_with`). A type of its own so that a count, a length or an
/// unsaid failure is not taken for an ended run.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::mode) struct Ended(pub(in crate::mode) i32);

/// One run of a coreutils-style tool.
pub(super) struct Run {
    pub(super) tool: Tool,
    /// `argv[0]` as given: getopt's messages and the "Try" line name the
    /// tool that way.
    pub(super) program: Vec<u8>,
    /// Its last component: coreutils 9.10's other messages start with it
    /// (gnulib's `error` prints `getprogname ()`).
    pub(super) name: Vec<u8>,
    pub(super) out: Output,
    pub(super) quoting: crate::term::Quoting,
    pub(super) hasher: FileHasher,
    /// The cache for `-c` runs, when it could be opened: a session per
    /// algorithm met in the lists, loaded on first use.
    pub(super) check_cache: Option<CacheRun>,
    /// `cksum --debug` has said which CRC runs (once per run).
    pub(super) said_debug: bool,
    /// `-c`'s progress bar, while one runs: its counters (fed by the
    /// pipeline) and its display, which output is written around.
    pub(super) progress: Option<(Arc<fastsum::Progress>, Arc<crate::term::progress::Display>)>,
    /// A failed write is said with its cause (coreutils 9.10 checks each
    /// digest line as it goes); `cksum`'s and `sum`'s own lines only at
    /// exit, where the cause is lost (`write error`).
    pub(super) write_error_cause: bool,
    /// `--update`: each file's path and digest as it is written, to say
    /// what changed without reading the new list back.
    pub(super) written: Option<Written>,
    /// Work began (a list is read, help written): a failure from here on
    /// is not a command line refused (fastsum's exit status 2).
    pub(super) working: bool,
    /// fastsum's own mode: what a failed operand's message adds.
    pub(super) hints: crate::mode::hint::Hints,
    /// A list's signature was refused (`check/signed.rs`): the run exits 2.
    pub(super) signature_refused: bool,
    /// An operand could not be taken (an empty name in `--files0-from`):
    /// the run's status is 1 whatever else happens.
    pub(super) operand_errors: bool,
}

impl Run {
    /// A run of `tool`, called as `program`.
    pub(super) fn new(tool: Tool, program: Vec<u8>) -> Run {
        let name = match program.iter().rposition(|&b| b == b'/') {
            Some(slash) => program[slash + 1..].to_vec(),
            None => program.clone(),
        };
        Run {
            tool,
            program,
            name,
            out: Output::new(Buffering::Line),
            quoting: crate::term::Quoting::from_locale(),
            hasher: FileHasher::new(),
            check_cache: None,
            said_debug: false,
            write_error_cause: true,
            written: None,
            progress: None,
            working: false,
            hints: Default::default(),
            signature_refused: false,
            operand_errors: false,
        }
    }

    pub(super) fn error(&mut self, message: &[u8]) {
        // A long message (one naming a 200 MB path) is written in its
        // parts, not copied once more into one line.
        if message.len() > 64 * 1024 {
            let name = self.name.clone();
            return self.around_the_bar(|out| out.err_parts(&[&name, b": ", message, b"\n"]));
        }
        let mut line = self.name.clone();
        line.extend_from_slice(b": ");
        line.extend_from_slice(message);
        line.push(b'\n');
        self.around_the_bar(|out| out.err_raw(&line));
    }

    /// A notice, not trouble (links left out): silenced by fastsum's `-q`.
    pub(super) fn notice(&mut self, message: &[u8]) {
        if !crate::term::quiet() {
            self.error(message);
        }
    }

    /// Runs `write` with the progress bar (if one is drawn) off the screen.
    pub(super) fn around_the_bar(&mut self, write: impl FnOnce(&mut Output)) {
        match self.progress.as_ref().map(|(_, d)| d.clone()) {
            Some(display) if display.visible() => display.suspend(|| {
                write(&mut self.out);
                self.out.flush_held();
            }),
            _ => write(&mut self.out),
        }
    }

    /// An operand that could not be hashed, with fastsum's hints.
    pub(super) fn hashing_error(&mut self, name: &[u8], kind: &fastsum::ErrorKind) {
        let mut line = self.name.clone();
        line.extend_from_slice(b": ");
        line.extend(self.quoting.quotef(name));
        line.extend_from_slice(format!(": {kind}\n").as_bytes());
        self.hints.amend(&self.name, name, kind, &mut line);
        self.around_the_bar(|out| out.err_raw(&line));
    }

    pub(super) fn file_error(&mut self, name: &[u8], cause: &str) {
        let mut message = self.quoting.quotef(name);
        // Exactly: a 200 MB name's message is not doubled to grow.
        message.reserve_exact(2 + cause.len());
        message.extend_from_slice(b": ");
        message.extend_from_slice(cause.as_bytes());
        self.error(&message);
    }

    /// getopt's complaint (`PROGRAM: unrecognized option ...`, the
    /// program as called), then the "Try" line; exit status 1.
    pub(super) fn getopt_error(&mut self, message: &[u8]) -> Ended {
        let mut line = self.program.clone();
        line.extend_from_slice(b": ");
        line.extend_from_slice(message);
        line.push(b'\n');
        self.out.err_raw(&line);
        self.usage_error(None)
    }

    /// A usage error: the message, then the "Try" line; exit status 1.
    /// The first of `refused` that was given, said as a usage error
    /// (`Err` is the exit status): options that do not go together.
    pub(super) fn refuse_first(&mut self, refused: &[(bool, &str)]) -> Result<(), Ended> {
        match refused.iter().find(|(given, _)| *given) {
            Some((_, m)) => Err(self.usage_error(Some(m))),
            None => Ok(()),
        }
    }

    pub(super) fn usage_error(&mut self, message: Option<&str>) -> Ended {
        if let Some(m) = message {
            self.error(m.as_bytes());
        }
        let mut line = b"Try '".to_vec();
        line.extend_from_slice(&self.program);
        line.extend_from_slice(b" --help' for more information.\n");
        self.out.err_raw(&line);
        Ended(1)
    }

    /// The run ends here with `status`: its output flushed (a write that
    /// failed makes it 1, said, as [`Run::finish`]).
    pub(super) fn ended_by_finish(&mut self, status: i32) -> Ended {
        Ended(self.finish(status))
    }

    /// coreutils 9.10 checks stdout after each digest line and `-c`
    /// verdict: a write that failed ends the run at once, with its cause
    /// (`write error: No space left on device`), so that endless input
    /// to a full disk does not run on. (Its `cksum` and `sum` lines are
    /// not checked: their failure is found at exit, `finish`.)
    pub(super) fn stop_if_unwritable(&mut self) {
        if !self.tool.policy().stops_on_write_error {
            return;
        }
        if !self.write_error_cause {
            return;
        }
        if let Some(e) = self.out.write_error() {
            let m = format!("write error: {}", fastsum::Error::os_message(e));
            self.error(m.as_bytes());
            std::process::exit(1);
        }
    }

    /// Flushes standard output; a failed write is reported as the tool
    /// imitated reports it, and makes the status 1.
    pub(super) fn finish(&mut self, status: i32) -> i32 {
        match self.out.finish() {
            Ok(()) => status,
            // coreutils' close_stdout: a write that failed earlier left
            // the stream's error flag set, so close_stream clears errno and
            // the message has no cause ("cksum: write error"): cksum's and
            // sum's own lines and --help, which are not checked line by line.
            Err(_) if self.tool.policy().bare_write_error && !self.write_error_cause => {
                self.error(b"write error");
                1
            }
            Err(e) => {
                self.error(format!("write error: {}", fastsum::Error::os_message(&e)).as_bytes());
                1
            }
        }
    }
}

/// Says what `cache` has to tell (a file moved aside and rebuilt, a cache
/// that could not be opened, loaded or stored), each once.
pub(super) fn say_notices(run: &mut Run, cache: &mut CacheRun) {
    crate::term::cache::say_notices(cache, &mut |m| run.error(m.as_bytes()));
}

/// `--cache-stats`: what the cache saved, on stderr.
/// The misses not kept are said with why: a fresh copy's files are all
/// too recent, and its next run's misses would look like a broken cache.
pub(super) fn print_cache_stats(run: &mut Run, stats: &fastsum::cache::RunStats) {
    let mut line = format!(
        "cache: {}, {}, {}, {}",
        count(stats.hits, "hit", "hits"),
        count(stats.misses, "miss", "misses"),
        count(stats.racy_rereads, "racy re-read", "racy re-reads"),
        count(stats.bytes_read, "byte read", "bytes read")
    );
    if stats.too_recent > 0 {
        line.push_str(&format!(
            "; {} too recent to keep (changed less than {} s before the run; \
             kept once unchanged that long)",
            count(stats.too_recent, "file", "files"),
            stats.settle_window.as_secs()
        ));
    }
    if stats.untrusted > 0 {
        line.push_str(&format!(
            "; {} not kept (no stamp to trust: tmpfs, a generated file system ...)",
            count(stats.untrusted, "file", "files"),
        ));
    }
    run.error(line.as_bytes());
}

impl Run {
    /// The program's name as messages start with it.
    pub(super) fn program(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }
}

impl Run {
    /// Whether `-c`'s cache answers `algorithm`, its entries loaded on
    /// first use; quietly not when they cannot be loaded (the lines of
    /// that algorithm are hashed uncached: `digests::prefetch_digests`).
    /// What the cache has to tell is said.
    pub(super) fn check_cache_serves(&mut self, algorithm: Algorithm) -> bool {
        let Some(mut cache) = self.check_cache.take() else {
            return false;
        };
        let loaded = cache.load(algorithm, &[PathBuf::from("/")]).is_ok();
        let served = loaded && cache.serves(algorithm);
        say_notices(self, &mut cache);
        self.check_cache = Some(cache);
        served
    }

    /// `hasher` answering from `-c`'s cache (one that serves its
    /// algorithm: see [`Run::check_cache_serves`]).
    pub(super) fn check_cached(&self, hasher: fastsum::TreeHasher) -> fastsum::TreeHasher {
        match &self.check_cache {
            Some(cache) => crate::term::cached(&self.program(), hasher, cache),
            None => hasher,
        }
    }
}

/// The names and digests a run printed (`--update` compares them with
/// the old list): the names in one buffer and the digests in another
/// (several `-a`: each file's, in the run's order), not one allocation
/// each.
#[derive(Default)]
pub(super) struct Written {
    names: Vec<u8>,
    digests: Vec<fastsum::Digest>,
    /// Each entry's size: bytes read.
    sizes: Vec<u64>,
    /// Where each entry's name and digests end.
    entries: Vec<(usize, usize)>,
}

impl Written {
    pub(super) fn push(&mut self, name: &[u8], size: u64, digests: &[fastsum::Digest]) {
        self.sizes.push(size);
        self.names.extend_from_slice(name);
        self.digests.extend_from_slice(digests);
        self.entries.push((self.names.len(), self.digests.len()));
    }

    /// Each (name, size, digests), in the order printed.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&[u8], u64, &[fastsum::Digest])> {
        let starts = std::iter::once((0, 0)).chain(self.entries.iter().copied());
        starts.zip(&self.entries).zip(&self.sizes).map(
            |(((name, digest), (name_end, digest_end)), size)| {
                (
                    self.names.get(name..*name_end).unwrap_or_default(),
                    *size,
                    self.digests.get(digest..*digest_end).unwrap_or_default(),
                )
            },
        )
    }
}
