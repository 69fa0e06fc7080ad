//! What a user meets first, against the real binary and the
//! reference tools.

use crate::testenv;

use testenv::TestEnv;

/// Every `-a` fastsum takes, as arguments.
const ALGORITHMS: [&[&str]; 15] = [
    &["md5"],
    &["sha1"],
    &["sha224"],
    &["sha256"],
    &["sha384"],
    &["sha512"],
    &["blake2b"],
    &["blake2b", "-l", "256"],
    &["blake3"],
    &["xxh32"],
    &["xxh64"],
    &["xxh3"],
    &["xxh128"],
    &["sha3-256"],
    &["sha3-512"],
];

fn args<'a>(algorithm: &[&'a str], rest: &[&'a str]) -> Vec<&'a [u8]> {
    let mut out: Vec<&[u8]> = vec![b"-a"];
    out.extend(algorithm.iter().map(|a| a.as_bytes()));
    out.extend(rest.iter().map(|a| a.as_bytes()));
    out
}

/// The README's `fastsum -a sha256 *.tar.gz > SUMS &&
/// fastsum -c SUMS` once failed for every algorithm but md5.
#[test]
fn every_manifest_fastsum_writes_verifies_with_a_plain_check() {
    let env = TestEnv::new();
    env.file(b"a.tar.gz", b"first archive");
    env.file(b"b.tar.gz", b"second archive");
    for algorithm in ALGORITHMS {
        let written = env.fastsum("fastsum", &args(algorithm, &["a.tar.gz", "b.tar.gz"]), b"");
        assert_eq!(written.status, 0, "{algorithm:?}: {}", written.stderr_str());
        env.file(b"SUMS", &written.stdout);
        let check = env.fastsum("fastsum", &[b"-c", b"SUMS"], b"");
        assert_eq!(
            (check.status, check.stdout_str(), check.stderr_str()),
            (0, "a.tar.gz: OK\nb.tar.gz: OK\n".to_string(), String::new()),
            "{algorithm:?} wrote {:?}",
            written.stdout_str()
        );
        env.file(b"b.tar.gz", b"second archive, changed");
        let check = env.fastsum("fastsum", &[b"-c", b"SUMS"], b"");
        assert_eq!(check.status, 1, "{algorithm:?}");
        assert!(
            check.stdout_str().contains("b.tar.gz: FAILED"),
            "{algorithm:?}"
        );
        env.file(b"b.tar.gz", b"second archive");
    }
}

/// The tagged lines are the reference tools' own `--tag` lines, byte for
/// byte, and `--untagged` gives their default lines.
#[test]
fn tagged_and_untagged_lines_are_the_reference_tools_lines() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "b2sum",
        "b3sum",
    ]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"f", b"some bytes\n");
    for (algorithm, tool, tool_args) in [
        (&["sha1"][..], "sha1sum", &[][..]),
        (&["sha256"], "sha256sum", &[]),
        (&["sha512"], "sha512sum", &[]),
        (&["blake2b"], "b2sum", &[]),
        (&["blake2b", "-l", "256"], "b2sum", &["-l", "256"]),
        (&["blake3"], "b3sum", &[]),
    ] {
        let tool_args: Vec<&[u8]> = tool_args.iter().map(|a| a.as_bytes()).collect();
        let mut tagged_args = tool_args.clone();
        tagged_args.extend([&b"--tag"[..], b"f"]);
        let mut plain_args = tool_args;
        plain_args.push(b"f");
        let ours = env.fastsum("fastsum", &args(algorithm, &["f"]), b"");
        let theirs = env.reference(tool, &tagged_args, b"");
        assert_eq!(ours.stdout_str(), theirs.stdout_str(), "{algorithm:?}");
        let ours = env.fastsum("fastsum", &args(algorithm, &["--untagged", "f"]), b"");
        let theirs = env.reference(tool, &plain_args, b"");
        assert_eq!(ours.stdout_str(), theirs.stdout_str(), "{algorithm:?}");
    }
    // md5, the default, stays md5sum's line.
    env.assert_same("md5sum", &[b"f"], b"");
    let ours = env.fastsum("fastsum", &[b"f"], b"");
    assert_eq!(ours.stdout, env.reference("md5sum", &[b"f"], b"").stdout);
}

