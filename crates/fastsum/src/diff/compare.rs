//! Comparing contents where the keys match, and pairing moves among what
//! was removed and added.
//!
//! Two trees: a size that differs is `modified` without a read; files of
//! one size are compared byte by byte, stopping at the first difference
//! (no digest needed). Moves need digests only among removed and added
//! files of one size, and a pair is confirmed byte by byte before it is
//! called a move.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use rayon::prelude::*;

use super::side::Found;
use super::{ChangeKind, EntryKind};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::fs::dir::DirectoryCursor;
use crate::read::FileHasher;

/// Bytes compared per read: 64 KiB buffers stay in the core's cache; on
/// the corpus's `changes` the floor of reading both trees (open, fstat,
/// read, close; scripts/probe/read-floor.c with this buffer) is 147 ms at 64 KiB
/// and 260 ms at 256 KiB, and mapping the large files instead measured no
/// better than reading them (bench/results/BENCHMARKS-LOG.md).
const CHUNK: usize = 64 * 1024;

/// The outcome of comparing one matched pair.
pub(super) enum Verdict {
    Same,
    Differs,
    Typechange,
    /// Reading one side failed: (which path, why).
    Failed(String, String),
}

/// Compares every pair of `pairs` (both sides trees), on all cores; fills
/// in sizes as it goes.
pub(super) fn compare_pairs(
    pairs: &mut [(Found, Found)],
    progress: Option<&crate::pipeline::Progress>,
) -> Vec<Verdict> {
    pairs
        .par_iter_mut()
        .map(|(old, new)| {
            let verdict = compare_pair(old, new);
            if let Some(p) = progress {
                use std::sync::atomic::Ordering::Relaxed;
                p.files_done.fetch_add(2, Relaxed);
                // What a comparison to the end reads (one that finds a
                // difference early reads less).
                let sizes = old.size.unwrap_or(0) + new.size.unwrap_or(0);
                p.bytes_done.fetch_add(sizes, Relaxed);
            }
            verdict
        })
        .collect()
}

fn compare_pair(old: &mut Found, new: &mut Found) -> Verdict {
    match (old.kind, new.kind) {
        (EntryKind::Symlink, EntryKind::Symlink) => {
            let targets = (read_link(old), read_link(new));
            match targets {
                (Ok(a), Ok(b)) => {
                    if a == b {
                        Verdict::Same
                    } else {
                        Verdict::Differs
                    }
                }
                (Err(e), _) => failed(old, e),
                (_, Err(e)) => failed(new, e),
            }
        }
        (EntryKind::Directory, EntryKind::Directory) => Verdict::Same,
        (EntryKind::File, EntryKind::File) => match (old.digest, new.digest) {
            // Manifests: digests (and sizes where both are known).
            (Some(a), Some(b)) => {
                let sizes_differ = matches!((old.size, new.size), (Some(x), Some(y)) if x != y);
                if a == b && !sizes_differ {
                    Verdict::Same
                } else {
                    Verdict::Differs
                }
            }
            _ => compare_files(old, new),
        },
        _ => Verdict::Typechange,
    }
}

fn failed(entry: &Found, e: io::Error) -> Verdict {
    let path = entry.path.as_deref().unwrap_or(Path::new(""));
    Verdict::Failed(
        path.display().to_string(),
        crate::error::ErrorKind::Io(e).to_string(),
    )
}

fn read_link(entry: &Found) -> io::Result<Vec<u8>> {
    let path = entry.path.as_deref().expect("a tree entry has a path");
    Ok(std::fs::read_link(path)?
        .as_os_str()
        .as_encoded_bytes()
        .to_vec())
}

thread_local! {
    /// Each worker keeps the directory of its last file open on each side
    /// (pairs come sorted, so mostly a directory at a time): `openat` on
    /// one name instead of a lookup of every component of the path.
    static CURSORS: std::cell::RefCell<(DirectoryCursor, DirectoryCursor)> =
        std::cell::RefCell::new((DirectoryCursor::new(), DirectoryCursor::new()));
}

