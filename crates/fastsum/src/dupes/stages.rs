//! The stages of `find_duplicates` (see the module documentation).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use rayon::prelude::*;

use super::files::{one_path_per_entry, path_bytes, same_bytes};
use super::items::{
    hash_as_staged, hash_edge, keep_shared, staged_hasher, Candidates, Edge, Item, Paths, Problems,
    Whole, EDGE, NONE,
};
use super::leftovers::{leftover, Leftover};
use super::{DupesOptions, DupesReport, Group, Member};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::Result;
use crate::fs::dir::DirectoryCursor;
use crate::fs::{FileId, FileStamp};
use crate::walk::{SpecialKind, WalkItem};

/// The stages, as fclones' `group_files` reads: walk, stat, one path per
/// entry, group by size and inode, by the ends, by the contents, then the
/// groups (and `--verify`).
pub(super) fn run(
    operands: &[PathBuf],
    options: &DupesOptions<'_>,
    unique: bool,
) -> Result<DupesReport> {
    options.walk.check_excludes()?;
    let problems = Problems::default();
    if let Some(p) = &options.progress {
        p.begin_stage("walking", None, None);
    }
    let (paths, mut leftovers) = walk_operands(operands, options, &problems)?;
    let candidates = stat_candidates(paths, options, &problems);
    let candidates = one_path_per_entry_kept(candidates, operands);
    let (items, rep_of) = group_by_size_and_inode(&candidates, options.hard_links);
    let items = group_by_edges(items, &candidates, options, &problems);
    let whole = group_by_contents(items, &candidates, options, &problems)?;
    let groups = groups_of(whole, rep_of, &candidates, options);
    let unique = match unique {
        true => unique_paths(&candidates, &groups),
        false => Vec::new(),
    };
    leftovers.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(DupesReport {
        groups,
        unique,
        problems: problems.sorted(),
        leftovers,
        scope: super::scope::Scope::of(operands),
    })
}

/// Stage 1: every regular file under the operands (and the operands that are
/// files), with the leftovers of an interrupted action met on the way.
fn walk_operands(
    operands: &[PathBuf],
    options: &DupesOptions<'_>,
    problems: &Problems,
) -> Result<(Paths, Vec<Leftover>)> {
    let left = Mutex::new(Vec::new());
    let mut paths = Paths::default();
    let mut walk_options = options.walk.clone();
    walk_options.threads = options.threads;
    for operand in operands {
        match std::fs::metadata(operand) {
            Ok(m) if m.is_dir() => {
                // Each path copied into the one buffer as it comes, its
                // own allocation let go at once (and reused for the next).
                let found = Mutex::new(Paths::default());
                let counted = options.progress.as_deref();
                walk_options.walk(operand, &|item| match item {
                    WalkItem::File { path, .. } => match leftover(&path) {
                        Some(l) => left.lock().expect("not poisoned").push(l),
                        None => {
                            if let Some(p) = counted {
                                p.files_found.fetch_add(1, Ordering::Relaxed);
                            }
                            found.lock().expect("not poisoned").push(&path)
                        }
                    },
                    WalkItem::Special {
                        path,
                        kind: SpecialKind::Symlink,
                    } => left.lock().expect("not poisoned").extend(leftover(&path)),
                    WalkItem::Special { .. } | WalkItem::Directory { .. } => {}
                    WalkItem::Error(e) => {
                        problems.add(e.path().unwrap_or(operand), e.kind().to_string())
                    }
                })?;
                let found = found.into_inner().expect("not poisoned");
                match paths.len() {
                    0 => paths = found,
                    _ => paths.append(found),
                }
            }
            Ok(m) if m.is_file() => paths.push(operand),
            // FIFOs, sockets, devices: never opened.
            Ok(_) => {}
            Err(e) => problems.add(operand, crate::error::ErrorKind::Io(e).to_string()),
        }
    }
    Ok((paths, left.into_inner().expect("not poisoned")))
}

