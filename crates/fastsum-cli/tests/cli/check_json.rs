//! `fastsum -c --json`, one record per checked line and
//! one per list, against the text mode's verdicts on the same list (read
//! back with Python's json module, an independent parser).

use crate::testenv;

use testenv::TestEnv;

/// Verdicts of the text mode: (name, status) from `NAME: STATUS` lines
/// (names here hold no newline or backslash, so are printed as they are).
fn text_verdicts(out: &str) -> Vec<(String, String)> {
    out.lines()
        .map(|l| {
            let (name, status) = l.rsplit_once(": ").expect("NAME: STATUS");
            let status = match status {
                "OK" => "ok",
                "FAILED" => "failed",
                "FAILED open or read" => "unreadable",
                other => panic!("unknown status {other}"),
            };
            (name.to_string(), status.to_string())
        })
        .collect()
}

/// The JSON records read by Python: (path, status) per verdict, and the
/// list records as they are.
fn json_verdicts(out: &[u8]) -> (Vec<(String, String)>, Vec<String>) {
    let parsed = testenv::python(
        r#"
import json, sys, base64
for line in sys.stdin.buffer.read().splitlines():
    r = json.loads(line)
    if "summary" in r or r.get("status") == "misformatted":
        print("LIST", json.dumps(r, sort_keys=True))
    else:
        assert set(r) <= {"path", "path_base64", "algorithm", "expected", "actual", "status", "error"}, r
        assert ("actual" in r) == (r["status"] in ("ok", "failed")), r
        assert (r["status"] == "ok") == (r.get("actual") == r["expected"]), r
        print(r["path"] + "\t" + r["status"])
"#,
        out,
    );
    let mut verdicts = Vec::new();
    let mut lists = Vec::new();
    for line in parsed.lines() {
        match line.strip_prefix("LIST ") {
            Some(list) => lists.push(list.to_string()),
            None => {
                let (path, status) = line.split_once('\t').expect("path and status");
                verdicts.push((path.to_string(), status.to_string()));
            }
        }
    }
    (verdicts, lists)
}

#[test]
fn check_json_says_what_the_text_mode_says() {
    let env = TestEnv::new();
    for name in ["same", "changed", "gone", "also same"] {
        env.file(name.as_bytes(), format!("{name}\n").as_bytes());
    }
    for algorithm in ["md5", "sha256", "blake3"] {
        let made = env.fastsum(
            "fastsum",
            &[
                b"-a",
                algorithm.as_bytes(),
                b"same",
                b"changed",
                b"gone",
                b"also same",
            ],
            b"",
        );
        let mut list = made.stdout.clone();
        list.extend_from_slice(b"not a checksum line\n");
        env.file(b"SUMS", &list);
        env.file(b"changed", b"now other bytes\n");
        std::fs::remove_file(env.path().join("gone")).expect("rm");
        let a: &[u8] = algorithm.as_bytes();
        let text = env.fastsum("fastsum", &[b"-a", a, b"-c", b"SUMS"], b"");
        let json = env.fastsum("fastsum", &[b"-a", a, b"-c", b"--json", b"SUMS"], b"");
        assert_eq!(json.status, text.status, "{algorithm}");
        assert_eq!(json.stderr, text.stderr, "{algorithm}: stderr is the same");
        let (verdicts, lists) = json_verdicts(&json.stdout);
        assert_eq!(verdicts, text_verdicts(&text.stdout_str()), "{algorithm}");
        assert_eq!(
            lists,
            [
                r#"{"line": 5, "list": "SUMS", "status": "misformatted"}"#,
                r#"{"list": "SUMS", "summary": {"failed": 1, "misformatted": 1, "missing": 0, "ok": 2, "unreadable": 1}}"#
            ],
            "{algorithm}"
        );
        // --ignore-missing: the text mode says nothing of it, JSON says
        // "missing"; --quiet does not thin the records; --status has none.
        let json = env.fastsum(
            "fastsum",
            &[
                b"-a",
                a,
                b"-c",
                b"--json",
                b"--ignore-missing",
                b"--quiet",
                b"SUMS",
            ],
            b"",
        );
        let (verdicts, _) = json_verdicts(&json.stdout);
        assert!(
            verdicts.contains(&("gone".into(), "missing".into())),
            "{verdicts:?}"
        );
        assert!(
            verdicts.contains(&("same".into(), "ok".into())),
            "{verdicts:?}"
        );
        let silent = env.fastsum(
            "fastsum",
            &[b"-a", a, b"-c", b"--json", b"--status", b"SUMS"],
            b"",
        );
        assert!(silent.stdout.is_empty());
        assert_eq!(silent.status, 1);
        env.file(b"changed", b"changed\n");
        env.file(b"gone", b"gone\n");
    }
}

