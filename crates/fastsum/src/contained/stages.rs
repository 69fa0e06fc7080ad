//! The stages of `find_contained` (see the module documentation): walk
//! and stat both sides, keep what sizes allow, short-cut shared inodes,
//! then the edges and the whole files of the candidates of both sides;
//! the manifests; last, every stamp taken again (one concern: one
//! sequence of stages, a function each).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;

use super::answers::{hash_paths, Answers, Problems};
use super::{Archive, ArchiveCopy, ContainedOptions, ContainedReport, Skipped, Verdict};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::dupes::items::{hash_ends, Candidates, Paths};
use crate::error::{ErrorKind, Result};
use crate::fs::dir::DirectoryCursor;
use crate::fs::{FileId, FileStamp};
use crate::walk::{SpecialKind, WalkItem, WalkOptions};

/// The archive trees' files of a size some source file has.
struct ArchiveFiles {
    files: Candidates,
    /// The archive each file is in.
    archive: Vec<u32>,
}

/// The stages, in the order the module documentation gives them.
pub(super) fn run(
    sources: &[PathBuf],
    archives: &[Archive],
    options: &ContainedOptions,
) -> Result<ContainedReport> {
    let mut walk = options.walk.clone();
    walk.follow_links = false;
    walk.threads = options.threads;
    walk.check_excludes()?;
    let problems = Problems::default();
    let skipped = Mutex::new(Vec::new());
    let paths = walk_operands(sources, &walk, None, &problems, Some(&skipped))?;
    let mut src = stat_files(paths, None, &problems, Some(&skipped));
    once_each(&mut src, &skipped);
    let sizes = sorted_sizes(&src.stamps);
    let mut answers = Answers::new(src.len());
    let trees = archive_files(archives, &walk, &sizes, &problems)?;
    match_trees(&src, &trees, options, &mut answers, &problems)?;
    for (n, archive) in archives.iter().enumerate() {
        match archive {
            Archive::Manifest(path) => super::manifests::match_manifest(
                path,
                n,
                &src,
                &sizes,
                options,
                &mut answers,
                &problems,
            )?,
            #[cfg(feature = "remote")]
            Archive::Remote(operand) => {
                let bytes = crate::fs::name::path_bytes(operand);
                let Some(remote) = crate::remote::Remote::parse(bytes) else {
                    let why = "not a [USER@]HOST:PATH operand";
                    return Err(crate::Error::with_path(
                        operand,
                        ErrorKind::Io(std::io::Error::other(why)),
                    ));
                };
                super::remote::match_remote(&remote, n, &src, options, &mut answers, &problems)?
            }
            #[cfg(feature = "s3")]
            Archive::S3(operand) => {
                super::s3::match_s3(operand, n, &src, options, &mut answers, &problems)?
            }
            Archive::Tree(_) => {}
        }
    }
    answers.settle_doubts(&src, &problems);
    if options.verify {
        verify_copies(&src, &mut answers, &problems);
    }
    stamps_again(&src, &mut answers, &problems);
    let verdicts = (0..src.len())
        .filter(|&i| !answers.trouble[i])
        .map(|i| Verdict {
            path: src.path(i).to_path_buf(),
            stamp: src.stamps[i],
            copy: answers.copies[i].take(),
        })
        .collect();
    let mut skipped: Vec<Skipped> = skipped.into_inner().expect("not poisoned");
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ContainedReport {
        verdicts,
        skipped,
        problems: problems.sorted(),
        ..ContainedReport::default()
    })
}

