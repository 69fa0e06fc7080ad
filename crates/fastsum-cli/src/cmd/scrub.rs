//! `fastsum scrub DIR...`: silent corruption found (`fastsum::scrub`):
//! one line per corrupted file, normal modifications apart, a summary.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{CommandFactory, Parser};
use fastsum::output::line::LinePart;
use fastsum::output::render::Renderer;
use fastsum::scrub::{Finding, ScrubOptions, ScrubSummary};
use fastsum::walk::WalkOptions;
use fastsum::Algorithm;

use crate::term::output::{Buffering, Output};

/// Find silent corruption: read again every file whose size, inode, mtime
/// and ctime are still those the checksum cache recorded with its digest,
/// and report each whose bytes now differ ("corrupted": changed without a
/// write the file system knows of). Files modified normally are reported
/// apart ("changed") and recorded again, as are new files; each verified
/// entry remembers when. Exit status: 0 nothing corrupted, 1 corruption
/// found, 2 trouble (something could not be read, the cache could not be
/// used). With --manifest, the stamps and digests of a list written by
/// `fastsum -r --json --stamps` stand in for the cache.
#[derive(Parser, Debug)]
#[command(name = "fastsum scrub", version)]
// Trees or a list, one of the two: the usage line shows it.
#[command(group(clap::ArgGroup::new("what").required(true).args(["paths", "manifest"])))]
#[command(mut_arg("algorithm", |a| a.help("The algorithm of the recorded digests (as the runs that recorded them used: `fastsum -r --cache`'s default is md5); with --manifest, the one of the list's digests to compare by (default: all of them)").default_value("md5")))]
#[command(mut_arg("cache", |a| a.help("The checksum cache holding the recorded digests (default: the one `--cache` uses; PATH only after '=')")))]
#[command(mut_arg("exclude", |a| a.help("Leave out matching paths (gitignore syntax; repeatable)")))]
struct ScrubArgs {
    /// The trees (or files) to scrub.
    paths: Vec<PathBuf>,
    #[command(flatten)]
    algorithm: crate::cmd::args::AlgorithmArg,
    #[command(flatten)]
    cache: crate::cmd::args::CacheArg,
    /// Scrub the files LIST names against its stamps and digests (a list
    /// written by fastsum -r --json --stamps) instead of the cache's.
    #[arg(long, value_name = "LIST", conflicts_with_all = ["cache", "resume", "older_than", "exclude", "one_file_system"])]
    manifest: Option<PathBuf>,
    /// Read at most RATE bytes a second on average (K, M, G suffixes), so
    /// a background scrub leaves the disk to others.
    #[arg(long, value_name = "RATE", value_parser = crate::term::parse_size)]
    limit_rate: Option<u64>,
    /// Go on where an interrupted scrub of the same paths stopped.
    #[arg(long)]
    resume: bool,
    /// Read only files not verified for this long (s, m, h, d, w: 30d);
    /// the others are not due.
    #[arg(long, value_name = "DURATION", value_parser = crate::term::parse_duration)]
    older_than: Option<std::time::Duration>,
    #[command(flatten)]
    jobs: crate::cmd::args::Threads,
    #[command(flatten)]
    exclude: crate::cmd::args::Exclude,
    #[command(flatten)]
    one_file_system: crate::cmd::args::OneFileSystem,
    /// Also print verified, new and not-due files.
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,
    /// One JSON object per finding, then the summary (docs/JSON.md).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bar: crate::cmd::args::ProgressBar,
    #[command(flatten)]
    quiet: crate::cmd::args::Quiet,
}

/// `fastsum scrub`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    ScrubArgs::command()
}

const NAME: &str = "fastsum scrub";

/// Runs `fastsum scrub` with `args` (after its first word).
pub fn run(args: Vec<OsString>) -> i32 {
    let named = algorithm_named(&args);
    let args = match crate::term::parse_subcommand::<ScrubArgs>(NAME, args) {
        Ok(args) => args.quiet.applied(args),
        Err(status) => return status,
    };
    // A list is read by `-a` where it names one of its digests (md5 is
    // only the cache's default: a list of several is compared by all).
    let given = named.then(|| args.algorithm.named()).flatten();
    let mut recorded = match recorded(&args, given) {
        Ok(recorded) => recorded,
        Err(status) => return status,
    };
    let algorithm = match &recorded {
        Recorded::List(list) => list.algorithm,
        Recorded::Cache(_) => args.algorithm.or(Algorithm::Md5),
    };
    let counters = Arc::new(fastsum::Progress::default());
    let options = scrub_options(&args, algorithm, counters.clone());
    let display = crate::term::progress::Display::default();
    let show = args.bar.shown();
    let mut printer = Printer {
        args: &args,
        algorithm_named: named,
        out: Output::new(Buffering::Line),
        display: &display,
    };
    let started = std::time::Instant::now();
    let result = std::thread::scope(|scope| {
        if show {
            scope.spawn(|| display.run(&counters));
        }
        let mut sink = |path: &Path, finding: &Finding| printer.finding(path, finding);
        let result = match &mut recorded {
            Recorded::Cache(cache) => options.scrub(cache, &args.paths, &mut sink),
            Recorded::List(list) => options.scrub_manifest(list, &mut sink).map(|mut summary| {
                summary.failed += list.problems.len() as u64 + list.problems_unkept;
                summary
            }),
        };
        display.finish();
        result
    });
    match result {
        Ok(summary) => printer.finish(&summary, started.elapsed()),
        Err(e) => {
            let _ = printer.out.finish();
            eprintln!("{NAME}: {e}");
            2
        }
    }
}

