//! `fastsum audit MANIFEST DIR`: a tree against a list of what it should
//! hold, in the spirit of `hashdeep -a`: matched, modified, moved, new and
//! missing files, and hashdeep's summary. The comparison is `fastsum
//! diff`'s (the list re-rooted under DIR, the tree hashed in the list's
//! algorithm on every core, moves paired by digest).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{CommandFactory, Parser};
use fastsum::diff::{ChangeKind, DiffEvent, DiffOptions, DiffSummary, Side};
use fastsum::walk::WalkOptions;
use fastsum::Algorithm;

use crate::term::output::{Buffering, Output};

/// Audit a tree against a list of what it should hold (any format fastsum
/// reads: md5sum/sha*sum/b2sum lines, BSD tags, fastsum's --json, and
/// hashdeep's own lists): each file is matched (same path, same digest),
/// modified (same path, other digest), moved (another path, a listed
/// digest), new (neither), and each listed file not found is missing. The
/// summary counts them as `hashdeep -a` does. Exit status: 0 the audit
/// passed (every file matched, none missing), 1 it failed, 2 trouble.
#[derive(Parser, Debug)]
#[command(name = "fastsum audit", version)]
struct AuditArgs {
    /// The list: a file, or - for standard input.
    manifest: PathBuf,
    /// The tree to audit.
    dir: PathBuf,
    /// The list's algorithm, for untagged lines, or the column to read
    /// from a hashdeep list (default: its first of md5, sha1, sha256).
    #[arg(short = 'a', long = "algorithm", value_name = "NAME", value_parser = crate::term::parse_algorithm)]
    algorithm: Option<Algorithm>,
    /// Print each file that did not match (`modified`, `moved`, `new`,
    /// `missing`, then the path); twice: matched files too.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    verbose: u8,
    /// Answer unchanged files from the checksum cache (PATH only after
    /// '=').
    #[arg(long, value_name = "PATH", num_args = 0..=1, require_equals = true)]
    cache: Option<Option<PathBuf>>,
    #[command(flatten)]
    jobs: crate::term::shared::Threads,
    /// The directory the list's paths start with, when it cannot be told
    /// from the list (what diff's old-root option says).
    #[arg(long, value_name = "PATH")]
    root: Option<PathBuf>,
    #[command(flatten)]
    bar: crate::term::shared::ProgressBar,
}

/// `fastsum audit`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    AuditArgs::command()
}

const NAME: &str = "fastsum audit";

/// Runs `fastsum audit` with `args` (after its first word).
pub fn run(args: Vec<OsString>) -> i32 {
    let args: AuditArgs = match crate::term::parse_subcommand(NAME, args) {
        Ok(args) => args,
        Err(status) => return status,
    };
    let algorithm = args.algorithm;
    let (cache, session) = crate::term::open_cache_session(
        NAME,
        &args.cache,
        algorithm.unwrap_or(Algorithm::Md5),
        std::slice::from_ref(&args.dir),
    );
    let counters = Arc::new(fastsum::Progress::default());
    let options = DiffOptions {
        algorithm,
        walk: WalkOptions::default(),
        threads: args.jobs.or_all(),
        all: true,
        old_root: args.root.clone(),
        cache: session.clone(),
        progress: Some(counters.clone()),
        ..DiffOptions::default()
    };
    let old = match args.manifest.as_os_str() == "-" {
        true => Side::Stdin,
        false => Side::Manifest(args.manifest.clone()),
    };
    let display = crate::term::progress::Display::default();
    let show = args.bar.shown();
    let mut out = Output::new(Buffering::Line);
    let mut trouble = false;
    let result = std::thread::scope(|scope| {
        if show {
            scope.spawn(|| display.run(&counters));
        }
        let result = options.diff(&old, &Side::Tree(args.dir.clone()), |event| {
            let (line, err) = event_lines(&args, event);
            trouble |= !err.is_empty();
            display.suspend(|| {
                out.out(&line);
                out.err_raw(&err);
            });
        });
        display.finish();
        result
    });
    drop(options);
    crate::term::close_cache_session(NAME, cache, session);
    let status = match result {
        Ok(summary) => {
            out.out(&summary_text(&summary));
            match (trouble, passed(&summary)) {
                (true, _) => 2,
                (false, true) => 0,
                (false, false) => 1,
            }
        }
        Err(e) => {
            out.err_raw(format!("{NAME}: {e}\n").as_bytes());
            2
        }
    };
    match out.finish() {
        Ok(()) => status,
        Err(e) => {
            eprintln!("{NAME}: write error: {}", fastsum::Error::os_message(&e));
            2
        }
    }
}

/// Every file matched, none missing.
fn passed(s: &DiffSummary) -> bool {
    s.added + s.modified + s.moved + s.removed + s.typechanges == 0
}

/// A change's line (with `-v`) and a problem's message.
fn event_lines(args: &AuditArgs, event: DiffEvent) -> (Vec<u8>, Vec<u8>) {
    let path = |entry: &Option<fastsum::diff::Entry>| {
        entry
            .as_ref()
            .map(|e| fastsum::name::path_bytes(&e.path).to_vec())
            .unwrap_or_default()
    };
    match event {
        DiffEvent::Change(change) => {
            let word = match change.kind {
                ChangeKind::Unchanged => "matched",
                ChangeKind::Modified | ChangeKind::Typechange => "modified",
                ChangeKind::Moved => "moved",
                ChangeKind::Added => "new",
                ChangeKind::Removed => "missing",
            };
            let shown = args.verbose > 1 || (args.verbose > 0 && word != "matched");
            if !shown {
                return (Vec::new(), Vec::new());
            }
            let mut line = word.as_bytes().to_vec();
            line.push(b'\t');
            match change.kind {
                ChangeKind::Added => line.extend(path(&change.new)),
                ChangeKind::Moved => {
                    line.extend(path(&change.new));
                    line.extend_from_slice(b"\tfrom\t");
                    line.extend(path(&change.old));
                }
                _ => line.extend(path(&change.old)),
            }
            line.push(b'\n');
            (line, Vec::new())
        }
        DiffEvent::Problem { path, error } => {
            let mut err = format!("{NAME}: ").into_bytes();
            err.extend_from_slice(fastsum::name::path_bytes(&path));
            err.extend_from_slice(format!(": {error}\n").as_bytes());
            (Vec::new(), err)
        }
        DiffEvent::RemoteMethod { .. } => (Vec::new(), Vec::new()),
    }
}

/// hashdeep's summary, its words and alignment, with fastsum's count of
/// modified files (which hashdeep counts both as new and as not found).
fn summary_text(s: &DiffSummary) -> Vec<u8> {
    let verdict = if passed(s) { "passed" } else { "failed" };
    format!(
        "{NAME}: Audit {verdict}\n          Files matched: {}\n         Files modified: {}\n            Files moved: {}\n        New files found: {}\n  Known files not found: {}\n",
        s.unchanged,
        s.modified + s.typechanges,
        s.moved,
        s.added,
        s.removed,
    )
    .into_bytes()
}
