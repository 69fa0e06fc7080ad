//! Paths between Python and Rust: anything `os.fsencode` takes (`str`,
//! `bytes`, `os.PathLike`) comes in as bytes; paths go back as `str` when
//! they are UTF-8, `bytes` otherwise, or always `bytes` when the caller
//! gave bytes (as `os.walk` answers in the type it was given).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// A path the caller gave, and whether they gave it as bytes.
pub fn from_python(obj: &Bound<'_, PyAny>) -> PyResult<(PathBuf, bool)> {
    // The common case without a call into Python: a str that is valid
    // UTF-8 (no surrogate-escaped bytes) is its own encoding.
    if obj.is_instance_of::<PyString>() {
        if let Ok(text) = obj.extract::<String>() {
            return Ok((PathBuf::from(text), false));
        }
    }
    let os = obj.py().import("os")?;
    let spelled = os.call_method1("fspath", (obj,))?;
    let is_bytes = spelled.is_instance_of::<PyBytes>();
    let encoded = os.call_method1("fsencode", (&spelled,))?;
    let bytes = encoded.cast::<PyBytes>()?.as_bytes();
    Ok((fastsum::name::path(bytes).into_owned(), is_bytes))
}

/// Whether `obj` is one path (`str`, `bytes`, `os.PathLike`) rather than
/// an iterable of them.
pub fn is_single(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyBytes>()
        || obj.hasattr("__fspath__")?)
}

/// The items of an iterable of paths; a single path is a `TypeError` (a
/// `str` would otherwise iterate as one-letter paths).
pub fn iter_paths<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, pyo3::types::PyIterator>> {
    if is_single(obj)? {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "expected an iterable of paths, not a single path",
        ));
    }
    obj.try_iter()
}

/// Every path of an iterable of paths; `bytes` if any was given as bytes.
pub fn many_from_python(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<PathBuf>, bool)> {
    let mut paths = Vec::new();
    let mut any_bytes = false;
    for item in iter_paths(obj)? {
        let (path, is_bytes) = from_python(&item?)?;
        any_bytes |= is_bytes;
        paths.push(path);
    }
    Ok((paths, any_bytes))
}

/// A path for Python.
pub fn path_object(py: Python<'_>, path: &Path, bytes: bool) -> Py<PyAny> {
    let raw = fastsum::name::path_bytes(path);
    match std::str::from_utf8(raw) {
        Ok(text) if !bytes => PyString::new(py, text).into_any().unbind(),
        _ => PyBytes::new(py, raw).into_any().unbind(),
    }
}
