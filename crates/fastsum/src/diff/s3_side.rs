//! `diff s3://bucket/prefix DIR` (either order): the listing and the walk
//! merged by key; a key on both sides with one size is decided by the
//! digest S3 keeps of it (`claim.rs`), computed locally in the same form
//! (`local.rs`); what has no digest is `unverifiable`, or with `download`
//! its bytes are streamed and compared, never stored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Change, ChangeKind, DiffEvent, DiffOptions, DiffSummary, Entry, EntryKind};
use crate::error::{Error, Result};
use crate::s3::cache::{claims_kept_or_asked, ClaimCache};
use crate::s3::claim::Claim;
use crate::s3::http::Client;
use crate::s3::listing::{io_error, shown, DEFAULT_REQUESTS};
use crate::s3::xml::Listed;
use crate::s3::{S3Options, S3Url};
use crate::walk::WalkItem;

/// A local file: its path and size.
struct Local {
    path: PathBuf,
    size: u64,
}

/// The outcome for a key on both sides with one size.
enum Verdict {
    Same,
    Differs,
    Unverifiable,
    Failed(String),
}

/// The listing by relative key; refused keys are problems.
fn listing(
    client: &Client,
    url: &S3Url,
    problems: &mut Vec<(Vec<u8>, PathBuf, String)>,
) -> Result<BTreeMap<String, Listed>> {
    let mut out = BTreeMap::new();
    for (object, relative) in crate::s3::listing::listing(client, url)? {
        match relative {
            Ok(relative) => {
                out.insert(relative, object);
            }
            Err(why) => problems.push((object.key.clone(), shown(url, &object.key), why)),
        }
    }
    Ok(out)
}

/// The regular files below `dir` by key (`/` between components), and
/// the number of symbolic links left out.
fn local_files(
    dir: &Path,
    options: &DiffOptions,
    problems: &mut Vec<(Vec<u8>, PathBuf, String)>,
) -> Result<(BTreeMap<Vec<u8>, Local>, u64)> {
    let mut walk = options.walk.clone();
    walk.sizes = true;
    walk.directories = false;
    let mut files = BTreeMap::new();
    let mut symlinks = 0;
    walk.walk_sorted(dir, &mut |item| match item {
        WalkItem::File { path, size, .. } => {
            let mut key = super::side::key_of(dir, &path);
            if cfg!(windows) {
                key.iter_mut()
                    .filter(|b| **b == b'\\')
                    .for_each(|b| *b = b'/');
            }
            let size = size.or_else(|| std::fs::metadata(&path).ok().map(|m| m.len()));
            files.insert(
                key,
                Local {
                    path,
                    size: size.unwrap_or(0),
                },
            );
        }
        WalkItem::Special {
            kind: crate::walk::SpecialKind::Symlink,
            ..
        } => symlinks += 1,
        WalkItem::Error(e) => {
            let path = e.path().map(Path::to_path_buf).unwrap_or_default();
            let key = super::side::key_of(dir, &path);
            problems.push((key, path, e.kind().to_string()));
        }
        _ => {}
    })?;
    Ok((files, symlinks))
}

/// Decides every pair, `jobs` at a time.
fn decide(
    client: &Client,
    url: &S3Url,
    pairs: &[(&str, &Listed, &Local)],
    options: &S3Options,
    cache: Option<&ClaimCache>,
) -> Vec<Verdict> {
    let one = |&(_, object, local): &(&str, &Listed, &Local)| {
        decide_one(client, url, object, local, options, cache)
    };
    crate::s3::listing::in_parallel(pairs, options.jobs, DEFAULT_REQUESTS, &one)
}

fn decide_one(
    client: &Client,
    url: &S3Url,
    object: &Listed,
    local: &Local,
    options: &S3Options,
    cache: Option<&ClaimCache>,
) -> Verdict {
    let Ok(key) = std::str::from_utf8(&object.key) else {
        return Verdict::Failed("the key is not UTF-8".into());
    };
    let claims = match claims_kept_or_asked(cache, client, &url.bucket, key, object) {
        Ok(claims) => claims,
        Err(why) => return Verdict::Failed(why),
    };
    // Every claim that can be checked is; none disagreeing while one
    // could not be checked is no answer (`--download`: the bytes decide).
    let checked = match claims.iter().all(|c| matches!(c, Claim::Opaque(_))) {
        true => Ok(None),
        false => crate::s3::local::file_matches(&claims, &local.path),
    };
    match (checked, options.download) {
        (Ok(Some(true)), _) => Verdict::Same,
        (Ok(Some(false)), _) => Verdict::Differs,
        (Ok(None), true) => match crate::s3::download::same_bytes(client, object, &local.path) {
            Ok(true) => Verdict::Same,
            Ok(false) => Verdict::Differs,
            Err(why) => Verdict::Failed(why),
        },
        (Ok(None), false) => Verdict::Unverifiable,
        (Err(e), _) => Verdict::Failed(e.to_string()),
    }
}

fn entry(key: &[u8], size: u64) -> Entry {
    Entry {
        path: crate::fs::name::path(key).into_owned(),
        kind: EntryKind::File,
        size: Some(size),
        digest: None,
    }
}

