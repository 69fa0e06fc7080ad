//! A manifest as an archive, compared in its own algorithm and read
//! twice, never held: first for its algorithm and the sizes it lists
//! (a flag per source size), then, once the source files of those sizes
//! (all of them, where an entry gives no size) are hashed in its
//! algorithm, for the entries whose digest one of them has. A list that
//! changed between the two reads is an error: its answers would mix two
//! lists.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::answers::{hash_paths, Answers, Problems};
use super::{ArchiveCopy, ContainedOptions};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::dupes::items::Candidates;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::FileStamp;
use crate::manifest::read::{read_manifest_each, ManifestEntry};

/// Matches the open source files against the manifest at `path`, archive
/// number `archive`; its unreadable lines are problems (named by number).
pub(super) fn match_manifest(
    path: &Path,
    archive: usize,
    src: &Candidates,
    sizes: &[u64],
    options: &ContainedOptions,
    answers: &mut Answers,
    problems: &Problems,
) -> Result<()> {
    let before = stamp(path)?;
    if !before.is_file() {
        return Err(refused(
            path,
            "not a regular file: a manifest archive is read twice (once for its sizes, once \
             for its digests); save it to a file first"
                .into(),
        ));
    }
    // Pass 1: the algorithm, which source sizes it lists, and the paths
    // it lists with two digests.
    let mut listed = vec![false; sizes.len()];
    let mut sizeless = false;
    let mut named = Vec::new();
    let manifest = read(path, options, &mut |e| {
        named.push(named_as(&e));
        match e.size {
            Some(size) => {
                if let Ok(at) = sizes.binary_search(&size) {
                    listed[at] = true;
                }
            }
            None => sizeless = true,
        }
    })?;
    let twice = named_with_two_digests(named);
    if let Some(why) = too_weak(manifest.algorithm) {
        return Err(refused(path, why));
    }
    for (number, why) in &manifest.problems {
        problems.add(path, format!("line {number}: {why}"));
    }
    if manifest.problems_unkept > 0 {
        let more = manifest.problems_unkept;
        problems.add(path, format!("{more} more lines that cannot be read"));
    }
    let wanted = |size: u64| sizeless || sizes.binary_search(&size).is_ok_and(|at| listed[at]);
    let mut said = Vec::new();
    let entries = |each: &mut dyn FnMut(Listed)| {
        read(path, options, &mut |e: ManifestEntry| {
            let (name, _) = named_as(&e);
            if twice.binary_search(&name).is_ok() {
                if !said.contains(&name) {
                    said.push(name);
                    let shown =
                        crate::escape::display_path(Path::new(&crate::fs::name::os_string(e.path)));
                    problems.add(
                        path,
                        format!("{shown} is listed with two digests: neither is believed"),
                    );
                }
                return;
            }
            each(Listed {
                size: e.size,
                digest: e.digest,
                path: PathBuf::from(crate::fs::name::os_string(e.path)),
            })
        })
        .map(drop)
    };
    match_listed(
        archive,
        src,
        manifest.algorithm,
        &wanted,
        options,
        answers,
        problems,
        entries,
    )?;
    if stamp(path)? != before {
        let why = "the list changed while it was read (read twice: once for its sizes, once \
                   for its digests)";
        return Err(Error::with_path(
            path,
            ErrorKind::Io(std::io::Error::other(why)),
        ));
    }
    Ok(())
}

/// An entry as a hash of its path and one of its digest: what tells a
/// path listed twice with two digests (16 bytes an entry, where a path
/// would cost its length).
fn named_as(entry: &ManifestEntry) -> (u64, u64) {
    let digest = entry.digest.as_bytes();
    (
        xxhash_rust::xxh3::xxh3_64(&crate::fs::name::listed_key(&entry.path)),
        xxhash_rust::xxh3::xxh3_64(digest),
    )
}

/// The paths (as [`named_as`] hashes them) a list gives two digests:
/// such a list says two things of one file, and neither is believed (an
/// entry of them holds nothing; the list's other entries stand). Sorted.
fn named_with_two_digests(mut named: Vec<(u64, u64)>) -> Vec<u64> {
    named.sort_unstable();
    named.dedup();
    let mut twice: Vec<u64> = named
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|run| run.len() > 1)
        .map(|run| run[0].0)
        .collect();
    twice.sort_unstable();
    twice
}

/// One entry of a list of digests (a manifest's, a remote listing's).
pub(super) struct Listed {
    /// Its size, where the list gives one.
    pub(super) size: Option<u64>,
    pub(super) digest: Digest,
    /// As the list names it.
    pub(super) path: PathBuf,
}

