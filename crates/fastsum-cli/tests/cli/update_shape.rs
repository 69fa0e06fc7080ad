//! `--update` writes a list back in the shape its lines were
//! parsed in, never the one its first line's raw bytes suggest. A first
//! name with a backslash escapes the whole line (`\SHA256 (t/0\\x) = ...`):
//! the list was taken for untagged, a SHA-256 list rewritten as untagged
//! lines (which `-c` then could not read), and a list of MD5 and SHA-256
//! lines passed the several-digests refusal and lost every SHA-256 digest.
//! Expectations come from GNU coreutils' own `--tag` output (the
//! system's: any coreutils since 8.x writes these lines alike).

use std::path::PathBuf;

use crate::testenv::{self, Outcome, TestEnv};

/// The system's GNU `tool` (`/usr/bin`), or the test skipped, said.
fn gnu(tool: &str) -> Option<PathBuf> {
    let path = PathBuf::from("/usr/bin").join(tool);
    if path.exists() {
        return Some(path);
    }
    testenv::skip(&format!(
        "{} (GNU coreutils) is not installed",
        path.display()
    ));
    None
}

/// What the system's GNU `tool` prints for `args`, run in the test's
/// directory.
fn reference(env: &TestEnv, tool: &str, args: &[&str]) -> Option<Vec<u8>> {
    let out = std::process::Command::new(gnu(tool)?)
        .args(args)
        .current_dir(env.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// A tree whose first file (in path order) has a backslash in its name.
fn tree(env: &TestEnv) {
    env.mkdir("t");
    env.file(b"t/0\\first", b"one\n");
    env.file(b"t/b", b"two\n");
}

/// What GNU's `TOOL --tag` writes for the tree's files, in path order.
fn gnu_tagged(env: &TestEnv, tool: &str) -> Vec<u8> {
    reference(env, tool, &["--tag", "t/0\\first", "t/b"]).expect("checked first")
}

#[test]
fn a_tagged_list_whose_first_name_is_escaped_stays_tagged() {
    if gnu("sha256sum").is_none() || gnu("md5sum").is_none() {
        return;
    }
    for (args, tool) in [
        (&["-a", "sha256"][..], "sha256sum"),
        (&["--tag"][..], "md5sum"),
    ] {
        let env = TestEnv::new();
        tree(&env);
        let mut write = vec!["-r"];
        write.extend(args);
        write.push("t");
        let list = fastsum(&env, &write);
        assert_eq!(list.status, 0, "{}", list.stderr_str());
        assert_eq!(
            list.stdout_str(),
            String::from_utf8_lossy(&gnu_tagged(&env, tool)),
            "{args:?}: not GNU's tagged lines"
        );
        assert!(
            list.stdout.starts_with(b"\\"),
            "{args:?}: first line not escaped"
        );
        env.file(b"L", &list.stdout);
        let update = ["-r", "--cache=c.db", "--update=L", "t"];
        let out = fastsum(&env, &update);
        assert_eq!(out.status, 0, "{args:?}: {}", out.stderr_str());
        assert_eq!(
            std::fs::read(env.path().join("L")).unwrap(),
            list.stdout,
            "{args:?}: an unchanged tree changed the list"
        );
        env.file(b"t/b", b"TWO\n");
        let out = fastsum(&env, &update);
        assert_eq!(out.status, 0, "{args:?}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "M\tt/b\n", "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&std::fs::read(env.path().join("L")).unwrap()),
            String::from_utf8_lossy(&gnu_tagged(&env, tool)),
            "{args:?}: the updated list is not what GNU writes for the tree"
        );
        let check = fastsum(&env, &["-c", "L"]);
        assert_eq!(check.status, 0, "{args:?}: {}", check.stderr_str());
    }
}

#[test]
fn a_list_of_two_digests_a_file_is_never_cut_to_one_by_an_escaped_first_name() {
    let env = TestEnv::new();
    tree(&env);
    let list = fastsum(&env, &["-r", "-a", "md5", "-a", "sha256", "t"]);
    assert_eq!(list.status, 0, "{}", list.stderr_str());
    assert!(list.stdout.starts_with(b"\\"), "first line not escaped");
    assert_eq!(list.stdout_str().matches("SHA256 (").count(), 2);
    env.file(b"L", &list.stdout);
    env.file(b"t/b", b"TWO\n");
    let out = fastsum(&env, &["-r", "--cache=c.db", "--update=L", "t"]);
    let listed = std::fs::read(env.path().join("L")).unwrap();
    match out.status {
        // Refused: the list as it was.
        1 => assert_eq!(listed, list.stdout, "refused, yet changed"),
        // Updated: every digest kept, as a fresh run writes them.
        0 => {
            let fresh = fastsum(&env, &["-r", "-a", "md5", "-a", "sha256", "t"]);
            assert_eq!(
                String::from_utf8_lossy(&listed),
                fresh.stdout_str(),
                "the update lost digests"
            );
        }
        other => panic!("exit {other}: {}", out.stderr_str()),
    }
}

/// A hand-made list of tagged and untagged lines cannot be written back
/// in one shape: refused, untouched, and `-c` still reads it.
#[test]
fn a_list_of_tagged_and_untagged_lines_is_refused_untouched() {
    let env = TestEnv::new();
    tree(&env);
    let Some(tagged) = reference(&env, "md5sum", &["--tag", "t/b"]) else {
        return;
    };
    let untagged = reference(&env, "md5sum", &["t/0\\first"]).expect("checked first");
    let list = [untagged, tagged].concat();
    env.file(b"L", &list);
    let check = fastsum(&env, &["-c", "L"]);
    assert_eq!(check.status, 0, "{}", check.stderr_str());
    let out = fastsum(&env, &["-r", "--cache=c.db", "--update=L", "t"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("tagged and untagged"),
        "{}",
        out.stderr_str()
    );
    assert_eq!(std::fs::read(env.path().join("L")).unwrap(), list);
}

/// What Python's hashlib and base64 make of `t/a` and `t/b`: GNU's
/// `cksum -a md5 --base64` lines (`MD5 (NAME) = BASE64`).
fn python_base64_lines(env: &TestEnv) -> Vec<u8> {
    let script = "import base64, hashlib, os, sys\n\
        os.chdir(sys.stdin.read())\n\
        for n in ('t/a', 't/b'):\n    \
        d = base64.b64encode(hashlib.md5(open(n, 'rb').read()).digest()).decode()\n    \
        print('MD5 (%s) = %s' % (n, d))\n";
    testenv::python(
        script,
        env.path().to_str().expect("a UTF-8 test path").as_bytes(),
    )
    .into_bytes()
}

/// `--update` once rewrote every line in its
/// own default look and dropped what it does not write: base64 digests
/// became hex, `*` marks spaces, comments were lost, CR LF became LF,
/// exit 0. A look the update can write (base64, the binary mark, on
/// every line) is kept: the updated list is what GNU (or Python, for
/// base64) writes for the changed tree; one it cannot is refused, the
/// list byte-identical.
#[test]
fn an_update_keeps_the_lists_look_or_changes_nothing() {
    if gnu("md5sum").is_none() {
        return;
    }
    let gnu_binary =
        |env: &TestEnv| reference(env, "md5sum", &["-b", "t/a", "t/b"]).expect("checked first");
    type Maker = fn(&TestEnv) -> Vec<u8>;
    type Made<'a> = Box<dyn Fn(&TestEnv) -> Vec<u8> + 'a>;
    let kept: [(&str, Made); 2] = [
        ("binary marks", Box::new(gnu_binary)),
        ("base64", Box::new(python_base64_lines as Maker)),
    ];
    for (what, make) in kept {
        let env = TestEnv::new();
        env.mkdir("t");
        env.file(b"t/a", b"one\n");
        env.file(b"t/b", b"two\n");
        env.file(b"L", &make(&env));
        let update = ["-r", "-a", "md5", "--cache=c.db", "--update=L", "t"];
        let out = fastsum(&env, &update);
        assert_eq!(out.status, 0, "{what}: {}", out.stderr_str());
        assert_eq!(
            std::fs::read(env.path().join("L")).unwrap(),
            make(&env),
            "{what}"
        );
        env.file(b"t/b", b"TWO\n");
        let out = fastsum(&env, &update);
        assert_eq!(out.status, 0, "{what}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "M\tt/b\n", "{what}");
        assert_eq!(
            String::from_utf8_lossy(&std::fs::read(env.path().join("L")).unwrap()),
            String::from_utf8_lossy(&make(&env)),
            "{what}: the updated list lost its look"
        );
    }
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"one\n");
    env.file(b"t/b", b"two\n");
    let plain = fastsum(&env, &["-r", "t"]).stdout;
    let lines: Vec<&[u8]> = plain.split_inclusive(|&b| b == b'\n').collect();
    let refused: [(&str, Vec<u8>, &str); 4] = [
        (
            "a comment",
            [b"# made by hand\n".as_slice(), &plain].concat(),
            "line 1 is a comment",
        ),
        (
            "CR LF",
            [lines[0], &lines[1].replace_last_newline()].concat(),
            "line 2 ends in CR LF",
        ),
        (
            "one space",
            [lines[0], &lines[1][..32], &lines[1][33..]].concat(),
            "line 2 is not a checksum line",
        ),
        (
            "a mark on one line",
            [lines[0], &[&lines[1][..33], b"*", &lines[1][34..]].concat()].concat(),
            "some of its lines have the binary mark",
        ),
    ];
    env.file(b"t/b", b"TWO\n");
    for (what, list, said) in refused {
        env.file(b"L", &list);
        let out = fastsum(&env, &["-r", "-a", "md5", "--update=L", "t"]);
        assert_eq!(out.status, 1, "{what}: {}", out.stderr_str());
        assert!(
            out.stderr_str().contains(said),
            "{what}: {}",
            out.stderr_str()
        );
        assert!(out.stderr_str().contains("nothing was changed"), "{what}");
        assert_eq!(std::fs::read(env.path().join("L")).unwrap(), list, "{what}");
    }
}

trait LastNewline {
    fn replace_last_newline(&self) -> Vec<u8>;
}

impl LastNewline for [u8] {
    /// The line with CR LF for its LF.
    fn replace_last_newline(&self) -> Vec<u8> {
        let mut line = self.strip_suffix(b"\n").unwrap_or(self).to_vec();
        line.extend_from_slice(b"\r\n");
        line
    }
}

/// Lines `-c` reads as the ones fastsum writes but that are written
/// otherwise (upper-case hex, tagged or not; a second space before `(`; a
/// backslash before a name that needs no escape) were rewritten in
/// fastsum's look with nothing changed ("0 added, 0 removed, 0 modified",
/// exit 0, the list's bytes not its own). The one rule: a line an update
/// would not write back byte for byte is refused, naming it, the list
/// byte-identical. Each case is made from the lines GNU writes, and GNU's
/// own `--tag` list with an escaped name still round-trips unchanged.
#[test]
fn a_line_fastsum_would_write_otherwise_is_refused_never_rewritten() {
    if gnu("sha256sum").is_none() {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let untagged = reference(&env, "md5sum", &["t/0\\first", "t/b"]).unwrap();
    let tagged = gnu_tagged(&env, "sha256sum");
    let (u, t): (Vec<&[u8]>, Vec<&[u8]>) = (
        untagged.split_inclusive(|&b| b == b'\n').collect(),
        tagged.split_inclusive(|&b| b == b'\n').collect(),
    );
    let upper = |line: &[u8], digest: std::ops::Range<usize>| {
        let mut line = line.to_vec();
        line[digest].make_ascii_uppercase();
        line
    };
    let tagged_digest = |line: &[u8]| line.len() - 65..line.len() - 1;
    let refused: [(&str, Vec<u8>, &str, &str); 4] = [
        (
            "upper-case hex",
            [u[0], &upper(u[1], 0..32)].concat(),
            "md5",
            "line 2",
        ),
        (
            "upper-case hex, tagged",
            [t[0], &upper(t[1], tagged_digest(t[1]))].concat(),
            "sha256",
            "line 2",
        ),
        (
            "two spaces before (",
            [t[0], &t[1].replacen(b"SHA256 (", b"SHA256  (")].concat(),
            "sha256",
            "line 2",
        ),
        (
            "a needless escape",
            [u[0], b"\\", u[1]].concat(),
            "md5",
            "line 2",
        ),
    ];
    for (what, list, algorithm, line) in refused {
        env.file(b"L", &list);
        let out = fastsum(&env, &["-c", "L"]);
        assert_eq!(out.status, 0, "{what}: -c reads it: {}", out.stderr_str());
        let out = fastsum(&env, &["-r", "-a", algorithm, "--update=L", "t"]);
        assert_eq!(out.status, 1, "{what}: {}", out.stderr_str());
        let said = format!("{line} is not written as fastsum writes it");
        assert!(
            out.stderr_str().contains(&said),
            "{what}: {}",
            out.stderr_str()
        );
        assert!(out.stderr_str().contains("nothing was changed"), "{what}");
        assert_eq!(std::fs::read(env.path().join("L")).unwrap(), list, "{what}");
    }
    // fastsum's own JSON, as fastsum writes it and as it reads.
    let json =
        String::from_utf8(fastsum(&env, &["-r", "--json", "-a", "sha256", "t"]).stdout).unwrap();
    let spaced = json.replace(",\"", ", \"");
    let digest = String::from_utf8(t[1][tagged_digest(t[1])].to_vec()).unwrap();
    let upper_json = json.replace(&digest, &digest.to_uppercase());
    for (what, list, said) in [
        (
            "JSON with spaces",
            spaced,
            "line 1 is JSON written otherwise",
        ),
        (
            "JSON in upper-case hex",
            upper_json,
            "line 2 has a digest in upper-case hex",
        ),
    ] {
        env.file(b"L", list.as_bytes());
        assert_eq!(fastsum(&env, &["-c", "L"]).status, 0, "{what}: -c reads it");
        let out = fastsum(&env, &["-r", "--update=L", "t"]);
        assert_eq!(out.status, 1, "{what}: {}", out.stderr_str());
        assert!(
            out.stderr_str().contains(said),
            "{what}: {}",
            out.stderr_str()
        );
        assert_eq!(
            std::fs::read(env.path().join("L")).unwrap(),
            list.as_bytes(),
            "{what}"
        );
    }
    env.file(b"L", json.as_bytes());
    let out = fastsum(&env, &["-r", "--update=L", "t"]);
    assert_eq!(out.status, 0, "fastsum's JSON: {}", out.stderr_str());
    assert_eq!(
        std::fs::read(env.path().join("L")).unwrap(),
        json.as_bytes(),
        "fastsum's JSON"
    );
    for (what, list, algorithm) in [
        ("GNU's untagged", &untagged, "md5"),
        ("GNU's --tag", &tagged, "sha256"),
    ] {
        env.file(b"L", list);
        let out = fastsum(&env, &["-r", "-a", algorithm, "--update=L", "t"]);
        assert_eq!(out.status, 0, "{what}: {}", out.stderr_str());
        assert_eq!(
            &std::fs::read(env.path().join("L")).unwrap(),
            list,
            "{what}"
        );
    }
}

trait Replace {
    fn replacen(&self, from: &[u8], to: &[u8]) -> Vec<u8>;
}

impl Replace for [u8] {
    /// The bytes with the first `from` made `to`.
    fn replacen(&self, from: &[u8], to: &[u8]) -> Vec<u8> {
        let at = self
            .windows(from.len())
            .position(|w| w == from)
            .expect("in the line");
        [&self[..at], to, &self[at + from.len()..]].concat()
    }
}

/// hashdeep's own list (Debian's hashdeep 4.4) of two columns is updated
/// in place; the same list in upper-case hex, which `-c` reads, is
/// refused by name and left byte-identical (it was rewritten in lower
/// case with "0 modified", exit 0).
#[test]
fn a_hashdeep_list_written_otherwise_is_refused_never_rewritten() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"one\n");
    env.file(b"t/b", b"two\n");
    let made = std::process::Command::new("hashdeep")
        .args(["-c", "md5,sha256", "-l", "-r", "t"])
        .current_dir(env.path())
        .output()
        .expect("hashdeep runs (scripts/tests/install-peers installs it)");
    assert!(made.status.success());
    env.file(b"L", &made.stdout);
    let out = fastsum(&env, &["-r", "--update=L", "t"]);
    assert_eq!(out.status, 0, "hashdeep's list: {}", out.stderr_str());
    assert!(
        out.stderr_str().contains("0 modified, 2 unchanged"),
        "{}",
        out.stderr_str()
    );
    let kept = std::fs::read(env.path().join("L")).unwrap();
    let upper: Vec<u8> = kept
        .split_inclusive(|&b| b == b'\n')
        .flat_map(|line| match line.first() {
            Some(b'0'..=b'9') => {
                let text = String::from_utf8(line.to_vec()).unwrap();
                let (size, rest) = text.split_once(',').unwrap();
                let (md5, rest) = rest.split_once(',').unwrap();
                format!("{size},{},{rest}", md5.to_uppercase()).into_bytes()
            }
            _ => line.to_vec(),
        })
        .collect();
    assert_ne!(upper, kept);
    env.file(b"L", &upper);
    assert_eq!(fastsum(&env, &["-c", "L"]).status, 0, "-c reads it");
    let out = fastsum(&env, &["-r", "--update=L", "t"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stderr_str()
            .contains("is a hashdeep line written otherwise"),
        "{}",
        out.stderr_str()
    );
    assert!(out.stderr_str().contains("nothing was changed"));
    assert_eq!(std::fs::read(env.path().join("L")).unwrap(), upper);
}
