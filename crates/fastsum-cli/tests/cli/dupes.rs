//! `fastsum dupes` against an oracle that groups files by their
//! bytes (Python, in the test), on trees built with every trap.

use crate::testenv;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use testenv::{pattern, TestEnv};

/// The oracle: groups of two or more regular files (symlinks not
/// followed) with identical bytes, as sorted path lists; `empty`: empty
/// files too; `hard_links`: paths of one inode count.
fn oracle(env: &TestEnv, roots: &[&str], empty: bool, hard_links: bool) -> String {
    let script = format!(
        r#"
import os, sys, collections
groups = collections.defaultdict(list)
seen = set()
for root in {roots:?}:
    for d, dirs, files in os.walk(root.encode()):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p): continue
            key = os.path.abspath(p)
            if key in seen: continue
            seen.add(key)
            st = os.stat(p)
            if st.st_size == 0 and not {empty}: continue
            groups[open(p, "rb").read()].append((p, (st.st_dev, st.st_ino)))
out = []
for content, members in groups.items():
    inodes = set(i for _, i in members)
    if len(inodes) >= 2 or ({hard_links} and len(members) >= 2):
        out.append(sorted(p for p, _ in members))
out.sort(key=lambda g: (-len(open(g[0], "rb").read()), g))
for g in sorted(out):
    print(repr(b"|".join(g)))
"#,
        roots = roots,
        empty = if empty { "True" } else { "False" },
        hard_links = if hard_links { "True" } else { "False" },
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .current_dir(env.path())
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// fastsum's groups in the oracle's shape, read from --json by Python.
fn ours(env: &TestEnv, args: &[&[u8]]) -> String {
    let mut all: Vec<&[u8]> = vec![b"dupes", b"--json"];
    all.extend_from_slice(args);
    let out = env.fastsum_within(std::time::Duration::from_secs(60), &all);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    testenv::python(
        r#"
import json, sys, base64
groups = []
for line in sys.stdin:
    g = json.loads(line)
    names = [base64.b64decode(f["path_base64"]) if "path_base64" in f else f["path"].encode() for f in g["files"]]
    assert names == sorted(names), names
    groups.append(sorted(names))
for g in sorted(groups):
    print(repr(b"|".join(g)))
"#,
        &out.stdout,
    )
}

fn tree(env: &TestEnv) {
    let w = |p: &[u8], bytes: &[u8]| {
        let path = env.path().join(OsStr::from_bytes(p));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    // Copies under other names and folders.
    w(b"t/a/one", b"the same bytes");
    w(b"t/b/copy of one", b"the same bytes");
    w(b"t/c/d/third", b"the same bytes");
    // Many files of one size with different bytes.
    for i in 0..20u8 {
        w(format!("t/size/f{i}").as_bytes(), &[i; 100]);
    }
    w(b"t/size/twin-of-f3", &[3u8; 100]);
    // Share their first and last 64 KiB, differ inside.
    let mut big = pattern(300_000);
    w(b"t/edges/x", &big);
    big[150_000] ^= 1;
    w(b"t/edges/y", &big);
    w(b"t/edges/x-copy", &pattern(300_000));
    // Differ only at a 4 KiB block edge.
    let mut blocky = pattern(8192);
    w(b"t/block/p", &blocky);
    blocky[4095] ^= 0xff;
    w(b"t/block/q", &blocky);
    blocky[4095] ^= 0xff;
    blocky[4096] ^= 0xff;
    w(b"t/block/r", &blocky);
    // Empty files.
    w(b"t/empty1", b"");
    w(b"t/empty2", b"");
    // A unique file and its hard link; a duplicated file and its link.
    w(b"t/links/alone", b"linked, alone");
    std::fs::hard_link(
        env.path().join("t/links/alone"),
        env.path().join("t/links/alone-link"),
    )
    .unwrap();
    w(b"t/links/dup", b"the same bytes");
    std::fs::hard_link(
        env.path().join("t/links/dup"),
        env.path().join("t/links/dup-link"),
    )
    .unwrap();
    // Symlinks (not followed), a FIFO (never opened).
    std::os::unix::fs::symlink("a/one", env.path().join("t/link-to-one")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(env.path().join("t/pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    // Names that are not UTF-8, or hold a newline.
    w(b"t/odd/caf\xe9", b"odd names");
    w(b"t/odd/new\nline", b"odd names");
}

#[test]
fn groups_equal_the_oracle_with_every_trap() {
    let env = TestEnv::new();
    tree(&env);
    let expected = oracle(&env, &["t"], false, false);
    assert!(
        expected.contains("t/a/one|t/b/copy of one|t/c/d/third|t/links/dup|t/links/dup-link"),
        "{expected}"
    );
    assert!(
        expected.contains("t/odd/caf\\xe9|t/odd/new\\nline"),
        "{expected}"
    );
    assert!(
        !expected.contains("alone"),
        "a file and its link are no group: {expected}"
    );
    assert_eq!(ours(&env, &[b"t"]), expected);
    // Empty files with --empty; hard links with --hard-links.
    assert_eq!(
        ours(&env, &[b"--empty", b"t"]),
        oracle(&env, &["t"], true, false)
    );
    let with_links = oracle(&env, &["t"], false, true);
    assert!(
        with_links.contains("t/links/alone|t/links/alone-link"),
        "{with_links}"
    );
    assert_eq!(ours(&env, &[b"--hard-links", b"t"]), with_links);
    // Overlapping operands: a path counts once.
    assert_eq!(ours(&env, &[b"t", b"t/a", b"./t/b"]), expected);
    // Every algorithm, and --verify, give the same groups.
    for algorithm in ["md5", "sha256", "blake3", "xxh3"] {
        assert_eq!(
            ours(&env, &[b"-a", algorithm.as_bytes(), b"--verify", b"t"]),
            expected,
            "{algorithm}"
        );
    }
}

#[test]
fn text_output_unique_and_sizes() {
    let env = TestEnv::new();
    tree(&env);
    let out = env.fastsum_within(std::time::Duration::from_secs(60), &[b"dupes", b"t"]);
    assert_eq!(out.status, 0);
    let text = out.stdout_str();
    // Largest first: the 300,000-byte pair leads; names escaped.
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("300000 bytes, 2 files, xxh128 "),
        "{text}"
    );
    assert!(text.contains("\\  t/odd/new\\nline\n"), "{text}");
    assert!(
        out.stderr_str()
            .starts_with("fastsum dupes: 4 groups of 11 files, "),
        "{}",
        out.stderr_str()
    );
    // --unique: every regular, non-empty file in no group.
    let unique = env.fastsum_within(
        std::time::Duration::from_secs(60),
        &[b"dupes", b"--unique", b"t"],
    );
    let listed = unique.stdout_str();
    assert!(
        listed.contains("t/size/f0\n")
            && listed.contains("t/edges/y\n")
            && listed.contains("t/links/alone\n")
    );
    assert!(
        !listed.contains("t/a/one\n")
            && !listed.contains("pipe")
            && !listed.contains("link-to-one")
    );
    // Sizes: only the 100-byte files.
    let sized = ours(&env, &[b"--min-size", b"100", b"--max-size", b"100", b"t"]);
    assert_eq!(sized, "b't/size/f3|t/size/twin-of-f3'\n");
}

/// Every file's bytes, by path (regular files only), read by Python.
fn contents(env: &TestEnv) -> String {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            r#"
import os, hashlib
for d, dirs, files in sorted(os.walk(b"t")):
    for f in sorted(files):
        p = os.path.join(d, f)
        if os.path.islink(p) or not os.path.isfile(p): continue
        st = os.stat(p)
        print(repr(p), hashlib.sha256(open(p, "rb").read()).hexdigest())
"#,
        ])
        .current_dir(env.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn actions_keep_every_content_and_touch_nothing_else() {
    use std::os::unix::fs::MetadataExt;
    let env = TestEnv::new();
    tree(&env);
    let before = contents(&env);
    let groups = ours(&env, &[b"t"]);
    // --dry-run: every action printed, nothing touched.
    let dry = env.fastsum_within(
        std::time::Duration::from_secs(60),
        &[b"dupes", b"--link", b"--dry-run", b"t"],
    );
    assert_eq!(dry.status, 0, "{}", dry.stderr_str());
    assert!(
        dry.stdout_str()
            .contains("would link: t/b/copy of one -> t/a/one\n"),
        "{}",
        dry.stdout_str()
    );
    assert_eq!(contents(&env), before);
    // --link: every path reads its old bytes, each group one inode.
    let linked = env.fastsum_within(
        std::time::Duration::from_secs(60),
        &[b"dupes", b"--link", b"t"],
    );
    assert_eq!(linked.status, 0, "{}", linked.stderr_str());
    assert_eq!(contents(&env), before, "a link changed some bytes");
    for group in groups.lines() {
        let paths = testenv::python(
            "import ast,sys\nfor p in ast.literal_eval(sys.stdin.read()).split(b'|'): print(p.hex())",
            group.as_bytes(),
        );
        let inodes: std::collections::HashSet<u64> = paths
            .lines()
            .map(|hex| {
                let bytes: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect();
                std::fs::metadata(env.path().join(OsStr::from_bytes(&bytes)))
                    .unwrap()
                    .ino()
            })
            .collect();
        assert_eq!(inodes.len(), 1, "{group}");
    }
    // Nothing left to link: a second run does nothing and succeeds.
    let again = ours(&env, &[b"t"]);
    assert_eq!(again, "", "hard links are no duplicates by default");
}

#[test]
fn remove_leaves_one_copy_of_every_content() {
    let env = TestEnv::new();
    tree(&env);
    let contents_before: std::collections::BTreeSet<String> = contents(&env)
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap().to_string())
        .collect();
    let removed = env.fastsum_within(
        std::time::Duration::from_secs(60),
        &[b"dupes", b"--remove", b"--keep", b"newest", b"t"],
    );
    assert_eq!(removed.status, 0, "{}", removed.stderr_str());
    let after = contents(&env);
    let contents_after: std::collections::BTreeSet<String> = after
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(contents_after, contents_before, "a content was lost");
    assert_eq!(ours(&env, &[b"t"]), "", "duplicates are left");
    // Files in no group are untouched.
    for kept in [
        "t/size/f0",
        "t/edges/y",
        "t/block/q",
        "t/links/alone",
        "t/empty1",
    ] {
        assert!(env.path().join(kept).exists(), "{kept}");
    }
}

#[test]
fn reflink_says_clearly_where_the_file_system_cannot() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"same");
    env.file(b"t/b", b"same");
    let out = env.fastsum_within(
        std::time::Duration::from_secs(60),
        &[b"dupes", b"--reflink", b"t"],
    );
    let reflinks = std::fs::metadata(env.path().join("t/a")).unwrap();
    let _ = reflinks;
    if out.status == 0 {
        // A file system with reflinks (btrfs, xfs): b is a clone, same bytes.
        assert_eq!(std::fs::read(env.path().join("t/b")).unwrap(), b"same");
    } else {
        assert_eq!(out.status, 1);
        assert!(
            out.stderr_str().contains("cannot make reflinks"),
            "{}",
            out.stderr_str()
        );
        assert_eq!(
            std::fs::read(env.path().join("t/b")).unwrap(),
            b"same",
            "b untouched"
        );
    }
}

/// `--cache`: whole-file digests go to the cache and come back from it
/// (the second run reads no whole file: `fastsum cache stats` counts its
/// hits), the groups stay the oracle's, and a member rewritten in place
/// with bytes of the same size leaves its group: the cache is never stale.
#[test]
fn cache_serves_whole_files_and_is_never_stale() {
    let env = TestEnv::new();
    tree(&env);
    // Entries are stored only for files older than the racy window.
    std::thread::sleep(std::time::Duration::from_millis(2300));
    let stats = |env: &TestEnv| {
        let out = env.fastsum_within(
            std::time::Duration::from_secs(60),
            &[b"cache", b"--cache", b"c.sqlite", b"stats"],
        );
        assert_eq!(out.status, 0, "{}", out.stderr_str());
        out.stdout_str()
    };
    let expected = oracle(&env, &["t"], false, false);
    let args: &[&[u8]] = &[b"-a", b"sha256", b"--cache=c.sqlite", b"t"];
    assert_eq!(ours(&env, args), expected);
    let first = stats(&env);
    assert!(first.contains(" 0 hits"), "{first}");
    assert!(!first.contains("entries: 0\n"), "{first}");
    assert_eq!(ours(&env, args), expected);
    let second = stats(&env);
    assert!(second.contains(" 0 misses"), "{second}");
    assert!(!second.contains(" 0 hits"), "{second}");

    // Same size, other bytes, in place: the group loses it.
    let x = env.path().join("t/edges/x-copy");
    let mut changed = pattern(300_000);
    changed[200_000] ^= 0x55;
    std::fs::write(&x, &changed).unwrap();
    let after = oracle(&env, &["t"], false, false);
    assert_ne!(after, expected);
    assert!(!after.contains("t/edges/x-copy"), "{after}");
    assert_eq!(ours(&env, args), after);
}

/// What a tree holds, links followed: each path's bytes (or why it cannot
/// be read), and the contents that some regular file (not a link) holds.
struct Held {
    bytes: std::collections::BTreeMap<std::path::PathBuf, Result<Vec<u8>, String>>,
    contents: std::collections::BTreeSet<Vec<u8>>,
}

fn held(root: &std::path::Path) -> Held {
    let mut h = Held {
        bytes: Default::default(),
        contents: Default::default(),
    };
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
                continue;
            }
            if meta.file_type().is_symlink() && path.is_dir() {
                continue;
            }
            let read = std::fs::read(&path).map_err(|e| e.to_string());
            if meta.is_file() {
                h.contents.insert(read.clone().unwrap());
            }
            h.bytes.insert(path, read);
        }
    }
    h
}