/// Every regular file under the operands (and the operands that are
/// files); with `sizes`, only the walked files of those sizes (or whose
/// size the walk could not take): the archive's other paths are never
/// held, so a large archive costs its candidates' paths only. With
/// `skipped`, what is not a file's bytes is said there.
fn walk_operands(
    operands: &[PathBuf],
    walk: &WalkOptions,
    sizes: Option<&[u64]>,
    problems: &Problems,
    skipped: Option<&Mutex<Vec<Skipped>>>,
) -> Result<Paths> {
    let skip = |path: &Path, kind| {
        if let Some(s) = skipped {
            s.lock().expect("not poisoned").push(Skipped {
                path: path.to_path_buf(),
                kind,
            });
        }
    };
    let mut paths = Paths::default();
    for operand in operands {
        match std::fs::metadata(operand) {
            Ok(m) if m.is_dir() => {
                let found = Mutex::new(Paths::default());
                let mut walk = walk.clone();
                walk.sizes |= sizes.is_some();
                let wanted = |size: Option<u64>| match (sizes, size) {
                    (Some(s), Some(size)) => s.binary_search(&size).is_ok(),
                    _ => true,
                };
                walk.walk(operand, &|item| match item {
                    WalkItem::File { path, size, .. } if wanted(size) => {
                        found.lock().expect("not poisoned").push(&path)
                    }
                    WalkItem::File { .. } => {}
                    WalkItem::Special { path, kind } => skip(&path, kind),
                    WalkItem::Directory { .. } => {}
                    WalkItem::Error(e) => {
                        problems.add(e.path().unwrap_or(operand), e.kind().to_string())
                    }
                })?;
                paths.append(found.into_inner().expect("not poisoned"));
            }
            // Its own stamp is taken (no link followed) by the stat stage.
            Ok(_) => paths.push(operand),
            Err(e) => problems.add(operand, ErrorKind::Io(e).to_string()),
        }
    }
    Ok(paths)
}

