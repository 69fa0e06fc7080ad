//! Files and trees: `hash_file`, `hash_files` (many files on every core,
//! in input order) and `hash_tree` (a generator over a sorted walk).

use std::path::PathBuf;

use fastsum::cache::CacheRun;
use fastsum::pipeline::Order;
use fastsum::{FileHasher, Outcome, Record, Source, TreeHasher};
use pyo3::prelude::*;

use crate::background::{self, Background};
use crate::{errors, paths};

/// The result for one file.
#[pyclass(module = "fastsum", frozen, get_all)]
pub struct FileResult {
    /// The path, as given (`hash_files`) or as walked (`hash_tree`).
    path: Py<PyAny>,
    /// The hex digest, or `None` if the file could not be hashed.
    digest: Option<String>,
    /// Bytes hashed, or `None`.
    size: Option<u64>,
    /// The `OSError` that kept the file from being hashed, or `None`.
    error: Option<Py<PyAny>>,
    /// For a FIFO, socket, device or symlink met in a walk: what it is
    /// (it was skipped, never opened); else `None`.
    skipped: Option<&'static str>,
}

#[pymethods]
impl FileResult {
    /// True when the file was hashed.
    #[getter]
    fn ok(&self) -> bool {
        self.digest.is_some()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let path = self.path.bind(py).repr()?;
        Ok(match (&self.digest, &self.error, self.skipped) {
            (Some(d), _, _) => format!(
                "FileResult({path}, digest='{d}', size={})",
                self.size.unwrap_or(0)
            ),
            (_, Some(e), _) => format!("FileResult({path}, error={})", e.bind(py).repr()?),
            (_, _, Some(kind)) => format!("FileResult({path}, skipped='{kind}')"),
            _ => format!("FileResult({path})"),
        })
    }
}

impl FileResult {
    fn of(py: Python<'_>, record: Record, path: Py<PyAny>, bytes_paths: bool) -> FileResult {
        let mut result = FileResult {
            path,
            digest: None,
            size: None,
            error: None,
            skipped: None,
        };
        match record.outcome {
            Outcome::Hashed(h) => {
                result.digest = Some(h.digest.to_hex());
                result.size = Some(h.size);
            }
            Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
                let e = errors::kind_to_err(py, &kind, Some(&record.path), bytes_paths);
                result.error = Some(e.into_value(py).into_any());
            }
            Outcome::Skipped(kind) => result.skipped = Some(kind.describe()),
            // Only a run asked for directory digests has these.
            Outcome::Directory(Some(d)) => result.digest = Some(d.to_hex()),
            Outcome::Directory(None) => result.skipped = Some("directory"),
        }
        result
    }
}

/// Threads for a run: `None` or 0 means every core.
fn threads(threads: Option<usize>) -> usize {
    match threads {
        None | Some(0) => fastsum::TreeOptions::available_threads(),
        Some(n) => n,
    }
}

/// `hash_file(path, algorithm="md5", *, part_size=None) -> str`: one
/// file's hex digest (`HEX-N` for S3's digest of N parts of `part_size`).
#[pyfunction]
#[pyo3(signature = (path, algorithm = "md5", *, part_size = None))]
pub fn hash_file(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    algorithm: &str,
    part_size: Option<u64>,
) -> PyResult<String> {
    let algorithm = errors::algorithm_in_parts(algorithm, part_size)?;
    let (path, bytes_paths) = paths::from_python(path)?;
    let result = py.detach(|| FileHasher::new().hash_path(algorithm, &path));
    match result {
        Ok(digest) => Ok(digest.to_hex()),
        Err(e) => Err(errors::to_err(py, &e, bytes_paths)),
    }
}

/// `hash_files(paths, algorithm="md5", threads=None) -> list[FileResult]`:
/// every file on every core (the SIMD lanes where the algorithm has them),
/// results in input order; a file that fails is a result with its error.
#[pyfunction]
#[pyo3(signature = (paths, algorithm = "md5", threads = None, *, part_size = None))]
pub fn hash_files(
    py: Python<'_>,
    paths: &Bound<'_, PyAny>,
    algorithm: &str,
    threads: Option<usize>,
    part_size: Option<u64>,
) -> PyResult<Vec<FileResult>> {
    let algorithm = errors::algorithm_in_parts(algorithm, part_size)?;
    // Keep the caller's objects: each result's path is the one given.
    let mut given = Vec::new();
    let mut converted = Vec::new();
    for item in paths::iter_paths(paths)? {
        let item = item?;
        converted.push(paths::from_python(&item)?.0);
        given.push(item);
    }
    let operands: Vec<Source> = converted.into_iter().map(Source::Path).collect();
    let hasher = TreeHasher::new(algorithm)
        .threads(self::threads(threads))
        .order(Order::Unordered)
        // One file each: reading ahead helps a cold walk, not a list.
        .io_depth(0);
    let count = operands.len();
    let (records, outcome) = background::run_to_end(py, move |stop| {
        let mut slots: Vec<Option<Record>> = (0..count).map(|_| None).collect();
        let outcome = hasher.stop_when(stop).run(&operands, |record| {
            let index = record.operand;
            slots[index] = Some(record);
        });
        (slots, outcome)
    })?;
    outcome.map_err(|e| errors::to_err(py, &e, false))?;
    let slots = records;
    let mut results = Vec::with_capacity(given.len());
    for (slot, path) in slots.into_iter().zip(given) {
        let record = slot.expect("one record per operand");
        let bytes_paths = path.is_instance_of::<pyo3::types::PyBytes>();
        results.push(FileResult::of(py, record, path.unbind(), bytes_paths));
    }
    Ok(results)
}