/// The rule every action keeps: every content some regular file held is
/// still held by one; every path that still reads, reads the bytes it
/// read before (a symlink whose target `--remove` took may dangle: its
/// content is still held by the kept file).
fn assert_nothing_lost(before: &Held, after: &Held, what: &str) {
    for content in &before.contents {
        assert!(
            after.contents.contains(content),
            "{what}: the content {:?} is lost",
            String::from_utf8_lossy(content)
        );
    }
    for (path, now) in &after.bytes {
        if let (Some(was), Ok(_)) = (before.bytes.get(path), now) {
            assert_eq!(now, was, "{what}: {} reads otherwise", path.display());
        }
    }
}

#[test]
fn one_file_reached_by_two_paths_is_never_its_own_duplicate() {
    // `d d/../d`, `d dl` (dl -> d) and `-L d` with d/y -> x
    // name one file twice; no action may take the kept file with it.
    let cases: &[(&[&[u8]], &str)] = &[
        (&[b"d", b"d/../d"], "d d/../d"),
        (&[b"d", b"dl"], "d dl"),
        (&[b"dl", b"d"], "dl d"),
        (&[b"d", b"./d/"], "d ./d/"),
        (&[b"-L", b"d"], "-L d"),
        (&[b"-L", b"d", b"dl"], "-L d dl"),
    ];
    for action in [&b"--remove"[..], b"--link", b"--symlink"] {
        for keep in [&b"first"[..], b"newest", b"oldest"] {
            for (operands, name) in cases {
                let env = TestEnv::new();
                env.mkdir("d");
                env.file(b"d/a", b"precious");
                env.file(b"d/b", b"precious");
                env.file(b"d/x", b"only once");
                std::os::unix::fs::symlink("x", env.path().join("d/y")).unwrap();
                std::os::unix::fs::symlink("d", env.path().join("dl")).unwrap();
                let before = held(&env.path().join("d"));
                let mut args: Vec<&[u8]> = vec![b"dupes", action, b"--keep", keep];
                args.extend_from_slice(operands);
                let out = env.fastsum_within(std::time::Duration::from_secs(60), &args);
                let what = format!(
                    "{} --keep {} {name}",
                    String::from_utf8_lossy(action),
                    String::from_utf8_lossy(keep)
                );
                assert!(out.status <= 1, "{what}: {}", out.stderr_str());
                let after = held(&env.path().join("d"));
                assert_nothing_lost(&before, &after, &what);
                assert!(
                    after
                        .bytes
                        .values()
                        .any(|b| b.as_deref() == Ok(&b"only once"[..])),
                    "{what}: x is gone: {}",
                    out.stdout_str()
                );
            }
        }
    }
}

