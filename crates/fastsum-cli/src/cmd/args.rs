//! Options several subcommands share with fastsum's own mode, each
//! declared once: its names, its value's name and its words come from
//! fastsum's option table (`crate::mode::flags::shared_arg`), and each
//! group here says how a subcommand reads it (the value's type, the one
//! way to use it). A command that says more of an option in its help
//! (what the algorithm is for, its default) does so with `mut_arg` on its
//! own arguments. Every group is flattened into the commands' clap
//! arguments (`#[command(flatten)]`).

use std::path::PathBuf;

use clap::{ArgAction, ArgMatches, Command};
use fastsum::walk::WalkOptions;
use fastsum::Algorithm;

use crate::mode::flags::shared_arg;

/// Implements clap's `Args` for a group: `args` are added to a command in
/// that order, and `read` builds the group from the matches.
macro_rules! group {
    ($group:ty, [$($arg:expr),* $(,)?], |$m:ident| $read:expr) => {
        impl clap::FromArgMatches for $group {
            fn from_arg_matches($m: &ArgMatches) -> Result<Self, clap::Error> {
                Ok($read)
            }

            fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
                *self = <Self as clap::FromArgMatches>::from_arg_matches(m)?;
                Ok(())
            }
        }

        impl clap::Args for $group {
            fn augment_args(cmd: Command) -> Command {
                cmd$(.arg($arg))*
            }

            fn augment_args_for_update(cmd: Command) -> Command {
                <Self as clap::Args>::augment_args(cmd)
            }
        }
    };
}

/// A flag's value (`SetTrue`: false when not given).
fn flag(m: &ArgMatches, id: &str) -> bool {
    m.get_one::<bool>(id).copied().unwrap_or(false)
}

/// `-a/--algorithm NAME` (diff, dupes, audit, scrub, tree-digest,
/// contained, remote-command).
#[derive(Debug, Clone, Copy)]
pub struct AlgorithmArg {
    algorithm: Option<Algorithm>,
}

group!(
    AlgorithmArg,
    [shared_arg("algorithm").value_parser(crate::term::parse_algorithm)],
    |m| AlgorithmArg {
        algorithm: m.get_one::<Algorithm>("algorithm").copied(),
    }
);

impl AlgorithmArg {
    /// The algorithm named, if any (a command with a default gives it to
    /// clap, so it is always named there).
    pub fn named(self) -> Option<Algorithm> {
        self.algorithm
    }

    /// The algorithm named, else `default`.
    pub fn or(self, default: Algorithm) -> Algorithm {
        self.algorithm.unwrap_or(default)
    }
}

/// `--cache[=PATH]` (diff, dupes, audit, scrub, tree-digest, contained):
/// the checksum cache, PATH only after `=`, the default path resolved by
/// `term::cache::path`.
#[derive(Debug, Clone)]
pub struct CacheArg {
    /// `None`: not asked; `Some(None)`: the default cache.
    cache: Option<Option<PathBuf>>,
}

group!(
    CacheArg,
    [shared_arg("cache").value_parser(clap::value_parser!(PathBuf))],
    |m| CacheArg {
        cache: m
            .contains_id("cache")
            .then(|| m.get_one::<PathBuf>("cache").cloned()),
    }
);

impl CacheArg {
    /// What was asked: no cache, the default one, or the one at PATH.
    pub fn asked(&self) -> crate::term::cache::CacheChoice {
        self.cache.clone().into()
    }
}

/// `--exclude GLOB` and `--exclude-from FILE`, repeatable (diff, dupes,
/// contained, scrub, tree-digest).
#[derive(Debug, Clone)]
pub struct Exclude {
    exclude: Vec<String>,
    exclude_from: Vec<ExcludeGlobs>,
}

group!(
    Exclude,
    [
        shared_arg("exclude").action(ArgAction::Append),
        shared_arg("exclude_from")
            .action(ArgAction::Append)
            .value_parser(parse_exclude_file),
    ],
    |m| Exclude {
        exclude: m
            .get_many::<String>("exclude")
            .map(|v| v.cloned().collect())
            .unwrap_or_default(),
        exclude_from: m
            .get_many::<ExcludeGlobs>("exclude_from")
            .map(|v| v.cloned().collect())
            .unwrap_or_default(),
    }
);

impl Exclude {
    /// Every glob asked for, from `--exclude` and the `--exclude-from` files.
    pub fn globs(&self) -> Vec<String> {
        let mut globs = self.exclude.clone();
        for file in &self.exclude_from {
            globs.extend(file.0.iter().cloned());
        }
        globs
    }
}

/// The globs of one `--exclude-from` file, read as clap parses it.
#[derive(Debug, Clone)]
struct ExcludeGlobs(Vec<String>);

