//! `fastsum diff`: what changed between two trees, a tree and a manifest,
//! or two manifests.
//!
//! Both sides arrive in byte order of their keys (paths relative to the
//! side's root): a tree from the sorted walk (or, against a manifest, from
//! the hashing pipeline, which streams in the same order), a manifest read
//! and sorted. Comparing is a merge; only what is unmatched (removed and
//! added entries, for move detection) and the changes themselves are held,
//! so memory does not grow with the number of unchanged files. Changes
//! come out sorted by path (the old path, or the new one for an addition),
//! as `git diff --name-status` lists them.
//!
//! * `modified`: the same key, other bytes (two trees: a size that differs
//!   decides without a read; same sizes are compared byte by byte);
//! * `moved`: a removed and an added file with identical bytes, paired in
//!   byte order of their paths where several share one content;
//! * `typechange`: a file on one side, a symlink on the other;
//! * `added`, `removed`; with `all`, `unchanged` too.
//!
//! A symlink's content is its target text (not followed unless the walk
//! follows links). Manifests carry no symlinks: against one, a tree's
//! symlinks are left out and counted.
//!
//! A remote side (`host:path`, [`crate::remote`]) is hashed on its host
//! and compared as a manifest is: the other side is hashed with the same
//! algorithm (the manifest's, the one asked for, or MD5, which every
//! remote method has). A remote listing that did not arrive whole fails
//! the diff: half a tree is never reported as the other half removed.

mod compare;
mod manifest_side;
mod merge;
mod moves;
mod packed;
mod pruned;
mod report;
mod rooting;
#[cfg(feature = "s3")]
mod s3_side;
mod side;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::algo::Algorithm;
use crate::cache::CacheRun;
use crate::error::{Error, ErrorKind, Result};
use crate::remote::{Remote, RemoteOptions};
use crate::walk::WalkOptions;
use manifest_side::ManifestSide;
use merge::Source;
pub use report::{Change, ChangeKind, DiffEvent, DiffSummary, Entry, EntryKind};
use rooting::Rooting;
use side::Found;

/// One side of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// A directory, walked recursively.
    Tree(PathBuf),
    /// A manifest file.
    Manifest(PathBuf),
    /// A manifest on standard input.
    Stdin,
    /// A tree on another host, hashed there.
    Remote(Remote),
    /// Objects below a prefix of an S3 bucket (`s3://bucket/prefix`),
    /// compared by the checksums S3 keeps (`crate::s3`).
    #[cfg(feature = "s3")]
    S3(crate::s3::S3Url),
}

impl Side {
    /// The side an argument names: `-` is standard input, a directory a
    /// tree, anything else a manifest.
    pub fn of(argument: &Path) -> Side {
        if argument.as_os_str() == "-" {
            Side::Stdin
        } else if argument.is_dir() {
            Side::Tree(argument.to_path_buf())
        } else {
            Side::Manifest(argument.to_path_buf())
        }
    }

    /// The side as a message names it.
    pub(crate) fn shown(&self) -> PathBuf {
        match self {
            Side::Tree(path) | Side::Manifest(path) => path.clone(),
            Side::Stdin => PathBuf::from("-"),
            Side::Remote(remote) => PathBuf::from(remote.to_string()),
            #[cfg(feature = "s3")]
            Side::S3(url) => PathBuf::from(url.to_string()),
        }
    }

    /// The side an operand names, `[user@]host:path` being remote by
    /// scp's rule ([`Remote::parse`]; `./a:b` is local), else as [`Side::of`].
    pub fn of_operand(operand: &Path) -> Side {
        #[cfg(feature = "s3")]
        if let Some(url) = crate::s3::S3Url::parse(path_bytes(operand)) {
            return Side::S3(url);
        }
        match Remote::parse(path_bytes(operand)) {
            Some(remote) => Side::Remote(remote),
            None => Side::of(operand),
        }
    }
}

/// How to compare.
#[derive(Clone, Default)]
pub struct DiffOptions<'a> {
    /// The algorithm of untagged manifest lines, and of the digests taken
    /// of a tree compared with a manifest (default: the manifest's).
    pub algorithm: Option<Algorithm>,
    /// How trees are walked (follow links, one file system, excludes).
    pub walk: WalkOptions,
    /// Hashing threads (0: every core).
    pub threads: usize,
    /// List unchanged entries too.
    pub all: bool,
    /// The root of the old side's manifest paths, if the rule cannot know.
    pub old_root: Option<PathBuf>,
    /// The same for the new side.
    pub new_root: Option<PathBuf>,
    /// Answer a tree's digests from this cache where stamps are unchanged.
    pub cache: Option<&'a CacheRun>,
    /// How remote sides are reached.
    pub remote: RemoteOptions,
    /// Counters for a progress display: entries walked (`files_found`),
    /// compared or hashed (`files_done`), bytes read (`bytes_done`).
    pub progress: Option<Arc<crate::pipeline::Progress>>,
    /// Leave directories out of a comparison of two local trees. By
    /// default a directory one side has and the other lacks (an empty one
    /// too) is added or removed, as `diff -r` says "Only in". Manifests and remote listings hold no directories.
    pub ignore_directories: bool,
    /// How S3 sides are reached and decided.
    #[cfg(feature = "s3")]
    pub s3: crate::s3::S3Options,
}

