//! Whole trees: recursion against `find | sort | xargs md5sum`,
//! thread counts, special files, links, unreadable and vanishing files,
//! excludes and `--json`.

use crate::testenv;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;
use std::time::Duration;

use testenv::{pattern, TestEnv, ODD_NAMES};

const LIMIT: Duration = Duration::from_secs(60);

/// A tree whose names sort differently by path bytes than by a
/// directory-first walk ("a.txt" < "a/..." < "a0"), with odd names, empty
/// files and files past the mmap threshold.
fn make_tree(env: &TestEnv) {
    for dir in ["t/a", "t/a b", "t/a/deep/er", "t/z", "t/.hidden"] {
        env.mkdir(dir);
    }
    let files: [(&[u8], usize); 10] = [
        (b"t/a.txt", 10),
        (b"t/a0", 0),
        (b"t/a/x", 65),
        (b"t/a/deep/er/y", 5_000_000),
        (b"t/a b/c", 300_000),
        (b"t/z/1", 1),
        (b"t/.hidden/h", 64),
        (b"t/.gitignore", 6),
        (b"t/Z", 55),
        (b"t/z0", 1_048_577),
    ];
    for (name, len) in files {
        env.file(name, &pattern(len));
    }
    for odd in ODD_NAMES {
        let mut name = b"t/a/".to_vec();
        name.extend_from_slice(odd);
        env.file(&name, odd);
    }
}