fn parse_exclude_file(path: &str) -> Result<ExcludeGlobs, String> {
    match crate::term::exclude_file::read_exclude_file(std::path::Path::new(path)) {
        Ok(globs) => Ok(ExcludeGlobs(globs)),
        Err(e) => Err(e.to_string()),
    }
}

/// `--max-depth N` (diff, dupes).
#[derive(Debug, Clone, Copy)]
pub struct MaxDepth {
    pub max_depth: Option<usize>,
}

group!(
    MaxDepth,
    [shared_arg("max_depth").value_parser(clap::value_parser!(usize))],
    |m| MaxDepth {
        max_depth: m.get_one::<usize>("max_depth").copied(),
    }
);

/// `-j/--threads N` (diff, dupes, audit, scrub, tree-digest, contained).
#[derive(Debug, Clone, Copy)]
pub struct Threads {
    threads: u16,
}

group!(
    Threads,
    [shared_arg("threads").value_parser(clap::value_parser!(u16).range(0..=1024))],
    |m| Threads {
        threads: m.get_one::<u16>("threads").copied().unwrap_or(0),
    }
);

impl Threads {
    /// The count asked for; `None` for every core (no `-j`, or `-j 0`).
    pub fn asked(self) -> Option<usize> {
        (self.threads > 0).then_some(usize::from(self.threads))
    }

    /// The count to run with.
    pub fn or_all(self) -> usize {
        self.asked()
            .unwrap_or_else(fastsum::TreeOptions::available_threads)
    }
}

/// `--no-progress`.
#[derive(Debug, Clone, Copy)]
pub struct ProgressBar {
    no_progress: bool,
}

group!(ProgressBar, [shared_arg("no_progress")], |m| ProgressBar {
    no_progress: flag(m, "no_progress"),
});

impl ProgressBar {
    /// Whether the bar may show: not asked away, and stderr a terminal.
    pub fn shown(self) -> bool {
        crate::term::progress::wanted(self.no_progress)
    }
}

/// `-q/--quiet` (dupes, audit, scrub, tree-digest, contained; diff's
/// own -q prints nothing at all).
#[derive(Debug, Clone, Copy)]
pub struct Quiet {
    quiet: bool,
}

group!(Quiet, [shared_arg("quiet")], |m| Quiet {
    quiet: flag(m, "quiet"),
});

impl Quiet {
    /// Sets it for the run (`term::quiet`), and gives back `args`, the
    /// arguments it was parsed with.
    pub fn applied<T>(self, args: T) -> T {
        crate::term::set_quiet(self.quiet);
        args
    }
}

/// `-L/--follow` (diff, dupes, tree-digest).
#[derive(Debug, Clone, Copy)]
pub struct Follow {
    pub follow: bool,
}

group!(Follow, [shared_arg("follow")], |m| Follow {
    follow: flag(m, "follow"),
});

/// `--one-file-system` (diff, dupes, scrub, tree-digest, contained).
#[derive(Debug, Clone, Copy)]
pub struct OneFileSystem {
    pub one_file_system: bool,
}

group!(OneFileSystem, [shared_arg("one_file_system")], |m| {
    OneFileSystem {
        one_file_system: flag(m, "one_file_system"),
    }
});

/// How the trees are walked (diff, dupes).
#[derive(clap::Args, Debug, Clone)]
pub struct Walk {
    #[command(flatten)]
    pub exclude: Exclude,
    #[command(flatten)]
    pub max_depth: MaxDepth,
    #[command(flatten)]
    pub follow: Follow,
    #[command(flatten)]
    pub one_file_system: OneFileSystem,
}

impl Walk {
    /// The walk these options ask for.
    pub fn options(&self) -> WalkOptions {
        WalkOptions {
            follow_links: self.follow.follow,
            one_file_system: self.one_file_system.one_file_system,
            excludes: self.exclude.globs(),
            max_depth: self.max_depth.max_depth,
            ..WalkOptions::default()
        }
    }
}

/// How `[USER@]HOST:PATH` operands are reached (diff's sides, contained's
/// archives): `-e/--rsh`, `--remote-method`, `--remote-fastsum`.
#[derive(Debug, Clone, Default)]
pub struct RemoteArgs {
    rsh: Option<String>,
    remote_method: Option<String>,
    remote_fastsum: Option<String>,
}

group!(
    RemoteArgs,
    [
        shared_arg("rsh"),
        shared_arg("remote_method").value_parser(["fastsum", "coreutils", "bsd", "perl", "python"]),
        shared_arg("remote_fastsum"),
    ],
    |m| RemoteArgs {
        rsh: m.get_one::<String>("rsh").cloned(),
        remote_method: m.get_one::<String>("remote_method").cloned(),
        remote_fastsum: m.get_one::<String>("remote_fastsum").cloned(),
    }
);

