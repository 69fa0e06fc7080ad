//! One large file hashed with BLAKE3 by every thread, in bounded memory.
//!
//! b3sum maps the whole file and lets `update_rayon` split it, so its RSS
//! grows to the file's size (5 GiB for the sparse corpus file). Feeding
//! `update_rayon` one bounded window at a time keeps memory flat but makes
//! every thread wait at the end of each window (0.97x b3sum on 1 GiB).
//!
//! Instead, BLAKE3's tree is split here the way BLAKE3 itself defines it
//! ([`hazmat::left_subtree_len`]): halves are hashed with `rayon::join`
//! down to leaves of at most [`LEAF_LEN`] bytes; each leaf is mapped, hashed
//! as a subtree at its offset on one thread, and unmapped; chaining values
//! are merged on the way up. Threads never wait for each other until the
//! merges, and at most one leaf per thread is mapped at any moment, so the
//! mapped pages (which count in RSS) stay under `threads × LEAF_LEN`.

use super::Meter;
use std::fs::File;

use blake3::hazmat::{self, ChainingValue, HasherExt, Mode};

use super::mmap;
use crate::digest::Digest;
use crate::error::ErrorKind;

/// The largest subtree hashed by one thread from one map: a power of two
/// (so leaves are whole BLAKE3 subtrees) that keeps two threads' windows
/// at 16 MiB in all.
pub const LEAF_LEN: u64 = 8 * 1024 * 1024;

/// The BLAKE3 digest of `file`'s first `len` bytes (`len` > [`LEAF_LEN`]),
/// hashed on rayon's threads. The size is checked again at the end: a file
/// that changed size is [`ErrorKind::ChangedWhileReading`].
pub(crate) fn hash_file(file: &File, len: u64, meter: &Meter) -> Result<Digest, ErrorKind> {
    assert!(len > LEAF_LEN, "small inputs have no parent nodes");
    let left_len = hazmat::left_subtree_len(len);
    let (left, right) = rayon::join(
        || subtree(file, 0, left_len, meter),
        || subtree(file, left_len, len - left_len, meter),
    );
    let root = hazmat::merge_subtrees_root(&left?, &right?, Mode::Hash);
    if file.metadata()?.len() != len {
        return Err(ErrorKind::ChangedWhileReading);
    }
    Ok(Digest::from_bytes(root.as_bytes()))
}

/// The chaining value of the subtree of `len` bytes at `offset`.
fn subtree(file: &File, offset: u64, len: u64, meter: &Meter) -> Result<ChainingValue, ErrorKind> {
    if len <= LEAF_LEN {
        let cv = mmap::with_window(file, offset, len as usize, |bytes| {
            let mut hasher = blake3::Hasher::new();
            hasher.set_input_offset(offset);
            hasher.update(bytes);
            hasher.finalize_non_root()
        })?;
        meter.add(len);
        return Ok(cv);
    }
    let left_len = hazmat::left_subtree_len(len);
    let (left, right) = rayon::join(
        || subtree(file, offset, left_len, meter),
        || subtree(file, offset + left_len, len - left_len, meter),
    );
    Ok(hazmat::merge_subtrees_non_root(&left?, &right?, Mode::Hash))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn matches_plain_blake3_at_awkward_lengths() {
        let data: Vec<u8> = (0..(3 * LEAF_LEN as usize + 5000))
            .map(|i| (i % 251) as u8)
            .collect();
        for len in [
            LEAF_LEN + 1,
            2 * LEAF_LEN,
            2 * LEAF_LEN + 1024,
            3 * LEAF_LEN + 5000,
        ] {
            let mut f = tempfile::tempfile().unwrap();
            f.write_all(&data[..len as usize]).unwrap();
            let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            let ours = hash_file(&f, len, &Meter::counting(counter.clone())).unwrap();
            assert_eq!(
                ours.as_bytes(),
                blake3::hash(&data[..len as usize]).as_bytes(),
                "{len}"
            );
            assert_eq!(counter.load(std::sync::atomic::Ordering::Relaxed), len);
        }
    }

    #[test]
    fn a_file_that_shrank_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shrinks");
        std::fs::write(&path, vec![1u8; 3 * LEAF_LEN as usize]).unwrap();
        let file = File::open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(LEAF_LEN)
            .unwrap();
        assert!(matches!(
            hash_file(&file, len, &Meter::default()),
            Err(ErrorKind::ChangedWhileReading)
        ));
    }
}
