//! The coreutils option table and the parsed options, with the checks
//! on option values that end a run before any work.

use crate::mode::run::Ended;
use std::io::Read;
use std::path::PathBuf;

use fastsum::pipeline::TreeOptions;
use fastsum::Algorithm;

use crate::mode::algorithms::Algorithms;
use crate::mode::run::Run;
use crate::personality::{Tool, ToolKind};

/// The options of one run, after parsing.
pub(super) struct Options {
    pub(super) check: bool,
    pub(super) status_only: bool,
    pub(super) warn: bool,
    pub(super) quiet: bool,
    pub(super) strict: bool,
    pub(super) ignore_missing: bool,
    pub(super) tag: bool,
    /// `--untagged`: GNU lines even where fastsum writes tagged ones.
    pub(super) untagged: bool,
    /// `--raw`.
    pub(super) raw: bool,
    /// The run's algorithm(s), resolved once (`algorithms.rs`): the only
    /// place it is held.
    pub(super) algorithms: Algorithms,
    /// `-b`/`-t`, the last given, if either was.
    pub(super) read_mode: Option<ReadMode>,
    pub(super) terminator: u8,
    /// fastsum's own options for many files. Their `algorithm` is not
    /// the run's: a hasher is built with [`Options::tree_options`], bound
    /// to `algorithms`.
    pub(super) tree: TreeOptions,
    pub(super) json: bool,
    /// `--format=hashdeep`: hashdeep's lists (a header, then
    /// `SIZE,DIGEST...,NAME`).
    pub(super) hashdeep: bool,
    /// `-c --format=NAME`: the lists are read in that format, not the one
    /// their content says.
    pub(super) check_format: Option<fastsum::manifest::list::ListFormat>,
    /// `-P`/`--no-follow`: symbolic links are not followed, even where
    /// the format follows them by default (hashdeep's lists).
    pub(super) no_follow: bool,
    pub(super) no_progress: bool,
    /// `--cache[=PATH]`: the cache file (None: no cache).
    pub(super) cache: Option<PathBuf>,
    pub(super) cache_stats: bool,
    /// `cksum --debug`: say which CRC implementation runs.
    pub(super) debug: bool,
    /// Operands were named: `cksum`'s and `sum`'s lines then end with the
    /// name (`cksum < f` prints none, `cksum -` prints `-`).
    pub(super) names_given: bool,
    /// `host:path` operands: the transport, a forced method, the remote
    /// fastsum (`-e`, `--remote-method`, `--remote-fastsum`).
    pub(super) remote: fastsum::remote::RemoteOptions,
    /// `-v`: say which remote method ran.
    pub(super) verbose: bool,
    /// `--download`: an `s3://` object with no digest S3 keeps in the
    /// form asked is streamed and hashed (`s3.rs`).
    pub(super) s3_download: bool,
    /// `--s3-path-style`: `s3://` operands addressed path-style, as `diff`.
    pub(super) s3_path_style: bool,
    /// `--update=MANIFEST`: the manifest, to be written again.
    pub(super) update: Option<Update>,
    /// `--prune-matching=FILE`: the directories whose records are left
    /// out where their digests match (`prune.rs`).
    pub(super) prune: Option<fastsum::dirdigest::Offers>,
    /// `--stamps`: JSON records carry each file's stamp (read verified).
    pub(super) stamps: bool,
    /// Digests known by their stamps without a cache: `--update` of a list
    /// written with `--stamps` answers unchanged files from the list.
    pub(super) answers: Option<fastsum::cache::CacheRun>,
    /// The same for a list of several digests a file (`multi.rs`): each
    /// unchanged file's digests, every algorithm's.
    pub(super) several_answers:
        Option<std::sync::Arc<fastsum::manifest::read::several::SeveralAnswers>>,
    /// `-c --signature --key --namespace`: the list's signature first.
    pub(super) signing: Signing,
    /// How records are printed (set once the settings are resolved).
    pub(super) renderer: fastsum::output::render::Renderer,
}

/// `--update`'s manifest (read whole while the tree is hashed:
/// `update.rs`).
pub(super) struct Update {
    pub(super) path: PathBuf,
    /// The old list, when it was read whole already (its stamps answer;
    /// a list of several digests a file is always): shared with the
    /// thread that would otherwise read it while the tree is hashed.
    pub(super) read: Option<std::sync::Arc<Listed>>,
    /// The list's stamp when it was read: another writer's change before
    /// the new list is put in its place (a line appended, the list
    /// replaced) leaves both as they are, never renamed over.
    pub(super) stamp: Option<fastsum::FileStamp>,
}

/// An old list as `--update` read it: one digest a file, or several.
pub(super) enum Listed {
    One(fastsum::manifest::read::Manifest),
    Several(fastsum::manifest::read::several::Several),
}

impl Listed {
    /// Each file's path and digests, in the list's order.
    pub(super) fn entries(&self) -> Vec<(&[u8], Option<u64>, &[fastsum::Digest])> {
        match self {
            Listed::One(list) => list
                .entries
                .iter()
                .map(|e| (&e.path[..], e.size, std::slice::from_ref(&e.digest)))
                .collect(),
            Listed::Several(list) => list
                .entries
                .iter()
                .map(|e| (&e.path[..], e.size, &e.digests[..]))
                .collect(),
        }
    }
}

