//! Identical directories (`fastsum dupes --dirs`): every directory under
//! the roots gets its directory digest ([`crate::dirdigest`]: names,
//! kinds, contents and link targets of everything below it), and
//! directories with the same digest and at least one file are grouped,
//! largest first. A group that is the same relative path inside every
//! member of a group already reported is not reported again (`a/` and
//! `b/` identical means `a/x/` and `b/x/` are); any other group is, even
//! when some of its members lie inside reported ones (`y/` a copy of
//! `a/x/`, or `a/x/` a copy of `a/z/`). Two names for one
//! directory (a symlinked root, a bind mount) are one, and a root named
//! twice or inside another root is walked once.
//! A directory with anything unreadable below it has no digest, so it is
//! never in a group.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::digest::Digest;
use crate::dirdigest::DirectoryDigests;
use crate::error::Result;
use crate::fs::name;
use crate::pipeline::{Outcome, Record, TreeHasher};
use crate::stage::Source;

/// Directories with identical contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirGroup {
    /// Their directory digest.
    pub digest: Digest,
    /// Bytes in the files below each.
    pub size: u64,
    /// Files below each.
    pub files: u64,
    /// The directories, in path order (each ending with a separator).
    pub members: Vec<PathBuf>,
}

impl DirGroup {
    /// Bytes that all members but one hold again.
    pub fn redundant_bytes(&self) -> u64 {
        self.size * (self.members.len() as u64).saturating_sub(1)
    }
}

/// What `duplicate_directories` found: the groups, and what could not be
/// read.
#[derive(Clone, Debug, Default)]
pub struct DirReport {
    /// The groups, largest first.
    pub groups: Vec<DirGroup>,
    /// Files or directories that could not be read.
    pub problems: Vec<super::Problem>,
}

impl DirReport {
    /// Bytes that could go, every group's members but one removed, each
    /// byte counted once: a member inside a copy counted already (`b/x/`
    /// when `b/` is a copy of `a/`) counts nothing more.
    pub fn redundant_bytes(&self) -> u64 {
        let mut removed: Vec<&[u8]> = Vec::new();
        let mut total = 0;
        for group in &self.groups {
            let inside_removed = |m: &&PathBuf| {
                let m = name::path_bytes(m);
                removed.iter().any(|r| m.starts_with(r))
            };
            let left: Vec<&[u8]> = group
                .members
                .iter()
                .filter(|m| !inside_removed(m))
                .map(|m| name::path_bytes(m))
                .collect();
            total += group.size * (left.len() as u64).saturating_sub(1);
            removed.extend(left.into_iter().skip(1));
        }
        total
    }
}

/// One directory's digest and what is below it.
struct Seen {
    path: Vec<u8>,
    digest: Digest,
}

/// Where each directory of `path` ends (the separators in it).
fn separators(path: &[u8]) -> impl Iterator<Item = usize> + '_ {
    path.iter()
        .enumerate()
        .filter(|(_, &b)| name::is_separator(b))
        .map(|(at, _)| at)
}

