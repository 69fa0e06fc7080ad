//! Untrusted lists larger than memory allows (issue 63.11): every reader
//! of a list is an error naming the list when memory runs out, never an
//! abort (`memory allocation of N bytes failed`, SIGABRT), and a list of
//! empty records costs one line, not one allocation a record. Memory is
//! limited with RLIMIT_AS, so "runs out" is met for certain at each of
//! several points of the read; the figures are a benchmark's
//! (`scripts/bench/memory`), not a test's.

use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::Output;

use crate::testenv::TestEnv;

const EMPTY_MD5: &str = "d41d8cd98f00b204e9800998ecf8427e";

/// `fastsum ARGS` with its address space limited to `mib` MiB.
fn limited(env: &TestEnv, mib: u64, args: &[&str]) -> Output {
    let mut cmd = env.command("fastsum");
    cmd.args(args);
    let bytes = mib << 20;
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing
    // else between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    cmd.output().expect("run fastsum")
}

#[test]
fn a_line_longer_than_memory_allows_is_an_error_naming_the_list_never_an_abort() {
    let env = TestEnv::new();
    env.mkdir("empty");
    // One valid line whose name is 64 MB of `a/`, in each format read.
    let long = "a/".repeat(32_000_000) + "x";
    env.file(b"long.md5", format!("{EMPTY_MD5}  {long}\n").as_bytes());
    let hashdeep =
        format!("%%%% HASHDEEP-1.0\n%%%% size,md5,filename\n## x\n0,{EMPTY_MD5},{long}\n");
    env.file(b"long.hd", hashdeep.as_bytes());
    let runs: [&[&str]; 4] = [
        &["-c", "long.md5"],
        &["diff", "long.md5", "empty"],
        &["audit", "long.hd", "empty"],
        &["scrub", "--manifest", "long.md5"],
    ];
    for args in runs {
        for mib in [80, 125, 200] {
            let out = limited(&env, mib, args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let shown: String = stderr.chars().take(300).collect();
            assert_eq!(
                out.status.signal(),
                None,
                "{args:?} at {mib} MiB: killed: {shown}"
            );
            assert!(
                !stderr.contains("memory allocation of"),
                "{args:?} at {mib} MiB: {shown}"
            );
            // Trouble with the list names it; a list read whole leaves
            // its entry's own error (the name is too long to open).
            let named = stderr.contains("long.") || stderr.contains("File name too long");
            assert!(
                out.status.success() || named,
                "{args:?} at {mib} MiB: {shown}"
            );
        }
    }
}

#[test]
fn a_list_of_a_million_empty_records_costs_a_line_not_a_record_each() {
    let env = TestEnv::new();
    env.mkdir("empty");
    // 50 MB of NUL bytes: fifty million empty -z records, each held while
    // the format was looked for (1.5 GB, and 1 GiB of them aborted).
    env.file(b"nuls", &vec![0u8; 50_000_000]);
    for args in [["diff", "nuls", "empty"], ["audit", "nuls", "empty"]] {
        let out = limited(&env, 150, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("nuls: no entries"), "{args:?}: {stderr}");
    }
    let out = limited(&env, 150, &["-c", "nuls"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "-c: {stderr}");
    assert!(stderr.contains("no properly formatted"), "-c: {stderr}");
}

#[test]
fn unreadable_lines_past_a_thousand_are_counted_and_still_fail_the_run() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"");
    let mut list = format!("{EMPTY_MD5}  t/a\n");
    list.push_str(&"x\n".repeat(1_500));
    env.file(b"bad.md5", list.as_bytes());
    let out = limited(&env, 1024, &["diff", "bad.md5", "t"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches(": line ").count(), 1000, "{stderr}");
    assert!(
        stderr.contains("500 more lines could not be read (the first 1000 are named)"),
        "{stderr}"
    );
}