impl Options {
    /// The defaults: `tool`'s, and nothing else asked for.
    pub(super) fn new(tool: Tool) -> Options {
        let algorithm = tool.default_algorithm;
        Options {
            check: false,
            status_only: false,
            warn: false,
            quiet: false,
            strict: false,
            ignore_missing: false,
            tag: false,
            untagged: false,
            raw: false,
            algorithms: Algorithms::new(tool),
            read_mode: None,
            terminator: b'\n',
            tree: TreeOptions::new(),
            json: false,
            hashdeep: false,
            check_format: None,
            no_follow: false,
            no_progress: false,
            cache: None,
            cache_stats: false,
            debug: false,
            names_given: false,
            remote: crate::term::remote_options(),
            update: None,
            prune: None,
            stamps: false,
            answers: None,
            several_answers: None,
            verbose: false,
            s3_download: false,
            s3_path_style: false,
            signing: Signing::default(),
            renderer: fastsum::output::render::Renderer::fastsum(algorithm, false),
        }
    }
}

pub(super) fn invalid_value(run: &mut Run, what: &str, value: &[u8]) -> Ended {
    let mut m = format!("invalid {what}: ").into_bytes();
    m.extend(run.quoting.quote(value));
    run.error(&m);
    run.usage_error(None)
}

/// A byte count: decimal, with an optional K, M or G suffix (powers of 1024).
pub(super) fn parse_size(value: &[u8]) -> Option<usize> {
    let (digits, unit) = match value.last()? {
        b'K' | b'k' => (&value[..value.len() - 1], 1 << 10),
        b'M' | b'm' => (&value[..value.len() - 1], 1 << 20),
        b'G' | b'g' => (&value[..value.len() - 1], 1 << 30),
        _ => (value, 1),
    };
    usize::try_from(parse_decimal(digits)?)
        .ok()?
        .checked_mul(unit)
}

/// `-l`'s `xnumtoumax(..., XTOINT_MAX_QUIET)`: a decimal number, and one
/// too large for 64 bits taken as the largest. gnulib reads a minus sign
/// too: minus zero is zero, and any other negative number is out of range
/// (`Err(Some(cause))`, which coreutils 9.11 names: EOVERFLOW's words).
pub(super) fn parse_length(value: &[u8]) -> Result<u64, Option<&'static str>> {
    if let Some(n) = parse_decimal(value) {
        return Ok(n);
    }
    let text = std::str::from_utf8(value).map_err(|_| None)?;
    let unsigned = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let digits_only = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if let Some(negative) = unsigned.strip_prefix('-') {
        return match digits_only(negative) {
            true if negative.bytes().all(|b| b == b'0') => Ok(0),
            true => Err(Some("Value too large for defined data type")),
            false => Err(None),
        };
    }
    let digits = unsigned.strip_prefix('+').unwrap_or(unsigned);
    match digits_only(digits) {
        true => Ok(u64::MAX),
        false => Err(None),
    }
}

/// coreutils' `xdectoumax`: optional blanks and '+', then decimal digits only.
pub(super) fn parse_decimal(value: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(value).ok()?;
    let digits = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let digits = digits.strip_prefix('+').unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

impl Options {
    /// Whether hashed lines are BSD-tagged (`ALGO (NAME) = HEX`): with
    /// `--tag`; for XXH3 always (its untagged line would read as XXH64's);
    /// and in fastsum's own mode for every algorithm but MD5 unless
    /// `--untagged`, as coreutils 9's `cksum -a` does, so that a plain
    /// `fastsum -c` knows what each line was written with (an
    /// untagged 64-digit digest could be SHA-256, BLAKE3 or BLAKE2b-256;
    /// 32 digits MD5 or XXH128). MD5, the default, stays md5sum's line.
    pub(super) fn tagged(&self, tool: Tool) -> bool {
        if tool.kind == ToolKind::Cksum {
            // coreutils' cksum: tagged unless --untagged came last.
            return !self.untagged;
        }
        self.tag
            || self.algorithms.one() == Algorithm::Xxh3
            || (tool.policy().tags_by_default
                && !self.untagged
                && self.algorithms.one() != Algorithm::Md5)
    }
}

/// Whether an operand looks like a cache file: named `*.sqlite`, or a
/// file that starts with SQLite's header.
pub(super) fn looks_like_a_cache(name: &[u8]) -> bool {
    if name.ends_with(b".sqlite") {
        return true;
    }
    let mut header = [0u8; 16];
    // Regular files only, never waiting: an operand that is a FIFO is not
    // a cache, and its bytes are the run's.
    fastsum::open_regular(&fastsum::name::path(name))
        .ok()
        .and_then(|mut f| f.read_exact(&mut header).ok())
        .is_some_and(|()| &header == b"SQLite format 3\0")
}

/// `--signature`, `--key`, `--namespace`.
#[derive(Default)]
pub(super) struct Signing {
    pub(super) signature: Option<PathBuf>,
    pub(super) key: Option<PathBuf>,
    pub(super) namespace: Option<String>,
}

impl Signing {
    pub(super) fn wanted(&self) -> bool {
        self.signature.is_some() || self.key.is_some() || self.namespace.is_some()
    }
}

/// How `-b` and `-t` say a file is read: the `*` or space before a GNU
/// line's name (the same bytes either way on POSIX).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadMode {
    /// `-t`/`--text`.
    Text,
    /// `-b`/`--binary`.
    Binary,
}
