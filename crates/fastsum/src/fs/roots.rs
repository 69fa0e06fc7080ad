//! Operands that overlap: a root named twice, or inside another root, is
//! walked once, so no file is reported twice.

use std::path::PathBuf;

/// The roots without those another root names again or holds (`a b a`,
/// `c c/x`): each directory walked once, so no file is counted twice.
pub(crate) fn distinct_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    let real: Vec<Option<PathBuf>> = roots
        .iter()
        .map(|r| std::fs::canonicalize(r).ok())
        .collect();
    let covered = |i: usize| {
        let Some(me) = &real[i] else {
            return false;
        };
        real.iter().enumerate().any(|(j, other)| {
            other.as_ref().is_some_and(|other| {
                (me == other && j < i) || (me != other && me.starts_with(other))
            })
        })
    };
    (0..roots.len())
        .filter(|&i| !covered(i))
        .map(|i| roots[i].clone())
        .collect()
}
