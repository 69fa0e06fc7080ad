//! `fastsum audit MANIFEST DIR`: a tree against a list of what it should
//! hold, in the spirit of `hashdeep -a`: matched, modified, moved, new and
//! missing files, and hashdeep's summary. The comparison is `fastsum
//! diff`'s (the list re-rooted under DIR, the tree hashed in the list's
//! algorithm on every core, moves paired by digest).
//!
//! A hashdeep list may carry several digests a file (md5 and sha256):
//! every column fastsum computes is checked, each in a comparison of its
//! own, and a file matched (or moved) by one column but not by all is
//! "partially matched": named, counted, and the audit fails.
//! hashdeep 4.4 says "Hash collision" there and still passes the audit:
//! fastsum is stricter.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{CommandFactory, Parser};
use fastsum::diff::{ChangeKind, DiffEvent, DiffOptions, DiffSummary, Side};
use fastsum::output::line::LinePart;
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
#[command(mut_arg("algorithm", |a| a.help("The list's algorithm, for untagged lines, or the column to report by from a hashdeep list (default: its first of md5, sha1, sha256; every column fastsum computes is checked)")))]
#[command(mut_arg("cache", |a| a.help("Answer unchanged files from the checksum cache (PATH only after '=')")))]
struct AuditArgs {
    /// The list: a file, or - for standard input.
    manifest: PathBuf,
    /// The tree to audit.
    dir: PathBuf,
    #[command(flatten)]
    algorithm: crate::cmd::args::AlgorithmArg,
    /// Print each file that did not match (`modified`, `moved`, `new`,
    /// `missing`, then the path); twice: matched files too.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(flatten)]
    cache: crate::cmd::args::CacheArg,
    #[command(flatten)]
    jobs: crate::cmd::args::Threads,
    /// The directory the list's paths start with, when it cannot be told
    /// from the list (what diff's old-root option says).
    #[arg(long, value_name = "PATH")]
    root: Option<PathBuf>,
    #[command(flatten)]
    bar: crate::cmd::args::ProgressBar,
    #[command(flatten)]
    quiet: crate::cmd::args::Quiet,
    /// Leave symbolic links in DIR out (by default they are followed, to
    /// files and directories, as hashdeep follows them); how many were
    /// left out is said on stderr.
    #[arg(short = 'P', long)]
    no_follow: bool,
}

/// `fastsum audit`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    AuditArgs::command()
}

const NAME: &str = "fastsum audit";