/// `find DIR -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum`.
fn reference_listing(env: &TestEnv, dir: &str, find_extra: &str) -> Vec<u8> {
    let script =
        format!("find {dir} {find_extra} -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum");
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(env.path())
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("run find | xargs md5sum");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn recursion_matches_sorted_find_xargs_md5sum_at_every_thread_count() {
    let env = TestEnv::new();
    make_tree(&env);
    let expected = reference_listing(&env, "t", "");
    for threads in ["1", "2", "8"] {
        let ours = env.fastsum_within(LIMIT, &[b"-r", b"-j", threads.as_bytes(), b"t"]);
        assert_eq!(ours.status, 0, "{}", ours.stderr_str());
        assert_eq!(ours.stderr_str(), "");
        assert_eq!(
            ours.stdout_str(),
            String::from_utf8_lossy(&expected),
            "-j {threads}"
        );
    }
}

#[test]
fn unordered_prints_the_same_lines() {
    let env = TestEnv::new();
    make_tree(&env);
    let sorted = env.fastsum_within(LIMIT, &[b"-r", b"t"]);
    let unordered = env.fastsum_within(LIMIT, &[b"-r", b"--unordered", b"-j", b"4", b"t"]);
    let lines = |o: &testenv::Outcome| {
        o.stdout
            .split(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(lines(&sorted), lines(&unordered));
}

#[test]
fn operands_keep_their_order_around_directories() {
    let env = TestEnv::new();
    make_tree(&env);
    env.file(b"first", b"1");
    env.file(b"last", b"2");
    let ours = env.fastsum_within(LIMIT, &[b"-r", b"first", b"t/z", b"last"]);
    let mut expected = reference_listing(&env, "first", "");
    expected.extend(reference_listing(&env, "t/z", ""));
    expected.extend(reference_listing(&env, "last", ""));
    assert_eq!(ours.stdout_str(), String::from_utf8_lossy(&expected));
}

#[test]
fn a_directory_without_recursion_fails_as_md5sum_does() {
    let env = TestEnv::new();
    make_tree(&env);
    let ours = env.fastsum_within(LIMIT, &[b"t/Z", b"t", b"t/a0"]);
    assert_eq!(ours.status, 1);
    // md5sum's message, and what to do.
    assert_eq!(ours.stderr_str(), "fastsum: t: Is a directory (use -r)\n");
    assert_eq!(ours.stdout.iter().filter(|&&b| b == b'\n').count(), 2);
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

#[test]
fn fifos_sockets_and_devices_in_a_tree_are_skipped_without_hanging() {
    let env = TestEnv::new();
    make_tree(&env);
    mkfifo(&env.path().join("t/a/pipe"));
    let _socket = std::os::unix::net::UnixListener::bind(env.path().join("t/sock")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", env.path().join("t/zero")).unwrap();
    let expected = reference_listing(&env, "t", "");
    let ours = env.fastsum_within(LIMIT, &[b"-r", b"-L", b"t"]);
    assert_eq!(ours.status, 0, "skipped special files are not failures");
    assert_eq!(ours.stdout_str(), String::from_utf8_lossy(&expected));
    assert_eq!(
        ours.stderr_str(),
        "fastsum: t/a/pipe: skipped fifo (not a regular file)\n\
         fastsum: t/sock: skipped socket (not a regular file)\n\
         fastsum: t/zero: skipped character special file (not a regular file)\n"
    );
}

#[test]
fn a_fifo_named_on_the_command_line_is_read_like_md5sum_reads_it() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let fifo = env.path().join("named");
    mkfifo(&fifo);
    let writer = std::thread::spawn(move || std::fs::write(fifo, b"through a pipe"));
    let ours = env.fastsum_within(LIMIT, &[b"named"]);
    writer.join().unwrap().unwrap();
    assert_eq!(
        ours.stdout_str(),
        format!("{}  named\n", hex_md5(b"through a pipe"))
    );
}

fn hex_md5(bytes: &[u8]) -> String {
    testenv::reference_hex("md5sum", bytes)
}

#[test]
fn symlinks_are_followed_only_with_dash_l_and_a_loop_ends() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    make_tree(&env);
    std::os::unix::fs::symlink("..", env.path().join("t/a/deep/loop")).unwrap();
    std::os::unix::fs::symlink("a b/c", env.path().join("t/link-to-c")).unwrap();

    let plain = env.fastsum_within(LIMIT, &[b"-r", b"t"]);
    assert_eq!(plain.status, 0);
    // Left out, but not without a word.
    assert_eq!(
        plain.stderr_str(),
        "fastsum: 2 symbolic links left out (-L follows them)\n"
    );
    assert_eq!(
        plain.stdout_str(),
        String::from_utf8_lossy(&reference_listing(&env, "t", ""))
    );

    let followed = env.fastsum_within(LIMIT, &[b"-r", b"-L", b"t"]);
    assert_eq!(followed.status, 1, "a loop is reported as find -L does");
    assert_eq!(
        followed.stderr_str(),
        "fastsum: t/a/deep/loop: File system loop detected; 't/a' is part of the same file system loop\n"
    );
    let out = followed.stdout_str();
    assert!(out.contains(&format!("{}  t/link-to-c\n", hex_md5(&pattern(300_000)))));
    // Every real file once, plus the link: nothing walked twice.
    let expected_lines = reference_listing(&env, "t", "")
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count()
        + 1;
    assert_eq!(out.lines().count(), expected_lines, "{out}");
}

#[test]
fn an_unreadable_file_fails_alone() {
    let env = TestEnv::new();
    make_tree(&env);
    // /proc/self/mem is a regular file that every user can open and no one
    // can read at offset 0 (EIO): an unreadable file even for root.
    std::os::unix::fs::symlink("/proc/self/mem", env.path().join("t/a/mem")).unwrap();
    let ours = env.fastsum_within(LIMIT, &[b"-r", b"-L", b"t"]);
    assert_eq!(ours.status, 1);
    assert_eq!(ours.stderr_str(), "fastsum: t/a/mem: Input/output error\n");
    assert_eq!(
        ours.stdout_str(),
        String::from_utf8_lossy(&reference_listing(&env, "t", "")),
        "every other file is still hashed"
    );
}

#[test]
fn permission_denied_files_and_directories_fail_alone() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    // Root reads everything: as root, run fastsum as nobody (65534), in a
    // tree everyone may enter and read but for the two closed entries.
    // SAFETY: geteuid has no preconditions.
    let as_user = (unsafe { libc::geteuid() } == 0).then_some(65534);
    std::fs::set_permissions(env.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    make_tree(&env);
    let secret = env.file(b"t/secret", b"x");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let closed = env.mkdir("t/closed");
    env.file(b"t/closed/inside", b"y");
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
    let ours = env.fastsum_within_as(as_user, LIMIT, &[b"-r", b"t"]);
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(ours.status, 1);
    assert_eq!(
        ours.stderr_str(),
        "fastsum: t/closed: Permission denied\nfastsum: t/secret: Permission denied\n"
    );
    let hashed = ours.stdout_str();
    assert!(
        hashed.contains("  t/") && !hashed.contains("t/closed/inside"),
        "{hashed}"
    );
}

#[test]
fn files_removed_during_the_walk_are_reported_and_the_rest_hashed() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("t");
    let count = 20_000;
    for i in 0..count {
        env.file(format!("t/f{i:05}").as_bytes(), i.to_string().as_bytes());
    }
    // The expected digests, from one run of the reference over every file
    // before any is removed (one md5sum per file cost 45 s).
    let names: Vec<Vec<u8>> = (0..count)
        .map(|i| format!("t/f{i:05}").into_bytes())
        .collect();
    let args: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
    let reference = env.reference("md5sum", &args, b"");
    assert_eq!(reference.status, 0);
    let expected: Vec<String> = reference
        .stdout_str()
        .lines()
        .map(|l| l.split_once("  ").unwrap().0.to_string())
        .collect();
    assert_eq!(expected.len(), count);
    let root = env.path().join("t");
    let remover = std::thread::spawn(move || {
        for i in (0..count).filter(|i| i % 2 == 1) {
            let _ = std::fs::remove_file(root.join(format!("f{i:05}")));
        }
    });
    let ours = env.fastsum_within(LIMIT, &[b"-r", b"t"]);
    remover.join().unwrap();
    let mut seen = BTreeSet::new();
    for line in ours.stdout_str().lines() {
        let (digest, name) = line.split_once("  ").unwrap();
        let i: usize = name.trim_start_matches("t/f").parse().unwrap();
        assert_eq!(digest, expected[i], "{name}");
        seen.insert(i);
    }
    for line in ours.stderr_str().lines() {
        // Removed before it was opened: missing; while it was read (its
        // ctime moved, as unlinking moves it): changed while reading.
        let name = line
            .strip_prefix("fastsum: ")
            .and_then(|l| {
                l.strip_suffix(": No such file or directory")
                    .or_else(|| l.strip_suffix(": file changed while reading"))
            })
            .unwrap_or_else(|| panic!("unexpected message {line:?}"));
        let i: usize = name.trim_start_matches("t/f").parse().unwrap();
        assert_eq!(i % 2, 1, "only removed files may be missing");
        assert!(seen.insert(i), "{name} both hashed and missing");
    }
    for i in (0..count).filter(|i| i % 2 == 0) {
        assert!(
            seen.contains(&i),
            "f{i:05} was never removed yet not hashed"
        );
    }
    let missing = ours.stderr_str().lines().count();
    assert_eq!(ours.status, i32::from(missing > 0));
}

#[test]
fn excludes_leave_out_matching_files_and_whole_directories() {
    let env = TestEnv::new();
    make_tree(&env);
    env.file(b"t/a/debug.log", b"log");
    env.file(b"t/z/trace.log", b"log");
    let ours = env.fastsum_within(
        LIMIT,
        &[b"-r", b"--exclude", b"*.log", b"--exclude=a b/", b"t"],
    );
    let expected = reference_listing(&env, "t", "-name '*.log' -prune -o -path 't/a b' -prune -o");
    assert_eq!(ours.status, 0, "{}", ours.stderr_str());
    assert_eq!(ours.stdout_str(), String::from_utf8_lossy(&expected));
    assert!(!ours.stdout_str().contains(".log"));

    let bad = env.fastsum_within(LIMIT, &[b"-r", b"--exclude", b"a[", b"t"]);
    assert_eq!(bad.status, 1);
    assert_eq!(
        bad.stderr_str(),
        "fastsum: invalid exclude pattern 'a[': unclosed character class; missing ']'
"
    );
    assert!(bad.stdout.is_empty());
}

/// `--exclude-from=FILE` leaves out what the same globs given as
/// `--exclude` leave out (find's listing of the same prunes), skips blank
/// lines, comments and a CRLF's CR, reads a pipe, and refuses a missing
/// file, a directory, one too large, and a bad glob in it, naming each.
#[test]
fn exclude_from_reads_its_globs_as_excludes_and_refuses_what_it_cannot_read() {
    let env = TestEnv::new();
    make_tree(&env);
    env.file(b"t/a/debug.log", b"log");
    env.file(b"t/z/trace.log", b"log");
    // A byte-order mark, a line of blanks (a hostile pass found one left
    // out every file, exit 0), comments, a CRLF line.
    env.file(
        b"globs",
        b"\xEF\xBB\xBF*.log\n# logs of every run\n\n \t\r\n#a b/\na b/\n",
    );
    let expected = reference_listing(&env, "t", "-name '*.log' -prune -o -path 't/a b' -prune -o");
    let ours = env.fastsum_within(LIMIT, &[b"-r", b"--exclude-from=globs", b"t"]);
    assert_eq!(ours.status, 0, "{}", ours.stderr_str());
    assert_eq!(ours.stdout_str(), String::from_utf8_lossy(&expected));
    let given = env.fastsum_within(LIMIT, &[b"-r", b"--exclude=*.log", b"--exclude=a b/", b"t"]);
    assert_eq!(ours.stdout, given.stdout);

    // A pipe, as `--exclude-from=<(...)` gives: read to its end.
    let fifo = env.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let writer = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::write(fifo, b"*.log\na b/\n").unwrap()
    });
    let piped = env.fastsum_within(LIMIT, &[b"-r", b"--exclude-from", b"pipe", b"t"]);
    writer.join().unwrap();
    assert_eq!(piped.stdout, given.stdout, "{}", piped.stderr_str());

    // A pattern of only blanks is refused, never a listing that leaves out
    // every file (a hostile pass found one did, exit 0).
    for glob in [&b""[..], b" ", b"\t"] {
        let mut arg = b"--exclude=".to_vec();
        arg.extend_from_slice(glob);
        let out = env.fastsum_within(LIMIT, &[b"-r", &arg, b"t"]);
        assert_eq!(out.status, 1, "{glob:?}: {}", out.stderr_str());
        assert!(out.stdout.is_empty(), "{glob:?}");
        assert!(
            out.stderr_str().contains("invalid exclude pattern"),
            "{}",
            out.stderr_str()
        );
    }

    env.file(b"huge", &vec![b'x'; (16 << 20) + 1]);
    env.file(b"bad", b"ok\na[\n");
    for (file, says, status) in [
        (
            "nope",
            "cannot open ‘nope’ for reading: No such file or directory",
            2,
        ),
        ("t", "cannot open ‘t’ for reading: Is a directory", 2),
        ("huge", "‘huge’: more than 16 MiB of exclude patterns", 2),
        (
            "bad",
            "invalid exclude pattern 'a[': unclosed character class; missing ']'",
            1,
        ),
    ] {
        let arg = format!("--exclude-from={file}");
        let out = env.fastsum_within(LIMIT, &[b"-r", arg.as_bytes(), b"t"]);
        assert_eq!(out.stderr_str(), format!("fastsum: {says}\n"), "{file}");
        assert_eq!(out.status, status, "{file}");
        assert!(out.stdout.is_empty(), "{file}");
    }

    // The subcommands read it the same way: a tree-digest and a diff with
    // the file answer as with the same --exclude globs.
    let copied = Command::new("cp")
        .args(["-a", "t", "t2"])
        .current_dir(env.path())
        .status()
        .unwrap();
    assert!(copied.success());
    env.file(b"t2/a/debug.log", b"other log");
    env.file(b"t2/a b/new", b"only here");
    for args in [
        &[&b"tree-digest"[..], b"t"][..],
        &[b"diff", b"t", b"t2"],
        &[b"dupes", b"t"],
    ] {
        let with = |extra: &[&[u8]]| {
            let mut all: Vec<&[u8]> = args[..1].to_vec();
            all.extend_from_slice(extra);
            all.extend_from_slice(&args[1..]);
            env.fastsum_within(LIMIT, &all)
        };
        let from = with(&[b"--exclude-from=globs"]);
        let given = with(&[b"--exclude=*.log", b"--exclude=a b/"]);
        let none = with(&[]);
        assert_eq!(from.stdout_str(), given.stdout_str(), "{args:?}");
        assert_eq!(from.status, given.status, "{args:?}");
        if args[0] == b"diff" {
            assert_eq!(from.status, 0, "{}", from.stderr_str());
            assert_ne!(none.status, 0, "the excluded paths differ");
        }
        let missing = with(&[b"--exclude-from=nope"]);
        assert_eq!(missing.status, 2, "{args:?}");
        assert!(
            missing.stderr_str().contains("'nope'")
                && missing.stderr_str().contains("No such file or directory"),
            "{}",
            missing.stderr_str()
        );
        assert!(missing.stdout.is_empty());
    }
}

