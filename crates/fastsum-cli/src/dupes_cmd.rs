//! `fastsum dupes PATH...`: the library's groups of identical files,
//! printed (text or JSON Lines), with a summary on stderr.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{CommandFactory, Parser};
use fastsum::cache::Cache;
use fastsum::dupes::actions::{act_on_group, Action, Keep, Outcome as ActOutcome};
use fastsum::dupes::leftovers::{self, Cleared};
use fastsum::dupes::{find_duplicates, DupesOptions, Group};
use fastsum::manifest::{needs_escape, write_escaped};
use fastsum::walk::WalkOptions;
use fastsum::Algorithm;

use crate::term::count;
use crate::term::output::{Buffering, Output};

/// List groups of files with identical bytes (directories are walked).
/// Exit status: 0 done, 1 some file could not be read, 2 usage.
#[derive(Parser, Debug)]
#[command(name = "fastsum dupes", version)]
struct DupesArgs {
    /// Files and directories.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The whole-file digest (default xxh128; sha256, blake3 ... for a
    /// cryptographic one).
    #[arg(
        short = 'a',
        long = "algorithm",
        value_name = "NAME",
        default_value = "xxh128"
    )]
    algorithm: String,
    /// Hashing threads (default: all cores).
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u16).range(0..=1024))]
    threads: u16,
    /// Leave out files smaller than this (bytes; K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    min_size: Option<u64>,
    /// Leave out files larger than this.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_size: Option<u64>,
    /// Group empty files too.
    #[arg(long)]
    empty: bool,
    /// Count paths that share an inode (hard links) as duplicates.
    #[arg(long)]
    hard_links: bool,
    /// Leave out matching paths (gitignore syntax; repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Follow symbolic links.
    #[arg(short = 'L', long = "follow")]
    follow: bool,
    /// Stay on the file system of each directory.
    #[arg(long)]
    one_file_system: bool,
    /// Compare the bytes of every member with the first's.
    #[arg(long)]
    verify: bool,
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
    /// Whole-file digests from and to the checksum cache (PATH only after '=').
    #[arg(long, value_name = "PATH", num_args = 0..=1, require_equals = true)]
    cache: Option<Option<PathBuf>>,
}