/// When `-c` cannot tell the algorithm of untagged lines (no listed file
/// to probe), it says which `-a` to give.
#[test]
fn an_untagged_list_of_another_length_says_which_algorithm_to_give() {
    if crate::testenv::lacks(&["md5sum", "sha256sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"f", b"data");
    let list = env.reference("sha256sum", &[b"f"], b"");
    env.file(b"SUMS", &list.stdout);
    std::fs::rename(env.path().join("f"), env.path().join("f.away")).unwrap();
    let out = env.fastsum("fastsum", &[b"-c", b"SUMS"], b"");
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stderr_str(),
        "fastsum: SUMS: no properly formatted checksum lines found\n\
         fastsum: SUMS: its lines carry 64-digit digests with no algorithm tag: \
         give -a sha256, blake3, sm3, sha3-256 or blake2b -l 256\n"
    );
    std::fs::rename(env.path().join("f.away"), env.path().join("f")).unwrap();
    let out = env.fastsum("fastsum", &[b"-a", b"sha256", b"-c", b"SUMS"], b"");
    assert_eq!((out.status, out.stdout_str()), (0, "f: OK\n".to_string()));
    // The personalities keep coreutils' message, byte for byte.
    env.assert_same("md5sum", &[b"-c", b"SUMS"], b"");
}

/// MD5 and XXH128 are both 128 bits: an untagged 32-digit list is read
/// as the one its smallest file matches (xxhsum -H2's lists
/// were every file FAILED), and that reading is said, since a file forged
/// against XXH128 could choose it; `-a md5` checks it as MD5 whatever the
/// files say.
#[test]
fn untagged_128_bit_lines_are_md5_with_a_md5_and_said_when_read_otherwise() {
    if crate::testenv::lacks(&["xxhsum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"f", b"data");
    let list = env.reference("xxhsum", &[b"-H2", b"f"], b"");
    assert_eq!(
        list.stdout_str().split_whitespace().next().unwrap().len(),
        32
    );
    env.file(b"SUMS", &list.stdout);
    let out = env.fastsum("fastsum", &[b"-c", b"SUMS"], b"");
    assert_eq!(
        (out.status, out.stdout_str(), out.stderr_str()),
        (
            0,
            "f: OK\n".to_string(),
            "fastsum: SUMS: untagged 32-digit digests read as XXH128 (the smallest listed file matched)\n"
                .to_string()
        )
    );
    let out = env.fastsum("fastsum", &[b"-a", b"md5", b"-c", b"SUMS"], b"");
    assert_eq!(
        (out.status, out.stdout_str()),
        (1, "f: FAILED\n".to_string())
    );
}

/// `fastsum -r` with no operand once waited on standard input; it walks
/// the working directory.
#[test]
fn recursive_with_no_operand_walks_the_working_directory() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("d/e");
    env.file(b"d/one", b"1");
    env.file(b"d/e/two", b"2");
    let bare = env.fastsum_within(std::time::Duration::from_secs(20), &[b"-r"]);
    let dot = env.fastsum("fastsum", &[b"-r", b"."], b"");
    assert_eq!(bare.status, 0, "{}", bare.stderr_str());
    assert_eq!(bare.stdout_str(), dot.stdout_str());
    let expected = std::process::Command::new("sh")
        .arg("-c")
        .arg("find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum")
        .current_dir(env.path())
        .output()
        .unwrap();
    assert_eq!(bare.stdout, expected.stdout);
    // `-` still means standard input.
    let stdin = env.fastsum("fastsum", &[b"-r", b"-"], b"piped");
    assert_eq!(
        stdin.stdout_str(),
        format!("{}  -\n", testenv::reference_hex("md5sum", b"piped"))
    );
}

/// Reads `pipe` on a thread, handing on each chunk as it comes.
fn chunks(mut pipe: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = pipe.read(&mut buffer) {
            if tx.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits (up to 20 s) until what `rx` has delivered contains `needle`.
fn wait_for(rx: &std::sync::mpsc::Receiver<Vec<u8>>, seen: &mut Vec<u8>, needle: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !String::from_utf8_lossy(seen).contains(needle) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => seen.extend(chunk),
            Err(_) => return false,
        }
    }
    true
}

/// Output streams. A file's line reaches a pipe while the
/// next operand (standard input, held open here) is still being read, as
/// md5sum's does; before, it came only when the whole run was done.
#[test]
fn a_line_reaches_a_pipe_before_the_next_operand_is_read() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    use std::io::Write;
    let env = TestEnv::new();
    env.file(b"a", b"first file");
    let mut child = env
        .command("fastsum")
        .args(["a", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let rx = chunks(child.stdout.take().unwrap());
    let first = format!("{}  a\n", testenv::reference_hex("md5sum", b"first file"));
    let mut seen = Vec::new();
    let streamed = wait_for(&rx, &mut seen, &first);
    stdin.write_all(b"then stdin").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    while let Ok(chunk) = rx.recv_timeout(std::time::Duration::from_secs(5)) {
        seen.extend(chunk);
    }
    assert!(
        streamed,
        "a's line was held back: {:?}",
        String::from_utf8_lossy(&seen)
    );
    assert!(status.success());
    assert_eq!(
        String::from_utf8_lossy(&seen),
        format!(
            "{first}{}  -\n",
            testenv::reference_hex("md5sum", b"then stdin")
        )
    );
}

/// The same on a terminal (a pseudo-terminal through `script`), with the
/// progress bar on.
#[test]
fn a_line_reaches_a_terminal_before_the_next_operand_is_read() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    use std::io::Write;
    let env = TestEnv::new();
    env.file(b"a", b"first file");
    let fifo = env.path().join("later");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let command = format!("{} a - < later", crate::testenv::fastsum_bin());
    let mut terminal = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .current_dir(env.path())
        .env("TERM", "xterm")
        .env("COLUMNS", "100")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs fastsum on a pseudo-terminal");
    // Opening the FIFO lets the shell start fastsum; nothing is written
    // to it until a's line has been seen (or 20 s have passed).
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let rx = chunks(terminal.stdout.take().unwrap());
    let hex = testenv::reference_hex("md5sum", b"first file");
    let mut seen = Vec::new();
    let streamed = wait_for(&rx, &mut seen, &format!("{hex}  a"));
    writer.write_all(b"then the fifo").unwrap();
    drop(writer);
    let status = terminal.wait().unwrap();
    while let Ok(chunk) = rx.recv_timeout(std::time::Duration::from_secs(5)) {
        seen.extend(chunk);
    }
    let screen = String::from_utf8_lossy(&seen);
    assert!(streamed, "a's line was held back: {screen:?}");
    assert!(status.success(), "{screen:?}");
    let last = testenv::reference_hex("md5sum", b"then the fifo");
    assert!(screen.contains(&format!("{last}  -")), "{screen:?}");
}

/// Symbolic links a walk leaves out are counted on stderr
/// (with the hint) and listed as skipped in --json; -L follows them.
#[test]
fn symlinks_left_out_of_a_walk_are_said_not_dropped_silently() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/f", b"file");
    std::os::unix::fs::symlink("f", env.path().join("t/link")).unwrap();
    let out = env.fastsum("fastsum", &[b"-r", b"t"], b"");
    assert_eq!(out.status, 0, "a link left out is not a failure");
    assert_eq!(
        out.stdout_str(),
        format!("{}  t/f\n", testenv::reference_hex("md5sum", b"file"))
    );
    assert_eq!(
        out.stderr_str(),
        "fastsum: 1 symbolic link left out (-L follows them)\n"
    );
    let json = env.fastsum("fastsum", &[b"-r", b"--json", b"t"], b"");
    assert!(
        json.stdout_str().contains(
            "{\"path\":\"t/link\",\"algorithm\":\"md5\",\"skipped\":\"symbolic link\"}\n"
        ),
        "{}",
        json.stdout_str()
    );
    let followed = env.fastsum("fastsum", &[b"-r", b"-L", b"t"], b"");
    assert_eq!(followed.stderr_str(), "");
    assert_eq!(followed.stdout_str().lines().count(), 2);
}

/// The cache options say when they cannot do what was meant.
#[test]
fn cache_options_never_do_nothing_silently() {
    let env = TestEnv::new();
    env.file(b"f", b"bytes");
    // --cache-stats without --cache did nothing: now a usage error.
    let out = env.fastsum("fastsum", &[b"--cache-stats", b"f"], b"");
    assert_eq!(out.status, 2);
    assert!(out
        .stderr_str()
        .starts_with("fastsum: the --cache-stats option is meaningful only with --cache\n"));
    assert_eq!(out.stdout_str(), "");
    // `--cache x.sqlite` hashes x.sqlite: a warning says how to mean it.
    let out = env
        .command("fastsum")
        .env("XDG_CACHE_HOME", env.path().join("xdg"))
        .args(["--cache", "mine.sqlite", "f"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: ‘mine.sqlite’ is hashed as a file; to use it as the cache, write --cache=PATH"),
        "{err}"
    );
    // Reading or tidying a cache that does not exist says so, creates
    // nothing and fails.
    for action in ["stats", "prune", "clear"] {
        let out = env
            .command("fastsum")
            .args(["cache", "--cache", "typo/x.sqlite", action])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{action}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "fastsum cache: typo/x.sqlite: no cache there (one is made by a run with --cache)\n"
        );
        assert!(!env.path().join("typo").exists(), "{action} created it");
    }
}

/// "1 entries", "1 misses" no more.
#[test]
fn counts_agree_with_their_nouns() {
    let env = TestEnv::new();
    env.file(b"f", b"bytes");
    let out = env.fastsum(
        "fastsum",
        &[b"--cache=c.sqlite", b"--cache-stats", b"f"],
        b"",
    );
    assert_eq!(
        out.stderr_str(),
        "fastsum: cache: 0 hits, 1 miss, 0 racy re-reads, 5 bytes read; 1 file too recent to \
         keep (changed less than 2 s before the run; kept once unchanged that long)\n"
    );
    std::fs::remove_file(env.path().join("f")).unwrap();
    let out = env
        .command("fastsum")
        .args(["cache", "--cache", "c.sqlite", "prune"])
        .output()
        .unwrap();
    let pruned = String::from_utf8_lossy(&out.stdout);
    // The entry was racy (just written) and so never stored: 0 entries.
    assert_eq!(pruned, "pruned 0 entries\n");
}

/// Every record is the documented JSON (docs/JSON.md, schema
/// 1), read back by Python's json module, not by fastsum.
#[test]
fn json_records_are_the_documented_schema() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"alpha");
    env.file(b"t/caf\xe9", b"latin-1 name");
    std::os::unix::fs::symlink("a", env.path().join("t/link")).unwrap();
    env.mkdir("t/closed");
    env.file(b"t/closed/x", b"x");
    let records = env.fastsum(
        "fastsum",
        &[
            b"-r", b"--json", b"-a", b"blake2b", b"-l", b"256", b"t", b"gone",
        ],
        b"",
    );
    let checked = testenv::python(
        r#"
import json, sys, base64
allowed = {"path", "path_base64", "algorithm", "digest", "size", "error", "skipped"}
for line in sys.stdin.buffer.read().split(b"\n")[:-1]:
    r = json.loads(line)
    assert set(r) <= allowed, r
    assert sum(k in r for k in ("digest", "error", "skipped")) == 1, r
    assert r["algorithm"] == "blake2b-256", r
    if "digest" in r:
        assert len(r["digest"]) == 64 and isinstance(r["size"], int), r
    name = base64.b64decode(r["path_base64"]) if "path_base64" in r else r["path"].encode()
    print(name.decode("latin-1"), next(k for k in ("digest", "error", "skipped") if k in r), r.get("skipped", ""))
"#,
        &records.stdout,
    );
    assert_eq!(
        checked,
        "t/a digest \nt/café digest \nt/closed/x digest \nt/link skipped symbolic link\ngone error \n"
    );
    let version = env.fastsum("fastsum", &[b"--version"], b"");
    assert!(version.stdout_str().contains("JSON output schema 1"));
    let bench = env
        .command("fastsum")
        .args([
            "bench",
            "--json",
            "--iterations",
            "1",
            "--strategy",
            "fastsum",
            "t/a",
        ])
        .output()
        .unwrap();
    let schema = testenv::python(
        "import json,sys\nfor l in sys.stdin: print(json.loads(l)['schema'])",
        &bench.stdout,
    );
    assert_eq!(schema, "1\n");
}

