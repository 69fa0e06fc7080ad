//! Where a directory is on its file system, whatever that file system is
//! mounted on: the file system's id (`f_fsid`, which ext4 and
//! Btrfs derive from the file system's UUID, so it stays the same on
//! another device or mount point: `super::identity`) and the path within the file system
//! (the mount's root joined with the path below its mount point, from
//! `/proc/self/mountinfo`). A scrub keeps its roots under this key, so a
//! disk mounted at another place (a USB disk under another name) is still
//! compared with what was recorded, not taken as new.

use std::path::Path;

/// A directory's place on its file system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MountKey {
    /// The file system's id (never 0: a file system that gives none has
    /// no key).
    pub fsid: u64,
    /// The path within the file system (`/` for its root).
    pub within: Vec<u8>,
}

/// The key of the directory at `canonical` (a canonical absolute path);
/// `None` where the system cannot tell (no `f_fsid`, no mount table).
#[cfg(target_os = "linux")]
pub(crate) fn mount_key(canonical: &Path) -> Option<MountKey> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(canonical).ok()?.dev();
    let fsid = super::FsId::of_path(canonical);
    let fsid = fsid.is_known().then_some(fsid.0)?;
    let mountinfo = std::fs::read("/proc/self/mountinfo").ok()?;
    let within = within_of(&mountinfo, super::name::path_bytes(canonical), dev)?;
    Some(MountKey { fsid, within })
}

/// Off Linux the mount table is not read here: no key.
#[cfg(not(target_os = "linux"))]
pub(crate) fn mount_key(_canonical: &Path) -> Option<MountKey> {
    None
}

/// The id of the mount `path` is on (`statx`'s `stx_mnt_id`, without
/// following a last symbolic link): two paths on one file system but two
/// mounts of it (a bind mount) cannot be hard-linked or reflinked
/// together (EXDEV). `None` where the kernel does not say (before 5.8).
#[cfg(target_os = "linux")]
pub(crate) fn mount_id(path: &Path) -> Option<u64> {
    let c_path = std::ffi::CString::new(super::name::path_bytes(path)).ok()?;
    // SAFETY: an all-zero statx is a valid value of that plain C struct,
    // to be overwritten.
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is NUL-terminated and outlives the call; buf is a
    // writable statx.
    let r = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c_path.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            libc::STATX_MNT_ID,
            &mut buf,
        )
    };
    (r == 0 && buf.stx_mask & libc::STATX_MNT_ID != 0).then_some(buf.stx_mnt_id)
}

/// Off Linux no mount id.
#[cfg(not(target_os = "linux"))]
pub(crate) fn mount_id(_path: &Path) -> Option<u64> {
    None
}

/// The type of the file system `path` is on (`statfs`'s `f_type`, its
/// 32 bits); `None` if it cannot be asked.
#[cfg(target_os = "linux")]
pub(crate) fn fs_type(path: &Path) -> Option<u64> {
    let c_path = std::ffi::CString::new(super::name::path_bytes(path)).ok()?;
    // SAFETY: an all-zero statfs is a valid value of that plain C struct,
    // to be overwritten.
    let mut buf: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is NUL-terminated and outlives the call; buf is a
    // writable statfs.
    if unsafe { libc::statfs(c_path.as_ptr(), &mut buf) } != 0 {
        return None;
    }
    // f_type is signed on some targets; the magic fits in 32 bits.
    #[allow(clippy::unnecessary_cast)]
    Some(buf.f_type as u64 & 0xffff_ffff)
}

/// Off Linux no file system type.
#[cfg(not(target_os = "linux"))]
pub(crate) fn fs_type(_path: &Path) -> Option<u64> {
    None
}

/// The path within its file system of `path` on the device `dev`: of the
/// mounts of that device whose mount point holds `path`, the deepest (the
/// last of equals: a later mount hides an earlier one), its root joined
/// with what `path` has below the mount point. A line of `mountinfo` is
/// `ID PARENT MAJOR:MINOR ROOT POINT OPTIONS ...`, with space, tab,
/// newline and backslash written as octal escapes.
#[cfg(target_os = "linux")]
fn within_of(mountinfo: &[u8], path: &[u8], dev: u64) -> Option<Vec<u8>> {
    let device = format!("{}:{}", libc::major(dev), libc::minor(dev));
    let mut best: Option<(Vec<u8>, Vec<u8>)> = None;
    for line in mountinfo.split(|&b| b == b'\n') {
        let mut fields = line.split(|&b| b == b' ').skip(2);
        let (Some(d), Some(root), Some(point)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (root, point) = (unescape(root), unescape(point));
        let below = match path.strip_prefix(&point[..]) {
            Some(rest) if point == b"/" || rest.is_empty() || rest.starts_with(b"/") => rest,
            _ => continue,
        };
        let deeper = best.as_ref().is_none_or(|(p, _)| point.len() >= p.len());
        if d == device.as_bytes() && deeper {
            let mut within = root;
            if !below.is_empty() && !below.starts_with(b"/") && !within.ends_with(b"/") {
                within.push(b'/');
            }
            if within.ends_with(b"/") && below.starts_with(b"/") {
                within.pop();
            }
            within.extend_from_slice(below);
            best = Some((point, within));
        }
    }
    best.map(|(_, within)| within)
}

/// `\NNN` octal escapes made bytes again.
#[cfg(target_os = "linux")]
pub(super) fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') << 6 | (d[1] - b'0') << 3 | (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_path_within_is_the_mounts_root_joined_with_what_is_below_it() {
        let dev = libc::makedev(7, 3);
        let info = b"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
            30 1 7:3 / /mnt/a\\040disk rw - ext4 /dev/loop3 rw\n\
            31 1 7:3 /sub /srv/bind rw - ext4 /dev/loop3 rw\n\
            32 30 7:4 / /mnt/a\\040disk/inner rw - ext4 /dev/loop4 rw\n";
        let within = |path: &str| within_of(info, path.as_bytes(), dev);
        assert_eq!(within("/mnt/a disk/x/y").as_deref(), Some(&b"/x/y"[..]));
        assert_eq!(within("/mnt/a disk").as_deref(), Some(&b"/"[..]));
        assert_eq!(within("/srv/bind/z").as_deref(), Some(&b"/sub/z"[..]));
        assert_eq!(within("/srv/bind").as_deref(), Some(&b"/sub"[..]));
        // Not below a mount of that device (a prefix of a name is not a
        // directory above it).
        assert_eq!(within("/mnt/a diskette"), None);
        assert_eq!(
            within_of(info, b"/etc", libc::makedev(8, 1)).as_deref(),
            Some(&b"/etc"[..])
        );
    }

    #[test]
    fn a_directory_has_a_key_and_the_same_key_by_another_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        let Some(key) = mount_key(&canonical) else {
            return; // a file system without f_fsid
        };
        assert_ne!(key.fsid, 0);
        assert!(key
            .within
            .ends_with(canonical.file_name().unwrap().as_encoded_bytes()));
    }
}