/// The generator `hash_tree` returns.
#[pyclass(module = "fastsum")]
pub struct TreeIterator {
    run: Option<Background<Record>>,
    bytes_paths: bool,
    /// Results taken from the run and not yet yielded.
    ready: std::collections::VecDeque<Record>,
    /// The run's cache, stored into when the run reaches its end.
    cache: Option<CacheRun>,
}

#[pymethods]
impl TreeIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<FileResult>> {
        if self.ready.is_empty() {
            let Some(run) = self.run.as_mut() else {
                return Ok(None);
            };
            match run.next(py) {
                Ok(Some(record)) => {
                    self.ready.push_back(record);
                    let mut more = Vec::new();
                    run.drain(&mut more);
                    self.ready.extend(more);
                }
                Ok(None) => {
                    self.run = None;
                    self.finish_cache(py)?;
                    return Ok(None);
                }
                Err(stopped) => {
                    self.run = None;
                    return Err(stopped.into_err(py, self.bytes_paths));
                }
            }
        }
        let record = self.ready.pop_front().expect("a record is ready");
        let path = paths::path_object(py, &record.path, self.bytes_paths);
        Ok(Some(FileResult::of(py, record, path, self.bytes_paths)))
    }

    /// Stops the walk and the hashing at once (also done when the
    /// generator is garbage-collected).
    fn close(&mut self, py: Python<'_>) {
        if let Some(mut run) = self.run.take() {
            run.stop(py);
        }
        self.ready.clear();
    }
}

impl TreeIterator {
    /// Stores what this run learnt in the cache (only for a run that
    /// went to its end: a stopped run's session is dropped).
    fn finish_cache(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(mut cache) = self.cache.take() else {
            return Ok(());
        };
        py.detach(|| cache.try_finish())
            .map(|_| ())
            .map_err(|e| errors::to_err(py, &e, false))
    }
}

/// `hash_tree(root, algorithm="md5", *, exclude=(), follow=False,
/// cache=None, threads=None)`: every file under `root`, in sorted path
/// order, as the walk goes (memory does not grow with the tree).
#[pyfunction]
#[pyo3(signature = (root, algorithm = "md5", *, exclude = Vec::new(), follow = false, cache = None, threads = None, part_size = None))]
#[allow(clippy::too_many_arguments)]
pub fn hash_tree(
    py: Python<'_>,
    root: &Bound<'_, PyAny>,
    algorithm: &str,
    exclude: Vec<String>,
    follow: bool,
    cache: Option<&Bound<'_, PyAny>>,
    threads: Option<usize>,
    part_size: Option<u64>,
) -> PyResult<TreeIterator> {
    let algorithm = errors::algorithm_in_parts(algorithm, part_size)?;
    let (root, bytes_paths) = paths::from_python(root)?;
    let walk = errors::walk_options(py, follow, exclude)?;
    let mut hasher = TreeHasher::new(algorithm)
        .threads(self::threads(threads))
        .recursive(true)
        .walk(walk);
    let mut opened = None;
    if let Some(cache) = cache {
        let (cache_path, _) = paths::from_python(cache)?;
        let prefixes: Vec<PathBuf> = vec![root.clone()];
        let loaded = py.detach(|| CacheRun::try_open(&cache_path, algorithm, &prefixes));
        let cache = loaded.map_err(|e| errors::to_err(py, &e, false))?;
        hasher = hasher
            .cache(&cache)
            .map_err(|e| errors::to_err(py, &e, false))?;
        opened = Some(cache);
    }
    let operands = vec![Source::Path(root)];
    let run = Background::start(move |tx, stop| {
        hasher.stop_when(stop).run(&operands, |record| {
            let _ = tx.send(record);
        })
    });
    Ok(TreeIterator {
        run: Some(run),
        bytes_paths,
        ready: Default::default(),
        cache: opened,
    })
}