/// Both sides' entries as they come: trees hashed or walked, manifests
/// read, remote listings fetched.
fn sources(
    old: &Side,
    new: &Side,
    old_manifest: Option<ManifestSide>,
    new_manifest: Option<ManifestSide>,
    algorithm: Option<Algorithm>,
    options: &DiffOptions,
    sink: &mut impl FnMut(DiffEvent),
) -> Result<(Source, Source)> {
    // Local trees start hashing first; remote listings are fetched
    // meanwhile (both at once if both sides are remote).
    let mut olds = Source::of(old, old_manifest, algorithm, options);
    let mut news = Source::of(new, new_manifest, algorithm, options);
    // Against a remote side a local tree hashes on while the listing
    // comes, not only as far as the queue reaches (the remote listing is
    // held whole anyway).
    if is_remote(new) {
        olds = olds.without_limit();
    }
    if is_remote(old) {
        news = news.without_limit();
    }
    fetch_remotes(
        [(old, &mut olds), (new, &mut news)],
        algorithm,
        options,
        sink,
    )?;
    Ok((olds, news))
}

/// How a manifest side's paths are re-rooted against the other side.
fn rooting(given: &Option<PathBuf>, other: &Side) -> Rooting {
    match (given, other) {
        (Some(prefix), _) => Rooting::Given(path_bytes(prefix).to_vec()),
        (None, Side::Tree(dir)) => Rooting::AgainstTree {
            spelled: path_bytes(dir).to_vec(),
            absolute: std::path::absolute(dir)
                .map(|p| path_bytes(&p).to_vec())
                .unwrap_or_default(),
            tree: dir.clone(),
        },
        (None, _) => Rooting::Shared,
    }
}

/// A manifest side read whole (its algorithm and entries, sorted); `None`
/// for a tree or a remote side.
fn read_manifest(
    side: &Side,
    given: &Option<PathBuf>,
    other: &Side,
    options: &DiffOptions,
) -> Result<Option<ManifestSide>> {
    let path = match side {
        Side::Tree(_) | Side::Remote(_) => return Ok(None),
        #[cfg(feature = "s3")]
        Side::S3(_) => return Ok(None),
        Side::Manifest(p) => Some(p.as_path()),
        Side::Stdin => None,
    };
    let rooting = rooting(given, other);
    let side = manifest_side::read_side(path, options.algorithm, &rooting, options.walk.max_depth)
        .map_err(|kind| {
            let name = path.map_or(PathBuf::from("-"), Path::to_path_buf);
            Error::with_path(name, kind)
        })?;
    Ok(Some(side))
}

/// The algorithm both sides are compared in: a manifest's (two must
/// agree), or the one asked for (MD5) against a remote side; `None` for two
/// trees (compared byte for byte).
fn common_algorithm(
    old: &Side,
    new: &Side,
    old_manifest: &Option<ManifestSide>,
    new_manifest: &Option<ManifestSide>,
    options: &DiffOptions,
) -> Result<Option<Algorithm>> {
    let algorithms = (
        old_manifest.as_ref().map(|m| m.algorithm),
        new_manifest.as_ref().map(|m| m.algorithm),
    );
    Ok(match algorithms {
        (Some(a), Some(b)) if a != b => {
            return Err(Error::new(ErrorKind::Io(std::io::Error::other(format!(
                "the lists are {a} and {b}: digests of two algorithms cannot be compared"
            )))))
        }
        (Some(a), _) | (_, Some(a)) => Some(a),
        (None, None) if is_remote(old) || is_remote(new) => {
            Some(options.algorithm.unwrap_or(Algorithm::Md5))
        }
        (None, None) => None,
    })
}

/// Each remote side's listing, fetched on its host (both at once), in
/// place of its empty source; the method that ran is reported.
fn fetch_remotes(
    sides: [(&Side, &mut Source); 2],
    algorithm: Option<Algorithm>,
    options: &DiffOptions,
    sink: &mut impl FnMut(DiffEvent),
) -> Result<()> {
    let fetch = |side: &Side| match (side, algorithm) {
        (Side::Remote(remote), Some(algorithm)) => {
            Some(side::remote_side(remote, algorithm, &options.remote))
        }
        _ => None,
    };
    let [(old, olds), (new, news)] = sides;
    let (old_remote, new_remote) = std::thread::scope(|s| {
        let old_remote = s.spawn(|| fetch(old));
        let new_remote = fetch(new);
        (
            old_remote.join().expect("a remote fetch panicked"),
            new_remote,
        )
    });
    for (side, fetched, source) in [(old, old_remote, olds), (new, new_remote, news)] {
        if let (Side::Remote(remote), Some(fetched)) = (side, fetched) {
            let fetched = fetched?;
            *source = announced(remote, fetched, options, sink);
        }
    }
    Ok(())
}

