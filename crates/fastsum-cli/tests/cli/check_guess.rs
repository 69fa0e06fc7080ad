//! `fastsum -c` of an untagged list finds its algorithm where
//! the digests' length fits several (32 digits: MD5, XXH128, BLAKE2b-128;
//! 16, 40, 64, 128 ...): a list named for its algorithm reads as it, any
//! other the one algorithm the smallest readable listed file matches under
//! (said on stderr); none matches: the candidates and `-a`, never a wall
//! of FAILED. The lists are written by the real tools; the personalities
//! keep GNU's (b3sum's, xxhsum's) reading, compared with the tools.

use crate::testenv::{self, TestEnv};

/// Files of three sizes: `small` is the one probed.
fn tree(env: &TestEnv) {
    env.mkdir("t");
    env.file(b"t/small", b"s\n");
    env.file(b"t/middle", &testenv::pattern(5000));
    env.file(b"t/big", &testenv::pattern(70_000));
}

const FILES: [&[u8]; 3] = [b"t/big", b"t/middle", b"t/small"];

/// `tool args FILES` as a list.
fn written_by(env: &TestEnv, tool: &str, args: &[&str]) -> Vec<u8> {
    let mut argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    argv.extend_from_slice(&FILES);
    let out = env.reference(tool, &argv, b"");
    assert_eq!(out.status, 0, "{tool} {args:?}: {}", out.stderr_str());
    out.stdout
}

/// `xxhsum -H3`'s BSD lines (`XXH3 (NAME) = HEX`, what it writes) as
/// untagged ones (`HEX  NAME`).
fn untagged(tagged: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(tagged.to_vec()).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let (head, hex) = line.rsplit_once(") = ").unwrap();
        let name = head.split_once(" (").unwrap().1;
        out.push_str(&format!("{hex}  {name}\n"));
    }
    out.into_bytes()
}

/// `fastsum -c LIST` passes every file, and stderr is `note` exactly.
fn reads_as(env: &TestEnv, list: &[u8], note: &str) {
    env.file(b"L", list);
    let out = env.fastsum("fastsum", &[b"-c", b"L"], b"");
    assert_eq!(
        (out.status, out.stdout_str(), out.stderr_str()),
        (
            0,
            "t/big: OK\nt/middle: OK\nt/small: OK\n".to_string(),
            note.to_string()
        ),
        "{}",
        String::from_utf8_lossy(list)
    );
}

fn note(digits: usize, shown: &str) -> String {
    format!("fastsum: L: untagged {digits}-digit digests read as {shown} (the smallest listed file matched)\n")
}

