//! The kind of device a path lives on, for planning reads: a
//! rotational disk wants few reads, in the order of their place on the
//! platter; an SSD, NVMe or a virtual disk wants many at once in any order.
//!
//! On Linux the answer is sysfs's: the path's `st_dev` names
//! `/sys/dev/block/MAJ:MIN`, whose `queue/rotational` (or, for a
//! partition, its disk's) says 1 for a spinning disk. Device-mapper and md
//! devices report what their members are; loop devices what their backing
//! is. Virtio and Xen disks (`vd*`, `xvd*`) say 1 without knowing what is
//! behind them: on this project's VM a virtio disk measured as an SSD
//! (reads at depth 4-16 alike, bench/results/BENCHMARKS-LOG.md), so they count as
//! solid. File systems with no single block device (btrfs on several,
//! NFS, tmpfs) and every other OS count as solid: the default plan.

use std::path::Path;

/// How to plan reads for a device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiskKind {
    /// Find out from the device under each walked directory.
    #[default]
    Auto,
    /// Solid state (or unknown): many reads in flight, in walk order.
    Solid,
    /// A rotational disk: few reads in flight, files in inode order.
    Rotational,
}

impl DiskKind {
    /// The kind named `auto`, `ssd` or `hdd` (the CLI's `--disk`).
    pub fn from_name(name: &str) -> Option<DiskKind> {
        match name {
            "auto" => Some(DiskKind::Auto),
            "ssd" => Some(DiskKind::Solid),
            "hdd" => Some(DiskKind::Rotational),
            _ => None,
        }
    }

    /// `self`, or for [`DiskKind::Auto`] the kind of the device `path` is
    /// on.
    pub fn resolve(self, path: &Path) -> DiskKind {
        match self {
            DiskKind::Auto if rotational(path) => DiskKind::Rotational,
            DiskKind::Auto => DiskKind::Solid,
            kind => kind,
        }
    }

    /// The kind of each of `paths` (`None`: not a path, such as standard
    /// input: solid), asking sysfs once per device, and stating only the
    /// first of the paths in a row that share a directory: the others are
    /// taken to be on its device (a run of 50,000 listed files stated
    /// them all again only for this; a file bind-mounted alone from
    /// another disk is read as its neighbours are, which changes how
    /// reads are planned, never what is read).
    pub(crate) fn resolve_all<'a>(
        self,
        paths: impl IntoIterator<Item = Option<&'a Path>>,
    ) -> Vec<DiskKind> {
        let mut known: Vec<(u64, DiskKind)> = Vec::new();
        let mut last: Option<(&'a Path, DiskKind)> = None;
        paths
            .into_iter()
            .map(|path| match (self, path) {
                (DiskKind::Auto, Some(path)) => {
                    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
                    if let (Some(parent), Some((seen, kind))) = (parent, last) {
                        if seen == parent {
                            return kind;
                        }
                    }
                    let kind = match device_of(path) {
                        None => DiskKind::Solid,
                        Some(dev) => match known.iter().find(|(d, _)| *d == dev) {
                            Some(&(_, kind)) => kind,
                            None => {
                                let kind = if rotational_device(dev) {
                                    DiskKind::Rotational
                                } else {
                                    DiskKind::Solid
                                };
                                known.push((dev, kind));
                                kind
                            }
                        },
                    };
                    last = parent.map(|parent| (parent, kind));
                    kind
                }
                (DiskKind::Auto, None) => DiskKind::Solid,
                (kind, _) => kind,
            })
            .collect()
    }
}

/// Whether `path` is on a rotational disk (false when that cannot be
/// told).
pub fn rotational(path: &Path) -> bool {
    device_of(path).is_some_and(rotational_device)
}

/// The device number `path` is on (`st_dev`), where there is one.
fn device_of(path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| m.dev())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Whether device `dev` is a rotational disk.
fn rotational_device(dev: u64) -> bool {
    #[cfg(target_os = "linux")]
    {
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        rotational_in(Path::new("/sys/dev/block"), major, minor)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dev;
        false
    }
}