#[test]
fn check_json_keeps_exact_names() {
    let env = TestEnv::new();
    env.file(b"caf\xe9", b"latin-1\n");
    let made = env.fastsum("fastsum", &[b"caf\xe9"], b"");
    env.file(b"SUMS", &made.stdout);
    let json = env.fastsum("fastsum", &[b"-c", b"--json", b"SUMS"], b"");
    assert_eq!(json.status, 0);
    assert!(
        json.stdout_str()
            .contains(r#""path":"caf\ufffd","path_base64":"Y2Fm6Q==""#)
            || json.stdout_str().contains("\"path_base64\":\"Y2Fm6Q==\""),
        "{}",
        json.stdout_str()
    );
}

/// A record whose member is given twice (`{"digest":GOOD,"digest":BAD}`)
/// reads as GOOD to a first-wins reader and as BAD to jq and Python: it is
/// refused as malformed, in either order, by `-c`, `diff` and `audit`,
/// never counted OK.
#[test]
fn a_record_with_a_member_given_twice_is_malformed_never_ok() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"hello\n");
    let out = env.fastsum("fastsum", &[b"-r", b"--json", b"t"], b"");
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let good = out.stdout_str();
    let digest = good
        .split("\"digest\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let bad: String = "0".repeat(digest.len());
    for (first, second) in [(&digest, &bad), (&bad, &digest)] {
        let twice = good.replacen(
            &format!("\"digest\":\"{digest}\""),
            &format!("\"digest\":\"{first}\",\"digest\":\"{second}\""),
            1,
        );
        assert_ne!(twice, good);
        env.file(b"L", twice.as_bytes());
        let out = env.fastsum("fastsum", &[b"-c", b"L"], b"");
        assert_ne!(out.status, 0, "-c: {}", out.stdout_str());
        assert!(!out.stdout_str().contains(": OK"), "{}", out.stdout_str());
        assert!(
            out.stderr_str().contains("given twice"),
            "{}",
            out.stderr_str()
        );
        for command in [&b"diff"[..], b"audit"] {
            let out = env.fastsum("fastsum", &[command, b"L", b"t"], b"");
            assert_eq!(
                out.status,
                2,
                "{}: {}",
                String::from_utf8_lossy(command),
                out.stderr_str()
            );
            assert!(
                out.stderr_str().contains("given twice"),
                "{}",
                out.stderr_str()
            );
        }
    }
}

/// A record that cannot be read or checked beside records that can fails
/// the check (helper-31's finding 4): passed over as an improperly
/// formatted line, its file went unchecked with exit 0 — a member given
/// twice, an empty digest, a digest fastsum does not compute beside a
/// wrong one it does. As a hashdeep file under a tiger column is refused.
#[test]
fn a_record_that_cannot_be_checked_fails_the_check_among_good_ones() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"a\n");
    env.file(b"t/b", b"bb\n");
    let out = env.fastsum(
        "fastsum",
        &[b"-r", b"--json", b"-a", b"md5", b"-a", b"sha256", b"t"],
        b"",
    );
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let list = out.stdout_str();
    let (first, second) = list.split_once('\n').unwrap();
    assert!(second.contains("\"t/b\""), "{list}");
    // Python's hashlib, not the code under test: t/b's digests.
    let sha = testenv::python(
        "import hashlib;print(hashlib.sha256(b'bb\\n').hexdigest(), end='')",
        b"",
    );
    assert!(second.contains(&sha), "{second}");
    let wrong = "0".repeat(64);
    let spoiled = [
        (
            "a sha256 given twice",
            second.replacen(&sha, &format!("{sha}\",\"sha256\":\"{wrong}"), 1),
            "given twice",
        ),
        ("an empty sha256", second.replacen(&sha, "", 1), "sha256"),
        (
            "a tiger beside a wrong sha256",
            second.replacen(
                &sha,
                &format!("{wrong}\",\"tiger\":\"{}", "0".repeat(48)),
                1,
            ),
            "\"tiger\" digest cannot be checked",
        ),
    ];
    for (what, record, said) in spoiled {
        assert_ne!(record, second, "{what}");
        env.file(b"L", format!("{first}\n{record}").as_bytes());
        let out = env.fastsum("fastsum", &[b"-c", b"L"], b"");
        assert_eq!(out.status, 1, "{what}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "t/a: OK\n", "{what}");
        assert!(
            out.stderr_str().contains(said),
            "{what}: {}",
            out.stderr_str()
        );
        assert!(
            !out.stderr_str().contains("improperly formatted"),
            "{what}: {}",
            out.stderr_str()
        );
    }
}
