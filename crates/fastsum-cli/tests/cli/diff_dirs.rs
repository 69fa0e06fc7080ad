//! `fastsum diff` of two trees and their directories: a
//! directory one side has and the other lacks (an empty one too) is
//! added or removed, in text, JSON and the plan; `--ignore-directories`
//! leaves them out. Checked on random trees against the directories
//! computed from the file system here, and against `diff -rq`'s "Only in"
//! lines.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::testenv::{Outcome, TestEnv};

fn diff(env: &TestEnv, args: &[&str]) -> Outcome {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    let args: Vec<&[u8]> = all.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// Every directory below `root`, as `a/b/` (relative, ending in `/`).
fn directories(root: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                let path = entry.path();
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                found.insert(format!("{relative}/"));
                stack.push(path);
            }
        }
    }
    found
}

/// A small random tree under `root`: nested, some directories empty.
fn random_tree(root: &Path, seed: &mut u64) {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    std::fs::create_dir_all(root).unwrap();
    for _ in 0..12 {
        let depth = next() % 3 + 1;
        let mut path = root.to_path_buf();
        for _ in 0..depth {
            path.push(format!("d{}", next() % 4));
        }
        std::fs::create_dir_all(&path).unwrap();
        if next() % 3 != 0 {
            std::fs::write(path.join(format!("f{}", next() % 3)), b"same\n").unwrap();
        }
    }
}

#[test]
fn directories_only_one_side_has_are_reported_in_every_form() {
    let env = TestEnv::new();
    for seed in 1..=12u64 {
        let (mut a, mut b) = (seed * 7919, seed * 104_729);
        let old = env.path().join(format!("old{seed}"));
        let new = env.path().join(format!("new{seed}"));
        random_tree(&old, &mut a);
        random_tree(&new, &mut b);
        let (olds, news) = (directories(&old), directories(&new));
        let added: BTreeSet<&String> = news.difference(&olds).collect();
        let removed: BTreeSet<&String> = olds.difference(&news).collect();
        let (o, n) = (old.to_str().unwrap(), new.to_str().unwrap());
        // Text.
        let out = diff(&env, &[o, n]);
        let text = out.stdout_str();
        let said = |letter: &str| -> BTreeSet<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix(letter))
                .filter(|p| p.ends_with('/'))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(
            said("A\t").iter().collect::<BTreeSet<_>>(),
            added,
            "seed {seed}: {text}"
        );
        assert_eq!(
            said("D\t").iter().collect::<BTreeSet<_>>(),
            removed,
            "seed {seed}: {text}"
        );
        let differs = !added.is_empty() || !removed.is_empty() || text.lines().count() > 0;
        assert_eq!(
            out.status,
            i32::from(differs),
            "seed {seed}: {}",
            out.stderr_str()
        );
        // diff -rq: each "Only in" directory is one fastsum names.
        let reference = Command::new("diff").args(["-rq", o, n]).output().unwrap();
        for line in String::from_utf8_lossy(&reference.stdout).lines() {
            let Some((place, name)) = line
                .strip_prefix("Only in ")
                .and_then(|l| l.split_once(": "))
            else {
                continue;
            };
            let full = Path::new(place).join(name);
            if !full.is_dir() {
                continue;
            }
            let (root, letter) = if full.starts_with(&new) {
                (&new, "A\t")
            } else {
                (&old, "D\t")
            };
            let relative = full.strip_prefix(root).unwrap().to_str().unwrap();
            assert!(
                text.contains(&format!("{letter}{relative}/\n")),
                "seed {seed}: {line}: {text}"
            );
        }
        // The same with the cache (the hashing path).
        let cached = diff(&env, &["--cache=c.db", o, n]);
        assert_eq!(cached.stdout_str(), text, "seed {seed}");
        // JSON and the plan.
        let json = diff(&env, &["--json", o, n]).stdout_str();
        for dir in &added {
            assert!(
                json.contains(&format!(r#"{{"change":"added","old":null,"new":"{dir}"}}"#)),
                "{json}"
            );
        }
        let plan = diff(&env, &["--plan", o, n]).stdout_str();
        for dir in &added {
            assert!(plan.contains(&format!(r#"{{"path":"{dir}"}}"#)), "{plan}");
        }
        let send = plan
            .split("\"send\":[")
            .nth(1)
            .unwrap()
            .split(']')
            .next()
            .unwrap();
        assert!(!send.contains("/\""), "a directory to send: {plan}");
        // Left out when asked.
        let ignored = diff(&env, &["--ignore-directories", o, n]).stdout_str();
        assert!(!ignored.lines().any(|l| l.ends_with('/')), "{ignored}");
    }
}

#[test]
fn an_empty_directory_more_is_a_difference() {
    let env = TestEnv::new();
    env.mkdir("e1/d");
    env.mkdir("e2/d");
    env.mkdir("e2/emptydir");
    env.file(b"e1/d/x", b"x\n");
    env.file(b"e2/d/x", b"x\n");
    let out = diff(&env, &["e1", "e2"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "A\temptydir/\n");
    let out = diff(&env, &["e2", "e1"]);
    assert_eq!(out.stdout_str(), "D\temptydir/\n");
    let out = diff(&env, &["--ignore-directories", "e1", "e2"]);
    assert_eq!((out.status, out.stdout_str().as_str()), (0, ""));
    // tree-digest agrees that they differ.
    let digests = diff(&env, &["--stat", "e1", "e2"]);
    assert!(
        digests.stdout_str().contains("1 added"),
        "{}",
        digests.stdout_str()
    );
}

/// The hostile review: a plan moved `x/f` onto `x` while the old side
/// still had the directory `x/` (a rename that cannot be done). A move is
/// never onto a directory only the old side has, nor from a path only the
/// new side has as a directory: a send and a removal instead.
#[test]
fn a_plan_never_moves_a_file_onto_a_directory() {
    let env = TestEnv::new();
    env.mkdir("old/x");
    env.mkdir("new");
    env.file(b"old/x/f", b"data\n");
    env.file(b"new/x", b"data\n");
    env.mkdir("old2");
    env.mkdir("new2/y");
    env.file(b"old2/y", b"data\n");
    env.file(b"new2/y/f", b"data\n");
    for (old, new, gone, sent) in [("old", "new", "x/f", "x"), ("old2", "new2", "y", "y/f")] {
        let plan = diff(&env, &["--plan", old, new]).stdout_str();
        assert!(plan.contains(r#""moved":[]"#), "{plan}");
        assert!(
            plan.contains(&format!(r#""send":[{{"path":"{sent}","change":"added""#)),
            "{plan}"
        );
        assert!(
            plan.contains(&format!(r#""only_old":[{{"path":"{gone}""#)),
            "{plan}"
        );
    }
}