/// The directories grouped by digest, those with files only, largest
/// first (a parent before its children on a tie), none inside a member
/// of a group already kept, one per directory however named.
fn groups_of(seen: Vec<Seen>, totals: &HashMap<Vec<u8>, (u64, u64)>) -> Vec<DirGroup> {
    let mut by_digest: HashMap<Digest, Vec<Vec<u8>>> = HashMap::new();
    for dir in seen {
        if totals.get(&dir.path).is_some_and(|t| t.1 > 0) {
            by_digest.entry(dir.digest).or_default().push(dir.path);
        }
    }
    let mut groups: Vec<DirGroup> = by_digest
        .into_iter()
        .filter(|(_, members)| members.len() > 1)
        .map(|(digest, mut members)| {
            members.sort();
            let (size, files) = totals.get(&members[0]).copied().unwrap_or_default();
            DirGroup {
                digest,
                size,
                files,
                members: members.into_iter().map(name::path_buf).collect(),
            }
        })
        .collect();
    let depth = |g: &DirGroup| separators(name::path_bytes(&g.members[0])).count();
    groups.sort_by(|a, b| {
        b.size
            .cmp(&a.size)
            .then_with(|| depth(a).cmp(&depth(b)))
            .then_with(|| a.digest.as_bytes().cmp(b.digest.as_bytes()))
    });
    // Each reported group's names, the second names of one directory too.
    let mut kept: Vec<Vec<Vec<u8>>> = Vec::new();
    groups
        .into_iter()
        .filter_map(|mut group| {
            let names: Vec<Vec<u8>> = group
                .members
                .iter()
                .map(|m| name::path_bytes(m).to_vec())
                .collect();
            if kept.iter().any(|reported| implied(reported, &names)) {
                return None;
            }
            one_per_directory(&mut group.members);
            if group.members.len() < 2 {
                return None;
            }
            kept.push(names);
            Some(group)
        })
        .collect()
}

/// Whether the group of `names` is one relative path inside every member
/// of the reported group `reported`, and nothing more: said by it.
fn implied(reported: &[Vec<u8>], names: &[Vec<u8>]) -> bool {
    if reported.len() != names.len() {
        return false;
    }
    let Some(below) = reported.iter().find_map(|r| {
        let rest = names[0].strip_prefix(r.as_slice())?;
        (!rest.is_empty()).then_some(rest)
    }) else {
        return false;
    };
    let names: HashSet<&[u8]> = names.iter().map(Vec::as_slice).collect();
    reported
        .iter()
        .all(|r| names.contains([r.as_slice(), below].concat().as_slice()))
}

/// Keeps one name of each directory (by device and inode, where the
/// platform gives them).
fn one_per_directory(members: &mut Vec<PathBuf>) {
    let mut ids = HashSet::new();
    members.retain(|m| match std::fs::metadata(m) {
        Ok(meta) => {
            let id = crate::fs::FileStamp::of(&meta).id();
            (id.dev, id.ino) == (0, 0) || ids.insert(id)
        }
        Err(_) => false,
    });
}

impl TreeHasher {
    /// Groups of identical directories under `roots`, hashed by this
    /// hasher (its algorithm, threads, cache and progress; it is set to
    /// walk sorted, with directories).
    pub fn duplicate_directories(self, roots: &[PathBuf]) -> Result<DirReport> {
        let hasher = self.recursive(true).walking_directories();
        let algorithm = hasher.algorithm();
        let operands: Vec<Source> = crate::fs::roots::distinct_roots(roots)
            .into_iter()
            .map(Source::Path)
            .collect();
        let mut seen: Vec<Seen> = Vec::new();
        // Bytes and files below each directory, by its path with a separator.
        let mut totals: HashMap<Vec<u8>, (u64, u64)> = HashMap::new();
        let mut report = DirReport::default();
        let sink = |record: Record| {
            let path = name::path_bytes(&record.path).to_vec();
            match record.outcome {
                Outcome::Directory(Some(digest)) => seen.push(Seen { path, digest }),
                Outcome::Hashed(hashed) => {
                    for cut in separators(&path) {
                        let total = totals.entry(path[..=cut].to_vec()).or_default();
                        total.0 += hashed.size;
                        total.1 += 1;
                    }
                }
                Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
                    report.problems.push(super::Problem {
                        path: record.path,
                        error: kind.to_string(),
                    })
                }
                Outcome::Skipped(_) | Outcome::Directory(None) => {}
            }
        };
        let mut digests = DirectoryDigests::new(algorithm, &operands, sink)
            .map_err(|why| crate::error::Error::new(std::io::Error::other(why)))?;
        hasher.run_into(&operands, &mut digests)?;
        digests.finish();
        drop(digests);
        report.groups = groups_of(seen, &totals);
        Ok(report)
    }
}
