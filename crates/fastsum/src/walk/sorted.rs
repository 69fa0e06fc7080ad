//! The sorted walk: one thread, each directory's entries sorted as their
//! paths sort, each subdirectory walked at its place, so that paths come
//! out in byte order without the whole list being held.

use std::path::Path;

use super::{error_at, Directory, Found, WalkItem, WalkOptions, Walker};
use crate::error::Result;

/// Walks `root` on the calling thread and hands every item to `sink` in
/// the byte order of their paths: the order sorting the whole list would
/// give, without holding it. Each directory's entries are sorted by name,
/// a directory's name taken with a `/` after it (`a.txt` comes before the
/// files of `a/`, as `.` sorts before `/`), and each subdirectory is walked
/// at its place. A directory that cannot be read is reported at its place.
///
/// An invalid exclude glob is the only error returned; everything else
/// arrives as [`WalkItem::Error`].
pub fn walk_sorted(
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
    /// The entries of `directory` in the order [`walk_sorted`] reports
    /// them; an error reading it comes last.
    pub(super) fn sorted_entries(&self, directory: &Directory) -> std::vec::IntoIter<Found> {
        let mut entries: Vec<(usize, bool, Found)> = Vec::new();
        let read = self.read(directory, &mut |name, is_dir, found| {
            entries.push((name.len(), is_dir, found));
        });
        fn name(found: &Found, len: usize) -> &[u8] {
            let path = found.path_bytes();
            &path[path.len().saturating_sub(len)..]
        }
        entries.sort_unstable_by(|a, b| compare_names(name(&a.2, a.0), a.1, name(&b.2, b.0), b.1));
        let mut entries: Vec<Found> = entries.into_iter().map(|(_, _, found)| found).collect();
        if let Err(e) = read {
            entries.push(Found::Item(error_at(&directory.path, e)));
        }
        entries.into_iter()
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