#[test]
fn one_file_system_stays_on_the_starting_file_system() {
    use std::os::unix::fs::MetadataExt;
    let env = TestEnv::new();
    let elsewhere = match tempfile::tempdir_in("/dev/shm") {
        Ok(dir) => dir,
        Err(_) => return crate::testenv::skip("no /dev/shm"),
    };
    if std::fs::metadata(elsewhere.path()).unwrap().dev()
        == std::fs::metadata(env.path()).unwrap().dev()
    {
        return crate::testenv::skip("/dev/shm is on the same file system as the temp dir");
    }
    make_tree(&env);
    std::fs::write(elsewhere.path().join("far"), b"far away").unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), env.path().join("t/mount")).unwrap();
    let all = env.fastsum_within(LIMIT, &[b"-r", b"-L", b"t"]);
    assert!(all.stdout_str().contains("t/mount/far"));
    let one = env.fastsum_within(LIMIT, &[b"-r", b"-L", b"--one-file-system", b"t"]);
    assert!(
        !one.stdout_str().contains("t/mount/far"),
        "{}",
        one.stdout_str()
    );
    assert_eq!(
        one.stdout_str(),
        String::from_utf8_lossy(&reference_listing(&env, "t", "-xdev -name mount -prune -o"))
    );
}

#[test]
fn json_lines_parse_back_with_exact_names_digests_and_sizes() {
    if crate::testenv::lacks(&["sha256sum"]) {
        return;
    }
    let env = TestEnv::new();
    make_tree(&env);
    mkfifo(&env.path().join("t/pipe"));
    let ours = env.fastsum_within(LIMIT, &[b"-r", b"--json", b"-a", b"sha256", b"t", b"gone"]);
    assert_eq!(ours.status, 1);
    // Python's json module is the independent reader; it prints one
    // "name-as-hex TAB rest" line per object.
    let script = r#"
import base64, json, sys
for line in sys.stdin:
    o = json.loads(line)
    name = base64.b64decode(o["path_base64"]) if "path_base64" in o else o["path"].encode()
    rest = o.get("digest") or ("error:" + o["error"] if "error" in o else "skipped:" + o["skipped"])
    print(name.hex(), o["algorithm"], rest, o.get("size", "-"), sep="\t")
"#;
    let parsed = testenv::python(script, &ours.stdout);
    let mut by_name = BTreeMap::new();
    for line in parsed.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let name: Vec<u8> = (0..fields[0].len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&fields[0][i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(fields[1], "sha256");
        by_name.insert(name, (fields[2].to_string(), fields[3].to_string()));
    }
    let mut regular = 0;
    for (name, (what, size)) in &by_name {
        let path = env.path().join(OsStr::from_bytes(name));
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            let bytes = std::fs::read(&path).unwrap();
            regular += 1;
            assert_eq!(*what, testenv::reference_hex("sha256sum", &bytes));
            assert_eq!(*size, bytes.len().to_string());
        }
    }
    assert_eq!(regular, 10 + ODD_NAMES.len());
    assert_eq!(by_name[&b"t/pipe"[..]].0, "skipped:fifo");
    assert_eq!(by_name[&b"gone"[..]].0, "error:No such file or directory");
    assert!(by_name.contains_key(&b"t/a/non-utf8-\xff\xfe"[..]));
}