/// [`rotational`] for device `major:minor`, with sysfs's `dev/block`
/// directory at `block` (a test's stand-in tree, or the real one).
#[cfg(target_os = "linux")]
fn rotational_in(block: &Path, major: u32, minor: u32) -> bool {
    let Ok(device) = std::fs::canonicalize(block.join(format!("{major}:{minor}"))) else {
        return false;
    };
    // A partition has no queue of its own: its disk is its parent.
    let disk = if device.join("partition").exists() {
        match device.parent() {
            Some(parent) => parent.to_path_buf(),
            None => return false,
        }
    } else {
        device
    };
    let name = disk.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.starts_with("vd") || name.starts_with("xvd") {
        return false;
    }
    std::fs::read_to_string(disk.join("queue/rotational")).is_ok_and(|s| s.trim() == "1")
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::fs;

    /// A stand-in for `/sys`: `devices/<disk>` with a `queue/rotational`,
    /// partitions under it, and `dev/block/M:m` links to them.
    fn sysfs(disks: &[(&str, &str, &[&str])]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let block = root.path().join("dev/block");
        fs::create_dir_all(&block).unwrap();
        for (minor_base, (disk, rotational, partitions)) in disks.iter().enumerate() {
            let dir = root.path().join("devices").join(disk);
            fs::create_dir_all(dir.join("queue")).unwrap();
            fs::write(dir.join("queue/rotational"), format!("{rotational}\n")).unwrap();
            let base = 16 * minor_base;
            std::os::unix::fs::symlink(&dir, block.join(format!("8:{base}"))).unwrap();
            for (i, part) in partitions.iter().enumerate() {
                let p = dir.join(part);
                fs::create_dir_all(&p).unwrap();
                fs::write(p.join("partition"), format!("{}\n", i + 1)).unwrap();
                std::os::unix::fs::symlink(&p, block.join(format!("8:{}", base + i + 1))).unwrap();
            }
        }
        root
    }

    #[test]
    fn sysfs_says_which_disks_spin() {
        let root = sysfs(&[
            ("sda", "1", &["sda1", "sda2"]),
            ("nvme0n1", "0", &["nvme0n1p1"]),
            ("vda", "1", &["vda1"]),
            ("xvdb", "1", &[]),
        ]);
        let block = root.path().join("dev/block");
        let spins = |minor| rotational_in(&block, 8, minor);
        assert!(spins(0), "sda");
        assert!(spins(1) && spins(2), "sda's partitions");
        assert!(!spins(16) && !spins(17), "nvme and its partition");
        assert!(
            !spins(32) && !spins(33),
            "virtio says 1 but counts as solid"
        );
        assert!(!spins(48), "xen");
        assert!(!spins(99), "no such device");
    }

    #[test]
    fn a_kind_named_is_kept_and_auto_asks_the_device() {
        assert_eq!(DiskKind::from_name("hdd"), Some(DiskKind::Rotational));
        assert_eq!(DiskKind::from_name("ssd"), Some(DiskKind::Solid));
        assert_eq!(DiskKind::from_name("auto"), Some(DiskKind::Auto));
        assert_eq!(DiskKind::from_name("floppy"), None);
        let here = Path::new(".");
        assert_eq!(DiskKind::Rotational.resolve(here), DiskKind::Rotational);
        assert_eq!(DiskKind::Solid.resolve(here), DiskKind::Solid);
        let auto = DiskKind::Auto.resolve(here);
        assert_eq!(auto == DiskKind::Rotational, rotational(here));
        // /proc has no block device: solid, the default plan.
        assert_eq!(DiskKind::Auto.resolve(Path::new("/proc")), DiskKind::Solid);
        let all = DiskKind::Auto.resolve_all([Some(here), None, Some(Path::new("/proc"))]);
        assert_eq!(all, [auto, DiskKind::Solid, DiskKind::Solid]);
        let told = DiskKind::Rotational.resolve_all([Some(here), None]);
        assert_eq!(told, [DiskKind::Rotational, DiskKind::Rotational]);
        // Paths in a row in one directory are on its first's device; each
        // new directory is asked again.
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, b"a").unwrap();
        fs::write(&b, b"b").unwrap();
        let kind = DiskKind::Auto.resolve(&a);
        let proc_ = Path::new("/proc/self/status");
        let row = DiskKind::Auto.resolve_all([Some(a.as_path()), Some(b.as_path()), Some(proc_)]);
        assert_eq!(row, [kind, kind, DiskKind::Solid]);
    }
}

