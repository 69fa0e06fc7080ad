//! `fastsum -c` against lists that lie: a
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

/// A hashdeep column line that names a column twice (`size,md5,md5,...`)
/// had its second, wrong digest never read (`audit` passed, exit 0); a
/// section of tiger digests alone (two appended hashdeep runs) was an
/// "improperly formatted" line, so a corrupted file in it left `-c` at
/// exit 0; 80,000 columns of md5 made `-c` hash the file 80,000 times (a
/// minute and more for a 3 MB list). Each is refused now, in seconds.
#[test]
fn hashdeep_column_lines_that_hide_a_digest_are_refused() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"a\n");
    env.file(b"t/p", b"corrupted since\n");
    // hashlib.md5(b"a\n").hexdigest()
    let md5 = "60b725f10c9c85c70d97880dfe8191b3";
    let header = "%%%% HASHDEEP-1.0\n";
    let twice = format!(
        "{header}%%%% size,md5,md5,filename\n2,{md5},{},t/a\n",
        "0".repeat(32)
    );
    env.file(b"twice.hd", twice.as_bytes());
    let audit = env.fastsum_within(Duration::from_secs(60), &[b"audit", b"twice.hd", b"t"]);
    assert_ne!(audit.status, 0, "{}", audit.stdout_str());
    assert!(
        audit.stderr_str().contains("names md5 twice"),
        "{}",
        audit.stderr_str()
    );
    let check = env.fastsum_within(Duration::from_secs(60), &[b"-c", b"twice.hd"]);
    assert_eq!(check.status, 1, "{}", check.stderr_str());
    // A tiger-only section after an md5 one: its file is refused.
    let tiger = "0".repeat(48);
    let sections = format!(
        "{header}%%%% size,md5,filename\n2,{md5},t/a\n{header}%%%% size,tiger,filename\n16,{tiger},t/p\n"
    );
    env.file(b"sections.hd", sections.as_bytes());
    let check = env.fastsum_within(Duration::from_secs(60), &[b"-c", b"sections.hd"]);
    assert_eq!(check.status, 1, "{}", check.stderr_str());
    assert!(
        check
            .stderr_str()
            .contains("tiger digest cannot be checked"),
        "{}",
        check.stderr_str()
    );
    // 80,000 columns: refused at once (the 60 s limit fails a hang).
    let many = format!(
        "{header}%%%% size,{}filename\n2,{}t/a\n",
        "md5,".repeat(80_000),
        format!("{md5},").repeat(80_000)
    );
    env.file(b"many.hd", many.as_bytes());
    let check = env.fastsum_within(Duration::from_secs(60), &[b"-c", b"many.hd"]);
    assert_eq!(check.status, 1, "{}", check.stderr_str());
}

