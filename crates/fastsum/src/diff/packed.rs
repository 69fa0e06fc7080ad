//! What a diff must hold until its end, packed into one byte buffer: a
//! manifest read whole to be sorted, the entries only one side has (kept
//! for moves) and the changes (reported in path order once moves are
//! known). A record costs its path, its digest's bytes and about a dozen
//! bytes more, where the structs took ~430 bytes (a
//! 2M-record hashdeep list audited in 885 MB).

use std::path::PathBuf;

use super::side::Found;
use super::{Change, ChangeKind, Entry, EntryKind};
use crate::digest::Digest;

/// Records of one kind, each at its start in `bytes`.
#[derive(Default)]
pub(super) struct Packed {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

/// [`Found`]s (their keys as pushed; a held manifest's are taken off
/// their prefix as they are read back: `Founds::prefix`).
#[derive(Default)]
pub(super) struct Founds {
    packed: Packed,
    /// Taken off each key (after a leading `./`) where it starts with it.
    pub prefix: Vec<u8>,
    /// A found that memory could not hold: the side is an error
    /// ([`Founds::overflowed`]), never a shorter list, never an abort.
    overflowed: bool,
}

/// [`Change`]s.
#[derive(Default)]
pub(super) struct Changes(Packed);

impl Packed {
    fn start(&mut self) -> &mut Vec<u8> {
        self.starts.push(self.bytes.len());
        &mut self.bytes
    }

    fn record(&self, i: usize) -> Reader<'_> {
        Reader(&self.bytes[self.starts[i]..])
    }

    fn len(&self) -> usize {
        self.starts.len()
    }
}

impl Founds {
    /// Whether a found could not be held (memory ran out): the founds
    /// are not the side's.
    pub(super) fn overflowed(&self) -> bool {
        self.overflowed
    }

    pub(super) fn push(&mut self, found: &Found) {
        let path_len = found.path.as_ref().map_or(0, |p| p.as_os_str().len());
        // A length, flags, size and digest are under 100 bytes.
        let needed = found.key.len() + path_len + 100;
        if self.overflowed || self.packed.bytes.try_reserve(needed).is_err() {
            self.overflowed = true;
            return;
        }
        let out = self.packed.start();
        put_bytes(out, &found.key);
        let flags = kind_bits(found.kind)
            | u8::from(found.unreadable) << 2
            | u8::from(found.path.is_some()) << 3;
        out.push(flags);
        put_size_digest(out, found.size, found.digest.as_ref());
        if let Some(path) = &found.path {
            put_bytes(out, path.as_os_str().as_encoded_bytes());
        }
    }

    pub(super) fn len(&self) -> usize {
        self.packed.len()
    }

    /// The `i`th key, less the prefix.
    pub(super) fn key(&self, i: usize) -> &[u8] {
        let key = self.packed.record(i).bytes();
        let key = key.strip_prefix(b"./").unwrap_or(key);
        key.strip_prefix(&self.prefix[..]).unwrap_or(key)
    }

    /// The `i`th entry.
    pub(super) fn get(&self, i: usize) -> Found {
        let mut r = self.packed.record(i);
        r.bytes();
        let key = self.key(i).to_vec();
        let flags = r.byte();
        let (size, digest) = r.size_digest();
        let path = (flags & 8 != 0).then(|| crate::fs::name::path(r.bytes()).into_owned());
        Found {
            key,
            path,
            kind: kind_of(flags),
            size,
            digest,
            unreadable: flags & 4 != 0,
        }
    }

