//! A tree against a remote host, with the cache: the local tree is hashed
//! first (from the cache where stamps are unchanged) with its directory
//! digests, which go to the host as offers ([`crate::dirdigest::Offers`]);
//! a remote fastsum answers a matching sub-tree with one record instead of
//! its listing. A matched directory's files are then the local side's own
//! entries, so the merge sees them unchanged, as it would have from the
//! full listing.
//!
//! Only where both walks see the same entries: no excludes, no
//! `--max-depth`, links not followed, not bounded to one file system, and
//! an algorithm that makes directory digests. The offers travel on the
//! host's standard input, so not with `--upload-self`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::side::{key_of, listed_of, Fetched, Listed};
use super::{DiffOptions, Side};
use crate::algo::Algorithm;
use crate::dirdigest::{DirectoryDigests, Offers};
use crate::error::{Error, ErrorKind, Result};
use crate::pipeline::{Outcome, Record, TreeHasher};
use crate::stage::Source;

/// The local side of a pruned diff: its entries, and the offers made of
/// its directory digests.
pub(super) struct Local {
    pub(super) listed: Vec<Listed>,
    pub(super) offers: Arc<Offers>,
}

/// The local tree when `old` and `new` are a tree and a remote side that
/// can be pruned, hashed whole; `None` when pruning does not apply.
pub(super) fn local_side(
    old: &Side,
    new: &Side,
    algorithm: Option<Algorithm>,
    options: &DiffOptions,
) -> Result<Option<Local>> {
    let root = match (old, new) {
        (Side::Tree(root), Side::Remote(_)) | (Side::Remote(_), Side::Tree(root)) => root,
        _ => return Ok(None),
    };
    let walk = &options.walk;
    let same_walk = walk.excludes.is_empty()
        && walk.max_depth.is_none()
        && !walk.follow_links
        && !walk.one_file_system
        && walk.only_top.is_none();
    let remote = &options.remote;
    let sendable = remote.upload_self.is_none() && remote.listing.is_none();
    let Some(algorithm) = algorithm.filter(|a| crate::dirdigest::refusal(*a).is_none()) else {
        return Ok(None);
    };
    if !same_walk || !sendable || options.cache.is_none() {
        return Ok(None);
    }
    hash_local(root.clone(), algorithm, options).map(Some)
}

/// Every entry of the tree at `root` and its directories' digests.
fn hash_local(root: PathBuf, algorithm: Algorithm, options: &DiffOptions) -> Result<Local> {
    let mut walk = options.walk.clone();
    walk.directories = true;
    let mut hasher = TreeHasher::new(algorithm)
        .recursive(true)
        .threads(options.threads)
        .walk(walk);
    if let Some(session) = &options.cache {
        hasher = hasher.cache(session.clone());
    }
    if let Some(progress) = &options.progress {
        hasher = hasher.progress(progress.clone());
    }
    let operands = [Source::Path(root.clone())];
    let (mut listed, mut offers) = (Vec::new(), Offers::new());
    let sink = |record: Record| match record.outcome {
        Outcome::Directory(Some(digest)) => {
            let key = key_of(&root, &record.path);
            let key = key.strip_suffix(b"/").unwrap_or(&key).to_vec();
            offers.insert(key, digest);
        }
        _ => listed.extend(listed_of(&root, record, false)),
    };
    let mut digests = DirectoryDigests::new(algorithm, &operands, sink)
        .map_err(|why| Error::with_path(&root, ErrorKind::Io(std::io::Error::other(why))))?;
    hasher.run_into(&operands, &mut digests)?;
    digests.finish();
    drop(digests);
    Ok(Local {
        listed,
        offers: Arc::new(offers),
    })
}

/// The remote side with each matched directory's files taken from the
/// local side. A host that also listed a file inside a directory it said
/// matched contradicts itself: refused, as a listing that is not whole is.
pub(super) fn expand(fetched: &mut Fetched, local: &[Listed], shown: &str) -> Result<()> {
    if fetched.matched.is_empty() {
        return Ok(());
    }
    let matched: HashSet<&[u8]> = fetched.matched.iter().map(Vec::as_slice).collect();
    let inside = |key: &[u8]| {
        matched.contains(&b""[..])
            || key
                .iter()
                .enumerate()
                .any(|(at, &b)| b == b'/' && matched.contains(&key[..at]))
    };
    let key = |l: &Listed| match l {
        Listed::Entry(f) => f.key.clone(),
        Listed::Problem { key, .. } => key.clone(),
        Listed::SymlinksLeftOut(_) => Vec::new(),
    };
    let listed = &mut fetched.listed;
    if let Some(said) = listed.iter().map(key).find(|k| !k.is_empty() && inside(k)) {
        return Err(Error::with_path(
            shown,
            ErrorKind::Io(std::io::Error::other(format!(
                "the remote listed {} inside a directory it said matched",
                String::from_utf8_lossy(&said)
            ))),
        ));
    }
    let taken = local.iter().filter(|l| match l {
        Listed::Entry(found) => inside(&found.key),
        _ => false,
    });
    listed.extend(taken.cloned());
    listed.sort_by_key(key);
    Ok(())
}
