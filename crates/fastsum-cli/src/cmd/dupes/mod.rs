//! `fastsum dupes PATH...`: the library's groups of identical files,
//! printed (text or JSON Lines), with a summary on stderr.

pub(crate) mod dirs;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use fastsum::dupes::actions::{Action, ActionOutcome, Keep};
use fastsum::dupes::{DupesOptions, Group};
use fastsum::output::line::LinePart;
use fastsum::output::render::Renderer;
use fastsum::Algorithm;

use crate::term::count;
use crate::term::output::{Buffering, Output};

/// What `--help` and the man page say of hidden files, where fastsum and
/// fclones part (their counts differ on a tree with any).
const HIDDEN_FILES: &str = "Hidden files and directories (names starting with '.') are walked and \
counted, as find, rdfind and jdupes do; fclones leaves them out unless --hidden. To count as \
fclones does, add --exclude '.*'; to compare with fclones group, give it --hidden.";

/// List groups of files with identical bytes (directories are walked).
/// Exit status: 0 done, 1 some file could not be read, 2 usage.
#[derive(Parser, Debug)]
#[command(name = "fastsum dupes", version)]
#[command(after_help = HIDDEN_FILES)]
#[command(mut_arg("algorithm", |a| a.help("The whole-file digest (default xxh128; sha256, blake3 ... for a cryptographic one; with --dirs the default is blake3, since directories are told apart by digests alone)")))]
#[command(mut_arg("cache", |a| a.help("Whole-file digests from and to the checksum cache (PATH only after '=')")))]
struct DupesArgs {
    /// Files and directories.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    algorithm: crate::cmd::args::AlgorithmArg,
    /// Report directories whose whole contents are identical (names,
    /// kinds, bytes, link targets; docs/DIRECTORY-DIGEST.md), largest
    /// first, not their sub-directories again.
    #[arg(long)]
    dirs: bool,
    #[command(flatten)]
    jobs: crate::cmd::args::Threads,
    /// Leave out files smaller than this (bytes; K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = crate::term::parse_size)]
    min_size: Option<u64>,
    /// Leave out files larger than this.
    #[arg(long, value_name = "SIZE", value_parser = crate::term::parse_size)]
    max_size: Option<u64>,
    /// Group empty files too.
    #[arg(long)]
    empty: bool,
    /// Count paths that share an inode (hard links) as duplicates.
    #[arg(long)]
    hard_links: bool,
    #[command(flatten)]
    walk: crate::cmd::args::Walk,
    /// Compare the bytes of every member with the first's.
    #[arg(long)]
    verify: bool,
    #[command(flatten)]
    bar: crate::cmd::args::ProgressBar,
    #[command(flatten)]
    quiet: crate::cmd::args::Quiet,
    /// One JSON object per group (JSON Lines, docs/JSON.md).
    #[arg(long)]
    json: bool,
    /// List the files that have no duplicate instead.
    #[arg(long)]
    unique: bool,
    /// Replace each duplicate with a hard link to the kept file.
    #[arg(long, group = "action")]
    link: bool,
    /// Replace each duplicate with a symbolic link to the kept file.
    #[arg(long, group = "action")]
    symlink: bool,
    /// Replace each duplicate with a copy-on-write clone (file systems that have them).
    #[arg(long, group = "action")]
    reflink: bool,
    /// Remove each duplicate (the kept file stays: one copy of every content).
    #[arg(long, group = "action")]
    remove: bool,
    /// Which file of a group is kept: first (path order), oldest, newest.
    #[arg(long, value_name = "WHICH", default_value = "first", value_parser = ["first", "oldest", "newest"])]
    keep: String,
    /// Print every action and touch nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    cache: crate::cmd::args::CacheArg,
}

/// `fastsum dupes`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    DupesArgs::command()
}

/// Runs `fastsum dupes` with `args` (after the word `dupes`).
pub fn run(args: Vec<OsString>) -> i32 {
    let args = match crate::term::parse_subcommand::<DupesArgs>("fastsum dupes", args) {
        Ok(args) => args.quiet.applied(args),
        Err(status) => return status,
    };
    if args.dirs {
        return run_dirs(&args);
    }
    let algorithm = args.algorithm.or(Algorithm::Xxh128);
    let Some(cache) =
        crate::term::cache::open("fastsum dupes", &args.cache.asked(), algorithm, &args.paths)
    else {
        return 2;
    };
    let mut options = dupes_options(&args, algorithm, &cache);
    let found = with_progress(args.bar.shown(), &mut options, |options| {
        options.find_duplicates(&args.paths, args.unique)
    });
    drop(options);
    crate::term::cache::finish("fastsum dupes", cache);
    let report = match found {
        Ok(report) => report,
        Err(e) => {
            eprintln!("fastsum dupes: {e}");
            return 2;
        }
    };
    let mut out = Output::new(Buffering::Line);
    for problem in &report.problems {
        // A walked name: quoted as every other name dupes prints, so a
        // name holding ESC or a newline cannot reach the terminal raw.
        let name = crate::term::named_path(&problem.path);
        let message = format!("fastsum dupes: {name}: {}\n", problem.error);
        out.err_raw(message.as_bytes());
    }
    let action = action_of(&args);
    let mut all_done = clear_leftovers(&report, action, args.dry_run, &mut out);
    if let Some(action) = action {
        all_done &= act(&report, action, &args, &mut out);
    } else if args.unique {
        for path in &report.unique {
            crate::term::write_name(out.stdout_buf(), path.as_os_str().as_encoded_bytes(), "");
            out.commit();
        }
    } else {
        print_groups(&report, algorithm, args.json, &mut out);
    }
    if let Err(e) = out.finish() {
        eprintln!(
            "fastsum dupes: write error: {}",
            fastsum::Error::os_message(&e)
        );
        return 1;
    }
    i32::from(!report.problems.is_empty() || !all_done)
}

