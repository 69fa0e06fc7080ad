//! `fastsum contained SOURCE... --in ARCHIVE...`: the library's answer
//! (is every source file's content somewhere in the archives?) printed:
//! the files not contained, or with `-v` every file, or `--json`
//! records; `--dirs` the directories that could go whole; `--remove`
//! the contained files removed. A count line on stderr.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use fastsum::contained::{Archive, ContainedOptions, ContainedReport, Verdict};
use fastsum::dupes::actions::{Acted, ActionOutcome};
use fastsum::output::line::LinePart;
use fastsum::output::render::Renderer;

use crate::term::count;
use crate::term::output::{Buffering, Output};

const AFTER_HELP: &str = "Without -v, standard output lists the files NOT contained, one a line \
(names escaped as every report line's); -v adds a line 'contained<TAB>PATH<TAB>ARCHIVE<TAB>COPY' \
for each contained file (a raw tab never appears in an escaped name). Symbolic links, FIFOs, \
sockets and devices are skipped (not files' bytes) and never followed or opened. With --remove, \
--json writes a record per file ('removed' or, with --dry-run, 'would_remove': true, or false \
with 'error'). Exit status: 0 every file contained (nothing skipped: a skipped entry is not \
known to be there), 1 some not (or skipped), 2 trouble (a file that could not be read or changed while \
read, a bad manifest line, usage; with --remove, an action not done).";

/// Tell whether every file under SOURCE has a copy of its bytes somewhere
/// in the ARCHIVEs (directories, manifests, [USER@]HOST:PATH trees or S3
/// prefixes),
/// whatever its name or path.
#[derive(Parser, Debug)]
#[command(name = "fastsum contained", version)]
#[command(after_help = AFTER_HELP)]
#[command(mut_arg("cache", |a| a.help("Whole-file digests of the sources and archive trees from and to the checksum cache, in a manifest's own algorithm too (PATH only after '=')")))]
#[command(mut_arg("algorithm", |a| a.help("What a manifest's untagged lines are (as for -c), and which of several digests a file is compared by (else all of them); a HOST:PATH archive is hashed in it (default md5)")))]
struct ContainedArgs {
    /// Directories and files whose files are looked for.
    #[arg(required = true, value_name = "SOURCE")]
    sources: Vec<PathBuf>,
    #[command(flatten)]
    algorithm: crate::cmd::args::AlgorithmArg,
    /// Where copies may be: a directory, a manifest (md5sum or sha*sum
    /// lines, BSD tags, fastsum --json, hashdeep), [USER@]HOST:PATH (a
    /// tree hashed there, in -a's algorithm, md5 by default; ./a:b is
    /// local), or s3://BUCKET[/PREFIX] (objects decided by every digest
    /// S3 keeps of them). Repeatable: the union.
    #[arg(long = "in", value_name = "ARCHIVE", required = true)]
    archives: Vec<PathBuf>,
    /// Also name, for each contained file, one archive path holding its bytes.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// One JSON object per file (JSON Lines).
    #[arg(long)]
    json: bool,
    /// Compare each file byte for byte with the archive copy that holds it
    /// before calling it contained (an S3 object is streamed; a manifest's
    /// entry stands by its digest).
    #[arg(long)]
    verify: bool,
    /// List the directories of SOURCE whose every file is contained, largest first.
    #[arg(long)]
    dirs: bool,
    /// Remove every contained source file (only when every ARCHIVE is a
    /// local directory; checked again just before each removal).
    #[arg(long)]
    remove: bool,
    /// With --remove: print what would be removed, touch nothing.
    #[arg(long, requires = "remove")]
    dry_run: bool,
    #[command(flatten)]
    cache: crate::cmd::args::CacheArg,
    #[command(flatten)]
    exclude: crate::cmd::args::Exclude,
    #[command(flatten)]
    one_file_system: crate::cmd::args::OneFileSystem,
    #[command(flatten)]
    remote: crate::cmd::args::RemoteArgs,
    #[command(flatten)]
    s3: crate::cmd::args::S3Args,
    #[command(flatten)]
    jobs: crate::cmd::args::Threads,
    #[command(flatten)]
    quiet: crate::cmd::args::Quiet,
}

/// `fastsum contained`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    ContainedArgs::command()
}

