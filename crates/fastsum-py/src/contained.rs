//! `contained(sources, archives, ...)`: the library's
//! `ContainedOptions::find_contained` (is every source file's content
//! somewhere in the archives?) as a generator of verdicts.
//!
//! Nothing can be answered before the archives are indexed (a source
//! file's size is looked up in all of them), so the first verdict comes
//! once the library's run is over; the verdicts then stream through the
//! bounded channel of [`Background`], and closing the generator stops it.

use std::path::PathBuf;

use fastsum::contained::{Archive, ContainedOptions, ContainedReport};
use pyo3::prelude::*;

use crate::background::Background;
use crate::{errors, paths};

/// One entry of the sources, answered.
#[pyclass(module = "fastsum", frozen, get_all)]
pub struct Verdict {
    /// `"contained"` (its bytes are in an archive), `"missing"` (in none),
    /// `"skipped"` (a symbolic link, FIFO, socket or device: not a file's
    /// bytes, never opened), or `"problem"` (a file or list that could not
    /// be read or changed while read: neither contained nor missing;
    /// `error` says why).
    kind: &'static str,
    /// The path, as walked from its source (or the archive's, for a
    /// problem there).
    path: Py<PyAny>,
    /// The file's size (`"contained"` and `"missing"`).
    size: Option<u64>,
    /// For `"contained"`: the archive, as given, holding its bytes.
    archive: Option<Py<PyAny>>,
    /// For `"contained"`: the path of one copy there (on disk for a tree,
    /// as listed for a manifest).
    copy: Option<Py<PyAny>>,
    /// For `"skipped"`: what it is; for `"problem"`: why.
    error: Option<String>,
}

#[pymethods]
impl Verdict {
    /// True when its bytes are in an archive.
    #[getter]
    fn contained(&self) -> bool {
        self.kind == "contained"
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Verdict('{}', {})",
            self.kind,
            self.path.bind(py).repr()?
        ))
    }
}

/// A verdict before it meets Python (the run's thread holds no GIL).
pub struct Answer {
    kind: &'static str,
    path: PathBuf,
    size: Option<u64>,
    copy: Option<(usize, PathBuf)>,
    error: Option<String>,
}

/// Every answer of `report`: the files in path order, then the entries
/// skipped, then the problems.
fn answers(report: ContainedReport) -> impl Iterator<Item = Answer> {
    let verdicts = report.verdicts.into_iter().map(|v| Answer {
        kind: if v.copy.is_some() {
            "contained"
        } else {
            "missing"
        },
        path: v.path,
        size: Some(v.stamp.size),
        copy: v.copy.map(|c| (c.archive, c.path)),
        error: None,
    });
    let skipped = report.skipped.into_iter().map(|s| Answer {
        kind: "skipped",
        path: s.path,
        size: None,
        copy: None,
        error: Some(s.kind.describe().to_string()),
    });
    let problems = report.problems.into_iter().map(|p| Answer {
        kind: "problem",
        path: p.path,
        size: None,
        copy: None,
        error: Some(p.error),
    });
    verdicts.chain(skipped).chain(problems)
}

/// The generator `contained` returns.
#[pyclass(module = "fastsum")]
pub struct ContainedIterator {
    run: Option<Background<Answer>>,
    archives: Vec<PathBuf>,
    bytes_paths: bool,
}

