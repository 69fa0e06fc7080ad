//! Small file helpers of the dupes stages: byte comparison and the
//! directory entry a path names.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::fs::FileId;

/// Whether two files hold the same bytes (both regular files: what took
/// a walked file's place since is opened without waiting and is never
/// the same).
pub(crate) fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let open = |path| {
        crate::fs::residency::open_nonblocking(path)
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))
    };
    let (Some(mut x), Some(mut y)) = (open(a), open(b)) else {
        return false;
    };
    let (mut bx, mut by) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = read_full(&mut x, &mut bx);
        let m = read_full(&mut y, &mut by);
        match (n, m) {
            (Ok(n), Ok(m)) if n == m && bx[..n] == by[..m] => {
                if n < bx.len() {
                    return true;
                }
            }
            _ => return false,
        }
    }
    fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match f.read(&mut buf[filled..])? {
                0 => break,
                n => filled += n,
            }
        }
        Ok(filled)
    }
}

/// Which of `paths` to keep so that each directory entry is named once:
/// `d` and `d/../d`, a symlinked directory and its target, a walk with
/// `-L` can reach one file by several spellings, and acting on one of
/// them would act on the other. An entry is its directory (resolved, so
/// `..` and symlinks are seen through) and its name; only paths that share
/// an inode are compared. Of one entry, the path `rank` puts first stays.
pub(super) fn one_path_per_entry(
    paths: &[(&Path, FileId)],
    rank: impl Fn(&Path) -> usize,
) -> Vec<bool> {
    let mut keep = vec![true; paths.len()];
    // Hard links come in crowds (a snapshot tree): a directory is resolved
    // once, however many of its files share an inode with another.
    let mut resolved: HashMap<&Path, Option<PathBuf>> = HashMap::new();
    let mut by_id: Vec<usize> = (0..paths.len()).collect();
    by_id.sort_unstable_by_key(|&i| paths[i].1);
    for same_inode in by_id.chunk_by(|&a, &b| paths[a].1 == paths[b].1) {
        if same_inode.len() < 2 {
            continue;
        }
        // (entry, rank, spelling, index): sorted, an entry's best first.
        let mut entries: Vec<(Option<Entry>, usize, &[u8], usize)> = same_inode
            .iter()
            .map(|&i| {
                let path = paths[i].0;
                (entry(path, &mut resolved), rank(path), path_bytes(path), i)
            })
            .collect();
        entries.sort_unstable();
        for pair in entries.windows(2) {
            if pair[0].0.is_some() && pair[0].0 == pair[1].0 {
                keep[pair[1].3] = false;
            }
        }
    }
    keep
}

/// A directory entry: its directory resolved, and its name.
type Entry = (PathBuf, Vec<u8>);

/// A path's directory entry (`None` when the directory cannot be
/// resolved: the path then stands alone); directories resolved before are
/// in `resolved`.
fn entry<'a>(path: &'a Path, resolved: &mut HashMap<&'a Path, Option<PathBuf>>) -> Option<Entry> {
    let name = path.file_name()?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    let dir = resolved
        .entry(dir)
        .or_insert_with(|| std::fs::canonicalize(dir).ok())
        .clone()?;
    Some((dir, name.as_encoded_bytes().to_vec()))
}

/// A path's bytes.
pub(super) fn path_bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}