/// The 32-digit lists of xxhsum -H2 and b2sum -l 128 were read as MD5:
/// every intact file FAILED, exit 1.
#[test]
fn xxh128_and_blake2b_128_lists_are_read_as_what_wrote_them() {
    if testenv::lacks(&["xxhsum", "b2sum", "md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let xxh128 = written_by(&env, "xxhsum", &["-H2"]);
    reads_as(&env, &xxh128, &note(32, "XXH128"));
    reads_as(
        &env,
        &written_by(&env, "b2sum", &["-l", "128"]),
        &note(32, "BLAKE2b-128"),
    );
    // MD5, the run's reading, is not said.
    reads_as(&env, &written_by(&env, "md5sum", &[]), "");
    // On standard input: probed too.
    let out = env.fastsum("fastsum", &[b"-c", b"-"], &xxh128);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(
        out.stderr_str(),
        "fastsum: 'standard input': untagged 32-digit digests read as XXH128 (the smallest listed file matched)\n"
    );
    // -a is the user's word: no guess.
    env.file(b"L", &xxh128);
    let out = env.fastsum("fastsum", &[b"-a", b"md5", b"-c", b"L"], b"");
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stdout_str(),
        "t/big: FAILED\nt/middle: FAILED\nt/small: FAILED\n"
    );
    let out = env.fastsum("fastsum", &[b"-a", b"xxh128", b"-c", b"L"], b"");
    assert_eq!((out.status, out.stderr_str()), (0, String::new()));
}

/// 16 digits (XXH64, XXH3), 40 (SHA-1, BLAKE2b-160), 64 (SHA-256,
/// BLAKE3, BLAKE2b-256) and 128 (SHA-512, BLAKE2b): each list reads as the
/// tool that wrote it (these asked for -a, or failed every line).
#[test]
fn lists_of_every_shared_length_find_their_algorithm() {
    if testenv::lacks(&[
        "xxhsum",
        "b2sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "b3sum",
    ]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let xxh3 = untagged(&written_by(&env, "xxhsum", &["-H3"]));
    for (list, digits, shown) in [
        (written_by(&env, "xxhsum", &["-H1"]), 16, "XXH64"),
        (xxh3, 16, "XXH3"),
        (written_by(&env, "sha1sum", &[]), 40, "SHA1"),
        (written_by(&env, "b2sum", &["-l", "160"]), 40, "BLAKE2b-160"),
        (written_by(&env, "sha256sum", &[]), 64, "SHA256"),
        (written_by(&env, "b3sum", &[]), 64, "BLAKE3"),
        (written_by(&env, "b2sum", &["-l", "256"]), 64, "BLAKE2b-256"),
        (written_by(&env, "sha512sum", &[]), 128, "SHA512"),
        (written_by(&env, "b2sum", &[]), 128, "BLAKE2b"),
    ] {
        reads_as(&env, &list, &note(digits, shown));
    }
}

/// A list whose every digest is wrong under every candidate: one message
/// naming the list, the probed file and the candidates, asking for -a;
/// no FAILED line, exit 1. No listed file readable: the run's reading
/// (MD5), each file missing as before.
#[test]
fn a_list_no_candidate_matches_asks_for_a_without_a_wall_of_failed() {
    if testenv::lacks(&["xxhsum"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let list = String::from_utf8(written_by(&env, "xxhsum", &["-H2"])).unwrap();
    let wrong: String = list
        .lines()
        .map(|l| format!("{}{}\n", "0".repeat(32), &l[32..]))
        .collect();
    env.file(b"L", wrong.as_bytes());
    let out = env.fastsum("fastsum", &[b"-c", b"L"], b"");
    assert_eq!(
        (out.status, out.stdout_str(), out.stderr_str()),
        (
            1,
            String::new(),
            "fastsum: L: untagged 32-digit digests, but none of the 3 smallest listed files \
             (t/small first) matches its line under md5, xxh128 or blake2b -l 128: \
             give -a to check every file as one of them\n"
                .to_string()
        )
    );
    // One changed file (the smallest) is a FAILED line: the next tells
    // the list's algorithm.
    let mut one_changed = list.clone();
    one_changed.replace_range(
        one_changed.find("t/small").unwrap() - 34..one_changed.find("t/small").unwrap() - 2,
        &"0".repeat(32),
    );
    env.file(b"L", one_changed.as_bytes());
    let out = env.fastsum("fastsum", &[b"-c", b"L"], b"");
    assert_eq!(
        (out.status, out.stdout_str()),
        (1, "t/big: OK\nt/middle: OK\nt/small: FAILED\n".to_string()),
        "{}",
        out.stderr_str()
    );
    env.file(b"L", wrong.as_bytes());
    // The name is escaped as every name fastsum prints.
    env.file(b"t/a\nb", b"");
    env.file(b"N", format!("\\{}  t/a\\nb\n", "0".repeat(32)).as_bytes());
    let out = env.fastsum("fastsum", &[b"-c", b"N"], b"");
    assert_eq!(out.status, 1);
    assert!(
        out.stderr_str()
            .contains("the smallest listed file, 't/a'$'\\n''b', matches its line"),
        "{}",
        out.stderr_str()
    );
    // Nothing readable: MD5, each file missing, as before.
    std::fs::remove_dir_all(env.path().join("t")).unwrap();
    let out = env.fastsum("fastsum", &[b"-c", b"L"], b"");
    assert_eq!(out.status, 1);
    assert!(out.stdout_str().ends_with("t/small: FAILED open or read\n"));
    assert!(
        !out.stderr_str().contains("untagged"),
        "{}",
        out.stderr_str()
    );
}

/// A list named for its algorithm reads as it, with no probe (a name
/// that says MD5 is MD5 whatever matches); `--update` takes the name too.
#[test]
fn a_list_named_for_its_algorithm_reads_as_named() {
    if testenv::lacks(&["xxhsum", "b3sum"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let xxh128 = written_by(&env, "xxhsum", &["-H2"]);
    let b3 = written_by(&env, "b3sum", &[]);
    for (name, list) in [
        (&b"XXH128SUMS"[..], &xxh128),
        (b"xxh128sums.txt", &xxh128),
        (b"x.xxh128", &xxh128),
        (b"x.b3", &b3),
    ] {
        env.file(name, list);
        let out = env.fastsum("fastsum", &[b"-c", name], b"");
        assert_eq!(
            (out.status, out.stderr_str()),
            (0, String::new()),
            "{}",
            String::from_utf8_lossy(name)
        );
    }
    env.file(b"x.md5", &xxh128);
    let out = env.fastsum("fastsum", &[b"-c", b"x.md5"], b"");
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stdout_str(),
        "t/big: FAILED\nt/middle: FAILED\nt/small: FAILED\n"
    );
    let out = env.fastsum("fastsum", &[b"-r", b"--update=XXH128SUMS", b"t"], b"");
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(
        std::fs::read(env.path().join("XXH128SUMS")).unwrap(),
        xxh128
    );
}

/// md5sum, sha256sum and xxhsum, as fastsum's personalities, read an
/// untagged list as the tools do, byte for byte: no guess (a guard: they
/// never guessed).
#[test]
fn the_personalities_keep_the_tools_reading() {
    if testenv::lacks(&["xxhsum", "md5sum", "sha256sum", "b3sum"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    env.file(b"xxh128", &written_by(&env, "xxhsum", &["-H2"]));
    env.file(b"md5", &written_by(&env, "md5sum", &[]));
    env.file(b"b3", &written_by(&env, "b3sum", &[]));
    let out = env.assert_same("md5sum", &[b"-c", b"xxh128"], b"");
    assert_eq!(out.status, 1);
    assert!(out.stdout_str().contains("t/small: FAILED\n"));
    env.assert_same("sha256sum", &[b"-c", b"b3"], b"");
    env.assert_same("xxhsum", &[b"-c", b"md5"], b"");
}