#[test]
fn tree_options_are_refused_when_checking() {
    let env = TestEnv::new();
    env.file(b"list", b"");
    let ours = env.fastsum_within(LIMIT, &[b"-c", b"-r", b"list"]);
    assert_eq!(ours.status, 2);
    assert!(ours
        .stderr_str()
        .contains("meaningless when verifying checksums"));
    let ours = env.fastsum_within(LIMIT, &[b"-j", b"x", b"list"]);
    assert_eq!(ours.status, 2);
    assert!(ours
        .stderr_str()
        .starts_with("fastsum: invalid number of threads (0 to 1024): ‘x’\n"));
}

/// Runs `fastsum ARGS > out` under `script`, so that stderr is a terminal,
/// while a writer keeps the FIFO operand open for 1.6 s (past the 1 s
/// delay before the bar appears). Returns what reached the terminal and
/// what reached stdout.
fn run_on_a_terminal(env: &TestEnv, args: &str) -> (String, String) {
    let fifo = env.path().join("slow");
    let _ = std::fs::remove_file(&fifo);
    mkfifo(&fifo);
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
        pipe.write_all(b"abc").unwrap();
        std::thread::sleep(Duration::from_millis(1600));
    });
    let command = format!("{} {args} slow > out", crate::testenv::fastsum_bin());
    let terminal = testenv::on_a_terminal(env.path(), &command);
    writer.join().unwrap();
    assert!(terminal.status.success(), "{terminal:?}");
    let out = std::fs::read_to_string(env.path().join("out")).unwrap();
    (String::from_utf8_lossy(&terminal.stdout).into_owned(), out)
}