#[test]
fn option_values_and_a_full_stdout_never_panic() {
    // These once panicked (exit 101, 134) or exited 0 silently.
    let env = TestEnv::new();
    env.file(b"a", b"abc");
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        &["man"][..],
        &["completions", "bash"],
        &["completions", "zsh"],
        &["bench", "--iterations", "1", "a"],
        &["diff", "--help"],
        &["dupes", "--help"],
        &["cache", "--help"],
        &["bench", "--help"],
        &["--help"],
        &["a"],
    ] {
        let out = env
            .command("fastsum")
            .args(args)
            .stdout(full())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {said}");
        assert!(
            said.contains("write error: No space left on device"),
            "{args:?}: {said}"
        );
        assert!(!said.contains("panicked"), "{args:?}: {said}");
    }
    for (args, says) in [
        (&["-j", "20000", "a"][..], "number of threads (0 to 1024)"),
        (
            &["--read-size=99999999999", "--io=read", "a"],
            "read size (1 to 256M)",
        ),
        (&["dupes", "-j", "20000", "."], "0..=1024"),
        (&["diff", "-j", "20000", "a", "a"], "0..=1024"),
    ] {
        let out = env.command("fastsum").args(args).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {said}");
        assert!(
            said.contains(says) && !said.contains("panicked"),
            "{args:?}: {said}"
        );
    }
}

