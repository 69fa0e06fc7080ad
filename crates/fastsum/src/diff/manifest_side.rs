//! A manifest as a side of a diff: its paths re-rooted against the other
//! side into keys, in key order, a path listed twice made a problem
//! where it stands. A list in a file that is in order already (as fastsum
//! writes them) is read twice and streamed: once to learn its root, its
//! problems and that it is in order, then again as the diff takes its
//! entries, so that its memory is what the diff holds unmatched (issue 35:
//! a 3M-line list held whole took 907 MiB). Any other list (standard
//! input, or out of order) is held and sorted.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crossbeam_channel::{Receiver, Sender};

use super::rooting::Rooting;
use super::side::{Found, Listed};
use super::EntryKind;
use crate::algo::Algorithm;
use crate::error::ErrorKind;
use crate::fs::FileStamp;
use crate::manifest::read::{read_manifest, read_manifest_each, Manifest, ManifestEntry};

/// A manifest side: its algorithm and its entries in key order, held or
/// coming from the second read of its file.
pub(super) struct ManifestSide {
    pub algorithm: Algorithm,
    pub entries: Entries,
}

/// A manifest side's entries.
pub(super) enum Entries {
    /// Read whole and sorted; problems first.
    Held(Vec<Listed>),
    /// Read again as they are taken (problems first, then entries).
    Streamed(Receiver<Listed>),
}

/// Entries a streamed list sends ahead of the diff, at most.
const STREAM_AHEAD: usize = 4096;

/// The manifest at `path` (or standard input) as a side rooted by `root`;
/// entries deeper than `max_depth` left out where they are streamed (a
/// held list is filtered by the merge's source).
pub(super) fn read_side(
    path: Option<&Path>,
    algorithm: Option<Algorithm>,
    root: &Rooting,
    max_depth: Option<usize>,
) -> Result<ManifestSide, ErrorKind> {
    let Some(path) = path else {
        let manifest = read_manifest(std::io::stdin().lock(), algorithm).map_err(unreadable)?;
        return held(manifest, Path::new("-"), root);
    };
    // A list that cannot be opened keeps its OS error (Python's
    // FileNotFoundError, the CLI's "No such file or directory").
    let (file, stamp) = open(path)?;
    let mut survey = root.survey();
    let mut order = Order::default();
    let manifest = read_manifest_each(BufReader::new(file), algorithm, &mut |e| {
        survey.add(&e.path);
        order.see(&e.path);
    })
    .map_err(unreadable)?;
    if !order.sorted {
        let (file, _) = open(path)?;
        let manifest = read_manifest(BufReader::new(file), algorithm).map_err(unreadable)?;
        return held(manifest, path, root);
    }
    let prefix = root.prefix_for(&survey).map_err(unreadable)?;
    let (tx, rx) = crossbeam_channel::bounded(STREAM_AHEAD);
    let stream = Stream {
        path: path.to_path_buf(),
        stamp,
        prefix,
        algorithm: Some(manifest.algorithm),
        entries: order.count,
        max_depth,
    };
    let problems = problems_of(&manifest, path);
    std::thread::spawn(move || stream.send(problems, &tx));
    Ok(ManifestSide {
        algorithm: manifest.algorithm,
        entries: Entries::Streamed(rx),
    })
}

fn unreadable(why: String) -> ErrorKind {
    ErrorKind::Io(std::io::Error::other(why))
}

/// The list's file, open, and its stamp (the second read checks it is
/// the same file, unchanged).
fn open(path: &Path) -> Result<(File, FileStamp), ErrorKind> {
    let file = File::open(path).map_err(ErrorKind::Io)?;
    let stamp = FileStamp::of(&file.metadata().map_err(ErrorKind::Io)?);
    Ok((file, stamp))
}

/// The list's bad lines as problems of the side (no key: reported, and
/// never matched).
fn problems_of(manifest: &Manifest, name: &Path) -> Vec<Listed> {
    manifest
        .problems
        .iter()
        .map(|(line, why)| Listed::Problem {
            key: Vec::new(),
            path: name.to_path_buf(),
            error: format!("line {line}: {why}"),
        })
        .collect()
}

