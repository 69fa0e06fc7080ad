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
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rayon::prelude::*;

use super::side::Found;
use super::{ChangeKind, EntryKind};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::read::FileHasher;

/// Bytes compared per read.
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
pub(super) fn compare_pairs(pairs: &mut [(Found, Found)]) -> Vec<Verdict> {
    pairs
        .par_iter_mut()
        .map(|(old, new)| compare_pair(old, new))
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
    Ok(std::fs::read_link(path)?.as_os_str().as_bytes().to_vec())
}

/// Two files: by size, then byte by byte.
fn compare_files(old: &mut Found, new: &mut Found) -> Verdict {
    let open = |entry: &Found| -> io::Result<(File, u64)> {
        let path = entry.path.as_deref().expect("a tree entry has a path");
        let file = File::open(path)?;
        let len = crate::fs::stat::fstat(&file)?.st_size as u64;
        Ok((file, len))
    };
    let (mut a, a_len) = match open(old) {
        Ok(x) => x,
        Err(e) => return failed(old, e),
    };
    let (mut b, b_len) = match open(new) {
        Ok(x) => x,
        Err(e) => return failed(new, e),
    };
    old.size = Some(a_len);
    new.size = Some(b_len);
    if a_len != b_len {
        return Verdict::Differs;
    }
    match same_bytes(&mut a, &mut b) {
        Ok(true) => Verdict::Same,
        Ok(false) => Verdict::Differs,
        Err((which_old, e)) => failed(if which_old { old } else { new }, e),
    }
}

/// Whether `a` and `b` hold the same bytes to their ends; an error says
/// which side (true: `a`) failed.
fn same_bytes(a: &mut File, b: &mut File) -> Result<bool, (bool, io::Error)> {
    thread_local! {
        static BUFFERS: std::cell::RefCell<(Vec<u8>, Vec<u8>)> =
            std::cell::RefCell::new((vec![0; CHUNK], vec![0; CHUNK]));
    }
    BUFFERS.with(|buffers| {
        let (x, y) = &mut *buffers.borrow_mut();
        loop {
            let n = read_full(a, x).map_err(|e| (true, e))?;
            let m = read_full(b, &mut y[..]).map_err(|e| (false, e))?;
            if n != m || x[..n] != y[..m] {
                return Ok(false);
            }
            if n < CHUNK {
                return Ok(true);
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
        (Ok(mut x), Ok(mut y)) => same_bytes(&mut x, &mut y).unwrap_or(false),
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