/// Two files: by size, then byte by byte.
fn compare_files(old: &mut Found, new: &mut Found) -> Verdict {
    let open =
        |cursor: &mut DirectoryCursor, entry: &Found| -> io::Result<(File, crate::fs::FileStamp)> {
            let path = entry.path.as_deref().expect("a tree entry has a path");
            let file = cursor.open(path, true)?;
            let st = crate::fs::stat::fstat(&file)?;
            if !st.is_file() {
                // The one rule of listed opens (fs/regular.rs), its words.
                return match crate::fs::regular::not_regular(&st) {
                    crate::error::ErrorKind::Io(e) => Err(e),
                    other => Err(io::Error::other(other.to_string())),
                };
            }
            Ok((file, st))
        };
    let opened = CURSORS.with(|cursors| {
        let (left, right) = &mut *cursors.borrow_mut();
        (open(left, old), open(right, new))
    });
    let (mut a, a_stamp) = match opened.0 {
        Ok(x) => x,
        Err(e) => return failed(old, e),
    };
    let (mut b, b_stamp) = match opened.1 {
        Ok(x) => x,
        Err(e) => return failed(new, e),
    };
    old.size = Some(a_stamp.size);
    new.size = Some(b_stamp.size);
    if a_stamp.size != b_stamp.size {
        return Verdict::Differs;
    }
    let verdict = match same_bytes(&mut a, &mut b, a_stamp.size) {
        Ok(true) => Verdict::Same,
        Ok(false) => Verdict::Differs,
        Err((which_old, e)) => return failed(if which_old { old } else { new }, e),
    };
    // Bytes compared while a side changed are of no one state of it (a
    // torn read said "no change" for a state the file never held): the
    // stamps before and after must agree, as every verified read's do.
    for (file, before, entry) in [(&a, a_stamp, &*old), (&b, b_stamp, &*new)] {
        if crate::fs::stat::fstat(file).map_or(true, |after| after != before) {
            let why = crate::error::ErrorKind::ChangedWhileReading.to_string();
            return failed(entry, io::Error::other(why));
        }
    }
    verdict
}

/// Whether `a` and `b` hold the same bytes to their ends; both are `len`
/// bytes long by `fstat`, so reading stops there without a read to see
/// EOF (a file that changed size meanwhile reads short or long: then its
/// bytes differ from its partner's or the last read finds more). An error
/// says which side (true: `a`) failed.
fn same_bytes(a: &mut File, b: &mut File, len: u64) -> Result<bool, (bool, io::Error)> {
    thread_local! {
        static BUFFERS: std::cell::RefCell<(Vec<u8>, Vec<u8>)> =
            std::cell::RefCell::new((vec![0; CHUNK], vec![0; CHUNK]));
    }
    BUFFERS.with(|buffers| {
        let (x, y) = &mut *buffers.borrow_mut();
        let mut left = len;
        loop {
            let want = usize::try_from(left).map_or(CHUNK, |l| l.min(CHUNK));
            let n = read_full(a, &mut x[..want]).map_err(|e| (true, e))?;
            let m = read_full(b, &mut y[..want]).map_err(|e| (false, e))?;
            if n != m || x[..n] != y[..m] {
                return Ok(false);
            }
            if n < want {
                return Ok(true);
            }
            left -= n as u64;
            if left == 0 {
                // Both at their stat length: make sure neither grew.
                let more_a = read_full(a, &mut x[..1]).map_err(|e| (true, e))?;
                let more_b = read_full(b, &mut y[..1]).map_err(|e| (false, e))?;
                return Ok(more_a == more_b && x[..more_a] == y[..more_b]);
            }
        }
    })
}