    /// In key order (stable: repeats keep the list's order). Sorted by
    /// each key's first 16 bytes held beside its index, the whole keys
    /// read only where those tie: comparing keys in the buffer alone
    /// misses the cache at every step (a 2M-line list sorted 3x slower).
    pub(super) fn sort(&mut self) {
        if (1..self.len()).all(|i| self.key(i - 1) <= self.key(i)) {
            return;
        }
        let head = |key: &[u8]| {
            let mut bytes = [0u8; 16];
            let n = key.len().min(16);
            bytes[..n].copy_from_slice(&key[..n]);
            u128::from_be_bytes(bytes)
        };
        let mut order: Vec<(u128, usize)> =
            (0..self.len()).map(|i| (head(self.key(i)), i)).collect();
        order.sort_unstable_by(|&(ha, a), &(hb, b)| {
            ha.cmp(&hb)
                .then_with(|| self.key(a).cmp(self.key(b)))
                .then(a.cmp(&b))
        });
        self.packed.starts = order.iter().map(|&(_, i)| self.packed.starts[i]).collect();
    }

    /// Every entry, in turn.
    pub(super) fn iter(&self) -> impl Iterator<Item = Found> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl Changes {
    pub(super) fn push(&mut self, change: &Change) {
        let out = self.0.start();
        out.push(kind_index(change.kind));
        let same_path =
            matches!((&change.old, &change.new), (Some(o), Some(n)) if o.path == n.path);
        let flags = u8::from(change.old.is_some())
            | u8::from(change.new.is_some()) << 1
            | u8::from(same_path) << 2;
        out.push(flags);
        for (i, entry) in [&change.old, &change.new].into_iter().enumerate() {
            let Some(entry) = entry else { continue };
            if i == 0 || !same_path {
                put_bytes(out, entry.path.as_os_str().as_encoded_bytes());
            }
            out.push(kind_bits(entry.kind));
            put_size_digest(out, entry.size, entry.digest.as_ref());
        }
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// The `i`th change.
    pub(super) fn get(&self, i: usize) -> Change {
        let mut r = self.0.record(i);
        let kind = KINDS[usize::from(r.byte())];
        let flags = r.byte();
        let entry = |r: &mut Reader, path: Option<PathBuf>| {
            let path = path.unwrap_or_else(|| crate::fs::name::path(r.bytes()).into_owned());
            let kind = kind_of(r.byte());
            let (size, digest) = r.size_digest();
            Entry {
                path,
                kind,
                size,
                digest,
            }
        };
        let old = (flags & 1 != 0).then(|| entry(&mut r, None));
        let shared = match (&old, flags & 4 != 0) {
            (Some(old), true) => Some(old.path.clone()),
            _ => None,
        };
        let new = (flags & 2 != 0).then(|| entry(&mut r, shared));
        Change { kind, old, new }
    }

    /// The path the `i`th change sorts by (its old one, or its new one
    /// for an addition) and its kind's name.
    fn sort_key(&self, i: usize) -> (&[u8], &'static str) {
        let mut r = self.0.record(i);
        let kind = KINDS[usize::from(r.byte())];
        r.byte();
        (r.bytes(), kind.name())
    }

    /// In path order, as `diff` reports.
    pub(super) fn sort(&mut self) {
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by(|&a, &b| self.sort_key(a).cmp(&self.sort_key(b)));
        self.0.starts = order.iter().map(|&i| self.0.starts[i]).collect();
    }
}

const KINDS: [ChangeKind; 6] = [
    ChangeKind::Added,
    ChangeKind::Modified,
    ChangeKind::Moved,
    ChangeKind::Removed,
    ChangeKind::Typechange,
    ChangeKind::Unchanged,
];

fn kind_index(kind: ChangeKind) -> u8 {
    KINDS.iter().position(|&k| k == kind).expect("every kind") as u8
}

fn kind_bits(kind: EntryKind) -> u8 {
    match kind {
        EntryKind::File => 0,
        EntryKind::Symlink => 1,
        EntryKind::Directory => 2,
    }
}

fn kind_of(flags: u8) -> EntryKind {
    match flags & 3 {
        0 => EntryKind::File,
        1 => EntryKind::Symlink,
        _ => EntryKind::Directory,
    }
}

/// A number, LEB128 (7 bits a byte, low first).
fn put_number(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A length (LEB128) and the bytes.
fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_number(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A size (a flag, then LEB128: most files' sizes take 2 or 3 bytes, not
/// 8; a list of 2M held twice by `audit` came to 14 bytes a file less)
/// and a digest (its length, 0 for none, then its bytes).
fn put_size_digest(out: &mut Vec<u8>, size: Option<u64>, digest: Option<&Digest>) {
    match size {
        Some(size) => {
            out.push(1);
            put_number(out, size);
        }
        None => out.push(0),
    }
    match digest {
        Some(d) => {
            out.push(d.len() as u8);
            out.extend_from_slice(d.as_bytes());
        }
        None => out.push(0),
    }
}

/// Reads a record back, field by field (the writer's own bytes: a short
/// record is a bug, and panics).
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().expect("a whole record");
        self.0 = rest;
        b
    }

    fn number(&mut self) -> u64 {
        let (mut n, mut shift) = (0u64, 0);
        loop {
            let b = self.byte();
            n |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return n;
            }
        }
    }

    fn bytes(&mut self) -> &'a [u8] {
        let n = self.number() as usize;
        let (bytes, rest) = self.0.split_at(n);
        self.0 = rest;
        bytes
    }

    fn size_digest(&mut self) -> (Option<u64>, Option<Digest>) {
        let size = match self.byte() {
            0 => None,
            _ => Some(self.number()),
        };
        let digest = match usize::from(self.byte()) {
            0 => None,
            n => {
                let (bytes, rest) = self.0.split_at(n);
                self.0 = rest;
                Some(Digest::from_bytes(bytes))
            }
        };
        (size, digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(key: &[u8], path: Option<&str>, size: Option<u64>, digest: Option<&[u8]>) -> Found {
        Found {
            key: key.to_vec(),
            path: path.map(PathBuf::from),
            kind: EntryKind::Symlink,
            size,
            digest: digest.map(Digest::from_bytes),
            unreadable: true,
        }
    }

    #[test]
    fn founds_come_back_as_they_went_in_sorted_and_stripped() {
        let long = vec![b'x'; 300];
        let items = [
            found(b"./p/b", None, Some(7), Some(&[1; 16])),
            found(b"p/a", Some("/t/p/a"), None, None),
            found(&long, None, Some(u64::MAX - 1), Some(&[9; 64])),
        ];
        let mut packed = Founds::default();
        items.iter().for_each(|f| packed.push(f));
        packed.prefix = b"p/".to_vec();
        packed.sort();
        let got: Vec<Found> = packed.iter().collect();
        let key = |f: &Found| f.key.clone();
        assert_eq!(
            got.iter().map(key).collect::<Vec<_>>(),
            [b"a".to_vec(), b"b".to_vec(), long]
        );
        assert_eq!(got[0].path, items[1].path);
        assert_eq!(
            (got[1].size, got[1].digest),
            (items[0].size, items[0].digest)
        );
        assert_eq!(
            (got[2].size, got[2].digest),
            (items[2].size, items[2].digest)
        );
        assert!(got
            .iter()
            .all(|f| f.unreadable && f.kind == EntryKind::Symlink));
    }

    #[test]
    fn changes_come_back_as_they_went_in_in_path_order() {
        let entry = |path: &str, size| Entry {
            path: PathBuf::from(path),
            kind: EntryKind::File,
            size,
            digest: Some(Digest::from_bytes(&[3; 20])),
        };
        let changes = [
            Change {
                kind: ChangeKind::Unchanged,
                old: Some(entry("b", Some(1))),
                new: Some(entry("b", None)),
            },
            Change {
                kind: ChangeKind::Moved,
                old: Some(entry("c", None)),
                new: Some(entry("a2", Some(2))),
            },
            Change {
                kind: ChangeKind::Added,
                old: None,
                new: Some(entry("a", None)),
            },
        ];
        let mut packed = Changes::default();
        changes.iter().for_each(|c| packed.push(c));
        packed.sort();
        let got: Vec<Change> = (0..packed.len()).map(|i| packed.get(i)).collect();
        assert_eq!(
            got,
            [changes[2].clone(), changes[0].clone(), changes[1].clone()]
        );
    }
}
