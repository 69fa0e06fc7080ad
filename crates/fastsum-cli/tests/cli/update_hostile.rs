//! `fastsum -r --update` tried as a hostile user would (second pass over
//! issue 51): lists whose names are not UTF-8, and what a concurrent or
//! killed update leaves beside them.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::testenv::{Outcome, TestEnv};

/// fastsum run in `dir` with `args` (bytes: names need not be UTF-8).
fn fastsum_in(env: &TestEnv, dir: &std::path::Path, args: &[&[u8]]) -> Outcome {
    env.command("fastsum")
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(dir)
        .output()
        .unwrap()
        .into()
}

/// A process id that is gone (a child that ran and was reaped).
fn a_dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A list named `S\xffS.md5` inside the tree it describes: its temporary
/// file was named lossily (`\u{fffd}` for the byte), not known as the
/// list's own, so the list named it (a file gone once renamed: `-c`
/// failed, each update said `A` and `D`); one a killed update left was
/// never removed.
#[test]
fn a_list_whose_name_is_not_utf8_never_lists_its_temporary_file() {
    let env = TestEnv::new();
    env.mkdir("site");
    env.file(b"site/a", b"a\n");
    env.file(b"site/b", b"b\n");
    let site = env.path().join("site");
    let name: &[u8] = b"S\xffS.md5";
    let first = fastsum_in(&env, &site, &[b"-r", b"."]);
    assert_eq!(first.status, 0, "{}", first.stderr_str());
    std::fs::write(site.join(OsStr::from_bytes(name)), &first.stdout).unwrap();
    let stale = [
        b".",
        name,
        b".fastsum-update.",
        a_dead_pid().to_string().as_bytes(),
    ]
    .concat();
    std::fs::write(site.join(OsStr::from_bytes(&stale)), b"half").unwrap();
    let update = [b"--update=", name].concat();
    for round in 0..2 {
        let out = fastsum_in(&env, &site, &[b"-r", b"--cache=../c.db", &update, b"."]);
        assert_eq!(out.status, 0, "round {round}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "", "round {round}: changes said");
        let listed = std::fs::read(site.join(OsStr::from_bytes(name))).unwrap();
        assert_eq!(listed, first.stdout, "round {round}: the list changed");
    }
    let mut left: Vec<Vec<u8>> = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().file_name().as_bytes().to_vec())
        .collect();
    left.sort();
    assert_eq!(left, [name, b"a", b"b"], "the stale temporary file stays");
    let check = fastsum_in(&env, &site, &[b"-c", name]);
    assert_eq!(check.status, 0, "{}", check.stderr_str());
}
