//! A manifest as a side of a diff: read, its paths re-rooted against the
//! other side into keys, sorted (unless it is in order already), a path
//! listed twice made a problem where it stands.

use std::path::{Path, PathBuf};

use super::side::{Found, Listed};
use super::EntryKind;
use crate::algo::Algorithm;
use crate::error::ErrorKind;
use crate::manifest::read::{read_manifest, Manifest};

/// A manifest read (from `path`, or standard input), its entries keyed
/// by re-rooted paths and sorted; bad lines come as problems first. The
/// entries are moved out of the returned manifest (it keeps the rest).
pub(super) fn read_side(
    path: Option<&Path>,
    algorithm: Option<Algorithm>,
    root: &Rooting,
) -> Result<(Manifest, Vec<Listed>), ErrorKind> {
    let unreadable = |why: String| ErrorKind::Io(std::io::Error::other(why));
    // A list that cannot be opened keeps its OS error (Python's
    // FileNotFoundError, the CLI's "No such file or directory").
    let mut manifest = match path {
        Some(path) => {
            let file = std::fs::File::open(path).map_err(ErrorKind::Io)?;
            read_manifest(std::io::BufReader::new(file), algorithm).map_err(unreadable)?
        }
        None => read_manifest(std::io::stdin().lock(), algorithm).map_err(unreadable)?,
    };
    let name = path.map_or(PathBuf::from("-"), Path::to_path_buf);
    let prefix = root.prefix_for(&manifest).map_err(unreadable)?;
    // One list, made once at its size: the problems, then the entries
    // taken (not copied: each path becomes its key in place), sorted and
    // their repeats turned into problems where they stand (issue 35: a
    // list of entries, then a second list growing by doubling, held a
    // 1M-line manifest's entries three times over).
    let mut taken = std::mem::take(&mut manifest.entries);
    let mut listed: Vec<Listed> = Vec::with_capacity(manifest.problems.len() + taken.len());
    listed.extend(manifest.problems.iter().map(|(line, why)| Listed::Problem {
        key: Vec::new(),
        path: name.clone(),
        error: format!("line {line}: {why}"),
    }));
    let first = listed.len();
    // Taken from the end, the list they leave shrunk as it goes: the
    // entries are never all held twice (the new list's pages are touched
    // only as it fills).
    while let Some(e) = taken.pop() {
        listed.push(Listed::Entry(Found {
            key: strip(e.path, &prefix),
            path: None,
            kind: EntryKind::File,
            size: e.size,
            digest: Some(e.digest),
            unreadable: false,
        }));
        if taken.len() % SHRINK_EVERY == 0 {
            taken.shrink_to_fit();
        }
    }
    let entries = &mut listed[first..];
    entries.reverse();
    // A list fastsum wrote is in order already: sorting it would borrow
    // half its size again.
    if !entries.is_sorted_by(|a, b| listed_key(a) <= listed_key(b)) {
        entries.sort_by(|a, b| listed_key(a).cmp(listed_key(b)));
    }
    repeats_made_problems(entries, &name);
    Ok((manifest, listed))
}

/// Each entry with the key of the one before it (sorted: a path the list
/// `name` gives twice) made a problem where it stands; the first counts.
fn repeats_made_problems(entries: &mut [Listed], name: &Path) {
    for i in 1..entries.len() {
        if listed_key(&entries[i]) != listed_key(&entries[i - 1]) {
            continue;
        }
        if let Listed::Entry(repeat) = &mut entries[i] {
            let key = std::mem::take(&mut repeat.key);
            entries[i] = Listed::Problem {
                error: format!("{} is listed twice", String::from_utf8_lossy(&key)),
                key,
                path: name.to_path_buf(),
            };
        }
    }
}

/// Entries moved from a manifest's list between shrinks of what is left.
const SHRINK_EVERY: usize = 64 * 1024;

/// The key a manifest's entry (or the problem a repeat of it became) is
/// sorted by.
fn listed_key(listed: &Listed) -> &[u8] {
    match listed {
        Listed::Entry(found) => &found.key,
        Listed::Problem { key, .. } => key,
        _ => &[],
    }
}

