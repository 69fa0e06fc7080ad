//! The questions digests answer, as thin bindings: `check` (does every
//! file still match its manifest?), `diff` (what changed between two
//! trees or manifests?) and `dupes` (which files are identical?).

use std::path::PathBuf;

use fastsum::diff::{Change as LibChange, DiffEvent, DiffOptions, Entry, Side};
use fastsum::dupes::DupesOptions;
use fastsum::manifest::read::Manifest;
use fastsum::output::check::CheckStatus;
use fastsum::walk::WalkOptions;
use fastsum::TreeOptions;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::background::Background;
use crate::{errors, paths};

/// One manifest entry, checked.
#[pyclass(module = "fastsum", frozen, get_all)]
pub struct CheckResult {
    /// The path as listed (joined to `root` when given).
    path: Py<PyAny>,
    /// `"ok"`, `"failed"` (read, other bytes) or `"error"` (not read).
    status: &'static str,
    /// For `"error"`: the `OSError`.
    error: Option<Py<PyAny>>,
}

#[pymethods]
impl CheckResult {
    /// True when the file matches its listed digest.
    #[getter]
    fn ok(&self) -> bool {
        self.status == "ok"
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "CheckResult({}, '{}')",
            self.path.bind(py).repr()?,
            self.status
        ))
    }
}

/// A manifest's problem as the library words it for the command line
/// (`need -a (sha256, blake3 ...)`), in Python's: the `algorithm`
/// argument, spelled as Python takes it.
fn in_python_words(why: &str) -> String {
    why.replace("need -a (", "need the algorithm argument (")
        .replace("give -a", "give the algorithm argument")
        .replace("blake2b -l ", "blake2b-")
}

/// `check(manifest, algorithm=None, *, root=None, threads=None) ->
/// list[CheckResult]`: every file a manifest (md5sum, sha*sum, b2sum,
/// b3sum, xxhsum or fastsum JSON format) lists, hashed on every core and
/// compared, in the list's order. Relative paths are taken from `root`,
/// or from the working directory as `md5sum -c` takes them.
#[pyfunction]
#[pyo3(signature = (manifest, algorithm = None, *, root = None, threads = None))]
pub fn check(
    py: Python<'_>,
    manifest: &Bound<'_, PyAny>,
    algorithm: Option<&str>,
    root: Option<&Bound<'_, PyAny>>,
    threads: Option<usize>,
) -> PyResult<Vec<CheckResult>> {
    let algorithm = algorithm.map(errors::algorithm).transpose()?;
    let (manifest_path, bytes_paths) = paths::from_python(manifest)?;
    let root = root.map(paths::from_python).transpose()?.map(|(p, _)| p);
    let file = std::fs::File::open(&manifest_path).map_err(|e| {
        errors::to_err(
            py,
            &fastsum::Error::with_path(&manifest_path, e),
            bytes_paths,
        )
    })?;
    let listed = py
        .detach(|| Manifest::read(std::io::BufReader::new(file), algorithm))
        .map_err(|why| {
            let why = in_python_words(&why);
            PyValueError::new_err(format!("{}: {why}", manifest_path.display()))
        })?;
    let mut options = TreeOptions::new();
    if let Some(n) = threads.filter(|&n| n > 0) {
        options.threads = n;
    }
    let mut run = Background::start(move |tx, stop| {
        listed.check(root.as_deref(), &options, Some(stop), |checked| {
            let _ = tx.send(checked);
        })
    });
    let mut results = Vec::new();
    while let Some(checked) = run.next(py).map_err(|s| s.into_err(py, bytes_paths))? {
        let (status, error) = match checked.status {
            CheckStatus::Ok => ("ok", None),
            CheckStatus::Failed => ("failed", None),
            CheckStatus::Unreadable(kind) => {
                let e = errors::kind_to_err(py, &kind, Some(&checked.path), bytes_paths);
                ("error", Some(e.into_value(py).into_any()))
            }
        };
        results.push(CheckResult {
            path: paths::path_object(py, &checked.path, bytes_paths),
            status,
            error,
        });
    }
    Ok(results)
}

/// One change between two sides.
#[pyclass(module = "fastsum", frozen, get_all)]
pub struct Change {
    /// `"added"`, `"removed"`, `"modified"`, `"moved"`, `"typechange"`,
    /// `"unchanged"` (with `all=True`), `"unverifiable"` (an S3 object
    /// whose only digest is opaque), or `"problem"` (something that
    /// could not be compared; `error` says why).
    kind: &'static str,
    /// The path it sorts by: the old path, or the new one for an addition.
    path: Py<PyAny>,
    /// The path on the old side (`None` for an addition).
    old_path: Option<Py<PyAny>>,
    /// The path on the new side (`None` for a removal).
    new_path: Option<Py<PyAny>>,
    /// Hex digests where one was taken or listed.
    old_digest: Option<String>,
    /// The new side's digest.
    new_digest: Option<String>,
    /// The new side's size (the old side's for a removal), where known.
    size: Option<u64>,
    /// For `"problem"`: why.
    error: Option<String>,
}