/// A Release
/// entry reached through a symbolic link out of the list's directory
/// (`repo/link -> ../out`, entry `link/s`) was read and OK, where
/// `../out/s` is refused; a `--json` record whose size is no whole number
/// of bytes (-1, 2.5, "x", null) was checked without it and OK.
#[test]
fn a_list_cannot_reach_out_through_a_link_nor_pass_an_impossible_size() {
    let env = TestEnv::new();
    env.mkdir("out");
    env.mkdir("repo");
    env.file(b"out/s", b"secret\n");
    env.file(b"repo/in", b"secret\n");
    std::os::unix::fs::symlink("../out", env.path().join("repo/link")).unwrap();
    std::os::unix::fs::symlink("../out/s", env.path().join("repo/file-link")).unwrap();
    // GNU sha256sum's digest of the file, not fastsum's.
    let sha = std::process::Command::new("sha256sum")
        .arg(env.path().join("out/s"))
        .output()
        .expect("sha256sum runs");
    let sha = String::from_utf8_lossy(&sha.stdout)[..64].to_string();
    let release = format!("Origin: x\nSHA256:\n {sha} 7 link/s\n {sha} 7 file-link\n {sha} 7 in\n");
    env.file(b"repo/Release", release.as_bytes());
    let out = env.fastsum_within(Duration::from_secs(60), &[b"-c", b"repo/Release"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "repo/in: OK\n", "{}", out.stderr_str());
    for name in ["repo/link/s", "repo/file-link"] {
        let said =
            format!("{name}: refused: outside the list's directory (through a symbolic link)");
        assert!(out.stderr_str().contains(&said), "{}", out.stderr_str());
    }
    env.file(b"a", b"a\n");
    for size in ["-1", "2.5", "\"x\"", "null"] {
        // The right digest (hashlib.md5(b"a\n")), an impossible size.
        let record = format!(
            "{{\"path\":\"a\",\"algorithm\":\"md5\",\"digest\":\"60b725f10c9c85c70d97880dfe8191b3\",\"size\":{size}}}\n"
        );
        env.file(b"L.json", record.as_bytes());
        let out = env.fastsum_within(Duration::from_secs(60), &[b"-c", b"L.json"]);
        assert_ne!(out.status, 0, "size {size}: {}", out.stdout_str());
        assert!(
            out.stderr_str().contains("not a whole number of bytes"),
            "{}",
            out.stderr_str()
        );
    }
}

/// A list cut short by another writer while `-c` reads it: every line it
/// still had matched, but the lines it lost were never checked, so
/// fastsum's own mode says so and fails (GNU's md5sum checks what it
/// read and exits 0). The list is cut once
/// the run holds it open, while the run hashes a large file it names.
#[test]
fn a_list_cut_short_while_it_is_read_is_not_called_verified() {
    let env = TestEnv::new();
    let big = vec![0x5a_u8; 256 << 20];
    env.file(b"big", &big);
    let big_md5 = std::process::Command::new("python3")
        .current_dir(env.path())
        .args([
            "-c",
            "import hashlib; print(hashlib.md5(open('big','rb').read()).hexdigest())",
        ])
        .output()
        .unwrap();
    let big_md5 = String::from_utf8(big_md5.stdout).unwrap();
    let mut text = format!("{}  big\n", big_md5.trim());
    let first_line = text.len() as u64;
    for i in 0..100 {
        env.file(format!("small{i}").as_bytes(), b"");
        text.push_str(&format!("{EMPTY_MD5}  small{i}\n"));
    }
    env.file(b"SUMS", text.as_bytes());
    let mut child = env
        .command("fastsum")
        .args(["-c", "SUMS"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let fds = format!("/proc/{}/fd", child.id());
    let sums = env.path().join("SUMS");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let holds = || {
        std::fs::read_dir(&fds)
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == sums))
    };
    while !holds() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it opened the list"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the run never opened SUMS"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let cut_while_running = child.try_wait().unwrap().is_none();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&sums)
        .unwrap()
        .set_len(first_line)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(cut_while_running);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("SUMS: the list changed while it was read"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("big: OK"));

    // Left alone, the same list is verified.
    env.file(b"SUMS", text.as_bytes());
    let out = env.fastsum_within(Duration::from_secs(60), &[b"-c", b"SUMS"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
}

/// A listed file removed, or renamed over, while `-c`
/// reads it got "OK", exit 0, on the in-line path (a few files, hashed
/// one after another): that read took no stamp after it. strace holds
/// the first read or map of the file for 0.7 s while another thread
/// changes the file under it; the check must fail, never say OK.
#[test]
fn a_listed_file_changed_while_checked_is_never_ok() {
    if crate::testenv::lacks(&["strace", "md5sum"]) {
        return crate::testenv::skip("needs strace to hold the read and md5sum for the list");
    }
    let env = TestEnv::new();
    env.mkdir("t");
    let bytes = crate::testenv::pattern(2_000_000);
    let other: Vec<u8> = bytes.iter().map(|b| b ^ 0x5a).collect();
    let target = env.path().join("t/big");
    for (what, change) in [("removed", 0), ("renamed over", 1)] {
        std::fs::write(&target, &bytes).unwrap();
        let list = env.reference("md5sum", &[b"t/big"], b"");
        env.file(b"c.md5", &list.stdout);
        let path = target.clone();
        let other = other.clone();
        let changer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            match change {
                0 => std::fs::remove_file(&path).unwrap(),
                _ => {
                    let new = path.with_file_name(".new");
                    std::fs::write(&new, &other).unwrap();
                    std::fs::rename(&new, &path).unwrap();
                }
            }
        });
        let held = format!(
            "-e inject=mmap,read,pread64:delay_enter=700000:when=1 -P {}",
            target.display()
        );
        let out = std::process::Command::new("strace")
            .args([
                "-f",
                "-qq",
                "-o",
                "/dev/null",
                "-e",
                "trace=mmap,read,pread64",
            ])
            .args(held.split(' '))
            .arg(crate::testenv::fastsum_bin())
            .args(["-c", "c.md5"])
            .current_dir(env.path())
            .output()
            .unwrap();
        changer.join().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(!said.contains(": OK"), "{what}: {said}");
        assert_eq!(out.status.code(), Some(1), "{what}: {said}");
    }
}
