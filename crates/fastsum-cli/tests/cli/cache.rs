//! The persistent cache against the real binary. The truth is
//! always the digest of the file's current bytes: every case tries to make
//! the cache answer a stale digest.

use crate::testenv;

use std::fs::{self, File};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use testenv::{Outcome, TestEnv};

/// Past the racy window (2 s) for everything written before this call.
fn settle() {
    std::thread::sleep(Duration::from_millis(2300));
}

fn md5_line(bytes: &[u8], name: &str) -> String {
    format!("{}  {name}\n", testenv::reference_hex("md5sum", bytes))
}

fn run(env: &TestEnv, args: &[&str]) -> Outcome {
    let out = env
        .command("fastsum")
        .arg("--cache=cache.sqlite")
        .arg("--cache-stats")
        .args(args)
        .output()
        .expect("run fastsum");
    out.into()
}

/// The "N hits" figure of --cache-stats.
fn hits(out: &Outcome) -> u64 {
    let err = out.stderr_str();
    let line = err
        .lines()
        .find(|l| l.contains("cache: ") && l.contains(" hit"))
        .unwrap_or_else(|| panic!("no cache stats in {err:?}"));
    line.split("cache: ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn mtime(path: &Path) -> SystemTime {
    fs::metadata(path).unwrap().modified().unwrap()
}

fn set_mtime(path: &Path, time: SystemTime) {
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

#[test]
fn an_unchanged_settled_file_is_a_hit_with_the_same_answer() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"f", b"hello");
    settle();
    let first = run(&env, &["f"]);
    assert_eq!(first.stdout_str(), md5_line(b"hello", "f"));
    assert_eq!(hits(&first), 0);
    let second = run(&env, &["f"]);
    assert_eq!(second.stdout_str(), md5_line(b"hello", "f"));
    assert_eq!(hits(&second), 1, "the rerun after the racy window is a hit");
}

#[test]
fn same_size_rewrite_with_the_old_mtime_put_back_is_reread() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let f = env.file(b"f", b"aaaa");
    settle();
    assert_eq!(hits(&run(&env, &["f"])), 0);
    let old = mtime(&f);
    fs::write(&f, b"bbbb").unwrap();
    set_mtime(&f, old);
    let out = run(&env, &["f"]);
    assert_eq!(out.stdout_str(), md5_line(b"bbbb", "f"));
    assert_eq!(hits(&out), 0);
}

#[test]
fn an_edit_then_touch_r_to_an_old_reference_is_reread() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let reference = env.file(b"ref", b"r");
    let f = env.file(b"f", b"old content");
    settle();
    run(&env, &["f"]);
    fs::write(&f, b"new content").unwrap();
    let status = Command::new("touch")
        .args(["-r", reference.to_str().unwrap(), f.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = run(&env, &["f"]);
    assert_eq!(out.stdout_str(), md5_line(b"new content", "f"));
}

#[test]
fn a_replacement_by_rename_with_identical_size_and_mtime_is_reread() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let f = env.file(b"f", b"one!");
    settle();
    run(&env, &["f"]);
    let replacement = env.file(b"f.tmp", b"two!");
    set_mtime(&replacement, mtime(&f));
    fs::rename(&replacement, &f).unwrap();
    let out = run(&env, &["f"]);
    assert_eq!(out.stdout_str(), md5_line(b"two!", "f"));
}

#[test]
fn a_rewrite_in_the_same_tick_right_after_caching_is_not_answered_stale() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let f = env.file(b"f", b"1111");
    // No settling: the file is racy when hashed, so it must not be stored.
    let first = run(&env, &["f"]);
    assert_eq!(first.stdout_str(), md5_line(b"1111", "f"));
    let old = mtime(&f);
    fs::write(&f, b"2222").unwrap();
    set_mtime(&f, old);
    let out = run(&env, &["f"]);
    assert_eq!(out.stdout_str(), md5_line(b"2222", "f"));
    assert_eq!(hits(&out), 0);
}