#[test]
fn random_trees_with_links_and_overlapping_operands_lose_nothing() {
    // For random trees with hard links, symlinked directories
    // and overlapping operands, every action leaves a copy of every
    // content, and no path reads bytes it never held.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let contents: [&[u8]; 3] = [b"alpha", b"bravo", b"alpha!"];
    let operand_sets: [&[&[u8]]; 5] = [
        &[b"r"],
        &[b"r", b"r/../r"],
        &[b"r", b"rl"],
        &[b"r/s", b"r"],
        &[b"-L", b"r", b"rl/s"],
    ];
    for case in 0..24 {
        let env = TestEnv::new();
        env.mkdir("r/s/t");
        let dirs = ["r", "r/s", "r/s/t"];
        let mut made: Vec<String> = Vec::new();
        for i in 0..(4 + next(6)) {
            let dir = dirs[next(3) as usize];
            let name = format!("{dir}/f{i}");
            match next(4) {
                0 if !made.is_empty() => {
                    let to = &made[next(made.len() as u64) as usize];
                    std::fs::hard_link(env.path().join(to), env.path().join(&name)).unwrap();
                }
                1 if !made.is_empty() => {
                    let to = &made[next(made.len() as u64) as usize];
                    let target = std::path::absolute(env.path().join(to)).unwrap();
                    std::os::unix::fs::symlink(target, env.path().join(&name)).unwrap();
                    continue;
                }
                _ => {
                    env.file(name.as_bytes(), contents[next(3) as usize]);
                }
            }
            made.push(name);
        }
        std::os::unix::fs::symlink("r", env.path().join("rl")).unwrap();
        std::os::unix::fs::symlink("..", env.path().join("r/s/up")).unwrap();
        let operands = operand_sets[next(operand_sets.len() as u64) as usize];
        let action: &[u8] = [&b"--remove"[..], b"--link", b"--symlink"][next(3) as usize];
        let keep: &[u8] = [&b"first"[..], b"newest", b"oldest"][next(3) as usize];
        let before = held(&env.path().join("r"));
        let mut args: Vec<&[u8]> = vec![b"dupes", b"--hard-links", action, b"--keep", keep];
        args.extend_from_slice(operands);
        let out = env.fastsum_within(std::time::Duration::from_secs(60), &args);
        let what = format!(
            "case {case}: {} --keep {} {:?}",
            String::from_utf8_lossy(action),
            String::from_utf8_lossy(keep),
            operands
                .iter()
                .map(|o| String::from_utf8_lossy(o))
                .collect::<Vec<_>>()
        );
        assert!(out.status <= 1, "{what}: {}", out.stderr_str());
        assert_nothing_lost(&before, &held(&env.path().join("r")), &what);
    }
}