#[test]
fn install_links_never_replaces_a_program_that_is_not_fastsum() {
    // `ln -sf` once replaced a cargo-installed b3sum by a link.
    let env = TestEnv::new();
    let bin = env.mkdir("bin");
    std::os::unix::fs::symlink(crate::testenv::fastsum_bin(), bin.join("fastsum")).unwrap();
    std::fs::write(bin.join("b3sum"), b"#!/bin/sh\necho a real b3sum\n").unwrap();
    std::os::unix::fs::symlink("/bin/true", bin.join("md5sum")).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/install-links");
    let run = |args: &[&str]| {
        std::process::Command::new("bash")
            .arg(script)
            .args(args)
            .arg(&bin)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("skipped") && said.contains("b3sum") && said.contains("md5sum"),
        "{said}"
    );
    assert_eq!(
        std::fs::read(bin.join("b3sum")).unwrap(),
        b"#!/bin/sh\necho a real b3sum\n"
    );
    assert_eq!(
        std::fs::read_link(bin.join("md5sum")).unwrap(),
        std::path::Path::new("/bin/true")
    );
    let fastsum = std::fs::canonicalize(crate::testenv::fastsum_bin()).unwrap();
    assert_eq!(
        std::fs::canonicalize(bin.join("sha256sum")).unwrap(),
        fastsum
    );
    // Again: nothing to do, nothing skipped that is fastsum's.
    let again = run(&[]);
    assert!(!String::from_utf8_lossy(&again.stdout).contains("sha256sum"));
    // --force replaces them.
    let forced = run(&["--force"]);
    assert!(forced.status.success());
    assert_eq!(std::fs::canonicalize(bin.join("b3sum")).unwrap(), fastsum);
}

