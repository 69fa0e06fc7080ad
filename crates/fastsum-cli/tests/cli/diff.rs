//! `fastsum diff` against the corpus's own list of changes and
//! against mutations whose changes the test knows by construction.

use crate::testenv;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use testenv::{as_expected, changes_corpus as corpus, Outcome, TestEnv};

/// `fastsum diff ARGS` in `env`, killed if it hangs.
fn diff(env: &TestEnv, args: &[&[u8]]) -> Outcome {
    let mut all: Vec<&[u8]> = vec![b"diff"];
    all.extend_from_slice(args);
    env.fastsum_within(std::time::Duration::from_secs(60), &all)
}

#[test]
fn the_corpus_changes_are_found_exactly_tree_against_tree_and_manifest_against_tree() {
    if crate::testenv::lacks(&["b3sum", "xxhsum"]) {
        return;
    }
    let env = TestEnv::new();
    let (top, expected) = corpus(&env);
    let rel = |p: &str| {
        top.strip_prefix(env.path())
            .unwrap()
            .join(p)
            .into_os_string()
    };
    let (old, new) = (rel("old"), rel("new"));
    // The generator's list names files: directories left out here (their
    // own suite is diff_dirs.rs); with them, the same lines and each
    // directory line one the other tree lacks.
    let out = diff(
        &env,
        &[b"--ignore-directories", old.as_bytes(), new.as_bytes()],
    );
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert_eq!(as_expected(&out.stdout_str()), expected);
    let with = diff(&env, &[old.as_bytes(), new.as_bytes()]).stdout_str();
    let (dirs, files): (Vec<&str>, Vec<&str>) = with.lines().partition(|l| l.ends_with('/'));
    assert_eq!(files.join("\n") + "\n", out.stdout_str());
    for line in dirs {
        let (letter, path) = line.split_once('\t').unwrap();
        let (here, there) = match letter {
            "A" => (&new, &old),
            _ => (&old, &new),
        };
        let at = |side: &std::ffi::OsString| env.path().join(side).join(path);
        assert!(at(here).is_dir() && !at(there).exists(), "{line}");
    }

    // Manifests of the old tree in every form fastsum writes or reads.
    let lists: [(&str, Vec<&[u8]>); 5] = [
        ("gnu", vec![b"-r"]),
        ("tagged", vec![b"-r", b"-a", b"sha256"]),
        ("json", vec![b"-r", b"--json", b"-a", b"xxh128"]),
        (
            "blake3-untagged",
            vec![b"-r", b"-a", b"blake3", b"--untagged"],
        ),
        ("sha1-untagged", vec![b"-r", b"-a", b"sha1", b"--untagged"]),
    ];
    for (name, args) in lists {
        let mut args = args.clone();
        args.push(old.as_bytes());
        let written = env.fastsum("fastsum", &args, b"");
        assert_eq!(written.status, 0, "{name}");
        env.file(name.as_bytes(), &written.stdout);
        let mut diff_args: Vec<&[u8]> = vec![name.as_bytes(), new.as_bytes()];
        if name == "blake3-untagged" {
            diff_args.extend([&b"-a"[..], b"blake3"]);
        }
        let out = diff(&env, &diff_args);
        assert_eq!(out.status, 1, "{name}: {}", out.stderr_str());
        assert_eq!(as_expected(&out.stdout_str()), expected, "{name}");
    }
    // Lists written by the reference tools themselves.
    for (name, tool, algorithm) in [
        ("by-md5sum", "md5sum", None),
        ("by-sha256sum-tag", "sha256sum --tag", None),
        ("by-b2sum", "b2sum --tag", None),
        ("by-b3sum", "b3sum", Some("blake3")),
        ("by-xxhsum", "xxhsum -H1", None),
        ("by-xxh128", "xxhsum -H2", Some("xxh128")),
    ] {
        let script = format!(
            "find {} -type f -print0 | LC_ALL=C sort -z | xargs -0 {tool}",
            old.to_string_lossy()
        );
        let list = Command::new("sh")
            .args(["-c", &script])
            .current_dir(env.path())
            .output()
            .unwrap();
        assert!(list.status.success(), "{name}");
        env.file(name.as_bytes(), &list.stdout);
        let mut args: Vec<&[u8]> = vec![name.as_bytes(), new.as_bytes()];
        if let Some(a) = algorithm {
            args.extend([&b"-a"[..], a.as_bytes()]);
        }
        let out = diff(&env, &args);
        assert_eq!(out.status, 1, "{name}: {}", out.stderr_str());
        assert_eq!(as_expected(&out.stdout_str()), expected, "{name}");
    }
    // Written from inside the tree (`./` paths), and read on standard input.
    let inside = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "."])
        .current_dir(top.join("old"))
        .output()
        .unwrap();
    let piped = env
        .command("fastsum")
        .arg("diff")
        .arg("-")
        .arg(&new)
        .stdin(std::fs::File::open(env.path().join("gnu")).unwrap())
        .output()
        .unwrap();
    assert_eq!(
        as_expected(&String::from_utf8_lossy(&piped.stdout)),
        expected,
        "stdin"
    );
    env.file(b"inside", &inside.stdout);
    let out = diff(&env, &[b"inside", new.as_bytes()]);
    assert_eq!(as_expected(&out.stdout_str()), expected, "./ paths");
    // Against a copy of the old tree elsewhere: no change.
    let copy = Command::new("cp")
        .arg("-r")
        .arg(top.join("old"))
        .arg(env.path().join("elsewhere"))
        .status()
        .unwrap();
    assert!(copy.success());
    let out = diff(&env, &[b"gnu", b"elsewhere"]);
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, String::new()),
        "{}",
        out.stderr_str()
    );
    // Two manifests.
    let new_list = env.fastsum("fastsum", &[b"-r", new.as_bytes()], b"");
    env.file(b"gnu-new", &new_list.stdout);
    let out = diff(&env, &[b"gnu", b"gnu-new"]);
    assert_eq!(as_expected(&out.stdout_str()), expected, "two manifests");
    // Two lists of different algorithms cannot be compared.
    let out = diff(&env, &[b"gnu", b"tagged"]);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str().contains("md5 and sha256"),
        "{}",
        out.stderr_str()
    );
}