/// Whether `-a` is on the command line `args`, rather than md5 by default.
fn algorithm_named(args: &[OsString]) -> bool {
    let argv = std::iter::once(OsString::from(NAME)).chain(args.iter().cloned());
    ScrubArgs::command()
        .try_get_matches_from(argv)
        .is_ok_and(|m| m.value_source("algorithm") == Some(clap::parser::ValueSource::CommandLine))
}

/// Where the recorded digests are: the cache, or a list with stamps (its
/// lines that could not be read count as unreadable).
enum Recorded {
    Cache(fastsum::cache::Cache),
    List(fastsum::manifest::read::Manifest),
}

/// Opens the cache, or reads the list; `Err` is the exit status, said.
fn recorded(args: &ScrubArgs, given: Option<Algorithm>) -> Result<Recorded, i32> {
    if let Some(list) = &args.manifest {
        let read = std::fs::File::open(list)
            .map_err(|e| fastsum::Error::os_message(&e))
            .and_then(|f| {
                fastsum::manifest::read::Manifest::read(std::io::BufReader::new(f), given)
            });
        // Named as coreutils names files: a list named `L\nfastsum scrub:
        // ...` cannot forge a line.
        let named = crate::term::named_path(list);
        let manifest = read.map_err(|why| {
            eprintln!("{NAME}: {named}: {why}");
            2
        })?;
        for (line, why) in &manifest.problems {
            eprintln!("{NAME}: {named}: line {line}: {why}");
        }
        if manifest.problems_unkept > 0 {
            let (more, kept) = (
                manifest.problems_unkept,
                fastsum::manifest::read::Manifest::PROBLEMS_KEPT,
            );
            eprintln!(
                "{NAME}: {named}: {more} more lines could not be read (the first {kept} are named)"
            );
        }
        return Ok(Recorded::List(manifest));
    }
    // scrub always uses a cache: the default one unless named.
    let given = match args.cache.asked() {
        crate::term::cache::CacheChoice::At(path) => Some(path),
        _ => None,
    };
    let path = crate::term::cache::path(given).map_err(|m| {
        eprintln!("{NAME}: {m}");
        2
    })?;
    let mut cache = fastsum::cache::Cache::open(&path).map_err(|e| {
        eprintln!("{NAME}: cache: {e}");
        2
    })?;
    if let Some(notice) = cache.take_notice() {
        eprintln!("{NAME}: cache: {notice}");
    }
    Ok(Recorded::Cache(cache))
}

fn scrub_options(
    args: &ScrubArgs,
    algorithm: Algorithm,
    counters: Arc<fastsum::Progress>,
) -> ScrubOptions {
    let mut options = ScrubOptions::new(algorithm);
    if let Some(threads) = args.jobs.asked() {
        options.threads = threads;
    }
    options.walk = WalkOptions {
        one_file_system: args.one_file_system.one_file_system,
        excludes: args.exclude.globs(),
        ..WalkOptions::default()
    };
    options.limit_rate = args.limit_rate;
    options.older_than = args.older_than;
    options.resume = args.resume;
    options.progress = Some(counters);
    options
}

/// Findings as lines (`corrupted\tPATH`) or JSON on stdout, failures on
/// stderr.
struct Printer<'a> {
    args: &'a ScrubArgs,
    /// `-a` was on the command line (not md5 by default).
    algorithm_named: bool,
    out: Output,
    display: &'a crate::term::progress::Display,
}

/// A finding's word.
fn word(finding: &Finding) -> &'static str {
    match finding {
        Finding::Verified => "verified",
        Finding::Corrupted { .. } => "corrupted",
        Finding::Changed => "changed",
        Finding::New => "new",
        Finding::OtherFileSystem => "other-file-system",
        Finding::NotDue => "not-due",
        Finding::Failed(_) => "unreadable",
        Finding::Unstamped => "unstamped",
    }
}