/// Each path's own stamp (a link is not followed), in path byte order;
/// with `sizes`, only files of those sizes are kept. What is no regular
/// file now (a link or a FIFO put in a file's place) is skipped.
fn stat_files(
    paths: Paths,
    sizes: Option<&[u64]>,
    problems: &Problems,
    skipped: Option<&Mutex<Vec<Skipped>>>,
) -> Candidates {
    let order = paths.sorted();
    let stamps: Vec<Option<FileStamp>> = order
        .par_chunks(256)
        .flat_map_iter(|chunk| {
            let mut cursor = DirectoryCursor::new();
            chunk
                .iter()
                .map(|&p| {
                    let path = paths.path(p as usize);
                    match cursor.lstat(path) {
                        Ok(st) if st.is_file() => Some(st),
                        Ok(st) => {
                            let kind = SpecialKind::of_mode(st.kind);
                            if let (Some(s), Some(kind)) = (skipped, kind) {
                                let path = path.to_path_buf();
                                s.lock().expect("not poisoned").push(Skipped { path, kind });
                            }
                            None
                        }
                        Err(e) => {
                            problems.add(path, ErrorKind::Io(e).to_string());
                            None
                        }
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut files = Candidates::default();
    for (&p, stamp) in order.iter().zip(stamps) {
        let wanted = |st: &FileStamp| sizes.is_none_or(|s| s.binary_search(&st.size).is_ok());
        if let Some(stamp) = stamp.filter(wanted) {
            files.order.push(p);
            files.stamps.push(stamp);
        }
    }
    files.paths = paths;
    files
}

/// Each directory entry of the sources once: overlapping operands (`a`
/// and `a/b`, one given twice, a bind mount of another) reach one entry
/// by two paths, and it is one file, answered and counted once (its
/// first path in byte order kept). An entry is the directory it is named
/// in (device and inode) and its name, as for `dupes`' actions; only the
/// paths of an inode met more than once are looked at (hard links stay
/// two files each: two entries). The skipped entries likewise.
fn once_each(src: &mut Candidates, skipped: &Mutex<Vec<Skipped>>) {
    let mut ids: Vec<(FileId, u32)> = (0..src.len())
        .map(|i| (src.stamps[i].id(), i as u32))
        .collect();
    ids.sort_unstable();
    let mut keep = vec![true; src.len()];
    for run in ids.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
        let mut seen = Vec::new();
        for &(_, i) in run {
            match crate::dupes::actions::entry_of(src.path(i as usize)) {
                Some(entry) if seen.contains(&entry) => keep[i as usize] = false,
                Some(entry) => seen.push(entry),
                None => {}
            }
        }
    }
    src.retain(&keep);
    let mut skipped = skipped.lock().expect("not poisoned");
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    let mut seen = std::collections::HashSet::new();
    skipped.retain(|s| crate::dupes::actions::entry_of(&s.path).is_none_or(|e| seen.insert(e)));
}

/// The distinct sizes of `stamps`, sorted.
fn sorted_sizes(stamps: &[FileStamp]) -> Vec<u64> {
    let mut sizes: Vec<u64> = stamps.iter().map(|s| s.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Every archive tree's files of a size in `sizes` (what cannot be walked
/// at all is an error: without it no answer holds).
fn archive_files(
    archives: &[Archive],
    walk: &WalkOptions,
    sizes: &[u64],
    problems: &Problems,
) -> Result<ArchiveFiles> {
    let mut all = ArchiveFiles {
        files: Candidates::default(),
        archive: Vec::new(),
    };
    for (n, archive) in archives.iter().enumerate() {
        let Archive::Tree(root) = archive else {
            continue;
        };
        if let Err(e) = std::fs::metadata(root) {
            return Err(crate::Error::with_path(root, e));
        }
        let paths = walk_operands(
            std::slice::from_ref(root),
            walk,
            Some(sizes),
            problems,
            None,
        )?;
        let files = stat_files(paths, Some(sizes), problems, None);
        // Only the kept files' paths stay (the index holds what can
        // match), appended: each archive's files keep their path order.
        let base = all.files.paths.len() as u32;
        for i in 0..files.len() {
            all.files.paths.push(files.path(i));
            all.files.order.push(base + i as u32);
        }
        all.files.stamps.extend_from_slice(&files.stamps);
        all.archive.resize(all.files.order.len(), n as u32);
    }
    Ok(all)
}

/// One file still in the running, of either side.
#[derive(Clone, Copy)]
struct Item {
    /// An archive file (else a source file).
    archive: bool,
    index: u32,
    size: u64,
    prefix: u128,
    suffix: u128,
    digest: Option<Digest>,
}

/// Matches the source files against the archive trees' files: empty
/// files and shared inodes at once, then the edges and the whole files.
fn match_trees(
    src: &Candidates,
    trees: &ArchiveFiles,
    options: &ContainedOptions,
    answers: &mut Answers,
    problems: &Problems,
) -> Result<()> {
    let copy_of = |a: usize| ArchiveCopy {
        archive: trees.archive[a] as usize,
        path: trees.files.path(a).to_path_buf(),
        stamp: Some(trees.files.stamps[a]),
    };
    // Shared inodes (an archive file's own inode holds the bytes), and
    // empty files (an archive's empty file holds those): nothing read.
    let mut ids: Vec<(FileId, u32)> = (0..trees.files.len())
        .map(|a| (trees.files.stamps[a].id(), a as u32))
        .collect();
    ids.sort_unstable();
    let empty = (0..trees.files.len()).find(|&a| trees.files.stamps[a].size == 0);
    for i in 0..src.len() {
        let id = src.stamps[i].id();
        let at = ids.partition_point(|&(x, _)| x < id);
        if let Some(&(x, a)) = ids.get(at).filter(|&&(x, _)| x == id) {
            debug_assert_eq!(x, id);
            answers.copies[i] = Some(copy_of(a as usize));
        } else if src.stamps[i].size == 0 {
            answers.copies[i] = empty.map(copy_of);
        }
    }
    let mut items = candidates_of(src, trees, answers);
    let readers = ends_readers(&items, src, &trees.files, options.threads);
    hash_ends_of(&mut items, src, &trees.files, readers, answers, problems);
    keep_shared(&mut items, |a, b| {
        (a.size, a.prefix, a.suffix).cmp(&(b.size, b.prefix, b.suffix))
    });
    hash_whole_items(&mut items, src, &trees.files, options, answers, problems)?;
    keep_shared(&mut items, |a, b| {
        (a.size, a.digest.map(|d| d.as_bytes().to_vec()))
            .cmp(&(b.size, b.digest.map(|d| d.as_bytes().to_vec())))
    });
    // Each run of one size and digest: its first archive file holds the
    // bytes of its every source file.
    for run in items.chunk_by(|a, b| a.size == b.size && a.digest == b.digest) {
        if let Some(a) = run.iter().find(|x| x.archive) {
            for s in run.iter().filter(|x| !x.archive) {
                answers.copies[s.index as usize] = Some(copy_of(a.index as usize));
            }
        }
    }
    Ok(())
}

/// The files of both sides of a non-empty size both sides have, the
/// source files still open.
fn candidates_of(src: &Candidates, trees: &ArchiveFiles, answers: &Answers) -> Vec<Item> {
    let open: Vec<u32> = (0..src.len() as u32)
        .filter(|&i| answers.open(i as usize) && src.stamps[i as usize].size > 0)
        .collect();
    let src_sizes = sorted_sizes(
        &open
            .iter()
            .map(|&i| src.stamps[i as usize])
            .collect::<Vec<_>>(),
    );
    let tree_sizes = sorted_sizes(&trees.files.stamps);
    let item = |archive, index: u32, size| Item {
        archive,
        index,
        size,
        prefix: 0,
        suffix: 0,
        digest: None,
    };
    let mut items: Vec<Item> = open
        .iter()
        .map(|&i| (i, src.stamps[i as usize].size))
        .filter(|(_, size)| tree_sizes.binary_search(size).is_ok())
        .map(|(i, size)| item(false, i, size))
        .collect();
    items.extend(
        (0..trees.files.len() as u32)
            .map(|a| (a, trees.files.stamps[a as usize].size))
            .filter(|(_, size)| src_sizes.binary_search(size).is_ok())
            .map(|(a, size)| item(true, a, size)),
    );
    items
}

/// The reads of ends waiting at once beyond one a core, on solid state:
/// each reads a page or two of a file and mostly waits on the device, not
/// on a core. /usr/share against its copy, every page cold, 2 cores: 9.2 s
/// with one reader a core, 6.7 s with 2 more, 4.8 s with 8, 4.4 s with 16,
/// 4.1-4.3 s with 32, 4.3 s with 64 (hashing both trees whole: 3.9 s).
const ENDS_IN_FLIGHT: usize = 32;

/// How many reads of ends wait at once (`threads` 0: every core):
/// [`ENDS_IN_FLIGHT`] more than the cores on solid state; on a rotational
/// disk one a core, the head's seeks being the cost.
fn ends_readers(items: &[Item], src: &Candidates, archive: &Candidates, threads: usize) -> usize {
    let threads = match threads {
        0 => crate::TreeOptions::available_threads(),
        n => n,
    };
    let first = |archive_side: bool| {
        let item = items.iter().find(|item| item.archive == archive_side)?;
        let side = if item.archive { archive } else { src };
        Some(side.path(item.index as usize))
    };
    let rotational = [first(false), first(true)]
        .into_iter()
        .flatten()
        .any(crate::fs::device::rotational);
    if rotational {
        threads
    } else {
        threads + ENDS_IN_FLIGHT
    }
}

/// Both ends of every item, and the whole of a short one, in one open
/// each ([`hash_ends`]; in path order, so a worker's files share
/// directories), `readers` at once; an item that cannot be read is a
/// problem and leaves the running (a source file's verdict withheld).
fn hash_ends_of(
    items: &mut Vec<Item>,
    src: &Candidates,
    archive: &Candidates,
    readers: usize,
    answers: &mut Answers,
    problems: &Problems,
) {
    items.sort_unstable_by_key(|item| (item.archive, item.index));
    let read_ends = |items: &mut Vec<Item>| -> Vec<(bool, u32)> {
        items
            .par_chunks_mut(64)
            .flat_map_iter(|chunk| {
                let mut cursor = DirectoryCursor::new();
                let mut buffer = Vec::new();
                let mut failed = Vec::new();
                for item in chunk {
                    let side = if item.archive { archive } else { src };
                    let path = side.path(item.index as usize);
                    let stamp = &side.stamps[item.index as usize];
                    match hash_ends(&mut cursor, path, stamp, &mut buffer) {
                        Ok(ends) => {
                            item.prefix = ends.prefix;
                            item.suffix = ends.suffix;
                            item.digest = ends.whole.map(|w| Digest::from_bytes(&w.to_be_bytes()));
                        }
                        Err(e) => {
                            problems.add(path, e);
                            failed.push((item.archive, item.index));
                        }
                    }
                }
                failed
            })
            .collect()
    };
    // A pool of its own, so that the waiting reads do not take the cores
    // the rest of the run hashes on; without one (no threads to be had),
    // the run's pool.
    let mut failed = match rayon::ThreadPoolBuilder::new().num_threads(readers).build() {
        Ok(pool) => pool.install(|| read_ends(items)),
        Err(_) => read_ends(items),
    };
    for &(is_archive, index) in &failed {
        if !is_archive {
            answers.trouble[index as usize] = true;
        }
    }
    failed.sort_unstable();
    items.retain(|item| failed.binary_search(&(item.archive, item.index)).is_err());
}

/// Keeps the items in a run (equal by `order`) that holds both sides.
fn keep_shared(items: &mut Vec<Item>, order: impl Fn(&Item, &Item) -> std::cmp::Ordering) {
    items.sort_unstable_by(&order);
    let mut keep = Vec::with_capacity(items.len());
    for run in items.chunk_by(|a, b| order(a, b).is_eq()) {
        let both = run.iter().any(|x| x.archive) && run.iter().any(|x| !x.archive);
        keep.extend(std::iter::repeat_n(both, run.len()));
    }
    let mut flags = keep.into_iter();
    items.retain(|_| flags.next().unwrap_or(false));
}

/// The whole-file digest (XXH3-128) of every item: a short file's was
/// taken with its ends; the others through the pipeline.
fn hash_whole_items(
    items: &mut [Item],
    src: &Candidates,
    archive: &Candidates,
    options: &ContainedOptions,
    answers: &mut Answers,
    problems: &Problems,
) -> Result<()> {
    let need: Vec<usize> = (0..items.len())
        .filter(|&n| items[n].digest.is_none())
        .collect();
    let paths: Vec<(PathBuf, FileStamp)> = need
        .iter()
        .map(|&n| {
            let side = if items[n].archive { archive } else { src };
            let i = items[n].index as usize;
            (side.path(i).to_path_buf(), side.stamps[i])
        })
        .collect();
    let digests = hash_paths(paths, Algorithm::Xxh128, options, problems)?;
    for (&n, digest) in need.iter().zip(digests) {
        items[n].digest = digest;
        if digest.is_none() && !items[n].archive {
            answers.trouble[items[n].index as usize] = true;
        }
    }
    Ok(())
}

/// `verify`: each source file held contained by a tree's copy is compared
/// with that copy byte for byte; one whose bytes differ (a digest
/// collision, or a write the stamps did not show) is a problem, neither
/// contained nor missing. A manifest's entry has no bytes here to compare:
/// its own digest stands.
pub(super) fn verify_copies(src: &Candidates, answers: &mut Answers, problems: &Problems) {
    let differ: Vec<usize> = (0..src.len())
        .into_par_iter()
        .filter(|&i| {
            answers.copies[i].as_ref().is_some_and(|c| {
                c.stamp.is_some() && !crate::dupes::files::same_bytes(src.path(i), &c.path)
            })
        })
        .collect();
    for i in differ {
        let copy = answers.copies[i].take().expect("filtered on a copy");
        answers.trouble[i] = true;
        problems.add(
            src.path(i),
            format!(
                "its archive copy {} has its digest but other bytes (--verify)",
                crate::escape::display_path(&copy.path)
            ),
        );
    }
}

/// Every source file's stamp, and every archive copy's a verdict rests
/// on, taken again: one that moved since it was first taken (a write, a
/// rename over it) means the bytes read may not be the bytes there.
fn stamps_again(src: &Candidates, answers: &mut Answers, problems: &Problems) {
    let now: Vec<(bool, Option<String>)> = (0..src.len())
        .into_par_iter()
        .map(|i| {
            let own = match std::fs::symlink_metadata(src.path(i)) {
                Ok(m) => FileStamp::of(&m) != src.stamps[i],
                Err(_) => true,
            };
            let copy = answers.copies[i].as_ref().and_then(|c| {
                let stamp = c.stamp?;
                let moved =
                    std::fs::symlink_metadata(&c.path).map_or(true, |m| FileStamp::of(&m) != stamp);
                moved.then(|| {
                    format!(
                        "its archive copy {} changed while it was read",
                        crate::escape::display_path(&c.path)
                    )
                })
            });
            (own, copy)
        })
        .collect();
    for (i, (own, copy)) in now.into_iter().enumerate() {
        if own && !answers.trouble[i] {
            answers.trouble[i] = true;
            problems.add(src.path(i), ErrorKind::ChangedWhileReading.to_string());
        }
        if let Some(why) = copy.filter(|_| !answers.trouble[i]) {
            answers.trouble[i] = true;
            problems.add(src.path(i), why);
        }
    }
}