/// Builds `old` and `new` with one change of every kind (and odd names),
/// returning the changes it made, in name-status form, sorted as fastsum
/// sorts them.
fn mutations(env: &TestEnv) -> Vec<String> {
    let w = |p: &str, bytes: &[u8]| {
        let path = env.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    let both = |p: &str, bytes: &[u8]| {
        w(&format!("old/{p}"), bytes);
        w(&format!("new/{p}"), bytes);
    };
    both("same", b"unchanged");
    both("empty", b"");
    both("sub dir/with space", b"spaces");
    // Edited in place, same size, mtime put back.
    w("old/edited", b"aaaa");
    w("new/edited", b"aaab");
    let t = std::fs::metadata(env.path().join("old/edited"))
        .unwrap()
        .modified()
        .unwrap();
    std::fs::File::options()
        .write(true)
        .open(env.path().join("new/edited"))
        .unwrap()
        .set_modified(t)
        .unwrap();
    // Grown, removed, added.
    w("old/grown", b"1");
    w("new/grown", b"12");
    w("old/gone", b"only in old");
    w("new/fresh", b"only in new");
    // Swapped contents: two modifications, not moves.
    w("old/swap-a", b"AAAA");
    w("old/swap-b", b"BBBB");
    w("new/swap-a", b"BBBB");
    w("new/swap-b", b"AAAA");
    // Two removed and two added with one content: paired in path order.
    w("old/dup1", b"twin");
    w("old/dup2", b"twin");
    w("new/moved/x1", b"twin");
    w("new/moved/x2", b"twin");
    // A new copy of content that still exists: added, not moved.
    w("new/copy-of-same", b"unchanged");
    // File to directory.
    w("old/became-dir", b"file");
    w("new/became-dir/inside", b"in a dir");
    // File to symlink; symlink retargeted; symlink unchanged.
    w("old/to-link", b"was a file");
    std::os::unix::fs::symlink("same", env.path().join("new/to-link")).unwrap();
    std::os::unix::fs::symlink("same", env.path().join("old/link")).unwrap();
    std::os::unix::fs::symlink("empty", env.path().join("new/link")).unwrap();
    std::os::unix::fs::symlink("same", env.path().join("old/steady-link")).unwrap();
    std::os::unix::fs::symlink("same", env.path().join("new/steady-link")).unwrap();
    // Odd names: newline, backslash, tab, not UTF-8.
    for name in [&b"new\nline"[..], b"back\\slash", b"tab\there", b"caf\xe9"] {
        let mut old = b"old/".to_vec();
        old.extend_from_slice(name);
        let mut new = b"new/".to_vec();
        new.extend_from_slice(name);
        std::fs::write(env.path().join(OsStr::from_bytes(&old)), b"odd old").unwrap();
        std::fs::write(env.path().join(OsStr::from_bytes(&new)), b"odd new").unwrap();
    }
    // FIFOs in both trees: never opened, no hang, no change.
    for side in ["old", "new"] {
        let made = Command::new("mkfifo")
            .arg(env.path().join(side).join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
    }
    let mut expected = vec![
        "M\tback\\\\slash".to_string(),
        "A\tbecame-dir/inside".to_string(),
        "D\tbecame-dir".to_string(),
        // Directories only the new tree has.
        "A\tbecame-dir/".to_string(),
        "A\tmoved/".to_string(),
        "M\tcaf\u{fffd}".to_string(),
        "A\tcopy-of-same".to_string(),
        "R\tdup1\tmoved/x1".to_string(),
        "R\tdup2\tmoved/x2".to_string(),
        "M\tedited".to_string(),
        "A\tfresh".to_string(),
        "D\tgone".to_string(),
        "M\tgrown".to_string(),
        "M\tlink".to_string(),
        "M\tnew\\nline".to_string(),
        "M\tswap-a".to_string(),
        "M\tswap-b".to_string(),
        "M\ttab\\there".to_string(),
        "T\tto-link".to_string(),
    ];
    expected.sort_by_key(|line| sort_key(line));
    expected
}

/// The path a name-status line sorts by (its first name, unescaped).
fn sort_key(line: &str) -> (Vec<u8>, String) {
    let f: Vec<&str> = line.trim_start_matches('\\').split('\t').collect();
    let path = f[1]
        .replace("\\\\", "\\")
        .replace("\\n", "\n")
        .replace("\\t", "\t");
    let path = if path == "caf\u{fffd}" {
        b"caf\xe9".to_vec()
    } else {
        path.into_bytes()
    };
    let kind = match f[0] {
        "A" => "added",
        "D" => "removed",
        "M" => "modified",
        "R" => "moved",
        _ => "typechange",
    };
    (path, kind.to_string())
}

#[test]
fn every_kind_of_change_with_odd_names_and_fifos() {
    let env = TestEnv::new();
    let expected = mutations(&env);
    let out = diff(&env, &[b"old", b"new"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    // The FIFOs are no entries, and are said to be left out (never
    // silently: a plan lists them too).
    assert_eq!(
        out.stderr_str(),
        "fastsum diff: 2 special files left out (FIFOs, sockets and devices hold no bytes to compare)\n"
    );
    // Lines with an escaped name start with a backslash, as fastsum's
    // checksum lines do; the non-UTF-8 name is shown lossily here.
    let got: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_start_matches('\\').to_string())
        .collect();
    assert_eq!(got, expected);
    assert!(out.stdout_str().contains("\\M\tnew\\nline\n"));
    // --json: every change a record Python reads, the exact bytes of the
    // non-UTF-8 name in new_base64.
    let json = diff(&env, &[b"--json", b"old", b"new"]);
    let checked = testenv::python(
        r#"
import json, sys, base64
for line in sys.stdin:
    r = json.loads(line)
    name = r["old"] if r["old"] is not None else r["new"]
    if "old_base64" in r:
        name = base64.b64decode(r["old_base64"]).decode("latin-1")
    print(r["change"], repr(name))
"#,
        &json.stdout,
    );
    assert!(checked.contains("modified 'café'"), "{checked}");
    assert!(checked.contains("moved 'dup1'"), "{checked}");
    assert!(checked.contains("typechange 'to-link'"), "{checked}");
    assert_eq!(checked.lines().count(), expected.len());
    // --all lists the unchanged ones too; --stat counts; --quiet is silent.
    let all = diff(&env, &[b"--all", b"old", b"new"]);
    assert!(
        all.stdout_str().contains("=\tsame\n"),
        "{}",
        all.stdout_str()
    );
    assert!(all.stdout_str().contains("=\tsteady-link\n"));
    let stat = diff(&env, &[b"--stat", b"old", b"new"]);
    assert_eq!(
        stat.stdout_str(),
        format!(
            // 3 files and 2 directories added.
            "5 added, 2 removed, 9 modified, 2 moved, 1 typechange; {} bytes in added and modified files\n",
            stat_bytes(&env)
        )
    );
    let quiet = diff(&env, &[b"--quiet", b"old", b"new"]);
    assert_eq!((quiet.status, quiet.stdout_str()), (1, String::new()));
    // No change: 0.
    let same = diff(&env, &[b"old", b"old"]);
    assert_eq!((same.status, same.stdout_str()), (0, String::new()));
}

/// The bytes of the new side's added and modified files, counted here.
fn stat_bytes(env: &TestEnv) -> u64 {
    let names: [&[u8]; 12] = [
        b"became-dir/inside",
        b"copy-of-same",
        b"fresh",
        b"edited",
        b"grown",
        b"swap-a",
        b"swap-b",
        b"new\nline",
        b"back\\slash",
        b"tab\there",
        b"caf\xe9",
        b"link",
    ];
    names
        .iter()
        .map(|n| {
            let path = env.path().join("new").join(OsStr::from_bytes(n));
            std::fs::symlink_metadata(path)
                .map(|m| if m.is_file() { m.len() } else { 0 })
                .unwrap()
        })
        .sum()
}

#[test]
fn an_unreadable_file_is_trouble_and_the_rest_is_still_compared() {
    let env = TestEnv::new();
    for side in ["old", "new"] {
        env.mkdir(side);
        env.file(format!("{side}/secret").as_bytes(), b"hidden");
        env.file(format!("{side}/fine").as_bytes(), side.as_bytes());
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        env.path().join("new/secret"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    for dir in [
        env.path().to_path_buf(),
        env.path().join("old"),
        env.path().join("new"),
    ] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // As nobody when the suite runs as root (root reads anything).
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = (unsafe { libc::getuid() } == 0).then_some(65534);
    let out = env.fastsum_within_as(
        uid,
        std::time::Duration::from_secs(30),
        &[b"diff", b"old", b"new"],
    );
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "M\tfine\n");
    assert!(
        out.stderr_str().contains("new/secret: Permission denied"),
        "{}",
        out.stderr_str()
    );
    let json = env.fastsum_within_as(
        uid,
        std::time::Duration::from_secs(30),
        &[b"diff", b"--json", b"old", b"new"],
    );
    assert!(
        json.stdout_str().contains(
            "{\"change\":\"error\",\"path\":\"new/secret\",\"error\":\"Permission denied\"}"
        ),
        "{}",
        json.stdout_str()
    );
}

#[test]
fn bad_manifests_say_why() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"a");
    env.file(b"not-a-list", b"hello world\n");
    let out = diff(&env, &[b"not-a-list", b"t"]);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str().contains("not-a-list: not a checksum list"),
        "{}",
        out.stderr_str()
    );
    let sha = env.fastsum("sha256sum", &[b"t/a"], b"");
    env.file(b"untagged", &sha.stdout);
    let out = diff(&env, &[b"untagged", b"t"]);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str().contains("need -a (sha256, blake3"),
        "{}",
        out.stderr_str()
    );
    let out = diff(&env, &[b"-a", b"sha256", b"untagged", b"t"]);
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, String::new()),
        "{}",
        out.stderr_str()
    );
    // One bad line among good ones: reported with its number, the rest
    // compared, status 2.
    let mut list = sha.stdout.clone();
    list.extend_from_slice(b"garbage line\n");
    env.file(b"partly", &list);
    let out = diff(&env, &[b"-a", b"sha256", b"partly", b"t"]);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str()
            .contains("partly: line 2: improperly formatted"),
        "{}",
        out.stderr_str()
    );
    // Symlinks against a manifest: left out, said once.
    std::os::unix::fs::symlink("a", env.path().join("t/link")).unwrap();
    let md5 = env.fastsum("fastsum", &[b"-r", b"t"], b"");
    env.file(b"list", &md5.stdout);
    let out = diff(&env, &[b"list", b"t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(
        out.stderr_str(),
        "fastsum diff: 1 symbolic link left out (manifests and remote listings hold regular files only)\n"
    );
}

