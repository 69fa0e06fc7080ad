//! The coreutils personality: `md5sum`, `sha1sum`, `sha224sum`,
//! `sha256sum`, `sha384sum`, `sha512sum`, `b2sum`, and fastsum's own
//! interface, which is the same with `-a ALGORITHM` added.
//!
//! This follows coreutils 9.1 `src/digest.c` step by step: option order and
//! conflicts, which errors end the run and which only fail one file, the
//! per-line check output, the WARNING summaries and the exit status.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use fastsum::cache::{Cache, CacheSession, CachingBatchHasher};
use fastsum::engine::{self, Operand, Order, Outcome, Progress, Record, TreeOptions};
use fastsum::manifest::{self, gnu as gnu_lines, write_escaped};
use fastsum::multibuffer::MultiBufferHasher;
use fastsum::{Algorithm, ErrorKind, FileHasher, ReadStrategy};
use std::sync::Arc;

use crate::getopt::{Getopt, HasArg, OptSpec};
use crate::output::{Buffering, Output};
use crate::quote::{quote, quotef, utf8_locale};

/// Which coreutils program is being imitated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tool {
    /// The program's official name (`md5sum`), for help and version text.
    pub name: &'static str,
    /// Its algorithm.
    pub algorithm: Algorithm,
    /// What sets it apart.
    pub kind: ToolKind,
}

/// The three shapes of the coreutils front end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolKind {
    /// md5sum and the sha*sum tools.
    Fixed,
    /// b2sum: `-l BITS`.
    Blake2,
    /// fastsum itself: `-a ALGORITHM`, and `-l BITS` for blake2b.
    Fastsum,
}

impl Tool {
    /// The coreutils tool invoked under `name`, if any.
    pub fn from_program_name(name: &str) -> Option<Tool> {
        let (algorithm, kind) = match name {
            "md5sum" => (Algorithm::Md5, ToolKind::Fixed),
            "sha1sum" => (Algorithm::Sha1, ToolKind::Fixed),
            "sha224sum" => (Algorithm::Sha224, ToolKind::Fixed),
            "sha256sum" => (Algorithm::Sha256, ToolKind::Fixed),
            "sha384sum" => (Algorithm::Sha384, ToolKind::Fixed),
            "sha512sum" => (Algorithm::Sha512, ToolKind::Fixed),
            "b2sum" => (Algorithm::BLAKE2B, ToolKind::Blake2),
            _ => return None,
        };
        let name = match algorithm {
            Algorithm::Md5 => "md5sum",
            Algorithm::Sha1 => "sha1sum",
            Algorithm::Sha224 => "sha224sum",
            Algorithm::Sha256 => "sha256sum",
            Algorithm::Sha384 => "sha384sum",
            Algorithm::Sha512 => "sha512sum",
            _ => "b2sum",
        };
        Some(Tool {
            name,
            algorithm,
            kind,
        })
    }

    /// fastsum's own interface.
    pub const FASTSUM: Tool = Tool {
        name: "fastsum",
        algorithm: Algorithm::Md5,
        kind: ToolKind::Fastsum,
    };
}

fn specs(kind: ToolKind) -> Vec<OptSpec> {
    let spec =
        |short: Option<u8>, long: &'static str, has_arg: HasArg, key: &'static str| OptSpec {
            short,
            long: Some(long),
            has_arg,
            key,
        };
    let mut specs = Vec::new();
    if kind == ToolKind::Fastsum {
        specs.extend([
            spec(Some(b'a'), "algorithm", HasArg::Required, "a"),
            spec(Some(b'r'), "recursive", HasArg::No, "r"),
            spec(Some(b'j'), "threads", HasArg::Required, "j"),
            spec(None, "unordered", HasArg::No, "unordered"),
            spec(Some(b'L'), "follow", HasArg::No, "L"),
            spec(None, "one-file-system", HasArg::No, "one-file-system"),
            spec(None, "exclude", HasArg::Required, "exclude"),
            spec(None, "json", HasArg::No, "json"),
            spec(None, "no-progress", HasArg::No, "no-progress"),
            spec(None, "io", HasArg::Required, "io"),
            spec(None, "read-size", HasArg::Required, "read-size"),
            spec(None, "cache", HasArg::Optional, "cache"),
            spec(None, "cache-stats", HasArg::No, "cache-stats"),
        ]);
    }
    if kind != ToolKind::Fixed {
        specs.push(spec(Some(b'l'), "length", HasArg::Required, "l"));
    }
    specs.extend([
        spec(Some(b'c'), "check", HasArg::No, "c"),
        spec(None, "ignore-missing", HasArg::No, "ignore-missing"),
        spec(None, "quiet", HasArg::No, "quiet"),
        spec(None, "status", HasArg::No, "status"),
        spec(Some(b'w'), "warn", HasArg::No, "w"),
        spec(None, "strict", HasArg::No, "strict"),
        spec(None, "tag", HasArg::No, "tag"),
        spec(Some(b'z'), "zero", HasArg::No, "z"),
        spec(Some(b'b'), "binary", HasArg::No, "b"),
        spec(Some(b't'), "text", HasArg::No, "t"),
        spec(
            if kind == ToolKind::Fastsum {
                Some(b'h')
            } else {
                None
            },
            "help",
            HasArg::No,
            "help",
        ),
        spec(None, "version", HasArg::No, "version"),
    ]);
    specs
}