#[test]
fn the_progress_bar_shows_on_a_terminal_only_and_never_on_stdout() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let expected = format!("{}  slow\n", hex_md5(b"abc"));
    let (terminal, out) = run_on_a_terminal(&env, "");
    assert!(terminal.contains("0/1 files"), "no bar drawn: {terminal:?}");
    // No empty field, no ETA it cannot know.
    assert!(!terminal.contains(", ,"), "{terminal:?}");
    assert!(
        !terminal.contains("ETA"),
        "no file done, no ETA: {terminal:?}"
    );
    // A steady width: every drawing of the bar is 30 cells of bar.
    let widths: Vec<usize> = terminal
        .split(['\r', '\n'])
        .filter(|l| l.contains("files"))
        .map(|l| {
            l.chars()
                .filter(|c| matches!(c, '█' | '░' | '▓' | '▒'))
                .count()
        })
        .collect();
    assert!(
        !widths.is_empty() && widths.iter().all(|&w| w == 30),
        "{widths:?}"
    );
    assert_eq!(out, expected, "stdout holds the checksum line only");
    let (terminal, out) = run_on_a_terminal(&env, "--no-progress");
    assert_eq!(terminal, "", "--no-progress draws nothing");
    assert_eq!(out, expected);
    // On a pipe (every other test) stderr stays empty: see
    // recursion_matches_sorted_find_xargs_md5sum_at_every_thread_count.
}