#[pymethods]
impl Change {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Change('{}', {})",
            self.kind,
            self.path.bind(py).repr()?
        ))
    }
}

impl Change {
    fn of(py: Python<'_>, event: DiffEvent, bytes_paths: bool) -> Change {
        let path = |e: &Entry| paths::path_object(py, &e.path, bytes_paths);
        let digest = |e: &Option<Entry>| e.as_ref().and_then(|e| e.digest).map(|d| d.to_hex());
        match event {
            DiffEvent::Change(change) => {
                let LibChange { kind, old, new } = &change;
                Change {
                    kind: kind.name(),
                    path: paths::path_object(py, change.sort_path(), bytes_paths),
                    old_path: old.as_ref().map(path),
                    new_path: new.as_ref().map(path),
                    old_digest: digest(old),
                    new_digest: digest(new),
                    size: new.as_ref().or(old.as_ref()).and_then(|e| e.size),
                    error: None,
                }
            }
            DiffEvent::Problem { path, error } => Change {
                kind: "problem",
                path: paths::path_object(py, &path, bytes_paths),
                old_path: None,
                new_path: None,
                old_digest: None,
                new_digest: None,
                size: None,
                error: Some(error),
            },
            DiffEvent::RemoteMethod { .. } | DiffEvent::LeftOut { .. } => {
                unreachable!("not sent: the sink keeps changes and problems")
            }
        }
    }
}

/// The generator `diff` returns.
#[pyclass(module = "fastsum")]
pub struct DiffIterator {
    run: Option<Background<DiffEvent>>,
    bytes_paths: bool,
}

#[pymethods]
impl DiffIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Change>> {
        let Some(run) = self.run.as_mut() else {
            return Ok(None);
        };
        match run.next(py) {
            Ok(Some(event)) => Ok(Some(Change::of(py, event, self.bytes_paths))),
            Ok(None) => {
                self.run = None;
                Ok(None)
            }
            Err(stopped) => {
                self.run = None;
                Err(stopped.into_err(py, self.bytes_paths))
            }
        }
    }

    /// Stops the comparison at once.
    fn close(&mut self, py: Python<'_>) {
        if let Some(mut run) = self.run.take() {
            run.stop(py);
        }
    }
}

/// `diff(old, new, algorithm=None, *, all=False, exclude=(),
/// follow=False, threads=None, download=False)`: the changes between two
/// trees, a tree and a manifest, or two manifests, or a tree and
/// `s3://bucket/prefix` (either order, decided by the checksums S3
/// keeps; `download`: stream what S3 keeps no digest of), sorted by path,
/// as a generator.
#[pyfunction]
#[pyo3(signature = (old, new, algorithm = None, *, all = false, exclude = Vec::new(), follow = false, threads = None, download = false))]
#[allow(clippy::too_many_arguments)]
pub fn diff(
    py: Python<'_>,
    old: &Bound<'_, PyAny>,
    new: &Bound<'_, PyAny>,
    algorithm: Option<&str>,
    all: bool,
    exclude: Vec<String>,
    follow: bool,
    threads: Option<usize>,
    download: bool,
) -> PyResult<DiffIterator> {
    let algorithm = algorithm.map(errors::algorithm).transpose()?;
    let (old, old_bytes) = paths::from_python(old)?;
    let (new, new_bytes) = paths::from_python(new)?;
    let walk = errors::walk_options(py, follow, exclude)?;
    let mut options = DiffOptions {
        algorithm,
        walk,
        threads: threads
            .filter(|&n| n > 0)
            .unwrap_or_else(fastsum::TreeOptions::available_threads),
        all,
        s3: fastsum::s3::S3Options {
            download,
            ..Default::default()
        },
        ..DiffOptions::default()
    };
    // `s3://bucket/prefix` is a bucket's; anything else a local path
    // (never `host:path`: Python names files, not hosts).
    let side =
        |path: &std::path::Path| match fastsum::s3::S3Url::parse(fastsum::name::path_bytes(path)) {
            Some(url) => Side::S3(url),
            None => Side::of(path),
        };
    let run = Background::start(move |tx, stop| {
        options.walk.stop = Some(stop);
        options
            .diff(&side(&old), &side(&new), |event| {
                // Changes and problems: what the Python diff yields.
                if !matches!(
                    event,
                    DiffEvent::RemoteMethod { .. } | DiffEvent::LeftOut { .. }
                ) {
                    let _ = tx.send(event);
                }
            })
            .map(|_| ())
    });
    Ok(DiffIterator {
        run: Some(run),
        bytes_paths: old_bytes || new_bytes,
    })
}

