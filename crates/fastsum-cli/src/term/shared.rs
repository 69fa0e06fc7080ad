//! Options several subcommands share, written once: clap groups that
//! each subcommand flattens into its own arguments, with the one way to
//! read them. A command that says more of an option in its help (what
//! the algorithm is for, its default) does so with `mut_arg` on its own
//! arguments; the option itself is declared here only. The coreutils
//! front end keeps its getopt table (`mode/flags/`, byte
//! for byte coreutils') but reads the values through the same functions.

use std::path::PathBuf;

use clap::Args;
use fastsum::walk::WalkOptions;
use fastsum::Algorithm;

/// `-a/--algorithm NAME` (diff, dupes, audit, scrub, tree-digest).
#[derive(Args, Debug, Clone, Copy)]
pub struct AlgorithmArg {
    /// The algorithm.
    #[arg(short = 'a', long = "algorithm", value_name = "NAME", value_parser = super::parse_algorithm)]
    algorithm: Option<Algorithm>,
}

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

/// `--cache[=PATH]` (diff, dupes, audit, scrub, tree-digest): the
/// checksum cache, PATH only after `=`, the default path resolved by
/// `term::cache::path`.
#[derive(Args, Debug, Clone)]
pub struct CacheArg {
    /// Answer unchanged files from the checksum cache (PATH only after '=').
    #[arg(long = "cache", value_name = "PATH", num_args = 0..=1, require_equals = true)]
    cache: Option<Option<PathBuf>>,
}

impl CacheArg {
    /// What was asked: no cache, the default one, or the one at PATH.
    pub fn asked(&self) -> super::cache::CacheChoice {
        self.cache.clone().into()
    }
}

/// `--exclude GLOB` and `--exclude-from FILE`, repeatable (diff, dupes,
/// contained, scrub, tree-digest).
#[derive(Args, Debug, Clone)]
pub struct Exclude {
    /// Leave out matching paths (gitignore syntax; repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Leave out the paths FILE's lines match, each as an --exclude (blank
    /// lines and lines from # left out; repeatable).
    #[arg(long, value_name = "FILE", value_parser = parse_exclude_file)]
    exclude_from: Vec<ExcludeGlobs>,
}

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
    match read_exclude_file(std::path::Path::new(path)) {
        Ok(globs) => Ok(ExcludeGlobs(globs)),
        Err(e) => Err(e.to_string()),
    }
}

/// Why an `--exclude-from` file gave no globs.
#[derive(Debug)]
pub enum ExcludeFileError {
    /// It could not be opened or read.
    Io(std::io::Error),
    /// It holds more than [`EXCLUDE_FILE_MAX`] bytes.
    TooLarge,
}

/// The most of an `--exclude-from` file read: a run holds no more of it
/// than this, whatever it is given.
pub const EXCLUDE_FILE_MAX: u64 = 16 << 20;

impl std::fmt::Display for ExcludeFileError {
    /// The cause, as a message after the file's name says it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => f.write_str(&fastsum::Error::os_message(e)),
            Self::TooLarge => write!(
                f,
                "more than {} MiB of exclude patterns",
                EXCLUDE_FILE_MAX >> 20
            ),
        }
    }
}

/// `--exclude-from=FILE` (fastsum's own mode and the subcommands): each of
/// FILE's lines a glob as `--exclude` takes it, but blank ones and comments
/// (`#` first) and lines of blanks only, as in a `.gitignore`, a CRLF
/// line's CR, and a leading byte-order mark. FILE may be a
/// pipe (`<(...)`), read to its end.
pub fn read_exclude_file(path: &std::path::Path) -> Result<Vec<String>, ExcludeFileError> {
    use std::io::Read;
    let mut text = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(EXCLUDE_FILE_MAX + 1).read_to_end(&mut text))
        .map_err(ExcludeFileError::Io)?;
    if text.len() as u64 > EXCLUDE_FILE_MAX {
        return Err(ExcludeFileError::TooLarge);
    }
    // A UTF-8 byte-order mark (a Windows editor's) is not the first
    // pattern's, as git reads it too.
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&text);
    Ok(text
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        // Blank: empty, or blanks only (empty once gitignore cuts its
        // trailing blanks), never a pattern that matches every file.
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace) && !line.starts_with(b"#"))
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect())
}

/// `--max-depth N` (diff, dupes).
#[derive(Args, Debug, Clone, Copy)]
pub struct MaxDepth {
    /// Go at most N levels below each directory (1: its own files only;
    /// find's maxdepth).
    #[arg(long, value_name = "N")]
    pub max_depth: Option<usize>,
}