/// `--io-depth`, `--disk` and `--no-cache-pollution` change
/// how files reach the page cache, and in which order, never what is
/// printed; bad values are refused.
#[test]
fn io_depth_disk_and_no_cache_pollution_change_nothing_printed() {
    let env = TestEnv::new();
    for d in 0..4 {
        std::fs::create_dir_all(env.path().join(format!("t/d{d}"))).unwrap();
    }
    for i in 0..40 {
        let bytes: Vec<u8> = (0..i * 997).map(|j| (j % 251) as u8).collect();
        env.file(format!("t/d{}/f{i}", i % 4).as_bytes(), &bytes);
    }
    let base = env.fastsum_within(LIMIT, &[b"-r", b"t"]);
    assert_eq!(base.status, 0);
    assert_eq!(base.stdout.iter().filter(|&&b| b == b'\n').count(), 40);
    for args in [
        &[&b"--io-depth=0"[..], b"-r", b"t"][..],
        &[b"--io-depth", b"1", b"-r", b"t"],
        &[b"--io-depth=256", b"-r", b"t"],
        &[b"--no-cache-pollution", b"-r", b"t"],
        &[b"--disk=hdd", b"-r", b"t"],
        &[b"--disk", b"hdd", b"-j1", b"--io-depth=0", b"-r", b"t"],
        &[b"--disk=ssd", b"-r", b"t"],
        &[b"--disk=auto", b"--no-cache-pollution", b"-r", b"t"],
        &[
            b"--no-cache-pollution",
            b"--io-depth=3",
            b"-j1",
            b"-r",
            b"t",
        ],
    ] {
        let ours = env.fastsum_within(LIMIT, args);
        assert_eq!(ours.status, 0, "{args:?}");
        assert_eq!(ours.stdout, base.stdout, "{args:?}");
    }
    for bad in [&b"257"[..], b"-1", b"x"] {
        let ours = env.fastsum_within(LIMIT, &[b"--io-depth", bad, b"-r", b"t"]);
        assert_eq!(ours.status, 2);
        assert!(ours
            .stderr_str()
            .starts_with("fastsum: invalid I/O depth (0 to 256): ‘"));
    }
    // Unordered, the same lines in some order.
    let ours = env.fastsum_within(LIMIT, &[b"--disk=hdd", b"--unordered", b"-r", b"t"]);
    assert_eq!(ours.status, 0);
    let sorted_lines = |out: &[u8]| {
        let mut lines: Vec<Vec<u8>> = out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted_lines(&ours.stdout), sorted_lines(&base.stdout));
    let ours = env.fastsum_within(LIMIT, &[b"--disk=floppy", b"-r", b"t"]);
    assert_eq!(ours.status, 2);
    assert!(
        ours.stderr_str()
            .starts_with("fastsum: invalid disk kind (auto, ssd or hdd): ‘floppy’"),
        "{}",
        ours.stderr_str()
    );
}

/// The read-ahead never opens an operand that is not a regular file:
/// opening a FIFO would let its writer go and, closed again, break its
/// next write (found by the progress-bar test). Both the probe of the
/// first file and --no-cache-pollution's gate are crossed here.
#[test]
fn read_ahead_leaves_a_fifo_operand_alone() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"plain", b"xyz");
    for args in [&[][..], &[&b"--no-cache-pollution"[..]]] {
        let fifo = env.path().join("fifo");
        let _ = std::fs::remove_file(&fifo);
        mkfifo(&fifo);
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            pipe.write_all(b"abc").unwrap();
            std::thread::sleep(Duration::from_millis(300));
            pipe.write_all(b"def").unwrap();
        });
        let mut all: Vec<&[u8]> = args.to_vec();
        all.extend([&b"fifo"[..], b"plain"]);
        let ours = env.fastsum_within(LIMIT, &all);
        writer.join().unwrap();
        assert_eq!(ours.status, 0, "{args:?}: {}", ours.stderr_str());
        assert_eq!(
            ours.stdout_str(),
            format!("{}  fifo\n{}  plain\n", hex_md5(b"abcdef"), hex_md5(b"xyz")),
            "{args:?}"
        );
    }
}