/// Files with identical bytes.
#[pyclass(module = "fastsum", frozen, get_all)]
pub struct Group {
    /// Their size in bytes.
    size: u64,
    /// Their whole-file digest (hex).
    digest: String,
    /// Its algorithm.
    algorithm: String,
    /// The paths, in byte order.
    paths: Vec<Py<PyAny>>,
}

#[pymethods]
impl Group {
    fn __repr__(&self) -> String {
        format!(
            "Group(size={}, files={}, {} {})",
            self.size,
            self.paths.len(),
            self.algorithm,
            self.digest
        )
    }

    fn __len__(&self) -> usize {
        self.paths.len()
    }
}

/// What `dupes` found.
#[pyclass(module = "fastsum", frozen, get_all)]
pub struct Dupes {
    /// The groups, largest size first, then by digest.
    groups: Vec<Py<Group>>,
    /// With `unique=True`: the files that have no duplicate.
    unique: Vec<Py<PyAny>>,
    /// `(path, message)` for what could not be read; the rest was searched.
    problems: Vec<(Py<PyAny>, String)>,
}

#[pymethods]
impl Dupes {
    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = pyo3::types::PyList::new(py, &self.groups)?;
        Ok(list.try_iter()?.into_any().unbind())
    }

    fn __len__(&self) -> usize {
        self.groups.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Dupes(groups={}, problems={})",
            self.groups.len(),
            self.problems.len()
        )
    }
}

/// `dupes(paths, algorithm="xxh128", *, min_size=0, max_size=None,
/// empty=False, hard_links=False, verify=False, unique=False, exclude=(),
/// follow=False, threads=None) -> Dupes`: groups of identical files
/// under the given files and directories (the same stages as `fastsum
/// dupes`: size, hard links, edges, whole files, optionally bytes).
#[pyfunction]
#[pyo3(signature = (paths, algorithm = "xxh128", *, min_size = 0, max_size = None, empty = false, hard_links = false, verify = false, unique = false, exclude = Vec::new(), follow = false, threads = None))]
#[allow(clippy::too_many_arguments)]
pub fn dupes(
    py: Python<'_>,
    paths: &Bound<'_, PyAny>,
    algorithm: &str,
    min_size: u64,
    max_size: Option<u64>,
    empty: bool,
    hard_links: bool,
    verify: bool,
    unique: bool,
    exclude: Vec<String>,
    follow: bool,
    threads: Option<usize>,
) -> PyResult<Dupes> {
    let algorithm = errors::algorithm(algorithm)?;
    let (operands, bytes_paths): (Vec<PathBuf>, bool) = if paths::is_single(paths)? {
        let (p, b) = paths::from_python(paths)?;
        (vec![p], b)
    } else {
        paths::many_from_python(paths)?
    };
    // An operand that is not there is the caller's error (a file inside
    // one that cannot be read is a problem record).
    for operand in &operands {
        if let Err(e) = std::fs::metadata(operand) {
            let kind = fastsum::ErrorKind::Io(e);
            return Err(errors::kind_to_err(py, &kind, Some(operand), bytes_paths));
        }
    }
    let options = DupesOptions {
        algorithm,
        walk: WalkOptions {
            follow_links: follow,
            excludes: exclude,
            ..WalkOptions::default()
        },
        threads: threads.unwrap_or(0),
        min_size,
        max_size,
        empty,
        hard_links,
        verify,
        cache: None,
        progress: None,
    };
    let report = py
        .detach(|| options.find_duplicates(&operands, unique))
        .map_err(|e| errors::to_err(py, &e, bytes_paths))?;
    let path = |p: &std::path::Path| paths::path_object(py, p, bytes_paths);
    let groups = report
        .groups
        .iter()
        .map(|g| {
            Py::new(
                py,
                Group {
                    size: g.size,
                    digest: g.digest.to_hex(),
                    algorithm: algorithm.to_string(),
                    paths: g.members.iter().map(|m| path(&m.path)).collect(),
                },
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(Dupes {
        groups,
        unique: report.unique.iter().map(|p| path(p)).collect(),
        problems: report
            .problems
            .iter()
            .map(|p| (path(&p.path), p.error.clone()))
            .collect(),
    })
}
