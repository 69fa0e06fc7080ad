//! The comparison itself: both sides' entries merged in key order (pairs
//! compared on every core, a batch at a time), then the unmatched paired
//! into moves, then every change reported in path order.

use std::path::PathBuf;

use crossbeam_channel::Receiver;

use super::manifest_side::{Entries, Held, ManifestSide};
use super::packed::{Changes, Founds};
use super::side::{self, Found, Listed};
use super::{
    compare, entry_of, Change, ChangeKind, DiffEvent, DiffOptions, DiffSummary, EntryKind, Side,
};
use crate::algo::Algorithm;
use crate::walk::SpecialKind;

/// Pairs compared at once (on every core).
const PAIR_BATCH: usize = 512;

/// Where one side's entries come from.
pub(super) enum Source {
    List(std::vec::IntoIter<Listed>),
    Held(Held, Option<usize>),
    Channel(Receiver<Listed>),
}

/// `options` with directories walked as entries (two trees), unless
/// `ignore_directories`.
fn with_directories<'a>(options: &DiffOptions<'a>) -> DiffOptions<'a> {
    let mut options = options.clone();
    options.walk.directories = !options.ignore_directories;
    options
}

impl Source {
    /// Where `side`'s entries come from: its manifest's list; a tree walked
    /// (two trees) or hashed in `algorithm` (against a manifest or a remote
    /// side; two trees with the cache, in the cache's); a remote side's
    /// list empty until it is fetched.
    pub(super) fn of(
        side: &Side,
        manifest: Option<ManifestSide>,
        algorithm: Option<Algorithm>,
        options: &DiffOptions,
    ) -> Source {
        match (side, manifest, algorithm) {
            (_, Some(manifest), _) => match manifest.entries {
                // Left out past --max-depth as they are taken.
                Entries::Held(held) => Source::Held(held, options.walk.max_depth),
                // Left out past --max-depth as they are read.
                Entries::Streamed(rx) => Source::Channel(rx),
            },
            (Side::Tree(dir), None, Some(algorithm)) => {
                Source::Channel(side::hash_tree(dir.clone(), algorithm, options, false))
            }
            // Two trees with the cache: digests, answered from it where
            // stamps are unchanged, instead of reading both files.
            // Two trees: directories are entries too, unless left out.
            (Side::Tree(dir), None, None) if options.cache.is_some() => {
                let algorithm = options.algorithm.unwrap_or(Algorithm::Md5);
                let options = &with_directories(options);
                Source::Channel(side::hash_tree(dir.clone(), algorithm, options, true))
            }
            (Side::Tree(dir), None, None) => {
                let options = &with_directories(options);
                Source::Channel(side::walk_tree(dir.clone(), options))
            }
            (Side::Remote(_), None, _) => Source::List(Vec::new().into_iter()),
            _ => unreachable!("a manifest side has its list"),
        }
    }

    /// A manifest's or a remote host's entries, those deeper than
    /// `--max-depth` left out as a walk of the tree would leave them.
    pub(super) fn listed(mut listed: Vec<Listed>, options: &DiffOptions) -> Source {
        let deepest = options.walk.max_depth;
        listed.retain(|l| !matches!(l, Listed::Entry(found) if too_deep(found, deepest)));
        Source::List(listed.into_iter())
    }

