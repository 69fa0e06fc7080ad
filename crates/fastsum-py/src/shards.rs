//! What the Dask runner (`fastsum.dask`) runs in its tasks: listing runs
//! of top-level entries of a tree in the walk's order, cutting a listing
//! into shards balanced by bytes and by count, and hashing one shard into
//! the exact bytes `fastsum -r` prints for it.
//!
//! A listing travels between workers as four plain values (cheap to
//! pickle: 50,000 Python tuples cost more to move than to hash):
//! `paths` (every path, as the walk spells it from the root given,
//! followed by a NUL), `kinds` (a byte per item: `f` a file, `s` a
//! special file the walk skips, `e` a walk error), `sizes` (a
//! little-endian u64 per item) and `notes` (`(index, what, errno)` for
//! `s` and `e` items: the special kind, or the error's message). Shards
//! are runs of consecutive items, so their outputs, concatenated in
//! order, are the single-host output.
//!
//! A shard task borrows the listing's bytes from Python (no copy: a
//! listing of a million paths is 70 MB, and copying it into every shard
//! cost more than hashing the shard) and starts at the byte offset of its
//! first path, which `_cuts` gives, so a shard's cost follows its own
//! size, not the listing's.

use std::ffi::OsString;

use fastsum::pipeline::Order;
use fastsum::walk::{SpecialKind, WalkItem, WalkOptions};
use fastsum::{Algorithm, ErrorKind, Outcome, Record, Source, TreeHasher};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyTuple};

use crate::errors;

/// A note on a special file or walk error: (index, what, errno).
type Note = (usize, String, Option<i32>);

/// A listing as Python passes it back: (paths, kinds, sizes, notes),
/// borrowed from Python's bytes objects.
type RawListing = (PyBackedBytes, PyBackedBytes, PyBackedBytes, Vec<Note>);

/// A shard: (start, end, first path, last path, byte offset of the first
/// path in the listing's paths).
type Cut = (usize, usize, Vec<u8>, Vec<u8>, usize);

/// A listing as Rust holds it.
#[derive(Default)]
struct Listing {
    paths: Vec<u8>,
    kinds: Vec<u8>,
    sizes: Vec<u8>,
    notes: Vec<Note>,
}

impl Listing {
    fn push(&mut self, kind: u8, path: &[u8], size: u64, note: Option<(String, Option<i32>)>) {
        if let Some((what, errno)) = note {
            self.notes.push((self.kinds.len(), what, errno));
        }
        self.paths.extend_from_slice(path);
        self.paths.push(0);
        self.kinds.push(kind);
        self.sizes.extend_from_slice(&size.to_le_bytes());
    }
}

/// A listing Python passed back, its bytes borrowed.
struct View<'a> {
    paths: &'a [u8],
    kinds: &'a [u8],
    sizes: &'a [u8],
    notes: &'a [Note],
}

impl View<'_> {
    fn size(&self, i: usize) -> u64 {
        let mut le = [0; 8];
        le.copy_from_slice(&self.sizes[8 * i..8 * i + 8]);
        u64::from_le_bytes(le)
    }

    /// The paths of items `range`, the first starting at byte `offset`:
    /// None unless `offset` starts a path and the run holds one per item.
    fn paths_from(&self, offset: usize, range: &std::ops::Range<usize>) -> Option<Vec<&[u8]>> {
        if offset > self.paths.len() || (offset > 0 && self.paths[offset - 1] != 0) {
            return None;
        }
        let paths: Vec<&[u8]> = self.paths[offset..]
            .split(|&b| b == 0)
            .take(range.len())
            .collect();
        let complete = paths.len() == range.len()
            && (range.is_empty() || {
                let last = paths[paths.len() - 1];
                let end = last.as_ptr() as usize - self.paths.as_ptr() as usize + last.len();
                self.paths.get(end) == Some(&0)
            });
        complete.then_some(paths)
    }

    /// The byte offset of item `index`'s path (a scan: for callers that
    /// did not keep `_cuts`'s offset).
    fn offset_of(&self, index: usize) -> Option<usize> {
        if index == 0 {
            return Some(0);
        }
        self.paths
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == 0)
            .nth(index - 1)
            .map(|(at, _)| at + 1)
    }
}