/// `-j/--threads N` (diff, dupes, audit, scrub, tree-digest).
#[derive(Args, Debug, Clone, Copy)]
pub struct Threads {
    /// Hashing threads (default: all cores).
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0, hide_default_value = true,
          value_parser = clap::value_parser!(u16).range(0..=1024))]
    threads: u16,
}

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
#[derive(Args, Debug, Clone, Copy)]
pub struct ProgressBar {
    /// Never show the progress bar (shown on a terminal's stderr after a
    /// second otherwise).
    #[arg(long)]
    no_progress: bool,
}

impl ProgressBar {
    /// Whether the bar may show: not asked away, and stderr a terminal.
    pub fn shown(self) -> bool {
        super::progress::wanted(self.no_progress)
    }
}

/// `-q/--quiet` (dupes, audit, scrub, tree-digest; diff's
/// own -q prints nothing at all).
#[derive(Args, Debug, Clone, Copy)]
pub struct Quiet {
    /// Print no notices on stderr (summaries of a run without trouble,
    /// links left out), only errors and trouble: cron mails only that.
    #[arg(short = 'q', long)]
    quiet: bool,
}

impl Quiet {
    /// Sets it for the run (`term::quiet`), and gives back `args`, the
    /// arguments it was parsed with.
    pub fn applied<T>(self, args: T) -> T {
        super::set_quiet(self.quiet);
        args
    }
}

/// How the trees are walked (diff, dupes).
#[derive(Args, Debug, Clone)]
pub struct Walk {
    #[command(flatten)]
    pub exclude: Exclude,
    #[command(flatten)]
    pub max_depth: MaxDepth,
    /// Follow symbolic links (what they point to is compared).
    #[arg(short = 'L', long = "follow")]
    pub follow: bool,
    /// Stay on the file system of each tree's root.
    #[arg(long)]
    pub one_file_system: bool,
}

impl Walk {
    /// The walk these options ask for.
    pub fn options(&self) -> WalkOptions {
        WalkOptions {
            follow_links: self.follow,
            one_file_system: self.one_file_system,
            excludes: self.exclude.globs(),
            max_depth: self.max_depth.max_depth,
            ..WalkOptions::default()
        }
    }
}

/// How `[USER@]HOST:PATH` operands are reached (diff's sides, contained's
/// archives): `-e/--rsh`, `--remote-method`, `--remote-fastsum`.
#[derive(Args, Debug, Clone, Default)]
pub struct RemoteArgs {
    /// The transport for HOST:PATH operands (default ssh, or $FASTSUM_RSH).
    #[arg(short = 'e', long = "rsh", value_name = "COMMAND")]
    rsh: Option<String>,
    /// Hash HOST:PATH trees by this method only: fastsum, coreutils, bsd,
    /// perl or python (default: the first the host has, in that order).
    #[arg(long, value_name = "NAME", value_parser = ["fastsum", "coreutils", "bsd", "perl", "python"])]
    remote_method: Option<String>,
    /// The fastsum to run on the remote host.
    #[arg(long, value_name = "PATH")]
    remote_fastsum: Option<String>,
}

impl RemoteArgs {
    /// The remote options these say ([`super::remote_options_with`]).
    pub fn options(&self) -> fastsum::remote::RemoteOptions {
        super::remote_options_with(
            self.rsh.as_deref(),
            self.remote_method.as_deref(),
            self.remote_fastsum.as_deref(),
        )
    }
}

/// How `s3://BUCKET/PREFIX` operands are reached and decided (diff's
/// sides, contained's archives): `--s3-path-style`, `--download`.
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct S3Args {
    /// S3 operands: path-style addressing (ENDPOINT/BUCKET/KEY), as the
    /// config's `s3 = addressing_style = path` says (the default for an
    /// endpoint that is an IP address or localhost).
    #[arg(long)]
    s3_path_style: bool,
    /// S3 operands: stream objects whose only digest is opaque (SSE-KMS,
    /// part sizes not to be had) and compare their bytes, instead of
    /// leaving them undecided; nothing is stored.
    #[arg(long)]
    download: bool,
}

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
            .map(|path| super::cache::s3_claims(&path));
        fastsum::s3::S3Options {
            path_style: self.s3_path_style,
            download: self.download,
            jobs: jobs.unwrap_or(0),
            cache: claims,
        }
    }
}