/// Stage 2: each file stat-ed relative to its directory, kept open per thread
/// (the walk hands a directory's files together: one name looked up, not
/// a whole path); those in the size range, in path byte order. A block of
/// paths at a time, so that the stamps are never held apart from their
/// paths for the whole tree (paths, stamps and candidates all
/// at once were the peak of a 1M-file run).
fn stat_candidates(paths: Paths, options: &DupesOptions<'_>, problems: &Problems) -> Candidates {
    let order = paths.sorted();
    let progress = options.progress.as_deref();
    if let Some(p) = progress {
        p.begin_stage("sizes", Some(order.len() as u64), None);
    }
    let in_range = |stamp: &FileStamp| {
        (stamp.size > 0 || options.empty)
            && stamp.size >= options.min_size
            && options.max_size.is_none_or(|max| stamp.size <= max)
    };
    let mut candidates = Candidates {
        order: Vec::with_capacity(order.len()),
        stamps: Vec::with_capacity(order.len()),
        paths: Paths::default(),
    };
    for block in order.chunks(STAT_BLOCK) {
        let stamps: Vec<Option<FileStamp>> = block
            .par_chunks(256)
            .flat_map_iter(|chunk| {
                let mut cursor = DirectoryCursor::new();
                chunk
                    .iter()
                    .map(|&p| {
                        let path = paths.path(p as usize);
                        match cursor.stat(path) {
                            Ok(st) => Some(st).filter(FileStamp::is_file),
                            Err(e) => {
                                problems.add(path, crate::error::ErrorKind::Io(e).to_string());
                                None
                            }
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        for (&p, stamp) in block.iter().zip(stamps) {
            if let Some(stamp) = stamp.filter(in_range) {
                candidates.order.push(p);
                candidates.stamps.push(stamp);
            }
        }
        if let Some(p) = progress {
            p.files_done
                .fetch_add(block.len() as u64, Ordering::Relaxed);
        }
    }
    candidates.paths = paths;
    candidates
}

/// Paths stat-ed at a time (on every core).
const STAT_BLOCK: usize = 64 * 1024;

/// Stage 3: one directory entry reached by several paths counts once; where
/// spellings differ, the one reached through the earlier operand stays.
fn one_path_per_entry_kept(mut candidates: Candidates, operands: &[PathBuf]) -> Candidates {
    let operand_of = |path: &Path| {
        operands
            .iter()
            .position(|o| path_bytes(path).starts_with(path_bytes(o)))
            .unwrap_or(usize::MAX)
    };
    let ids: Vec<(&Path, FileId)> = (0..candidates.len())
        .map(|i| (candidates.path(i), candidates.stamps[i].id()))
        .collect();
    let keep = one_path_per_entry(&ids, operand_of);
    drop(ids);
    if keep.contains(&false) {
        candidates.retain(&keep);
    }
    candidates
}

/// Stage 4: group by size, one representative per inode. Sorting one array of
/// indices (no maps): the first path of an inode (candidates are in byte
/// order) stands for it; the second result sends every path of a size
/// group to its inode's representative ([`NONE`] for the others).
fn group_by_size_and_inode(candidates: &Candidates, hard_links: bool) -> (Vec<Item>, Vec<u32>) {
    let n = candidates.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    // On every core: each comparison looks two stamps up at random, and at
    // 3M candidates this sort took 1.3-1.9 s on one (1.1-1.6 s on two).
    order.par_sort_unstable_by_key(|&i| {
        let s = &candidates.stamps[i as usize];
        (s.size, s.id(), i)
    });
    let mut rep_of: Vec<u32> = vec![NONE; n];
    let mut items: Vec<Item> = Vec::new();
    for same_size in order
        .chunk_by(|&a, &b| candidates.stamps[a as usize].size == candidates.stamps[b as usize].size)
    {
        if same_size.len() < 2 {
            continue;
        }
        let inodes: Vec<&[u32]> = same_size
            .chunk_by(|&a, &b| {
                candidates.stamps[a as usize].id() == candidates.stamps[b as usize].id()
            })
            .collect();
        if inodes.len() < 2 && !hard_links {
            continue;
        }
        for paths in inodes {
            let rep = paths[0];
            for &p in paths {
                rep_of[p as usize] = rep;
            }
            items.push(Item {
                index: rep,
                links: paths.len() as u32,
                size: candidates.stamps[rep as usize].size,
                prefix: 0,
                suffix: 0,
            });
        }
    }
    (items, rep_of)
}

/// Stage 5, 6: prefix, then suffix: each size group split by its ends, each
/// read in path order so that a worker's files share directories.
fn group_by_edges(
    mut items: Vec<Item>,
    candidates: &Candidates,
    options: &DupesOptions<'_>,
    problems: &Problems,
) -> Vec<Item> {
    let progress = options.progress.as_deref();
    for edge in [Edge::Prefix, Edge::Suffix] {
        items.sort_unstable_by_key(|item| item.index);
        // What this edge reads of each file, known from the sizes.
        let read = |size: u64| match edge {
            Edge::Suffix if size <= EDGE => 0,
            _ => size.min(EDGE),
        };
        if let Some(p) = progress {
            let bytes = items.iter().map(|item| read(item.size)).sum();
            let name = match edge {
                Edge::Prefix => "first bytes",
                Edge::Suffix => "last bytes",
            };
            p.begin_stage(name, Some(items.len() as u64), Some(bytes));
        }
        items.par_chunks_mut(64).for_each(|chunk| {
            let mut cursor = DirectoryCursor::new();
            if let Some(p) = progress {
                let bytes: u64 = chunk.iter().map(|item| read(item.size)).sum();
                p.files_done
                    .fetch_add(chunk.len() as u64, Ordering::Relaxed);
                p.bytes_done.fetch_add(bytes, Ordering::Relaxed);
            }
            for item in chunk {
                let (path, stamp) = (
                    candidates.path(item.index as usize),
                    &candidates.stamps[item.index as usize],
                );
                if edge == Edge::Suffix && stamp.size <= EDGE {
                    // The prefix was the whole file.
                    continue;
                }
                match hash_edge(&mut cursor, path, stamp, edge) {
                    Ok(h) if edge == Edge::Prefix => item.prefix = h,
                    Ok(h) => item.suffix = h,
                    Err(e) => {
                        problems.add(path, e);
                        item.links = 0;
                    }
                }
            }
        });
        items.retain(|item| item.links > 0);
        keep_shared(&mut items, options.hard_links, |a, b| {
            (a.size, a.prefix, a.suffix).cmp(&(b.size, b.prefix, b.suffix))
        });
    }
    items
}

/// Stage 7: whole files, in the chosen algorithm, through the pipeline; those
/// whose digest some other inode shares. A file no longer than an edge
/// was read whole by the prefix stage: with xxh128 that hash is its
/// digest already.
fn group_by_contents(
    mut items: Vec<Item>,
    candidates: &Candidates,
    options: &DupesOptions<'_>,
    problems: &Problems,
) -> Result<Vec<Whole>> {
    items.sort_unstable_by_key(|item| item.index);
    let known = |item: &Item| item.size <= EDGE && options.algorithm == Algorithm::Xxh128;
    let need: Vec<u32> = items
        .iter()
        .filter(|item| !known(item))
        .map(|item| item.index)
        .collect();
    let hashed = hash_whole(&need, candidates, options, problems)?;
    let mut hashed = need.iter().zip(hashed);
    let mut whole: Vec<Whole> = Vec::with_capacity(items.len());
    for item in &items {
        let digest = if known(item) {
            Some(Digest::from_bytes(&item.prefix.to_be_bytes()))
        } else {
            hashed.find(|(&i, _)| i == item.index).and_then(|(_, d)| d)
        };
        if let Some(digest) = digest {
            whole.push(Whole {
                digest,
                index: item.index,
                links: item.links,
                size: item.size,
            });
        }
    }
    keep_shared(&mut whole, options.hard_links, |a, b| {
        (a.size, a.digest.as_bytes()).cmp(&(b.size, b.digest.as_bytes()))
    });
    Ok(whole)
}

/// The whole-file digests of the candidates at `need` (in that order;
/// `None` for a file that could not be read, a problem).
fn hash_whole(
    need: &[u32],
    candidates: &Candidates,
    options: &DupesOptions<'_>,
    problems: &Problems,
) -> Result<Vec<Option<Digest>>> {
    let files: Vec<(PathBuf, FileStamp)> = need
        .iter()
        .map(|&i| {
            let i = i as usize;
            (candidates.path(i).to_path_buf(), candidates.stamps[i])
        })
        .collect();
    let mut hasher = staged_hasher(options.algorithm, options.threads);
    #[cfg(feature = "cache")]
    if let Some(cache) = options.cache {
        hasher = hasher.cache(cache)?;
    }
    if let Some(progress) = &options.progress {
        // From here the bar counts the files to hash (the feeder counts
        // them), and the bytes, known from their sizes.
        let bytes = files.iter().map(|(_, stamp)| stamp.size).sum();
        progress.begin_stage("hashing", None, Some(bytes));
        hasher = hasher.progress(progress.clone());
    }
    hash_as_staged(hasher, files, problems)
}

/// Stage 8: the groups: largest size first, then digest; each with every path
/// of its inodes in path order; with `--verify`, each member compared
/// byte for byte with the group's first.
fn groups_of(
    mut whole: Vec<Whole>,
    rep_of: Vec<u32>,
    candidates: &Candidates,
    options: &DupesOptions<'_>,
) -> Vec<Group> {
    whole.sort_unstable_by(|a, b| {
        b.size
            .cmp(&a.size)
            .then(a.digest.as_bytes().cmp(b.digest.as_bytes()))
            .then(a.index.cmp(&b.index))
    });
    // Every path of a representative's inode: (representative, path).
    let mut links_of: Vec<(u32, u32)> = rep_of
        .iter()
        .enumerate()
        .filter(|&(_, &r)| r != NONE)
        .map(|(m, &r)| (r, m as u32))
        .collect();
    drop(rep_of);
    links_of.sort_unstable();
    let paths_of = |rep: u32| {
        let start = links_of.partition_point(|&(r, _)| r < rep);
        let end = links_of.partition_point(|&(r, _)| r <= rep);
        links_of[start..end].iter().map(|&(_, m)| m)
    };
    let runs: Vec<&[Whole]> = whole
        .chunk_by(|a, b| a.size == b.size && a.digest == b.digest)
        .collect();
    runs.into_par_iter()
        .filter_map(|run| {
            let mut reps: Vec<u32> = run.iter().map(|w| w.index).collect();
            if options.verify {
                let head = reps[0];
                let first = candidates.path(head as usize);
                reps.retain(|&r| r == head || same_bytes(first, candidates.path(r as usize)));
            }
            let mut indices: Vec<u32> = reps.iter().flat_map(|&r| paths_of(r)).collect();
            indices.sort_unstable();
            let enough = if options.hard_links {
                indices.len() >= 2
            } else {
                reps.len() >= 2
            };
            enough.then(|| Group {
                size: run[0].size,
                digest: run[0].digest,
                members: indices
                    .iter()
                    .map(|&m| Member {
                        path: candidates.path(m as usize).to_path_buf(),
                        stamp: candidates.stamps[m as usize],
                    })
                    .collect(),
            })
        })
        .collect()
}

/// `--unique`: the candidates in no group (candidates are in byte order: a
/// member is found by its path).
fn unique_paths(candidates: &Candidates, groups: &[Group]) -> Vec<PathBuf> {
    let mut grouped = vec![false; candidates.len()];
    for member in groups.iter().flat_map(|g| g.members.iter()) {
        if let Some(at) = candidates.find(&member.path) {
            grouped[at] = true;
        }
    }
    (0..candidates.len())
        .filter(|&i| !grouped[i])
        .map(|i| candidates.path(i).to_path_buf())
        .collect()
}
