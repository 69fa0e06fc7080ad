//! `--files0-from=F` (coreutils' du and wc convention)
//! and `--max-depth N` (find's -maxdepth) for `-r`, `diff` and `dupes`,
//! against find and against the same names given as operands.

use crate::testenv;

use std::process::Command;

use testenv::TestEnv;

/// A tree three levels deep, with twins at every level.
fn tree(env: &TestEnv) {
    for (path, content) in [
        ("t/top", "same\n"),
        ("t/top2", "same\n"),
        ("t/a/one", "same\n"),
        ("t/a/other", "other\n"),
        ("t/a/b/two", "other\n"),
        ("t/a/b/c/three", "deep\n"),
        ("t/a/b/c/three2", "deep\n"),
    ] {
        let full = env.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, content).expect("write");
    }
}

/// `find t -maxdepth N -type f`, sorted as fastsum sorts (byte order).
fn find(env: &TestEnv, depth: usize) -> Vec<String> {
    let out = Command::new("find")
        .args(["t", "-maxdepth", &depth.to_string(), "-type", "f"])
        .current_dir(env.path())
        .output()
        .expect("find runs");
    let mut files: Vec<String> = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(String::from)
        .collect();
    files.sort();
    files
}

#[test]
fn max_depth_walks_what_find_maxdepth_finds() {
    let env = TestEnv::new();
    tree(&env);
    for depth in 0..=5 {
        let arg = format!("--max-depth={depth}");
        let out = env.fastsum("fastsum", &[b"-r", arg.as_bytes(), b"t"], b"");
        assert_eq!(out.status, 0, "{}", out.stderr_str());
        let listed: Vec<String> = out
            .stdout_str()
            .lines()
            .map(|l| l.split_once("  ").expect("a line").1.to_string())
            .collect();
        assert_eq!(listed, find(&env, depth), "depth {depth}");
        // dupes: only twins within the depth.
        let out = env.fastsum(
            "fastsum",
            &[b"dupes", b"--max-depth", depth.to_string().as_bytes(), b"t"],
            b"",
        );
        let in_depth = find(&env, depth);
        for line in out.stdout_str().lines().filter(|l| l.starts_with("t/")) {
            assert!(
                in_depth.iter().any(|f| f == line),
                "{line} beyond depth {depth}"
            );
        }
    }
    let out = env.fastsum("fastsum", &[b"--max-depth=1", b"t"], b"");
    assert_eq!(out.status, 2);
    assert!(out
        .stderr_str()
        .contains("--max-depth option is meaningful only with --recursive"));
}

#[test]
fn diff_max_depth_leaves_deeper_entries_out_of_both_sides() {
    let env = TestEnv::new();
    tree(&env);
    // A manifest of the whole tree against the tree at depth 2: nothing
    // is "removed" for being deeper than asked, on either side.
    let listed = env.fastsum("fastsum", &[b"-r", b"t"], b"");
    env.file(b"all.md5", &listed.stdout);
    std::fs::write(env.path().join("t/a/b/c/three"), "changed\n").expect("write");
    for args in [
        &[&b"diff"[..], b"--max-depth", b"2", b"all.md5", b"t"][..],
        &[b"diff", b"--max-depth", b"2", b"t", b"all.md5"],
    ] {
        let out = env.fastsum("fastsum", args, b"");
        assert_eq!(out.stdout_str(), "", "{}", out.stderr_str());
        assert_eq!(out.status, 0);
    }
    let out = env.fastsum("fastsum", &[b"diff", b"all.md5", b"t"], b"");
    assert_eq!(out.stdout_str(), "M\ta/b/c/three\n");
}

#[test]
fn files0_from_hashes_as_the_same_operands_would() {
    let env = TestEnv::new();
    tree(&env);
    env.file(b"new\nline", b"odd name\n");
    env.file(b"back\\slash", b"odd name\n");
    let names: [&[u8]; 4] = [b"t/top", b"new\nline", b"back\\slash", b"t/a/one"];
    let mut list = Vec::new();
    for name in names {
        list.extend_from_slice(name);
        list.push(0);
    }
    env.file(b"list0", &list);
    let as_operands = env.fastsum("fastsum", &names, b"");
    for args in [&[&b"--files0-from=list0"[..]][..], &[b"--files0-from=-"]] {
        let out = env.fastsum("fastsum", args, &list);
        assert_eq!(out, as_operands, "{:?}", String::from_utf8_lossy(args[0]));
    }
    // Without the last NUL too; an empty name is said and the rest done.
    let out = env.fastsum("fastsum", &[b"--files0-from=-"], b"t/top\0\0t/a/one");
    assert_eq!(out.status, 1);
    assert_eq!(out.stdout_str().lines().count(), 2);
    assert_eq!(
        out.stderr_str(),
        "fastsum: -:2: invalid zero-length file name\n"
    );
    // Standard input is the list, so a name `-` there is
    // refused as du and wc refuse it (never hashed as stdin), the rest done.
    let out = env.fastsum("fastsum", &[b"--files0-from=-"], b"-\0t/top\0");
    assert_eq!(out.status, 1);
    assert_eq!(out.stdout_str().lines().count(), 1, "{}", out.stdout_str());
    assert!(out.stdout_str().ends_with("  t/top\n"));
    let du = std::process::Command::new("du")
        .arg("--files0-from=-")
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut du| {
            use std::io::Write;
            du.stdin.take().unwrap().write_all(b"-\0")?;
            du.wait_with_output()
        })
        .unwrap();
    let theirs = String::from_utf8_lossy(&du.stderr).replacen("du: ", "fastsum: ", 1);
    assert_eq!(out.stderr_str(), theirs);
    // Operands and --files0-from exclude each other; a list not there.
    let out = env.fastsum("fastsum", &[b"--files0-from=list0", b"t/top"], b"");
    assert_eq!(out.status, 2);
    assert!(out
        .stderr_str()
        .contains("file operands cannot be combined with --files0-from"));
    let out = env.fastsum("fastsum", &[b"--files0-from=nowhere"], b"");
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stderr_str(),
        "fastsum: cannot open ‘nowhere’ for reading: No such file or directory\n"
    );
}