/// The options of one run, after parsing.
struct Options {
    algorithm: Algorithm,
    check: bool,
    status_only: bool,
    warn: bool,
    quiet: bool,
    strict: bool,
    ignore_missing: bool,
    tag: bool,
    /// -1: not given; 0: text; 1: binary.
    binary: i8,
    terminator: u8,
    /// fastsum's own options for many files.
    tree: TreeOptions,
    json: bool,
    no_progress: bool,
    /// `--cache[=PATH]`: the cache file (None: no cache).
    cache: Option<PathBuf>,
    cache_stats: bool,
}

/// One run of a coreutils-style tool.
struct Run {
    tool: Tool,
    /// `argv[0]` as given: GNU tools name themselves that way in messages.
    program: Vec<u8>,
    out: Output,
    utf8: bool,
    hasher: FileHasher,
    /// The cache for `-c` runs, opened on first use: sessions by algorithm.
    check_cache: Option<CheckCache>,
}

/// The cache as `-c` uses it: one session per algorithm met in the lists.
struct CheckCache {
    cache: Cache,
    sessions: Vec<(Algorithm, Arc<CacheSession>)>,
}

impl Run {
    fn error(&mut self, message: &[u8]) {
        let mut line = self.program.clone();
        line.extend_from_slice(b": ");
        line.extend_from_slice(message);
        line.push(b'\n');
        self.out.err_raw(&line);
    }

    fn file_error(&mut self, name: &[u8], cause: &str) {
        let mut message = quotef(name, self.utf8);
        message.extend_from_slice(b": ");
        message.extend_from_slice(cause.as_bytes());
        self.error(&message);
    }

    /// A usage error: the message, then the "Try" line; exit status 1.
    fn usage_error(&mut self, message: Option<&str>) -> i32 {
        if let Some(m) = message {
            self.error(m.as_bytes());
        }
        let mut line = b"Try '".to_vec();
        line.extend_from_slice(&self.program);
        line.extend_from_slice(b" --help' for more information.\n");
        self.out.err_raw(&line);
        1
    }

    fn finish(&mut self, status: i32) -> i32 {
        match self.out.finish() {
            Ok(()) => status,
            Err(e) => {
                self.error(format!("write error: {}", fastsum::error::os_message(&e)).as_bytes());
                1
            }
        }
    }
}

