//! `--exclude`: gitignore-style globs matched relative to the walk's root
//! (the `ignore` crate does the matching; the walk is fastsum's own).

use std::path::Path;

use crate::error::{Error, ErrorKind, Result};

/// Checks that every exclude pattern is a valid glob.
pub(super) fn check_excludes(excludes: &[String]) -> Result<()> {
    exclude_overrides(Path::new("/"), excludes).map(drop)
}

/// The excludes as the walker's overrides: each a negated (ignore) glob.
pub(super) fn exclude_overrides(
    root: &Path,
    excludes: &[String],
) -> Result<ignore::overrides::Override> {
    let invalid = |glob: &str, e: ignore::Error| {
        let cause = match e {
            ignore::Error::Glob { err, .. } => err,
            other => other.to_string(),
        };
        Error::new(ErrorKind::InvalidGlob {
            glob: glob.to_string(),
            cause,
        })
    };
    let mut overrides = ignore::overrides::OverrideBuilder::new(root);
    for glob in excludes {
        overrides
            .add(&format!("!{glob}"))
            .map_err(|e| invalid(glob, e))?;
    }
    overrides.build().map_err(|e| invalid("", e))
}

/// Whether `path` (a directory if `is_dir`) is left out by `excludes`.
pub(super) fn is_excluded(
    excludes: Option<&ignore::overrides::Override>,
    path: &[u8],
    is_dir: bool,
) -> bool {
    excludes.is_some_and(|excludes| {
        excludes
            .matched(crate::fs::name::path(path), is_dir)
            .is_ignore()
    })
}
