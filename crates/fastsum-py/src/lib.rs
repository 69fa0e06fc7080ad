//! `fastsum` for Python: glue between Python objects and the fastsum
//! library's public API (no hashing, walking or comparing of its own).
//!
//! * [`hash_object`]: hashlib-style objects over `fastsum::Hasher`
//!   ([`buffer`] borrows any buffer without a copy);
//! * [`files`]: `hash_file`, `hash_files`, `hash_tree` over `TreeHasher`;
//! * [`questions`]: `check`, `diff`, `dupes`;
//! * [`contained`]: `contained` (is every file here already there?);
//! * [`background`]: runs on their own thread, the GIL released while
//!   Python waits, Ctrl-C and closed generators stopping them;
//! * [`shards`]: the listing and shard tasks of the Dask runner;
//! * [`paths`] and [`errors`]: paths and exceptions across the border.

mod background;
mod buffer;
mod contained;
mod errors;
mod files;
mod hash_object;
mod paths;
mod questions;
mod shards;

use pyo3::prelude::*;
use pyo3::types::PyFrozenSet;

#[pymodule]
fn _fastsum(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let names: Vec<String> = fastsum::Algorithm::ALL
        .iter()
        .map(|&a| hash_object::python_name(a).to_string())
        .collect();
    m.add("algorithms_available", PyFrozenSet::new(py, &names)?)?;
    m.add_class::<hash_object::Hash>()?;
    hash_object::add_constructors(m)?;
    m.add_class::<files::FileResult>()?;
    m.add_class::<files::TreeIterator>()?;
    m.add_function(wrap_pyfunction!(files::hash_file, m)?)?;
    m.add_function(wrap_pyfunction!(files::hash_files, m)?)?;
    m.add_function(wrap_pyfunction!(files::hash_tree, m)?)?;
    m.add_class::<questions::CheckResult>()?;
    m.add_class::<questions::Change>()?;
    m.add_class::<questions::DiffIterator>()?;
    m.add_class::<questions::Group>()?;
    m.add_class::<questions::Dupes>()?;
    m.add_function(wrap_pyfunction!(questions::check, m)?)?;
    m.add_function(wrap_pyfunction!(questions::diff, m)?)?;
    m.add_function(wrap_pyfunction!(questions::dupes, m)?)?;
    m.add_class::<contained::Verdict>()?;
    m.add_class::<contained::ContainedIterator>()?;
    m.add_function(wrap_pyfunction!(contained::contained, m)?)?;
    m.add_function(wrap_pyfunction!(shards::_list, m)?)?;
    m.add_function(wrap_pyfunction!(shards::_cuts, m)?)?;
    m.add_function(wrap_pyfunction!(shards::_hash_shard, m)?)?;
    Ok(())
}
