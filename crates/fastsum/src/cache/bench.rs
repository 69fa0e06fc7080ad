//! The store and the bulk load under a run's session, public to this
//! crate's benches only (`bench-internals`, no stability promised): the
//! cache's own cost a run, measured without hashing. A program reaches
//! the cache through [`Cache::session`](super::Cache::session), which
//! stores only digests of bytes it read.

use std::path::PathBuf;

pub use super::store::NewEntry;
use super::Cache;
use crate::algo::Algorithm;
use crate::error::Result;
pub use crate::fs::identity::FsId;

/// Stores `entries` as a run that started at `started_ns` would.
pub fn store(
    cache: &mut Cache,
    algorithm: Algorithm,
    entries: &[NewEntry],
    started_ns: i64,
) -> Result<usize> {
    cache.store(algorithm, entries, started_ns)
}

/// Loads the entries under `roots` in bulk and looks each probe up: how
/// many the cache answered.
pub fn load_and_look_up<'a>(
    cache: &mut Cache,
    algorithm: Algorithm,
    roots: &[PathBuf],
    probes: impl IntoIterator<Item = &'a NewEntry>,
) -> Result<usize> {
    let snapshot = cache.load(algorithm, roots)?;
    Ok(probes
        .into_iter()
        .filter(|probe| {
            snapshot
                .lookup(&probe.path, &probe.stamp, probe.fs)
                .is_some()
        })
        .count())
}