#[test]
fn truncated_and_garbage_cache_files_are_rebuilt_and_never_change_an_answer() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"f", b"content");
    settle();
    run(&env, &["f"]);
    let cache = env.path().join("cache.sqlite");
    // Fold the WAL in so the main file holds the data, then cut it.
    let checkpoint = Command::new(crate::testenv::fastsum_bin())
        .args(["cache", "stats", "--cache", cache.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(checkpoint.status.success());
    let len = fs::metadata(&cache).unwrap().len();
    File::options()
        .write(true)
        .open(&cache)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let _ = fs::remove_file(env.path().join("cache.sqlite-wal"));
    let out = run(&env, &["f"]);
    assert_eq!(out.stdout_str(), md5_line(b"content", "f"));
    assert_eq!(out.status, 0);

    fs::write(&cache, b"garbage garbage garbage garbage garbage garbage").unwrap();
    let _ = fs::remove_file(env.path().join("cache.sqlite-wal"));
    let _ = fs::remove_file(env.path().join("cache.sqlite-shm"));
    let out = run(&env, &["f"]);
    assert_eq!(out.stdout_str(), md5_line(b"content", "f"));
    assert_eq!(out.status, 0);
    let told: Vec<&str> = out
        .stderr_str()
        .lines()
        .filter(|l| l.contains("moved aside"))
        .map(|_| "")
        .collect();
    assert_eq!(told.len(), 1, "reported once: {}", out.stderr_str());
    let again = run(&env, &["f"]);
    assert!(!again.stderr_str().contains("moved aside"));
}

#[test]
fn another_algorithm_on_the_same_cache_is_a_miss() {
    if crate::testenv::lacks(&["sha1sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"f", b"xyz");
    settle();
    run(&env, &["f"]);
    let out = run(&env, &["-a", "sha1", "--untagged", "f"]);
    assert_eq!(
        out.stdout_str(),
        format!("{}  f\n", testenv::reference_hex("sha1sum", b"xyz"))
    );
    assert_eq!(hits(&out), 0);
}

#[test]
fn a_deleted_file_is_reported_missing_not_answered() {
    let env = TestEnv::new();
    let f = env.file(b"f", b"here");
    settle();
    run(&env, &["f"]);
    fs::remove_file(&f).unwrap();
    let out = run(&env, &["f"]);
    assert_eq!(out.status, 1);
    assert!(out.stdout.is_empty());
    assert!(out
        .stderr_str()
        .starts_with("fastsum: f: No such file or directory\n"));
}

fn tree(env: &TestEnv, files: usize) {
    env.mkdir("t");
    for i in 0..files {
        env.file(format!("t/f{i:04}").as_bytes(), &vec![i as u8; 3000 + i]);
    }
}

fn expected_tree(env: &TestEnv) -> String {
    let mut names: Vec<_> = fs::read_dir(env.path().join("t"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            md5_line(
                &fs::read(env.path().join("t").join(n)).unwrap(),
                &format!("t/{n}"),
            )
        })
        .collect()
}

#[test]
fn sigkill_mid_run_leaves_a_cache_the_next_run_uses_correctly() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env, 2000);
    settle();
    run(&env, &["-r", "t"]);
    let mut child = Command::new(crate::testenv::fastsum_bin())
        .args(["--cache=cache.sqlite", "-a", "md5", "-r", "t", "t", "t"])
        .current_dir(env.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    child.kill().unwrap();
    let _ = child.wait();
    let victim = env.path().join("t/f0007");
    let old = mtime(&victim);
    let mut changed = fs::read(&victim).unwrap();
    changed[0] ^= 0xff;
    fs::write(&victim, &changed).unwrap();
    set_mtime(&victim, old);
    let out = run(&env, &["-r", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), expected_tree(&env));
}

#[test]
fn three_concurrent_runs_share_one_cache() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env, 1500);
    settle();
    let children: Vec<_> = (0..3)
        .map(|_| {
            Command::new(crate::testenv::fastsum_bin())
                .args(["--cache=cache.sqlite", "-r", "t"])
                .current_dir(env.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let expected = expected_tree(&env);
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run(&env, &["-r", "t"]);
    assert_eq!(hits(&out), 1500);
}

#[test]
fn checking_uses_the_cache_and_still_sees_changes() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let f = env.file(b"f", b"check me");
    env.file(b"list", md5_line(b"check me", "f").as_bytes());
    settle();
    let first = run(&env, &["-c", "list"]);
    assert_eq!(first.stdout_str(), "f: OK\n");
    let second = run(&env, &["-c", "list"]);
    assert_eq!(second.stdout_str(), "f: OK\n");
    assert_eq!(hits(&second), 1);
    let old = mtime(&f);
    fs::write(&f, b"check ME").unwrap();
    set_mtime(&f, old);
    // -a md5: without it the list's one file, changed, matches under no
    // algorithm of its length, and that is said instead.
    let third = run(&env, &["-c", "-a", "md5", "list"]);
    assert_eq!(third.stdout_str(), "f: FAILED\n");
    assert_eq!(third.status, 1);
}

#[test]
fn a_future_mtime_is_never_trusted() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let f = env.file(b"f", b"from the future");
    let future = SystemTime::now() + Duration::from_secs(3600);
    set_mtime(&f, future);
    settle();
    run(&env, &["f"]);
    assert_eq!(hits(&run(&env, &["f"])), 0, "future timestamps are racy");
    fs::write(&f, b"from the FUTURE").unwrap();
    set_mtime(&f, future);
    assert_eq!(
        run(&env, &["f"]).stdout_str(),
        md5_line(b"from the FUTURE", "f")
    );
}

#[test]
fn a_retargeted_symlink_answers_for_its_new_target() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"a", b"same size A");
    let b = env.file(b"b", b"same size B");
    std::os::unix::fs::symlink("a", env.path().join("link")).unwrap();
    settle();
    run(&env, &["link"]);
    assert_eq!(hits(&run(&env, &["link"])), 1);
    // Point the link at b, with a's mtime: only the inode tells them apart.
    set_mtime(&b, mtime(&env.path().join("a")));
    settle();
    fs::remove_file(env.path().join("link")).unwrap();
    std::os::unix::fs::symlink("b", env.path().join("link")).unwrap();
    let out = run(&env, &["link"]);
    assert_eq!(out.stdout_str(), md5_line(b"same size B", "link"));
    assert_eq!(hits(&out), 0);
}

