//! The stages of `find_duplicates` (see the module documentation).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;

use super::files::{one_path_per_entry, path_bytes, same_bytes};
use super::leftovers::leftover;
use super::{DupesOptions, DupesReport, Group, Member, Problem};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::Result;
use crate::fs::dir::DirectoryCursor;
use crate::fs::{FileId, FileStamp};
use crate::pipeline::{Order, Outcome, TreeHasher};
use crate::read::ReadStrategy;
use crate::stage::Source;
use crate::walk::{self, SpecialKind, WalkItem};

/// Bytes hashed at each end of a file before whole files are: one page,
/// which the kernel reads in one go anyway. On the corpus's `dupes/`
/// (40,800 files, 1.1 GB) the ends cut 30,636 same-size candidates to
/// 12,353 for the whole-file stage. Measured against other lengths
/// (docs/BENCHMARKS.md, medians warm / cold): 4 KiB 0.216 / 1.452 s,
/// 16 KiB 0.209 / 1.429 s, 64 KiB 0.219 / 1.515 s; the corpus's traps
/// that share their first and last 64 KiB need whole files at any length.
pub const EDGE: u64 = 4096;

/// The whole-file stage reads (does not map) in blocks of this size: a
/// mapped window counts in the resident set, 8 MiB per worker, and on
/// `dupes/` fastsum's peak RSS was 47 MiB mapped against fclones's 18 MiB;
/// 64 KiB blocks stay in the core's cache.
const WHOLE_FILE_READS: usize = 64 * 1024;

/// A file met, stat-ed.
struct Candidate {
    path: PathBuf,
    stamp: FileStamp,
}

