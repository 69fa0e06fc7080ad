//! Sub-trees left out of a listing because the receiver already has them:
//! the receiver sends the directory digests of its own tree ([`Offers`]);
//! the sender's run, through [`Pruner`], hands on a directory whose digest
//! equals the offered one as that one directory record (and its symbolic
//! links' records, which the receiver counts) instead of its entries.
//! `fastsum diff` against a remote host with fastsum sends only what
//! differs this way.
//!
//! A record is held while a directory above it may still match; a
//! directory that does not (another digest, an entry the receiver lacks,
//! anything unreadable) lets everything held go out as it came, so the
//! records keep the run's order. What goes out for a matched directory is
//! its `Outcome::Directory(Some(digest))` record; unmatched directories'
//! digest records are not handed on.

use std::collections::HashMap;

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::fs::name;
use crate::pipeline::{Outcome, Record, Sink};
use crate::walk::SpecialKind;

/// The most directories an offer may name: far beyond any tree fastsum
/// lists in one run, and a bound on what a hostile offer can make a host
/// hold.
const MOST: usize = 1 << 24;

/// Directory digests a receiver has, by path relative to the tree's root
/// (the root itself is the empty path; separators between names, none at
/// either end).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Offers {
    digests: HashMap<Vec<u8>, Digest>,
}

impl Offers {
    /// No directory offered.
    pub fn new() -> Self {
        Offers::default()
    }

    /// Offers `digest` for the directory at `relative`.
    pub fn insert(&mut self, relative: Vec<u8>, digest: Digest) {
        self.digests.insert(relative, digest);
    }

    /// The digest offered for the directory at `relative`.
    pub fn get(&self, relative: &[u8]) -> Option<&Digest> {
        self.digests.get(relative)
    }

    /// How many directories are offered.
    pub fn len(&self) -> usize {
        self.digests.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// The offers as sent: `HEX SP PATH NUL` for each directory, in path
    /// order (a path may hold any byte but NUL).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut sorted: Vec<_> = self.digests.iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut out = Vec::new();
        for (path, digest) in sorted {
            digest.push_hex(&mut out);
            out.push(b' ');
            out.extend_from_slice(path);
            out.push(0);
        }
        out
    }

    /// Reads what [`Offers::to_bytes`] wrote, every digest of
    /// `algorithm`'s length. Errors: a record that is cut short, a bad
    /// digest, a path offered twice, too many.
    pub fn parse(bytes: &[u8], algorithm: Algorithm) -> Result<Offers, String> {
        let mut offers = Offers::new();
        let Some(body) = bytes.strip_suffix(b"\0") else {
            return match bytes.is_empty() {
                true => Ok(offers),
                false => Err("the last offered directory is cut short".into()),
            };
        };
        for (at, record) in body.split(|&b| b == 0).enumerate() {
            let bad = |why: &str| format!("offered directory {}: {why}", at + 1);
            let (hex, path) = record
                .iter()
                .position(|&b| b == b' ')
                .map(|space| (&record[..space], &record[space + 1..]))
                .ok_or_else(|| bad("no space after the digest"))?;
            let digest = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| Digest::from_hex(h).ok())
                .filter(|d| d.len() == algorithm.output_len())
                .ok_or_else(|| bad("not a digest of this algorithm"))?;
            let clean = path.first().is_none_or(|&b| !name::is_separator(b))
                && path.last().is_none_or(|&b| !name::is_separator(b));
            if !clean {
                return Err(bad("a path that starts or ends with a separator"));
            }
            if offers.digests.insert(path.to_vec(), digest).is_some() {
                return Err(bad("offered twice"));
            }
            if offers.len() > MOST {
                return Err(format!("more than {MOST} directories offered"));
            }
        }
        Ok(offers)
    }
}

/// A directory whose records are held: it may still match.
struct Held {
    key: Vec<u8>,
    /// Where its records start in the buffer.
    start: usize,
    digest: Digest,
}

/// The [`Sink`] after [`super::DirectoryDigests`] that leaves out the
/// directories the receiver has (see the module's text), for a run over
/// one directory, `root`. Call [`Pruner::finish`] after
/// [`super::DirectoryDigests::finish`].
pub(crate) struct Pruner<S: Sink> {
    offers: Offers,
    root: Vec<u8>,
    held: Vec<Held>,
    buffer: Vec<Record>,
    inner: S,
}

