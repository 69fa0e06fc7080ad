//! `fastsum diff OLD NEW`: the library's `diff` printed as `git diff
//! --name-status` prints (or as JSON Lines, or as one summary line), with
//! `diff`'s exit status: 0 no change, 1 changes, 2 trouble.

pub(crate) mod plan;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{CommandFactory, Parser};
use fastsum::diff::{Change, ChangeKind, DiffEvent, DiffOptions, DiffSummary, Side};
use fastsum::output::line::LinePart;
use fastsum::output::render::Renderer;
use fastsum::Algorithm;

use crate::term::output::{Buffering, Output};
use crate::term::{count, json_string};

/// Show what changed between two trees, a tree and a manifest, or two
/// manifests (`-` is a manifest on standard input); either side may be a
/// tree on another host, [USER@]HOST:PATH, hashed there over ssh, or
/// s3://BUCKET/PREFIX against a directory, decided by the checksums S3
/// keeps. Exit status: 0 no change, 1 changes (or S3 objects that cannot
/// be verified), 2 trouble.
#[derive(Parser, Debug)]
#[command(name = "fastsum diff", version)]
#[command(mut_arg("cache", |a| a.help("Answer unchanged files from the checksum cache (PATH only after '='); a remote side's fastsum uses its own cache there")))]
#[command(mut_arg("algorithm", |a| a.help("The algorithm of untagged manifest lines and of a tree's digests against a manifest or a remote side (default: the manifest's; md5 for untagged 32-digit lines and against a remote side)")))]
struct DiffArgs {
    /// The old side: a directory, a manifest, - (standard input), or
    /// [USER@]HOST:PATH (remote; ./a:b is local).
    old: PathBuf,
    /// The new side.
    new: PathBuf,
    #[command(flatten)]
    algorithm: crate::cmd::args::AlgorithmArg,
    #[command(flatten)]
    cache: crate::cmd::args::CacheArg,
    #[command(flatten)]
    jobs: crate::cmd::args::Threads,
    #[command(flatten)]
    walk: crate::cmd::args::Walk,
    #[command(flatten)]
    bar: crate::cmd::args::ProgressBar,
    /// Print nothing: the exit status says it.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// One JSON object per change (JSON Lines, docs/JSON.md).
    #[arg(long, conflicts_with = "stat")]
    json: bool,
    /// One JSON object at the end: what to send to make OLD equal NEW,
    /// what OLD has under another name, what only OLD has (docs/JSON.md).
    #[arg(long, conflicts_with_all = ["stat", "json", "all"])]
    plan: bool,
    /// One line: the changes counted by kind, and the bytes changed.
    #[arg(long)]
    stat: bool,
    /// List unchanged entries too.
    #[arg(long)]
    all: bool,
    /// Leave directories out when comparing two local trees (by default a
    /// directory only one side has, an empty one too, is added or removed,
    /// its path ending in /).
    #[arg(long)]
    ignore_directories: bool,
    /// The directory the old manifest's paths are relative to, when the
    /// rule (docs/ARCHITECTURE.md) cannot know.
    #[arg(long, value_name = "PREFIX")]
    old_root: Option<PathBuf>,
    /// The same for the new manifest.
    #[arg(long, value_name = "PREFIX")]
    new_root: Option<PathBuf>,
    #[command(flatten)]
    remote: crate::cmd::args::RemoteArgs,
    /// Copy this fastsum to a private temporary directory on a remote
    /// host whose `uname -sm` matches, run it there, and remove it.
    #[arg(long)]
    upload_self: bool,
    /// Read the remote side's listing from FILE (- for standard input):
    /// the output of `fastsum remote-command`, run on the host by another
    /// tool, instead of hashing there over ssh (docs/REMOTE.md).
    #[arg(long, value_name = "FILE")]
    remote_listing: Option<PathBuf>,
    /// Say which method hashed each remote side.
    #[arg(short = 'v', long)]
    verbose: bool,
    #[command(flatten)]
    s3: crate::cmd::args::S3Args,
}