/// A FIFO operand waits for its writer, as md5sum's does, but
/// the lines before it are out first (`timeout 3 fastsum -r dir fifo ok`
/// wrote nothing); then it is read whole.
#[test]
fn the_lines_before_a_fifo_operand_are_out_while_it_waits() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    use std::io::Write;
    let env = TestEnv::new();
    env.mkdir("dir");
    env.file(b"dir/f", b"before the fifo");
    env.file(b"ok.txt", b"after the fifo");
    let fifo = env.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for args in [
        &["-r", "dir", "fifo", "ok.txt"][..],
        &["dir/f", "fifo", "ok.txt"],
    ] {
        let mut child = env
            .command("fastsum")
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let rx = chunks(child.stdout.take().unwrap());
        let first = format!(
            "{}  dir/f\n",
            testenv::reference_hex("md5sum", b"before the fifo")
        );
        let mut seen = Vec::new();
        let streamed = wait_for(&rx, &mut seen, &first);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&fifo)
            .and_then(|mut w| w.write_all(b"through the fifo"))
            .unwrap();
        let status = child.wait().unwrap();
        while let Ok(chunk) = rx.recv_timeout(std::time::Duration::from_secs(5)) {
            seen.extend(chunk);
        }
        assert!(
            streamed,
            "{args:?}: dir/f's line was held: {:?}",
            String::from_utf8_lossy(&seen)
        );
        assert!(status.success());
        assert_eq!(
            String::from_utf8_lossy(&seen),
            format!(
                "{first}{}  fifo\n{}  ok.txt\n",
                testenv::reference_hex("md5sum", b"through the fifo"),
                testenv::reference_hex("md5sum", b"after the fifo")
            ),
            "{args:?}"
        );
    }
}