/// A change, its sides put in order (`s3_is_old`: the bucket is OLD).
struct Orient {
    s3_is_old: bool,
}

impl Orient {
    fn change(&self, kind: ChangeKind, s3: Option<Entry>, here: Option<Entry>) -> DiffEvent {
        let (old, new) = match self.s3_is_old {
            true => (s3, here),
            false => (here, s3),
        };
        DiffEvent::Change(Change { kind, old, new })
    }

    /// What a key only the bucket (`in_s3`) or only the tree has is.
    fn only(&self, in_s3: bool) -> ChangeKind {
        match in_s3 == self.s3_is_old {
            true => ChangeKind::Removed,
            false => ChangeKind::Added,
        }
    }
}

/// The keys on one side only, and those on both with two sizes, as
/// events; the pairs of one size to decide.
fn match_keys<'a>(
    remote: &'a BTreeMap<String, Listed>,
    local: &'a BTreeMap<Vec<u8>, Local>,
    orient: &Orient,
    events: &mut Vec<(Vec<u8>, DiffEvent)>,
) -> Vec<(&'a str, &'a Listed, &'a Local)> {
    let mut pairs = Vec::new();
    for (relative, object) in remote {
        let key = relative.as_bytes();
        let s3 = Some(entry(key, object.size));
        let event = match local.get(key) {
            Some(file) if file.size == object.size => {
                pairs.push((relative.as_str(), object, file));
                continue;
            }
            Some(file) => orient.change(ChangeKind::Modified, s3, Some(entry(key, file.size))),
            None => orient.change(orient.only(true), s3, None),
        };
        events.push((key.to_vec(), event));
    }
    for (key, file) in local {
        if !remote.contains_key(std::str::from_utf8(key).unwrap_or("\0")) {
            let event = orient.change(orient.only(false), None, Some(entry(key, file.size)));
            events.push((key.clone(), event));
        }
    }
    pairs
}

/// Compares the bucket's prefix with `dir`; `s3_is_old`: the bucket is
/// the old side (a deploy's question: what to send to it).
pub(crate) fn diff(
    url: &S3Url,
    dir: &Path,
    s3_is_old: bool,
    options: &DiffOptions,
    sink: &mut dyn FnMut(DiffEvent),
) -> Result<DiffSummary> {
    let config = crate::s3::S3Config::from_environment(options.s3.path_style);
    let client = Client::new(&config, &url.bucket)
        .map_err(|e| Error::with_path(url.to_string(), io_error(e)))?;
    let mut problems = Vec::new();
    let remote = listing(&client, url, &mut problems)?;
    let (local, symlinks) = local_files(dir, options, &mut problems)?;
    let cache = options
        .s3
        .cache
        .as_deref()
        .and_then(|path| ClaimCache::open(path, &config));
    let orient = Orient { s3_is_old };
    let mut events: Vec<(Vec<u8>, DiffEvent)> = Vec::new();
    let pairs = match_keys(&remote, &local, &orient, &mut events);
    let verdicts = decide(&client, url, &pairs, &options.s3, cache.as_ref());
    for ((relative, object, file), verdict) in pairs.iter().zip(verdicts) {
        let key = relative.as_bytes();
        let (s3, here) = (Some(entry(key, object.size)), Some(entry(key, file.size)));
        let event = match verdict {
            Verdict::Same if options.all => orient.change(ChangeKind::Unchanged, s3, here),
            Verdict::Same => continue,
            Verdict::Differs => orient.change(ChangeKind::Modified, s3, here),
            Verdict::Unverifiable => orient.change(ChangeKind::Unverifiable, s3, here),
            Verdict::Failed(error) => DiffEvent::Problem {
                path: shown(url, &object.key),
                error,
            },
        };
        events.push((key.to_vec(), event));
    }
    for (key, path, error) in problems {
        events.push((key, DiffEvent::Problem { path, error }));
    }
    events.sort_by(|a, b| a.0.cmp(&b.0));
    let mut summary = DiffSummary {
        symlinks_left_out: symlinks,
        ..DiffSummary::default()
    };
    for (_, event) in events {
        count(&mut summary, &event);
        sink(event);
    }
    Ok(summary)
}

fn count(summary: &mut DiffSummary, event: &DiffEvent) {
    let DiffEvent::Change(change) = event else {
        summary.problems += 1;
        return;
    };
    let new_size = change.new.as_ref().and_then(|e| e.size).unwrap_or(0);
    match change.kind {
        ChangeKind::Added => summary.added += 1,
        ChangeKind::Removed => summary.removed += 1,
        ChangeKind::Modified => summary.modified += 1,
        ChangeKind::Unverifiable => summary.unverifiable += 1,
        ChangeKind::Unchanged => summary.unchanged += 1,
        ChangeKind::Moved => summary.moved += 1,
        ChangeKind::Typechange => summary.typechanges += 1,
    }
    if matches!(
        change.kind,
        ChangeKind::Added | ChangeKind::Modified | ChangeKind::Unverifiable
    ) {
        summary.bytes_changed += new_size;
    }
}