/// `_list(root, names, exclude, follow) -> (paths, kinds, sizes, notes)`:
/// the items under each of `names` (entries of `root`), in the walk's
/// order; with `names` None, the whole walk of `root` (a root that is a
/// file, or missing).
#[pyfunction]
#[pyo3(signature = (root, names, exclude = Vec::new(), follow = false))]
pub fn _list<'py>(
    py: Python<'py>,
    root: Vec<u8>,
    names: Option<Vec<Vec<u8>>>,
    exclude: Vec<String>,
    follow: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let root = fastsum::name::path(&root).into_owned();
    let tops: Vec<Option<OsString>> = match names {
        None => vec![None],
        Some(names) => names
            .into_iter()
            .map(|n| Some(fastsum::name::path(&n).into_owned().into_os_string()))
            .collect(),
    };
    let listed = py.detach(|| {
        let mut listing = Listing::default();
        for top in tops {
            let options = WalkOptions {
                follow_links: follow,
                excludes: exclude.clone(),
                only_top: top,
                sizes: true,
                ..WalkOptions::default()
            };
            options.walk_sorted(&root, &mut |item| match item {
                WalkItem::File { path, size, .. } => listing.push(
                    b'f',
                    fastsum::name::path_bytes(&path),
                    size.unwrap_or(0),
                    None,
                ),
                WalkItem::Special { path, kind } => listing.push(
                    b's',
                    fastsum::name::path_bytes(&path),
                    0,
                    Some((kind.describe().into(), None)),
                ),
                WalkItem::Directory { .. } => {}
                WalkItem::Error(e) => listing.push(
                    b'e',
                    e.path().map(fastsum::name::path_bytes).unwrap_or_default(),
                    0,
                    Some((e.kind().to_string(), e.raw_os_error())),
                ),
            })?;
        }
        Ok::<_, fastsum::Error>(listing)
    });
    let l = listed.map_err(|e| errors::to_err(py, &e, true))?;
    (
        PyBytes::new(py, &l.paths),
        PyBytes::new(py, &l.kinds),
        PyBytes::new(py, &l.sizes),
        l.notes,
    )
        .into_pyobject(py)
}

/// The listing Python passed back, checked for shape (the paths' NULs
/// are counted where a shard reads them).
fn view_of(listing: &RawListing) -> PyResult<View<'_>> {
    let (paths, kinds, sizes, notes) = listing;
    if sizes.len() != 8 * kinds.len()
        || paths.last().is_some_and(|&b| b != 0)
        || !notes.is_sorted_by_key(|n| n.0)
    {
        return Err(not_a_listing());
    }
    Ok(View {
        paths,
        kinds,
        sizes,
        notes,
    })
}

fn not_a_listing() -> PyErr {
    PyValueError::new_err("not a listing made by _list")
}

/// `_cuts(listing, shard_bytes, shard_files) -> [(start, end, first, last,
/// offset)]`: consecutive runs of items, each within the byte and file
/// budget (a file larger than the budget is a shard of its own), with the
/// first and last path of each (to name a shard that could not be done)
/// and the byte offset of the first path (where its shard task starts).
#[pyfunction]
pub fn _cuts(listing: RawListing, shard_bytes: u64, shard_files: u64) -> PyResult<Vec<Cut>> {
    let l = view_of(&listing)?;
    // Where each item's path starts, and one past its end.
    let mut bounds = Vec::with_capacity(l.kinds.len());
    let mut at = 0;
    for path in l.paths.split(|&b| b == 0).take(l.kinds.len()) {
        bounds.push((at, at + path.len()));
        at += path.len() + 1;
    }
    if bounds.len() != l.kinds.len() || at != l.paths.len() {
        return Err(not_a_listing());
    }
    let cut = |start: usize, end: usize| -> Cut {
        let (first, last) = (bounds[start], bounds[end - 1]);
        let path = |(from, to): (usize, usize)| l.paths[from..to].to_vec();
        (start, end, path(first), path(last), first.0)
    };
    let mut cuts = Vec::new();
    let (mut start, mut bytes, mut files) = (0, 0u64, 0u64);
    for (i, &kind) in l.kinds.iter().enumerate() {
        if kind == b'f' {
            let size = l.size(i);
            if i > start && (bytes + size > shard_bytes || files + 1 > shard_files) {
                cuts.push(cut(start, i));
                (start, bytes, files) = (i, 0, 0);
            }
            bytes += size;
            files += 1;
        }
    }
    if start < l.kinds.len() {
        cuts.push(cut(start, l.kinds.len()));
    }
    Ok(cuts)
}

fn special_kind(name: &str) -> Option<SpecialKind> {
    [
        SpecialKind::Fifo,
        SpecialKind::Socket,
        SpecialKind::CharDevice,
        SpecialKind::BlockDevice,
        SpecialKind::Symlink,
    ]
    .into_iter()
    .find(|k| k.describe() == name)
}