/// A path a manifest lists twice (or three times) is a problem at each
/// repeat, in order or not, and its first line is what is compared; the
/// other paths are compared as usual (md5sum computes the digests).
#[test]
fn a_path_listed_twice_is_a_problem_and_its_first_line_counts() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("t");
    for name in ["a", "b", "c"] {
        env.file(format!("t/{name}").as_bytes(), name.as_bytes());
    }
    let md5 = |bytes: &[u8]| testenv::reference_hex("md5sum", bytes);
    let line = |bytes: &[u8], name: &str| format!("{}  t/{name}\n", md5(bytes));
    let in_order = [
        line(b"a", "a"),
        line(b"old", "a"),
        line(b"b", "b"),
        line(b"c", "c"),
    ]
    .concat();
    let shuffled = [
        line(b"c", "c"),
        line(b"old", "b"),
        line(b"a", "a"),
        line(b"b", "b"),
        line(b"other", "b"),
    ]
    .concat();
    for (list, modified, repeats) in [(in_order, "", 1), (shuffled, "M\tb\n", 2)] {
        env.file(b"list", list.as_bytes());
        let out = diff(&env, &[b"list", b"t"]);
        assert_eq!(out.status, 2, "{}", out.stderr_str());
        assert_eq!(out.stdout_str(), modified, "{list}");
        let said = out.stderr_str().matches("is listed twice").count();
        assert_eq!(said, repeats, "{}", out.stderr_str());
    }
}