/// `fastsum -c` of a long list shows the same bar (a
/// large sparse file among the listed files keeps the run past the bar's
/// second: a FIFO, which this test used, is refused by fastsum's -c,
/// never waited on), and stdout holds the verdicts only.
#[test]
fn check_shows_the_progress_bar_on_a_terminal_too() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let mut list = String::new();
    for i in 0..20 {
        env.file(format!("f{i}").as_bytes(), format!("{i}\n").as_bytes());
        list.push_str(&format!("{}  f{i}\n", hex_md5(format!("{i}\n").as_bytes())));
    }
    let slow = env.path().join("slow");
    std::fs::File::create(&slow)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let reference = std::process::Command::new("md5sum")
        .arg(&slow)
        .output()
        .unwrap();
    let digest = String::from_utf8_lossy(&reference.stdout[..32]).into_owned();
    list.push_str(&format!("{digest}  slow\n"));
    env.file(b"list", list.as_bytes());
    let command = format!("{} -c list > out", crate::testenv::fastsum_bin());
    let terminal = testenv::on_a_terminal(env.path(), &command);
    assert!(terminal.status.success(), "{terminal:?}");
    let shown = String::from_utf8_lossy(&terminal.stdout);
    assert!(shown.contains("/21 files"), "no bar drawn: {shown:?}");
    let out = std::fs::read_to_string(env.path().join("out")).unwrap();
    assert_eq!(out.lines().count(), 21, "{out}");
    assert!(out.lines().all(|l| l.ends_with(": OK")), "{out}");
}

/// Several `-a` give each file's digests from one
/// read: the same lines as one run per algorithm (interleaved per file),
/// the same digests as `rhash --md5 --sha256`, `-c` checks them all, and
/// JSON has one record per file with a `digests` object.
#[test]
fn several_algorithms_from_one_read_match_one_run_each_and_rhash() {
    if crate::testenv::lacks(&["md5sum", "rhash"]) {
        return;
    }
    let env = TestEnv::new();
    std::fs::create_dir_all(env.path().join("t/sub")).unwrap();
    env.file(b"t/small", b"small\n");
    env.file(b"t/sub/other", b"other\n");
    // Past the size that gets a thread per algorithm.
    let big: Vec<u8> = (0..9_000_000u32).map(|i| (i % 251) as u8).collect();
    env.file(b"t/sub/big", &big);
    let both = env.fastsum_within(LIMIT, &[b"-a", b"md5", b"-a", b"sha256", b"-r", b"t"]);
    assert_eq!(both.status, 0, "{}", both.stderr_str());
    let md5 = env.fastsum_within(LIMIT, &[b"-a", b"md5", b"--tag", b"-r", b"t"]);
    let sha = env.fastsum_within(LIMIT, &[b"-a", b"sha256", b"-r", b"t"]);
    let interleaved: String = md5
        .stdout_str()
        .lines()
        .zip(sha.stdout_str().lines())
        .map(|(a, b)| format!("{a}\n{b}\n"))
        .collect();
    assert_eq!(both.stdout_str(), interleaved);
    // rhash: NAME  MD5  SHA256 per file.
    let rhash = Command::new("rhash")
        .args(["--md5", "--sha256", "-r", "t"])
        .current_dir(env.path())
        .output()
        .expect("rhash (installed by scripts/tests/install-peers)");
    let mut theirs: Vec<String> = String::from_utf8(rhash.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            format!("MD5 ({}) = {}\nSHA256 ({}) = {}\n", f[0], f[1], f[0], f[2])
        })
        .collect();
    theirs.sort();
    let mut ours: Vec<String> = interleaved
        .lines()
        .collect::<Vec<_>>()
        .chunks(2)
        .map(|pair| format!("{}\n{}\n", pair[0], pair[1]))
        .collect();
    ours.sort();
    assert_eq!(ours, theirs);
    env.file(b"both.sum", both.stdout_str().as_bytes());
    let check = env.fastsum_within(LIMIT, &[b"-c", b"both.sum"]);
    assert_eq!(check.status, 0);
    assert_eq!(
        check
            .stdout_str()
            .lines()
            .filter(|l| l.ends_with(": OK"))
            .count(),
        6
    );
    let json = env.fastsum_within(
        LIMIT,
        &[b"-a", b"md5", b"-a", b"blake3", b"--json", b"t/sub/big"],
    );
    let expected = format!(
        "{{\"path\":\"t/sub/big\",\"digests\":{{\"md5\":\"{}\",\"blake3\":\"{}\"}},\"size\":9000000}}\n",
        hex_md5(&big),
        blake3::hash(&big).to_hex()
    );
    assert_eq!(json.stdout_str(), expected);
    let refused = env.fastsum_within(
        LIMIT,
        &[b"-a", b"md5", b"-a", b"sha1", b"--cache", b"t/small"],
    );
    assert_eq!(refused.status, 2);
    assert!(refused
        .stderr_str()
        .contains("several -a and --cache do not go together"));
}