#[test]
fn a_check_line_with_a_huge_name_costs_a_small_multiple_of_it() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    // A 100 MB name in a check list once cost 1.86 GB (19x; GNU
    // md5sum 2x): gnulib's quoting was ported with 16 bytes a byte. Under
    // a 250 MB address-space limit a 20 MB name must still be answered, as
    // md5sum answers it.
    let env = TestEnv::new();
    let mut list = b"900150983cd24fb0d6963f7d28e17f72  ".to_vec();
    list.resize(list.len() + 20_000_000, b'a');
    list.push(b'\n');
    env.file(b"list", &list);
    let limited = |program: &str| {
        std::process::Command::new("sh")
            .args(["-c", "ulimit -v 250000; exec \"$0\" -c list", program])
            .current_dir(env.path())
            .env("LC_ALL", "C.UTF-8")
            .output()
            .unwrap()
    };
    let dir = env.mkdir("bin");
    std::os::unix::fs::symlink(crate::testenv::fastsum_bin(), dir.join("md5sum")).unwrap();
    let ours = limited(dir.join("md5sum").to_str().unwrap());
    let theirs = limited(&testenv::reference_path("md5sum").display().to_string());
    assert_eq!(
        ours.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&ours.stderr[ours.stderr.len().saturating_sub(300)..])
    );
    assert_eq!(ours.stdout, theirs.stdout);
    let unnamed =
        |err: &[u8], program: &str| String::from_utf8_lossy(err).replace(program, "PROGRAM");
    let ours_err = unnamed(&ours.stderr, dir.join("md5sum").to_str().unwrap());
    let theirs_path = testenv::reference_path("md5sum").display().to_string();
    let theirs_err = unnamed(&theirs.stderr, &theirs_path);
    assert!(ours_err == theirs_err, "the messages differ");
}