#[test]
fn leftovers_of_a_killed_run_are_reported_and_cleared_only_when_safe() {
    // A run killed between making a link under its temporary
    // name and renaming it over the member leaves `.fastsum-NAME.PID.tmp`.
    // The pid here is above any kernel's pid_max: that run is over.
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"same");
    env.file(b"t/b", b"same");
    let dir = env.path().join("t");
    std::fs::hard_link(dir.join("a"), dir.join(".fastsum-b.4194311.tmp")).unwrap();
    std::os::unix::fs::symlink(dir.join("a"), dir.join(".fastsum-c.4194311.tmp")).unwrap();
    env.file(b"t/.fastsum-d.4194311.tmp", b"nowhere else");
    // Not ours: another shape, and a running process's (pid 1).
    env.file(b"t/.fastsum-e.tmp", b"same");
    std::fs::hard_link(dir.join("a"), dir.join(".fastsum-f.1.tmp")).unwrap();
    let report = env.fastsum_within(std::time::Duration::from_secs(60), &[b"dupes", b"t"]);
    assert_eq!(report.status, 0, "{}", report.stderr_str());
    for name in ["b", "c", "d", "f"] {
        assert!(
            report.stderr_str().contains(&format!("t/.fastsum-{name}.")),
            "{name}: {}",
            report.stderr_str()
        );
    }
    // Leftovers are no members; the other shape is an ordinary file.
    assert_eq!(
        report
            .stdout_str()
            .lines()
            .filter(|l| l.contains("fastsum-"))
            .count(),
        1,
        "{}",
        report.stdout_str()
    );
    let linked = env.fastsum_within(
        std::time::Duration::from_secs(60),
        &[b"dupes", b"--link", b"t"],
    );
    assert_eq!(
        linked.status,
        1,
        "a kept leftover is said: {}",
        linked.stderr_str()
    );
    assert!(dir
        .join(".fastsum-b.4194311.tmp")
        .symlink_metadata()
        .is_err());
    assert!(dir
        .join(".fastsum-c.4194311.tmp")
        .symlink_metadata()
        .is_err());
    assert_eq!(
        std::fs::read(dir.join(".fastsum-d.4194311.tmp")).unwrap(),
        b"nowhere else"
    );
    assert!(
        dir.join(".fastsum-f.1.tmp").exists(),
        "a running pid's is kept"
    );
    assert!(
        linked.stderr_str().contains("only name of its bytes"),
        "{}",
        linked.stderr_str()
    );
    for name in ["a", "b"] {
        assert_eq!(std::fs::read(dir.join(name)).unwrap(), b"same");
    }
}