/// Whether a list's paths come in order (with `./` taken off: the keys
/// are the paths less a prefix every one of them shares, so they sort
/// alike), and how many there are.
#[derive(Default)]
struct Order {
    last: Option<Vec<u8>>,
    sorted: bool,
    count: u64,
}

impl Order {
    fn see(&mut self, path: &[u8]) {
        let path = path.strip_prefix(b"./").unwrap_or(path);
        if self.count == 0 {
            self.sorted = true;
        }
        self.count += 1;
        if let Some(last) = &mut self.last {
            self.sorted = self.sorted && last.as_slice() <= path;
            last.clear();
            last.extend_from_slice(path);
        } else {
            self.last = Some(path.to_vec());
        }
    }
}

/// The second read of a list found in order.
struct Stream {
    path: PathBuf,
    stamp: FileStamp,
    prefix: Vec<u8>,
    algorithm: Option<Algorithm>,
    entries: u64,
    max_depth: Option<usize>,
}

impl Stream {
    /// Sends `problems`, then every entry as a key in order (a repeat as
    /// a problem where it stands); a list that is not the one the first
    /// read saw (another file, changed, out of order now) ends with a
    /// problem saying so, which fails the diff.
    fn send(self, problems: Vec<Listed>, tx: &Sender<Listed>) {
        for problem in problems {
            if tx.send(problem).is_err() {
                return;
            }
        }
        let changed = |tx: &Sender<Listed>| {
            let _ = tx.send(Listed::Problem {
                key: Vec::new(),
                path: self.path.clone(),
                error: "it changed while it was read".to_string(),
            });
        };
        let file = match open(&self.path) {
            Ok((file, stamp)) if stamp == self.stamp => file,
            _ => return changed(tx),
        };
        let mut last: Option<Vec<u8>> = None;
        let (mut count, mut in_order, mut gone) = (0u64, true, false);
        let read = read_manifest_each(BufReader::new(file), self.algorithm, &mut |mut e| {
            count += 1;
            if gone || !in_order {
                return;
            }
            let key = strip(std::mem::take(&mut e.path), &self.prefix);
            let listed = match &last {
                Some(before) if *before > key => {
                    in_order = false;
                    return;
                }
                Some(before) if *before == key => Listed::Problem {
                    error: format!(
                        "{} is listed twice",
                        crate::escape::display_path(&crate::fs::name::path(&key))
                    ),
                    key: key.clone(),
                    path: self.path.clone(),
                },
                _ => self.entry(key.clone(), e),
            };
            last = Some(key);
            if self.too_deep(&listed) {
                return;
            }
            gone = tx.send(listed).is_err();
        });
        let unchanged = read.is_ok() && in_order && count == self.entries;
        let still = matches!(open(&self.path), Ok((_, stamp)) if stamp == self.stamp);
        if !(gone || unchanged && still) {
            changed(tx);
        }
    }

    fn entry(&self, key: Vec<u8>, e: ManifestEntry) -> Listed {
        Listed::Entry(Found {
            key,
            path: None,
            kind: EntryKind::File,
            size: e.size,
            digest: Some(e.digest),
            unreadable: false,
        })
    }

    /// Deeper than `--max-depth` (as a walk of the tree would leave it).
    fn too_deep(&self, listed: &Listed) -> bool {
        match (self.max_depth, listed) {
            (Some(deepest), Listed::Entry(found)) => {
                found.key.iter().filter(|&&b| b == b'/').count() >= deepest
            }
            _ => false,
        }
    }
}