pub(super) fn run(
    operands: &[PathBuf],
    options: &DupesOptions,
    unique: bool,
) -> Result<DupesReport> {
    walk::check_excludes(&options.walk.excludes)?;
    let problems = Mutex::new(Vec::new());
    let problem = |path: &Path, error: String| {
        problems.lock().expect("not poisoned").push(Problem {
            path: path.to_path_buf(),
            error,
        });
    };

    // 1. Walk and stat.
    let left = Mutex::new(Vec::new());
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut walk_options = options.walk.clone();
    walk_options.threads = options.threads;
    for operand in operands {
        match std::fs::metadata(operand) {
            Ok(m) if m.is_dir() => {
                let found = Mutex::new(Vec::new());
                walk::walk(operand, &walk_options, &|item| match item {
                    WalkItem::File { path, .. } => match leftover(&path) {
                        Some(l) => left.lock().expect("not poisoned").push(l),
                        None => found.lock().expect("not poisoned").push(path),
                    },
                    WalkItem::Special {
                        path,
                        kind: SpecialKind::Symlink,
                    } => left.lock().expect("not poisoned").extend(leftover(&path)),
                    WalkItem::Special { .. } => {}
                    WalkItem::Error(e) => {
                        problem(e.path().unwrap_or(operand), e.kind().to_string())
                    }
                })?;
                paths.extend(found.into_inner().expect("not poisoned"));
            }
            Ok(m) if m.is_file() => paths.push(operand.clone()),
            // FIFOs, sockets, devices: never opened.
            Ok(_) => {}
            Err(e) => problem(operand, crate::error::ErrorKind::Io(e).to_string()),
        }
    }
    // Stat each file relative to its directory, kept open per thread (the
    // walk hands a directory's files together): one name looked up, not a
    // whole path.
    paths.sort_unstable_by(|a, b| path_bytes(a).cmp(path_bytes(b)));
    let stamps: Vec<Option<FileStamp>> = paths
        .par_chunks(256)
        .flat_map_iter(|chunk| {
            let mut cursor = DirectoryCursor::new();
            chunk
                .iter()
                .map(|path| match cursor.stat(path) {
                    Ok(st) => Some(st).filter(FileStamp::is_file),
                    Err(e) => {
                        problem(path, crate::error::ErrorKind::Io(e).to_string());
                        None
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut candidates: Vec<Candidate> = paths
        .into_iter()
        .zip(stamps)
        .filter_map(|(path, stamp)| {
            Some(Candidate {
                path,
                stamp: stamp?,
            })
        })
        .filter(|c| {
            let size = c.stamp.size;
            (size > 0 || options.empty)
                && size >= options.min_size
                && options.max_size.is_none_or(|max| size <= max)
        })
        .collect();
    // One directory entry reached by several paths counts once; where
    // spellings differ, the one reached through the earlier operand stays.
    let operand_of = |path: &Path| {
        operands
            .iter()
            .position(|o| path_bytes(path).starts_with(path_bytes(o)))
            .unwrap_or(usize::MAX)
    };
    let ids: Vec<(&Path, FileId)> = candidates
        .iter()
        .map(|c| (c.path.as_path(), c.stamp.id()))
        .collect();
    let mut flags = one_path_per_entry(&ids, operand_of).into_iter();
    drop(ids);
    candidates.retain(|_| flags.next().unwrap_or(false));

    // 2. Group by size; 3. one representative per inode. Sorting one
    // array of indices (no maps): the first path of an inode (candidates
    // are in byte order) stands for it; `rep_of` sends every path of a
    // size group to its inode's representative.
    let n = candidates.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_unstable_by_key(|&i| {
        let s = &candidates[i as usize].stamp;
        (s.size, s.id(), i)
    });
    let mut rep_of: Vec<u32> = vec![NONE; n];
    let mut items: Vec<Item> = Vec::new();
    for same_size in order
        .chunk_by(|&a, &b| candidates[a as usize].stamp.size == candidates[b as usize].stamp.size)
    {
        if same_size.len() < 2 {
            continue;
        }
        let inodes: Vec<&[u32]> = same_size
            .chunk_by(|&a, &b| {
                candidates[a as usize].stamp.id() == candidates[b as usize].stamp.id()
            })
            .collect();
        if inodes.len() < 2 && !options.hard_links {
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
                size: candidates[rep as usize].stamp.size,
                prefix: 0,
                suffix: 0,
            });
        }
    }
    drop(order);

    // 4, 5. Prefix and suffix: split each size group by its ends, each
    // read in path order so that a worker's files share directories.
    for edge in [Edge::Prefix, Edge::Suffix] {
        items.sort_unstable_by_key(|item| item.index);
        items.par_chunks_mut(64).for_each(|chunk| {
            let mut cursor = DirectoryCursor::new();
            for item in chunk {
                let c = &candidates[item.index as usize];
                if edge == Edge::Suffix && c.stamp.size <= EDGE {
                    // The prefix was the whole file.
                    continue;
                }
                match hash_edge(&mut cursor, &c.path, c.stamp.size, edge) {
                    Ok(h) if edge == Edge::Prefix => item.prefix = h,
                    Ok(h) => item.suffix = h,
                    Err(e) => {
                        problem(&c.path, e);
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

    // 6. Whole files, in the chosen algorithm, through the pipeline. A
    // file no longer than an edge was read whole by the prefix stage: with
    // xxh128 that hash is its digest already.
    items.sort_unstable_by_key(|item| item.index);
    let known = |item: &Item| item.size <= EDGE && options.algorithm == Algorithm::Xxh128;
    let need: Vec<u32> = items
        .iter()
        .filter(|item| !known(item))
        .map(|item| item.index)
        .collect();
    let mut hashed: Vec<Option<Digest>> = vec![None; need.len()];
    if !need.is_empty() {
        let operands: Vec<Source> = need
            .iter()
            .map(|&i| Source::Path(candidates[i as usize].path.clone()))
            .collect();
        let mut hasher = TreeHasher::new(options.algorithm)
            .order(Order::Sorted)
            .strategy(ReadStrategy::Read {
                buffer_size: WHOLE_FILE_READS,
            })
            .threads(if options.threads == 0 {
                crate::pipeline::available_threads()
            } else {
                options.threads
            });
        if let Some(session) = &options.cache {
            hasher = hasher.cache(session.clone());
        }
        hasher.run(&operands, |record| match record.outcome {
            Outcome::Hashed(h) => hashed[record.operand] = Some(h.digest),
            Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
                problem(&record.path, kind.to_string())
            }
            Outcome::Skipped(_) => {}
        })?;
    }
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
    drop(items);
    keep_shared(&mut whole, options.hard_links, |a, b| {
        (a.size, a.digest.as_bytes()).cmp(&(b.size, b.digest.as_bytes()))
    });

    // Groups (largest size first, then digest; representatives in path
    // order), then 7. --verify.
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
    let out: Vec<Group> = runs
        .into_par_iter()
        .filter_map(|run| {
            let mut reps: Vec<u32> = run.iter().map(|w| w.index).collect();
            if options.verify {
                let head = reps[0];
                let first = &candidates[head as usize].path;
                reps.retain(|&r| r == head || same_bytes(first, &candidates[r as usize].path));
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
                        path: candidates[m as usize].path.clone(),
                        stamp: candidates[m as usize].stamp,
                    })
                    .collect(),
            })
        })
        .collect();
    drop(whole);

    let unique_paths = if unique {
        // Candidates are in byte order: a member is found by its path.
        let mut grouped = vec![false; candidates.len()];
        for member in out.iter().flat_map(|g| g.members.iter()) {
            let at =
                candidates.binary_search_by(|c| path_bytes(&c.path).cmp(path_bytes(&member.path)));
            if let Ok(at) = at {
                grouped[at] = true;
            }
        }
        candidates
            .iter()
            .zip(grouped)
            .filter(|(_, grouped)| !grouped)
            .map(|(c, _)| c.path.clone())
            .collect()
    } else {
        Vec::new()
    };
    let mut problems = problems.into_inner().expect("not poisoned");
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    let mut leftovers = left.into_inner().expect("not poisoned");
    leftovers.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(DupesReport {
        groups: out,
        unique: unique_paths,
        problems,
        leftovers,
    })
}

/// Which end of a file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Prefix,
    Suffix,
}

/// No representative: the path is in no size group.
const NONE: u32 = u32::MAX;

/// An inode still in the running, through the edge stages: 48 bytes, so
/// that 30,000 of them cost 1.4 MB (issue 15's memory target).
#[derive(Clone, Copy)]
struct Item {
    /// Its representative candidate (the inode's first path).
    index: u32,
    /// Paths of this inode among the candidates (0: failed to read).
    links: u32,
    size: u64,
    /// XXH3-128 of the first [`EDGE`] bytes (the whole file if shorter).
    prefix: u128,
    /// XXH3-128 of the last [`EDGE`] bytes (0 for a file no longer than
    /// an edge).
    suffix: u128,
}

/// An inode with its whole-file digest.
#[derive(Clone, Copy)]
struct Whole {
    digest: Digest,
    index: u32,
    links: u32,
    size: u64,
}

/// Paths of an inode among the candidates.
trait Links {
    fn links(&self) -> u32;
}

impl Links for Item {
    fn links(&self) -> u32 {
        self.links
    }
}

impl Links for Whole {
    fn links(&self) -> u32 {
        self.links
    }
}

/// XXH3-128 of the first or last [`EDGE`] bytes (a file no longer than
/// that: the whole of it), opened relative to its directory. Fewer bytes
/// than the stat promised is an error: a file no longer than an edge is
/// answered with this hash.
fn hash_edge(
    cursor: &mut DirectoryCursor,
    path: &Path,
    size: u64,
    edge: Edge,
) -> std::result::Result<u128, String> {
    let io = |e| crate::error::ErrorKind::Io(e).to_string();
    let file = cursor.open(path).map_err(io)?;
    let start = match edge {
        Edge::Prefix => 0,
        Edge::Suffix => size.saturating_sub(EDGE),
    };
    let want = (size - start).min(EDGE) as usize;
    let mut buffer = [0u8; EDGE as usize];
    let mut filled = 0;
    while filled < want {
        match crate::fs::read_at(&file, &mut buffer[filled..want], start + filled as u64) {
            Ok(0) => return Err(crate::error::ErrorKind::ChangedWhileReading.to_string()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(xxhash_rust::xxh3::xxh3_128(&buffer[..want]))
}

/// Keeps the items some other item equals in `order`;
/// with `hard_links`, an inode with several paths shares with itself.
/// Sorting, not a map: nothing beyond the array itself is allocated.
fn keep_shared<T: Links>(
    items: &mut Vec<T>,
    hard_links: bool,
    order: impl Fn(&T, &T) -> std::cmp::Ordering,
) {
    items.sort_unstable_by(&order);
    let mut keep = Vec::with_capacity(items.len());
    for run in items.chunk_by(|a, b| order(a, b).is_eq()) {
        keep.extend(
            run.iter()
                .map(|item| run.len() >= 2 || (hard_links && item.links() >= 2)),
        );
    }
    let mut flags = keep.into_iter();
    items.retain(|_| flags.next().unwrap_or(false));
}