/// Matches the open source files of a size `wanted` says the list may
/// hold, hashed in `algorithm`, against the list's entries (`entries`
/// hands each to its argument): an entry holds a source file whose
/// digest it gives (and its size, where it gives one). The one matching
/// path of every archive that is a list (a manifest, a remote listing).
#[allow(clippy::too_many_arguments)]
pub(super) fn match_listed(
    archive: usize,
    src: &Candidates,
    algorithm: Algorithm,
    wanted: &dyn Fn(u64) -> bool,
    options: &ContainedOptions,
    answers: &mut Answers,
    problems: &Problems,
    entries: impl FnOnce(&mut dyn FnMut(Listed)) -> Result<()>,
) -> Result<()> {
    let need: Vec<u32> = (0..src.len() as u32)
        .filter(|&i| answers.open(i as usize) && wanted(src.stamps[i as usize].size))
        .collect();
    let paths: Vec<(PathBuf, FileStamp)> = need
        .iter()
        .map(|&i| (src.path(i as usize).to_path_buf(), src.stamps[i as usize]))
        .collect();
    let digests = hash_paths(paths, algorithm, options, problems)?;
    let mut table: Vec<(Digest, u32)> = Vec::with_capacity(need.len());
    for (&i, digest) in need.iter().zip(digests) {
        match digest {
            Some(d) => table.push((d, i)),
            None => answers.trouble[i as usize] = true,
        }
    }
    table.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()).then(a.1.cmp(&b.1)));
    entries(&mut |e: Listed| {
        let key = e.digest.as_bytes();
        let start = table.partition_point(|(d, _)| d.as_bytes() < key);
        for &(d, i) in &table[start..] {
            if d.as_bytes() != key {
                break;
            }
            let i = i as usize;
            let fits = e.size.is_none_or(|s| s == src.stamps[i].size);
            if fits && answers.copies[i].is_none() {
                answers.copies[i] = Some(ArchiveCopy {
                    archive,
                    path: e.path.clone(),
                    stamp: None,
                });
            }
        }
    })
}

/// Why digests in `algorithm` cannot say two files hold the same bytes,
/// if they cannot: a CRC is linear (a file of any digest is made in a
/// moment, and `cksum`'s sums are no better), and a digest under 64 bits
/// collides by chance among a few hundred thousand files (and on purpose
/// in a second). A listed entry has no bytes here to compare, so its
/// digest alone would decide: such a list is refused whole.
pub(super) fn too_weak(algorithm: Algorithm) -> Option<String> {
    if let Algorithm::Joint { .. } = algorithm {
        // As strong as its strongest member: weak only when each is.
        let weak: Vec<String> = algorithm.members().filter_map(too_weak).collect();
        let members = algorithm.members().count();
        return (weak.len() == members).then(|| weak.join("; "));
    }
    let crc = matches!(
        algorithm,
        Algorithm::Crc32b
            | Algorithm::Crc
            | Algorithm::Bsd
            | Algorithm::Sysv
            | Algorithm::Crc32
            | Algorithm::Crc32c
            | Algorithm::Crc64Nvme
    );
    let bits = algorithm.output_len() * 8;
    (crc || bits < 64).then(|| {
        format!(
            "its {} digests ({bits} bits{}) cannot tell files apart: a file of the same digest \
             and other bytes is made in seconds; give a list in md5, sha256, blake3 or xxh128 \
             (fastsum -a sha256 -r --json there)",
            algorithm.name(),
            if crc { ", a CRC" } else { "" }
        )
    })
}

fn refused(path: &Path, why: String) -> Error {
    Error::with_path(path, ErrorKind::Io(std::io::Error::other(why)))
}

/// The list's stamp (the file as it is now, links followed).
fn stamp(path: &Path) -> Result<FileStamp> {
    std::fs::metadata(path)
        .map(|m| FileStamp::of(&m))
        .map_err(|e| Error::with_path(path, e))
}

/// One read of the list, each file's entry to `each`.
fn read(
    path: &Path,
    options: &ContainedOptions,
    each: &mut dyn FnMut(ManifestEntry),
) -> Result<crate::manifest::read::Manifest> {
    // Without waiting: a FIFO put in the list's place since its stat is
    // never waited on, and is no regular file.
    let file =
        crate::fs::residency::open_nonblocking(path).map_err(|e| Error::with_path(path, e))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(refused(path, "it is no longer a regular file".into()));
    }
    read_manifest_each(BufReader::new(file), options.algorithm, each)
        .map_err(|why| Error::with_path(path, ErrorKind::Io(std::io::Error::other(why))))
}
