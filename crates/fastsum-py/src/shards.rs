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

use std::ffi::OsString;

use fastsum::manifest;
use fastsum::pipeline::Order;
use fastsum::walk::{SpecialKind, WalkItem, WalkOptions};
use fastsum::{Algorithm, ErrorKind, Outcome, Record, Source, TreeHasher};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::errors;

/// A note on a special file or walk error: (index, what, errno).
type Note = (usize, String, Option<i32>);

/// A listing as Python passes it back: (paths, kinds, sizes, notes).
type RawListing = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<Note>);

/// A shard: (start, end, first path, last path).
type Cut = (usize, usize, Vec<u8>, Vec<u8>);

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

    fn size(&self, i: usize) -> u64 {
        u64::from_le_bytes(self.sizes[8 * i..8 * i + 8].try_into().expect("8 bytes"))
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
    let root = fastsum::name::path_buf(root);
    let tops: Vec<Option<OsString>> = match names {
        None => vec![None],
        Some(names) => names
            .into_iter()
            .map(|n| Some(fastsum::name::os_string(n)))
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
            fastsum::walk::walk_sorted(&root, &options, &mut |item| match item {
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

/// The listing Python passed back.
fn listing_of(listing: RawListing) -> PyResult<Listing> {
    let (paths, kinds, sizes, notes) = listing;
    if sizes.len() != 8 * kinds.len() || paths.iter().filter(|&&b| b == 0).count() != kinds.len() {
        return Err(PyValueError::new_err("not a listing made by _list"));
    }
    Ok(Listing {
        paths,
        kinds,
        sizes,
        notes,
    })
}

/// `_cuts(listing, shard_bytes, shard_files) -> [(start, end, first, last)]`:
/// consecutive runs of items, each within the byte and file budget (a
/// file larger than the budget is a shard of its own), with the first and
/// last path of each (to name a shard that could not be done).
#[pyfunction]
pub fn _cuts(listing: RawListing, shard_bytes: u64, shard_files: u64) -> PyResult<Vec<Cut>> {
    let l = listing_of(listing)?;
    let paths: Vec<&[u8]> = l.paths.split(|&b| b == 0).take(l.kinds.len()).collect();
    let mut cuts = Vec::new();
    let (mut start, mut bytes, mut files) = (0, 0u64, 0u64);
    for (i, &kind) in l.kinds.iter().enumerate() {
        if kind == b'f' {
            let size = l.size(i);
            if i > start && (bytes + size > shard_bytes || files + 1 > shard_files) {
                cuts.push((start, i, paths[start].to_vec(), paths[i - 1].to_vec()));
                (start, bytes, files) = (i, 0, 0);
            }
            bytes += size;
            files += 1;
        }
    }
    if start < l.kinds.len() {
        cuts.push((
            start,
            l.kinds.len(),
            paths[start].to_vec(),
            paths[l.kinds.len() - 1].to_vec(),
        ));
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

/// `_hash_shard(listing, start, end, algorithm, json, threads) -> (stdout,
/// stderr, failures, symlinks)`: items `start..end` of a listing, as
/// `fastsum -r` writes them (md5 untagged, other algorithms tagged, GNU
/// escaping; `--json` records), its error messages, how many files failed,
/// and how many symlinks were left out.
#[pyfunction]
#[pyo3(signature = (listing, start, end, algorithm = "md5", json = false, threads = None))]
#[allow(clippy::too_many_arguments)]
pub fn _hash_shard<'py>(
    py: Python<'py>,
    listing: RawListing,
    start: usize,
    end: usize,
    algorithm: &str,
    json: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyTuple>> {
    let algorithm = errors::algorithm(algorithm)?;
    if algorithm.is_legacy() {
        return Err(PyValueError::new_err(format!(
            "{algorithm}: the Dask runner writes digest manifests (not cksum's or sum's lines)"
        )));
    }
    let l = listing_of(listing)?;
    if start > end || end > l.kinds.len() {
        return Err(PyValueError::new_err("shard out of the listing's range"));
    }
    let (out, err, failures, symlinks) =
        py.detach(|| shard_output(&l, start..end, algorithm, json, threads));
    (
        PyBytes::new(py, &out),
        PyBytes::new(py, &err),
        failures,
        symlinks,
    )
        .into_pyobject(py)
}

fn shard_output(
    l: &Listing,
    range: std::ops::Range<usize>,
    algorithm: Algorithm,
    json: bool,
    threads: Option<usize>,
) -> (Vec<u8>, Vec<u8>, u64, u64) {
    let paths: Vec<&[u8]> = l.paths.split(|&b| b == 0).take(l.kinds.len()).collect();
    let files: Vec<Source> = range
        .clone()
        .filter(|&i| l.kinds[i] == b'f')
        .map(|i| Source::Path(fastsum::name::path_buf(paths[i].to_vec())))
        .collect();
    let mut hashed: Vec<Option<Record>> = (0..files.len()).map(|_| None).collect();
    let mut hasher = TreeHasher::new(algorithm).order(Order::Unordered);
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
    let note = |i: usize| l.notes.iter().find(|n| n.0 == i);
    let (mut out, mut err, mut failures, mut symlinks) = (Vec::new(), Vec::new(), 0, 0);
    // The library's renderer: the lines, JSON and messages the CLI prints.
    let renderer = manifest::render::Renderer::fastsum(algorithm, json);
    for i in range {
        let path = paths[i];
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
            path: fastsum::name::path_buf(path.to_vec()),
            outcome,
        };
        let rendered = renderer.render(&record, &mut out, &mut err);
        failures += u64::from(rendered.failure);
        symlinks += u64::from(rendered.symlink_left_out);
    }
    (out, err, failures, symlinks)
}
