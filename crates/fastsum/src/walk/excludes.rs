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
        if let Some(cause) = refused(glob) {
            return Err(Error::new(ErrorKind::InvalidGlob {
                glob: glob.to_string(),
                cause: cause.to_string(),
            }));
        }
        overrides
            .add(&format!("!{glob}"))
            .map_err(|e| invalid(glob, e))?;
    }
    overrides.build().map_err(|e| invalid("", e))
}

/// Why `glob` is refused though the matcher would take it: where it
/// would leave out what no one asked to, it is an error, never a listing
/// that silently leaves out every file. A pattern of nothing but blanks is
/// empty once its trailing blanks are cut (gitignore's rule), and the
/// matcher's empty pattern matches the root. (A leading `!` is taken as
/// part of the name, as rsync reads an exclude and as the Ansible
/// collection passes rsync's: each exclude is a rule of its own, so
/// gitignore's negation has nothing to bring back.)
fn refused(glob: &str) -> Option<&'static str> {
    if glob.chars().all(char::is_whitespace) {
        return Some("a pattern of only blanks would leave out every file");
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A blank pattern is refused; a leading `!` (escaped or not) and a
    /// blank inside a name are names.
    #[test]
    fn blank_patterns_are_refused_and_a_bang_is_a_name() {
        for glob in ["", " ", "\t", " \r", "\u{b}"] {
            let err = check_excludes(&[glob.to_string()]).unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::InvalidGlob { .. }),
                "{glob:?}"
            );
        }
        for glob in ["\\!bang", "a b", "trail\\ ", "*.log", "!bang"] {
            check_excludes(&[glob.to_string()]).unwrap();
        }
        let root = Path::new("/t");
        for glob in ["\\!bang", "!bang"] {
            let o = exclude_overrides(root, &[glob.to_string()]).unwrap();
            assert!(is_excluded(Some(&o), b"/t/!bang", false), "{glob}");
            assert!(!is_excluded(Some(&o), b"/t/bang", false), "{glob}");
        }
    }
}
