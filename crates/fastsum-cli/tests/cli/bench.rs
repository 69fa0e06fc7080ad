//! `fastsum bench` against the real binary: JSON read back,
//! a lying peer caught, clear errors.

use crate::testenv;

use testenv::{pattern, TestEnv};

fn bench(env: &TestEnv, args: &[&str], path_prefix: Option<&std::path::Path>) -> testenv::Outcome {
    let mut cmd = env.command("fastsum");
    cmd.arg("bench").args(args);
    if let Some(dir) = path_prefix {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", dir.display()));
    }
    let out = cmd.output().expect("run fastsum bench");
    out.into()
}

fn corpus(env: &TestEnv) {
    env.mkdir("data/sub");
    env.file(b"data/a", &pattern(100_000));
    env.file(b"data/sub/b", &pattern(300_000));
    env.file(b"data/empty", b"");
}

#[test]
fn json_figures_parse_back() {
    let env = TestEnv::new();
    corpus(&env);
    let out = bench(
        &env,
        &[
            "--json",
            "--iterations",
            "2",
            "-a",
            "sha256",
            "--strategy",
            "fastsum",
            "--strategy",
            "slurp",
            "--strategy",
            "read-4K",
            "--strategy",
            "mmap",
            "data",
        ],
        None,
    );
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let script = r#"
import json, sys
doc = json.loads(sys.stdin.read())
assert doc["algorithm"] == "sha256", doc
assert doc["files"] == 3 and doc["bytes"] == 400000, doc
names = [s["name"] for s in doc["strategies"]]
assert sorted(names) == ["fastsum", "mmap", "read-4K", "slurp"], names
medians = [s["median_seconds"] for s in doc["strategies"]]
assert medians == sorted(medians, reverse=True), "slowest first"
for s in doc["strategies"]:
    assert len(s["times_seconds"]) == 2 and s["median_seconds"] > 0
    assert s["peak_rss_bytes"] > 1 << 20, s
print("ok")
"#;
    assert_eq!(testenv::python(script, &out.stdout), "ok\n");
}

#[test]
fn the_table_lists_every_strategy_once_with_the_diagonal() {
    let env = TestEnv::new();
    corpus(&env);
    let out = bench(
        &env,
        &[
            "--iterations",
            "1",
            "--strategy",
            "fastsum",
            "--strategy",
            "slurp",
            "data/a",
        ],
        None,
    );
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let text = out.stdout_str();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "md5: 1 file, 100000 bytes, warm cache");
    assert!(lines[1].trim_start().starts_with("Rate"), "{text}");
    assert_eq!(lines[2].matches("--").count(), 1, "{text}");
    assert_eq!(lines[3].matches("--").count(), 1, "{text}");
    assert!(lines[5].starts_with("Fastest: "), "{text}");
}

#[test]
fn a_peer_that_answers_wrong_digests_fails_the_run_loudly() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    corpus(&env);
    let fake = env.mkdir("fakebin");
    let script = fake.join("md5sum");
    std::fs::write(
        &script,
        "#!/bin/sh\nfor f in \"$@\"; do echo \"00000000000000000000000000000000  $f\"; done\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = bench(
        &env,
        &[
            "--iterations",
            "1",
            "--strategy",
            "fastsum",
            "--strategy",
            "md5sum",
            "data/a",
        ],
        Some(&fake),
    );
    assert_eq!(out.status, 1);
    assert!(
        out.stderr_str().contains(&format!(
            "fastsum bench: DIGESTS DISAGREE on data/a: md5sum says 00000000000000000000000000000000, fastsum says {}",
            testenv::reference_hex("md5sum", &pattern(100_000))
        )),
        "{}",
        out.stderr_str()
    );
}

#[test]
fn a_missing_path_is_a_clear_error() {
    let env = TestEnv::new();
    let out = bench(&env, &["--iterations", "1", "no/such/file"], None);
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stderr_str(),
        "fastsum bench: no/such/file: No such file or directory\n"
    );
    assert!(out.stdout.is_empty());
    corpus(&env);
    let out = bench(&env, &["--strategy", "warp-drive", "data"], None);
    assert_eq!(out.status, 1);
    assert!(
        out.stderr_str().starts_with(
            "fastsum bench: unknown strategy 'warp-drive' for md5 (available: fastsum, "
        ),
        "{}",
        out.stderr_str()
    );
}

#[test]
fn peak_memory_shows_what_slurping_costs() {
    let env = TestEnv::new();
    let big = std::fs::File::create(env.path().join("big")).unwrap();
    big.set_len(64 << 20).unwrap();
    let out = bench(
        &env,
        &[
            "--json",
            "--iterations",
            "1",
            "-a",
            "xxh3",
            "--strategy",
            "slurp",
            "--strategy",
            "read-4K",
            "big",
        ],
        None,
    );
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let json = out.stdout_str();
    let rss = |name: &str| -> u64 {
        let at = json.find(&format!("\"name\":\"{name}\"")).unwrap();
        let rest = &json[at..];
        let value = rest.split("\"peak_rss_bytes\":").nth(1).unwrap();
        value
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // Each in a fresh process: slurp holds the whole 64 MiB, streaming
    // reads hold a buffer (the parent's own peak must not leak in).
    assert!(rss("slurp") > 64 << 20, "{json}");
    assert!(rss("read-4K") < 32 << 20, "{json}");
}

#[test]
fn cold_runs_say_so_and_still_agree() {
    let env = TestEnv::new();
    corpus(&env);
    let out = bench(
        &env,
        &[
            "--cold",
            "--iterations",
            "1",
            "--strategy",
            "fastsum",
            "--strategy",
            "mmap",
            "data",
        ],
        None,
    );
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert!(
        out.stdout_str()
            .starts_with("md5: 3 files, 400000 bytes, cold cache\n"),
        "{}",
        out.stdout_str()
    );
}

/// xxhsum is a peer for every xxh algorithm (its -H3 lines
/// are tagged, and still read), and zero iterations are refused.
#[test]
fn xxhsum_is_a_peer_for_xxh3_and_zero_iterations_are_refused() {
    if crate::testenv::lacks(&["xxhsum"]) {
        return;
    }
    let env = TestEnv::new();
    corpus(&env);
    for algorithm in ["xxh32", "xxh64", "xxh3", "xxh128"] {
        let out = bench(
            &env,
            &[
                "-a",
                algorithm,
                "--iterations",
                "1",
                "--strategy",
                "xxhsum",
                "--strategy",
                "fastsum",
                "data",
            ],
            None,
        );
        assert_eq!(out.status, 0, "{algorithm}: {}", out.stderr_str());
        assert!(
            out.stdout_str()
                .lines()
                .any(|l| l.trim_start().starts_with("xxhsum ")),
            "{algorithm}: {}",
            out.stdout_str()
        );
    }
    let out = bench(&env, &["--iterations", "0", "data"], None);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str().contains("0 is not in 1.."),
        "{}",
        out.stderr_str()
    );
}
