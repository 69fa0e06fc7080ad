//! How a manifest's paths become keys: the prefix they share that stands
//! for the other side's root, chosen from a survey of the paths.

use std::path::PathBuf;

/// How a manifest's paths become keys (docs/ARCHITECTURE.md, "diff").
pub(super) enum Rooting {
    /// `--old-root` / `--new-root`: this prefix is the root.
    Given(Vec<u8>),
    /// The other side is this directory: as spelled, and absolute.
    AgainstTree {
        spelled: Vec<u8>,
        absolute: Vec<u8>,
        tree: PathBuf,
    },
    /// The other side is a manifest too: the directory every path shares.
    Shared,
}

impl Rooting {
    /// The prefixes that, shared by every path, are the root for certain
    /// (the tree as spelled, then absolute).
    fn candidates(&self) -> Vec<Vec<u8>> {
        match self {
            Rooting::AgainstTree {
                spelled, absolute, ..
            } => vec![with_slash(spelled), with_slash(absolute)],
            _ => Vec::new(),
        }
    }

    /// A survey of a list's paths for [`Rooting::prefix_for`].
    pub(super) fn survey(&self) -> PathSurvey {
        PathSurvey {
            candidates: self.candidates().into_iter().map(|c| (c, true)).collect(),
            shared: None,
            sample: Vec::new(),
            first: Vec::new(),
        }
    }

    /// The prefix to strip from every path the survey saw (after `./`),
    /// or why none can be chosen with confidence.
    pub(super) fn prefix_for(&self, survey: &PathSurvey) -> Result<Vec<u8>, String> {
        match self {
            Rooting::Given(prefix) => Ok(with_slash(prefix)),
            Rooting::AgainstTree { tree, .. } => {
                for (candidate, all) in &survey.candidates {
                    if *all {
                        return Ok(candidate.clone());
                    }
                }
                // Hashed elsewhere (a copy of the tree at another path):
                // the shared leading directories, as few as make the
                // listed files be found in the tree. Found means below the
                // tree: an absolute path is never looked up where it is.
                let shared = survey.shared.as_deref().unwrap_or_default();
                let sample: Vec<&[u8]> = survey.sample.iter().map(Vec::as_slice).collect();
                let found_under = |cut: &[u8]| {
                    sample
                        .iter()
                        .filter(|p| {
                            let mut rest = &p[cut.len()..];
                            // Longer than a path can be: never found
                            // (and never joined: a hostile list's line
                            // may be 300 MB of `a/`).
                            if rest.len() > PATH_MAX {
                                return false;
                            }
                            while let Some(r) = rest.strip_prefix(b"/") {
                                rest = r;
                            }
                            !rest.is_empty() && tree.join(crate::fs::name::os_str(rest)).exists()
                        })
                        .count()
                };
                let mut best = Vec::new();
                let mut best_found = found_under(b"");
                // The cuts that leave some sampled path short enough to
                // be found.
                let shortest = sample.iter().map(|p| p.len()).min().unwrap_or(0);
                let cuts = (0..shared.len()).filter(|&i| shared[i] == b'/');
                for cut in cuts.map(|i| &shared[..=i]) {
                    // A cut longer than a sampled path is none of its
                    // leading directories: not tried (nor sliced by).
                    if shortest
                        .checked_sub(cut.len())
                        .is_none_or(|left| left > PATH_MAX)
                    {
                        continue;
                    }
                    let found = found_under(cut);
                    if found > best_found {
                        best_found = found;
                        best = cut.to_vec();
                    }
                }
                // Fewer than half the files found under any cut: the roots
                // cannot be matched with confidence, and a guess would be a
                // confident wrong diff (every file "moved" or "removed").
                if 2 * best_found < sample.len() || sample.is_empty() {
                    let example = crate::escape::display_path(&crate::fs::name::path(
                        &survey.first[..survey.first.len().min(EXAMPLE)],
                    ));
                    return Err(format!(
                        "its paths ({example} ...) cannot be matched with {}: give \
                         --old-root or --new-root PREFIX, the directory they start with",
                        tree.display()
                    ));
                }
                Ok(best)
            }
            Rooting::Shared => Ok(survey.shared.clone().unwrap_or_default()),
        }
    }
}

/// What choosing a list's root needs to know of its paths, learnt one
/// path at a time (so a list can be surveyed in a pass without being
/// held).
pub(super) struct PathSurvey {
    /// Each certain prefix, and whether every path so far starts with it.
    candidates: Vec<(Vec<u8>, bool)>,
    /// The longest directory prefix (ending in `/`) every path so far
    /// shares and is longer than; its shorter ones are its own prefixes
    /// up to each `/` (`None` before the first path). One copy of it: a
    /// list of each prefix took memory by the square of a path's depth.
    shared: Option<Vec<u8>>,
    /// The first 64 paths: looked up in the tree when no prefix is
    /// certain.
    sample: Vec<Vec<u8>>,
    /// The first path's first bytes: the example a message gives.
    first: Vec<u8>,
}

impl PathSurvey {
    /// One more path of the list (as listed; `./` is taken off here).
    pub(super) fn add(&mut self, path: &[u8]) {
        let path = path.strip_prefix(b"./").unwrap_or(path);
        for (candidate, all) in &mut self.candidates {
            *all = *all && path.starts_with(candidate);
        }
        match &mut self.shared {
            // Held up to the longest cut that could leave a sample short
            // enough to look up: a hostile 300 MB line is not held again.
            None => {
                let upto = path.len().min(16 * PATH_MAX);
                self.shared = Some(path[..dir_prefix_len(path, upto)].to_vec())
            }
            Some(shared) => {
                let common = shared.iter().zip(path).take_while(|(a, b)| a == b).count();
                let keep = dir_prefix_len(path, common);
                shared.truncate(keep);
            }
        }
        if self.first.is_empty() {
            self.first = path[..path.len().min(EXAMPLE)].to_vec();
        }
        // A path longer than any cut could make short enough to look up
        // is no sample (a hostile line is 300 MB of `a/`).
        if self.sample.len() < 64 && path.len() <= 16 * PATH_MAX {
            self.sample.push(path.to_vec());
        }
    }
}

/// `prefix` ending in one `/` (empty stays empty; `./` and `.` are empty).
fn with_slash(prefix: &[u8]) -> Vec<u8> {
    let trimmed = prefix.strip_prefix(b"./").unwrap_or(prefix);
    if trimmed.is_empty() || trimmed == b"." {
        return Vec::new();
    }
    let mut out = trimmed.to_vec();
    while out.ends_with(b"//") {
        out.pop();
    }
    if !out.ends_with(b"/") {
        out.push(b'/');
    }
    out
}

/// The length of `path`'s longest directory prefix (`a/`, `a/b/` ...)
/// within its first `within` bytes that `path` is longer than (0 for none).
fn dir_prefix_len(path: &[u8], within: usize) -> usize {
    let within = within.min(path.len());
    path[..within]
        .iter()
        .enumerate()
        .rev()
        .find(|&(i, &b)| b == b'/' && i + 1 < path.len())
        .map_or(0, |(i, _)| i + 1)
}

/// The most bytes of a path a message shows.
const EXAMPLE: usize = 200;

/// The longest path the system can look up.
const PATH_MAX: usize = 4096;
