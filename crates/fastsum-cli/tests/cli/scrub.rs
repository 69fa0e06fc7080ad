//! `fastsum scrub`: real silent corruption, made on a
//! loop-mounted ext4 by writing a file's block through the device while
//! the file system is unmounted (its size, inode, mtime and ctime stay as
//! they were), found and told apart from normal edits; then the long-run
//! options: resume after a kill, not-due entries, the algorithm kept
//! apart, unreadable files.

use crate::testenv::TestEnv;

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn scrub(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(crate::testenv::fastsum_bin())
        .arg("scrub")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

pub(crate) fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the cache stores must be older than its racy window (2 s).
pub(crate) fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2200));
}

pub(crate) fn ok(command: &mut Command) -> Option<String> {
    let out = command.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A small ext4 in a file, on a loop device held for the test, mounted.
pub(crate) struct Ext4 {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) device: String,
}

impl Ext4 {
    pub(crate) fn new() -> Option<Ext4> {
        let dir = tempfile::tempdir().ok()?;
        let image = dir.path().join("image");
        std::fs::File::create(&image).ok()?.set_len(16 << 20).ok()?;
        std::fs::create_dir(dir.path().join("mnt")).ok()?;
        ok(Command::new("mkfs.ext4")
            .args(["-q", "-F", "-b", "4096"])
            .arg(&image))?;
        let device = ok(Command::new("losetup").args(["-f", "--show"]).arg(&image))?;
        let ext4 = Ext4 {
            dir,
            device: device.trim().to_string(),
        };
        ext4.mount()?;
        Some(ext4)
    }

    pub(crate) fn mnt(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }

    pub(crate) fn mount(&self) -> Option<String> {
        ok(Command::new("mount").arg(&self.device).arg(self.mnt()))
    }

    pub(crate) fn umount(&self) {
        let _ = Command::new("umount").arg(self.mnt()).status();
    }

    /// Writes `bytes` over the start of `file`'s first block through the
    /// device, the file system unmounted meanwhile: nothing it records
    /// about the file changes.
    pub(crate) fn rot(&self, file: &str, bytes: &[u8]) {
        self.umount();
        self.write_first_block(file, bytes);
        self.mount().expect("mounted again");
    }