#[pymethods]
impl ContainedIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Verdict>> {
        let Some(run) = self.run.as_mut() else {
            return Ok(None);
        };
        match run.next(py) {
            Ok(Some(answer)) => Ok(Some(self.verdict(py, answer))),
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

    /// Stops the run at once.
    fn close(&mut self, py: Python<'_>) {
        if let Some(mut run) = self.run.take() {
            run.stop(py);
        }
    }
}

impl ContainedIterator {
    fn verdict(&self, py: Python<'_>, answer: Answer) -> Verdict {
        let path = |p: &std::path::Path| paths::path_object(py, p, self.bytes_paths);
        let (archive, copy) = match &answer.copy {
            Some((i, copy)) => (Some(path(&self.archives[*i])), Some(path(copy))),
            None => (None, None),
        };
        Verdict {
            kind: answer.kind,
            path: path(&answer.path),
            size: answer.size,
            archive,
            copy,
            error: answer.error,
        }
    }
}

/// A path, or an iterable of them.
fn one_or_many(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<PathBuf>, bool)> {
    if paths::is_single(obj)? {
        let (p, bytes) = paths::from_python(obj)?;
        Ok((vec![p], bytes))
    } else {
        paths::many_from_python(obj)
    }
}

/// `contained(sources, archives, algorithm=None, *, exclude=(),
/// one_file_system=False, verify=False, threads=None, download=False) -> Iterator[Verdict]`: for every
/// file under `sources` (a path or several), whether a file with the same
/// bytes is anywhere in `archives` (a path or several: directories,
/// manifests of any format `check` reads, or `s3://bucket/prefix`, decided
/// by every digest S3 keeps of an object), whatever its name or path.
/// `algorithm`: what a manifest's untagged lines are; `verify`: each file
/// compared byte for byte with the tree copy holding it; `download`: an
/// object S3 keeps no digest of is streamed and hashed. A source or archive
/// that is not there raises `FileNotFoundError` (as `dupes`); a file that
/// cannot be read is a `"problem"` verdict and the rest goes on.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (sources, archives, algorithm = None, *, exclude = Vec::new(), one_file_system = false, verify = false, threads = None, download = false))]
pub fn contained(
    py: Python<'_>,
    sources: &Bound<'_, PyAny>,
    archives: &Bound<'_, PyAny>,
    algorithm: Option<&str>,
    exclude: Vec<String>,
    one_file_system: bool,
    verify: bool,
    threads: Option<usize>,
    download: bool,
) -> PyResult<ContainedIterator> {
    let algorithm = algorithm.map(errors::algorithm).transpose()?;
    let (sources, source_bytes) = one_or_many(sources)?;
    let (archive_paths, archive_bytes) = one_or_many(archives)?;
    let bytes_paths = source_bytes || archive_bytes;
    let in_s3 = |p: &PathBuf| fastsum::s3::S3Url::parse(fastsum::name::path_bytes(p)).is_some();
    for operand in sources
        .iter()
        .chain(archive_paths.iter().filter(|p| !in_s3(p)))
    {
        if let Err(e) = std::fs::metadata(operand) {
            let kind = fastsum::ErrorKind::Io(e);
            return Err(errors::kind_to_err(py, &kind, Some(operand), bytes_paths));
        }
    }
    let mut walk = errors::walk_options(py, false, exclude)?;
    walk.one_file_system = one_file_system;
    let options = ContainedOptions {
        walk,
        threads: threads.unwrap_or(0),
        algorithm,
        verify,
        s3: fastsum::s3::S3Options {
            download,
            ..Default::default()
        },
        ..ContainedOptions::default()
    };
    // Python names files and buckets, never hosts: `a:b` is a local name
    // here.
    let archives: Vec<Archive> = archive_paths
        .iter()
        .map(|p| match (in_s3(p), p.is_dir()) {
            (true, _) => Archive::S3(p.clone()),
            (false, true) => Archive::Tree(p.clone()),
            (false, false) => Archive::Manifest(p.clone()),
        })
        .collect();
    let run = Background::start(move |tx, stop| {
        let report = options.find_contained(&sources, &archives)?;
        for answer in answers(report) {
            if stop.load(std::sync::atomic::Ordering::Relaxed) || tx.send(answer).is_err() {
                break;
            }
        }
        Ok(())
    });
    Ok(ContainedIterator {
        run: Some(run),
        archives: archive_paths,
        bytes_paths,
    })
}