impl Printer<'_> {
    fn finding(&mut self, path: &Path, finding: &Finding) {
        let shown = matches!(
            finding,
            Finding::Corrupted { .. } | Finding::Changed | Finding::OtherFileSystem
        );
        let name = fastsum::name::path_bytes(path);
        let mut line = Vec::new();
        let mut err = Vec::new();
        match finding {
            Finding::Failed(why) => {
                err.extend_from_slice(format!("{NAME}: ").as_bytes());
                err.extend_from_slice(crate::term::named(name).as_bytes());
                err.extend_from_slice(format!(": {why}\n").as_bytes());
                if self.args.json {
                    json_line(&mut line, name, finding);
                }
            }
            _ if !shown && !self.args.verbose => return,
            _ if self.args.json => json_line(&mut line, name, finding),
            _ => text_line(&mut line, name, finding),
        }
        let out = &mut self.out;
        self.display.suspend(|| {
            out.out(&line);
            out.err_raw(&err);
        });
    }

    /// The summary (stderr, or a JSON record), then the exit status.
    fn finish(mut self, s: &ScrubSummary, took: std::time::Duration) -> i32 {
        if self.args.json {
            let mut line = Vec::new();
            line.extend_from_slice(
                format!(
                    "{{\"summary\":{{\"verified\":{},\"corrupted\":{},\"changed\":{},\"new\":{},\"other_file_system\":{},\"not_due\":{},\"unreadable\":{},\"unstamped\":{},\"resumed_past\":{},\"bytes_read\":{},\"interrupted\":{}}}}}\n",
                    s.verified, s.corrupted, s.changed, s.new, s.other_file_system, s.not_due, s.failed, s.unstamped, s.resumed_past, s.bytes_read, s.interrupted
                )
                .as_bytes(),
            );
            self.out.out(&line);
        } else {
            let seconds = took.as_secs_f64().max(1e-9);
            let mut resumed = match s.resumed_past {
                0 => String::new(),
                n => format!(", {n} passed over (resumed)"),
            };
            if s.other_file_system > 0 {
                resumed.push_str(&format!(", {} on another file system", s.other_file_system));
            }
            if s.unstamped > 0 {
                resumed.push_str(&format!(", {} listed without a stamp", s.unstamped));
            }
            // A clean scrub's summary is a notice (-q: cron mails only trouble).
            let line = format!(
                    "{NAME}: {} corrupted, {} changed, {} verified, {} new, {} not due, {} unreadable{resumed}; {} bytes read in {:.1} s ({:.0} MB/s)\n",
                    s.corrupted, s.changed, s.verified, s.new, s.not_due, s.failed,
                    s.bytes_read, seconds, s.bytes_read as f64 / seconds / 1e6
                );
            match s.corrupted + s.failed {
                0 => self.out.notice(line.as_bytes()),
                _ => self.out.err_raw(line.as_bytes()),
            }
        }
        if let Err(e) = self.out.finish() {
            eprintln!("{NAME}: write error: {}", fastsum::Error::os_message(&e));
            return 2;
        }
        if !s.recorded_in_others.is_empty() && !self.algorithm_named {
            // Every file "new", exit 0, read as a clean scrub: a tree
            // recorded by `sha256sum -r --cache`, scrubbed in md5 by
            // default (an algorithm named with -a is taken as meant).
            let others: Vec<String> = s.recorded_in_others.iter().map(|a| a.to_string()).collect();
            let algorithm = self.args.algorithm.or(Algorithm::Md5);
            eprintln!(
                "{NAME}: nothing here was recorded in {algorithm}, so nothing was verified; the cache holds {} digests of these paths: give -a",
                others.join(", ")
            );
            return 2;
        }
        match (s.corrupted, s.failed) {
            (0, 0) => 0,
            (0, _) => 2,
            _ => 1,
        }
    }
}

/// `corrupted\tPATH` (names escaped as fastsum's lines escape them: a
/// leading `\` when a name holds `\`, a tab, a newline or a CR).
fn text_line(line: &mut Vec<u8>, name: &[u8], finding: &Finding) {
    let parts = [
        LinePart::Text(word(finding).as_bytes()),
        LinePart::Text(b"\t"),
        LinePart::Name(name),
    ];
    LinePart::write_line(line, &parts, true);
}

/// `{"path":…,"status":"corrupted","recorded":…,"actual":…}`.
fn json_line(line: &mut Vec<u8>, name: &[u8], finding: &Finding) {
    line.push(b'{');
    Renderer::write_json_name(line, "path", name);
    line.extend_from_slice(b",\"status\":");
    Renderer::write_json_string(line, word(finding));
    match finding {
        Finding::Corrupted { recorded, actual } => line.extend_from_slice(
            format!(
                ",\"recorded\":\"{}\",\"actual\":\"{}\"",
                recorded.to_hex(),
                actual.to_hex()
            )
            .as_bytes(),
        ),
        Finding::Failed(why) => {
            line.extend_from_slice(b",\"error\":");
            Renderer::write_json_string(line, why);
        }
        _ => {}
    }
    line.extend_from_slice(b"}\n");
}