/// Runs `tool` with `args` (without `argv[0]`); returns the exit status.
pub fn run(tool: Tool, program: Vec<u8>, args: &[Vec<u8>]) -> i32 {
    let mut run = Run {
        tool,
        program,
        out: Output::new(Buffering::Line),
        utf8: utf8_locale(),
        hasher: FileHasher::new(),
        check_cache: None,
    };
    let mut o = Options {
        algorithm: tool.algorithm,
        check: false,
        status_only: false,
        warn: false,
        quiet: false,
        strict: false,
        ignore_missing: false,
        tag: false,
        binary: -1,
        terminator: b'\n',
        tree: TreeOptions::new(tool.algorithm),
        json: false,
        no_progress: false,
        cache: None,
        cache_stats: false,
    };
    let mut read_size: Option<usize> = None;
    let mut io_mode = "auto".to_string();
    let mut length_bits: Option<(u64, Vec<u8>)> = None;
    let specs = specs(tool.kind);
    let mut getopt = Getopt::new(args, &specs);
    for item in getopt.by_ref() {
        let opt = match item {
            Ok(opt) => opt,
            Err(message) => return run.usage_error(Some(&message)),
        };
        let value = opt.value.unwrap_or_default();
        match opt.key {
            "a" => match std::str::from_utf8(&value)
                .ok()
                .and_then(|v| v.parse::<Algorithm>().ok())
            {
                Some(a) => o.algorithm = a,
                None => return invalid_algorithm(&mut run, &value),
            },
            "l" => {
                let Some(bits) = parse_decimal(&value) else {
                    let mut m = b"invalid length: ".to_vec();
                    m.extend(quote(&value, run.utf8));
                    run.error(&m);
                    return 1;
                };
                if bits % 8 != 0 {
                    let mut m = b"invalid length: ".to_vec();
                    m.extend(quote(&value, run.utf8));
                    run.error(&m);
                    run.error(b"length is not a multiple of 8");
                    return 1;
                }
                length_bits = Some((bits, value));
            }
            "r" => o.tree.recursive = true,
            "j" => match parse_decimal(&value).and_then(|n| usize::try_from(n).ok()) {
                Some(0) => o.tree.threads = fastsum::engine::available_threads(),
                Some(n) => o.tree.threads = n,
                None => return invalid_value(&mut run, "number of threads", &value),
            },
            "unordered" => o.tree.order = Order::Unordered,
            "L" => o.tree.walk.follow_links = true,
            "one-file-system" => o.tree.walk.one_file_system = true,
            "exclude" => o
                .tree
                .walk
                .excludes
                .push(String::from_utf8_lossy(&value).into_owned()),
            "json" => o.json = true,
            "no-progress" => o.no_progress = true,
            "cache" => {
                o.cache = match value.is_empty() {
                    false => Some(PathBuf::from(OsStr::from_bytes(&value))),
                    true => match fastsum::cache::Cache::default_path() {
                        Some(path) => Some(path),
                        None => {
                            run.error(b"--cache: no $XDG_CACHE_HOME or $HOME to put it in; give --cache=PATH");
                            return 1;
                        }
                    },
                }
            }
            "cache-stats" => o.cache_stats = true,
            "io" => match &value[..] {
                b"auto" | b"read" | b"mmap" => {
                    io_mode = String::from_utf8_lossy(&value).into_owned()
                }
                _ => return invalid_value(&mut run, "I/O mode (auto, read, mmap)", &value),
            },
            "read-size" => match parse_size(&value) {
                Some(n) if n > 0 => read_size = Some(n),
                _ => return invalid_value(&mut run, "read size", &value),
            },
            "c" => o.check = true,
            "status" => (o.status_only, o.warn, o.quiet) = (true, false, false),
            "w" => (o.status_only, o.warn, o.quiet) = (false, true, false),
            "quiet" => (o.status_only, o.warn, o.quiet) = (false, false, true),
            "ignore-missing" => o.ignore_missing = true,
            "strict" => o.strict = true,
            "b" => o.binary = 1,
            "t" => o.binary = 0,
            "tag" => (o.tag, o.binary) = (true, 1),
            "z" => o.terminator = 0,
            "help" => {
                let text = crate::help::gnu_help(tool, &run.program);
                run.out.out(text.as_bytes());
                return run.finish(0);
            }
            "version" => {
                let text = crate::help::version(tool.name);
                run.out.out(text.as_bytes());
                return run.finish(0);
            }
            other => unreachable!("option {other} has no handler"),
        }
    }
    let operands = getopt.into_operands();

    if let Some((bits, text)) = length_bits {
        if bits > 512 {
            let mut m = b"invalid length: ".to_vec();
            m.extend(quote(&text, run.utf8));
            run.error(&m);
            let mut m = b"maximum digest length for ".to_vec();
            m.extend(quote(b"BLAKE2b", run.utf8));
            m.extend_from_slice(b" is 512 bits");
            run.error(&m);
            return 1;
        }
        if bits != 0 {
            match o.algorithm {
                Algorithm::Blake2b { .. } => {
                    o.algorithm = Algorithm::Blake2b {
                        output_len: (bits / 8) as u8,
                    }
                }
                _ => {
                    run.error(b"--length is only supported with --algorithm=blake2b");
                    return 1;
                }
            }
        }
    }
    o.tree.algorithm = o.algorithm;
    o.tree.strategy = match (io_mode.as_str(), read_size) {
        ("mmap", _) => ReadStrategy::Mmap,
        ("read", size) | ("auto", size @ Some(_)) => ReadStrategy::Read {
            buffer_size: size.unwrap_or(fastsum::io::DEFAULT_BUFFER_SIZE),
        },
        _ => ReadStrategy::Auto,
    };
    let walking = o.tree.recursive
        || o.tree.order == Order::Unordered
        || o.tree.walk.follow_links
        || o.tree.walk.one_file_system
        || !o.tree.walk.excludes.is_empty();
    let conflict = if o.json && (o.check || o.tag || o.terminator == 0) {
        Some("--json cannot be combined with --check, --tag or --zero")
    } else if walking && o.check {
        Some("the --recursive, --unordered, --follow, --one-file-system and --exclude options are meaningless when verifying checksums")
    } else if o.tag && o.binary == 0 {
        Some("--tag does not support --text mode")
    } else if o.terminator == 0 && o.check {
        Some("the --zero option is not supported when verifying checksums")
    } else if o.tag && o.check {
        Some("the --tag option is meaningless when verifying checksums")
    } else if o.binary >= 0 && o.check {
        Some("the --binary and --text options are meaningless when verifying checksums")
    } else if o.ignore_missing && !o.check {
        Some("the --ignore-missing option is meaningful only when verifying checksums")
    } else if o.status_only && !o.check {
        Some("the --status option is meaningful only when verifying checksums")
    } else if o.warn && !o.check {
        Some("the --warn option is meaningful only when verifying checksums")
    } else if o.quiet && !o.check {
        Some("the --quiet option is meaningful only when verifying checksums")
    } else if o.strict && !o.check {
        Some("the --strict option is meaningful only when verifying checksums")
    } else {
        None
    };
    if let Some(message) = conflict {
        return run.usage_error(Some(message));
    }

    let operands = if operands.is_empty() {
        vec![b"-".to_vec()]
    } else {
        operands
    };
    let ok = if o.check {
        if let Some(path) = &o.cache {
            run.check_cache = open_cache(&mut run, path).map(|cache| CheckCache {
                cache,
                sessions: Vec::new(),
            });
        }
        let mut ok = true;
        for name in &operands {
            ok &= check_file(&mut run, &o, name);
        }
        if let Some(state) = run.check_cache.take() {
            let CheckCache {
                mut cache,
                sessions,
            } = state;
            let mut total = fastsum::cache::RunStats::default();
            for (algorithm, session) in sessions {
                let session = Arc::into_inner(session).expect("the run holds the only reference");
                let finished = session.finish(&mut cache, algorithm);
                say_notice(&mut run, &mut cache);
                match finished {
                    Ok(stats) => {
                        total.hits += stats.hits;
                        total.misses += stats.misses;
                        total.racy_rereads += stats.racy_rereads;
                        total.bytes_read += stats.bytes_read;
                    }
                    Err(e) => run.error(format!("cache: {e}").as_bytes()),
                }
            }
            if o.cache_stats {
                print_cache_stats(&mut run, &total);
            }
        }
        ok
    } else {
        hash_operands(&mut run, &o, &operands)
    };
    run.finish(if ok { 0 } else { 1 })
}