    /// Writes `bytes` over the start of `file`'s first block through the
    /// device (mounted or not: the caller decides).
    pub(crate) fn write_first_block(&self, file: &str, bytes: &[u8]) {
        let block = ok(Command::new("debugfs")
            .args(["-R", &format!("bmap /{file} 0")])
            .arg(&self.device))
        .expect("debugfs bmap");
        let block: u64 = block.trim().parse().expect("a block number");
        assert!(block > 0, "the file has its first block on the device");
        use std::io::{Seek, SeekFrom, Write};
        let mut device = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.device)
            .unwrap();
        device.seek(SeekFrom::Start(block * 4096)).unwrap();
        device.write_all(bytes).unwrap();
        device.sync_all().unwrap();
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        self.umount();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// stat's view of a file: what the file system records about it.
fn recorded(path: &Path) -> (u64, u64, i64, i64, i64, i64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    (
        m.size(),
        m.ino(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

#[test]
fn real_corruption_is_found_and_normal_edits_are_told_apart() {
    let Some(fs) = Ext4::new() else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return;
    };
    let t = fs.mnt().join("t");
    std::fs::create_dir(&t).unwrap();
    let data: Vec<u8> = (0..65536u32).map(|i| (i % 251) as u8).collect();
    for name in ["victim", "edited", "restored", "untouched"] {
        std::fs::write(t.join(name), &data).unwrap();
    }
    let cache = fs.dir.path().join("cache.db");
    let cache_arg = format!("--cache={}", cache.display());
    settle();
    let first = scrub(&fs.mnt(), &[&cache_arg, "t"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    // The same record kept in a list instead: each line with its stamp,
    // as stat gives it.
    let listed = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "--json", "--stamps", "t"])
        .current_dir(fs.mnt())
        .output()
        .unwrap();
    let list = fs.dir.path().join("list.json");
    std::fs::write(&list, &listed.stdout).unwrap();
    let list_arg = format!("--manifest={}", list.display());
    let (_, ino, mtime, mtime_ns, ctime, ctime_ns) = recorded(&t.join("victim"));
    let stamp = format!(
        "\"inode\":{ino},\"mtime_ns\":{},\"ctime_ns\":{},\"fsid\":",
        mtime * 1_000_000_000 + mtime_ns,
        ctime * 1_000_000_000 + ctime_ns
    );
    assert!(stdout(&listed).contains(&stamp), "{}", stdout(&listed));
    let from_list = scrub(&fs.mnt(), &[&list_arg]);
    assert!(
        stderr(&from_list).contains("0 corrupted, 0 changed, 4 verified"),
        "{}",
        stderr(&from_list)
    );
    assert!(stderr(&first).contains("4 new"), "{}", stderr(&first));
    let again = scrub(&fs.mnt(), &[&cache_arg, "t"]);
    assert!(
        stderr(&again).contains("0 corrupted, 0 changed, 4 verified"),
        "{}",
        stderr(&again)
    );

    // Bit rot: bytes changed under the file system.
    let before = recorded(&t.join("victim"));
    fs.rot("t/victim", b"ROT!");
    assert_eq!(
        recorded(&t.join("victim")),
        before,
        "the file system saw nothing"
    );
    assert!(
        std::fs::read(t.join("victim")).unwrap() != data,
        "the bytes did change"
    );
    // A normal edit, and one that puts the mtime back (ctime still moves).
    std::fs::write(t.join("edited"), b"new contents").unwrap();
    let mtime = std::fs::metadata(t.join("restored"))
        .unwrap()
        .modified()
        .unwrap();
    let mut other = data.clone();
    other[0] ^= 1;
    std::fs::write(t.join("restored"), &other).unwrap();
    std::fs::File::options()
        .write(true)
        .open(t.join("restored"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let out = scrub(&fs.mnt(), &[&cache_arg, "t"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "changed\tt/edited\nchanged\tt/restored\ncorrupted\tt/victim\n"
    );
    assert!(
        stderr(&out).contains("1 corrupted, 2 changed, 1 verified"),
        "{}",
        stderr(&out)
    );
    // The list finds the same, by its own stamps and digests.
    let from_list = scrub(&fs.mnt(), &[&list_arg]);
    assert_eq!(from_list.status.code(), Some(1), "{}", stderr(&from_list));
    assert_eq!(stdout(&from_list), stdout(&out));
    assert!(
        stderr(&from_list).contains("1 corrupted, 2 changed, 1 verified"),
        "{}",
        stderr(&from_list)
    );
    // The corrupted entry is kept: found again, with both digests in JSON.
    let json = scrub(&fs.mnt(), &[&cache_arg, "--json", "t"]);
    assert_eq!(json.status.code(), Some(1));
    let md5 = |bytes: &[u8]| fastsum::Algorithm::Md5.hash_bytes(bytes).to_hex();
    let rotten = std::fs::read(t.join("victim")).unwrap();
    assert!(
        stdout(&json).contains(&format!(
            "{{\"path\":\"t/victim\",\"status\":\"corrupted\",\"recorded\":\"{}\",\"actual\":\"{}\"}}",
            md5(&data),
            md5(&rotten)
        )),
        "{}",
        stdout(&json)
    );
    // Another algorithm's scrub has no record to go by: new, never
    // compared with MD5's digests.
    let sha = scrub(&fs.mnt(), &[&cache_arg, "-a", "sha256", "t"]);
    assert_eq!(sha.status.code(), Some(0), "{}", stderr(&sha));
    assert!(stderr(&sha).contains("4 new"), "{}", stderr(&sha));
}

#[test]
fn an_interrupted_scrub_resumes_and_recent_ones_are_not_due() {
    let env = TestEnv::new();
    env.mkdir("t");
    for i in 0..24 {
        env.file(format!("t/f{i:02}").as_bytes(), &vec![i as u8; 256 << 10]);
    }
    settle();
    let dir = env.path();
    let first = scrub(dir, &["--cache=c.db", "t"]);
    assert!(stderr(&first).contains("24 new"), "{}", stderr(&first));
    // 6 MiB at 2 MiB/s: killed after about a second, part way.
    let mut child = Command::new(crate::testenv::fastsum_bin())
        .args(["scrub", "--cache=c.db", "--limit-rate=2M", "t"])
        .current_dir(dir)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    child.kill().unwrap();
    child.wait().unwrap();
    let out = scrub(dir, &["--cache=c.db", "--resume", "--json", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = stdout(&out);
    let field = |name: &str| -> u64 {
        let at = summary.find(&format!("\"{name}\":")).unwrap() + name.len() + 3;
        summary[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (past, verified) = (field("resumed_past"), field("verified"));
    assert!(past > 0 && past < 24, "resumed past {past}: {summary}");
    assert_eq!(past + verified, 24, "{summary}");
    assert_eq!(field("bytes_read"), verified * (256 << 10));
    // Finished: the next --resume starts from the beginning.
    let out = scrub(dir, &["--cache=c.db", "--resume", "t"]);
    assert!(stderr(&out).contains("24 verified"), "{}", stderr(&out));
    // Verified within the hour: not due, nothing read.
    let out = scrub(dir, &["--cache=c.db", "--older-than=1h", "t"]);
    assert!(stderr(&out).contains("24 not due"), "{}", stderr(&out));
    assert!(stderr(&out).contains(" 0 bytes read"), "{}", stderr(&out));
    let out = scrub(dir, &["--cache=c.db", "--older-than=0s", "t"]);
    assert!(stderr(&out).contains("24 verified"), "{}", stderr(&out));
}

#[test]
fn an_unreadable_file_is_trouble_not_corruption() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/fine", b"fine");
    env.file(b"t/secret", b"secret");
    use std::os::unix::fs::PermissionsExt;
    for dir in [env.path().to_path_buf(), env.path().join("t")] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    std::fs::set_permissions(
        env.path().join("t/secret"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    settle();
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = (unsafe { libc::getuid() } == 0).then_some(65534);
    let out = env.fastsum_within_as(
        uid,
        std::time::Duration::from_secs(30),
        &[b"scrub", b"--cache=c.db", b"t"],
    );
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("t/secret: Permission denied"),
        "{}",
        out.stderr_str()
    );
    assert!(out
        .stderr_str()
        .contains("0 corrupted, 0 changed, 0 verified, 1 new"));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_list_without_stamps_or_with_lies_is_never_taken_for_a_verdict() {
    let env = tempfile::tempdir().unwrap();
    let dir = env.path();
    std::fs::create_dir(dir.join("t")).unwrap();
    for name in ["a", "b", "c"] {
        std::fs::write(dir.join("t").join(name), name).unwrap();
    }
    // Too fresh to stamp: a list made now carries no stamps.
    let fresh = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "--json", "--stamps", "t"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(!stdout(&fresh).contains("mtime_ns"), "{}", stdout(&fresh));
    std::fs::write(dir.join("fresh.json"), &fresh.stdout).unwrap();
    let out = scrub(dir, &["--manifest=fresh.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("0 verified") && stderr(&out).contains("3 listed without a stamp")
    );
    settle();
    let listed = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "--json", "--stamps", "t"])
        .current_dir(dir)
        .output()
        .unwrap();
    let text = stdout(&listed);
    // A list that says another inode: changed, not read; a wrong digest
    // under the true stamp: corrupted; a line that is not a record: said,
    // trouble; a file gone: unreadable.
    let lied = text.replacen("\"inode\":", "\"inode\":1", 1).replacen(
        &fastsum::Algorithm::Md5.hash_bytes(b"b").to_hex(),
        &"0".repeat(32),
        1,
    ) + "not json\n";
    std::fs::write(dir.join("lied.json"), lied).unwrap();
    std::fs::remove_file(dir.join("t/c")).unwrap();
    let out = scrub(dir, &["--manifest=lied.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "changed\tt/a\ncorrupted\tt/b\n");
    let said = stderr(&out);
    assert!(
        said.contains("t/c: No such file") && said.contains("line 4"),
        "{said}"
    );
    assert!(
        said.contains("1 corrupted, 1 changed, 0 verified"),
        "{said}"
    );
    // --manifest stands alone.
    let out = scrub(dir, &["--manifest=lied.json", "--cache=c.db"]);
    assert_eq!(out.status.code(), Some(2));
    let out = scrub(dir, &["--manifest=lied.json", "t"]);
    assert_eq!(out.status.code(), Some(2));
}
