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
mod report;
mod side;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::Receiver;

use crate::algo::Algorithm;
use crate::cache::CacheSession;
use crate::error::{Error, ErrorKind, Result};
use crate::remote::{Remote, RemoteOptions};
use crate::walk::WalkOptions;
pub use report::{Change, ChangeKind, DiffEvent, DiffSummary, Entry, EntryKind};
use side::{Found, Listed, Rooting};

/// Pairs compared at once (on every core).
const PAIR_BATCH: usize = 512;

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

    /// The side an operand names, `[user@]host:path` being remote by
    /// scp's rule ([`Remote::parse`]; `./a:b` is local), else as [`Side::of`].
    pub fn of_operand(operand: &Path) -> Side {
        match Remote::parse(path_bytes(operand)) {
            Some(remote) => Side::Remote(remote),
            None => Side::of(operand),
        }
    }
}

/// How to compare.
#[derive(Clone, Default)]
pub struct DiffOptions {
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
    pub cache: Option<Arc<CacheSession>>,
    /// How remote sides are reached.
    pub remote: RemoteOptions,
}

/// Compares `old` with `new` and hands every change (and problem) to
/// `sink`, changes sorted by path. Errors: a manifest that cannot be read
/// at all (unreadable, mixed algorithms, untagged lines of an unknown
/// algorithm), or two manifests of different algorithms.
pub fn diff(
    old: &Side,
    new: &Side,
    options: &DiffOptions,
    mut sink: impl FnMut(DiffEvent),
) -> Result<DiffSummary> {
    let mut summary = DiffSummary::default();
    let rooting = |given: &Option<PathBuf>, other: &Side| match (given, other) {
        (Some(prefix), _) => Rooting::Given(path_bytes(prefix).to_vec()),
        (None, Side::Tree(dir)) => Rooting::AgainstTree {
            spelled: path_bytes(dir).to_vec(),
            absolute: std::path::absolute(dir)
                .map(|p| path_bytes(&p).to_vec())
                .unwrap_or_default(),
            tree: dir.clone(),
        },
        (None, _) => Rooting::Shared,
    };
    let manifest_of = |side: &Side,
                       given: &Option<PathBuf>,
                       other: &Side|
     -> Result<Option<(Algorithm, Vec<Listed>)>> {
        let path = match side {
            Side::Tree(_) | Side::Remote(_) => return Ok(None),
            Side::Manifest(p) => Some(p.as_path()),
            Side::Stdin => None,
        };
        let (manifest, listed) = side::read_side(path, options.algorithm, &rooting(given, other))
            .map_err(|why| {
            let name = path.map_or(PathBuf::from("-"), Path::to_path_buf);
            Error::with_path(name, ErrorKind::Io(std::io::Error::other(why)))
        })?;
        Ok(Some((manifest.algorithm, listed)))
    };
    let old_manifest = manifest_of(old, &options.old_root, new)?;
    let new_manifest = manifest_of(new, &options.new_root, old)?;
    let algorithm = match (&old_manifest, &new_manifest) {
        (Some((a, _)), Some((b, _))) if a != b => {
            return Err(Error::new(ErrorKind::Io(std::io::Error::other(format!(
                "the lists are {a} and {b}: digests of two algorithms cannot be compared"
            )))))
        }
        (Some((a, _)), _) | (_, Some((a, _))) => Some(*a),
        (None, None) if is_remote(old) || is_remote(new) => {
            Some(options.algorithm.unwrap_or(Algorithm::Md5))
        }
        (None, None) => None,
    };
    // Trees: walked (against a tree) or hashed (against a manifest).
    let stream = |side: &Side, manifest: Option<(Algorithm, Vec<Listed>)>| -> Source {
        match (side, manifest, algorithm) {
            (_, Some((_, listed)), _) => Source::List(listed.into_iter()),
            (Side::Tree(dir), None, Some(algorithm)) => {
                Source::Channel(side::hash_tree(dir.clone(), algorithm, options, false))
            }
            // Two trees with the cache: digests, answered from it where
            // stamps are unchanged, instead of reading both files.
            (Side::Tree(dir), None, None) if options.cache.is_some() => {
                let algorithm = options.algorithm.unwrap_or(Algorithm::Md5);
                Source::Channel(side::hash_tree(dir.clone(), algorithm, options, true))
            }
            (Side::Tree(dir), None, None) => Source::Channel(side::walk_tree(dir.clone(), options)),
            (Side::Remote(_), None, _) => Source::List(Vec::new().into_iter()),
            _ => unreachable!("a manifest side has its list"),
        }
    };
    // Local trees start hashing first; remote listings are fetched
    // meanwhile (both at once if both sides are remote).
    let mut olds = stream(old, old_manifest);
    let mut news = stream(new, new_manifest);
    // Against a remote side a local tree hashes on while the listing
    // comes, not only as far as the queue reaches (the remote listing is
    // held whole anyway).
    if is_remote(new) {
        olds = olds.without_limit();
    }
    if is_remote(old) {
        news = news.without_limit();
    }
    let fetch = |side: &Side| match (side, algorithm) {
        (Side::Remote(remote), Some(algorithm)) => {
            Some(side::remote_side(remote, algorithm, &options.remote))
        }
        _ => None,
    };
    let (old_remote, new_remote) = std::thread::scope(|s| {
        let old_remote = s.spawn(|| fetch(old));
        let new_remote = fetch(new);
        (
            old_remote.join().expect("a remote fetch panicked"),
            new_remote,
        )
    });
    for (side, fetched, source) in [(old, old_remote, &mut olds), (new, new_remote, &mut news)] {
        if let (Side::Remote(remote), Some(fetched)) = (side, fetched) {
            let fetched = fetched?;
            sink(DiffEvent::RemoteMethod {
                operand: remote.to_string(),
                method: fetched.method,
                uploaded: fetched.uploaded,
                upload_failed: fetched.upload_failed,
            });
            *source = Source::List(fetched.listed.into_iter());
        }
    }

    let mut changes: Vec<Change> = Vec::new();
    let mut removed: Vec<Found> = Vec::new();
    let mut added: Vec<Found> = Vec::new();
    let mut pairs: Vec<(Found, Found)> = Vec::new();
    let mut problem = |summary: &mut DiffSummary, path: PathBuf, error: String| {
        summary.problems += 1;
        sink(DiffEvent::Problem { path, error });
    };
    let (mut a, mut b) = (
        olds.next_entry(&mut summary, &mut problem),
        news.next_entry(&mut summary, &mut problem),
    );
    loop {
        match (a.take(), b.take()) {
            (None, None) => break,
            (Some(x), None) => {
                removed.extend(Some(x).filter(|f| !f.unreadable));
                a = olds.next_entry(&mut summary, &mut problem);
            }
            (None, Some(y)) => {
                added.extend(Some(y).filter(|f| !f.unreadable));
                b = news.next_entry(&mut summary, &mut problem);
            }
            (Some(x), Some(y)) => match x.key.cmp(&y.key) {
                std::cmp::Ordering::Less => {
                    removed.extend(Some(x).filter(|f| !f.unreadable));
                    a = olds.next_entry(&mut summary, &mut problem);
                    b = Some(y);
                }
                std::cmp::Ordering::Greater => {
                    added.extend(Some(y).filter(|f| !f.unreadable));
                    b = news.next_entry(&mut summary, &mut problem);
                    a = Some(x);
                }
                std::cmp::Ordering::Equal => {
                    if !x.unreadable && !y.unreadable {
                        pairs.push((x, y));
                    }
                    if pairs.len() == PAIR_BATCH {
                        settle(
                            &mut pairs,
                            &mut changes,
                            options.all,
                            &mut summary,
                            &mut problem,
                        );
                    }
                    a = olds.next_entry(&mut summary, &mut problem);
                    b = news.next_entry(&mut summary, &mut problem);
                }
            },
        }
    }
    settle(
        &mut pairs,
        &mut changes,
        options.all,
        &mut summary,
        &mut problem,
    );

    let move_digests = match (algorithm, &options.cache) {
        (Some(a), _) => a,
        (None, Some(_)) => options.algorithm.unwrap_or(Algorithm::Md5),
        (None, None) => Algorithm::Xxh128,
    };
    let moves = compare::pair_moves(&mut removed, &mut added, move_digests);
    let (mut moved_old, mut moved_new) = (vec![false; removed.len()], vec![false; added.len()]);
    for &(i, j) in &moves {
        moved_old[i] = true;
        moved_new[j] = true;
        changes.push(Change {
            kind: ChangeKind::Moved,
            old: Some(entry_of(&removed[i])),
            new: Some(entry_of(&added[j])),
        });
    }
    for (f, _) in removed.iter().zip(&moved_old).filter(|(_, m)| !**m) {
        changes.push(Change {
            kind: ChangeKind::Removed,
            old: Some(entry_of(f)),
            new: None,
        });
    }
    for (f, _) in added.iter().zip(&moved_new).filter(|(_, m)| !**m) {
        changes.push(Change {
            kind: ChangeKind::Added,
            old: None,
            new: Some(entry_of(f)),
        });
    }
    changes.sort_by(|x, y| {
        path_bytes(x.sort_path())
            .cmp(path_bytes(y.sort_path()))
            .then(x.kind.name().cmp(y.kind.name()))
    });
    for change in changes {
        match change.kind {
            ChangeKind::Added => summary.added += 1,
            ChangeKind::Modified => summary.modified += 1,
            ChangeKind::Moved => summary.moved += 1,
            ChangeKind::Removed => summary.removed += 1,
            ChangeKind::Typechange => summary.typechanges += 1,
            ChangeKind::Unchanged => summary.unchanged += 1,
        }
        if matches!(change.kind, ChangeKind::Added | ChangeKind::Modified) {
            summary.bytes_changed += change.new.as_ref().and_then(|e| e.size).unwrap_or(0);
        }
        sink(DiffEvent::Change(change));
    }
    Ok(summary)
}