/// `path` without the leading `prefix` (bytes).
fn strip(mut path: Vec<u8>, prefix: &[u8]) -> Vec<u8> {
    if path.starts_with(b"./") {
        path.drain(..2);
    }
    if path.starts_with(prefix) {
        path.drain(..prefix.len());
    }
    path
}

/// How a manifest's paths become keys (docs/ARCHITECTURE.md, "diff").
pub(super) enum Rooting {
    /// `--old-root` / `--new-root`: this prefix is the root.
    Given(Vec<u8>),
    /// The other side is this directory: as spelled, and absolute.
    AgainstTree {
        spelled: Vec<u8>,
        absolute: Vec<u8>,
        tree: PathBuf,
    },
    /// The other side is a manifest too: the directory every path shares.
    Shared,
}

impl Rooting {
    /// The prefix to strip from every path of `manifest` (after `./`), or
    /// why none can be chosen with confidence.
    fn prefix_for(&self, manifest: &Manifest) -> Result<Vec<u8>, String> {
        let paths: Vec<&[u8]> = manifest
            .entries
            .iter()
            .map(|e| e.path.strip_prefix(b"./").unwrap_or(&e.path))
            .collect();
        match self {
            Rooting::Given(prefix) => Ok(with_slash(prefix)),
            Rooting::AgainstTree {
                spelled,
                absolute,
                tree,
            } => {
                for candidate in [with_slash(spelled), with_slash(absolute)] {
                    if paths.iter().all(|p| p.starts_with(&candidate)) {
                        return Ok(candidate);
                    }
                }
                // Hashed elsewhere (a copy of the tree at another path):
                // the shared leading directories, as few as make the
                // listed files be found in the tree. Found means below the
                // tree: an absolute path is never looked up where it is.
                let shared = shared_dirs(&paths);
                let sample: Vec<&[u8]> = paths.iter().take(64).copied().collect();
                let found_under = |cut: &[u8]| {
                    sample
                        .iter()
                        .filter(|p| {
                            let mut rest = &p[cut.len()..];
                            while let Some(r) = rest.strip_prefix(b"/") {
                                rest = r;
                            }
                            !rest.is_empty() && tree.join(crate::fs::name::os_str(rest)).exists()
                        })
                        .count()
                };
                let mut best = Vec::new();
                let mut best_found = found_under(b"");
                for cut in shared {
                    let found = found_under(&cut);
                    if found > best_found {
                        best_found = found;
                        best = cut;
                    }
                }
                // Fewer than half the files found under any cut: the roots
                // cannot be matched with confidence, and a guess would be a
                // confident wrong diff (every file "moved" or "removed").
                if 2 * best_found < sample.len() {
                    let example = String::from_utf8_lossy(sample[0]);
                    return Err(format!(
                        "its paths ({example} ...) cannot be matched with {}: give \
                         --old-root or --new-root PREFIX, the directory they start with",
                        tree.display()
                    ));
                }
                Ok(best)
            }
            Rooting::Shared => Ok(shared_dirs(&paths).pop().unwrap_or_default()),
        }
    }
}

/// `prefix` ending in one `/` (empty stays empty; `./` and `.` are empty).
fn with_slash(prefix: &[u8]) -> Vec<u8> {
    let trimmed = prefix.strip_prefix(b"./").unwrap_or(prefix);
    if trimmed.is_empty() || trimmed == b"." {
        return Vec::new();
    }
    let mut out = trimmed.to_vec();
    while out.ends_with(b"//") {
        out.pop();
    }
    if !out.ends_with(b"/") {
        out.push(b'/');
    }
    out
}

/// The directory prefixes (`a/`, `a/b/` ...) every path shares, shortest
/// first.
fn shared_dirs(paths: &[&[u8]]) -> Vec<Vec<u8>> {
    let Some(first) = paths.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, &b) in first.iter().enumerate() {
        if b != b'/' {
            continue;
        }
        let prefix = &first[..=i];
        if paths
            .iter()
            .all(|p| p.starts_with(prefix) && p.len() > prefix.len())
        {
            out.push(prefix.to_vec());
        } else {
            break;
        }
    }
    out
}
