//! The mounted overlays (overlayfs) and their layers, from
//! `/proc/self/mountinfo`: a file of an overlay's merged view and the
//! file of a layer under it are one file seen twice (two devices, the same
//! bytes), and removing the layer's file takes the merged view's with it.
//! Docker's and Podman's trees are exactly this.
//!
//! A layer is known by its directory's device and inode, not its path,
//! so that a bind mount of a layer (another path, the same directory) is
//! still that layer; a file is in a layer when one of the directories
//! above it is that layer's directory.

use std::path::{Path, PathBuf};

/// One mounted overlay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Overlay {
    /// Where it is mounted (as the mount table says).
    pub point: PathBuf,
    /// The device of its merged view (every file seen through it has it).
    pub dev: u64,
    /// Its layers' directories (lower, upper and data-only layers), as the
    /// mount table names them.
    pub layers: Vec<PathBuf>,
    /// The device and inode of each layer's directory that could be stat-ed.
    pub layer_ids: Vec<(u64, u64)>,
    /// A layer that could not be placed for certain (a relative path, as
    /// given at mount time from a directory unknown here, or one that
    /// cannot be stat-ed). A relative one is guessed where it most likely
    /// was, beside the mount point and in this process's working
    /// directory, each that is a directory counted as a layer (a wrong
    /// guess only refuses more); elsewhere a file in it is not known to be
    /// in a layer (the device rule of `dupes::scope` still keeps it from
    /// its view's file).
    pub unplaced: bool,
}

