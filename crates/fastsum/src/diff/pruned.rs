//! A tree against a remote host, with the cache: the local tree is hashed
//! (from the cache where stamps are unchanged) with its directory digests
//! while the host is reached, and the digests go to it as offers
//! ([`crate::dirdigest::Offers`]);
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
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::merge::Source;
use super::side::{self, key_of, listed_of, Fetched, Listed};
use super::{DiffEvent, DiffOptions, Side};
use crate::algo::Algorithm;
use crate::dirdigest::{DirectoryDigests, Offers};
use crate::error::{Error, ErrorKind, Result};
use crate::pipeline::{Outcome, Record, TreeHasher};
use crate::remote::Remote;
use crate::stage::Source as Operand;

/// A diff that can be pruned: a local tree against a remote side.
pub(super) struct Plan<'a> {
    root: &'a Path,
    remote: &'a Remote,
    algorithm: Algorithm,
    /// The local tree is the old side.
    local_is_old: bool,
}

/// The plan when `old` and `new` are a tree and a remote side that can
/// be pruned (see the module's text).
pub(super) fn plan<'a>(
    old: &'a Side,
    new: &'a Side,
    algorithm: Option<Algorithm>,
    options: &DiffOptions,
) -> Option<Plan<'a>> {
    let (root, remote, local_is_old) = match (old, new) {
        (Side::Tree(root), Side::Remote(remote)) => (root, remote, true),
        (Side::Remote(remote), Side::Tree(root)) => (root, remote, false),
        _ => return None,
    };
    let walk = &options.walk;
    let same_walk = walk.excludes.is_empty()
        && walk.max_depth.is_none()
        && !walk.follow_links
        && !walk.one_file_system
        && walk.only_top.is_none();
    let sendable = options.remote.upload_self.is_none() && options.remote.listing.is_none();
    let algorithm = algorithm.filter(|a| a.directory_digest_refusal().is_none())?;
    (same_walk && sendable && options.cache.is_some()).then_some(Plan {
        root,
        remote,
        algorithm,
        local_is_old,
    })
}

/// Sets the offers when dropped, empty if none were set (the hashing
/// failed or panicked): the host, waiting for them, is never left waiting.
struct Settle<'a>(&'a OnceLock<Offers>);

impl Drop for Settle<'_> {
    fn drop(&mut self) {
        let _ = self.0.set(Offers::new());
    }
}

impl Plan<'_> {
    /// Both sides' entries (old, new): the local tree hashed on a thread
    /// while the host is reached, its offers sent when ready, and the
    /// matched directories' files taken from the local side.
    pub(super) fn sources(
        self,
        options: &DiffOptions,
        sink: &mut impl FnMut(DiffEvent),
    ) -> Result<(Source, Source)> {
        let slot = Arc::new(OnceLock::new());
        let mut remote_options = options.remote.clone();
        remote_options.offers = Some(slot.clone());
        let (local, fetched) = std::thread::scope(|s| {
            let local = s.spawn(|| {
                let _settle = Settle(&slot);
                hash_local(self.root, self.algorithm, options).map(|(listed, offers)| {
                    let _ = slot.set(offers);
                    listed
                })
            });
            let fetched = side::remote_side(self.remote, self.algorithm, &remote_options);
            (local.join(), fetched)
        });
        let local = local.map_err(|_| {
            let why = std::io::Error::other("hashing the local tree failed");
            Error::with_path(self.root, ErrorKind::Io(why))
        })??;
        let mut fetched = fetched?;
        expand(&mut fetched, &local, &self.remote.to_string())?;
        let remote = super::announced(self.remote, fetched, options, sink);
        let local = Source::listed(local, options);
        Ok(match self.local_is_old {
            true => (local, remote),
            false => (remote, local),
        })
    }
}

/// Every entry of the tree at `root` and its directories' digests.
fn hash_local(
    root: &Path,
    algorithm: Algorithm,
    options: &DiffOptions,
) -> Result<(Vec<Listed>, Offers)> {
    let root = root.to_path_buf();
    let mut walk = options.walk.clone();
    walk.directories = true;
    let hasher = TreeHasher::new(algorithm)
        .verify(true)
        .recursive(true)
        .threads(options.threads)
        .walk(walk);
    let mut hasher = options.cached(hasher);
    if let Some(progress) = &options.progress {
        hasher = hasher.progress(progress.clone());
    }
    let operands = [Operand::Path(root.clone())];
    let (mut listed, mut offers) = (Vec::new(), Offers::new());
    let sink = |record: Record| match record.outcome {
        Outcome::Directory(Some(digest)) => {
            let key = key_of(&root, &record.path);
            let key = key.strip_suffix(b"/").unwrap_or(&key).to_vec();
            offers.insert(key, digest);
        }
        _ => listed.extend(listed_of(&root, record, false, false)),
    };
    let mut digests = DirectoryDigests::new(algorithm, &operands, sink)
        .map_err(|why| Error::with_path(&root, ErrorKind::Io(std::io::Error::other(why))))?;
    hasher.run_into(&operands, &mut digests)?;
    digests.finish();
    drop(digests);
    Ok((listed, offers))
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
        Listed::Problem { key, .. } | Listed::LeftOut { key, .. } => key.clone(),
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