/// A writer sets the first byte, then the last,
/// then clears the last, then the first, over and over, so the state
/// "first clear, last set" never exists. A read that overlaps the writes
/// (a torn read) sees it: `-r` printed its digest, `-c` said OK to a list
/// of it, and `diff` of two trees said no change against a copy of it,
/// exit 0; several -a printed torn digests too. Each now either answers
/// a state the file held or says the file changed while it was read;
/// never the state it never held.
#[test]
fn a_file_written_while_read_never_gets_the_digest_of_a_state_it_never_held() {
    if testenv::lacks(&["python3"]) {
        return testenv::skip("needs python3 for the states' digests");
    }
    const LEN: usize = 32 << 20;
    let env = TestEnv::new();
    env.mkdir("tw");
    env.mkdir("never");
    let state = |first: u8, last: u8| {
        let mut bytes = vec![0u8; LEN];
        bytes[0] = first;
        bytes[LEN - 1] = last;
        bytes
    };
    env.file(b"tw/f", &state(0, 0));
    env.file(b"never/f", &state(0, 1));
    // The digests of the four states, by Python's hashlib.
    let script = format!(
        "import hashlib\nfor a, b in ((0,0),(1,0),(1,1),(0,1)):\n    \
         x = bytearray({LEN}); x[0] = a; x[-1] = b\n    print(hashlib.md5(x).hexdigest())\n"
    );
    let digests: Vec<String> = testenv::python(&script, b"")
        .lines()
        .map(String::from)
        .collect();
    let never = digests[3].clone();
    env.file(b"never.md5", format!("{never}  tw/f\n").as_bytes());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (path, stop) = (env.path().join("tw/f"), stop.clone());
        std::thread::spawn(move || {
            use std::os::unix::fs::FileExt;
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            let end = (LEN - 1) as u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for (at, byte) in [(0, 1u8), (end, 1), (end, 0), (0, 0)] {
                    file.write_at(&[byte], at).unwrap();
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        })
    };
    let (mut answered, mut refused) = (0, 0);
    for _ in 0..8 {
        let run = env.fastsum_within(LIMIT, &[b"-r", b"tw"]);
        match run.status {
            0 => {
                let digest = run
                    .stdout_str()
                    .split("  ")
                    .next()
                    .unwrap_or("")
                    .to_string();
                assert!(digests[..3].contains(&digest), "{}", run.stdout_str());
                answered += 1;
            }
            _ => {
                assert!(
                    run.stderr_str().contains("changed while reading"),
                    "{}",
                    run.stderr_str()
                );
                refused += 1;
            }
        }
        // Several -a: one read for every digest, verified as one
        // algorithm's (it printed torn digests, exit 0).
        let several = env.fastsum_within(LIMIT, &[b"-r", b"-a", b"md5", b"-a", b"sha1", b"tw"]);
        match several.status {
            0 => {
                let out = several.stdout_str();
                let md5 = out.lines().find_map(|l| l.strip_prefix("MD5 (tw/f) = "));
                assert!(
                    md5.is_some_and(|d| digests[..3].iter().any(|s| s == d)),
                    "{out}"
                );
            }
            _ => assert!(
                several.stderr_str().contains("changed while reading"),
                "{}",
                several.stderr_str()
            ),
        }
        let check = env.fastsum_within(LIMIT, &[b"-c", b"never.md5"]);
        assert_ne!(check.status, 0, "-c said OK: {}", check.stdout_str());
        let diff = env.fastsum_within(LIMIT, &[b"diff", b"never", b"tw"]);
        assert_ne!(diff.status, 0, "diff said no change: {}", diff.stdout_str());
        let tree = env.fastsum_within(LIMIT, &[b"tree-digest", b"tw"]);
        if tree.status != 0 {
            assert!(
                tree.stderr_str().contains("changed while reading"),
                "{}",
                tree.stderr_str()
            );
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert_eq!(answered + refused, 8);
}