impl<S: Sink> Pruner<S> {
    /// Prunes the tree at `root` (as the run spells it) by `offers`.
    pub fn new(offers: Offers, root: &std::path::Path, inner: S) -> Self {
        let mut pruner = Pruner {
            offers,
            root: name::path_bytes(root).to_vec(),
            held: Vec::new(),
            buffer: Vec::new(),
            inner,
        };
        // The root has no opening record: it opens here.
        pruner.open(Vec::new());
        pruner
    }

    /// Hands on what is still held (a directory never closed cannot have
    /// matched) and returns the inner sink.
    pub fn finish(&mut self) -> &mut S {
        self.let_go();
        &mut self.inner
    }

    /// `path` relative to the root, without separators at its ends;
    /// `None` outside the root.
    fn key(&self, path: &std::path::Path) -> Option<Vec<u8>> {
        let rest = name::path_bytes(path).strip_prefix(&self.root[..])?;
        let start = rest.iter().position(|&b| !name::is_separator(b));
        let end = rest.iter().rposition(|&b| !name::is_separator(b));
        match (start, end) {
            (Some(start), Some(end)) => Some(rest[start..=end].to_vec()),
            _ => Some(Vec::new()),
        }
    }

    /// A directory opens: held when offered; one the receiver lacks below
    /// a held one means that one cannot match.
    fn open(&mut self, key: Vec<u8>) {
        match self.offers.get(&key) {
            Some(&digest) => self.held.push(Held {
                key,
                start: self.buffer.len(),
                digest,
            }),
            None => self.let_go(),
        }
    }

    /// A directory closes with `digest`: matched, its records give way to
    /// its own (and its links'); else nothing above it can match.
    fn close(&mut self, key: &[u8], digest: &Digest, record: Record) {
        let top = self.held.last().is_some_and(|h| h.key == key);
        match self.held.pop_if(|_| top) {
            Some(held) if held.digest == *digest => {
                let below = self.buffer.split_off(held.start);
                let links = below
                    .into_iter()
                    .filter(|r| matches!(r.outcome, Outcome::Skipped(SpecialKind::Symlink)));
                self.buffer.extend(links);
                self.buffer.push(record);
            }
            _ => self.let_go(),
        }
        if self.held.is_empty() {
            self.let_go();
        }
    }

    /// Nothing held can match any more: every record held goes out.
    fn let_go(&mut self) {
        self.held.clear();
        for record in self.buffer.drain(..) {
            self.inner.record(record);
        }
    }

    /// A record of the run, after the held ones if any are held.
    fn pass(&mut self, record: Record) {
        match self.held.is_empty() {
            true => self.inner.record(record),
            false => self.buffer.push(record),
        }
    }
}

