//! The entries only one side has, paired into moves (the same bytes at
//! another path), the rest reported as removed and added. Only what could
//! be a move is unpacked: the smaller side whole, and from the larger one
//! the files whose size is on the smaller side (a list
//! audited against a tree that lost most of it is never held unpacked).

use std::collections::HashSet;

use super::merge::Merged;
use super::packed::{Changes, Founds};
use super::side::Found;
use super::{compare, entry_of, Change, ChangeKind, EntryKind};
use crate::algo::Algorithm;

/// The merge's changes with the unmatched entries paired into moves (same
/// digest in `algorithm`), the rest removed and added; sorted by path.
pub(super) fn with_moves(merged: Merged, algorithm: Algorithm) -> Changes {
    let Merged {
        mut changes,
        removed,
        added,
    } = merged;
    let small_is_removed = removed.len() <= added.len();
    let (small, large) = match small_is_removed {
        true => (&removed, &added),
        false => (&added, &removed),
    };
    let mut small: Vec<Found> = small.iter().map(sized).collect();
    let (places, mut large_candidates): (Vec<usize>, Vec<Found>) =
        candidates(large, &small).into_iter().unzip();
    let dirs = (directories(&removed), directories(&added));
    let pairs = match small_is_removed {
        true => moves_of(&mut small, &mut large_candidates, algorithm, &dirs),
        false => moves_of(&mut large_candidates, &mut small, algorithm, &dirs)
            .into_iter()
            .map(|(i, j)| (j, i))
            .collect(),
    };
    // (index in small, index in large_candidates) from here on.
    let mut moved_small = vec![false; small.len()];
    let mut moved_large = vec![false; large.len()];
    for &(s, l) in &pairs {
        moved_small[s] = true;
        moved_large[places[l]] = true;
        let (old, new) = match small_is_removed {
            true => (&small[s], &large_candidates[l]),
            false => (&large_candidates[l], &small[s]),
        };
        changes.push(&Change {
            kind: ChangeKind::Moved,
            old: Some(entry_of(old)),
            new: Some(entry_of(new)),
        });
    }
    let (small_kind, large_kind) = match small_is_removed {
        true => (ChangeKind::Removed, ChangeKind::Added),
        false => (ChangeKind::Added, ChangeKind::Removed),
    };
    for (f, _) in small.iter().zip(&moved_small).filter(|(_, m)| !**m) {
        changes.push(&one_sided(small_kind, f));
    }
    drop((small, large_candidates));
    for (f, _) in large.iter().zip(&moved_large).filter(|(_, m)| !**m) {
        changes.push(&one_sided(large_kind, &sized(f)));
    }
    changes.sort();
    changes
}

/// The files of `large` that could be moves to or from `small` (a size
/// on both sides, or unknown on one), with their places in `large`.
fn candidates(large: &Founds, small: &[Found]) -> Vec<(usize, Found)> {
    let sizes: HashSet<Option<u64>> = small
        .iter()
        .filter(|f| f.kind == EntryKind::File)
        .map(|f| f.size)
        .collect();
    if sizes.is_empty() {
        return Vec::new();
    }
    let any = sizes.contains(&None);
    large
        .iter()
        .map(sized)
        .enumerate()
        .filter(|(_, f)| {
            f.kind == EntryKind::File && (f.size.is_none() || any || sizes.contains(&f.size))
        })
        .collect()
}

/// `f` with its size where it is a file on disk whose size is not known
/// yet (one stat).
fn sized(mut f: Found) -> Found {
    if f.size.is_none() && f.kind == EntryKind::File {
        if let Some(path) = &f.path {
            f.size = std::fs::metadata(path).ok().map(|m| m.len());
        }
    }
    f
}

/// The pairs of unmatched entries that are moves. A move onto a directory
/// only the old side has (x/f -> x), or from a path only the new side has
/// as a directory (x -> x/f), cannot be done as a rename before the
/// directories change: an addition and a removal instead
/// (the rename would fail).
fn moves_of(
    removed: &mut [Found],
    added: &mut [Found],
    algorithm: Algorithm,
    (old_dirs, new_dirs): &(HashSet<Vec<u8>>, HashSet<Vec<u8>>),
) -> Vec<(usize, usize)> {
    if removed.is_empty() || added.is_empty() {
        return Vec::new();
    }
    let mut moves = compare::pair_moves(removed, added, algorithm);
    moves
        .retain(|&(i, j)| !old_dirs.contains(&added[j].key) && !new_dirs.contains(&removed[i].key));
    moves
}

/// The directories only one side has, as paths without their `/`.
fn directories(side: &Founds) -> HashSet<Vec<u8>> {
    side.iter()
        .filter(|f| f.kind == EntryKind::Directory)
        .map(|mut f| {
            f.key.pop_if(|b| *b == b'/');
            f.key
        })
        .collect()
}

/// An entry only one side has, as its change.
fn one_sided(kind: ChangeKind, f: &Found) -> Change {
    let entry = Some(entry_of(f));
    match kind {
        ChangeKind::Added => Change {
            kind,
            old: None,
            new: entry,
        },
        _ => Change {
            kind,
            old: entry,
            new: None,
        },
    }
}
