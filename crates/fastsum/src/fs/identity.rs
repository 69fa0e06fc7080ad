//! Which file system a file is on: the cache's identity
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
            let id = FsId::of_statfs(&buf);
            if id.is_known() && buf.f_type as u64 == OVERLAYFS_SUPER_MAGIC {
                return id.through_overlay(path);
            }
            match std::fs::metadata(path) {
                Ok(meta) if id.is_known() => {
                    use std::os::unix::fs::MetadataExt;
                    id.on_loop_device(meta.dev(), &|| {
                        // SAFETY: an all-zero statvfs is a valid value of
                        // that plain C struct, to be overwritten.
                        let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
                        // SAFETY: c_path is NUL-terminated and outlives the
                        // call; vfs is a writable statvfs.
                        let ok = unsafe { libc::statvfs(c_path.as_ptr(), &mut vfs) } == 0;
                        ok && vfs.f_flag & libc::ST_RDONLY != 0
                    })
                }
                _ => id,
            }
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

    /// This id, told apart by the image a loop device reads: two
    /// images made with one UUID (`mkfs.ext4 -U`, as
    /// reproducible builds make them) give one `f_fsid`, and mounted in
    /// turn through one loop device, files of one size and pinned times
    /// are equal in every stamp field. So on a loop device (or a partition
    /// of one) the id is mixed with the backing file's device and inode
    /// and the device's offset and size limit, which a remount of the same
    /// image keeps; and, where the file system is mounted read-only, with
    /// the backing file's change time, which nothing through the mount
    /// changes (an image rebuilt in place, the same inode, is then another
    /// file system; a read-write mount changes that time itself, so there
    /// only a rebuild under a new inode is told). A loop device whose
    /// backing file cannot be found (deleted, in another mount namespace)
    /// gets an id of this run alone: never trusted by another run.
    #[cfg(target_os = "linux")]
    fn on_loop_device(self, dev: u64, read_only: &dyn Fn() -> bool) -> FsId {
        let Some(sys) = loop_sysfs(dev) else {
            return self;
        };
        let read = |name: &str| std::fs::read_to_string(sys.join(name)).unwrap_or_default();
        let backing = read("backing_file");
        let backing = backing.strip_suffix('\n').unwrap_or(&backing);
        let mut mix = blake3::Hasher::new();
        mix.update(b"fastsum fs identity: loop device\0");
        mix.update(&self.0.to_le_bytes());
        mix.update(read("offset").trim().as_bytes());
        mix.update(b"\0");
        mix.update(read("sizelimit").trim().as_bytes());
        mix.update(b"\0");
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(backing) {
            Ok(file) if !backing.is_empty() && !backing.ends_with(" (deleted)") => {
                mix.update(&file.dev().to_le_bytes());
                mix.update(&file.ino().to_le_bytes());
                let read_only = read_only();
                if read_only {
                    mix.update(&file.ctime().to_le_bytes());
                    mix.update(&file.ctime_nsec().to_le_bytes());
                }
                // A loop device over another (loop1 -> /dev/loop0 -> the
                // image): the node's times say nothing of the image, so
                // the device it names brings its own image in (without
                // it, the image rewritten under loop0 kept its id).
                use std::os::unix::fs::FileTypeExt;
                if file.file_type().is_block_device() {
                    let under = FsId(0).on_loop_device(file.rdev(), &|| read_only);
                    mix.update(&under.0.to_le_bytes());
                }
            }
            _ => {
                mix.update(b"this run only\0");
                mix.update(&run_nonce().to_le_bytes());
            }
        }
        FsId::of_mix(&mix)
    }

    /// This id, told apart by the layers of the overlay `path` is seen
    /// through: overlayfs gives the `f_fsid` of its upper
    /// layer's file system and its own device, and a lower file's inode,
    /// so an overlay over image A and one over image C (another UUID, the
    /// same times), mounted in turn on one path, were one file system to
    /// the cache. Mixed with each layer's own id ([`FsId::of_path`]: a
    /// layer on a loop device brings its image) and its directory's
    /// device and inode; an overlay whose layers cannot all be found gets
    /// an id of this run alone.
    #[cfg(target_os = "linux")]
    fn through_overlay(self, path: &Path) -> FsId {
        #[cfg(feature = "tree")]
        let overlay = {
            let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            super::overlay::mounted()
                .into_iter()
                .filter(|o| real.starts_with(&o.point))
                .max_by_key(|o| o.point.as_os_str().len())
                .filter(|o| !o.unplaced && o.layer_ids.len() == o.layers.len())
                .map(|o| o.layers.into_iter().zip(o.layer_ids).collect::<Vec<_>>())
        };
        // Without the walker no mount table is read: an id of this run.
        #[cfg(not(feature = "tree"))]
        let overlay: Option<Vec<(std::path::PathBuf, (u64, u64))>> = {
            let _ = path;
            None
        };
        let mut mix = blake3::Hasher::new();
        mix.update(b"fastsum fs identity: overlay\0");
        mix.update(&self.0.to_le_bytes());
        match overlay {
            Some(layers) => {
                for (layer, (dev, ino)) in &layers {
                    mix.update(&FsId::of_path(layer).0.to_le_bytes());
                    mix.update(&dev.to_le_bytes());
                    mix.update(&ino.to_le_bytes());
                }
            }
            _ => {
                mix.update(b"this run only\0");
                mix.update(&run_nonce().to_le_bytes());
            }
        }
        FsId::of_mix(&mix)
    }

    /// An id from a mix's first eight bytes, never [`FsId::NONE`].
    #[cfg(target_os = "linux")]
    fn of_mix(mix: &blake3::Hasher) -> FsId {
        let word = mix.finalize().as_bytes()[..8]
            .try_into()
            .map(u64::from_le_bytes)
            .unwrap_or(1);
        FsId(word.max(1))
    }

    /// Whether the file system gives an id.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn is_known(self) -> bool {
        self != FsId::NONE
    }
}

/// The sysfs directory of the loop device `dev` is, or is a partition
/// of (`/sys/dev/block/M:m/loop`, or its parent's); `None` for any other.
#[cfg(target_os = "linux")]
fn loop_sysfs(dev: u64) -> Option<std::path::PathBuf> {
    let block = std::path::PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(dev),
        libc::minor(dev)
    ));
    [block.join("loop"), block.join("../loop")]
        .into_iter()
        .find(|dir| dir.join("backing_file").is_file())
}

/// overlayfs's `f_type` (`OVERLAYFS_SUPER_MAGIC`).
#[cfg(target_os = "linux")]
const OVERLAYFS_SUPER_MAGIC: u64 = 0x794c_7630;

/// A number of this process alone, for ids no other run may share.
#[cfg(target_os = "linux")]
fn run_nonce() -> u64 {
    static NONCE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *NONCE.get_or_init(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        now ^ (u64::from(std::process::id()) << 40)
    })
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
