//! The stages of `find_duplicates` (see the module documentation).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;

use super::files::{normalized, path_bytes, same_bytes};
use super::{DupesOptions, DupesReport, Group, Member, Problem};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::Result;
use crate::fs::dir::DirectoryCursor;
use crate::fs::{FileId, FileStamp};
use crate::pipeline::{Order, Outcome, TreeHasher};
use crate::read::{FileHasher, ReadStrategy};
use crate::stage::Source;
use crate::walk::{self, WalkItem};

/// Bytes hashed at each end of a file before whole files are: one page,
/// which the kernel reads in one go anyway. On the corpus's `dupes/`
/// (40,800 files, 1.1 GB) the ends cut 30,636 same-size candidates to
/// 12,353 for the whole-file stage, and the run takes 0.29 s
/// (docs/BENCHMARKS.md); longer ends cannot split the corpus's traps that
/// share their first and last 64 KiB, which only whole files separate.
/// Not yet measured against other lengths (issue 15's note).
pub const EDGE: u64 = 4096;

/// The whole-file stage reads (does not map) in blocks of this size: a
/// mapped window counts in the resident set, 8 MiB per worker, and on
/// `dupes/` fastsum's peak RSS was 47 MiB mapped against fclones's 18 MiB
/// (docs/BENCHMARKS.md); 64 KiB blocks stay in the core's cache.
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
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut walk_options = options.walk.clone();
    walk_options.threads = options.threads;
    for operand in operands {
        match std::fs::metadata(operand) {
            Ok(m) if m.is_dir() => {
                let found = Mutex::new(Vec::new());
                walk::walk(operand, &walk_options, &|item| match item {
                    WalkItem::File { path } => found.lock().expect("not poisoned").push(path),
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
                    Ok(st) => Some(FileStamp::of_stat(&st)).filter(FileStamp::is_file),
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
    // A path reached through two operands counts once: the same inode
    // under the same name, once made absolute and tidied.
    if operands.len() > 1 {
        let cwd = std::env::current_dir().unwrap_or_default();
        // Where spellings differ, the one reached through the earlier
        // operand is kept.
        let operand_of = |path: &Path| {
            operands
                .iter()
                .position(|o| path_bytes(path).starts_with(path_bytes(o)))
                .unwrap_or(usize::MAX)
        };
        let mut keyed: Vec<(FileId, Vec<u8>, usize, usize)> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    c.stamp.id(),
                    normalized(&cwd, &c.path),
                    operand_of(&c.path),
                    i,
                )
            })
            .collect();
        keyed.sort_unstable();
        keyed.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        let mut keep = vec![false; candidates.len()];
        for (_, _, _, i) in keyed {
            keep[i] = true;
        }
        let mut flags = keep.into_iter();
        candidates.retain(|_| flags.next().unwrap_or(false));
    }

    // 2. Group by size; 3. one representative per inode.
    let mut by_size: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, c) in candidates.iter().enumerate() {
        by_size.entry(c.stamp.size).or_default().push(i);
    }
    let mut representatives: Vec<usize> = Vec::new();
    let mut links: HashMap<FileId, Vec<usize>> = HashMap::new();
    for members in by_size.values() {
        if members.len() < 2 {
            continue;
        }
        let start = representatives.len();
        for &i in members {
            let entry = links.entry(candidates[i].stamp.id()).or_default();
            if entry.is_empty() {
                representatives.push(i);
            }
            entry.push(i);
        }
        let inodes = representatives.len() - start;
        let enough = if options.hard_links {
            true
        } else {
            inodes >= 2
        };
        if !enough {
            representatives.truncate(start);
        }
    }
    // In path order, so that each worker's files share directories.
    representatives.sort_unstable_by(|&a, &b| {
        path_bytes(&candidates[a].path).cmp(path_bytes(&candidates[b].path))
    });

    // 4, 5. Prefix and suffix: split each size group by its ends.
    // (candidate, whole-file digest if already known, ends so far)
    let mut survivors: Vec<(usize, Option<Digest>, Ends)> = representatives
        .iter()
        .map(|&i| (i, None, Ends::default()))
        .collect();
    for edge in [Edge::Prefix, Edge::Suffix] {
        let digests: Vec<Option<Digest>> = survivors
            .par_chunks(64)
            .flat_map_iter(|chunk| {
                let mut cursor = DirectoryCursor::new();
                chunk
                    .iter()
                    .map(|&(i, _, _)| {
                        let c = &candidates[i];
                        if edge == Edge::Suffix && c.stamp.size <= EDGE {
                            // The prefix was the whole file.
                            return Some(Digest::from_bytes(&[]));
                        }
                        match hash_edge(&mut cursor, &c.path, c.stamp.size, edge) {
                            Ok(d) => Some(d),
                            Err(e) => {
                                problem(&c.path, e);
                                None
                            }
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let keyed: Vec<(usize, Option<Digest>, Ends)> = survivors
            .iter()
            .zip(digests)
            .filter_map(|(&(i, whole, ends), d)| {
                let d = d?;
                let ends = match edge {
                    Edge::Prefix => Ends {
                        prefix: Some(d),
                        suffix: None,
                    },
                    Edge::Suffix => Ends {
                        suffix: Some(d),
                        ..ends
                    },
                };
                // A file no longer than an edge: its prefix hash is a
                // whole-file hash already, when the algorithm is the same.
                let small =
                    candidates[i].stamp.size <= EDGE && options.algorithm == Algorithm::Xxh128;
                let whole = if small && edge == Edge::Prefix {
                    Some(d)
                } else {
                    whole
                };
                Some((i, whole, ends))
            })
            .collect();
        survivors = keep_shared(
            &keyed,
            &candidates,
            &links,
            options.hard_links,
            |&(i, _, ends)| (candidates[i].stamp.size, ends),
        );
    }
    let survivors: Vec<(usize, Option<Digest>)> =
        survivors.into_iter().map(|(i, w, _)| (i, w)).collect();

    // 6. Whole files, in the chosen algorithm, through the pipeline.
    let need: Vec<usize> = survivors
        .iter()
        .filter(|(_, w)| w.is_none())
        .map(|(i, _)| *i)
        .collect();
    let mut whole: HashMap<usize, Digest> = survivors
        .iter()
        .filter_map(|&(i, w)| w.map(|d| (i, d)))
        .collect();
    if !need.is_empty() {
        let operands: Vec<Source> = need
            .iter()
            .map(|&i| Source::Path(candidates[i].path.clone()))
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
            Outcome::Hashed(h) => {
                whole.insert(need[record.operand], h.digest);
            }
            Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
                problem(&record.path, kind.to_string())
            }
            Outcome::Skipped(_) => {}
        })?;
    }
    let keyed: Vec<(usize, Digest)> = survivors
        .iter()
        .filter_map(|&(i, _)| whole.get(&i).map(|&d| (i, d)))
        .collect();
    let survivors = keep_shared(
        &keyed,
        &candidates,
        &links,
        options.hard_links,
        |&(i, d)| (candidates[i].stamp.size, d),
    );

    // Groups, then 7. --verify.
    let mut groups: HashMap<(u64, Digest), Vec<usize>> = HashMap::new();
    for &(i, d) in &survivors {
        groups
            .entry((candidates[i].stamp.size, d))
            .or_default()
            .push(i);
    }
    let mut out: Vec<Group> = groups
        .into_par_iter()
        .filter_map(|((size, digest), mut reps)| {
            reps.sort_by(|&a, &b| candidates[a].path.cmp(&candidates[b].path));
            if options.verify {
                let head = reps[0];
                let first = &candidates[head].path;
                reps.retain(|&r| r == head || same_bytes(first, &candidates[r].path));
            }
            let mut members: Vec<Member> = reps
                .iter()
                .flat_map(|&r| links[&candidates[r].stamp.id()].iter())
                .map(|&m| Member {
                    path: candidates[m].path.clone(),
                    stamp: candidates[m].stamp,
                })
                .collect();
            members.sort_by(|a, b| path_bytes(&a.path).cmp(path_bytes(&b.path)));
            let enough = if options.hard_links {
                members.len() >= 2
            } else {
                reps.len() >= 2
            };
            enough.then_some(Group {
                size,
                digest,
                members,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.size
            .cmp(&a.size)
            .then(a.digest.as_bytes().cmp(b.digest.as_bytes()))
    });

    let unique_paths = if unique {
        let grouped: std::collections::HashSet<&Path> = out
            .iter()
            .flat_map(|g| g.members.iter().map(|m| m.path.as_path()))
            .collect();
        let mut rest: Vec<PathBuf> = candidates
            .iter()
            .filter(|c| !grouped.contains(c.path.as_path()))
            .map(|c| c.path.clone())
            .collect();
        rest.sort_by(|a, b| path_bytes(a).cmp(path_bytes(b)));
        rest
    } else {
        Vec::new()
    };
    let mut problems = problems.into_inner().expect("not poisoned");
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(DupesReport {
        groups: out,
        unique: unique_paths,
        problems,
    })
}

/// Which end of a file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Prefix,
    Suffix,
}

/// The hashes of a file's ends taken so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Ends {
    prefix: Option<Digest>,
    suffix: Option<Digest>,
}

/// XXH3-128 of the first or last [`EDGE`] bytes (a file no longer than
/// that: the whole of it), opened relative to its directory.
fn hash_edge(
    cursor: &mut DirectoryCursor,
    path: &Path,
    size: u64,
    edge: Edge,
) -> std::result::Result<Digest, String> {
    let file = cursor
        .open(path)
        .map_err(|e| crate::error::ErrorKind::Io(e).to_string())?;
    let start = match edge {
        Edge::Prefix => 0,
        Edge::Suffix => size.saturating_sub(EDGE),
    };
    thread_local! {
        static HASHER: std::cell::RefCell<FileHasher> = std::cell::RefCell::new(FileHasher::new());
    }
    HASHER.with(|h| {
        h.borrow_mut()
            .hash_range_counted(Algorithm::Xxh128, &file, start, EDGE)
            .map(|(d, _)| d)
            .map_err(|e| e.to_string())
    })
}

/// The items whose key some other item shares (by inode: hard links of one
/// inode are one item; with `hard_links`, an inode with several paths
/// shares with itself).
fn keep_shared<T: Copy + HasIndex, K: std::hash::Hash + Eq>(
    items: &[T],
    candidates: &[Candidate],
    links: &HashMap<FileId, Vec<usize>>,
    hard_links: bool,
    key: impl Fn(&T) -> K,
) -> Vec<T> {
    let mut counts: HashMap<K, usize> = HashMap::new();
    for item in items {
        *counts.entry(key(item)).or_default() += 1;
    }
    items
        .iter()
        .filter(|item| {
            counts[&key(item)] >= 2
                || (hard_links && links[&candidates[item.index()].stamp.id()].len() >= 2)
        })
        .copied()
        .collect()
}

/// The candidate index an item is about.
trait HasIndex {
    fn index(&self) -> usize;
}

impl HasIndex for (usize, Option<Digest>, Ends) {
    fn index(&self) -> usize {
        self.0
    }
}

impl HasIndex for (usize, Digest) {
    fn index(&self) -> usize {
        self.0
    }
}