/// A remote side's entries, the method that made them reported.
fn announced(
    remote: &Remote,
    fetched: side::Fetched,
    options: &DiffOptions,
    sink: &mut impl FnMut(DiffEvent),
) -> Source {
    sink(DiffEvent::RemoteMethod {
        operand: remote.to_string(),
        method: fetched.method,
        uploaded: fetched.uploaded,
        upload_failed: fetched.upload_failed,
    });
    Source::listed(fetched.listed, options)
}

/// The digests moves are found by: the sides' algorithm, the cache's
/// (two trees with the cache), else XXH3-128 of the unmatched files.
fn move_algorithm(algorithm: Option<Algorithm>, options: &DiffOptions) -> Algorithm {
    match (algorithm, &options.cache) {
        (Some(a), _) => a,
        (None, Some(_)) => options.algorithm.unwrap_or(Algorithm::Md5),
        (None, None) => Algorithm::Xxh128,
    }
}

impl DiffOptions<'_> {
    /// `hasher` with the cache in front where the session is for its
    /// algorithm; a tree hashed with a manifest's other algorithm goes
    /// uncached (the session answers and learns its own algorithm's
    /// digests only, and [`TreeHasher::cache`] refuses it).
    pub(crate) fn cached(&self, hasher: crate::TreeHasher) -> crate::TreeHasher {
        match self.cache {
            Some(cache) if cache.serves(hasher.algorithm()) => hasher
                .cache(cache)
                .expect("a session of the run's algorithm"),
            _ => hasher,
        }
    }
}

fn is_remote(side: &Side) -> bool {
    matches!(side, Side::Remote(_))
}

fn entry_of(found: &Found) -> Entry {
    Entry {
        path: crate::fs::name::path(&found.key).into_owned(),
        kind: found.kind,
        size: found.size,
        digest: found.digest,
    }
}

fn path_bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

impl DiffOptions<'_> {
    /// Compares `old` with `new` and hands every change (and problem) to
    /// `sink`, changes sorted by path. Errors: a manifest that cannot be read
    /// at all (unreadable, mixed algorithms, untagged lines of an unknown
    /// algorithm), or two manifests of different algorithms.
    pub fn diff(
        &self,
        old: &Side,
        new: &Side,
        mut sink: impl FnMut(DiffEvent),
    ) -> Result<DiffSummary> {
        #[cfg(feature = "s3")]
        if let Some(summary) = s3_diff(old, new, self, &mut sink) {
            return summary;
        }
        let old_manifest = read_manifest(old, &self.old_root, new, self)?;
        let new_manifest = read_manifest(new, &self.new_root, old, self)?;
        let algorithm = common_algorithm(old, new, &old_manifest, &new_manifest, self)?;
        // Against a remote host, with the cache: only what differs from the
        // local tree is fetched (`pruned.rs`).
        let (olds, news) = match pruned::plan(old, new, algorithm, self) {
            Some(plan) => plan.sources(self, &mut sink)?,
            None => sources(
                old,
                new,
                old_manifest,
                new_manifest,
                algorithm,
                self,
                &mut sink,
            )?,
        };
        let mut summary = DiffSummary::default();
        let names = [old.shown(), new.shown()];
        let merged = merge::merge(olds, news, &names, self, &mut summary, &mut sink);
        let changes = moves::with_moves(merged, move_algorithm(algorithm, self));
        merge::report(changes, &mut summary, &mut sink);
        Ok(summary)
    }
}

/// A diff with an S3 side: against a local tree only (`None`: no S3 side).
#[cfg(feature = "s3")]
fn s3_diff(
    old: &Side,
    new: &Side,
    options: &DiffOptions,
    sink: &mut dyn FnMut(DiffEvent),
) -> Option<Result<DiffSummary>> {
    let unsupported = |url: &crate::s3::S3Url| {
        Err(Error::with_path(
            url.to_string(),
            ErrorKind::Io(std::io::Error::other(
                "an S3 side is compared with a local directory only",
            )),
        ))
    };
    Some(match (old, new) {
        (Side::S3(url), Side::Tree(dir)) => s3_side::diff(url, dir, true, options, sink),
        (Side::Tree(dir), Side::S3(url)) => s3_side::diff(url, dir, false, options, sink),
        (Side::S3(url), _) | (_, Side::S3(url)) => unsupported(url),
        _ => return None,
    })
}
