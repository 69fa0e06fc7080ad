//! `fastsum diff` with a remote side against a real OpenSSH
//! server on 127.0.0.1 (sshd.rs): the corpus generator's own list of
//! changes must come out whichever side is remote and whichever method
//! hashes it, and a connection dropped mid-stream fails the diff without
//! a single false "removed" line.

use crate::sshd;
use crate::testenv;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::sshd::sh_quote;
use testenv::{as_expected, changes_corpus, TestEnv};

/// A transport command line as `-e` takes it (each word single-quoted).
fn rsh_line(words: &[String]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| String::from_utf8(sh_quote(w.as_bytes())).unwrap())
        .collect();
    quoted.join(" ")
}

fn fastsum_diff(env: &TestEnv, args: &[String]) -> std::process::Output {
    Command::new(crate::testenv::fastsum_bin())
        .arg("diff")
        .args(args)
        .current_dir(env.path())
        .output()
        .unwrap()
}

#[test]
fn a_remote_side_gives_the_corpus_changes_by_every_method() {
    let sshd = sshd::start_sshd();
    let env = TestEnv::new();
    let (top, expected) = changes_corpus(&env);
    let (old, new) = (top.join("old"), top.join("new"));
    let (old, new) = (old.display().to_string(), new.display().to_string());
    let host = sshd.host();
    let fastsum = crate::testenv::fastsum_bin().to_string();
    for (method, algorithm) in [
        ("fastsum", "md5"),
        ("fastsum", "xxh128"),
        ("coreutils", "md5"),
        ("bsd", "sha256"),
        ("perl", "sha1"),
        ("python", "md5"),
    ] {
        for (a, b) in [
            (old.clone(), format!("{host}:{new}")),
            (format!("{host}:{old}"), new.clone()),
        ] {
            let out = fastsum_diff(
                &env,
                &[
                    a,
                    b,
                    "-v".into(),
                    "-a".into(),
                    algorithm.into(),
                    "--remote-method".into(),
                    method.into(),
                    "--remote-fastsum".into(),
                    fastsum.clone(),
                    "-e".into(),
                    rsh_line(&sshd.ssh()),
                ],
            );
            let said = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{method} {algorithm}: {said}");
            assert_eq!(
                as_expected(&String::from_utf8_lossy(&out.stdout)),
                expected,
                "{method} {algorithm}"
            );
            assert!(
                said.contains(&format!("hashed there by the {method} method")),
                "{said}"
            );
        }
    }
    // Both sides remote, the default method and algorithm (md5).
    let out = fastsum_diff(
        &env,
        &[
            format!("{host}:{old}"),
            format!("{host}:{new}"),
            "-e".into(),
            rsh_line(&sshd.ssh()),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(as_expected(&String::from_utf8_lossy(&out.stdout)), expected);
    // The same tree on both sides: no change, exit 0.
    let out = fastsum_diff(
        &env,
        &[
            old.clone(),
            format!("{host}:{old}"),
            "-e".into(),
            rsh_line(&sshd.ssh()),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    // A missing remote path: trouble, exit 2, naming host and path.
    let out = fastsum_diff(
        &env,
        &[
            old.clone(),
            format!("{host}:{old}/nothing"),
            "-e".into(),
            rsh_line(&sshd.ssh()),
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(out.stdout.is_empty());
    assert!(
        said.contains(&format!("{host}:{old}/nothing")) && said.contains("No such file"),
        "{said}"
    );
}

#[test]
fn a_connection_dropped_mid_stream_is_trouble_not_a_tree_half_removed() {
    let sshd = sshd::start_sshd();
    let env = TestEnv::new();
    let (top, _) = changes_corpus(&env);
    let (old, new) = (top.join("old"), top.join("new"));
    // The remote md5sum answers for its files, then stalls (as a slow
    // disk would) after leaving a mark; the test then kills the server's
    // session processes, as a host that drops the connection does.
    let shims = tempfile::tempdir().unwrap();
    let mark = shims.path().join("mark");
    sshd::shim(
        shims.path(),
        "md5sum",
        &format!(
            "case \"$1\" in --version) exec /usr/bin/md5sum --version;; esac\n\
             /usr/bin/md5sum \"$@\"\ntouch '{}'\nsleep 60\n",
            mark.display()
        ),
    );
    let child = Command::new(crate::testenv::fastsum_bin())
        .arg("diff")
        .arg(&old)
        .arg(format!("{}:{}", sshd.host(), new.display()))
        .args(["--remote-method", "coreutils", "-e"])
        .arg(rsh_line(&sshd.ssh_with_path(shims.path())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while !mark.exists() {
        assert!(Instant::now() < until, "the remote md5sum never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(sshd.kill_sessions() > 0, "no session to kill");
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        out.stdout.is_empty(),
        "nothing reported from half a tree: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        said.contains("127.0.0.1:") && said.contains(new.as_os_str().to_str().unwrap()),
        "{said}"
    );
    assert!(
        said.contains("incomplete") && said.contains("closed"),
        "{said}"
    );
}

#[test]
fn with_cache_both_ends_answer_from_theirs_and_an_edit_still_shows() {
    let sshd = sshd::start_sshd();
    let env = TestEnv::new();
    let (top, expected) = changes_corpus(&env);
    let (old, new) = (top.join("old"), top.join("new"));
    let host = sshd.host();
    let (local_cache, remote_cache) = (env.path().join("here"), env.path().join("there"));
    let rsh = rsh_line(&sshd.ssh_with_prefix(&format!(
        "XDG_CACHE_HOME={}; export XDG_CACHE_HOME;",
        remote_cache.display()
    )));
    let run = || {
        Command::new(crate::testenv::fastsum_bin())
            .arg("diff")
            .arg("--cache")
            .arg(&old)
            .arg(format!("{host}:{}", new.display()))
            .args([
                "--remote-fastsum",
                crate::testenv::fastsum_bin(),
                "-e",
                &rsh,
            ])
            .env("XDG_CACHE_HOME", &local_cache)
            .output()
            .unwrap()
    };
    for round in 0..2 {
        let out = run();
        assert_eq!(
            out.status.code(),
            Some(1),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            as_expected(&String::from_utf8_lossy(&out.stdout)),
            expected,
            "round {round}"
        );
    }
    assert!(local_cache.join("fastsum/cache.sqlite").exists());
    assert!(
        remote_cache.join("fastsum/cache.sqlite").exists(),
        "the remote fastsum kept its cache"
    );
    // An edit on the remote side, same size, of a file that was unchanged:
    // the remote cache must not answer for it.
    let unchanged = expected_unchanged(&old, &new, &expected);
    let mut bytes = std::fs::read(new.join(&unchanged)).unwrap();
    bytes[0] ^= 0xff;
    std::fs::write(new.join(&unchanged), &bytes).unwrap();
    let out = run();
    let listed = as_expected(&String::from_utf8_lossy(&out.stdout));
    assert!(
        listed.contains(&format!("modified\t{unchanged}\t{unchanged}\n")),
        "{listed}"
    );
}

/// A file of both trees the corpus did not change.
fn expected_unchanged(old: &std::path::Path, new: &std::path::Path, expected: &str) -> String {
    let mut stack = vec![old.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(old).unwrap().display().to_string();
            let size = std::fs::metadata(&path).unwrap().len();
            if size > 0 && new.join(&rel).is_file() && !expected.contains(&rel) {
                return rel;
            }
        }
    }
    panic!("no unchanged file");
}

/// A copy of fastsum that any user may run (the build may sit under a
/// directory only root can enter).
fn runnable_copy() -> (tempfile::TempDir, String) {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.path().join("fastsum");
    std::fs::copy(crate::testenv::fastsum_bin(), &exe).unwrap();
    let exe = exe.display().to_string();
    (dir, exe)
}

fn fastsum_r(args: &[String]) -> std::process::Output {
    Command::new(crate::testenv::fastsum_bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

const METHODS: [&str; 4] = ["fastsum", "coreutils", "perl", "python"];

#[test]
fn a_symlinked_remote_root_lists_what_the_local_walk_lists() {
    // `find "$P"` does not follow a root that is a symlink:
    // the coreutils, perl and python methods gave an empty tree, exit 0.
    let sshd = sshd::start_sshd();
    let env = TestEnv::new();
    env.mkdir("t/sub");
    env.file(b"t/a", b"one");
    env.file(b"t/sub/b", b"two");
    std::os::unix::fs::symlink("t", env.path().join("tl")).unwrap();
    std::os::unix::fs::symlink("t/a", env.path().join("fl")).unwrap();
    let host = sshd.host();
    let rsh = rsh_line(&sshd.ssh());
    for root in ["tl", "fl"] {
        let path = env.path().join(root).display().to_string();
        let local = fastsum_r(&["-r".into(), path.clone()]);
        assert!(local.status.success());
        let want = String::from_utf8_lossy(&local.stdout)
            .replace(&format!("  {path}"), &format!("  {host}:{path}"));
        assert_eq!(want.lines().count(), if root == "tl" { 2 } else { 1 });
        for method in METHODS {
            let args: Vec<String> = [
                "-r",
                "-e",
                &rsh,
                "--remote-method",
                method,
                "--remote-fastsum",
                crate::testenv::fastsum_bin(),
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("{host}:{path}")])
            .collect();
            let out = fastsum_r(&args);
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                want,
                "{root} {method}"
            );
            assert!(out.status.success(), "{root} {method}");
        }
    }
    for method in METHODS {
        let out = fastsum_diff(
            &env,
            &[
                "-e".into(),
                rsh.clone(),
                "--remote-method".into(),
                method.into(),
                "--remote-fastsum".into(),
                crate::testenv::fastsum_bin().into(),
                "t".into(),
                format!("{host}:{}", env.path().join("tl").display()),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{method}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn an_unreadable_remote_directory_is_an_error_never_a_shorter_tree() {
    // find's status was once lost in the pipe: perl, python and bsd
    // printed the tree without the directory, exit 0. The remote side runs
    // as nobody (root reads everything).
    use std::os::unix::fs::PermissionsExt as _;
    let nobody = "exec setpriv --reuid=65534 --regid=65534 --clear-groups";
    let probe = Command::new("sh")
        .args(["-c", &format!("{nobody} true")])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        crate::testenv::skip("cannot run as nobody here (needs root and setpriv)");
        return;
    }
    let sshd = sshd::start_sshd();
    let env = TestEnv::new();
    let open = |p: &std::path::Path, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    open(env.path(), 0o755);
    for side in ["t", "c"] {
        env.mkdir(&format!("{side}/sub"));
        env.file(format!("{side}/a").as_bytes(), b"one");
        env.file(format!("{side}/sub/b").as_bytes(), b"two");
        open(&env.path().join(side), 0o755);
        open(&env.path().join(side).join("sub"), 0o755);
    }
    open(&env.path().join("t/sub"), 0o000);
    let (_copy, exe) = runnable_copy();
    let host = sshd.host();
    let rsh = rsh_line(&sshd.ssh_with_prefix(nobody));
    let remote = format!("{host}:{}", env.path().join("t").display());
    for method in METHODS {
        let common = [
            "-e".to_string(),
            rsh.clone(),
            "--remote-method".into(),
            method.into(),
            "--remote-fastsum".into(),
            exe.clone(),
        ];
        let out = fastsum_diff(&env, &[&common[..], &["c".into(), remote.clone()]].concat());
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{method}: {said}");
        assert!(
            said.contains("sub") && said.contains("Permission denied"),
            "{method}: {said}"
        );
        let out = fastsum_r(
            &[
                &["-r".to_string()][..],
                &common,
                std::slice::from_ref(&remote),
            ]
            .concat(),
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{method}: {said}");
        assert!(
            said.contains("sub") && said.contains("Permission denied"),
            "{method}: {said}"
        );
    }
    open(&env.path().join("t/sub"), 0o755);
}

#[test]
fn an_upload_to_a_host_that_stops_reading_says_so_and_falls_back() {
    // The write to a closed pipe once killed fastsum by SIGPIPE
    // (exit 141, no message).
    let sshd = sshd::start_sshd();
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"one");
    let ssh = sshd.ssh().join(" ");
    // The transport gives the host no standard input: nothing is read.
    let deaf = vec![
        "sh".to_string(),
        "-c".into(),
        format!("exec {ssh} \"$@\" </dev/null"),
        "sh".into(),
    ];
    let path = env.path().join("t").display().to_string();
    let out = fastsum_r(&[
        "-r".into(),
        "--upload-self".into(),
        "-e".into(),
        rsh_line(&deaf),
        format!("{}:{path}", sshd.host()),
    ]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("uploading fastsum failed") && said.contains("method ran instead"),
        "{said}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{path}/a")));
}