/// `fastsum diff`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    DiffArgs::command()
}

/// Runs `fastsum diff` with `args` (after the word `diff`).
pub fn run(args: Vec<OsString>) -> i32 {
    let args: DiffArgs = match crate::term::parse_subcommand("fastsum diff", args) {
        Ok(args) => args,
        Err(status) => return status,
    };
    // diff's -q prints nothing at all: no notices either.
    crate::term::set_quiet(args.quiet);
    let algorithm = args.algorithm.named();
    if let Err(why) = check_listing(&args) {
        eprintln!("fastsum diff: {why}");
        return 2;
    }
    // The session answers one algorithm's digests: a run that hashes with
    // a manifest's other algorithm passes it by, never mixes.
    let roots: Vec<PathBuf> = [&args.old, &args.new]
        .into_iter()
        .filter(|p| p.is_dir())
        .cloned()
        .collect();
    let tree_algorithm = algorithm.unwrap_or(Algorithm::Md5);
    let Some(cache) =
        crate::term::cache::open("fastsum diff", &args.cache.asked(), tree_algorithm, &roots)
    else {
        return 2;
    };
    let served = Some(&cache).filter(|c| c.serves(tree_algorithm));
    let mut options = diff_options(&args, algorithm, served);
    let show = args.bar.shown();
    let counters = Arc::new(fastsum::Progress::default());
    if show {
        options.progress = Some(counters.clone());
    }
    let display = crate::term::progress::Display::default();
    let mut printer = Printer {
        args: &args,
        out: Output::new(Buffering::Line),
        plan: args.plan.then(crate::cmd::diff::plan::Plan::default),
        display: &display,
    };
    let result = std::thread::scope(|scope| {
        if show {
            scope.spawn(|| display.run(&counters));
        }
        let result = options.diff(
            &Side::of_operand(&args.old),
            &Side::of_operand(&args.new),
            |event| printer.event(event),
        );
        display.finish();
        result
    });
    drop(options);
    crate::term::cache::finish("fastsum diff", cache);
    match result {
        Ok(summary) => printer.finish(&summary),
        Err(e) => {
            let _ = printer.out.finish();
            eprintln!("fastsum diff: {e}");
            2
        }
    }
}

fn diff_options<'a>(
    args: &DiffArgs,
    algorithm: Option<Algorithm>,
    cache: Option<&'a fastsum::cache::CacheRun>,
) -> DiffOptions<'a> {
    DiffOptions {
        algorithm,
        walk: args.walk.options(),
        threads: args.jobs.or_all(),
        all: args.all,
        old_root: args.old_root.clone(),
        new_root: args.new_root.clone(),
        cache,
        remote: remote_options(args),
        progress: None,
        ignore_directories: args.ignore_directories,
        s3: args.s3.options(args.jobs.asked(), &args.cache),
    }
}

/// Where a diff's events go: lines, JSON or the plan on stdout, messages
/// on stderr.
struct Printer<'a> {
    args: &'a DiffArgs,
    out: Output,
    plan: Option<crate::cmd::diff::plan::Plan>,
    /// The progress bar, which what is written goes around.
    display: &'a crate::term::progress::Display,
}