/// `--dirs`: identical directories, reported (the actions and the
/// options about single files do not apply).
fn run_dirs(args: &DupesArgs) -> i32 {
    let refused = [
        (
            action_of(args).is_some(),
            "--link, --symlink, --reflink and --remove",
        ),
        (args.unique, "--unique"),
        (args.verify, "--verify"),
        (
            args.min_size.is_some() || args.max_size.is_some(),
            "--min-size and --max-size",
        ),
        (args.empty || args.hard_links, "--empty and --hard-links"),
        (args.walk.max_depth.max_depth.is_some(), "--max-depth"),
    ];
    if let Some((_, what)) = refused.iter().find(|(given, _)| *given) {
        eprintln!(
            "fastsum dupes: --dirs reports identical directories; {what} apply to files only"
        );
        return 2;
    }
    let algorithm = args.algorithm.or(Algorithm::Blake3);
    let mut options = fastsum::TreeOptions::new();
    if let Some(threads) = args.jobs.asked() {
        options.threads = threads;
    }
    // --max-depth was refused above: directories are compared whole.
    options.walk = args.walk.options();
    crate::cmd::dupes::dirs::run(crate::cmd::dupes::dirs::DirsRun {
        paths: &args.paths,
        algorithm,
        options,
        cache: args.cache.asked(),
        json: args.json,
        progress: args.bar.shown(),
    })
}

fn dupes_options<'a>(
    args: &DupesArgs,
    algorithm: Algorithm,
    cache: &'a fastsum::cache::CacheRun,
) -> DupesOptions<'a> {
    DupesOptions {
        algorithm,
        walk: args.walk.options(),
        threads: args.jobs.asked().unwrap_or(0),
        min_size: args.min_size.unwrap_or(0),
        max_size: args.max_size,
        empty: args.empty,
        hard_links: args.hard_links,
        verify: args.verify,
        cache: cache.serves(algorithm).then_some(cache),
        progress: None,
    }
}

