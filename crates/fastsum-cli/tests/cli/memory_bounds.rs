//! Untrusted lists larger than memory allows: every reader
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
    // And as fastsum's JSON record: the path as written, with escapes
    // (`\/`, 3 bytes for 2), and as `path_base64` (each string of the
    // record is held by its own parser).
    let record = |member: &str, value: &str| {
        format!(
            "{{\"path{member}\":\"{value}\",\"algorithm\":\"md5\",\"digest\":\"{EMPTY_MD5}\",\"size\":0}}\n"
        )
    };
    env.file(b"long.json", record("", &long).as_bytes());
    let escaped = "a\\/".repeat(21_000_000);
    env.file(b"long-escaped.json", record("", &escaped).as_bytes());
    let b64 = "YS9h".repeat(16_000_000);
    env.file(b"long-base64.json", record("_base64", &b64).as_bytes());
    let runs: [(&[&str], &[u64]); 13] = [
        (&["-c", "long.md5"], &[80, 125, 200]),
        (&["diff", "long.md5", "empty"], &[80, 125, 200]),
        (&["audit", "long.hd", "empty"], &[80, 125, 200]),
        (&["scrub", "--manifest", "long.md5"], &[80, 125, 200]),
        (&["-c", "long.json"], &[90, 110, 130]),
        (&["diff", "long.json", "empty"], &[90, 110, 130]),
        (&["audit", "long.json", "empty"], &[90, 110, 130]),
        (&["-c", "long-escaped.json"], &[90, 110, 130]),
        (&["diff", "long-escaped.json", "empty"], &[90, 110, 130]),
        (&["audit", "long-escaped.json", "empty"], &[90, 110, 130]),
        (&["-c", "long-base64.json"], &[90, 110, 130]),
        (&["diff", "long-base64.json", "empty"], &[90, 110, 130]),
        (&["audit", "long-base64.json", "empty"], &[90, 110, 130]),
    ];
    for (args, limits) in runs {
        for &mib in limits {
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
            let named = stderr.contains(": long") || stderr.contains("File name too long");
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

/// `fastsum ARGS` allowed no thread beyond its main one: RLIMIT_NPROC of 1
/// for a user (nobody when the suite runs as root, whom the limit does
/// not bind), so every thread the run starts is refused by the system.
fn without_threads(env: &TestEnv, args: &[&str]) -> Output {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.path().join("fastsum");
    std::fs::copy(crate::testenv::fastsum_bin(), &exe).expect("copy fastsum");
    let mut cmd = std::process::Command::new(&exe);
    cmd.arg0("fastsum")
        .args(args)
        .current_dir(env.path())
        .env("LC_ALL", "C.UTF-8")
        .env_remove("RUST_BACKTRACE")
        .stdin(std::process::Stdio::null());
    // SAFETY: getuid has no preconditions and cannot fail.
    if unsafe { libc::getuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing
    // else between fork and exec (which runs after the uid is changed).
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1,
                rlim_max: 1,
            };
            match libc::setrlimit(libc::RLIMIT_NPROC, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let mut attempts = 0;
    loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 100 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            out => return out.expect("run fastsum"),
        }
    }
}

/// A thread the system will not start is a resource the process lacks,
/// not a bug: every command says so and exits with its trouble status (1
/// in the hashing modes, as md5sum, and in tree-digest, as b3sum; 2 in
/// the others), or finishes on the
/// threads it has with the answer an unlimited run gives; never a panic
/// (exit 101 and a backtrace) or a signal.
#[test]
fn a_thread_the_system_refuses_is_an_error_with_its_cause_never_a_panic() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    env.mkdir("t");
    env.mkdir("t/sub");
    for i in 0..64 {
        let body = crate::testenv::pattern(1000 + i * 37);
        env.file(format!("t/f{i}").as_bytes(), &body);
        env.file(format!("t/sub/copy{i}").as_bytes(), &body);
    }
    let listed = env.fastsum("fastsum", &[b"-r", b"t"], b"");
    assert_eq!(listed.status, 0);
    env.file(b"t.md5", &listed.stdout);
    for dir in [
        env.path().to_path_buf(),
        env.path().join("t"),
        env.path().join("t/sub"),
    ] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let runs: [&[&str]; 6] = [
        &["-r", "t"],
        &["-c", "t.md5"],
        &["-a", "md5", "-a", "sha256", "-r", "t"],
        &["diff", "t.md5", "t"],
        &["dupes", "t"],
        &["tree-digest", "t"],
    ];
    let mut refused = 0;
    for args in runs {
        let out = without_threads(&env, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), None, "{args:?}: {stderr}");
        let trouble = match args[0].starts_with('-') || args[0] == "tree-digest" {
            true => 1,
            false => 2,
        };
        match out.status.code() {
            Some(code) if code == trouble => {
                assert!(
                    stderr.contains(": cannot start a thread (Resource temporarily unavailable)"),
                    "{args:?}: {stderr}"
                );
                assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
                refused += 1;
            }
            Some(0) => {
                let free = env.fastsum(
                    "fastsum",
                    &args.iter().map(|a| a.as_bytes()).collect::<Vec<_>>(),
                    b"",
                );
                assert_eq!(out.stdout, free.stdout, "{args:?}");
            }
            other => panic!("{args:?}: exit {other:?}: {stderr}"),
        }
    }
    // The limit bites: a tree of 128 files is hashed on several threads.
    assert!(refused > 0, "no run needed a thread");
}
