//! `--update` of every list fastsum writes with several
//! digests a file: several `-a` as tagged lines, `--json` records with
//! `"digests"` (with `--stamps` too), hashdeep's columns. Each must keep
//! every digest: byte-identical when nothing changed, what a fresh run
//! writes after edits; a list whose files do not all have the same
//! algorithms in the same order is refused, untouched. The expected lists
//! come from Python's hashlib (and hashdeep's own audit, where installed),
//! never from fastsum.

use crate::testenv::{self, Outcome, TestEnv};

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// Python's list of the tree `t` (every file, in byte order of its path)
/// in `form`: `tagged` (BSD lines, GNU's escapes), `json` or `hashdeep`
/// (the lines after the header), each file's digests in `algorithms`'
/// order.
fn python_list(env: &TestEnv, form: &str, algorithms: &[&str]) -> Vec<u8> {
    let script = format!(
        "import hashlib, json, os, sys\n\
         os.chdir(sys.stdin.read())\n\
         algos = {algorithms:?}\n\
         names = []\n\
         for d, _, fs in os.walk(b't'):\n    names += [os.path.join(d, f) for f in fs]\n\
         out = sys.stdout.buffer\n\
         for n in sorted(names):\n    \
             data = open(n, 'rb').read()\n    \
             hexes = [hashlib.new(a, data).hexdigest() for a in algos]\n    \
             if {form:?} == 'tagged':\n        \
                 esc = b'\\\\' in n or b'\\n' in n\n        \
                 shown = n.replace(b'\\\\', b'\\\\\\\\').replace(b'\\n', b'\\\\n')\n        \
                 for a, h in zip(algos, hexes):\n            \
                     out.write((b'\\\\' if esc else b'') + a.upper().encode() + b' (' + shown + b') = ' + h.encode() + b'\\n')\n    \
             elif {form:?} == 'json':\n        \
                 d = ','.join('\"%s\":\"%s\"' % p for p in zip(algos, hexes))\n        \
                 out.write(('{{\"path\":%s,\"digests\":{{%s}},\"size\":%d}}\\n' % (json.dumps(n.decode(), ensure_ascii=False), d, len(data))).encode())\n    \
             else:\n        \
                 out.write(b','.join([str(len(data)).encode()] + [h.encode() for h in hexes] + [n]) + b'\\n')\n"
    );
    let dir = env.path().to_str().expect("a UTF-8 test path");
    testenv::python(&script, dir.as_bytes()).into_bytes()
}

/// A tree whose first file (in path order) has a backslash and, where
/// the format can hold one, a newline in its name.
fn tree(env: &TestEnv, newline: bool) {
    env.mkdir("t/sub");
    let first: &[u8] = match newline {
        true => b"t/0\\first\nline",
        false => b"t/0\\first,comma",
    };
    env.file(first, b"one\n");
    env.file(b"t/b", b"two\n");
    env.file(b"t/c", b"three\n");
    env.file(b"t/sub/d", b"four\n");
}

/// The edits after which an update must equal a fresh run: one file
/// changed, one added, one removed.
fn edit(env: &TestEnv) {
    let p = env.path();
    std::fs::write(p.join("t/b"), b"TWO\n").unwrap();
    std::fs::write(p.join("t/sub/new"), b"new\n").unwrap();
    std::fs::remove_file(p.join("t/c")).unwrap();
}

/// The list `L` as it is now.
fn listed(env: &TestEnv) -> Vec<u8> {
    std::fs::read(env.path().join("L")).unwrap()
}

/// The header of a hashdeep list and its lines.
fn split_header(list: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut at = 0;
    for line in list.split_inclusive(|&b| b == b'\n') {
        if !(line.starts_with(b"%%%%") || line.starts_with(b"##")) {
            break;
        }
        at += line.len();
    }
    (list[..at].to_vec(), list[at..].to_vec())
}

