//! Messages that say what is wrong, once, in
//! the user's terms, and the JSON recipe that keeps exact names.

use crate::testenv;

use testenv::TestEnv;

#[test]
fn a_directory_given_as_the_cache_is_said_to_be_one() {
    let env = TestEnv::new();
    env.file(b"a", b"hi\n");
    env.mkdir("d");
    let out = env.fastsum("fastsum", &[b"--cache=d", b"a"], b"");
    assert_eq!(out.status, 0, "the run goes on without the cache");
    assert_eq!(
        out.stderr_str(),
        "fastsum: cache: d: is a directory; going on without it\n"
    );
    let out = env.fastsum("fastsum", &[b"cache", b"--cache=d", b"stats"], b"");
    assert_ne!(out.status, 0);
    assert_eq!(out.stderr_str(), "fastsum cache: d: is a directory\n");
}

#[test]
fn standard_input_cannot_be_both_sides_of_a_diff() {
    let env = TestEnv::new();
    let out = env.fastsum("fastsum", &[b"diff", b"-", b"-"], b"");
    assert_eq!(out.status, 2);
    assert_eq!(
        out.stderr_str(),
        "fastsum diff: standard input ('-') can be only one side, not both\n"
    );
}

#[test]
fn the_transport_s_complaint_is_prefixed_once() {
    let env = TestEnv::new();
    // A transport that fails as ssh does when a name does not resolve.
    env.mkdir("bin");
    let fake = env.file(
        b"bin/ssh",
        b"#!/bin/sh\necho 'ssh: Could not resolve hostname nowhere: Name or service not known' >&2\nexit 255\n",
    );
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let rsh = format!("--rsh={}", fake.display());
    let out = env.fastsum("fastsum", &[b"-r", rsh.as_bytes(), b"nowhere:/x"], b"");
    assert_ne!(out.status, 0);
    let said = out.stderr_str();
    assert!(
        said.starts_with("fastsum: nowhere:/x: ssh: Could not resolve hostname nowhere"),
        "{said}"
    );
    assert!(!said.contains("ssh: ssh:"), "{said}");
}

#[test]
fn cache_stats_after_clear_show_no_last_run() {
    let env = TestEnv::new();
    env.file(b"a", b"hi\n");
    env.fastsum("fastsum", &[b"--cache=c.sqlite", b"a"], b"");
    let before = env.fastsum("fastsum", &[b"cache", b"--cache=c.sqlite", b"stats"], b"");
    assert!(
        before.stdout_str().contains("last run: 0 hits, 1 miss"),
        "{}",
        before.stdout_str()
    );
    env.fastsum("fastsum", &[b"cache", b"--cache=c.sqlite", b"clear"], b"");
    let after = env.fastsum("fastsum", &[b"cache", b"--cache=c.sqlite", b"stats"], b"");
    assert!(
        after.stdout_str().contains("entries: 0\n"),
        "{}",
        after.stdout_str()
    );
    assert!(
        after.stdout_str().contains("last run: none recorded"),
        "{}",
        after.stdout_str()
    );
}

#[test]
fn threads_help_says_its_default_once() {
    let env = TestEnv::new();
    for sub in ["diff", "dupes"] {
        let out = env.fastsum("fastsum", &[sub.as_bytes(), b"--help"], b"");
        let line = out
            .stdout_str()
            .lines()
            .find(|l| l.contains("--threads"))
            .expect("a -j line")
            .to_string();
        assert!(
            line.contains("default: all cores") && !line.contains("[default: 0]"),
            "{line}"
        );
    }
}

#[test]
fn diff_stat_says_unknown_sizes_not_zero_bytes() {
    let env = TestEnv::new();
    env.mkdir("old");
    env.file(b"old/kept", b"same\n");
    env.mkdir("new");
    env.file(b"new/kept", b"same\n");
    env.file(b"new/added", b"twelve bytes");
    // A manifest gives no sizes: the added file's is unknown.
    let listed = env.fastsum("fastsum", &[b"-r", b"new"], b"");
    env.file(b"new.md5", &listed.stdout);
    let out = env.fastsum("fastsum", &[b"diff", b"--stat", b"old", b"new.md5"], b"");
    assert_eq!(
        out.stdout_str(),
        "1 added, 0 removed, 0 modified, 0 moved, 0 typechanges; bytes in added and modified files unknown\n"
    );
    // A tree gives them.
    let out = env.fastsum("fastsum", &[b"diff", b"--stat", b"old", b"new"], b"");
    assert_eq!(
        out.stdout_str(),
        "1 added, 0 removed, 0 modified, 0 moved, 0 typechanges; 12 bytes in added and modified files\n"
    );
}

/// Point 3: docs/JSON.md's recipe for the exact bytes of names that are
/// not UTF-8 gives them back, byte for byte (jq's `@base64d` would not).
#[test]
fn the_documented_jq_recipe_gives_exact_non_utf8_names() {
    let env = TestEnv::new();
    env.mkdir("data");
    env.file(b"data/caf\xe9", b"latin-1 name\n");
    env.file(b"data/\xff\xfe\n", b"odd bytes and a newline\n");
    env.file(b"data/plain", b"utf-8 name\n");
    let doc = include_str!("../../../../docs/JSON.md");
    let recipe = doc
        .lines()
        .skip_while(|l| !l.contains(".path_base64 // empty' |"))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    let pipeline = recipe
        .trim_start_matches("$ ")
        .replace("fastsum ", &format!("{} ", crate::testenv::fastsum_bin()))
        .replace("xargs -0 ls -l", "cat");
    assert!(pipeline.contains("base64 -d"), "{pipeline}");
    let out = std::process::Command::new("sh")
        .args(["-c", &pipeline])
        .current_dir(env.path())
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<&[u8]> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .collect();
    names.sort();
    assert_eq!(names, [&b"data/caf\xe9"[..], b"data/\xff\xfe\n"]);
}
