//! Lists that say two things at once, found by a hostile pass given only
//! the docs: each had a wrong answer with exit 0.
//! - Two lists of two formats joined (`cat x.sfv MD5SUMS`): `-c` read
//!   the list as its first entry's format and passed the other lines over
//!   as improperly formatted, so a changed file listed there went
//!   unchecked (md5sum -c fails it).
//! - One file given two digests under two spellings (`one`, `./one`):
//!   `contained` believed one, where the same list spelt alike is refused.
//! - A record of the right digest and a wrong size: `-c` and `diff` fail
//!   it, `--update` rewrote it and said "unchanged".
//!
//! Expected digests come from Python's hashlib and zlib.

use crate::testenv::{self, Outcome, TestEnv};

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// `hashlib.NAME(bytes).hexdigest()`, or zlib's CRC-32 for `crc32`.
fn python_hex(name: &str, bytes: &[u8]) -> String {
    let script = match name {
        "crc32" => {
            "import sys, zlib\nprint('%08x' % zlib.crc32(sys.stdin.buffer.read()))\n".to_string()
        }
        _ => format!(
            "import sys, hashlib\nprint(hashlib.{name}(sys.stdin.buffer.read()).hexdigest())\n"
        ),
    };
    testenv::python(&script, bytes).trim().to_string()
}

fn tree(env: &TestEnv) {
    env.mkdir("s");
    env.file(b"s/one", b"one\n");
    env.file(b"s/two", b"two\n");
}

#[test]
fn check_fails_a_checksum_line_joined_to_a_list_of_another_format() {
    if testenv::lacks(&["python3"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let md5_two = python_hex("md5", b"two\n");
    let crc_one = python_hex("crc32", b"one\n");
    let json_one = fastsum(&env, &["--json", "s/one"]);
    assert_eq!(json_one.status, 0, "{}", json_one.stderr_str());
    let joined = [
        ("sfv", format!("s/one {crc_one}\n{md5_two}  s/two\n")),
        (
            "json",
            format!("{}{md5_two}  s/two\n", json_one.stdout_str()),
        ),
        (
            "json, a tagged line",
            format!("{}MD5 (s/two) = {md5_two}\n", json_one.stdout_str()),
        ),
    ];
    for (what, list) in &joined {
        env.file(b"list", list.as_bytes());
        // Intact or changed, the joined line is never passed over: the
        // check fails and says why.
        for two in [&b"two\n"[..], b"TWO\n"] {
            env.file(b"s/two", two);
            let out = fastsum(&env, &["-c", "list"]);
            assert_ne!(out.status, 0, "{what}: {}", out.stdout_str());
            assert!(
                out.stdout_str().contains("s/one: OK"),
                "{what}: {}",
                out.stdout_str()
            );
            assert!(
                out.stderr_str()
                    .contains("lists of two formats joined are not read as one"),
                "{what}: {}",
                out.stderr_str()
            );
        }
    }
    // A list of one format still passes.
    env.file(b"s/two", b"two\n");
    env.file(
        b"list",
        format!("s/one {crc_one}\ns/two {}\n", python_hex("crc32", b"two\n")).as_bytes(),
    );
    let sfv = fastsum(&env, &["-c", "list"]);
    assert_eq!(sfv.status, 0, "{}", sfv.stderr_str());
}

#[test]
fn contained_refuses_a_file_given_two_digests_under_two_spellings() {
    if testenv::lacks(&["python3"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let (one, two) = (
        python_hex("sha256", b"one\n"),
        python_hex("sha256", b"two\n"),
    );
    let wrong = "0".repeat(64);
    for spelling in ["./one", "././one", ".//one"] {
        let list =
            format!("SHA256 ({spelling}) = {wrong}\nSHA256 (one) = {one}\nSHA256 (two) = {two}\n");
        env.file(b"list", list.as_bytes());
        let out = fastsum(&env, &["contained", "s", "--in", "list"]);
        assert_eq!(
            out.status,
            2,
            "{spelling}: {}{}",
            out.stdout_str(),
            out.stderr_str()
        );
        assert!(
            out.stderr_str()
                .contains("is listed with two digests: neither is believed"),
            "{spelling}: {}",
            out.stderr_str()
        );
        assert!(
            out.stdout_str().contains("s/one"),
            "{spelling}: one is not contained: {}",
            out.stdout_str()
        );
    }
}

#[test]
fn update_says_a_record_of_a_wrong_size_modified() {
    let env = TestEnv::new();
    tree(&env);
    let made = fastsum(&env, &["-r", "--json", "s"]);
    assert_eq!(made.status, 0, "{}", made.stderr_str());
    let text = made.stdout_str();
    assert!(text.contains("\"size\":4"), "{text}");
    // s/two's record: its digest right, its size one byte more.
    let wrong: String = text
        .lines()
        .map(|l| match l.contains("s/two") {
            true => l.replace("\"size\":4", "\"size\":5"),
            false => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect();
    env.file(b"list", wrong.as_bytes());
    let check = fastsum(&env, &["-c", "list"]);
    assert_eq!(check.status, 1, "{}", check.stdout_str());
    let update = fastsum(&env, &["-r", "--update=list", "s"]);
    assert_eq!(update.status, 0, "{}", update.stderr_str());
    assert_eq!(update.stdout_str(), "M\ts/two\n");
    assert!(
        update
            .stderr_str()
            .contains("0 added, 0 removed, 1 modified, 1 unchanged"),
        "{}",
        update.stderr_str()
    );
    let again = fastsum(&env, &["-c", "list"]);
    assert_eq!(again.status, 0, "{}", again.stdout_str());
}