impl Printer<'_> {
    /// One event, written with the progress bar (if drawn) off the screen.
    fn event(&mut self, event: DiffEvent) {
        if self.display.visible() {
            let display = self.display;
            display.suspend(|| {
                self.write(event);
                self.out.flush_held();
            });
        } else {
            self.write(event);
        }
    }

    fn write(&mut self, event: DiffEvent) {
        let args = self.args;
        match event {
            DiffEvent::Change(change) => {
                if let Some(plan) = &mut self.plan {
                    plan.change(&change);
                }
                if args.quiet || args.stat || args.plan {
                    return;
                }
                match args.json {
                    true => write_json(self.out.stdout_buf(), &change),
                    false => write_line(self.out.stdout_buf(), &change),
                }
                self.out.commit();
            }
            DiffEvent::Problem { path, error } => {
                if let Some(plan) = &mut self.plan {
                    plan.problem(&path, &error);
                }
                if args.json && !args.quiet {
                    write_json_problem(self.out.stdout_buf(), &path, &error);
                    self.out.commit();
                }
                // The name quoted as messages quote names: no forged lines.
                let mut message = b"fastsum diff: ".to_vec();
                message.extend(crate::term::named_path(&path).into_bytes());
                message.extend_from_slice(format!(": {error}\n").as_bytes());
                self.out.err_raw(&message);
            }
            DiffEvent::LeftOut { path, what } => {
                if let Some(plan) = &mut self.plan {
                    plan.left_out(&path, what);
                }
            }
            DiffEvent::RemoteMethod {
                operand,
                method,
                uploaded,
                upload_failed,
            } => {
                let method = method.name();
                if let Some(why) = upload_failed {
                    let message = format!(
                        "fastsum diff: {operand}: {why}; the {method} method ran instead\n"
                    );
                    self.out.err_raw(message.as_bytes());
                }
                if args.verbose {
                    let how = if uploaded { " (uploaded)" } else { "" };
                    let message = format!(
                        "fastsum diff: {operand}: hashed there by the {method} method{how}\n"
                    );
                    self.out.err_raw(message.as_bytes());
                }
            }
        }
    }

    /// The summary lines (`--stat`, the plan, symlinks left out), then
    /// the exit status: 0 no change, 1 changes, 2 trouble.
    fn finish(mut self, summary: &DiffSummary) -> i32 {
        let quiet = self.args.quiet;
        if self.args.stat && !quiet {
            self.out.out(stat_line(summary).as_bytes());
        }
        if let (Some(plan), false) = (&self.plan, quiet) {
            self.out.out(&plan.render(summary));
        }
        if summary.symlinks_left_out > 0 && !quiet {
            let what = count(summary.symlinks_left_out, "symbolic link", "symbolic links");
            let message =
                format!("fastsum diff: {what} left out (manifests and remote listings hold regular files only)\n");
            self.out.err_raw(message.as_bytes());
        }
        if summary.specials_left_out > 0 && !quiet {
            let what = count(summary.specials_left_out, "special file", "special files");
            let message = format!(
                "fastsum diff: {what} left out (FIFOs, sockets and devices hold no bytes to compare)\n"
            );
            self.out.err_raw(message.as_bytes());
        }
        if let Err(e) = self.out.finish() {
            eprintln!(
                "fastsum diff: write error: {}",
                fastsum::Error::os_message(&e)
            );
            return 2;
        }
        match (summary.problems > 0, summary.changed()) {
            (true, _) => 2,
            (false, true) => 1,
            (false, false) => 0,
        }
    }
}

fn remote_options(args: &DiffArgs) -> fastsum::remote::RemoteOptions {
    let mut options = args.remote.options();
    options.cache = args.cache.asked().is_on();
    options.listing = args.remote_listing.clone();
    if args.upload_self {
        options.upload_self = std::env::current_exe().ok();
    }
    options
}

/// `--remote-listing` stands for exactly one remote side.
fn check_listing(args: &DiffArgs) -> Result<(), String> {
    if args.old.as_os_str() == "-" && args.new.as_os_str() == "-" {
        // One stream cannot be read twice: the second side would be empty.
        return Err("standard input ('-') can be only one side, not both".into());
    }
    if args.remote_listing.is_none() {
        return Ok(());
    }
    let remote = |p: &Path| fastsum::remote::Remote::parse(fastsum::name::path_bytes(p));
    match (remote(&args.old), remote(&args.new)) {
        (Some(_), Some(_)) => {
            Err("--remote-listing stands for one remote side; both are remote".into())
        }
        (None, None) => Err("--remote-listing needs a [USER@]HOST:PATH side it stands for".into()),
        _ if args.upload_self => {
            Err("--remote-listing and --upload-self exclude each other".into())
        }
        _ if args.remote_listing.as_deref() == Some(Path::new("-"))
            && [&args.old, &args.new].iter().any(|p| p.as_os_str() == "-") =>
        {
            Err("standard input cannot be both the listing and a manifest".into())
        }
        _ => Ok(()),
    }
}