/// Runs `find` with the progress bar -r shows (files walked, then the
/// candidates hashed) when stderr is a terminal and it was not refused.
fn with_progress<R>(
    shown: bool,
    options: &mut DupesOptions<'_>,
    find: impl FnOnce(&DupesOptions<'_>) -> R,
) -> R {
    if !shown {
        return find(options);
    }
    let counters = std::sync::Arc::new(fastsum::Progress::default());
    options.progress = Some(counters.clone());
    let display = crate::term::progress::Display::default();
    std::thread::scope(|scope| {
        scope.spawn(|| display.run(&counters));
        let found = find(options);
        display.finish();
        found
    })
}

/// The action asked for, if any.
fn action_of(args: &DupesArgs) -> Option<Action> {
    [
        (args.link, Action::Link),
        (args.symlink, Action::Symlink),
        (args.reflink, Action::Reflink),
        (args.remove, Action::Remove),
    ]
    .into_iter()
    .find_map(|(asked, action)| asked.then_some(action))
}

/// What an interrupted run left, said; with an action (not a dry run),
/// removed where that loses nothing. False if one had to stay.
fn clear_leftovers(
    report: &fastsum::dupes::DupesReport,
    action: Option<Action>,
    dry_run: bool,
    out: &mut Output,
) -> bool {
    let mut all_done = true;
    for left in &report.leftovers {
        let name = crate::term::named_path(&left.path);
        let what = format!(
            "fastsum dupes: {name}: left over by an interrupted fastsum (pid {})",
            left.pid
        );
        let line = match action {
            Some(_) if !dry_run => match left.clear() {
                Ok(()) => {
                    format!("{what}: removed (a link; its bytes are kept elsewhere)\n")
                }
                Err(why) => {
                    all_done = false;
                    format!("{what}: not removed: {why}\n")
                }
            },
            _ => format!("{what}; an action run removes it where that loses nothing\n"),
        };
        out.err_raw(line.as_bytes());
    }
    all_done
}

/// The action on every group, each step said; false if one was skipped
/// or failed.
fn act(
    report: &fastsum::dupes::DupesReport,
    action: Action,
    args: &DupesArgs,
    out: &mut Output,
) -> bool {
    let keep = keep_of(&args.keep);
    let verb = match args.dry_run {
        true => format!("would {}", action.name()),
        false => action.name().to_string(),
    };
    let mut all_done = true;
    for group in &report.groups {
        group.act(&report.scope, action, keep, args.dry_run, &mut |acted| {
            let (member_bytes, kept_bytes) = (
                fastsum::name::path_bytes(&acted.member),
                fastsum::name::path_bytes(&acted.kept),
            );
            // Report lines escape names, messages quote them: no name forges a line.
            let (member, kept) = (
                crate::term::named(member_bytes),
                crate::term::named(kept_bytes),
            );
            let verb_part = format!("{verb}: ");
            match &acted.outcome {
                ActionOutcome::Done if action == Action::Remove => {
                    let parts = [
                        LinePart::Text(verb_part.as_bytes()),
                        LinePart::Name(member_bytes),
                    ];
                    LinePart::write_line(out.stdout_buf(), &parts, true);
                    out.commit();
                }
                ActionOutcome::Done => {
                    let parts = [
                        LinePart::Text(verb_part.as_bytes()),
                        LinePart::Name(member_bytes),
                        LinePart::Text(b" -> "),
                        LinePart::Name(kept_bytes),
                    ];
                    LinePart::write_line(out.stdout_buf(), &parts, true);
                    out.commit();
                }
                ActionOutcome::SameFile => out.err_raw(
                    format!(
                        "fastsum dupes: {member}: left as it is: it is {kept} by another name \
                         (the same inode)\n"
                    )
                    .as_bytes(),
                ),
                ActionOutcome::SameEntry(earlier) => {
                    let earlier = crate::term::named(fastsum::name::path_bytes(earlier));
                    out.err_raw(
                        format!(
                            "fastsum dupes: {member}: nothing more to do: it is {earlier} by \
                             another path to its directory (the same entry)\n"
                        )
                        .as_bytes(),
                    )
                }
                ActionOutcome::Skipped(why) => {
                    all_done = false;
                    out.err_raw(format!("fastsum dupes: {member}: skipped: {why}\n").as_bytes());
                }
                ActionOutcome::Failed(why) => {
                    all_done = false;
                    let name = action.name();
                    out.err_raw(
                        format!("fastsum dupes: {member}: {name} failed: {why}\n").as_bytes(),
                    );
                }
            }
        });
    }
    all_done
}

/// `--keep`'s word as the library's choice (clap allows only these).
fn keep_of(word: &str) -> Keep {
    match word {
        "oldest" => Keep::Oldest,
        "newest" => Keep::Newest,
        _ => Keep::First,
    }
}

/// The groups (text or JSON), then the count line on stderr.
fn print_groups(
    report: &fastsum::dupes::DupesReport,
    algorithm: Algorithm,
    json: bool,
    out: &mut Output,
) {
    for group in &report.groups {
        match json {
            true => write_json(out.stdout_buf(), group, algorithm),
            false => write_group(out.stdout_buf(), group, algorithm),
        }
        out.commit();
    }
    let files: usize = report.groups.iter().map(|g| g.members.len()).sum();
    let bytes: u64 = report.groups.iter().map(Group::redundant_bytes).sum();
    out.notice(
        format!(
            "fastsum dupes: {} of {}, {} redundant\n",
            count(report.groups.len() as u64, "group", "groups"),
            count(files as u64, "file", "files"),
            count(bytes, "byte", "bytes"),
        )
        .as_bytes(),
    );
}

/// `SIZE bytes, N files, ALGO DIGEST` and the paths, indented.
fn write_group(buf: &mut Vec<u8>, group: &Group, algorithm: Algorithm) {
    buf.extend_from_slice(
        format!(
            "{}, {}, {algorithm} {}\n",
            count(group.size, "byte", "bytes"),
            count(group.members.len() as u64, "file", "files"),
            group.digest
        )
        .as_bytes(),
    );
    for member in &group.members {
        crate::term::write_name(buf, member.path.as_os_str().as_encoded_bytes(), "  ");
    }
}

fn write_json(buf: &mut Vec<u8>, group: &Group, algorithm: Algorithm) {
    buf.extend_from_slice(
        format!(
            "{{\"size\":{},\"digest\":\"{}\",\"algorithm\":\"{algorithm}\",\"files\":[",
            group.size, group.digest
        )
        .as_bytes(),
    );
    for (i, member) in group.members.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.push(b'{');
        Renderer::write_json_name(buf, "path", member.path.as_os_str().as_encoded_bytes());
        buf.push(b'}');
    }
    buf.extend_from_slice(b"]}\n");
}