/// Where one side's entries come from.
enum Source {
    List(std::vec::IntoIter<Listed>),
    Channel(Receiver<Listed>),
}

impl Source {
    /// The same entries, taken from their producer as fast as it makes
    /// them (a thread forwards them to a queue without a bound).
    fn without_limit(self) -> Source {
        match self {
            Source::Channel(rx) => {
                let (tx, unbounded) = crossbeam_channel::unbounded();
                std::thread::spawn(move || {
                    for listed in rx {
                        if tx.send(listed).is_err() {
                            break;
                        }
                    }
                });
                Source::Channel(unbounded)
            }
            list => list,
        }
    }

    /// The next entry; problems and left-out symlinks on the way are
    /// reported.
    fn next_entry(
        &mut self,
        summary: &mut DiffSummary,
        problem: &mut impl FnMut(&mut DiffSummary, PathBuf, String),
    ) -> Option<Found> {
        loop {
            let listed = match self {
                Source::List(list) => list.next()?,
                Source::Channel(rx) => rx.recv().ok()?,
            };
            match listed {
                Listed::Entry(found) => return Some(found),
                Listed::Problem { key, path, error } => {
                    problem(summary, path.clone(), error);
                    if !key.is_empty() {
                        return Some(Found {
                            key,
                            path: Some(path),
                            kind: EntryKind::File,
                            size: None,
                            digest: None,
                            unreadable: true,
                        });
                    }
                }
                Listed::SymlinkLeftOut => summary.symlinks_left_out += 1,
            }
        }
    }
}

/// Compares the pairs held (every core) and records what changed.
fn settle(
    pairs: &mut Vec<(Found, Found)>,
    changes: &mut Vec<Change>,
    all: bool,
    summary: &mut DiffSummary,
    problem: &mut impl FnMut(&mut DiffSummary, PathBuf, String),
) {
    let verdicts = compare::compare_pairs(pairs);
    for ((old, new), verdict) in pairs.drain(..).zip(verdicts) {
        if let compare::Verdict::Failed(path, why) = &verdict {
            problem(summary, PathBuf::from(path), why.clone());
            continue;
        }
        let kind = match compare::change_of(&verdict) {
            Some(kind) => kind,
            None if all => ChangeKind::Unchanged,
            None => continue,
        };
        changes.push(Change {
            kind,
            old: Some(entry_of(&old)),
            new: Some(entry_of(&new)),
        });
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