/// With --cache, two trees are compared by digests answered from the
/// cache where stamps are unchanged: the same changes, and a same-size
/// edit with the mtime put back is still found (ctime moved).
#[test]
fn the_cache_answers_unchanged_files_and_never_hides_an_edit() {
    let env = TestEnv::new();
    let expected = mutations(&env);
    let plain = diff(&env, &[b"old", b"new"]);
    // Settle past the racy window so entries are stored.
    std::thread::sleep(std::time::Duration::from_millis(2300));
    for _ in 0..2 {
        let cached = diff(&env, &[b"--cache=c.sqlite", b"old", b"new"]);
        assert_eq!(cached.stdout_str(), plain.stdout_str());
        assert_eq!(cached.status, 1);
    }
    assert!(env.path().join("c.sqlite").exists());
    let target = env.path().join("new/same");
    let t = std::fs::metadata(&target).unwrap().modified().unwrap();
    std::fs::write(&target, b"unchangeX").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&target)
        .unwrap()
        .set_modified(t)
        .unwrap();
    let cached = diff(&env, &[b"--cache=c.sqlite", b"old", b"new"]);
    assert!(
        cached.stdout_str().contains("M\tsame\n"),
        "{}",
        cached.stdout_str()
    );
    assert_eq!(cached.stdout_str().lines().count(), expected.len() + 1);
}