    /// The same entries, taken from their producer as fast as it makes
    /// them (a thread forwards them to a queue without a bound).
    pub(super) fn without_limit(self) -> Source {
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

    /// The next entry; problems and left-out entries on the way are
    /// reported (through `note`, which counts them).
    fn next_entry(
        &mut self,
        summary: &mut DiffSummary,
        note: &mut impl FnMut(&mut DiffSummary, DiffEvent),
    ) -> Option<Found> {
        loop {
            let listed = match self {
                Source::List(list) => list.next()?,
                Source::Held(held, max_depth) => match held.next()? {
                    Listed::Entry(found) if too_deep(&found, *max_depth) => continue,
                    listed => listed,
                },
                Source::Channel(rx) => rx.recv().ok()?,
            };
            match listed {
                Listed::Entry(found) => return Some(found),
                Listed::Problem { key, path, error } => {
                    let event = DiffEvent::Problem {
                        path: path.clone(),
                        error,
                    };
                    note(summary, event);
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
                Listed::SymlinksLeftOut(n) => summary.symlinks_left_out += n,
                Listed::LeftOut { key, kind } => {
                    // Relative to its side's root, as a change's paths are.
                    let path = crate::fs::name::path(&key).into_owned();
                    match kind {
                        SpecialKind::Symlink => summary.symlinks_left_out += 1,
                        _ => summary.specials_left_out += 1,
                    }
                    let what = kind.describe();
                    note(summary, DiffEvent::LeftOut { path, what });
                }
            }
        }
    }
}

/// Deeper than `--max-depth` (as a walk of the tree would leave it).
fn too_deep(found: &Found, max_depth: Option<usize>) -> bool {
    max_depth.is_some_and(|deepest| found.key.iter().filter(|&&b| b == b'/').count() >= deepest)
}

/// Compares the pairs held (every core) and records what changed.
fn settle(
    pairs: &mut Vec<(Found, Found)>,
    changes: &mut Changes,
    options: &DiffOptions,
    summary: &mut DiffSummary,
    note: &mut impl FnMut(&mut DiffSummary, DiffEvent),
) {
    let all = options.all;
    let verdicts = compare::compare_pairs(pairs, options.progress.as_deref());
    for ((old, new), verdict) in pairs.drain(..).zip(verdicts) {
        if let compare::Verdict::Failed(path, why) = &verdict {
            let event = DiffEvent::Problem {
                path: PathBuf::from(path),
                error: why.clone(),
            };
            note(summary, event);
            continue;
        }
        let kind = match compare::change_of(&verdict) {
            Some(kind) => kind,
            None if all => ChangeKind::Unchanged,
            None => continue,
        };
        changes.push(&Change {
            kind,
            old: Some(entry_of(&old)),
            new: Some(entry_of(&new)),
        });
    }
}

/// What the merge leaves: the changes of matched keys, and the entries
/// only one side has (the candidates for moves).
pub(super) struct Merged {
    pub changes: Changes,
    pub removed: Founds,
    pub added: Founds,
}

/// Both sides merged in key order: matched keys compared (a batch at a
/// time, on every core), the rest kept for moves; problems reported as
/// they come.
pub(super) fn merge(
    mut olds: Source,
    mut news: Source,
    names: &[PathBuf; 2],
    options: &DiffOptions,
    summary: &mut DiffSummary,
    sink: &mut impl FnMut(DiffEvent),
) -> Merged {
    let mut merged = Merged {
        changes: Changes::default(),
        removed: Founds::default(),
        added: Founds::default(),
    };
    let mut pairs: Vec<(Found, Found)> = Vec::new();
    // Problems counted where they are reported (left-out entries are
    // counted by `next_entry`, which knows their kind).
    let mut problem = |summary: &mut DiffSummary, event: DiffEvent| {
        if let DiffEvent::Problem { .. } = event {
            summary.problems += 1;
        }
        sink(event);
    };
    let unmatched = |side: &mut Founds, f: Found| {
        if !f.unreadable {
            side.push(&f);
        }
    };
    let (mut a, mut b) = (
        olds.next_entry(summary, &mut problem),
        news.next_entry(summary, &mut problem),
    );
    loop {
        match (a.take(), b.take()) {
            (None, None) => break,
            (Some(x), None) => {
                unmatched(&mut merged.removed, x);
                a = olds.next_entry(summary, &mut problem);
            }
            (None, Some(y)) => {
                unmatched(&mut merged.added, y);
                b = news.next_entry(summary, &mut problem);
            }
            (Some(x), Some(y)) => match x.key.cmp(&y.key) {
                std::cmp::Ordering::Less => {
                    unmatched(&mut merged.removed, x);
                    a = olds.next_entry(summary, &mut problem);
                    b = Some(y);
                }
                std::cmp::Ordering::Greater => {
                    unmatched(&mut merged.added, y);
                    b = news.next_entry(summary, &mut problem);
                    a = Some(x);
                }
                std::cmp::Ordering::Equal => {
                    if !x.unreadable && !y.unreadable {
                        pairs.push((x, y));
                    }
                    if pairs.len() == PAIR_BATCH {
                        settle(
                            &mut pairs,
                            &mut merged.changes,
                            options,
                            summary,
                            &mut problem,
                        );
                    }
                    a = olds.next_entry(summary, &mut problem);
                    b = news.next_entry(summary, &mut problem);
                }
            },
        }
    }
    settle(
        &mut pairs,
        &mut merged.changes,
        options,
        summary,
        &mut problem,
    );
    overflowed(&merged, names, &mut |event| problem(summary, event));
    merged
}

/// Unmatched entries memory could not hold: said, never a shorter diff.
fn overflowed(merged: &Merged, names: &[PathBuf; 2], problem: &mut dyn FnMut(DiffEvent)) {
    for (side, name) in [(&merged.removed, &names[0]), (&merged.added, &names[1])] {
        if side.overflowed() {
            let error = "its entries without a match are more than memory holds".to_string();
            let path = name.clone();
            problem(DiffEvent::Problem { path, error });
        }
    }
}

/// Every change counted and handed to `sink`, in order.
pub(super) fn report(
    changes: Changes,
    summary: &mut DiffSummary,
    sink: &mut impl FnMut(DiffEvent),
) {
    for change in (0..changes.len()).map(|i| changes.get(i)) {
        match change.kind {
            ChangeKind::Added => summary.added += 1,
            ChangeKind::Modified => summary.modified += 1,
            ChangeKind::Moved => summary.moved += 1,
            ChangeKind::Removed => summary.removed += 1,
            ChangeKind::Typechange => summary.typechanges += 1,
            ChangeKind::Unchanged => summary.unchanged += 1,
            ChangeKind::Unverifiable => summary.unverifiable += 1,
        }
        if matches!(change.kind, ChangeKind::Added | ChangeKind::Modified) {
            match change.new.as_ref().map(|e| (e.kind, e.size)) {
                Some((_, Some(size))) => summary.bytes_changed += size,
                Some((EntryKind::File, None)) => summary.sizes_unknown += 1,
                _ => {}
            }
        }
        sink(DiffEvent::Change(change));
    }
}