fn parse_size(text: &str) -> Result<u64, String> {
    let (digits, unit) = match text.as_bytes().last() {
        Some(b'K' | b'k') => (&text[..text.len() - 1], 1u64 << 10),
        Some(b'M' | b'm') => (&text[..text.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| format!("not a size: {text}"))
}

/// `fastsum dupes`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    DupesArgs::command()
}

/// Runs `fastsum dupes` with `args` (after the word `dupes`).
pub fn run(args: Vec<OsString>) -> i32 {
    let args: DupesArgs = match crate::term::parse_subcommand("fastsum dupes", args) {
        Ok(args) => args,
        Err(status) => return status,
    };
    let algorithm = match args.algorithm.parse::<Algorithm>() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fastsum dupes: {e}");
            return 2;
        }
    };
    let mut cache = None;
    if let Some(path) = &args.cache {
        let path = match path {
            None => Cache::default_path().unwrap_or_default(),
            Some(path) => path.clone(),
        };
        match Cache::open(&path) {
            Ok(c) => cache = Some(c),
            Err(e) => eprintln!("fastsum dupes: cache: {e}; going on without it"),
        }
    }
    let session = cache.as_mut().and_then(|cache| {
        let roots: Vec<PathBuf> = args
            .paths
            .iter()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .collect();
        match cache.session(algorithm, &roots) {
            Ok(session) => Some(Arc::new(session)),
            Err(e) => {
                eprintln!("fastsum dupes: cache: {e}; going on without it");
                None
            }
        }
    });
    let options = DupesOptions {
        algorithm,
        walk: WalkOptions {
            follow_links: args.follow,
            one_file_system: args.one_file_system,
            excludes: args.exclude.clone(),
            ..WalkOptions::default()
        },
        threads: usize::from(args.threads),
        min_size: args.min_size.unwrap_or(0),
        max_size: args.max_size,
        empty: args.empty,
        hard_links: args.hard_links,
        verify: args.verify,
        cache: session.clone(),
    };
    let report = match find_duplicates(&args.paths, &options, args.unique) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("fastsum dupes: {e}");
            return 2;
        }
    };
    drop(options);
    if let (Some(mut cache), Some(session)) = (cache, session) {
        if let Some(session) = Arc::into_inner(session) {
            if let Err(e) = session.finish(&mut cache) {
                eprintln!("fastsum dupes: cache: {e}");
            }
        }
    }
    let mut out = Output::new(Buffering::Line);
    for problem in &report.problems {
        out.err_raw(
            format!(
                "fastsum dupes: {}: {}\n",
                problem.path.display(),
                problem.error
            )
            .as_bytes(),
        );
    }
    let action = if args.link {
        Some(Action::Link)
    } else if args.symlink {
        Some(Action::Symlink)
    } else if args.reflink {
        Some(Action::Reflink)
    } else if args.remove {
        Some(Action::Remove)
    } else {
        None
    };
    let keep = match args.keep.as_str() {
        "oldest" => Keep::Oldest,
        "newest" => Keep::Newest,
        _ => Keep::First,
    };
    let mut all_done = true;
    for left in &report.leftovers {
        let what = format!(
            "fastsum dupes: {}: left over by an interrupted fastsum (pid {})",
            left.path.display(),
            left.pid
        );
        let line = match action {
            Some(_) if !args.dry_run => match leftovers::clear(left) {
                Cleared::Removed => {
                    format!("{what}: removed (a link; its bytes are kept elsewhere)\n")
                }
                Cleared::Kept(why) => {
                    all_done = false;
                    format!("{what}: not removed: {why}\n")
                }
            },
            _ => format!("{what}; an action run removes it where that loses nothing\n"),
        };
        out.err_raw(line.as_bytes());
    }
    if let Some(action) = action {
        for group in &report.groups {
            act_on_group(
                group,
                action,
                keep,
                args.dry_run,
                &mut |_, _| {},
                &mut |acted| {
                    let verb = if args.dry_run {
                        format!("would {}", action.name())
                    } else {
                        action.name().to_string()
                    };
                    match &acted.outcome {
                        ActOutcome::Done => {
                            let line = match action {
                                Action::Remove => format!("{verb}: {}\n", acted.member.display()),
                                _ => format!(
                                    "{verb}: {} -> {}\n",
                                    acted.member.display(),
                                    acted.kept.display()
                                ),
                            };
                            out.out(line.as_bytes());
                        }
                        ActOutcome::SameFile => out.err_raw(
                            format!(
                                "fastsum dupes: {}: left as it is: it is {} by another name \
                                 (the same inode)\n",
                                acted.member.display(),
                                acted.kept.display()
                            )
                            .as_bytes(),
                        ),
                        ActOutcome::Skipped(why) => {
                            all_done = false;
                            out.err_raw(
                                format!(
                                    "fastsum dupes: {}: skipped: {why}\n",
                                    acted.member.display()
                                )
                                .as_bytes(),
                            );
                        }
                        ActOutcome::Failed(why) => {
                            all_done = false;
                            out.err_raw(
                                format!(
                                    "fastsum dupes: {}: {} failed: {why}\n",
                                    acted.member.display(),
                                    action.name()
                                )
                                .as_bytes(),
                            );
                        }
                    }
                },
            );
        }
    } else if args.unique {
        for path in &report.unique {
            write_name(out.stdout_buf(), path.as_os_str().as_encoded_bytes(), "");
            out.commit();
        }
    } else {
        for group in &report.groups {
            if args.json {
                write_json(out.stdout_buf(), group, algorithm);
            } else {
                write_group(out.stdout_buf(), group, algorithm);
            }
            out.commit();
        }
        let files: usize = report.groups.iter().map(|g| g.members.len()).sum();
        let bytes: u64 = report.groups.iter().map(Group::redundant_bytes).sum();
        out.err_raw(
            format!(
                "fastsum dupes: {} of {}, {} redundant\n",
                count(report.groups.len() as u64, "group", "groups"),
                count(files as u64, "file", "files"),
                count(bytes, "byte", "bytes"),
            )
            .as_bytes(),
        );
    }
    if let Err(e) = out.finish() {
        eprintln!(
            "fastsum dupes: write error: {}",
            fastsum::error::os_message(&e)
        );
        return 1;
    }
    i32::from(!report.problems.is_empty() || !all_done)
}

/// A name on a line of its own after `indent`, escaped as fastsum's lines
/// escape names (a leading `\` when it holds `\`, a newline or a CR).
fn write_name(buf: &mut Vec<u8>, name: &[u8], indent: &str) {
    if needs_escape(name) {
        buf.push(b'\\');
        buf.extend_from_slice(indent.as_bytes());
        write_escaped(name, buf);
    } else {
        buf.extend_from_slice(indent.as_bytes());
        buf.extend_from_slice(name);
    }
    buf.push(b'\n');
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
        write_name(buf, member.path.as_os_str().as_encoded_bytes(), "  ");
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
        fastsum::manifest::json::write_name(
            buf,
            "path",
            member.path.as_os_str().as_encoded_bytes(),
        );
        buf.push(b'}');
    }
    buf.extend_from_slice(b"]}\n");
}