/// A name in a dupes message (a leftover here, found by the walk) is quoted
/// as every name dupes prints: a newline or an ESC in it cannot forge a
/// line or reach the terminal raw.
#[test]
fn a_hostile_leftover_name_is_quoted_in_the_message() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"same");
    env.file(
        b"t/.fastsum-x\n\x1b[2Jfastsum dupes: forged.4194311.tmp",
        b"same",
    );
    let report = env.fastsum_within(std::time::Duration::from_secs(60), &[b"dupes", b"t"]);
    assert!(report.status <= 1, "{}", report.stderr_str());
    assert!(!report.stderr.contains(&0x1b), "{:?}", report.stderr_str());
    let err = report.stderr_str();
    let lines: Vec<&str> = err.lines().collect();
    // The name's bytes all stay on the message's own line, quoted.
    let forged: Vec<&&str> = lines.iter().filter(|l| l.contains("forged")).collect();
    assert_eq!(forged.len(), 1, "no forged line: {lines:?}");
    assert!(
        forged[0].starts_with("fastsum dupes: 't/.fastsum-x'$'\\n")
            && forged[0].contains("left over"),
        "{lines:?}"
    );
}

/// A small XFS with reflinks, loop-mounted for the test (root only, where
/// `mkfs.xfs` and loop devices are there; `None`, said, elsewhere).
struct Xfs {
    mount: tempfile::TempDir,
    _image: tempfile::TempDir,
}