/// A manifest read whole (from `name`) as a side: its entries keyed by
/// re-rooted paths and sorted; bad lines come as problems first.
fn held(mut manifest: Manifest, name: &Path, root: &Rooting) -> Result<ManifestSide, ErrorKind> {
    let mut survey = root.survey();
    manifest.entries.iter().for_each(|e| survey.add(&e.path));
    let prefix = root.prefix_for(&survey).map_err(unreadable)?;
    // One list, made once at its size: the problems, then the entries
    // taken (not copied: each path becomes its key in place), sorted and
    // their repeats turned into problems where they stand (issue 35: a
    // list of entries, then a second list growing by doubling, held a
    // 1M-line manifest's entries three times over).
    let mut taken = std::mem::take(&mut manifest.entries);
    let mut listed: Vec<Listed> = Vec::with_capacity(manifest.problems.len() + taken.len());
    listed.extend(problems_of(&manifest, name));
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
        if taken.len().is_multiple_of(SHRINK_EVERY) {
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
    repeats_made_problems(entries, name);
    Ok(ManifestSide {
        algorithm: manifest.algorithm,
        entries: Entries::Held(listed),
    })
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
                error: format!(
                    "{} is listed twice",
                    crate::escape::display_path(&crate::fs::name::path(&key))
                ),
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

#[cfg(test)]
mod tests {
    use super::*;

    const MD5: &str = "900150983cd24fb0d6963f7d28e17f72";

    fn streamed(side: ManifestSide) -> Vec<Listed> {
        match side.entries {
            Entries::Streamed(rx) => rx.into_iter().collect(),
            Entries::Held(_) => panic!("a list in order in a file is streamed"),
        }
    }

    fn keys(listed: &[Listed]) -> Vec<String> {
        listed
            .iter()
            .map(|l| match l {
                Listed::Entry(found) => String::from_utf8_lossy(&found.key).into_owned(),
                Listed::Problem { key, error, .. } => {
                    format!("problem {}: {error}", String::from_utf8_lossy(key))
                }
                Listed::SymlinksLeftOut(n) => format!("{n} links"),
            })
            .collect()
    }

    #[test]
    fn a_list_in_order_streams_the_keys_a_held_one_gives() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("t.md5");
        let text = format!("{MD5}  t/a\nbad line\n{MD5}  t/b/c\n{MD5}  t/b/c\n{MD5}  t/d\n");
        std::fs::write(&list, &text).unwrap();
        let root = Rooting::Shared;
        let got = keys(&streamed(
            read_side(Some(&list), None, &root, None).unwrap(),
        ));
        let held = read_manifest(text.as_bytes(), None).unwrap();
        let Entries::Held(expected) = super::held(held, &list, &root).unwrap().entries else {
            unreachable!()
        };
        assert_eq!(got, keys(&expected));
        assert_eq!(
            got,
            [
                "problem : line 2: improperly formatted checksum line",
                "a",
                "b/c",
                "problem b/c: b/c is listed twice",
                "d"
            ]
        );
        // --max-depth 1: the files at the top only.
        let top = keys(&streamed(
            read_side(Some(&list), None, &root, Some(1)).unwrap(),
        ));
        assert!(!top.iter().any(|k| k == "b/c"), "{top:?}");
        // Out of order: held and sorted instead.
        std::fs::write(&list, format!("{MD5}  t/b\n{MD5}  t/a\n")).unwrap();
        let side = read_side(Some(&list), None, &root, None).unwrap();
        assert!(matches!(&side.entries, Entries::Held(l) if keys(l) == ["a", "b"]));
    }

    #[test]
    fn a_list_changed_between_its_reads_fails_the_diff() {
        // More bad lines than the stream sends ahead: its second read
        // waits until they are taken, and the list changes meanwhile.
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("t.md5");
        let mut text = format!("{MD5}  t/a\n");
        text.push_str(&"bad\n".repeat(STREAM_AHEAD + 10));
        text.push_str(&format!("{MD5}  t/b\n"));
        std::fs::write(&list, &text).unwrap();
        let side = read_side(Some(&list), None, &Rooting::Shared, None).unwrap();
        std::fs::write(&list, format!("{MD5}  t/a\n")).unwrap();
        let got = keys(&streamed(side));
        assert_eq!(
            got.last().unwrap(),
            "problem : it changed while it was read"
        );
        assert!(
            !got.iter().any(|k| k == "a" || k == "b"),
            "nothing of it is used"
        );
    }
}
