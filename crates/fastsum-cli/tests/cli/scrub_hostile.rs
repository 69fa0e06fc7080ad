//! `fastsum scrub` tried as a hostile user would:
//! corruption made on a loop-mounted ext4 must be found across a resume
//! from a SIGKILL at random points whatever the operand order, across a
//! remount on another loop device and other spellings of its path; a
//! resume state that does not match the run is refused; a FIFO or device
//! where a file was is refused, never waited on.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::scrub::{ok, scrub, settle, stderr, stdout, Ext4};

/// Runs `fastsum scrub ARGS` in `dir`, killed (and failed) if it takes
/// longer than `limit`: a hang is a failure, not a stuck suite.
fn scrub_within(dir: &Path, args: &[&str], limit: Duration) -> std::process::Output {
    let mut child = Command::new(crate::testenv::fastsum_bin())
        .arg("scrub")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("scrub {args:?} hung: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A FIFO at `path`.
fn mkfifo(path: &Path) {
    let fifo = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
}

/// Runs `during` with the image of `fs` mounted on another loop device
/// (the device number changes; inode, size and times do not), then mounts
/// it again on its own.
fn on_another_loop_device<T>(fs: &Ext4, during: impl FnOnce(&Path) -> T) -> T {
    let mnt = fs.mnt();
    fs.umount();
    let image = fs.dir.path().join("image");
    let other = ok(Command::new("losetup").args(["-f", "--show"]).arg(&image))
        .expect("a second loop device")
        .trim()
        .to_string();
    assert!(ok(Command::new("mount").arg(&other).arg(&mnt)).is_some());
    let result = during(&mnt);
    let _ = Command::new("umount").arg(&mnt).status();
    let _ = Command::new("losetup").args(["-d", &other]).status();
    fs.mount().expect("mounted again on the first device");
    result
}

/// A rate-limited scrub of `args`, killed with SIGKILL after `after`.
fn killed_after(dir: &Path, args: &[&str], after: Duration) {
    let mut child = Command::new(crate::testenv::fastsum_bin())
        .arg("scrub")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// Two roots `b` and `a` of files of 64 KiB on a loop-mounted ext4,
/// recorded in the cache `c.db`, and `a/g3` rotted under its stamp.
fn rotted_in_the_second_root() -> Option<Ext4> {
    let fs = Ext4::new()?;
    let mnt = fs.mnt();
    for root in ["a", "b"] {
        std::fs::create_dir(mnt.join(root)).unwrap();
        for i in 0..6 {
            let data = vec![i as u8 + root.as_bytes()[0]; 64 << 10];
            std::fs::write(mnt.join(root).join(format!("g{i}")), data).unwrap();
        }
    }
    settle();
    let out = scrub(&mnt, &["--cache=../c.db", "b", "a"]);
    assert!(stderr(&out).contains("12 new"), "{}", stderr(&out));
    fs.rot("a/g3", b"ROTTEN");
    Some(fs)
}

#[test]
fn a_resumed_scrub_finds_corruption_whatever_the_operand_order_and_kill_point() {
    let Some(fs) = rotted_in_the_second_root() else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return;
    };
    let mnt = fs.mnt();
    // 768 KiB at 200 KiB/s: about 4 s a whole scrub; killed at points
    // spread over it (a fixed spread, and one drawn from the clock).
    let drawn = Instant::now().elapsed().subsec_nanos() as u64 % 3500;
    for ms in [300, 1200, 2500, 3400, drawn] {
        killed_after(
            &mnt,
            &["--cache=../c.db", "--limit-rate=200K", "b", "a"],
            Duration::from_millis(ms),
        );
        let out = scrub_within(
            &mnt,
            &["--cache=../c.db", "--resume", "b", "a"],
            Duration::from_secs(60),
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "killed at {ms} ms: {}",
            stderr(&out)
        );
        assert!(
            stdout(&out).contains("corrupted\ta/g3"),
            "killed at {ms} ms: {}",
            stdout(&out)
        );
    }
    // File operands in reverse order, likewise.
    killed_after(
        &mnt,
        &[
            "--cache=../c.db",
            "--limit-rate=100K",
            "b/g5",
            "a/g3",
            "a/g1",
        ],
        Duration::from_millis(700),
    );
    let out = scrub_within(
        &mnt,
        &["--cache=../c.db", "--resume", "b/g5", "a/g3", "a/g1"],
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("corrupted\ta/g3"), "{}", stdout(&out));
}

/// Sets every scrub resume note in the cache at `db` to `value`.
fn forge_notes(db: &Path, value: &str) {
    let script = "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.execute(\"UPDATE meta SET value=? WHERE key LIKE 'scrub %'\",(sys.argv[2],))\nc.commit()\nprint(c.total_changes)";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(db)
        .arg(value)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1", "{out:?}");
}

#[test]
fn a_resume_state_that_does_not_match_the_run_is_refused() {
    let env = tempfile::tempdir().unwrap();
    let dir = env.path();
    std::fs::create_dir(dir.join("t")).unwrap();
    for i in 0..8 {
        std::fs::write(dir.join(format!("t/f{i}")), vec![i as u8; 128 << 10]).unwrap();
    }
    settle();
    scrub(dir, &["--cache=c.db", "t"]);
    killed_after(
        dir,
        &["--cache=c.db", "--limit-rate=256K", "t"],
        Duration::from_millis(600),
    );
    // A place as an older version kept it (hex path bytes), `ff`, a time
    // of 0 or in the future: refused with a message, nothing passed over.
    let future = format!("started-ns {}", i64::MAX);
    for forged in ["ff", "2f746d70", "started-ns 0", future.as_str(), ""] {
        forge_notes(&dir.join("c.db"), forged);
        let out = scrub(dir, &["--cache=c.db", "--resume", "t"]);
        assert_eq!(out.status.code(), Some(2), "{forged:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("cannot resume"), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("without --resume"),
            "{}",
            stderr(&out)
        );
    }
    // Without --resume the scrub runs whole, and leaves no place behind.
    let out = scrub(dir, &["--cache=c.db", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("8 verified"), "{}", stderr(&out));
    let out = scrub(dir, &["--cache=c.db", "--resume", "t"]);
    assert!(stderr(&out).contains("8 verified"), "{}", stderr(&out));
}

#[test]
fn corruption_is_found_on_another_loop_device_and_under_other_spellings() {
    let Some(fs) = rotted_in_the_second_root() else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return;
    };
    let mnt = fs.mnt();
    let cache = "--cache=../c.db";
    // The same image on another loop device.
    let out = on_another_loop_device(&fs, |mnt| scrub(mnt, &[cache, "-v", "b", "a"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("corrupted\ta/g3"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("1 corrupted, 0 changed, 11 verified"),
        "{}",
        stderr(&out)
    );
    // Not re-baselined: found again, on either device, by any spelling.
    std::os::unix::fs::symlink("a", mnt.join("link")).unwrap();
    std::fs::create_dir(mnt.join("x")).unwrap();
    for spelling in ["a", "x/../a", "./a", "link", "a/"] {
        let out = scrub(&mnt, &[cache, spelling]);
        assert_eq!(out.status.code(), Some(1), "{spelling}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("1 corrupted, 0 changed, 5 verified, 0 new"),
            "{spelling}: {}",
            stderr(&out)
        );
    }
    let absolute = mnt.join("a/g3");
    let out = scrub(&mnt, &[cache, absolute.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// The same disk mounted at another place (and on another device): its
/// roots are found by their file system's id and their path within it,
/// compared with what was recorded at the first place, never taken as
/// new; the corrupted file stays corrupted at either place.
#[test]
fn corruption_is_found_where_the_disk_is_mounted_at_another_place() {
    let Some(fs) = rotted_in_the_second_root() else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return;
    };
    let mnt = fs.mnt();
    let cache = "--cache=../c.db";
    fs.umount();
    let elsewhere = fs.dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let image = fs.dir.path().join("image");
    let other = ok(Command::new("losetup").args(["-f", "--show"]).arg(&image))
        .expect("a second loop device")
        .trim()
        .to_string();
    assert!(ok(Command::new("mount").arg(&other).arg(&elsewhere)).is_some());
    let twice: Vec<_> = (0..2)
        .map(|_| scrub(&elsewhere, &[cache, "b", "a"]))
        .collect();
    let _ = Command::new("umount").arg(&elsewhere).status();
    let _ = Command::new("losetup").args(["-d", &other]).status();
    for out in &twice {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
        assert!(stdout(out).contains("corrupted\ta/g3"), "{}", stdout(out));
        assert!(
            stderr(out).contains("1 corrupted, 0 changed, 11 verified, 0 new"),
            "{}",
            stderr(out)
        );
    }
    // Back at the first place: still corrupted.
    fs.mount().expect("mounted again on the first device");
    let out = scrub(&mnt, &[cache, "a"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 corrupted"), "{}", stderr(&out));
}

#[test]
fn a_fifo_or_device_where_a_listed_file_was_is_refused_not_waited_on() {
    let env = tempfile::tempdir().unwrap();
    let dir = env.path();
    std::fs::create_dir(dir.join("t")).unwrap();
    std::fs::write(dir.join("t/a"), b"a\n").unwrap();
    settle();
    let listed = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "--json", "--stamps", "t"])
        .current_dir(dir)
        .output()
        .unwrap();
    let line = stdout(&listed);
    assert!(line.contains("mtime_ns"), "{line}");
    // The stamped line, for a FIFO, a character device, a directory.
    let mut list = line.clone();
    for other in ["t/fifo", "/dev/zero", "/dev/null", "t"] {
        list.push_str(&line.replacen("\"t/a\"", &format!("\"{other}\""), 1));
    }
    std::fs::write(dir.join("list.json"), list).unwrap();
    mkfifo(&dir.join("t/fifo"));
    let out = scrub_within(dir, &["--manifest=list.json"], Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    for other in ["t/fifo", "/dev/zero", "/dev/null"] {
        assert!(
            said.contains(&format!("{other}: not a regular file")),
            "{other}: {said}"
        );
    }
    assert!(said.contains("1 verified"), "{said}");
}

#[test]
fn a_file_swapped_for_a_fifo_during_a_paced_scrub_is_refused() {
    let env = tempfile::tempdir().unwrap();
    let dir = env.path();
    std::fs::create_dir(dir.join("t")).unwrap();
    for i in 0..12 {
        std::fs::write(dir.join(format!("t/f{i:02}")), vec![i as u8; 32 << 10]).unwrap();
    }
    settle();
    scrub(dir, &["--cache=c.db", "t"]);
    for extra in [
        &["--limit-rate=96K"][..],
        &["--older-than=0s", "--limit-rate=96K"],
    ] {
        let mut args = vec!["--cache=c.db"];
        args.extend_from_slice(extra);
        args.push("t");
        let child = std::thread::scope(|scope| {
            let run = scope.spawn(|| scrub_within(dir, &args, Duration::from_secs(30)));
            std::thread::sleep(Duration::from_millis(500));
            let last = dir.join("t/f11");
            std::fs::remove_file(&last).unwrap();
            mkfifo(&last);
            run.join().unwrap()
        });
        // The walk met a FIFO (left out, not read) or the read found one
        // where the walk saw a file (refused): never a hang, never a
        // digest.
        assert_ne!(child.status.code(), Some(1), "{}", stderr(&child));
        assert!(!stdout(&child).contains("f11"), "{}", stdout(&child));
        std::fs::remove_file(dir.join("t/f11")).unwrap();
        std::fs::write(dir.join("t/f11"), vec![11u8; 32 << 10]).unwrap();
    }
}

/// A note forged with any past time, a
/// cached run after a remount, and `--older-than` after a scrub that found
/// corruption each let a corrupted file pass with exit 0.
#[test]
fn no_note_no_cached_run_and_no_recent_scrub_hides_known_corruption() {
    let Some(fs) = rotted_in_the_second_root() else {
        crate::testenv::skip("no loop-mounted ext4 here (needs root, mkfs.ext4, loop devices)");
        return;
    };
    let mnt = fs.mnt();
    let db = fs.dir.path().join("c.db");
    let cache = "--cache=../c.db";
    let found = |args: &[&str], what: &str| {
        let out = scrub_within(&mnt, args, Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(1), "{what}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("corrupted\ta/g3"),
            "{what}: {}",
            stdout(&out)
        );
    };
    // Forged notes with past times: never trusted to pass over it.
    let hour_ago = format!(
        "started-ns {}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
            - 3_600_000_000_000
    );
    for forged in ["started-ns 1", "started-ns 1000000000", hour_ago.as_str()] {
        killed_after(
            &mnt,
            &[cache, "--limit-rate=200K", "b", "a"],
            Duration::from_millis(400),
        );
        forge_notes(&db, forged);
        found(&[cache, "--resume", "b", "a"], forged);
    }
    // Found once: still found by a scrub that skips recent entries.
    found(&[cache, "--older-than=30d", "b", "a"], "--older-than");
    found(&[cache, "--older-than=30d", "a"], "--older-than, one root");
    // The same image on another loop device, read by a cached -r first.
    let (cached, out) = on_another_loop_device(&fs, |mnt| {
        let cached = Command::new(crate::testenv::fastsum_bin())
            .args(["-r", cache, "a", "b"])
            .current_dir(mnt)
            .output()
            .unwrap();
        (
            cached,
            scrub_within(mnt, &[cache, "b", "a"], Duration::from_secs(60)),
        )
    });
    assert!(cached.status.success());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("corrupted\ta/g3"), "{}", stdout(&out));
}

/// The hostile review: operands that are FIFOs or devices hung a cache
/// scrub; a recorded file replaced by a FIFO vanished from the report;
/// overlapping operands counted files twice.
#[test]
fn fifo_and_device_operands_are_refused_and_overlaps_counted_once() {
    let env = tempfile::tempdir().unwrap();
    let dir = env.path();
    std::fs::create_dir(dir.join("s")).unwrap();
    std::fs::write(dir.join("s/a"), b"1\n").unwrap();
    std::fs::write(dir.join("s/b"), b"2\n").unwrap();
    settle();
    scrub(dir, &["--cache=c.db", "s"]);
    std::fs::remove_file(dir.join("s/b")).unwrap();
    mkfifo(&dir.join("s/b"));
    std::os::unix::fs::symlink("/dev/zero", dir.join("z")).unwrap();
    let limit = Duration::from_secs(20);
    for operand in ["s/b", "z", "/dev/zero"] {
        let out = scrub_within(dir, &["--cache=c.db", operand], limit);
        assert_eq!(out.status.code(), Some(2), "{operand}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not a regular file"),
            "{}",
            stderr(&out)
        );
    }
    // Walked: the FIFO where s/b was is said, in both reading paths.
    for extra in [&[][..], &["--limit-rate=1M"]] {
        let mut args = vec!["--cache=c.db"];
        args.extend_from_slice(extra);
        args.push("s");
        let out = scrub_within(dir, &args, limit);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("s/b: not a regular file"),
            "{}",
            stderr(&out)
        );
    }
    // Overlapping operands: s/a once.
    let out = scrub_within(dir, &["--cache=c.db", "-v", "s", "s/", "s/a"], limit);
    assert_eq!(stdout(&out).matches("s/a").count(), 1, "{}", stdout(&out));
    assert!(stderr(&out).contains("1 verified"), "{}", stderr(&out));
}