#[test]
fn a_file_replaced_by_a_directory_is_not_answered() {
    let env = TestEnv::new();
    let f = env.file(b"x", b"was a file");
    settle();
    run(&env, &["x"]);
    fs::remove_file(&f).unwrap();
    env.mkdir("x");
    let out = run(&env, &["x"]);
    assert_eq!(out.status, 1);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr_str()
            .starts_with("fastsum: x: Is a directory (use -r)\n"),
        "{}",
        out.stderr_str()
    );
}

/// `b2sum -l BITS` of `bytes`, as the reference prints its digest.
fn b2(bytes: &[u8], bits: &str) -> String {
    let env = TestEnv::new();
    let f = env.file(b"x", bytes);
    let out = std::process::Command::new("b2sum")
        .args(["-l", bits])
        .arg(&f)
        .output()
        .expect("b2sum");
    String::from_utf8_lossy(&out.stdout)
        .split(' ')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn every_blake2b_length_has_its_own_entries() {
    // The 512-bit digest once came back labelled BLAKE2b-256.
    let env = TestEnv::new();
    env.file(b"f", b"some bytes");
    settle();
    for bits in ["512", "256", "128", "256", "512"] {
        let out = run(&env, &["-a", "blake2b", "-l", bits, "--untagged", "f"]);
        assert_eq!(
            out.stdout_str(),
            format!("{}  f\n", b2(b"some bytes", bits)),
            "-l {bits}"
        );
    }
    // And -c of a good list says OK from the cache.
    let list = format!("BLAKE2b-256 (f) = {}\n", b2(b"some bytes", "256"));
    env.file(b"list", list.as_bytes());
    let out = run(&env, &["-c", "list"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "f: OK\n");
}

#[test]
fn a_diff_against_another_algorithms_manifest_never_poisons_the_cache() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    // Once the diff's session was MD5's: it hashed SHA-256 and
    // stored those digests as MD5; `-r --cache` then printed them as MD5.
    let env = TestEnv::new();
    env.mkdir("d");
    env.file(b"d/a", b"alpha");
    env.file(b"d/b", b"bravo");
    settle();
    let tagged = env
        .command("fastsum")
        .args(["-a", "sha256", "--tag", "-r", "d"])
        .output()
        .unwrap();
    env.file(b"m.sha256", &tagged.stdout);
    let diff = env
        .command("fastsum")
        .args(["diff", "--cache=cache.sqlite", "m.sha256", "d"])
        .output()
        .unwrap();
    assert_eq!(
        diff.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&diff.stderr)
    );
    let out = run(&env, &["-r", "d"]);
    assert_eq!(
        out.stdout_str(),
        format!("{}{}", md5_line(b"alpha", "d/a"), md5_line(b"bravo", "d/b"))
    );
    assert_eq!(hits(&out), 0, "nothing of MD5 was learnt by the diff");
}