/// Reads until `buffer` is full or the file ends.
fn read_full(file: &mut File, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Pairs removed and added files with identical bytes: for each content
/// (digest) the removed and the added paths in byte order, zipped; the
/// rest stay removed and added. Returns (old index, new index) pairs.
pub(super) fn pair_moves(
    removed: &mut [Found],
    added: &mut [Found],
    algorithm: Algorithm,
) -> Vec<(usize, usize)> {
    // Trees: sizes first (one stat each), digests only where a size is on
    // both sides.
    fill_sizes(removed);
    fill_sizes(added);
    let sizes_removed: std::collections::HashSet<Option<u64>> = removed
        .iter()
        .filter(|f| f.kind == EntryKind::File)
        .map(|f| f.size)
        .collect();
    let sizes_added: std::collections::HashSet<Option<u64>> = added
        .iter()
        .filter(|f| f.kind == EntryKind::File)
        .map(|f| f.size)
        .collect();
    let candidate = |f: &Found, other: &std::collections::HashSet<Option<u64>>| {
        f.kind == EntryKind::File
            && (f.size.is_none() || other.contains(&f.size) || other.contains(&None))
    };
    let digest_of = |f: &mut Found| {
        if f.digest.is_none() {
            if let Some(path) = &f.path {
                f.digest = FileHasher::new().hash_path(algorithm, path).ok();
            }
        }
    };
    removed
        .par_iter_mut()
        .filter(|f| candidate(f, &sizes_added))
        .for_each(digest_of);
    added
        .par_iter_mut()
        .filter(|f| candidate(f, &sizes_removed))
        .for_each(digest_of);
    // Same digest, same bytes (and so the same size; a manifest's lines
    // carry no size, so the digest alone is the key).
    let mut by_content: std::collections::HashMap<Digest, (Vec<usize>, Vec<usize>)> =
        std::collections::HashMap::new();
    let content_key = |f: &Found| f.digest;
    for (i, f) in removed.iter().enumerate() {
        if let Some(key) = content_key(f).filter(|_| candidate(f, &sizes_added)) {
            by_content.entry(key).or_default().0.push(i);
        }
    }
    for (j, f) in added.iter().enumerate() {
        if let Some(key) = content_key(f).filter(|_| candidate(f, &sizes_removed)) {
            by_content.entry(key).or_default().1.push(j);
        }
    }
    let mut pairs = Vec::new();
    for (_, (mut olds, mut news)) in by_content {
        olds.sort_by(|&a, &b| removed[a].key.cmp(&removed[b].key));
        news.sort_by(|&a, &b| added[a].key.cmp(&added[b].key));
        pairs.extend(olds.into_iter().zip(news));
    }
    // Digests say "same"; for two trees the bytes confirm it.
    pairs.retain(|&(i, j)| match (&removed[i].path, &added[j].path) {
        (Some(a), Some(b)) => identical(a, b),
        _ => true,
    });
    pairs
}

fn fill_sizes(entries: &mut [Found]) {
    entries.par_iter_mut().for_each(|f| {
        if f.size.is_none() && f.kind == EntryKind::File {
            if let Some(path) = &f.path {
                f.size = std::fs::metadata(path).ok().map(|m| m.len());
            }
        }
    });
}

fn identical(a: &Path, b: &Path) -> bool {
    match (File::open(a), File::open(b)) {
        (Ok(mut x), Ok(mut y)) => {
            let len = crate::fs::stat::fstat(&x).map_or(0, |st| st.size);
            same_bytes(&mut x, &mut y, len).unwrap_or(false)
        }
        _ => false,
    }
}

/// The change a verdict on a matched pair makes (`None`: unchanged).
pub(super) fn change_of(verdict: &Verdict) -> Option<ChangeKind> {
    match verdict {
        Verdict::Same => None,
        Verdict::Differs => Some(ChangeKind::Modified),
        Verdict::Typechange => Some(ChangeKind::Typechange),
        Verdict::Failed(..) => None,
    }
}