/// Runs `fastsum contained` with `args` (after the word `contained`).
pub fn run(args: Vec<OsString>) -> i32 {
    let args = match crate::term::parse_subcommand::<ContainedArgs>("fastsum contained", args) {
        Ok(args) => args.quiet.applied(args),
        Err(status) => return status,
    };
    let archives: Vec<Archive> = args.archives.iter().map(|o| Archive::of(o)).collect();
    // The trees' whole-file stage is XXH3-128's, loaded here; a
    // manifest's or a remote listing's algorithm is loaded by the library
    // once the list is read, for the source files hashed in it.
    let roots: Vec<PathBuf> = args
        .sources
        .iter()
        .chain(archives.iter().filter_map(|a| match a {
            Archive::Tree(p) => Some(p),
            _ => None,
        }))
        .cloned()
        .collect();
    let Some(cache) = crate::term::cache::open(
        "fastsum contained",
        &args.cache.asked(),
        fastsum::Algorithm::Xxh128,
        &roots,
    ) else {
        return 2;
    };
    let options = ContainedOptions {
        walk: fastsum::walk::WalkOptions {
            one_file_system: args.one_file_system.one_file_system,
            excludes: args.exclude.globs(),
            ..Default::default()
        },
        threads: args.jobs.asked().unwrap_or(0),
        algorithm: args.algorithm.named(),
        verify: args.verify,
        cache: cache.is_open().then_some(&cache),
        remote: args.remote.options(),
        s3: args.s3.options(args.jobs.asked(), &args.cache),
        remove: args.remove,
    };
    let found = options.find_contained(&args.sources, &archives);
    drop(options);
    crate::term::cache::finish("fastsum contained", cache);
    let report = match found {
        Ok(report) => report,
        Err(e) => {
            eprintln!("fastsum contained: {e}");
            return 2;
        }
    };
    let mut out = Output::new(Buffering::Line);
    say_problems(&report, &mut out);
    let acted = if args.remove {
        remove(&report, args.dry_run, args.json, &mut out)
    } else if args.dirs {
        print_dirs(&report, args.json, &mut out)
    } else {
        print_verdicts(&report, &args, &archives, &mut out);
        true
    };
    say_summary(&report, &mut out);
    if let Err(e) = out.finish() {
        eprintln!(
            "fastsum contained: write error: {}",
            fastsum::Error::os_message(&e)
        );
        return 2;
    }
    let summary = report.summary();
    if !report.problems.is_empty() || !acted {
        2
    } else {
        // What was skipped (a link, a FIFO) is not known to be there:
        // exit 0 says the whole source is, with -q too.
        i32::from(summary.missing_files > 0 || !report.skipped.is_empty())
    }
}

/// What could not be read (errors), and what was skipped (notices).
fn say_problems(report: &ContainedReport, out: &mut Output) {
    for problem in &report.problems {
        let name = crate::term::named_path(&problem.path);
        out.err_raw(format!("fastsum contained: {name}: {}\n", problem.error).as_bytes());
    }
    for skipped in &report.skipped {
        let name = crate::term::named_path(&skipped.path);
        let what = skipped.kind.describe();
        out.notice(
            format!("fastsum contained: {name}: skipped: a {what} (not a file's bytes)\n")
                .as_bytes(),
        );
    }
}

/// The files not contained (with `-v` every file), or JSON records.
fn print_verdicts(
    report: &ContainedReport,
    args: &ContainedArgs,
    archives: &[Archive],
    out: &mut Output,
) {
    for verdict in &report.verdicts {
        let path = fastsum::name::path_bytes(&verdict.path);
        match (&verdict.copy, args.json) {
            (_, true) => write_json(out.stdout_buf(), verdict, archives),
            (None, false) => crate::term::write_name(out.stdout_buf(), path, ""),
            (Some(copy), false) if args.verbose => {
                let archive = fastsum::name::path_bytes(archives[copy.archive].path());
                let parts = [
                    LinePart::Text(b"contained\t"),
                    LinePart::Name(path),
                    LinePart::Text(b"\t"),
                    LinePart::Name(archive),
                    LinePart::Text(b"\t"),
                    LinePart::Name(fastsum::name::path_bytes(&copy.path)),
                ];
                LinePart::write_line(out.stdout_buf(), &parts, true);
            }
            (Some(_), false) => continue,
        }
        out.commit();
    }
    if args.json {
        for problem in &report.problems {
            let buf = out.stdout_buf();
            buf.push(b'{');
            Renderer::write_json_name(buf, "path", fastsum::name::path_bytes(&problem.path));
            buf.push(b',');
            Renderer::write_json_name(buf, "error", problem.error.as_bytes());
            buf.extend_from_slice(b"}\n");
            out.commit();
        }
    }
}