fn invalid_value(run: &mut Run, what: &str, value: &[u8]) -> i32 {
    let mut m = format!("invalid {what}: ").into_bytes();
    m.extend(quote(value, run.utf8));
    run.error(&m);
    run.usage_error(None)
}

/// A byte count: decimal, with an optional K, M or G suffix (powers of 1024).
fn parse_size(value: &[u8]) -> Option<usize> {
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

fn invalid_algorithm(run: &mut Run, value: &[u8]) -> i32 {
    let mut m = b"invalid argument ".to_vec();
    m.extend(quote(value, run.utf8));
    m.extend_from_slice(b" for ");
    m.extend(quote(b"--algorithm", run.utf8));
    run.error(&m);
    let mut list = b"Valid arguments are:\n".to_vec();
    for a in Algorithm::ALL {
        list.extend_from_slice(b"  - ");
        list.extend(quote(a.name().as_bytes(), run.utf8));
        list.push(b'\n');
    }
    run.out.err_raw(&list);
    run.usage_error(None)
}

/// coreutils' `xdectoumax`: optional blanks and '+', then decimal digits only.
fn parse_decimal(value: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(value).ok()?;
    let digits = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let digits = digits.strip_prefix('+').unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// How hashing one named input ended.
enum Hashed {
    Digest(fastsum::Digest),
    /// ENOENT with --ignore-missing.
    Missing,
    /// Reported already.
    Failed,
}

/// coreutils' `digest_file`: "-" is standard input; errors are reported
/// here, with the name quoted as coreutils quotes it.
fn digest_named(run: &mut Run, algorithm: Algorithm, name: &[u8], ignore_missing: bool) -> Hashed {
    let session = match (&mut run.check_cache, name) {
        (Some(state), name) if name != b"-" => state.session(algorithm),
        _ => None,
    };
    if let Some(mut state) = run.check_cache.take() {
        say_notice(run, &mut state.cache);
        run.check_cache = Some(state);
    }
    let result = if let Some(session) = session {
        match session.hash_path(
            &mut run.hasher,
            algorithm,
            Path::new(OsStr::from_bytes(name)),
        ) {
            Err(ErrorKind::Io(e)) if ignore_missing && e.kind() == io::ErrorKind::NotFound => {
                return Hashed::Missing
            }
            other => other.map(|h| h.digest),
        }
    } else if name == b"-" {
        run.hasher.hash_stdin(algorithm).map_err(ErrorKind::Io)
    } else {
        match File::open(Path::new(OsStr::from_bytes(name))) {
            Ok(file) => run.hasher.hash_file(algorithm, &file),
            Err(e) if ignore_missing && e.kind() == io::ErrorKind::NotFound => {
                return Hashed::Missing
            }
            Err(e) => Err(ErrorKind::Io(e)),
        }
    };
    match result {
        Ok(digest) => Hashed::Digest(digest),
        Err(kind) => {
            run.file_error(name, &kind.to_string());
            Hashed::Failed
        }
    }
}

/// Hashes every operand through the library's pipeline (every core; with
/// `-r`, whole trees) and prints each result in order, as the GNU tool would.
fn hash_operands(run: &mut Run, o: &Options, names: &[Vec<u8>]) -> bool {
    let operands: Vec<Operand> = names
        .iter()
        .map(|name| match &name[..] {
            b"-" => Operand::Stdin,
            _ => Operand::Path(PathBuf::from(OsStr::from_bytes(name))),
        })
        .collect();
    // The cache, if asked for: loaded in bulk for the operands' paths. A
    // cache that cannot be opened costs a warning, never the run.
    let session = o.cache.as_ref().and_then(|path| {
        let mut cache = open_cache(run, path)?;
        let cwd = std::env::current_dir().unwrap_or_default();
        let prefixes: Vec<PathBuf> = operands
            .iter()
            .filter_map(|op| match op {
                Operand::Path(p) => Some(fastsum::cache::absolute_in(&cwd, p)),
                Operand::Stdin => None,
            })
            .collect();
        let loaded = cache.load(o.algorithm, &prefixes);
        say_notice(run, &mut cache);
        match loaded {
            Ok(snapshot) => Some((cache, Arc::new(CacheSession::new(snapshot)))),
            Err(e) => {
                run.error(format!("cache: {e}").as_bytes());
                None
            }
        }
    });
    let progress = Progress::default();
    let display = crate::progress::Display::default();
    let show_progress =
        run.tool.kind == ToolKind::Fastsum && crate::progress::wanted(o.no_progress);
    // SAFETY: isatty only inspects the descriptor number.
    let stdout_is_tty = unsafe { libc::isatty(1) } == 1;
    let mut ok = true;
    let result = std::thread::scope(|scope| {
        if show_progress {
            scope.spawn(|| display.run(&progress));
        }
        let mut sink = |record: Record| {
            ok &= !record.is_failure();
            let to_stderr = !matches!(record.outcome, Outcome::Hashed(_));
            if (to_stderr || stdout_is_tty) && display.visible() {
                display.suspend(|| print_record(run, o, &record));
            } else {
                print_record(run, o, &record);
            }
        };
        let result = match &session {
            None => engine::hash_operands(&o.tree, &operands, &progress, &mut sink),
            Some((_, session)) => {
                engine::hash_operands_with(&o.tree, &operands, &progress, &mut sink, |options| {
                    caching_stage(session, options, &progress)
                })
            }
        };
        display.finish();
        result
    });
    if let Err(e) = result {
        run.error(e.to_string().as_bytes());
        return false;
    }
    if let Some((mut cache, session)) = session {
        let session = Arc::into_inner(session).expect("the workers are done");
        let finished = session.finish(&mut cache, o.algorithm);
        say_notice(run, &mut cache);
        match finished {
            Ok(stats) if o.cache_stats => print_cache_stats(run, &stats),
            Ok(_) => {}
            Err(e) => run.error(format!("cache: {e}").as_bytes()),
        }
    }
    ok
}

/// A worker's hashing stage with the cache in front: hits answered from
/// `session`, misses read through the SIMD lanes as an uncached run's files
/// are (not with `--io=mmap`, which lanes do not do).
fn caching_stage(
    session: &Arc<CacheSession>,
    options: &TreeOptions,
    progress: &Progress,
) -> CachingBatchHasher {
    let files = || {
        FileHasher::with_strategy(options.strategy)
            .parallel_large_files(options.threads > 1)
            .count_bytes_in(progress.bytes_done.clone())
    };
    let lanes = (options.strategy != fastsum::ReadStrategy::Mmap)
        .then(|| MultiBufferHasher::for_algorithm(options.algorithm, options.threads, files()).ok())
        .flatten();
    CachingBatchHasher::new(session.clone(), files()).with_lanes(lanes)
}

/// Opens the cache at `path`, saying once if it had to be rebuilt; a cache
/// that cannot be opened at all is a warning and the run goes on without.
fn open_cache(run: &mut Run, path: &Path) -> Option<Cache> {
    match Cache::open(path) {
        Ok(mut cache) => {
            say_notice(run, &mut cache);
            Some(cache)
        }
        Err(e) => {
            run.error(format!("cache: {e}; going on without it").as_bytes());
            None
        }
    }
}

/// Says, once, that the cache file was damaged and moved aside (found on
/// opening, loading or storing).
fn say_notice(run: &mut Run, cache: &mut Cache) {
    if let Some(notice) = cache.take_notice() {
        run.error(notice.as_bytes());
    }
}

/// `--cache-stats`: what the cache saved, on stderr.
fn print_cache_stats(run: &mut Run, stats: &fastsum::cache::RunStats) {
    run.error(
        format!(
            "cache: {} hits, {} misses, {} racy re-reads, {} bytes read",
            stats.hits, stats.misses, stats.racy_rereads, stats.bytes_read
        )
        .as_bytes(),
    );
}

impl CheckCache {
    /// The session for `algorithm`, loading its entries on first use.
    fn session(&mut self, algorithm: Algorithm) -> Option<Arc<CacheSession>> {
        if let Some((_, s)) = self.sessions.iter().find(|(a, _)| *a == algorithm) {
            return Some(s.clone());
        }
        let snapshot = self.cache.load(algorithm, &[PathBuf::from("/")]).ok()?;
        let session = Arc::new(CacheSession::new(snapshot));
        self.sessions.push((algorithm, session.clone()));
        Some(session)
    }
}

/// One result: a checksum line (or JSON object) on stdout, or a message on
/// stderr in the GNU form `PROGRAM: NAME: CAUSE`.
fn print_record(run: &mut Run, o: &Options, record: &Record) {
    let name = record.path.as_os_str().as_bytes();
    if o.json {
        manifest::json::write_record(run.out.stdout_buf(), o.algorithm, record);
        run.out.commit();
    }
    match &record.outcome {
        Outcome::Hashed(hashed) => {
            if o.json {
                return;
            }
            let style = if o.tag || o.algorithm == Algorithm::Xxh3 {
                gnu_lines::LineStyle::Tagged
            } else {
                gnu_lines::LineStyle::Untagged {
                    binary: o.binary == 1,
                }
            };
            gnu_lines::write_line(
                run.out.stdout_buf(),
                o.algorithm,
                &hashed.digest,
                name,
                style,
                o.terminator,
            );
            run.out.commit();
        }
        Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
            run.file_error(name, &kind.to_string());
        }
        Outcome::Skipped(kind) => {
            run.file_error(
                name,
                &format!("skipped {} (not a regular file)", kind.describe()),
            );
        }
    }
}

/// coreutils' `digest_check`: verifies every line of one checksum file.
/// Lines of a check list read (and their files hashed together) at once.
const CHECK_CHUNK_LINES: usize = 4096;

/// One line of a check list that is not a comment or blank.
enum CheckItem {
    /// Not a checksum line (its line number, for `--warn`).
    Misformatted(u64),
    /// A file to check.
    Entry {
        name: Vec<u8>,
        algorithm: Algorithm,
        expected: fastsum::Digest,
    },
}

/// Hashes the files of a chunk of check lines through the pipeline (with
/// the cache in front when it is on), one run per algorithm met; `None`
/// for the lines left to `digest_named` (standard input, misformatted
/// lines, and an algorithm whose cache entries could not be loaded).
fn prefetch_digests(
    run: &mut Run,
    o: &Options,
    items: &[CheckItem],
) -> Vec<Option<Result<fastsum::Digest, ErrorKind>>> {
    let mut results: Vec<Option<Result<fastsum::Digest, ErrorKind>>> =
        items.iter().map(|_| None).collect();
    let mut algorithms: Vec<Algorithm> = Vec::new();
    for item in items {
        if let CheckItem::Entry { algorithm, .. } = item {
            if !algorithms.contains(algorithm) {
                algorithms.push(*algorithm);
            }
        }
    }
    for algorithm in algorithms {
        let (indices, operands): (Vec<usize>, Vec<Operand>) = items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item {
                CheckItem::Entry {
                    name, algorithm: a, ..
                } if *a == algorithm && name != b"-" => {
                    Some((i, Operand::Path(PathBuf::from(OsStr::from_bytes(name)))))
                }
                _ => None,
            })
            .unzip();
        let mut options = o.tree.clone();
        options.algorithm = algorithm;
        options.recursive = false;
        options.order = engine::Order::Unordered;
        let session = match run.check_cache.take() {
            None => None,
            Some(mut state) => {
                let session = state.session(algorithm);
                say_notice(run, &mut state.cache);
                run.check_cache = Some(state);
                match session {
                    Some(session) => Some(session),
                    None => continue,
                }
            }
        };
        let progress = Progress::default();
        let record = |record: Record| {
            let result = match record.outcome {
                Outcome::Hashed(hashed) => Ok(hashed.digest),
                Outcome::Failed(kind) => Err(kind),
                _ => return,
            };
            results[indices[record.operand]] = Some(result);
        };
        let finished = match &session {
            None => engine::hash_operands(&options, &operands, &progress, record),
            Some(session) => {
                engine::hash_operands_with(&options, &operands, &progress, record, |options| {
                    caching_stage(session, options, &progress)
                })
            }
        };
        if finished.is_err() {
            // Left to digest_named, line by line.
            for &i in &indices {
                results[i] = None;
            }
        }
    }
    results
}