/// `_hash_shard(listing, start, end, algorithm, json, threads, offset) ->
/// (stdout, stderr, failures, symlinks)`: items `start..end` of a listing,
/// as `fastsum -r` writes them (md5 untagged, other algorithms tagged, GNU
/// escaping; `--json` records), its error messages, how many files failed,
/// and how many symlinks were left out. `offset` is where item `start`'s
/// path begins (the cut's last value); without it the paths are scanned
/// from the listing's start.
#[pyfunction]
#[pyo3(signature = (listing, start, end, algorithm = "md5", json = false, threads = None, offset = None))]
#[allow(clippy::too_many_arguments)]
pub fn _hash_shard<'py>(
    py: Python<'py>,
    listing: RawListing,
    start: usize,
    end: usize,
    algorithm: &str,
    json: bool,
    threads: Option<usize>,
    offset: Option<usize>,
) -> PyResult<Bound<'py, PyTuple>> {
    let algorithm = errors::algorithm(algorithm)?;
    if algorithm.is_legacy() {
        return Err(PyValueError::new_err(format!(
            "{algorithm}: the Dask runner writes digest manifests (not cksum's or sum's lines)"
        )));
    }
    let l = view_of(&listing)?;
    if start > end || end > l.kinds.len() {
        return Err(PyValueError::new_err("shard out of the listing's range"));
    }
    let range = start..end;
    let paths = offset
        .or_else(|| l.offset_of(start))
        .and_then(|at| l.paths_from(at, &range))
        .ok_or_else(not_a_listing)?;
    let (out, err, failures, symlinks) =
        py.detach(|| shard_output(&l, &paths, range, algorithm, json, threads));
    (
        PyBytes::new(py, &out),
        PyBytes::new(py, &err),
        failures,
        symlinks,
    )
        .into_pyobject(py)
}

fn shard_output(
    l: &View<'_>,
    paths: &[&[u8]],
    range: std::ops::Range<usize>,
    algorithm: Algorithm,
    json: bool,
    threads: Option<usize>,
) -> (Vec<u8>, Vec<u8>, u64, u64) {
    let files: Vec<Source> = range
        .clone()
        .filter(|&i| l.kinds[i] == b'f')
        .map(|i| Source::Path(fastsum::name::path(paths[i - range.start]).into_owned()))
        .collect();
    let mut hashed: Vec<Option<Record>> = (0..files.len()).map(|_| None).collect();
    // Files the listing found: hashed as a walk's, not stat'ed again, and
    // one that is a FIFO now is an error, not a wait for a writer.
    let mut hasher = TreeHasher::new(algorithm)
        .order(Order::Unordered)
        .listed(true);
    if let Some(n) = threads.filter(|&n| n > 0) {
        hasher = hasher.threads(n);
    }
    hasher
        .run(&files, |record| {
            let index = record.operand;
            hashed[index] = Some(record);
        })
        .expect("no excludes, so no error");
    let mut hashed = hashed.into_iter();
    let note = |i: usize| {
        let at = l.notes.binary_search_by_key(&i, |n| n.0).ok()?;
        l.notes.get(at)
    };
    let (mut out, mut err, mut failures, mut symlinks) = (Vec::new(), Vec::new(), 0, 0);
    // The library's renderer: the lines, JSON and messages the CLI prints.
    let renderer = fastsum::output::render::Renderer::fastsum(algorithm, json);
    for i in range.clone() {
        let path = paths[i - range.start];
        let outcome = match l.kinds[i] {
            b'f' => hashed.next().flatten().expect("a record per file").outcome,
            b's' => Outcome::Skipped(
                note(i)
                    .and_then(|n| special_kind(&n.1))
                    .unwrap_or(SpecialKind::Fifo),
            ),
            _ => Outcome::WalkFailed(match note(i) {
                Some((_, _, Some(errno))) => {
                    ErrorKind::Io(std::io::Error::from_raw_os_error(*errno))
                }
                Some((_, what, None)) => ErrorKind::Io(std::io::Error::other(what.clone())),
                None => ErrorKind::Io(std::io::Error::other("walk error")),
            }),
        };
        let record = Record {
            operand: 0,
            seq: i as u64,
            path: fastsum::name::path(path).into_owned(),
            outcome,
        };
        let rendered = renderer.render(&record, &mut out, &mut err);
        failures += u64::from(rendered.failure);
        symlinks += u64::from(rendered.symlink_left_out);
    }
    (out, err, failures, symlinks)
}
