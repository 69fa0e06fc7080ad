//! A stale digest across file systems: two ext4 images made
//! by `mkfs.ext4 -d` from trees whose files have the same size, other
//! bytes and the same times, mounted in turn on one path through one loop
//! device. Every field of the stamp is the same (kind, size, inode,
//! device, mtime and ctime to the nanosecond), only the file system is
//! another: its `f_fsid`, made from the image's UUID. The cache handed
//! B's file A's digest (`-r`, `-c` said OK, `diff` saw no change, exit 0)
//! and scrub called B's healthy file corrupted. Build pipelines make such
//! images every day (rootfs, firmware, fixtures).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::scrub::{ok, stderr, stdout};

/// The file both images hold, at the same inode, size and times.
const FILE: &str = "f";
/// Its times in both images (2023-11-14, long settled).
const EPOCH: &str = "1700000000";

/// Two images of one shape on one loop device, A mounted first.
struct Images {
    dir: tempfile::TempDir,
    device: String,
}

impl Images {
    /// `None` where loop-mounted ext4 cannot be made here. With `uuid`,
    /// both images have it (and its hash seed), as a reproducible build
    /// makes them: one `f_fsid`.
    fn new(uuid: Option<&str>) -> Option<Images> {
        let dir = tempfile::tempdir().ok()?;
        for (name, byte) in [("a", b'A'), ("b", b'B')] {
            let tree = dir.path().join(name);
            std::fs::create_dir(&tree).ok()?;
            std::fs::write(tree.join(FILE), vec![byte; 64 << 10]).ok()?;
            ok(Command::new("touch")
                .args(["-d", &format!("@{EPOCH}")])
                .arg(tree.join(FILE)))?;
            let image = dir.path().join(format!("{name}.img"));
            std::fs::File::create(&image).ok()?.set_len(16 << 20).ok()?;
            let mut mkfs = Command::new("mkfs.ext4");
            mkfs.args(["-q", "-F", "-b", "4096"]);
            if let Some(uuid) = uuid {
                mkfs.args(["-U", uuid, "-E", &format!("hash_seed={uuid}")]);
            }
            ok(mkfs.arg("-d").arg(&tree).arg(&image))?;
            // mkfs.ext4 -d copies mtime to the nanosecond and ctime as the
            // tree had it (when the tree was written): both set to the
            // same second, 0 ns, as a build that pins its times does.
            for field in [
                format!("ctime @{EPOCH}"),
                "ctime_extra 0".into(),
                "mtime_extra 0".into(),
            ] {
                ok(Command::new("debugfs")
                    .args(["-w", "-R", &format!("sif /{FILE} {field}")])
                    .arg(&image))?;
            }
        }
        let disk = dir.path().join("disk.img");
        std::fs::copy(dir.path().join("a.img"), &disk).ok()?;
        std::fs::create_dir(dir.path().join("mnt")).ok()?;
        let device = ok(Command::new("losetup").args(["-f", "--show"]).arg(&disk))?;
        let images = Images {
            dir,
            device: device.trim().to_string(),
        };
        images.mount()?;
        Some(images)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn mnt(&self) -> PathBuf {
        self.path().join("mnt")
    }

    fn mount(&self) -> Option<String> {
        ok(Command::new("mount")
            .args(["-o", "ro", &self.device])
            .arg(self.mnt()))
    }

    fn umount(&self) {
        let _ = Command::new("umount").arg(self.mnt()).status();
    }

    /// Image B in A's place: the loop device's backing file rewritten
    /// while unmounted, the device's buffers dropped, mounted again.
    fn swap_in_b(&self) {
        self.swap_in("b.img");
    }

    /// Image A back in its place, as `swap_in_b` does it.
    fn swap_in_a(&self) {
        self.swap_in("a.img");
    }

    fn swap_in(&self, image: &str) {
        self.umount();
        let disk = self.path().join("disk.img");
        std::fs::copy(self.path().join(image), disk).unwrap();
        assert!(Command::new("blockdev")
            .args(["--flushbufs", &self.device])
            .status()
            .unwrap()
            .success());
        self.mount().expect("B mounted");
    }
}

impl Drop for Images {
    fn drop(&mut self) {
        self.umount();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// What the cache compares of a file: kind, size, inode, device, mtime
/// and ctime to the nanosecond.
fn stamp(path: &Path) -> (u32, u64, u64, u64, i64, i64, i64, i64) {
    let m = std::fs::symlink_metadata(path).unwrap();
    (
        m.mode() & 0o170000,
        m.size(),
        m.ino(),
        m.dev(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

/// `stat -f`'s file system id.
fn fsid(path: &Path) -> String {
    ok(Command::new("stat").args(["-f", "-c", "%i"]).arg(path))
        .unwrap()
        .trim()
        .to_string()
}

fn fastsum(dir: &Path, args: &[&str]) -> Output {
    Command::new(crate::testenv::fastsum_bin())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The file's SHA-256 as Python's hashlib computes it.
fn sha256sum(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let script = "import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())";
    crate::testenv::python(script, &bytes).trim().to_string()
}

/// A cached and listed (A.sha256), then B in its place with every stamp
/// field the same: the images, and B's true digest. `None`: skipped.
fn a_cached_then_b() -> Option<(Images, String)> {
    a_cached_then_b_with(None)
}

/// [`a_cached_then_b`], both images of `uuid` when given (then their
/// `f_fsid` is one, and only the loop device's image tells them apart).
fn a_cached_then_b_with(uuid: Option<&str>) -> Option<(Images, String)> {
    if crate::testenv::lacks(&["mkfs.ext4", "debugfs", "losetup", "blockdev", "python3"]) {
        return None;
    }
    let Some(images) = Images::new(uuid) else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return None;
    };
    let file = images.mnt().join(FILE);
    let (a_stamp, a_fsid) = (stamp(&file), fsid(&images.mnt()));
    let a_digest = sha256sum(&file);
    let listed = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--cache=c.db", "mnt"],
    );
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert_eq!(
        stdout(&listed),
        format!("SHA256 (mnt/{FILE}) = {a_digest}\n")
    );
    std::fs::write(images.path().join("A.sha256"), &listed.stdout).unwrap();
    images.swap_in_b();
    // The class: every field the cache compared is the same, only the
    // file system differs.
    assert_eq!(stamp(&file), a_stamp, "the stamps of A's and B's file");
    match uuid {
        None => assert_ne!(fsid(&images.mnt()), a_fsid, "the file systems' ids"),
        Some(_) => assert_eq!(fsid(&images.mnt()), a_fsid, "one UUID, one f_fsid"),
    }
    let b_digest = sha256sum(&file);
    assert_ne!(b_digest, a_digest);
    Some((images, b_digest))
}

#[test]
fn a_cached_digest_is_not_given_to_a_file_on_another_file_system() {
    let Some((images, b_digest)) = a_cached_then_b() else {
        return;
    };
    let out = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--cache=c.db", "mnt"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("SHA256 (mnt/{FILE}) = {b_digest}\n"));
    // And what it learnt is B's: asked again, the same.
    let again = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--cache=c.db", "mnt"],
    );
    assert_eq!(stdout(&again), stdout(&out));
}

/// A.sha256 checked with the cache, B in A's place: FAILED, exit 1.
fn a_list_checked_with_the_cache_fails(images: &Images) {
    let out = fastsum(
        images.path(),
        &["-c", "-a", "sha256", "--cache=c.db", "A.sha256"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("mnt/{FILE}: FAILED\n"));
}

#[test]
fn a_list_checked_with_the_cache_on_another_file_system_fails() {
    let Some((images, _)) = a_cached_then_b() else {
        return;
    };
    a_list_checked_with_the_cache_fails(&images);
}

#[test]
fn diff_with_the_cache_sees_the_file_on_another_file_system_changed() {
    let Some((images, _)) = a_cached_then_b() else {
        return;
    };
    let out = fastsum(
        images.path(),
        &["diff", "-a", "sha256", "--cache=c.db", "A.sha256", "mnt"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("M\t{FILE}\n"));
}

#[test]
fn scrub_says_another_file_system_not_corrupted() {
    let Some((images, b_digest)) = a_cached_then_b() else {
        return;
    };
    let out = fastsum(
        images.path(),
        &["scrub", "-a", "sha256", "--cache=c.db", "mnt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("other-file-system\tmnt/{FILE}\n"));
    let said = stderr(&out);
    assert!(said.contains("0 corrupted"), "{said}");
    assert!(said.contains("1 on another file system"), "{said}");
    // B recorded as found: its next scrub verifies it, and the cache
    // answers B's digest.
    let out = fastsum(
        images.path(),
        &["scrub", "-a", "sha256", "--cache=c.db", "mnt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 verified"), "{}", stderr(&out));
    let listed = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--cache=c.db", "mnt"],
    );
    assert_eq!(
        stdout(&listed),
        format!("SHA256 (mnt/{FILE}) = {b_digest}\n")
    );
}

/// A `--json --stamps` list is its own cache (`--update`) and scrub's
/// record (`scrub --manifest`): made on A, it vouched for B's file by the
/// stamp alone (the update kept A's digest, exit 0; scrub called B's
/// healthy file corrupted). Its records now carry the file system's id
/// (`"fsid"`, as `stat -f` gives it), and the stamp vouches only there.
#[test]
fn a_stamped_list_vouches_only_on_the_file_system_it_was_made_on() {
    let Some((images, b_digest)) = a_cached_then_b() else {
        return;
    };
    // The list made on A: the cache of a_cached_then_b is not used here.
    images.swap_in_a();
    let listed = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--json", "--stamps", "mnt"],
    );
    assert!(listed.status.success(), "{}", stderr(&listed));
    // On a loop device the id is `f_fsid` mixed with the backing image's
    // identity (FsId::on_loop_device), so it is not `stat -f`'s: the
    // record names one, and the same file system again names the same.
    let record = stdout(&listed);
    let fsid_of = |record: &str| {
        let at = record.find("\"fsid\":").expect("an fsid field") + 7;
        let digits: String = record[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<u64>().unwrap()
    };
    let a_fsid = fsid_of(&record);
    assert_ne!(a_fsid, 0, "{record}");
    let relisted = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--json", "--stamps", "mnt"],
    );
    assert_eq!(fsid_of(&stdout(&relisted)), a_fsid);
    std::fs::write(images.path().join("A.json"), &listed.stdout).unwrap();
    std::fs::write(images.path().join("U.json"), &listed.stdout).unwrap();
    images.swap_in_b();
    let scrub = fastsum(images.path(), &["scrub", "--manifest=A.json"]);
    assert_eq!(scrub.status.code(), Some(0), "{}", stderr(&scrub));
    assert_eq!(stdout(&scrub), format!("other-file-system\tmnt/{FILE}\n"));
    assert!(stderr(&scrub).contains("0 corrupted"), "{}", stderr(&scrub));
    let update = fastsum(images.path(), &["-r", "--update=U.json", "mnt"]);
    assert!(update.status.success(), "{}", stderr(&update));
    let updated = std::fs::read_to_string(images.path().join("U.json")).unwrap();
    assert!(
        updated.contains(&format!("\"digest\":\"{b_digest}\"")),
        "the update read B's file: {updated}"
    );
}

/// Both images made with one UUID (`mkfs.ext4 -U`, as
/// reproducible builds make them), so `f_fsid` is one too, and B written
/// over A's image file while unmounted: only the loop device's backing
/// file (its change time, on this read-only mount) tells them apart. The
/// cache answered A's digest for B's file and `-c --cache` said OK.
#[test]
fn images_of_one_uuid_on_one_loop_device_are_two_file_systems() {
    let uuid = "5a1e0000-0000-4000-8000-00000000f2f2";
    let Some((images, b_digest)) = a_cached_then_b_with(Some(uuid)) else {
        return;
    };
    a_list_checked_with_the_cache_fails(&images);
    let out = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--cache=c.db", "mnt"],
    );
    assert_eq!(stdout(&out), format!("SHA256 (mnt/{FILE}) = {b_digest}\n"));
    // The same image mounted again (nothing written to it) is the same
    // file system: scrub verifies it rather than calling it another.
    let first = fastsum(
        images.path(),
        &["scrub", "-a", "sha256", "--cache=s.db", "mnt"],
    );
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    images.umount();
    images.mount().expect("B mounted again");
    let again = fastsum(
        images.path(),
        &["scrub", "-a", "sha256", "--cache=s.db", "mnt"],
    );
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stderr(&again).contains("1 verified"), "{}", stderr(&again));
}

/// An overlay over image A, then (A swapped for B, every
/// stamp field the same) an overlay over B on the same path: overlayfs
/// gives its upper layer's `f_fsid`, its own device and the lower file's
/// inode, so the cache answered A's digest for B's file, exit 0. The id
/// mixes the layers' own ids; the same layers mounted again still hit.
#[test]
fn an_overlay_over_another_image_is_another_file_system() {
    let Some((images, b_digest)) = a_cached_then_b() else {
        return;
    };
    images.swap_in_a();
    let dir = images.path();
    for sub in ["up", "work", "ov"] {
        std::fs::create_dir(dir.join(sub)).unwrap();
    }
    let options = format!(
        "lowerdir={},upperdir={},workdir={}",
        images.mnt().display(),
        dir.join("up").display(),
        dir.join("work").display()
    );
    let mount_overlay = || {
        ok(Command::new("mount")
            .args(["-t", "overlay", "overlay", "-o", &options])
            .arg(dir.join("ov")))
    };
    if mount_overlay().is_none() {
        return crate::testenv::skip("no overlayfs here");
    }
    let hashed = |cache: &str| {
        let out = fastsum(dir, &["-r", "-a", "sha256", cache, "--cache-stats", "ov"]);
        assert!(out.status.success(), "{}", stderr(&out));
        (stdout(&out), stderr(&out))
    };
    let (a_line, _) = hashed("--cache=o.db");
    assert!(!a_line.contains(&b_digest), "{a_line}");
    let _ = Command::new("umount").arg(dir.join("ov")).status();
    images.swap_in_b();
    mount_overlay().expect("the overlay over B");
    let (b_line, said) = hashed("--cache=o.db");
    assert_eq!(
        b_line,
        format!("SHA256 (ov/{FILE}) = {b_digest}\n"),
        "{said}"
    );
    let _ = Command::new("umount").arg(dir.join("ov")).status();
    mount_overlay().expect("the overlay over B again");
    let (again, said) = hashed("--cache=o.db");
    assert_eq!(again, b_line);
    assert!(said.contains("1 hit"), "{said}");
    let _ = Command::new("umount").arg(dir.join("ov")).status();
}

/// A loop device over another (loop1 -> loop0 -> the
/// image), mounted read-only: the backing "file" of loop1 is loop0's
/// device node, whose times say nothing of the image, so an image
/// rewritten in place under loop0 kept its id and the cache answered the
/// old digest, exit 0. The node's own device now brings its image in.
#[test]
fn a_loop_device_over_another_follows_the_image_beneath() {
    // One UUID, so only the image beneath tells A from B.
    let Some(images) = Images::new(Some("5a1e0000-0000-4000-8000-0000000100f3")) else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return;
    };
    images.umount();
    let Some(upper) = ok(Command::new("losetup").args(["-f", "--show", &images.device])) else {
        return crate::testenv::skip("no loop device over a loop device here");
    };
    let upper = upper.trim().to_string();
    let mount = || {
        ok(Command::new("mount")
            .args(["-o", "ro", &upper])
            .arg(images.mnt()))
    };
    let unmount = || {
        let _ = Command::new("umount").arg(images.mnt()).status();
    };
    mount().expect("the upper loop mounted");
    let first = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--cache=l.db", "mnt"],
    );
    assert!(first.status.success(), "{}", stderr(&first));
    unmount();
    let disk = images.path().join("disk.img");
    std::fs::copy(images.path().join("b.img"), &disk).unwrap();
    for device in [&images.device, &upper] {
        assert!(Command::new("blockdev")
            .args(["--flushbufs", device])
            .status()
            .unwrap()
            .success());
    }
    mount().expect("the upper loop mounted again");
    let b_digest = sha256sum(&images.mnt().join(FILE));
    let second = fastsum(
        images.path(),
        &["-r", "-a", "sha256", "--cache=l.db", "mnt"],
    );
    unmount();
    let _ = Command::new("losetup").args(["-d", &upper]).status();
    assert_eq!(
        stdout(&second),
        format!("SHA256 (mnt/{FILE}) = {b_digest}\n"),
        "{}",
        stderr(&second)
    );
    assert_ne!(stdout(&first), stdout(&second));
}
