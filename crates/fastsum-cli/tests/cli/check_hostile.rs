//! `fastsum -c` against lists that lie (issue 51, points 3 and 18): a
//! downloaded SUMS file can name a FIFO, a device, a link to one, a
//! directory, `/` or `/proc/self/`. fastsum's own -c opens each as a
//! list's path (regular files only, never waiting) and never walks a
//! directory unless asked with `--dirs`; never one on a generated file
//! system. The GNU personalities read what the list names, as coreutils
//! does (its own tests check `/dev/null`'s line).

use std::time::Duration;

use crate::testenv::TestEnv;

const EMPTY_MD5: &str = "d41d8cd98f00b204e9800998ecf8427e";

fn mkfifo(env: &TestEnv, name: &str) {
    let path = std::ffi::CString::new(env.path().join(name).to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
}

/// A list naming each of `names` with the empty file's MD5, padded with
/// `padding` lines naming a real empty file (so that both the in-line
/// path, under 16 files, and the pipeline's are tried).
fn list(env: &TestEnv, names: &[&str], padding: usize) -> Vec<u8> {
    let mut text = String::new();
    for name in names {
        text.push_str(&format!("{EMPTY_MD5}  {name}\n"));
    }
    for i in 0..padding {
        env.file(format!("pad{i}").as_bytes(), b"");
        text.push_str(&format!("{EMPTY_MD5}  pad{i}\n"));
    }
    text.into_bytes()
}

#[test]
fn a_list_naming_fifos_devices_and_directories_fails_them_without_waiting() {
    let env = TestEnv::new();
    env.mkdir("t");
    mkfifo(&env, "fifo");
    std::os::unix::fs::symlink("/dev/zero", env.path().join("zero-link")).unwrap();
    std::os::unix::fs::symlink("fifo", env.path().join("fifo-link")).unwrap();
    let hostile = [
        "fifo",
        "fifo-link",
        "/dev/zero",
        "zero-link",
        "/dev/null",
        "t/",
        "t",
        "/",
        "/proc/self/",
    ];
    for padding in [0, 40] {
        env.file(b"SUMS", &list(&env, &hostile, padding));
        let out = env.fastsum_within(Duration::from_secs(20), &[b"-c", b"SUMS"]);
        assert_eq!(out.status, 1, "{}", out.stderr_str());
        let stdout = out.stdout_str();
        for name in hostile {
            assert!(
                stdout.contains(&format!("{name}: FAILED open or read\n")),
                "{name} (padding {padding}): {stdout}"
            );
        }
        assert_eq!(stdout.matches(": OK\n").count(), padding, "{stdout}");
        let stderr = out.stderr_str();
        for name in ["fifo", "/dev/zero", "zero-link", "/dev/null"] {
            assert!(
                stderr.contains(&format!("{name}: not a regular file\n")),
                "{stderr}"
            );
        }
        for name in ["t/", "/", "/proc/self/"] {
            assert!(
                stderr.contains(&format!("{name}: Is a directory\n")),
                "{stderr}"
            );
        }
        // --ignore-missing does not hide them, --json says the same.
        let out = env.fastsum_within(
            Duration::from_secs(20),
            &[b"-c", b"--ignore-missing", b"--json", b"SUMS"],
        );
        assert_eq!(out.status, 1, "{}", out.stderr_str());
        assert!(!out
            .stdout_str()
            .contains(r#""path":"fifo","algorithm":"md5","digest""#));
    }
}

#[test]
fn directory_lines_are_walked_only_with_dirs_and_never_on_a_generated_file_system() {
    let env = TestEnv::new();
    env.file(b"SUMS", format!("{EMPTY_MD5}  /proc/self/\n").as_bytes());
    let out = env.fastsum_within(Duration::from_secs(20), &[b"-c", b"--dirs", b"SUMS"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(out
        .stdout_str()
        .contains("/proc/self/: FAILED open or read"));
    assert!(
        out.stderr_str().contains("generated file system"),
        "{}",
        out.stderr_str()
    );
    // `-c -r` and the other walk options stay meaningless.
    let out = env.fastsum_within(Duration::from_secs(20), &[b"-c", b"-r", b"--dirs", b"SUMS"]);
    assert_eq!(out.status, 2);
    assert!(out.stderr_str().contains("meaningless when verifying"));
}

#[test]
fn the_gnu_personalities_read_devices_as_coreutils_does() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"SUMS", format!("{EMPTY_MD5}  /dev/null\n").as_bytes());
    let out = env.fastsum("md5sum", &[b"--strict", b"-c", b"SUMS"], b"");
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "/dev/null: OK\n");
    let reference = env.reference("md5sum", &[b"--strict", b"-c", b"SUMS"], b"");
    assert_eq!(out, reference);
}

/// The hostile review: `-c --dirs` entered a /proc mounted below a listed
/// directory (and cgroupfs below /sys/fs/cgroup/), and a line naming `-`
/// made fastsum's -c read standard input (/dev/zero: without end).
#[test]
fn no_generated_mount_below_and_no_standard_input_from_a_line() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("t/p");
    env.file(b"t/a", b"a\n");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "proc", "proc"])
        .arg(env.path().join("t/p"))
        .status()
        .is_ok_and(|s| s.success());
    if mounted {
        env.file(b"SUMS", format!("{EMPTY_MD5}  t/\n").as_bytes());
        let out = env.fastsum_within(Duration::from_secs(20), &[b"-c", b"--dirs", b"SUMS"]);
        let _ = std::process::Command::new("umount")
            .arg(env.path().join("t/p"))
            .status();
        assert_eq!(out.status, 1, "{}", out.stderr_str());
        assert!(out.stdout_str().contains("t/: FAILED open or read"));
        assert!(
            out.stderr_str().contains("t/p: a generated file system"),
            "{}",
            out.stderr_str()
        );
    } else {
        crate::testenv::skip("no proc mount here (needs root)");
    }
    // `-`: a file of that name in fastsum's own -c; standard input stays
    // closed to it (here /dev/zero, which would never end).
    env.file(b"DASH", format!("{EMPTY_MD5}  -\n").as_bytes());
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let out = env
        .command("fastsum")
        .args(["-c", "DASH"])
        .stdin(zero)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "-: FAILED open or read\n"
    );
    env.file(b"-", b"");
    let out = env.fastsum_within(Duration::from_secs(20), &[b"-c", b"DASH"]);
    assert_eq!((out.status, out.stdout_str().as_str()), (0, "-: OK\n"));
    // md5sum reads standard input for `-`, as coreutils does.
    let out = env.fastsum("md5sum", &[b"-c", b"DASH"], b"");
    assert_eq!(out, env.reference("md5sum", &[b"-c", b"DASH"], b""));
}