/// `M\tpath`, `R\told\tnew` ...; names escaped as fastsum's lines escape
/// them (a leading `\` when any name holds `\`, a newline or a CR).
fn write_line(buf: &mut Vec<u8>, change: &Change) {
    let names: Vec<&[u8]> = match change.kind {
        ChangeKind::Moved => vec![bytes(change.old.as_ref()), bytes(change.new.as_ref())],
        ChangeKind::Added => vec![bytes(change.new.as_ref())],
        _ => vec![bytes(change.old.as_ref())],
    };
    let letter = [change.kind.letter() as u8];
    let mut parts = vec![LinePart::Text(&letter)];
    for name in names {
        parts.extend([LinePart::Text(b"\t"), LinePart::Name(name)]);
    }
    LinePart::write_line(buf, &parts, true);
}

fn bytes(entry: Option<&fastsum::diff::Entry>) -> &[u8] {
    entry.map_or(&b""[..], |e| e.path.as_os_str().as_encoded_bytes())
}

/// One JSON object: `change`, `old`, `new` (null where none), their
/// `_base64` forms for names that are not UTF-8, sizes and digests where
/// known.
fn write_json(buf: &mut Vec<u8>, change: &Change) {
    use std::io::Write as _;
    let _ = write!(buf, "{{\"change\":\"{}\"", change.kind.name());
    for (label, entry) in [("old", &change.old), ("new", &change.new)] {
        match entry {
            None => {
                let _ = write!(buf, ",\"{label}\":null");
            }
            Some(entry) => {
                buf.push(b',');
                Renderer::write_json_name(buf, label, entry.path.as_os_str().as_encoded_bytes());
                if let Some(size) = entry.size {
                    let _ = write!(buf, ",\"{label}_size\":{size}");
                }
                if let Some(digest) = entry.digest {
                    let _ = write!(buf, ",\"{label}_digest\":\"{digest}\"");
                }
            }
        }
    }
    buf.extend_from_slice(b"}\n");
}

fn write_json_problem(buf: &mut Vec<u8>, path: &Path, error: &str) {
    buf.extend_from_slice(b"{\"change\":\"error\",");
    Renderer::write_json_name(buf, "path", path.as_os_str().as_encoded_bytes());
    buf.extend_from_slice(b",\"error\":");
    buf.extend_from_slice(json_string(error).as_bytes());
    buf.extend_from_slice(b"}\n");
}

/// `--stat`: "2 added, 1 removed, 3 modified, 1 moved, 0 typechanges; 4096 bytes".
fn stat_line(s: &DiffSummary) -> String {
    let bytes = match (s.sizes_unknown, s.bytes_changed) {
        // No size was given at all (a remote method without sizes, a
        // manifest): not "0 bytes".
        (unknown, 0) if unknown > 0 => "bytes in added and modified files unknown".to_string(),
        (0, _) => count(
            s.bytes_changed,
            "byte in added and modified files",
            "bytes in added and modified files",
        ),
        (unknown, _) => format!(
            "{} (and {} of unknown size)",
            count(
                s.bytes_changed,
                "byte in added and modified files",
                "bytes in added and modified files"
            ),
            count(unknown, "file", "files")
        ),
    };
    format!(
        "{} added, {} removed, {} modified, {} moved, {}; {bytes}\n",
        s.added,
        s.removed,
        s.modified,
        s.moved,
        count(s.typechanges, "typechange", "typechanges"),
    )
}
