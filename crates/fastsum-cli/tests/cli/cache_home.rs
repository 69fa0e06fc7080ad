//! The cache path is resolved in one place, so a `--cache`
//! that asks for the default with no `$XDG_CACHE_HOME` or `$HOME` to put it
//! in is met the same way by every command: one message, no output, the
//! command's trouble status, nothing hashed. `--update`'s cache, used
//! unasked, says the same and the run goes on without it.

use crate::testenv::{Outcome, TestEnv};

/// MD5("abc"), RFC 1321's test vector.
const ABC_MD5: &str = "900150983cd24fb0d6963f7d28e17f72";

const NO_HOME: &str = "cache: no $XDG_CACHE_HOME or $HOME to put the cache in; give --cache=PATH";

fn homeless(env: &TestEnv, args: &[&str]) -> Outcome {
    env.command("fastsum")
        .args(args)
        .env_remove("HOME")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .expect("run fastsum")
        .into()
}

#[test]
fn every_command_says_the_same_when_the_cache_has_no_home() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"abc");
    let list = format!("{ABC_MD5}  t/a\n");
    env.file(b"t.md5", list.as_bytes());
    let cases: [(&[&str], &str, i32); 8] = [
        // Refused before any work: a usage error, 2 under fastsum's own
        // name as in the subcommands.
        (&["-r", "--cache", "t"], "fastsum", 2),
        (&["-c", "--cache", "t.md5"], "fastsum", 2),
        (&["diff", "--cache", "t", "t"], "fastsum diff", 2),
        (&["dupes", "--cache", "t"], "fastsum dupes", 2),
        (&["audit", "--cache", "t.md5", "t"], "fastsum audit", 2),
        (&["tree-digest", "--cache", "t"], "fastsum tree-digest", 2),
        (&["scrub", "--cache", "t"], "fastsum scrub", 2),
        (&["cache", "stats"], "fastsum cache", 1),
    ];
    for (args, who, status) in cases {
        let out = homeless(&env, args);
        assert_eq!(
            out.stderr_str(),
            format!("{who}: {NO_HOME}\n"),
            "fastsum {args:?}"
        );
        assert_eq!(out.stdout_str(), "", "fastsum {args:?}");
        assert_eq!(out.status, status, "fastsum {args:?}");
    }
}

#[test]
fn update_says_the_same_and_goes_on_without_the_cache() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"abc");
    let list = format!("{}  t/a\n", "0".repeat(32));
    env.file(b"t.md5", list.as_bytes());
    let out = homeless(&env, &["-r", "--update=t.md5", "t"]);
    let said = format!("fastsum: {NO_HOME}; going on without it");
    assert!(
        out.stderr_str().lines().any(|line| line == said),
        "{}",
        out.stderr_str()
    );
    let written = std::fs::read_to_string(env.path().join("t.md5")).unwrap();
    assert_eq!(written, format!("{ABC_MD5}  t/a\n"));
}