impl<S: Sink> Sink for &mut Pruner<S> {
    fn record(&mut self, record: Record) {
        let key = self.key(&record.path);
        // Anything outside the innermost held directory closes it unmatched.
        let inside = |h: &Held, key: &[u8]| {
            h.key.is_empty() || (key.starts_with(&h.key) && key.get(h.key.len()) == Some(&b'/'))
        };
        let outside = match (&key, self.held.last()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(key), Some(top)) => match record.outcome {
                Outcome::Directory(Some(_)) => top.key != *key && !inside(top, key),
                _ => !inside(top, key),
            },
        };
        if outside {
            self.let_go();
        }
        match (&record.outcome, key) {
            (Outcome::Directory(None), Some(key)) => self.open(key),
            (Outcome::Directory(Some(digest)), Some(key)) => {
                let digest = *digest;
                self.close(&key, &digest, record);
            }
            // The root's own "no directory digest" (its cause was said).
            (Outcome::Failed(_), Some(key)) if key.is_empty() => self.let_go(),
            (Outcome::Failed(_) | Outcome::WalkFailed(_), _) => {
                self.let_go();
                self.inner.record(record);
            }
            _ => self.pass(record),
        }
    }

    fn idle(&mut self) {
        self.inner.idle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{TreeHasher, TreeOptions};
    use crate::stage::Source;

    #[test]
    fn offers_round_trip_and_hostile_ones_are_refused() {
        let mut offers = Offers::new();
        offers.insert(Vec::new(), Algorithm::Md5.hash_bytes(b"a"));
        offers.insert(b"x/y\n\xff z".to_vec(), Algorithm::Md5.hash_bytes(b"b"));
        let bytes = offers.to_bytes();
        assert_eq!(Offers::parse(&bytes, Algorithm::Md5), Ok(offers.clone()));
        assert_eq!(Offers::parse(b"", Algorithm::Md5), Ok(Offers::new()));
        let hex = Algorithm::Md5.hash_bytes(b"a").to_hex();
        let refused = [
            (bytes[..bytes.len() - 1].to_vec(), "cut short"),
            (format!("{hex}x\0").into_bytes(), "no space"),
            (format!("{} a\0", &hex[1..]).into_bytes(), "not a digest"),
            (
                format!("{hex} a\0").replace(&hex[..2], "zz").into_bytes(),
                "not a digest",
            ),
            (format!("{hex} /a\0").into_bytes(), "separator"),
            (format!("{hex} a/\0").into_bytes(), "separator"),
            (format!("{hex} a\0{hex} a\0").into_bytes(), "twice"),
        ];
        for (input, why) in refused {
            let said = Offers::parse(&input, Algorithm::Md5).unwrap_err();
            assert!(said.contains(why), "{said} (wanted {why})");
        }
        // Another algorithm's digests.
        assert!(Offers::parse(&bytes, Algorithm::Sha256).is_err());
    }

    /// What a pruned run of `root` hands on: (path, what).
    fn pruned_run(root: &std::path::Path, offers: &Offers) -> Vec<(String, &'static str)> {
        let mut options = TreeOptions::new();
        options.recursive = true;
        options.walk.directories = true;
        let operands = [Source::Path(root.to_path_buf())];
        let mut seen = Vec::new();
        let sink = |record: Record| {
            let what = match record.outcome {
                Outcome::Hashed(_) => "file",
                Outcome::Directory(Some(_)) => "matched",
                Outcome::Skipped(SpecialKind::Symlink) => "link",
                Outcome::Failed(_) | Outcome::WalkFailed(_) => "failed",
                _ => return,
            };
            let path = record
                .path
                .strip_prefix(root)
                .unwrap()
                .display()
                .to_string();
            seen.push((path, what));
        };
        let mut pruner = Pruner::new(offers.clone(), root, sink);
        let mut digests =
            super::super::DirectoryDigests::new(Algorithm::Md5, &operands, &mut pruner).unwrap();
        TreeHasher::with_options(Algorithm::Md5, options)
            .run_into(&operands, &mut digests)
            .unwrap();
        digests.finish();
        drop(digests);
        pruner.finish();
        seen
    }

    /// The offers a receiver with the tree at `root` makes.
    fn offers_of(root: &std::path::Path) -> Offers {
        let mut offers = Offers::new();
        let hasher = TreeHasher::new(Algorithm::Md5);
        let found = &mut |path: &std::path::Path, digest: &Digest| {
            let key = path.strip_prefix(root).unwrap().display().to_string();
            offers.insert(key.into_bytes(), *digest);
        };
        hasher
            .tree_digests(root.to_path_buf(), found, &mut |_, _| {})
            .unwrap();
        offers
    }

    #[cfg(unix)]
    #[test]
    fn matching_sub_trees_are_one_record_and_the_rest_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, bytes) in [("a/deep/x", "1"), ("a/y", "2"), ("b/z", "3"), ("c", "4")] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), bytes).unwrap();
        }
        std::os::unix::fs::symlink("y", root.join("a/link")).unwrap();
        let offers = offers_of(root);
        assert_eq!(offers.len(), 4); // the root, a, a/deep, b
                                     // Unchanged: the root alone, and the link to count.
        let all = [("a/link".to_string(), "link"), (String::new(), "matched")];
        assert_eq!(pruned_run(root, &offers), all);
        // b changed: a goes as one record, b and the files beside it listed.
        std::fs::write(root.join("b/z"), "33").unwrap();
        let seen = pruned_run(root, &offers);
        let want = [
            ("a/link", "link"),
            ("a", "matched"),
            ("b/z", "file"),
            ("c", "file"),
        ];
        let want: Vec<_> = want.iter().map(|(p, w)| (p.to_string(), *w)).collect();
        assert_eq!(seen, want);
        // A directory the receiver lacks, inside a: a is listed, a/deep not.
        std::fs::create_dir(root.join("a/new")).unwrap();
        let seen = pruned_run(root, &offers);
        assert!(seen.contains(&("a/deep".into(), "matched")), "{seen:?}");
        assert!(seen.contains(&("a/y".into(), "file")), "{seen:?}");
        assert!(!seen.iter().any(|(p, _)| p == "a/deep/x"), "{seen:?}");
        // Offered with another digest: listed whole.
        let mut lying = offers.clone();
        lying.insert(b"a/deep".to_vec(), Algorithm::Md5.hash_bytes(b"other"));
        let seen = pruned_run(root, &lying);
        assert!(seen.contains(&("a/deep/x".into(), "file")), "{seen:?}");
    }
}