/// A prefetched digest as `digest_named` would have reported it.
fn report_hashed(
    run: &mut Run,
    name: &[u8],
    result: Result<fastsum::Digest, ErrorKind>,
    ignore_missing: bool,
) -> Hashed {
    match result {
        Ok(digest) => Hashed::Digest(digest),
        Err(ErrorKind::Io(e)) if ignore_missing && e.kind() == io::ErrorKind::NotFound => {
            Hashed::Missing
        }
        Err(kind) => {
            run.file_error(name, &kind.to_string());
            Hashed::Failed
        }
    }
}

fn check_file(run: &mut Run, o: &Options, checkfile: &[u8]) -> bool {
    let is_stdin = checkfile == b"-";
    let display_name: &[u8] = if is_stdin {
        b"standard input"
    } else {
        checkfile
    };
    let reader: Box<dyn Read> = if is_stdin {
        Box::new(io::stdin())
    } else {
        match File::open(Path::new(OsStr::from_bytes(checkfile))) {
            Ok(f) => Box::new(f),
            Err(e) => {
                run.file_error(checkfile, &fastsum::error::os_message(&e));
                return false;
            }
        }
    };
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let policy = match run.tool.kind {
        ToolKind::Fastsum => gnu_lines::TagPolicy::Any(o.algorithm),
        _ => gnu_lines::TagPolicy::Only(o.algorithm),
    };
    let mut parser = gnu_lines::CheckParser::new(policy);
    let (mut misformatted, mut mismatched, mut unreadable) = (0u64, 0u64, 0u64);
    let (mut any_properly_formatted, mut any_matched) = (false, false);
    let mut line = Vec::new();
    let mut line_number = 0u64;
    let mut read_failed = false;
    let mut at_end = false;
    // The list is read a chunk of lines at a time; the chunk's files are
    // hashed together through the pipeline (every core, multi-buffer MD5),
    // then its lines are reported in order exactly as one at a time.
    while !at_end && !read_failed {
        let mut items: Vec<CheckItem> = Vec::new();
        while items.len() < CHECK_CHUNK_LINES {
            line.clear();
            line_number += 1;
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => {
                    at_end = true;
                    break;
                }
                Ok(_) => {}
                Err(_) => {
                    read_failed = true;
                    break;
                }
            }
            if line[0] == b'#' {
                continue;
            }
            let mut len = line.len();
            if line[len - 1] == b'\n' {
                len -= 1;
            }
            if len > 0 && line[len - 1] == b'\r' {
                len -= 1;
            }
            if len == 0 {
                continue;
            }
            let parsed = parser
                .parse(&line[..len])
                .filter(|l| !(is_stdin && l.name.as_ref() == b"-"));
            items.push(match parsed {
                None => CheckItem::Misformatted(line_number),
                Some(entry) => CheckItem::Entry {
                    name: entry.name.into_owned(),
                    algorithm: entry.algorithm,
                    expected: entry.expected,
                },
            });
        }
        let mut prefetched = prefetch_digests(run, o, &items);
        for (index, item) in items.into_iter().enumerate() {
            let (name, algorithm, expected) = match item {
                CheckItem::Misformatted(number) => {
                    misformatted += 1;
                    if o.warn {
                        let mut m = quotef(display_name, run.utf8);
                        m.extend_from_slice(
                            format!(
                                ": {number}: improperly formatted {} checksum line",
                                o.algorithm.tag()
                            )
                            .as_bytes(),
                        );
                        run.error(&m);
                    }
                    continue;
                }
                CheckItem::Entry {
                    name,
                    algorithm,
                    expected,
                } => (name, algorithm, expected),
            };
            any_properly_formatted = true;
            // coreutils 9.1 escapes names here only when they hold a newline.
            let escape = !o.status_only && name.contains(&b'\n');
            let hashed = match prefetched[index].take() {
                Some(result) => report_hashed(run, &name, result, o.ignore_missing),
                None => digest_named(run, algorithm, &name, o.ignore_missing),
            };
            let status: Option<&[u8]> = match hashed {
                Hashed::Failed => {
                    unreadable += 1;
                    Some(b"FAILED open or read")
                }
                Hashed::Missing => None,
                Hashed::Digest(actual) if actual == expected => {
                    any_matched = true;
                    (!o.quiet).then_some(b"OK")
                }
                Hashed::Digest(_) => {
                    mismatched += 1;
                    Some(b"FAILED")
                }
            };
            if let (Some(status), false) = (status, o.status_only) {
                let buf = run.out.stdout_buf();
                if escape {
                    buf.push(b'\\');
                    write_escaped(&name, buf);
                } else {
                    buf.extend_from_slice(&name);
                }
                buf.extend_from_slice(b": ");
                buf.extend_from_slice(status);
                buf.push(b'\n');
                run.out.commit();
            }
        }
    }
    if read_failed {
        let mut m = quotef(display_name, run.utf8);
        m.extend_from_slice(b": read error");
        run.error(&m);
        return false;
    }
    if !any_properly_formatted {
        let mut m = quotef(display_name, run.utf8);
        m.extend_from_slice(b": no properly formatted checksum lines found");
        run.error(&m);
    } else if !o.status_only {
        let warnings = [
            (
                misformatted,
                "line is improperly formatted",
                "lines are improperly formatted",
            ),
            (
                unreadable,
                "listed file could not be read",
                "listed files could not be read",
            ),
            (
                mismatched,
                "computed checksum did NOT match",
                "computed checksums did NOT match",
            ),
        ];
        for (count, one, many) in warnings {
            if count != 0 {
                let text = if count == 1 { one } else { many };
                run.error(format!("WARNING: {count} {text}").as_bytes());
            }
        }
        if o.ignore_missing && !any_matched {
            let mut m = quotef(display_name, run.utf8);
            m.extend_from_slice(b": no file was verified");
            run.error(&m);
        }
    }
    any_properly_formatted
        && any_matched
        && mismatched == 0
        && unreadable == 0
        && (!o.strict || misformatted == 0)
}