#[test]
fn generated_files_hash_with_the_cache_as_without_it() {
    // /proc and /sys files (size 0 or 4096, bytes made as they
    // are read) once failed "changed while reading" with --cache.
    let env = TestEnv::new();
    for file in ["/proc/version", "/sys/devices/system/cpu/online"] {
        if !Path::new(file).exists() {
            continue;
        }
        let plain = env.command("fastsum").arg(file).output().unwrap();
        assert!(plain.status.success());
        for _ in 0..2 {
            let cached = run(&env, &[file]);
            assert_eq!(cached.status, 0, "{file}: {}", cached.stderr_str());
            assert_eq!(
                cached.stdout_str(),
                String::from_utf8_lossy(&plain.stdout),
                "{file}"
            );
            assert_eq!(hits(&cached), 0, "{file} is never answered from the cache");
        }
    }
}

#[test]
fn an_interrupted_run_keeps_what_it_learnt() {
    // SIGINT 12 s into `--cache -r /usr` left 0 entries: the
    // run stored only at its end. It stores in batches as it goes now.
    use std::io::Read;
    let env = TestEnv::new();
    env.mkdir("t");
    for i in 0..10_000 {
        env.file(
            format!("t/f{i:05}").as_bytes(),
            format!("file {i}").as_bytes(),
        );
    }
    let fifo = env.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    settle();
    // The run hashes the tree, then waits on the FIFO: it is interrupted
    // there, with every file of the tree learnt and no end reached.
    let mut command = env.command("fastsum");
    command
        .args(["--cache=cache.sqlite", "-r", "t", "fifo"])
        .stdout(std::process::Stdio::piped());
    // A suite started in the background by a non-interactive shell
    // inherits SIGINT ignored, and the run would never end: the child
    // takes SIGINT's default, as at a terminal.
    // SAFETY: between fork and exec the closure only calls signal(2),
    // which is async-signal-safe, and touches no memory of the parent.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 65536];
    while !String::from_utf8_lossy(&seen).contains("t/f09999\n") {
        let n = stdout.read(&mut buffer).unwrap();
        assert!(n > 0, "the run ended early");
        seen.extend_from_slice(&buffer[..n]);
    }
    // SAFETY: kill only sends a signal to the child's process id.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().unwrap();
    let again = run(&env, &["-r", "t"]);
    assert!(hits(&again) >= 8192, "{}", again.stderr_str());
}
