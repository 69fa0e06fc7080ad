//! Directory digests: `fastsum -r --dirs` and `fastsum
//! tree-digest` against the reference implementation printed in
//! docs/DIRECTORY-DIGEST.md (Python's hashlib, run from the document
//! itself), on a tree with every kind of entry; then the properties the
//! specification promises, and the refusals.

use crate::testenv::{Outcome, TestEnv};

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::Command;

/// The Python block of the specification, as written there.
fn reference_code() -> String {
    let doc = include_str!("../../../../docs/DIRECTORY-DIGEST.md");
    let start = doc.find("```python\n").expect("a python block") + "```python\n".len();
    let end = start + doc[start..].find("```").expect("its end");
    doc[start..end].to_string()
}

/// `DIGEST  DIR/` for every directory under `root`, by the reference.
fn reference(env: &TestEnv, algorithm: &str, root: &str) -> String {
    let script = env.path().join("dirdigest.py");
    std::fs::write(&script, reference_code()).unwrap();
    let out = Command::new("python3")
        .arg(&script)
        .args([algorithm, root])
        .current_dir(env.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// The directory lines of a `-r --dirs --untagged` run.
fn dir_lines(out: &Outcome) -> String {
    out.stdout_str()
        .lines()
        .filter(|l| l.ends_with('/'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Every kind of entry, and names whose order differs between a plain
/// sort and the walk's (`a`, `a.txt`, `a/`, `a0`).
fn every_kind(env: &TestEnv) {
    env.mkdir("t/a/deep");
    env.mkdir("t/empty");
    env.mkdir("t/a0");
    env.file(b"t/a.txt", b"text\n");
    env.file(b"t/a/one", b"one\n");
    env.file(b"t/a/deep/two", &[7u8; 100_000]);
    env.file(b"t/a0/zero-length", b"");
    env.file(b"t/new\nline", b"a newline in its name\n");
    env.file(b"t/caf\xe9", b"latin-1 name\n");
    let p = env.path();
    symlink("a.txt", p.join("t/link")).unwrap();
    symlink("../nowhere", p.join("t/a/dangling")).unwrap();
    symlink("a", p.join("t/dirlink")).unwrap();
    let fifo = std::ffi::CString::new(p.join("t/a0/fifo").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
}

#[test]
fn every_directory_digest_equals_the_documented_reference() {
    let env = TestEnv::new();
    every_kind(&env);
    for algorithm in ["md5", "sha256", "sha3_256", "blake2b", "sha1"] {
        let name = algorithm.replace("sha3_", "sha3-");
        let want = reference(&env, algorithm, "t");
        assert_eq!(want.lines().count(), 5, "{want}");
        let out = fastsum(&env, &["-r", "--dirs", "--untagged", "-a", &name, "t"]);
        assert_eq!(out.status, 0, "{}", out.stderr_str());
        assert_eq!(dir_lines(&out), want, "{algorithm}");
        // The files' lines are -r's own, the directories' after them.
        let plain = fastsum(&env, &["-r", "--untagged", "-a", &name, "t"]);
        let files: String = out
            .stdout_str()
            .lines()
            .filter(|l| !l.ends_with('/'))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(files, plain.stdout_str());
        // tree-digest: the root's line only, the same line.
        let root = fastsum(&env, &["tree-digest", "-a", &name, "t"]);
        let tagged = fastsum(&env, &["-r", "--dirs", "-a", &name, "t"]);
        assert_eq!(
            root.stdout_str(),
            format!("{}\n", tagged.stdout_str().lines().last().unwrap()),
            "{algorithm}"
        );
        assert_eq!(root.status, 0);
    }
    // -L: links followed; the reference's rule is no-follow, so compare
    // with a copy of the tree in which links were replaced by their
    // targets (cp -rL).
    let out = fastsum(&env, &["tree-digest", "-L", "-a", "sha256", "t"]);
    assert_eq!(out.status, 1, "a dangling link cannot be followed");
    std::fs::remove_file(env.path().join("t/a/dangling")).unwrap();
    std::fs::remove_file(env.path().join("t/a0/fifo")).unwrap();
    let copied = Command::new("cp")
        .args(["-rL", "t", "followed"])
        .current_dir(env.path())
        .status()
        .unwrap();
    assert!(copied.success());
    let want = reference(&env, "sha256", "followed");
    let want = want.lines().last().unwrap().split(' ').next().unwrap();
    let out = fastsum(&env, &["tree-digest", "-L", "-a", "sha256", "--json", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(
        out.stdout_str(),
        format!("{{\"path\":\"t/\",\"algorithm\":\"sha256\",\"directory_digest\":\"{want}\"}}\n")
    );
}

fn digest_of(env: &TestEnv, dir: &str) -> String {
    let out = fastsum(env, &["tree-digest", "--json", dir]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    out.stdout_str()
}

#[test]
fn what_is_in_the_digest_and_what_is_not() {
    let env = TestEnv::new();
    every_kind(&env);
    let p = env.path();
    let before = digest_of(&env, "t").replace("\"t/\"", "\"X\"");
    // A copy elsewhere, times and modes not kept: the same digest.
    assert!(Command::new("cp")
        .args(["-r", "t", "copy"])
        .current_dir(p)
        .status()
        .unwrap()
        .success());
    assert_eq!(
        digest_of(&env, "copy").replace("\"copy/\"", "\"X\""),
        before
    );
    std::fs::set_permissions(p.join("t/a/one"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let file = std::fs::File::options()
        .append(true)
        .open(p.join("t/a.txt"))
        .unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH)
        .unwrap();
    assert_eq!(digest_of(&env, "t").replace("\"t/\"", "\"X\""), before);
    // Each of these changes it, and changing it back restores it.
    type Change = (&'static str, fn(&Path), fn(&Path));
    let changes: [Change; 5] = [
        (
            "a byte",
            |p| std::fs::write(p.join("t/a/deep/two"), [8u8; 100_000]).unwrap(),
            |p| std::fs::write(p.join("t/a/deep/two"), [7u8; 100_000]).unwrap(),
        ),
        (
            "a name",
            |p| std::fs::rename(p.join("t/a/one"), p.join("t/a/One")).unwrap(),
            |p| std::fs::rename(p.join("t/a/One"), p.join("t/a/one")).unwrap(),
        ),
        (
            "an empty directory",
            |p| std::fs::create_dir(p.join("t/empty/more")).unwrap(),
            |p| std::fs::remove_dir(p.join("t/empty/more")).unwrap(),
        ),
        (
            "a link's target",
            |p| {
                std::fs::remove_file(p.join("t/link")).unwrap();
                symlink("a0", p.join("t/link")).unwrap()
            },
            |p| {
                std::fs::remove_file(p.join("t/link")).unwrap();
                symlink("a.txt", p.join("t/link")).unwrap()
            },
        ),
        (
            "a file for a link",
            |p| {
                std::fs::remove_file(p.join("t/link")).unwrap();
                std::fs::write(p.join("t/link"), b"a.txt").unwrap()
            },
            |p| {
                std::fs::remove_file(p.join("t/link")).unwrap();
                symlink("a.txt", p.join("t/link")).unwrap()
            },
        ),
    ];
    for (what, change, undo) in changes {
        change(p);
        assert_ne!(
            digest_of(&env, "t").replace("\"t/\"", "\"X\""),
            before,
            "{what}"
        );
        undo(p);
        assert_eq!(
            digest_of(&env, "t").replace("\"t/\"", "\"X\""),
            before,
            "{what} undone"
        );
    }
}

#[test]
fn nothing_unread_gets_a_digest_and_what_was_read_keeps_its_own() {
    let env = TestEnv::new();
    env.mkdir("t/fine");
    env.mkdir("t/hidden");
    env.file(b"t/fine/a", b"a");
    env.file(b"t/hidden/b", b"b");
    env.file(b"t/secret", b"s");
    let p = env.path();
    for dir in [
        p.to_path_buf(),
        p.join("t"),
        p.join("t/fine"),
        p.join("t/hidden"),
    ] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(p.join("t/secret"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(p.join("t/hidden"), std::fs::Permissions::from_mode(0o000)).unwrap();
    // As nobody when the suite runs as root (root reads anything).
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = (unsafe { libc::getuid() } == 0).then_some(65534);
    let run = |args: &[&[u8]]| env.fastsum_within_as(uid, std::time::Duration::from_secs(30), args);
    let out = run(&[b"-r", b"--dirs", b"t"]);
    assert_eq!(out.status, 1);
    let fine = fastsum(&env, &["-r", "--dirs", "t/fine"]);
    assert_eq!(out.stdout_str(), fine.stdout_str(), "t/fine's lines only");
    let said = out.stderr_str();
    for part in [
        "t/hidden: Permission denied",
        "t/secret: Permission denied",
        "t: no directory digest: something below it could not be read",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }
    let out = run(&[b"tree-digest", b"t", b"t/fine"]);
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stdout_str().lines().count(),
        1,
        "t/fine only: {}",
        out.stdout_str()
    );
    assert!(out.stdout_str().contains("(t/fine/)"));
    std::fs::set_permissions(p.join("t/hidden"), std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn directory_digests_refuse_what_would_make_them_wrong() {
    let env = TestEnv::new();
    env.mkdir("t/sub");
    env.file(b"t/sub/a", b"a");
    // Usage errors: 2 in fastsum's own mode as in a subcommand (clap's).
    for (args, status, said) in [
        (
            &["-r", "--dirs", "--max-depth", "1", "t"][..],
            2,
            "--max-depth do not go together",
        ),
        (
            &["-r", "--dirs", "--unordered", "t"],
            2,
            "--unordered do not go together",
        ),
        (&["--dirs", "t"], 2, "meaningful only with --recursive"),
        (
            &["-r", "--dirs", "-a", "md5", "-a", "sha1", "t"],
            2,
            "several -a and --dirs",
        ),
        (&["-r", "--dirs", "-a", "cksum", "t"], 2, "not a hash"),
        (&["tree-digest", "-a", "crc32b", "t"], 2, "not a hash"),
        (
            &["-c", "--dirs", "-r", "SUMS"],
            2,
            "meaningless when verifying",
        ),
        (
            // Said when the remote operand is met, not a usage error.
            &["-r", "--dirs", "host:t"],
            1,
            "--dirs is not available for HOST:PATH",
        ),
    ] {
        let out = fastsum(&env, args);
        assert_eq!(out.status, status, "{args:?}: {}", out.stderr_str());
        assert!(
            out.stderr_str().contains(said),
            "{args:?}: {}",
            out.stderr_str()
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn check_verifies_directory_lines_from_the_tree_as_it_is_now() {
    let env = TestEnv::new();
    every_kind(&env);
    std::fs::remove_file(env.path().join("t/a0/fifo")).unwrap();
    let list = fastsum(&env, &["-r", "--dirs", "-a", "sha256", "t"]);
    assert_eq!(list.status, 0);
    env.file(b"SUMS", &list.stdout);
    let dirs = list
        .stdout_str()
        .lines()
        .filter(|l| l.contains("/) = "))
        .count();
    assert_eq!(dirs, 5);
    // Without --dirs a directory's line names a file, as md5sum reads it
    // (a downloaded list must not make fastsum walk a tree).
    let out = fastsum(&env, &["-c", "SUMS"]);
    assert_eq!(out.status, 1, "{}{}", out.stdout_str(), out.stderr_str());
    assert_eq!(
        out.stdout_str().matches(": FAILED open or read\n").count(),
        5
    );
    assert_eq!(out.stderr_str().matches(": Is a directory\n").count(), 5);
    let out = fastsum(&env, &["-c", "--dirs", "SUMS"]);
    assert_eq!(out.status, 0, "{}{}", out.stdout_str(), out.stderr_str());
    assert_eq!(
        out.stdout_str().matches(": OK\n").count(),
        list.stdout_str().lines().count()
    );
    // A file added two levels down: its directory and the two above fail,
    // nothing else.
    env.file(b"t/a/deep/new", b"new");
    let out = fastsum(&env, &["-c", "--dirs", "SUMS"]);
    assert_eq!(out.status, 1);
    let stdout = out.stdout_str();
    let failed: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_suffix(": FAILED"))
        .collect();
    assert_eq!(failed, ["t/a/deep/", "t/a/", "t/"]);
    assert!(out
        .stderr_str()
        .contains("3 computed checksums did NOT match"));
    // --json: the same verdicts.
    let out = fastsum(&env, &["-c", "--dirs", "--json", "SUMS"]);
    assert!(out
        .stdout_str()
        .contains(r#"{"path":"t/a/","algorithm":"sha256","#));
    assert_eq!(out.stdout_str().matches(r#""status":"failed""#).count(), 3);
    // A directory gone: unreadable, as a missing file is.
    std::fs::remove_file(env.path().join("t/a/deep/new")).unwrap();
    std::fs::rename(env.path().join("t/empty"), env.path().join("t/gone")).unwrap();
    let out = fastsum(&env, &["-c", "--dirs", "SUMS"]);
    assert!(
        out.stdout_str().contains("t/empty/: FAILED open or read"),
        "{}",
        out.stdout_str()
    );
    assert!(
        out.stderr_str().contains("t/empty/: no directory digest"),
        "{}",
        out.stderr_str()
    );
    // diff reads the files' lines and leaves the directories' aside.
    std::fs::rename(env.path().join("t/gone"), env.path().join("t/empty")).unwrap();
    let out = fastsum(&env, &["diff", "-a", "sha256", "SUMS", "t"]);
    assert_eq!(out.status, 0, "{}{}", out.stdout_str(), out.stderr_str());
    // The GNU tools read every name as a file's, as md5sum does.
    let md5 = fastsum(&env, &["-r", "--dirs", "t"]);
    env.file(b"MD5S", &md5.stdout);
    let out = env.fastsum("md5sum", &[b"-c", b"MD5S"], b"");
    assert!(out.stdout_str().contains("t/: FAILED open or read"));
}
