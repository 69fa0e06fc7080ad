//! The files of a chunk of check lines, hashed together: through the
//! pipeline on every core (the cache in front when it is on), or in line
//! when the chunk is small; each line's digest, or why it has none.

use std::io;

use fastsum::pipeline::{Order, Outcome, Record, TreeHasher};
use fastsum::{Algorithm, ErrorKind, Source};

use crate::mode::hash::Hashed;
use crate::mode::options::Options;
use crate::mode::run::Run;

/// Chunks naming fewer distinct files, of fewer bytes in all, are hashed
/// in line (`prefetch_digests`).
const IN_LINE_FILES: usize = 16;
const IN_LINE_BYTES: u64 = 16 << 20;

/// One line of a check list that is not a comment or blank.
pub(in crate::mode) enum CheckItem {
    /// Not a checksum line: its line number, and the tag its `--warn`
    /// warning names.
    Misformatted(u64, &'static str),
    /// An entry of a list in another format that could not be read: its
    /// line number and why (said whether or not `--warn`).
    Problem(u64, String),
    /// An entry the list may not name (`ListLine::Refused`): its line
    /// number and why; said, and it fails the list.
    Refused(u64, String),
    /// A file to check.
    Entry {
        name: Vec<u8>,
        algorithm: Algorithm,
        expected: fastsum::Digest,
        /// The line's digest could be a digest (see `CheckLine::matchable`).
        matchable: bool,
        /// Further digests the entry carries (hashdeep's columns, several
        /// `-a`'s JSON, a Release file's sections): all must match.
        also: Vec<(Algorithm, fastsum::Digest)>,
        /// The size it lists, checked too.
        size: Option<u64>,
    },
}

/// Hashes the files of a chunk of check lines through the pipeline (with
/// the cache in front when it is on), one run per algorithm met; `None`
/// for the lines left to `digest_named` (standard input, misformatted
/// lines, and an algorithm whose cache entries could not be loaded).
pub(in crate::mode) fn prefetch_digests(
    run: &mut Run,
    o: &Options,
    items: &[CheckItem],
) -> Vec<Option<Result<fastsum::Digest, ErrorKind>>> {
    let mut results: Vec<Option<Result<fastsum::Digest, ErrorKind>>> =
        items.iter().map(|_| None).collect();
    if few_files(items) {
        return results;
    }
    for algorithm in algorithms_of(items) {
        let (indices, operands): (Vec<usize>, Vec<Source>) = items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item {
                CheckItem::Entry {
                    name, algorithm: a, ..
                } if *a == algorithm && hashed_in_the_pipeline(run, o, name) => {
                    Some((i, Source::Path(fastsum::name::path(name).into_owned())))
                }
                _ => None,
            })
            .unzip();
        let mut options = o.tree.clone();
        options.recursive = false;
        options.listed = crate::mode::hash::listed(run);
        options.order = Order::Unordered;
        if run.check_cache.is_some() && !run.check_cache_serves(algorithm) {
            continue;
        }
        let record = |record: Record| {
            let result = match record.outcome {
                Outcome::Hashed(hashed) => Ok(hashed.digest),
                Outcome::Failed(kind) => Err(kind),
                _ => return,
            };
            results[indices[record.operand]] = Some(result);
        };
        let mut run_tree = run.check_cached(TreeHasher::with_options(algorithm, options));
        // `more_to_come` says whether the list has lines past this chunk
        // (check/mod.rs): the total is final only with its last chunk.
        if let Some((counters, _)) = &run.progress {
            run_tree = run_tree.progress(counters.clone());
        }
        let finished = run_tree.run(&operands, record);
        if finished.is_err() {
            // Left to digest_named, line by line.
            for &i in &indices {
                results[i] = None;
            }
        }
    }
    results
}

/// The bytes the chunk's files hold, each read once: the sizes the list
/// gives (hashdeep's, JSON's), else the files' own; `None` where a file is
/// read more than once (several algorithms, further digests), and so the
/// bytes read would pass the total.
pub(in crate::mode) fn known_bytes(items: &[CheckItem]) -> Option<u64> {
    if algorithms_of(items).len() > 1 {
        return None;
    }
    let mut total = 0u64;
    for item in items {
        if let CheckItem::Entry {
            name, also, size, ..
        } = item
        {
            if !also.is_empty() {
                return None;
            }
            let size = size.or_else(|| {
                let path = fastsum::name::path(name);
                std::fs::metadata(&*path).ok().map(|m| m.len())
            });
            total = total.saturating_add(size.unwrap_or(0));
        }
    }
    (total > 0).then_some(total)
}

/// The algorithms of a chunk's lines, in the order met.
fn algorithms_of(items: &[CheckItem]) -> Vec<Algorithm> {
    let mut algorithms: Vec<Algorithm> = Vec::new();
    for item in items {
        if let CheckItem::Entry { algorithm, .. } = item {
            if !algorithms.contains(algorithm) {
                algorithms.push(*algorithm);
            }
        }
    }
    algorithms
}

/// Whether a line's file goes through the pipeline: not standard input,
/// a name too long to open, or a directory's line (`check::dirs`).
fn hashed_in_the_pipeline(run: &Run, o: &Options, name: &[u8]) -> bool {
    name != b"-" && !crate::mode::hash::too_long(name) && !is_directory_line(run, o, name)
}

/// Whether the line naming `name` is a directory's digest, to be made
/// again from its tree: in fastsum's own mode, and only when the user
/// asks with `-c --dirs`. A `--dirs` line looks exactly
/// like a hand-written `HEX  DIR/` line, and a downloaded list must not
/// make fastsum walk `/` or `/proc/self/`: without `--dirs` such a line
/// names a file, and a directory there is "FAILED open or read", as
/// md5sum says. The GNU tools read every name as a file's.
pub(in crate::mode) fn is_directory_line(run: &Run, o: &Options, name: &[u8]) -> bool {
    run.tool.policy().own_lists
        && o.tree.walk.directories
        && fastsum::manifest::read::Manifest::is_directory_name(name)
}

/// Whether the chunk names so few files, so small, that they are hashed in
/// line, one after another, as coreutils does: starting the pipeline's
/// threads costs more than it saves there, and the run stays one thread (a
/// list naming one file over and over, or a small list under a tracer or a
/// memory limit, as coreutils' own tests run it). A few large files still
/// go through the pipeline, on every core.
fn few_files(items: &[CheckItem]) -> bool {
    let mut names: Vec<&[u8]> = items
        .iter()
        .filter_map(|item| match item {
            CheckItem::Entry { name, .. } => Some(&name[..]),
            _ => None,
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.len() >= IN_LINE_FILES {
        return false;
    }
    let bytes: u64 = names
        .iter()
        .filter_map(|name| std::fs::metadata(&*fastsum::name::path(name)).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    bytes < IN_LINE_BYTES
}

/// A prefetched digest as `digest_named` would have reported it.
pub(in crate::mode) fn report_hashed(
    run: &mut Run,
    name: &[u8],
    result: Result<fastsum::Digest, ErrorKind>,
    ignore_missing: bool,
) -> Hashed {
    match result {
        Ok(digest) => Hashed::Digest(digest),
        Err(ErrorKind::Io(e)) if ignore_missing && e.kind() == io::ErrorKind::NotFound => {
            Hashed::Missing
        }
        Err(kind) => {
            let why = kind.to_string();
            run.file_error(name, &why);
            Hashed::Failed(why)
        }
    }
}
