//! `fastsum tree-digest DIR...`: one digest for each whole tree, its
//! directory digest (docs/DIRECTORY-DIGEST.md), printed as `fastsum -r
//! --dirs` prints the root's line.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{CommandFactory, Parser};
use fastsum::output::render::Renderer;
use fastsum::walk::WalkOptions;
use fastsum::{Algorithm, Outcome, Record, Source, TreeHasher, TreeOptions};

use crate::term::output::{Buffering, Output};

/// Print one digest for each whole tree: its directory digest, a hash of
/// every name, kind and content below it (docs/DIRECTORY-DIGEST.md), the
/// same as the root's line of `fastsum -r --dirs`. Two trees have the same
/// digest when they hold the same names, kinds, bytes and link targets;
/// permissions, owners and times are not in it. A FILE operand gets its
/// own digest. Exit status: 0, or 1 when something could not be read
/// (that tree then has no digest).
#[derive(Parser, Debug)]
#[command(name = "fastsum tree-digest", version)]
#[command(mut_arg("algorithm", |a| a.help("The hash algorithm (a hash, not cksum, sum or crc32b)").default_value("blake3")))]
#[command(mut_arg("cache", |a| a.help("Answer unchanged files from the checksum cache (PATH only after '='): an unchanged tree then costs one walk of its metadata")))]
#[command(mut_arg("exclude", |a| a.help("Leave out matching paths (gitignore syntax; repeatable): the digest is then the filtered tree's")))]
#[command(mut_arg("follow", |a| a.help("Follow symbolic links (without it a link counts as its target's text)")))]
struct TreeDigestArgs {
    /// The trees (directories, or files).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    algorithm: crate::cmd::args::AlgorithmArg,
    #[command(flatten)]
    cache: crate::cmd::args::CacheArg,
    #[command(flatten)]
    jobs: crate::cmd::args::Threads,
    #[command(flatten)]
    follow: crate::cmd::args::Follow,
    #[command(flatten)]
    one_file_system: crate::cmd::args::OneFileSystem,
    #[command(flatten)]
    exclude: crate::cmd::args::Exclude,
    /// Print one JSON object per tree instead of lines.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bar: crate::cmd::args::ProgressBar,
    #[command(flatten)]
    quiet: crate::cmd::args::Quiet,
}

/// `fastsum tree-digest`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    TreeDigestArgs::command()
}

const NAME: &str = "fastsum tree-digest";

/// Runs `fastsum tree-digest` with `args` (after its first word).
pub fn run(args: Vec<OsString>) -> i32 {
    let args = match crate::term::parse_subcommand::<TreeDigestArgs>(NAME, args) {
        Ok(args) => args.quiet.applied(args),
        Err(status) => return status,
    };
    let algorithm = args.algorithm.or(Algorithm::Blake3);
    if let Some(why) = algorithm.directory_digest_refusal() {
        eprintln!("{NAME}: {why}");
        return 2;
    }
    let Some(cache) = crate::term::cache::open(NAME, &args.cache.asked(), algorithm, &args.paths)
    else {
        return 2;
    };
    let hasher = TreeHasher::with_options(algorithm, tree_options(&args));
    let hasher = crate::term::cached(NAME, hasher, &cache);
    let show = args.bar.shown();
    let counters = Arc::new(fastsum::Progress::default());
    let hasher = hasher.progress(counters.clone());
    let display = crate::term::progress::Display::default();
    let operands: Vec<Source> = args.paths.iter().cloned().map(Source::Path).collect();
    let mut printer = RootPrinter::new(algorithm, &args, &operands, &display);
    let result = std::thread::scope(|scope| {
        if show {
            scope.spawn(|| display.run(&counters));
        }
        // The algorithm was checked above.
        let result = hasher.run_with_directory_digests(&operands, None, &mut printer);
        display.finish();
        result
    });
    crate::term::cache::finish(NAME, cache);
    if let Err(e) = result {
        printer.out.err_raw(format!("{NAME}: {e}\n").as_bytes());
        printer.ok = false;
    }
    printer.finish()
}

fn tree_options(args: &TreeDigestArgs) -> TreeOptions {
    let mut options = TreeOptions::new();
    options.recursive = true;
    // A file that changed while it was read is an error, never a digest.
    options.verify = true;
    options.walk = WalkOptions {
        follow_links: args.follow.follow,
        one_file_system: args.one_file_system.one_file_system,
        excludes: args.exclude.globs(),
        ..WalkOptions::default()
    };
    if let Some(threads) = args.jobs.asked() {
        options.threads = threads;
    }
    options
}

/// Prints each operand's own record (its digest, or why it has none) and
/// every problem below it; the entries' records are only absorbed.
struct RootPrinter<'a> {
    renderer: Renderer,
    /// Each operand's record path: a directory's with a separator after it.
    roots: Vec<Vec<u8>>,
    display: &'a crate::term::progress::Display,
    out: Output,
    ok: bool,
}

impl<'a> RootPrinter<'a> {
    fn new(
        algorithm: Algorithm,
        args: &TreeDigestArgs,
        operands: &[Source],
        display: &'a crate::term::progress::Display,
    ) -> Self {
        let mut renderer = Renderer::fastsum(algorithm, args.json);
        renderer.program = NAME.as_bytes().to_vec();
        let roots = operands
            .iter()
            .map(|operand| match operand {
                Source::Path(p) => {
                    let mut bytes = fastsum::name::path_bytes(p).to_vec();
                    let ends = bytes
                        .last()
                        .is_some_and(|&b| std::path::is_separator(char::from(b)));
                    if p.is_dir() && !ends {
                        bytes.push(std::path::MAIN_SEPARATOR as u8);
                    }
                    bytes
                }
                Source::Stdin => b"-".to_vec(),
            })
            .collect();
        RootPrinter {
            renderer,
            roots,
            display,
            out: Output::new(Buffering::Line),
            ok: true,
        }
    }

    fn finish(mut self) -> i32 {
        match self.out.finish() {
            Ok(()) if self.ok => 0,
            Ok(()) => 1,
            Err(e) => {
                eprintln!("{NAME}: write error: {}", fastsum::Error::os_message(&e));
                1
            }
        }
    }
}

impl fastsum::Sink for &mut RootPrinter<'_> {
    fn record(&mut self, record: Record) {
        let own = self
            .roots
            .get(record.operand)
            .is_some_and(|root| fastsum::name::path_bytes(&record.path) == root.as_slice());
        let wanted = match &record.outcome {
            Outcome::Hashed(_) | Outcome::Directory(Some(_)) => own,
            Outcome::Failed(_) | Outcome::WalkFailed(_) => true,
            Outcome::Skipped(_) | Outcome::Directory(None) => false,
        };
        if !wanted {
            return;
        }
        self.ok &= !record.is_failure();
        let (mut line, mut err) = (Vec::new(), Vec::new());
        self.renderer.render(&record, &mut line, &mut err);
        let out = &mut self.out;
        self.display.suspend(|| {
            out.out(&line);
            out.err_raw(&err);
        });
    }
}
