//! `fastsum scrub` reads what is on the disk: a block rotted under a
//! mounted file system, the file's pages still in the page cache from an
//! earlier read, was read from the cache and called verified (exit 0) until
//! something evicted it; and what it says of the list it is given.

use std::path::Path;
use std::process::Command;

use super::scrub::{scrub, settle, stderr, stdout, Ext4};

/// Writes `bytes` over the start of `file`'s first block through the
/// device while the file system stays mounted (nothing it records about
/// the file changes, and the kernel's cached pages of the file are not
/// told).
fn rot_mounted(fs: &Ext4, file: &str, bytes: &[u8]) {
    // The file's blocks allocated and its metadata on the device.
    assert!(Command::new("sync").status().unwrap().success());
    fs.write_first_block(file, bytes);
}

/// The file's bytes as the kernel serves them now.
fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn a_block_rotted_under_a_mounted_file_system_is_found_through_the_page_cache() {
    let Some(fs) = Ext4::new() else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return;
    };
    let mnt = fs.mnt();
    let data = vec![b'k'; 64 << 10];
    for name in ["kept", "rots"] {
        std::fs::write(mnt.join(name), &data).unwrap();
    }
    settle();
    let out = scrub(&mnt, &["--cache=../c.db", "."]);
    assert!(stderr(&out).contains("2 new"), "{}", stderr(&out));
    // Both files' pages are in the page cache now (just read).
    rot_mounted(&fs, "rots", b"ROTTEN");
    assert_eq!(
        read(&mnt.join("rots")),
        data,
        "the page cache still serves the old bytes"
    );
    for limit in [&[][..], &["--limit-rate=100M"][..]] {
        let mut args = vec!["--cache=../c.db", "."];
        args.extend_from_slice(limit);
        let out = scrub(&mnt, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "corrupted\t./rots\n", "{args:?}");
        assert!(stderr(&out).contains("1 corrupted, 0 changed, 1 verified"));
    }
    // A scrub of a list reads the disk as well.
    let list = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "--json", "--stamps", "-a", "sha256", "kept"])
        .current_dir(&mnt)
        .output()
        .unwrap();
    assert!(list.status.success());
    std::fs::write(fs.dir.path().join("list.json"), &list.stdout).unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("\"ctime_ns\""));
    rot_mounted(&fs, "kept", b"ROTTEN");
    let out = scrub(&mnt, &["--manifest=../list.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "corrupted\tkept\n");
}

/// A list named `M\nfastsum scrub: ok` forged a line of stderr in the
/// messages naming it: named as coreutils names files now.
#[test]
fn a_manifest_name_cannot_forge_a_message_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = b"{\"path\":\"x\",\"algorithm\":\"md5\",\"digest\":\"00\"}\n";
    std::fs::write(dir.path().join("M\nfastsum scrub: ok"), bad).unwrap();
    for name in ["M\nfastsum scrub: ok", "N\nfastsum scrub: ok"] {
        let out = scrub(dir.path(), &[&format!("--manifest={name}")]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let said = stderr(&out);
        assert!(said.contains("'$'\\n''fastsum scrub: ok'"), "{said}");
        assert!(
            !said.lines().any(|l| l.starts_with("fastsum scrub: ok")),
            "{said}"
        );
    }
}

/// A scrub killed after it said a file was corrupted had not kept it
/// among the corrupted ones (they were stored at the end): the next
/// `--older-than` scrub called the file not due, as verified recently,
/// and exited 0.
#[test]
fn a_corruption_said_before_a_kill_is_not_taken_for_a_recent_verification() {
    use std::io::BufRead;
    let Some(fs) = Ext4::new() else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return;
    };
    let mnt = fs.mnt();
    std::fs::write(mnt.join("a"), vec![b'a'; 8 << 10]).unwrap();
    for name in ["b", "c", "d"] {
        std::fs::write(mnt.join(name), vec![b'b'; 100 << 10]).unwrap();
    }
    settle();
    let out = scrub(&mnt, &["--cache=../c.db", "."]);
    assert!(stderr(&out).contains("4 new"), "{}", stderr(&out));
    rot_mounted(&fs, "a", b"ROTTEN");
    // Paced: `a` is said after the first batch, long before the end.
    let mut child = Command::new(crate::testenv::fastsum_bin())
        .args(["scrub", "--cache=../c.db", "--limit-rate=200K", "."])
        .current_dir(&mnt)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut said = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    child.kill().unwrap(); // SIGKILL, once it has said it
    child.wait().unwrap();
    assert_eq!(said, "corrupted\t./a\n");
    let out = scrub(&mnt, &["--cache=../c.db", "--older-than=1h", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "corrupted\t./a\n");
    assert!(stderr(&out).contains("1 corrupted, 0 changed, 0 verified, 0 new, 3 not due"));
}

/// A tree recorded in SHA-256 (`sha256sum -r --cache`), scrubbed in the
/// default MD5: every file was "new", nothing verified, exit 0, read as
/// a clean scrub. Said, exit 2; with the recording's algorithm it goes on.
#[test]
fn a_scrub_in_another_algorithm_than_the_recording_is_not_a_clean_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("t")).unwrap();
    for name in ["a", "b"] {
        std::fs::write(dir.path().join("t").join(name), name).unwrap();
    }
    settle();
    let recorded = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "-a", "sha256", "--cache=c.db", "t"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(recorded.status.success());
    let out = scrub(dir.path(), &["--cache=c.db", "t"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("0 verified, 2 new"), "{said}");
    assert!(
        said.contains("nothing here was recorded in md5, so nothing was verified; the cache holds sha256 digests"),
        "{said}"
    );
    let out = scrub(dir.path(), &["--cache=c.db", "-a", "sha256", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("2 verified, 0 new"),
        "{}",
        stderr(&out)
    );
    // The second scrub in md5 has its own records: a clean one.
    let out = scrub(dir.path(), &["--cache=c.db", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("2 verified"), "{}", stderr(&out));
}