/// `{"path":...,"size":N,"contained":true,"archive":...,"copy":...}`.
fn write_json(buf: &mut Vec<u8>, verdict: &Verdict, archives: &[Archive]) {
    buf.push(b'{');
    Renderer::write_json_name(buf, "path", fastsum::name::path_bytes(&verdict.path));
    buf.extend_from_slice(format!(",\"size\":{}", verdict.stamp.size).as_bytes());
    match &verdict.copy {
        None => buf.extend_from_slice(b",\"contained\":false"),
        Some(copy) => {
            buf.extend_from_slice(b",\"contained\":true,");
            let archive = archives[copy.archive].path();
            Renderer::write_json_name(buf, "archive", fastsum::name::path_bytes(archive));
            buf.push(b',');
            Renderer::write_json_name(buf, "copy", fastsum::name::path_bytes(&copy.path));
        }
    }
    buf.extend_from_slice(b"}\n");
}

/// `--dirs`: `BYTES bytes, N files<TAB>DIRECTORY`, largest first (or JSON);
/// false when refused (a source overlaps an archive tree).
fn print_dirs(report: &ContainedReport, json: bool, out: &mut Output) -> bool {
    let dirs = match report.whole_directories() {
        Ok(dirs) => dirs,
        Err(why) => {
            out.err_raw(format!("fastsum contained: --dirs refused: {why}\n").as_bytes());
            return false;
        }
    };
    for dir in dirs {
        let path = fastsum::name::path_bytes(&dir.path);
        if json {
            let buf = out.stdout_buf();
            buf.push(b'{');
            Renderer::write_json_name(buf, "path", path);
            buf.extend_from_slice(
                format!(",\"files\":{},\"bytes\":{}}}\n", dir.files, dir.bytes).as_bytes(),
            );
        } else {
            let head = format!(
                "{}, {}\t",
                count(dir.bytes, "byte", "bytes"),
                count(dir.files, "file", "files")
            );
            let parts = [LinePart::Text(head.as_bytes()), LinePart::Name(path)];
            LinePart::write_line(out.stdout_buf(), &parts, true);
        }
        out.commit();
    }
    true
}

/// `--remove`: each contained file removed (or, with `--dry-run`, said),
/// a line or (`--json`) a record each; false if refused, or one was
/// skipped or failed.
fn remove(report: &ContainedReport, dry_run: bool, json: bool, out: &mut Output) -> bool {
    let verb = if dry_run {
        "would remove: "
    } else {
        "remove: "
    };
    let key = if dry_run { "would_remove" } else { "removed" };
    let mut all_done = true;
    let refused = report.remove(dry_run, &mut |acted: Acted| {
        let member = fastsum::name::path_bytes(&acted.member);
        let why = match &acted.outcome {
            ActionOutcome::Done => None,
            ActionOutcome::SameFile | ActionOutcome::SameEntry(_) => Some(format!(
                "it is its archive copy {} itself",
                crate::term::named_path(&acted.kept)
            )),
            ActionOutcome::Skipped(why) | ActionOutcome::Failed(why) => Some(why.clone()),
        };
        if let Some(why) = &why {
            all_done = false;
            let line = format!(
                "fastsum contained: {}: not removed: {why}\n",
                crate::term::named(member)
            );
            out.err_raw(line.as_bytes());
        }
        if json {
            let buf = out.stdout_buf();
            buf.push(b'{');
            Renderer::write_json_name(buf, "path", member);
            buf.extend_from_slice(format!(",\"{key}\":{}", why.is_none()).as_bytes());
            if let Some(why) = &why {
                buf.push(b',');
                Renderer::write_json_name(buf, "error", why.as_bytes());
            }
            buf.extend_from_slice(b"}\n");
        } else if why.is_none() {
            let parts = [LinePart::Text(verb.as_bytes()), LinePart::Name(member)];
            LinePart::write_line(out.stdout_buf(), &parts, true);
        }
        out.commit();
    });
    if let Err(why) = refused {
        out.err_raw(format!("fastsum contained: --remove refused: {why}\n").as_bytes());
        return false;
    }
    all_done
}

/// `fastsum contained: N files contained (B bytes), M not contained (C
/// bytes)`, and the entries skipped and problems, if any.
fn say_summary(report: &ContainedReport, out: &mut Output) {
    let s = report.summary();
    let mut line = format!(
        "fastsum contained: {} contained ({}), {} not contained ({})",
        count(s.contained_files, "file", "files"),
        count(s.contained_bytes, "byte", "bytes"),
        count(s.missing_files, "file", "files"),
        count(s.missing_bytes, "byte", "bytes"),
    );
    if !report.skipped.is_empty() {
        let n = report.skipped.len() as u64;
        line += &format!(", {} skipped (not files)", count(n, "entry", "entries"));
    }
    if !report.problems.is_empty() {
        let n = report.problems.len() as u64;
        line += &format!(", {}", count(n, "problem", "problems"));
    }
    line.push('\n');
    match report.problems.is_empty() {
        true => out.notice(line.as_bytes()),
        false => out.err_raw(line.as_bytes()),
    }
}