impl RemoteArgs {
    /// The remote options these say ([`crate::term::remote_options_with`]).
    pub fn options(&self) -> fastsum::remote::RemoteOptions {
        crate::term::remote_options_with(
            self.rsh.as_deref(),
            self.remote_method.as_deref(),
            self.remote_fastsum.as_deref(),
        )
    }
}

/// How `s3://BUCKET/PREFIX` operands are reached and decided (diff's
/// sides, contained's archives): `--s3-path-style`, `--download`.
#[derive(Debug, Clone, Copy, Default)]
pub struct S3Args {
    s3_path_style: bool,
    download: bool,
}

group!(
    S3Args,
    [shared_arg("s3_path_style"), shared_arg("download")],
    |m| S3Args {
        s3_path_style: flag(m, "s3_path_style"),
        download: flag(m, "download"),
    }
);

impl S3Args {
    /// The S3 options these say: `jobs` requests at once, what S3 said
    /// of each object kept beside the digest cache (its path + `.s3`)
    /// when `cache` asks for one.
    pub fn options(self, jobs: Option<usize>, cache: &CacheArg) -> fastsum::s3::S3Options {
        // The path resolved as the digest cache's (no home: that cache
        // has already refused the run with the one message).
        let claims = cache
            .asked()
            .path()
            .ok()
            .flatten()
            .map(|path| crate::term::cache::s3_claims(&path));
        fastsum::s3::S3Options {
            path_style: self.s3_path_style,
            download: self.download,
            jobs: jobs.unwrap_or(0),
            cache: claims,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};

    /// Every command that flattens a shared group is a valid clap command
    /// (no id twice, no `mut_arg` of an option it does not have), and each
    /// shared option takes its names from fastsum's own definition.
    #[test]
    fn every_command_with_shared_options_is_well_formed() {
        for command in [
            crate::cmd::audit::command(),
            crate::cmd::contained::command(),
            crate::cmd::diff::command(),
            crate::cmd::dupes::command(),
            crate::cmd::remote::command(),
            crate::cmd::scrub::command(),
            crate::cmd::tree_digest::command(),
        ] {
            command.debug_assert();
        }
        let diff = crate::cmd::diff::command();
        let jobs = diff.get_arguments().find(|a| a.get_id() == "threads");
        let jobs = jobs.expect("diff has -j");
        assert_eq!(jobs.get_short(), Some('j'));
        assert_eq!(jobs.get_long(), Some("threads"));
        assert_eq!(
            jobs.get_help().map(ToString::to_string).as_deref(),
            Some("Hashing threads (default: all cores)")
        );
    }

    /// What a group reads is what the command line said: a flag absent and
    /// given, a repeated value kept in order, `--cache` without and with
    /// a path, a number out of range refused.
    #[test]
    fn groups_read_what_the_command_line_said() {
        let command = || {
            let c = clap::Command::new("t");
            let c = super::Walk::augment_args(c);
            let c = super::CacheArg::augment_args(c);
            super::Threads::augment_args(c)
        };
        let read = |args: &[&str]| {
            let m =
                command().try_get_matches_from(std::iter::once("t").chain(args.iter().copied()));
            m.map(|m| {
                let walk = super::Walk::from_arg_matches(&m).unwrap();
                let cache = super::CacheArg::from_arg_matches(&m).unwrap();
                let threads = super::Threads::from_arg_matches(&m).unwrap();
                (walk, cache.cache, threads.asked())
            })
        };
        let (walk, cache, threads) = read(&[]).unwrap();
        let options = walk.options();
        assert!(!options.follow_links && !options.one_file_system);
        assert!(options.excludes.is_empty() && options.max_depth.is_none());
        assert_eq!((cache, threads), (None, None));

        let (walk, cache, threads) = read(&[
            "-L",
            "--one-file-system",
            "--exclude",
            "b",
            "--exclude=a",
            "--max-depth",
            "3",
            "--cache",
            "-j",
            "7",
        ])
        .unwrap();
        let options = walk.options();
        assert!(options.follow_links && options.one_file_system);
        assert_eq!(options.excludes, ["b", "a"]);
        assert_eq!(options.max_depth, Some(3));
        assert_eq!((cache, threads), (Some(None), Some(7)));

        let (_, cache, _) = read(&["--cache=x.sqlite"]).unwrap();
        assert_eq!(cache, Some(Some("x.sqlite".into())));
        // PATH only after '=': a separate word is an operand, which this
        // test command does not take.
        assert!(read(&["--cache", "x.sqlite"]).is_err());
        assert!(read(&["-j", "1025"]).is_err());
        assert!(read(&["--max-depth", "-1"]).is_err());
    }
}