/// Runs `fastsum audit` with `args` (after its first word).
pub fn run(args: Vec<OsString>) -> i32 {
    let args = match crate::term::parse_subcommand::<AuditArgs>(NAME, args) {
        Ok(args) => args.quiet.applied(args),
        Err(status) => return status,
    };
    let (list, algorithm, agreed) = match other_columns(&args) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("{NAME}: {e}");
            return 2;
        }
    };
    let Some(cache) = crate::term::cache::open(
        NAME,
        &args.cache.asked(),
        algorithm.unwrap_or(Algorithm::Md5),
        std::slice::from_ref(&args.dir),
    ) else {
        return 2;
    };
    let counters = Arc::new(fastsum::Progress::default());
    let options = DiffOptions {
        algorithm,
        walk: walk_of(&args),
        threads: args.jobs.or_all(),
        all: true,
        old_root: args.root.clone(),
        cache: Some(&cache).filter(|c| c.serves(algorithm.unwrap_or(Algorithm::Md5))),
        progress: Some(counters.clone()),
        ..DiffOptions::default()
    };
    let old = list.side();
    let display = crate::term::progress::Display::default();
    let mut out = Output::new(Buffering::Line);
    let mut trouble = false;
    let mut partial = Partial::default();
    let result = std::thread::scope(|scope| {
        if args.bar.shown() {
            scope.spawn(|| display.run(&counters));
        }
        let result = options.diff(&old, &Side::Tree(args.dir.clone()), |event| {
            let event = partial.judge(&agreed, event);
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
    crate::term::cache::finish(NAME, cache);
    let status = match result {
        Ok(summary) => {
            out.notice(&links_left_out(&summary));
            out.err_raw(&unchecked_columns(&list));
            let unchecked = list.unchecked.get() > 0;
            let trouble = trouble || unchecked;
            out.out(&summary_text(&summary, &partial, trouble));
            match (trouble, passed(&summary) && partial.count() == 0) {
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

/// Pairs of (listed, found) paths.
type Pairs = HashSet<(Vec<u8>, Vec<u8>)>;

/// The list, the column to report by, and what each other column matched
/// (its own comparison, first: `matched_by`).
fn other_columns(args: &AuditArgs) -> Result<(List, Option<Algorithm>, Vec<Pairs>), String> {
    let list = List::of(&args.manifest).map_err(|e| e.to_string())?;
    let columns = list.columns(args.algorithm.named())?;
    let algorithm = columns.first().copied().or(args.algorithm.named());
    let agreed = columns
        .iter()
        .skip(1)
        .map(|c| matched_by(args, &list, *c).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    Ok((list, algorithm, agreed))
}

/// How DIR is walked: symbolic links followed, as hashdeep does, unless
/// `--no-follow`.
fn walk_of(args: &AuditArgs) -> WalkOptions {
    WalkOptions {
        follow_links: !args.no_follow,
        ..WalkOptions::default()
    }
}

/// The list's columns no comparison checked (hashdeep's tiger, whirlpool),
/// said: such an audit never passes (a wrong digest there goes unseen).
fn unchecked_columns(list: &List) -> Vec<u8> {
    match list.unchecked.get() {
        0 => Vec::new(),
        n => format!(
            "{NAME}: {}: {} fastsum does not compute (tiger, whirlpool) not checked: the audit cannot pass\n",
            crate::term::named_path(list.path()),
            crate::term::count(n as u64, "column", "columns")
        )
        .into_bytes(),
    }
}

/// How many symbolic links `--no-follow` left out, said (or nothing).
fn links_left_out(summary: &DiffSummary) -> Vec<u8> {
    if summary.symlinks_left_out == 0 {
        return Vec::new();
    }
    let what = crate::term::count(summary.symlinks_left_out, "symbolic link", "symbolic links");
    format!("{NAME}: {what} left out (drop --no-follow to follow them, as hashdeep does)\n")
        .into_bytes()
}

/// Every file matched, none missing.
fn passed(s: &DiffSummary) -> bool {
    s.added + s.modified + s.moved + s.removed + s.typechanges == 0
}

/// A change's line (with `-v`) and a problem's message.
fn event_lines(args: &AuditArgs, event: Judged) -> (Vec<u8>, Vec<u8>) {
    let event = match event {
        Judged::Partial(change) => {
            // Always named: a partial match fails the audit.
            let (new, old) = (path(&change.new), path(&change.old));
            let mut parts = vec![LinePart::Text(b"partial\t"), LinePart::Name(&new)];
            if change.kind == ChangeKind::Moved {
                parts.extend([LinePart::Text(b"\tfrom\t"), LinePart::Name(&old)]);
            }
            let mut line = Vec::new();
            LinePart::write_line(&mut line, &parts, true);
            return (line, Vec::new());
        }
        Judged::As(event) => event,
    };
    match event {
        DiffEvent::Change(change) => {
            let word = match change.kind {
                ChangeKind::Unchanged => "matched",
                ChangeKind::Modified | ChangeKind::Typechange => "modified",
                // Two local sides: never (S3 sides only).
                ChangeKind::Unverifiable => "unverifiable",
                ChangeKind::Moved => "moved",
                ChangeKind::Added => "new",
                ChangeKind::Removed => "missing",
            };
            let shown = args.verbose > 1 || (args.verbose > 0 && word != "matched");
            if !shown {
                return (Vec::new(), Vec::new());
            }
            let (new, old) = (path(&change.new), path(&change.old));
            let mut parts = vec![LinePart::Text(word.as_bytes()), LinePart::Text(b"\t")];
            match change.kind {
                ChangeKind::Added => parts.push(LinePart::Name(&new)),
                ChangeKind::Moved => parts.extend([
                    LinePart::Name(&new),
                    LinePart::Text(b"\tfrom\t"),
                    LinePart::Name(&old),
                ]),
                _ => parts.push(LinePart::Name(&old)),
            }
            // Names escaped as every report line escapes them: no forged lines.
            let mut line = Vec::new();
            LinePart::write_line(&mut line, &parts, true);
            (line, Vec::new())
        }
        DiffEvent::Problem { path, error } => {
            let mut err = format!("{NAME}: ").into_bytes();
            err.extend_from_slice(crate::term::named_path(&path).as_bytes());
            err.extend_from_slice(format!(": {error}\n").as_bytes());
            (Vec::new(), err)
        }
        // An audit's tree is every file it holds; what is no file (a FIFO,
        // a device) has no digest to audit.
        DiffEvent::RemoteMethod { .. } | DiffEvent::LeftOut { .. } => (Vec::new(), Vec::new()),
    }
}

/// The path bytes of a change's side.
fn path(entry: &Option<fastsum::diff::Entry>) -> Vec<u8> {
    entry
        .as_ref()
        .map(|e| fastsum::name::path_bytes(&e.path).to_vec())
        .unwrap_or_default()
}

/// hashdeep's summary, its words and alignment, with fastsum's count of
/// modified files (which hashdeep counts both as new and as not found).
/// Partially matched files (some columns matched, not all) are counted
/// apart, not as matched or moved. TROUBLE (anything reported on
/// standard error: a file that could not be read, a loop, a path listed
/// twice) fails the audit whatever the counts say: "passed" only with
/// exit 0.
fn summary_text(s: &DiffSummary, partial: &Partial, trouble: bool) -> Vec<u8> {
    let verdict = match passed(s) && partial.count() == 0 && !trouble {
        true => "passed",
        false => "failed",
    };
    format!(
        "{NAME}: Audit {verdict}\n          Files matched: {}\nFiles partially matched: {}\n         Files modified: {}\n            Files moved: {}\n        New files found: {}\n  Known files not found: {}\n",
        s.unchanged - partial.unchanged,
        partial.count(),
        s.modified + s.typechanges - partial.modified,
        s.moved - partial.moved,
        s.added,
        s.removed,
    )
    .into_bytes()
}

/// The list: a file, or standard input or a pipe (`<(hashdeep …)`)
/// spooled to a file of its own (so that each column can be compared in
/// a pass of its own).
struct List {
    source: Source,
    /// Columns of a hashdeep list that fastsum does not compute (tiger,
    /// whirlpool): not checked, so the audit cannot pass (exit 2).
    unchecked: std::cell::Cell<usize>,
}

enum Source {
    File(PathBuf),
    Spooled(spool::Spooled),
}

impl List {
    fn of(manifest: &Path) -> std::io::Result<List> {
        let mut bytes = Vec::new();
        if manifest.as_os_str() == "-" {
            std::io::stdin().lock().read_to_end(&mut bytes)?;
        } else if std::fs::metadata(manifest).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            std::fs::File::open(manifest)?.read_to_end(&mut bytes)?;
        } else {
            return Ok(List::of_source(Source::File(manifest.to_path_buf())));
        }
        spool::Spooled::new(bytes).map(|s| List::of_source(Source::Spooled(s)))
    }

    fn of_source(source: Source) -> List {
        List {
            source,
            unchecked: std::cell::Cell::new(0),
        }
    }

    fn path(&self) -> &Path {
        match &self.source {
            Source::File(path) => path,
            Source::Spooled(spooled) => spooled.path(),
        }
    }

    fn side(&self) -> Side {
        Side::Manifest(self.path().to_path_buf())
    }

    /// The columns to check, the one to report by first: for a hashdeep
    /// list, each column fastsum computes (`given` first, if it is one);
    /// for any other list, only `given` (or none: the list says).
    fn columns(&self, given: Option<Algorithm>) -> Result<Vec<Algorithm>, String> {
        let mut head = Vec::new();
        if let Ok(file) = fastsum::open_regular(self.path()) {
            let _ = file.take(64 << 10).read_to_end(&mut head);
        }
        let mut lines = head
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        if lines.next() != Some(fastsum::manifest::hashdeep::Columns::MAGIC) {
            return Ok(given.into_iter().collect());
        }
        let header = lines.find(|l| !l.starts_with(b"##")).unwrap_or_default();
        let read = fastsum::manifest::hashdeep::Columns::read(header).unwrap_or_default();
        let uncomputed = read.iter().filter(|c| c.is_none()).count();
        self.unchecked.set(uncomputed);
        let mut columns: Vec<Algorithm> = read.into_iter().flatten().collect();
        if let Some(given) = given {
            // A column the list lacks is refused, never reported by another.
            if !columns.contains(&given) {
                let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
                return Err(format!(
                    "{}: -a {given}: the list has no {given} column (its columns fastsum computes: {})",
                    crate::term::named_path(self.path()),
                    names.join(", ")
                ));
            }
            columns.retain(|c| *c != given);
            columns.insert(0, given);
        }
        Ok(columns)
    }
}

/// A change as the audit reports it: as the comparison said, or a match
/// (or move) that another column does not confirm.
enum Judged {
    As(DiffEvent),
    Partial(fastsum::diff::Change),
}

/// The files some columns match and others do not: matched or moved by
/// the first column but not by every other, or modified by the first and
/// matched by another.
#[derive(Default)]
struct Partial {
    unchanged: u64,
    moved: u64,
    modified: u64,
}

impl Partial {
    fn count(&self) -> u64 {
        self.unchanged + self.moved + self.modified
    }

    /// `event`, or a partial match where the columns in `agreed` do not
    /// all say what the first one said of the same pair of paths.
    fn judge(&mut self, agreed: &[Pairs], event: DiffEvent) -> Judged {
        let DiffEvent::Change(change) = &event else {
            return Judged::As(event);
        };
        let pair = (path(&change.old), path(&change.new));
        let partial = match change.kind {
            ChangeKind::Unchanged | ChangeKind::Moved => {
                !agreed.iter().all(|set| set.contains(&pair))
            }
            ChangeKind::Modified => agreed.iter().any(|set| set.contains(&pair)),
            _ => false,
        };
        if !partial {
            return Judged::As(event);
        }
        match change.kind {
            ChangeKind::Moved => self.moved += 1,
            ChangeKind::Modified => self.modified += 1,
            _ => self.unchanged += 1,
        }
        let DiffEvent::Change(change) = event else {
            unreachable!("matched above")
        };
        Judged::Partial(change)
    }
}

/// The pairs of (listed, found) paths that the list's `column` matches or
/// pairs as moved, in a comparison of its own (nothing printed).
fn matched_by(args: &AuditArgs, list: &List, column: Algorithm) -> Result<Pairs, fastsum::Error> {
    let options = DiffOptions {
        algorithm: Some(column),
        walk: walk_of(args),
        threads: args.jobs.or_all(),
        all: true,
        old_root: args.root.clone(),
        ..DiffOptions::default()
    };
    let mut matched = HashSet::new();
    options.diff(&list.side(), &Side::Tree(args.dir.clone()), |event| {
        if let DiffEvent::Change(change) = event {
            if matches!(change.kind, ChangeKind::Unchanged | ChangeKind::Moved) {
                matched.insert((path(&change.old), path(&change.new)));
            }
        }
    })?;
    Ok(matched)
}

/// Standard input's list, written to a file of its own (created new,
/// readable by its owner only) and removed when dropped.
mod spool {
    use std::io::Write;
    use std::path::{Path, PathBuf};

    pub(super) struct Spooled {
        path: PathBuf,
    }

    impl Spooled {
        pub(super) fn new(bytes: Vec<u8>) -> std::io::Result<Spooled> {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let path =
                std::env::temp_dir().join(format!("fastsum-audit-{}-{nanos}", std::process::id()));
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&path)?;
            let spooled = Spooled { path };
            file.write_all(&bytes)?;
            Ok(spooled)
        }

        pub(super) fn path(&self) -> &Path {
            &self.path
        }
    }

    impl Drop for Spooled {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
