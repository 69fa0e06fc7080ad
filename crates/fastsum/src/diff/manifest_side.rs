//! A manifest as a side of a diff: its paths re-rooted against the other
//! side into keys, in key order, a path listed twice made a problem
//! where it stands. A list in a file that is in order already (as fastsum
//! writes them) is read twice and streamed: once to learn its root, its
//! problems and that it is in order, then again as the diff takes its
//! entries, so that its memory is what the diff holds unmatched (a
//! 3M-line list held whole took 907 MiB). Any other list (standard
//! input, or out of order) is held and sorted.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crossbeam_channel::{Receiver, Sender};

use super::packed::Founds;
use super::rooting::Rooting;
use super::side::{Found, Listed};
use super::EntryKind;
use crate::algo::Algorithm;
use crate::error::ErrorKind;
use crate::fs::FileStamp;
use crate::manifest::read::{read_manifest_each, Manifest, ManifestEntry};

/// A manifest side: its algorithm and its entries in key order, held or
/// coming from the second read of its file.
pub(super) struct ManifestSide {
    pub algorithm: Algorithm,
    pub entries: Entries,
}

/// A manifest side's entries.
pub(super) enum Entries {
    /// Read whole (packed) and sorted; problems first.
    Held(Held),
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
        return held(std::io::stdin().lock(), algorithm, Path::new("-"), root);
    };
    // A list that cannot be opened keeps its OS error (Python's
    // FileNotFoundError, the CLI's "No such file or directory").
    let (file, stamp) = open(path)?;
    let mut survey = root.survey();
    let mut order = Order::default();
    let manifest = read_manifest_each(BufReader::new(file), algorithm, &mut |e| {
        survey.add(&e.path);
        order.see(e.path);
    })
    .map_err(unreadable)?;
    if !order.sorted {
        let (file, _) = open(path)?;
        return held(BufReader::new(file), algorithm, path, root);
    }
    let prefix = root.prefix_for(&survey).map_err(unreadable)?;
    let (tx, rx) = crossbeam_channel::bounded(STREAM_AHEAD);
    let stream = Stream {
        path: path.to_path_buf(),
        stamp,
        prefix,
        // Read as the first read was, by what `-a` gave: given the list's
        // algorithm instead, a record the first read refused (a weak digest
        // beside one fastsum cannot compute) passed the second, and the
        // lists differed ("it changed while it was read").
        algorithm,
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
    let problem = |error: String| Listed::Problem {
        key: Vec::new(),
        path: name.to_path_buf(),
        error,
    };
    let unkept = (manifest.problems_unkept > 0).then(|| {
        problem(format!(
            "{} more lines could not be read (the first {} are named)",
            manifest.problems_unkept,
            Manifest::PROBLEMS_KEPT
        ))
    });
    let named = manifest.problems.iter();
    named
        .map(|(line, why)| problem(format!("line {line}: {why}")))
        .chain(unkept)
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
    /// One more path (kept, not copied, until the next: a line may be
    /// 300 MB).
    fn see(&mut self, mut path: Vec<u8>) {
        if path.starts_with(b"./") {
            path.drain(..2);
        }
        if self.count == 0 {
            self.sorted = true;
        }
        self.count += 1;
        if let Some(last) = &self.last {
            self.sorted = self.sorted && *last <= path;
        }
        self.last = Some(path);
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

/// A manifest read whole (from `name`) as a side: its entries packed,
/// keyed by re-rooted paths and sorted; bad lines come as problems first,
/// a path listed twice as a problem where it stands (`Held::next`).
fn held(
    reader: impl std::io::BufRead,
    algorithm: Option<Algorithm>,
    name: &Path,
    root: &Rooting,
) -> Result<ManifestSide, ErrorKind> {
    let mut survey = root.survey();
    let mut entries = Founds::default();
    let manifest = read_manifest_each(reader, algorithm, &mut |e| {
        survey.add(&e.path);
        entries.push(&Found {
            key: e.path,
            path: None,
            kind: EntryKind::File,
            size: e.size,
            digest: Some(e.digest),
            unreadable: false,
        });
    })
    .map_err(unreadable)?;
    if entries.overflowed() {
        return Err(unreadable(
            "its entries are more than memory holds".to_string(),
        ));
    }
    entries.prefix = root.prefix_for(&survey).map_err(unreadable)?;
    entries.sort();
    Ok(ManifestSide {
        algorithm: manifest.algorithm,
        entries: Entries::Held(Held {
            problems: problems_of(&manifest, name).into_iter().rev().collect(),
            entries,
            next: 0,
            name: name.to_path_buf(),
        }),
    })
}

/// A manifest held: its problems, then its entries in key order.
pub(super) struct Held {
    problems: Vec<Listed>,
    entries: Founds,
    next: usize,
    name: PathBuf,
}

impl Held {
    /// The next problem or entry (a repeat of the key before it made a
    /// problem; the first counts).
    pub(super) fn next(&mut self) -> Option<Listed> {
        if let Some(problem) = self.problems.pop() {
            return Some(problem);
        }
        let i = self.next;
        if i == self.entries.len() {
            return None;
        }
        self.next += 1;
        let found = self.entries.get(i);
        if i == 0 || self.entries.key(i - 1) != found.key {
            return Some(Listed::Entry(found));
        }
        Some(Listed::Problem {
            error: format!(
                "{} is listed twice",
                crate::escape::display_path(&crate::fs::name::path(&found.key))
            ),
            key: found.key,
            path: self.name.clone(),
        })
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

    fn drain(mut held: Held) -> Vec<Listed> {
        std::iter::from_fn(|| held.next()).collect()
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
                Listed::LeftOut { key, kind, .. } => {
                    format!(
                        "left out {}: {}",
                        String::from_utf8_lossy(key),
                        kind.describe()
                    )
                }
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
        let Entries::Held(held) = super::held(text.as_bytes(), None, &list, &root)
            .unwrap()
            .entries
        else {
            unreachable!()
        };
        assert_eq!(got, keys(&drain(held)));
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
        let Entries::Held(held) = side.entries else {
            panic!("held")
        };
        assert_eq!(keys(&drain(held)), ["a", "b"]);
    }

    #[test]
    fn a_list_changed_between_its_reads_fails_the_diff() {
        // The second read of a list in order (the stream's) finds it
        // changed since the first: it ends with a problem and sends none
        // of its entries. (A list of more bad lines than the stream sends
        // ahead once made the second read wait for the change; the bad
        // lines past the first thousand are counted now, so the change is
        // made between the reads here, by hand.)
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("t.md5");
        std::fs::write(&list, format!("{MD5}  t/a\n{MD5}  t/b\n")).unwrap();
        let (_, stamp) = open(&list).unwrap();
        let stream = Stream {
            path: list.clone(),
            stamp,
            prefix: b"t/".to_vec(),
            algorithm: Some(Algorithm::Md5),
            entries: 2,
            max_depth: None,
        };
        std::fs::write(&list, format!("{MD5}  t/a\n")).unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        stream.send(Vec::new(), &tx);
        drop(tx);
        let got = keys(&rx.into_iter().collect::<Vec<_>>());
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