/// The overlays mounted now, their layers placed; none off Linux, or
/// where the mount table cannot be read.
#[cfg(target_os = "linux")]
pub(crate) fn mounted() -> Vec<Overlay> {
    let Ok(info) = std::fs::read("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut found = in_mountinfo(&info);
    for overlay in &mut found {
        place(overlay);
    }
    found
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn mounted() -> Vec<Overlay> {
    Vec::new()
}

/// overlayfs's `f_type` (`OVERLAYFS_SUPER_MAGIC`).
#[cfg(target_os = "linux")]
const OVERLAYFS_SUPER_MAGIC: u64 = 0x794c_7630;

/// Whether the file at `path` is seen through an overlay file system
/// (`statfs`'s type, so an overlay of any mount namespace, however its
/// layers were named); a path that cannot be asked counts as one (the
/// callers refuse to act on it: fail closed).
#[cfg(target_os = "linux")]
pub(crate) fn is_overlay(path: &Path) -> bool {
    super::mount::fs_type(path).is_none_or(|kind| kind == OVERLAYFS_SUPER_MAGIC)
}

/// No overlayfs off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn is_overlay(_path: &Path) -> bool {
    false
}

/// Each layer's directory stat-ed (its device and inode), or the overlay
/// marked `unplaced`.
#[cfg(target_os = "linux")]
fn place(overlay: &mut Overlay) {
    use std::os::unix::fs::MetadataExt;
    let cwd = std::env::current_dir().ok();
    for layer in &overlay.layers {
        if layer.is_absolute() {
            match std::fs::metadata(layer) {
                Ok(m) if m.is_dir() => overlay.layer_ids.push((m.dev(), m.ino())),
                _ => overlay.unplaced = true,
            }
            continue;
        }
        overlay.unplaced = true;
        let guesses = [overlay.point.parent(), cwd.as_deref()];
        for base in guesses.into_iter().flatten() {
            match std::fs::metadata(base.join(layer)) {
                Ok(m) if m.is_dir() && !overlay.layer_ids.contains(&(m.dev(), m.ino())) => {
                    overlay.layer_ids.push((m.dev(), m.ino()))
                }
                _ => {}
            }
        }
    }
}

/// The overlays of a mount table (`ID PARENT MAJOR:MINOR ROOT POINT
/// OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER-OPTIONS`, with space, tab,
/// newline, backslash and, in the options, comma written as octal
/// escapes). Their layers: `lowerdir=` (`:`-separated, `::` before
/// data-only layers), `lowerdir+=`, `datadir+=` and `upperdir=`. The
/// layers are not placed here.
#[cfg(target_os = "linux")]
pub(crate) fn in_mountinfo(info: &[u8]) -> Vec<Overlay> {
    let mut found = Vec::new();
    for line in info.split(|&b| b == b'\n') {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let Some(dash) = fields.iter().position(|f| *f == b"-") else {
            continue;
        };
        if fields.get(dash + 1) != Some(&&b"overlay"[..]) || fields.len() < 5 {
            continue;
        }
        let Some(dev) = device_number(fields[2]) else {
            continue;
        };
        let mut overlay = Overlay {
            point: path_of(super::mount::unescape(fields[4])),
            dev,
            ..Overlay::default()
        };
        let options = fields.get(dash + 3).copied().unwrap_or_default();
        for option in options.split(|&b| b == b',') {
            let option = super::mount::unescape(option);
            let (key, value) = match option.iter().position(|&b| b == b'=') {
                Some(at) => (&option[..at], &option[at + 1..]),
                None => continue,
            };
            match key {
                b"lowerdir" => overlay.layers.extend(
                    value
                        .split(|&b| b == b':')
                        .filter(|l| !l.is_empty())
                        .map(|l| path_of(l.to_vec())),
                ),
                b"lowerdir+" | b"datadir+" | b"upperdir" => {
                    overlay.layers.push(path_of(value.to_vec()))
                }
                _ => {}
            }
        }
        found.push(overlay);
    }
    found
}

/// `MAJOR:MINOR` as a device number.
#[cfg(target_os = "linux")]
fn device_number(field: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(field).ok()?;
    let (major, minor) = text.split_once(':')?;
    Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(target_os = "linux")]
fn path_of(bytes: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

impl Overlay {
    /// Whether a file on device `dev` is seen through this overlay's
    /// merged view.
    pub fn shows(&self, dev: u64) -> bool {
        dev == self.dev
    }

    /// Whether the file at `path` lies in one of this overlay's layers: a
    /// directory above its real path is a layer's directory.
    #[cfg(unix)]
    pub fn holds_in_a_layer(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(real) = std::fs::canonicalize(path) else {
            return false;
        };
        real.ancestors().skip(1).any(|dir| {
            std::fs::metadata(dir).is_ok_and(|m| self.layer_ids.contains(&(m.dev(), m.ino())))
        })
    }

    #[cfg(not(unix))]
    pub fn holds_in_a_layer(&self, _path: &Path) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn an_overlays_layers_are_read_from_its_options_escapes_and_all() {
        let info = b"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
            47 27 0:40 / /tmp/ov/m rw,relatime - overlay overlay rw,lowerdir=/l1:/l\\0542::/data,upperdir=/u\\040x,workdir=/w,uuid=on\n\
            48 27 0:41 / /m2 rw shared:5 - overlay none rw,lowerdir+=/a,datadir+=/b,upperdir=rel/u,workdir=/w2\n\
            49 27 0:42 / /not rw - tmpfs overlay rw,lowerdir=/x\n";
        let found = in_mountinfo(info);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].point, Path::new("/tmp/ov/m"));
        assert_eq!(found[0].dev, libc::makedev(0, 40));
        let layers = |o: &Overlay| {
            o.layers
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(layers(&found[0]), ["/l1", "/l,2", "/data", "/u x"]);
        assert_eq!(layers(&found[1]), ["/a", "/b", "rel/u"]);
        // The working directory is not a layer: no file is seen from it.
        assert!(!layers(&found[0]).contains(&"/w".to_string()));
    }

    #[test]
    fn a_relative_or_missing_layer_leaves_the_overlay_unplaced() {
        let dir = tempfile::tempdir().unwrap();
        let mut overlay = Overlay {
            layers: vec![dir.path().to_path_buf()],
            ..Overlay::default()
        };
        place(&mut overlay);
        assert!(!overlay.unplaced);
        assert_eq!(overlay.layer_ids.len(), 1);
        for layer in ["relative/dir/not/here", "/no/such/layer/here"] {
            let mut overlay = Overlay {
                layers: vec![PathBuf::from(layer)],
                ..Overlay::default()
            };
            place(&mut overlay);
            assert!(overlay.unplaced, "{layer}");
            assert!(overlay.layer_ids.is_empty(), "{layer}");
        }
    }

    /// A layer named by a relative path (`mount -o lowerdir=lower` run in
    /// the mount point's parent) is guessed beside the mount point: a file
    /// in it is held to be in a layer, though the overlay stays unplaced.
    #[test]
    fn a_relative_layer_is_guessed_beside_the_mount_point() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("lower/sub")).unwrap();
        std::fs::write(dir.path().join("lower/sub/f"), b"x").unwrap();
        std::fs::write(dir.path().join("elsewhere"), b"x").unwrap();
        let mut overlay = Overlay {
            point: dir.path().join("merged"),
            layers: vec![PathBuf::from("lower")],
            ..Overlay::default()
        };
        place(&mut overlay);
        assert!(overlay.unplaced);
        assert!(overlay.holds_in_a_layer(&dir.path().join("lower/sub/f")));
        assert!(!overlay.holds_in_a_layer(&dir.path().join("elsewhere")));
    }

    #[test]
    fn a_file_below_a_layers_directory_is_in_the_layer_by_any_path() {
        let dir = tempfile::tempdir().unwrap();
        let layer = dir.path().join("lower");
        std::fs::create_dir_all(layer.join("sub")).unwrap();
        std::fs::write(layer.join("sub/f"), b"x").unwrap();
        std::fs::write(dir.path().join("outside"), b"x").unwrap();
        std::os::unix::fs::symlink(&layer, dir.path().join("alias")).unwrap();
        let mut overlay = Overlay {
            layers: vec![layer.clone()],
            ..Overlay::default()
        };
        place(&mut overlay);
        assert!(overlay.holds_in_a_layer(&layer.join("sub/f")));
        assert!(overlay.holds_in_a_layer(&dir.path().join("alias/sub/f")));
        assert!(!overlay.holds_in_a_layer(&dir.path().join("outside")));
        // The layer's directory itself is not a file in it.
        assert!(!overlay.holds_in_a_layer(&layer));
    }
}