#[test]
fn lists_of_several_digests_a_file_are_updated_with_every_digest() {
    let forms: [(&str, &[&str], &[&str]); 3] = [
        ("tagged", &["md5", "sha256"], &[]),
        ("json", &["sha1", "md5"], &["--json"]),
        ("hashdeep", &["md5", "sha256"], &["--format=hashdeep"]),
    ];
    for (form, algorithms, options) in forms {
        let env = TestEnv::new();
        tree(&env, form != "hashdeep");
        let mut write = vec!["-r"];
        write.extend(options);
        for a in algorithms {
            write.extend(["-a", a]);
        }
        write.push("t");
        let made = fastsum(&env, &write);
        assert_eq!(made.status, 0, "{form}: {}", made.stderr_str());
        let (header, body) = match form {
            "hashdeep" => split_header(&made.stdout),
            _ => (Vec::new(), made.stdout.clone()),
        };
        let reference = python_list(&env, form, algorithms);
        assert_eq!(
            String::from_utf8_lossy(&body),
            String::from_utf8_lossy(&reference),
            "{form}: the list is not Python's"
        );
        assert!(
            body.starts_with(b"\\") || form != "tagged",
            "{form}: first name not escaped"
        );
        env.file(b"L", &made.stdout);
        let update = ["-r", "--update=L", "t"];
        let out = fastsum(&env, &update);
        assert_eq!(out.status, 0, "{form}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "", "{form}");
        assert_eq!(
            listed(&env),
            made.stdout,
            "{form}: an unchanged tree changed it"
        );
        edit(&env);
        let out = fastsum(&env, &update);
        assert_eq!(out.status, 0, "{form}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "M\tt/b\nD\tt/c\nA\tt/sub/new\n", "{form}");
        assert!(
            out.stderr_str()
                .contains("L: updated: 1 added, 1 removed, 1 modified, 2 unchanged"),
            "{form}: {}",
            out.stderr_str()
        );
        // Python's list of the edited tree, and a fresh run's (hashdeep's
        // header kept as it was: its `## $` line is the command's).
        let now = [header.clone(), python_list(&env, form, algorithms)].concat();
        assert_eq!(
            String::from_utf8_lossy(&listed(&env)),
            String::from_utf8_lossy(&now),
            "{form}: not Python's list of the edited tree"
        );
        let fresh = fastsum(&env, &write);
        let fresh = match form {
            "hashdeep" => [header.clone(), split_header(&fresh.stdout).1].concat(),
            _ => fresh.stdout,
        };
        assert_eq!(listed(&env), fresh, "{form}: not a fresh run's list");
        let check = fastsum(&env, &["-c", "L"]);
        assert_eq!(check.status, 0, "{form}: {}", check.stderr_str());
        if form == "hashdeep" {
            hashdeep_audits(&env);
        }
    }
}

/// hashdeep itself, where installed, finds the updated list matches the
/// tree (every file, every column).
fn hashdeep_audits(env: &TestEnv) {
    let Some(hashdeep) = testenv::find_reference("hashdeep") else {
        testenv::skip("hashdeep is not installed (scripts/tests/install-peers installs it)");
        return;
    };
    let out = std::process::Command::new(hashdeep)
        .args(["-c", "md5,sha256", "-r", "-l", "-a", "-k", "L", "t"])
        .current_dir(env.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hashdeep's audit: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Python's hex digest of `bytes` in `algorithm`.
fn python_hex(algorithm: &str, bytes: &[u8]) -> String {
    let script = format!(
        "import hashlib, sys\nprint(hashlib.new({algorithm:?}, sys.stdin.buffer.read()).hexdigest(), end='')"
    );
    testenv::python(&script, bytes)
}

fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2200));
}

/// `--json --stamps` with several `-a`: each record carries its stamp and
/// file system, and an update trusts them as it does with one algorithm:
/// a file whose stamp is the listed one keeps its listed digests (even
/// one the list got wrong: it is not read), one whose stamp moved is read
/// again, every algorithm.
#[test]
fn stamps_go_with_several_digests_and_answer_for_unchanged_files() {
    let env = TestEnv::new();
    env.mkdir("t");
    for i in 0..4 {
        env.file(
            format!("t/f{i}").as_bytes(),
            format!("file {i}\n").as_bytes(),
        );
    }
    settle();
    let args = ["-r", "--json", "--stamps", "-a", "md5", "-a", "sha256", "t"];
    let list = fastsum(&env, &args);
    assert_eq!(list.status, 0, "{}", list.stderr_str());
    let text = list.stdout_str();
    for field in ["\"digests\":{", "\"mtime_ns\":", "\"fsid\":"] {
        assert_eq!(text.matches(field).count(), 4, "{field}: {text}");
    }
    let md5 = |b: &[u8]| python_hex("md5", b);
    let told = text.replace(&md5(b"file 1\n"), &md5(b"told\n"));
    env.file(b"L", told.as_bytes());
    std::fs::write(env.path().join("t/f2"), b"changed\n").unwrap();
    settle();
    let out = fastsum(&env, &["-r", "--update=L", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "M\tt/f2\n");
    let now = String::from_utf8(listed(&env)).unwrap();
    assert!(now.contains(&md5(b"told\n")), "f1 was read: {now}");
    assert!(now.contains(&md5(b"changed\n")), "{now}");
    let sha256 = python_hex("sha256", b"changed\n");
    assert!(now.contains(&sha256), "f2's sha256 not read again: {now}");
    assert_eq!(now.matches("\"mtime_ns\":").count(), 4, "{now}");
    assert_eq!(now.matches("\"digests\":{").count(), 4, "{now}");
}

/// A list whose files do not all have the first file's algorithms in its
/// order cannot be written back as it is: refused, naming the list and
/// the line, the list byte-identical.
#[test]
fn a_list_whose_files_have_other_algorithms_is_refused_untouched() {
    let env = TestEnv::new();
    tree(&env, true);
    let tagged = fastsum(&env, &["-r", "-a", "md5", "-a", "sha256", "t"]).stdout;
    let lines: Vec<&[u8]> = tagged.split_inclusive(|&b| b == b'\n').collect();
    let json = fastsum(&env, &["-r", "--json", "-a", "md5", "-a", "sha256", "t"]).stdout;
    let records: Vec<&[u8]> = json.split_inclusive(|&b| b == b'\n').collect();
    let swapped = {
        let record = String::from_utf8_lossy(records[1]).into_owned();
        let at = record.find("\"digests\":{").unwrap() + 11;
        let end = record[at..].find('}').unwrap() + at;
        let (md5, sha256) = record[at..end].split_once(',').unwrap();
        format!("{}{sha256},{md5}{}", &record[..at], &record[end..])
    };
    let cases: [(&str, Vec<u8>, &str); 3] = [
        // t/b's SHA256 line missing: its lines start on line 3.
        (
            "a missing line",
            [lines[0], lines[1], lines[2], &lines[4..].concat()].concat(),
            "line 3:",
        ),
        // t/b's lines in the other order.
        (
            "another order",
            [lines[0], lines[1], lines[3], lines[2], &lines[4..].concat()].concat(),
            "line 3:",
        ),
        (
            "json in another order",
            [records[0], swapped.as_bytes(), &records[2..].concat()].concat(),
            "line 2:",
        ),
    ];
    env.file(b"t/b", b"TWO\n");
    for (what, list, said) in cases {
        env.file(b"L", &list);
        let out = fastsum(&env, &["-r", "--update=L", "t"]);
        assert_eq!(out.status, 1, "{what}: {}", out.stderr_str());
        let stderr = out.stderr_str();
        assert!(stderr.contains(&format!("L: {said}")), "{what}: {stderr}");
        assert!(stderr.contains("nothing was changed"), "{what}: {stderr}");
        assert_eq!(listed(&env), list, "{what}: changed");
    }
}

/// One read for every digest of a record: a large file (past the size at
/// which each algorithm gets a thread) whose last byte is written while
/// `-a md5 -a sha256` reads it, at delays spread over the read. Every
/// run's MD5 and SHA-256 must be the digests of one version, the one
/// before the write or the one after (each algorithm reading the file by
/// itself gave, at some delay, an MD5 of one version beside a SHA-256 of
/// the other, exit 0), or no digest and "file changed while reading"
/// where the write fell inside the read.
#[test]
fn the_digests_of_a_record_come_from_one_read_of_a_file_written_meanwhile() {
    use std::os::unix::fs::FileExt as _;
    let env = TestEnv::new();
    let size = 48 << 20;
    let before = vec![b'a'; size];
    let mut after = before.clone();
    after[size - 1] = b'X';
    let versions: Vec<(String, String)> = [&before, &after]
        .iter()
        .map(|v| (python_hex("md5", v), python_hex("sha256", v)))
        .collect();
    let path = env.file(b"big", &before);
    for delay in (0..100).step_by(4) {
        std::fs::write(&path, &before).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(delay));
            file.write_all_at(b"X", size as u64 - 1).expect("write");
        });
        let out = fastsum(&env, &["-a", "md5", "-a", "sha256", "big"]);
        writer.join().unwrap();
        // A read the write fell inside: no digest at all (verified reads).
        if out.status != 0 {
            assert!(
                out.stderr_str().contains("big: file changed while reading"),
                "{}",
                out.stderr_str()
            );
            assert!(out.stdout.is_empty(), "{}", out.stdout_str());
            continue;
        }
        let text = out.stdout_str();
        let digest = |tag: &str| {
            let line = text.lines().find(|l| l.starts_with(tag)).expect(tag);
            line.rsplit(" = ").next().unwrap().to_string()
        };
        let got = (digest("MD5 "), digest("SHA256 "));
        assert!(
            versions.contains(&got),
            "at {delay} ms: MD5 {} and SHA-256 {} are not the digests of one version",
            got.0,
            got.1
        );
    }
}