impl Xfs {
    fn new() -> Option<Xfs> {
        let image = tempfile::tempdir().ok()?;
        let file = image.path().join("xfs.img");
        let mount = tempfile::tempdir().ok()?;
        let ok = |cmd: &mut std::process::Command| cmd.output().is_ok_and(|o| o.status.success());
        let made = std::fs::File::create(&file)
            .and_then(|f| f.set_len(320 << 20))
            .is_ok()
            && ok(std::process::Command::new("mkfs.xfs")
                .args(["-q", "-m", "reflink=1"])
                .arg(&file))
            && ok(std::process::Command::new("mount")
                .arg("-o")
                .arg("loop")
                .arg(&file)
                .arg(mount.path()));
        if !made {
            crate::testenv::skip("no loop-mounted XFS here (needs root, mkfs.xfs, loop devices)");
            return None;
        }
        Some(Xfs {
            mount,
            _image: image,
        })
    }
}

impl Drop for Xfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.mount.path())
            .output();
    }
}

/// The physical extents of a file, as `xfs_io -c fiemap` lists them.
fn extents(path: &std::path::Path) -> String {
    let out = std::process::Command::new("xfs_io")
        .args(["-r", "-c", "fiemap"])
        .arg(path)
        .output()
        .expect("xfs_io");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .skip(1)
        .map(|l| l.split(':').nth(2).unwrap_or("").trim().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn reflink_shares_extents_through_the_kernels_comparison() {
    // `--reflink` asks the kernel to compare and share
    // (FIDEDUPERANGE) instead of cloning blindly (FICLONE).
    let Some(xfs) = Xfs::new() else { return };
    let root = xfs.mount.path();
    let bytes = pattern(20 << 20);
    for name in ["a", "b", "c"] {
        std::fs::write(root.join(name), &bytes).unwrap();
    }
    let mut other = bytes.clone();
    other[19 << 20] ^= 1;
    std::fs::write(root.join("d"), &other).unwrap();
    assert_ne!(extents(&root.join("a")), extents(&root.join("b")));
    let env = TestEnv::new();
    let out = env.fastsum_within(
        std::time::Duration::from_secs(60),
        &[b"dupes", b"--reflink", root.as_os_str().as_bytes()],
    );
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let shared = extents(&root.join("a"));
    assert!(!shared.is_empty());
    assert_eq!(extents(&root.join("b")), shared);
    assert_eq!(extents(&root.join("c")), shared);
    assert_ne!(extents(&root.join("d")), shared);
    for name in ["a", "b", "c"] {
        assert_eq!(std::fs::read(root.join(name)).unwrap(), bytes);
    }
    assert_eq!(std::fs::read(root.join("d")).unwrap(), other);
}

/// A long `dupes` shows the bar `-r` shows on a
/// terminal's stderr, and stdout holds the groups only. The work must
/// outlast the bar's one-second delay on any machine: two 512 MiB sparse
/// twins hashed with SM3 on one thread take ~4.5 s here (two 300 MB ones
/// on every core took 1.6 s, and a faster CI machine finished them before
/// the bar was due).
#[test]
fn dupes_shows_the_progress_bar_on_a_terminal() {
    let env = TestEnv::new();
    std::fs::create_dir(env.path().join("d")).unwrap();
    for name in ["a", "b"] {
        let f = std::fs::File::create(env.path().join("d").join(name)).unwrap();
        f.set_len(512 << 20).unwrap();
    }
    let command = format!("{} dupes -j1 -a sm3 d > out", crate::testenv::fastsum_bin());
    let run = |extra: &str| {
        let out = testenv::on_a_terminal(env.path(), &format!("{command} {extra}"));
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = run("");
    assert!(shown.contains("/2 files"), "no bar drawn: {shown:?}");
    let out = std::fs::read_to_string(env.path().join("out")).unwrap();
    assert_eq!(
        out.lines().filter(|l| l.starts_with("  d/")).count(),
        2,
        "{out}"
    );
    assert!(!out.contains("/2 files"), "the bar went to stdout: {out}");
    let shown = run("--no-progress");
    assert!(
        !shown.contains("/2 files"),
        "--no-progress drew a bar: {shown:?}"
    );
}
