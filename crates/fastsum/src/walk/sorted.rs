//! The sorted walk: one thread, each directory's entries sorted as their
//! paths sort, each subdirectory walked at its place, so that paths come
//! out in byte order without the whole list being held.

use std::path::Path;

use super::{error_at, Directory, Found, WalkItem, WalkOptions, Walker};
use crate::error::Result;

/// [`WalkOptions::walk_sorted`].
pub(super) fn walk_sorted(
    root: &Path,
    options: &WalkOptions,
    sink: &mut dyn FnMut(WalkItem),
) -> Result<()> {
    let (walker, top) = match Walker::new(root, options)? {
        Ok(start) => start,
        Err(item) => {
            sink(item);
            return Ok(());
        }
    };
    let mut stack = vec![walker.sorted_entries(&top)];
    while let Some(entries) = stack.last_mut() {
        match entries.next() {
            None => {
                stack.pop();
            }
            Some(Found::File { .. }) => unreachable!("Listed hands files out with their paths"),
            Some(Found::Item(item)) => sink(item),
            Some(Found::Directory(directory)) => {
                if options.directories {
                    let path = crate::fs::name::path_buf(directory.path.clone());
                    sink(WalkItem::Directory { path });
                }
                stack.push(walker.sorted_entries(&directory))
            }
        }
    }
    Ok(())
}

impl Walker<'_> {
    /// The entries of `directory` in the order [`WalkOptions::walk_sorted`] reports
    /// them; an error reading it comes last.
    pub(super) fn sorted_entries(&self, directory: &Directory) -> Listed {
        let mut listed = Listed::default();
        let read = self.read(directory, &mut |name, is_dir, found| {
            listed.push(name, is_dir, found)
        });
        let names = &listed.names;
        let name = |e: &Entry| &names[e.start..e.start + e.len as usize];
        listed
            .entries
            .sort_unstable_by(|a, b| compare_names(name(a), a.is_dir, name(b), b.is_dir));
        listed.error = read.err().map(|e| error_at(&directory.path, e));
        listed.directory = directory.path.clone();
        listed
    }
}

/// A directory's entries held until their turn, compactly: a directory
/// of 300,000 files took 150 bytes an entry when each was held with its
/// whole path (and twice as much while sorting), and the sorted walk
/// holds every directory on the way down from the root. Names
/// sit in one buffer; a file is its name's place and two numbers, its
/// path made when it is handed out; anything else (subdirectories,
/// special files, errors: few) is held as it was found.
#[derive(Default)]
pub(super) struct Listed {
    names: Vec<u8>,
    entries: Vec<Entry>,
    others: Vec<Option<Found>>,
    /// Reading the directory failed part way: reported after its entries.
    error: Option<WalkItem>,
    /// The directory's own path, for its entries'.
    directory: Vec<u8>,
    next: usize,
}

/// One entry of [`Listed`]: 48 bytes and its name.
struct Entry {
    start: usize,
    len: u32,
    is_dir: bool,
    what: What,
}

enum What {
    File { size: Option<u64>, ino: u64 },
    Other(usize),
}

impl Listed {
    fn push(&mut self, name: &[u8], is_dir: bool, found: Found) {
        let what = match found {
            Found::File { size, ino } => What::File { size, ino },
            other => {
                self.others.push(Some(other));
                What::Other(self.others.len() - 1)
            }
        };
        self.entries.push(Entry {
            start: self.names.len(),
            len: u32::try_from(name.len()).expect("a name under 4 GiB"),
            is_dir,
            what,
        });
        self.names.extend_from_slice(name);
    }
}

impl Iterator for Listed {
    type Item = Found;

    fn next(&mut self) -> Option<Found> {
        let Some(entry) = self.entries.get(self.next) else {
            return self.error.take().map(Found::Item);
        };
        self.next += 1;
        Some(match entry.what {
            What::File { size, ino } => {
                let name = &self.names[entry.start..entry.start + entry.len as usize];
                Found::Item(WalkItem::File {
                    path: super::child_path(&self.directory, name),
                    size,
                    ino,
                })
            }
            What::Other(i) => self.others[i].take().expect("handed out once"),
        })
    }
}

/// Orders two names of one directory as their paths sort, a directory's
/// name standing for every path under it: as if it ended in `/`.
fn compare_names(a: &[u8], a_is_dir: bool, b: &[u8], b_is_dir: bool) -> std::cmp::Ordering {
    let common = a.len().min(b.len());
    a[..common].cmp(&b[..common]).then_with(|| {
        let slash = |is_dir: bool| is_dir.then_some(&b'/');
        a[common..]
            .iter()
            .chain(slash(a_is_dir))
            .cmp(b[common..].iter().chain(slash(b_is_dir)))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_entry_held_is_small() {
        // What a large directory costs while it is walked: this and the
        // name (was about 150 bytes, a path allocated for each).
        assert!(std::mem::size_of::<super::Entry>() <= 48);
    }
}