/// File systems whose files are made as they are read (their size says
/// nothing of their bytes, and their stamp does not move when the bytes
/// do): never cached.
#[cfg(target_os = "linux")]
const GENERATED: &[&str] = &[
    "proc",
    "sysfs",
    "debugfs",
    "tracefs",
    "securityfs",
    "configfs",
    "cgroup",
    "cgroup2",
    "pstore",
    "efivarfs",
    "bpf",
    "fusectl",
    "binfmt_misc",
    "devpts",
    "mqueue",
];

/// Whether the device `dev` (a stat's `st_dev`) holds a file system whose
/// files are generated as they are read (`/proc`, `/sys` ...): read from
/// `/proc/self/mountinfo` once.
#[cfg(target_os = "linux")]
pub(crate) fn generated(dev: u64) -> bool {
    static DEVICES: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    DEVICES
        .get_or_init(|| {
            std::fs::read_to_string("/proc/self/mountinfo")
                .map(|text| generated_devices(&text))
                .unwrap_or_default()
        })
        .contains(&dev)
}

/// Off Linux no such file system is known here.
#[cfg(not(target_os = "linux"))]
pub(crate) fn generated(_dev: u64) -> bool {
    false
}

/// File systems whose pages are never written back (memory only): a write
/// through a shared mapping there never moves the file's stamp again,
/// so no stamp of theirs vouches for the bytes.
#[cfg(target_os = "linux")]
const NEVER_WRITTEN_BACK: &[&str] = &["tmpfs", "ramfs", "hugetlbfs"];

/// Whether a stamp on the device `dev` can never vouch for the file's
/// bytes: a generated file system ([`generated`]) or one never written
/// back (`tmpfs`, `ramfs`: `/dev/shm`, often `/tmp`). Such files are read
/// every time, never cached, never stamped in a list.
#[cfg(target_os = "linux")]
pub(crate) fn stamps_unreliable(dev: u64) -> bool {
    static DEVICES: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    generated(dev)
        || DEVICES
            .get_or_init(|| {
                std::fs::read_to_string("/proc/self/mountinfo")
                    .map(|text| devices_of(&text, NEVER_WRITTEN_BACK))
                    .unwrap_or_default()
            })
            .contains(&dev)
}

/// Off Linux no such file system is known here.
#[cfg(not(target_os = "linux"))]
pub(crate) fn stamps_unreliable(_dev: u64) -> bool {
    false
}

/// The devices of `mountinfo`'s generated file systems.
#[cfg(target_os = "linux")]
fn generated_devices(mountinfo: &str) -> Vec<u64> {
    devices_of(mountinfo, GENERATED)
}

/// The devices of `mountinfo`'s file systems of the `types`: a line is
/// `ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE ...`.
#[cfg(target_os = "linux")]
fn devices_of(mountinfo: &str, types: &[&str]) -> Vec<u64> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let device = line.split(' ').nth(2)?;
            let (_, after) = line.split_once(" - ")?;
            let fstype = after.split(' ').next()?;
            types.contains(&fstype).then_some(())?;
            let (major, minor) = device.split_once(':')?;
            Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
        })
        .collect()
}

#[cfg(all(test, target_os = "linux"))]
mod generated_tests {
    #[test]
    fn proc_and_sys_are_generated_and_the_temporary_directory_is_not() {
        use std::os::unix::fs::MetadataExt;
        let dev = |p: &str| std::fs::metadata(p).unwrap().dev();
        assert!(super::generated(dev("/proc/version")));
        assert!(super::generated(dev("/sys/kernel")));
        assert!(!super::generated(dev(&std::env::temp_dir()
            .display()
            .to_string())));
        let sample = "22 1 0:21 / /proc rw - proc proc rw\n\
                      30 1 8:1 / / rw shared:1 - ext4 /dev/sda1 rw\n";
        assert_eq!(super::generated_devices(sample), vec![libc::makedev(0, 21)]);
    }
}
