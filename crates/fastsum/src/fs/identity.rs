//! Which file system a file is on (issue 63.10): the cache's identity
//! rule. A stamp (kind, size, inode, device, mtime, ctime) tells versions
//! of a file apart on one file system, not file systems apart: two ext4
//! images made by `mkfs.ext4 -d` in the same second, mounted in turn
//! through one loop device, give their files the same stamp to the
//! nanosecond, bytes aside. So the cache keeps, beside each digest, the
//! [`FsId`] of the file system it was read on, and trusts the digest only
//! for a file on that file system; scrub compares bytes only there, and
//! says "another file system" where it differs.
//!
//! The id is `statfs`'s `f_fsid`: ext4 and Btrfs make it from the file
//! system's UUID (so it follows the file system to another device or
//! mount point, as a remount keeps its records), XFS, tmpfs and most
//! others from the device number (so no better than the stamp's device).
//! A file system that gives none says 0 ([`FsId::NONE`]), as does every
//! system other than Linux here: there the stamp's device stands alone, as
//! it did before; 0 is compared as any other id, not taken as a wildcard,
//! so a record made where an id was given is never trusted where none is.

use std::path::Path;

/// A file system's identity: `f_fsid`, its two 32-bit words as one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FsId(pub u64);

impl FsId {
    /// No id given (the file system has none, or the call failed).
    pub(crate) const NONE: FsId = FsId(0);

    /// The id of the file system holding `path` (`statfs`, following a
    /// symbolic link), [`FsId::NONE`] where there is none.
    pub(crate) fn of_path(path: &Path) -> FsId {
        #[cfg(target_os = "linux")]
        {
            let Ok(c_path) = std::ffi::CString::new(super::name::path_bytes(path)) else {
                return FsId::NONE;
            };
            // SAFETY: an all-zero statfs is a valid value of that plain C
            // struct, to be overwritten.
            let mut buf: libc::statfs = unsafe { std::mem::zeroed() };
            // SAFETY: c_path is NUL-terminated and outlives the call; buf
            // is a writable statfs.
            if unsafe { libc::statfs(c_path.as_ptr(), &mut buf) } != 0 {
                return FsId::NONE;
            }
            FsId::of_statfs(&buf)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = path;
            FsId::NONE
        }
    }

    /// `f_fsid` as one number. Read from `statfs` itself, not `statvfs`:
    /// musl's `statvfs` (the static build's) keeps only its first word.
    #[cfg(target_os = "linux")]
    fn of_statfs(buf: &libc::statfs) -> FsId {
        // SAFETY: fsid_t is two C ints (its field is private in the libc
        // crate); every bit pattern of [u32; 2] is valid, and the sizes
        // are checked by transmute.
        let words: [u32; 2] = unsafe { std::mem::transmute(buf.f_fsid) };
        FsId(u64::from(words[0]) | (u64::from(words[1]) << 32))
    }

    /// Whether the file system gives an id.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn is_known(self) -> bool {
        self != FsId::NONE
    }
}

/// The ids of the file systems a run meets, asked once per device number
/// (`statfs` is dearer than `stat`, and a cached run is nearly all
/// stats): kept for one run only, so a file system mounted in another's
/// place between runs is asked again. One mounted in its place during a
/// run, on the same device, between a file's stat and the first `statfs`
/// of that device, is not told: the run's reads are its own.
#[derive(Debug, Default)]
#[cfg_attr(not(any(feature = "cache", feature = "tree")), allow(dead_code))]
pub(crate) struct FsIds {
    known: Vec<(u64, FsId)>,
}

#[cfg_attr(not(any(feature = "cache", feature = "tree")), allow(dead_code))]
impl FsIds {
    /// The id of the file system on device `dev`, where `path` (a file
    /// whose stat said `dev`) lies.
    pub(crate) fn of(&mut self, dev: u64, path: &Path) -> FsId {
        if let Some(&(_, id)) = self.known.iter().find(|(d, _)| *d == dev) {
            return id;
        }
        let id = FsId::of_path(path);
        self.known.push((dev, id));
        id
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_file_and_its_directory_share_an_id_and_proc_has_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let here = FsId::of_path(dir.path());
        assert_eq!(FsId::of_path(&file), here);
        assert_ne!(FsId::of_path(Path::new("/proc/self")), here);
        assert_eq!(FsId::of_path(&dir.path().join("missing")), FsId::NONE);
        let mut ids = FsIds::default();
        // Asked once per device: a later path on that device is not asked.
        assert_eq!(ids.of(7, &file), here);
        assert_eq!(ids.of(7, Path::new("/proc/self")), here);
    }
}