#[test]
fn a_manifest_of_absolute_paths_against_another_directory_is_right_or_refused() {
    // `fastsum -r /abs/old > ABS.md5; fastsum diff ABS.md5
    // new/` reported every file moved from /abs/old/... (the probe looked
    // the absolute paths up where they are, and found them there).
    let env = TestEnv::new();
    let (top, expected) = corpus(&env);
    let old = std::fs::canonicalize(top.join("old")).unwrap();
    let written = env.fastsum("fastsum", &[b"-r", old.as_os_str().as_bytes()], b"");
    assert_eq!(written.status, 0);
    env.file(b"ABS.md5", &written.stdout);
    let new = top.join("new");
    let out = diff(&env, &[b"ABS.md5", new.as_os_str().as_bytes()]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert_eq!(as_expected(&out.stdout_str()), expected);
    // The other way round too.
    let out = diff(&env, &[new.as_os_str().as_bytes(), b"ABS.md5"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    // A tree that shares nothing with the manifest's paths: no guess.
    env.mkdir("elsewhere");
    env.file(b"elsewhere/unrelated", b"x");
    let out = diff(&env, &[b"ABS.md5", b"elsewhere"]);
    assert_eq!(out.status, 2, "{}", out.stdout_str());
    assert!(out.stdout_str().is_empty(), "{}", out.stdout_str());
    assert!(
        out.stderr_str().contains("--old-root"),
        "{}",
        out.stderr_str()
    );
    // Told the root, it answers.
    let root = format!("--old-root={}", old.display());
    let out = diff(
        &env,
        &[root.as_bytes(), b"ABS.md5", new.as_os_str().as_bytes()],
    );
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert_eq!(as_expected(&out.stdout_str()), expected);
}

/// A long `diff` shows the bar `-r` shows on a
/// terminal's stderr; stdout holds the changes only. The work must outlast
/// the bar's one-second delay on any machine: a 1.5 GiB sparse file hashed
/// with SM3 against a manifest takes ~4 s here (a 700 MB one took ~2 s,
/// too close on a faster machine).
#[test]
fn diff_shows_the_progress_bar_on_a_terminal() {
    let env = TestEnv::new();
    for side in ["old", "new"] {
        std::fs::create_dir(env.path().join(side)).unwrap();
        let f = std::fs::File::create(env.path().join(side).join("big")).unwrap();
        f.set_len(1536 << 20).unwrap();
    }
    env.file(b"new/added", b"added\n");
    let listed = env.fastsum("fastsum", &[b"-r", b"-a", b"sm3", b"new"], b"");
    env.file(b"new.sm3", &listed.stdout);
    let run = |extra: &str| {
        let command = format!(
            "{} diff {extra} old new.sm3 > out",
            crate::testenv::fastsum_bin()
        );
        let out = testenv::on_a_terminal(env.path(), &command);
        let out_file = std::fs::read_to_string(env.path().join("out")).unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), out_file)
    };
    let (shown, out) = run("");
    assert!(shown.contains("/1 files"), "no bar drawn: {shown:?}");
    assert_eq!(out, "A\tadded\n");
    let (shown, out) = run("--no-progress");
    assert!(
        !shown.contains("files,"),
        "--no-progress drew a bar: {shown:?}"
    );
    assert_eq!(out, "A\tadded\n");
}

/// `--plan`'s `complete` means nothing was left out unsaid: a FIFO (no
/// bytes to compare) and, against a manifest, a symbolic link are listed
/// in `left_out` by name (read back with Python's json), the FIFO is also
/// said on stderr as the links are, and the plan stays complete; a
/// problem still makes it incomplete.
#[test]
fn a_plan_lists_what_it_left_out() {
    let env = TestEnv::new();
    env.mkdir("old");
    env.mkdir("new");
    env.file(b"old/a", b"a\n");
    env.file(b"new/a", b"a\n");
    env.file(b"new/b", b"b\n");
    std::os::unix::fs::symlink("a", env.path().join("new/link")).unwrap();
    let fifo = env.path().join("new/pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let list = env.fastsum("fastsum", &[b"-r", b"old"], b"");
    env.file(b"OLD.md5", &list.stdout);
    let read = r#"
import json, sys
p = json.loads(sys.stdin.read())
print(p["complete"], p["symlinks_left_out"], sorted((e["path"], e["what"]) for e in p["left_out"]), [e["path"] for e in p["send"]])
"#;
    // Against a manifest: the link and the FIFO are left out, both listed.
    let out = diff(&env, &[b"--plan", b"-a", b"md5", b"OLD.md5", b"new"]);
    assert_eq!(out.status, 1, "{} {}", out.stdout_str(), out.stderr_str());
    assert_eq!(
        testenv::python(read, &out.stdout),
        "True 1 [('link', 'symbolic link'), ('pipe', 'fifo')] ['b']\n"
    );
    let said = out.stderr_str();
    assert!(said.contains("1 symbolic link left out"), "{said}");
    assert!(said.contains("1 special file left out"), "{said}");
    // Tree against tree: the link is compared (an entry), the FIFO listed.
    let out = diff(&env, &[b"--plan", b"old", b"new"]);
    assert_eq!(
        testenv::python(read, &out.stdout),
        "True 0 [('pipe', 'fifo')] ['b', 'link']\n"
    );
    // A problem (a line of the list that cannot be read): incomplete.
    let mut bad = list.stdout.clone();
    bad.extend_from_slice(b"garbage line\n");
    env.file(b"BAD.md5", &bad);
    let out = diff(&env, &[b"--plan", b"-a", b"md5", b"BAD.md5", b"new"]);
    assert!(
        testenv::python(read, &out.stdout)
            .starts_with("False 1 [('link', 'symbolic link'), ('pipe', 'fifo')]"),
        "{}",
        out.stdout_str()
    );
}
