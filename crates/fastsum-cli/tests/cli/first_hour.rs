//! A first hour with no friction, tried as a new user would:
//! the hints on a mistyped subcommand and a directory without `-r`, one
//! exit status for usage errors, the progress bar on terminals of every
//! size, and what `--help` lists. The personalities are checked against
//! coreutils itself: they keep its bytes.

use std::time::Duration;

use crate::testenv;

use testenv::TestEnv;

/// `fastsum dif a b` hashes `dif` as a file (a file of that name is
/// hashed as any other), and when there is none, says which subcommand was
/// meant; md5sum says what coreutils' says.
#[test]
fn a_mistyped_subcommand_gets_a_hint_only_when_no_such_file_exists() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"a", b"first\n");
    env.file(b"b", b"second\n");
    let out = env.fastsum("fastsum", &[b"dif", b"a", b"b"], b"");
    let md5 = |s: &[u8]| testenv::reference_hex("md5sum", s);
    assert_eq!(
        (out.status, out.stdout_str(), out.stderr_str()),
        (
            1,
            format!("{}  a\n{}  b\n", md5(b"first\n"), md5(b"second\n")),
            "fastsum: dif: No such file or directory\n\
             fastsum: did you mean the subcommand 'diff'?\n"
                .to_string()
        )
    );
    for (typed, meant) in [("dupe", "dupes"), ("becnh", "bench"), ("scrubb", "scrub")] {
        let out = env.fastsum("fastsum", &[typed.as_bytes()], b"");
        assert!(
            out.stderr_str()
                .ends_with(&format!("did you mean the subcommand '{meant}'?\n")),
            "{typed}: {}",
            out.stderr_str()
        );
    }
    // Only the first argument can be a subcommand; a far name gets none.
    for args in [&[&b"a"[..], b"dif"][..], &[b"README"]] {
        let out = env.fastsum("fastsum", args, b"");
        assert!(!out.stderr_str().contains("did you mean"), "{args:?}");
    }
    // A file named `dif` is a file.
    env.file(b"dif", b"a file\n");
    let out = env.fastsum("fastsum", &[b"dif"], b"");
    assert_eq!(
        (out.status, out.stdout_str(), out.stderr_str()),
        (0, format!("{}  dif\n", md5(b"a file\n")), String::new())
    );
    std::fs::remove_file(env.path().join("dif")).unwrap();
    env.assert_same("md5sum", &[b"dif", b"a"], b"");
}

/// `fastsum doc`: "Is a directory (use -r)"; `-r doc` hashes it; several
/// `-a` say the same; md5sum and sha256sum say coreutils' words only.
#[test]
fn a_directory_without_r_says_to_use_r_under_fastsums_name_only() {
    if crate::testenv::lacks(&["md5sum", "sha256sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("doc");
    env.file(b"doc/page", b"text\n");
    let out = env.fastsum("fastsum", &[b"doc"], b"");
    assert_eq!(
        (out.status, out.stderr_str()),
        (1, "fastsum: doc: Is a directory (use -r)\n".to_string())
    );
    let out = env.fastsum("fastsum", &[b"-a", b"md5", b"-a", b"sha1", b"doc"], b"");
    assert_eq!(out.stderr_str(), "fastsum: doc: Is a directory (use -r)\n");
    let out = env.fastsum("fastsum", &[b"-r", b"doc"], b"");
    assert_eq!((out.status, out.stderr_str()), (0, String::new()));
    for tool in ["md5sum", "sha256sum"] {
        let theirs = env.assert_same(tool, &[b"doc"], b"");
        assert_eq!(
            theirs.stderr_str(),
            format!("{tool}: doc: Is a directory\n")
        );
    }
}

/// Usage errors end with status 2 under fastsum's name, in the main mode
/// as in the subcommands (clap's); the personalities keep GNU's 1, byte
/// for byte.
#[test]
fn usage_errors_are_status_2_in_every_mode_of_fastsum_and_1_in_md5sum() {
    if crate::testenv::lacks(&["b2sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"f", b"x");
    for args in [
        &[&b"--bogus"[..]][..],
        &[b"-a", b"nope", b"f"],
        &[b"-a", b"blake2b", b"-l", b"7", b"f"],
        &[b"--stamps", b"f"],
        &[b"diff", b"--bogus", b"f", b"f"],
        &[b"dupes", b"--bogus"],
        &[b"scrub"],
        &[b"bench", b"--bogus"],
    ] {
        let out = env.fastsum("fastsum", args, b"");
        assert_eq!(out.status, 2, "{args:?}: {}", out.stderr_str());
        assert!(out.stdout.is_empty() && !out.stderr.is_empty(), "{args:?}");
    }
    // What is not a usage error keeps its status: a list that cannot be
    // read, a file that cannot.
    let out = env.fastsum("fastsum", &[b"--files0-from=missing"], b"");
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    let out = env.fastsum("fastsum", &[b"missing"], b"");
    assert_eq!(out.status, 1);
    for args in [&[&b"--bogus"[..]][..], &[b"-l", b"7", b"f"], &[b"-x"]] {
        let ours = env.assert_same("b2sum", args, b"");
        assert_eq!(ours.status, 1, "{args:?}");
    }
}

/// `fastsum --help` names every personality, `cksum` and `sum` too.
#[test]
fn help_lists_every_personality() {
    let env = TestEnv::new();
    let help = env.fastsum("fastsum", &[b"--help"], b"").stdout_str();
    let said = help
        .lines()
        .skip_while(|l| !l.to_lowercase().contains("personalit"))
        .take(6)
        .collect::<Vec<_>>()
        .join("\n");
    for tool in [
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
        "b3sum",
        "xxhsum",
    ] {
        assert!(
            said.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == tool),
            "{tool} not listed: {said}"
        );
    }
}

/// `fastsum ARGS slow` on a terminal of `size` while a writer holds the
/// FIFO `slow` open 1.6 s (past the bar's 1 s delay): what the terminal
/// showed.
fn on_a_terminal(env: &TestEnv, args: &str, size: Option<(u16, u16)>) -> String {
    let fifo = env.path().join("slow");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
        pipe.write_all(b"abc").unwrap();
        std::thread::sleep(Duration::from_millis(1600));
    });
    let command = format!("{} {args} slow > out", crate::testenv::fastsum_bin());
    let shown = testenv::on_a_terminal_sized(env.path(), &command, size);
    writer.join().unwrap();
    assert!(shown.status.success(), "{shown:?}");
    String::from_utf8_lossy(&shown.stdout).into_owned()
}

/// What each drawing left visible: the text between carriage returns and
/// newlines, the escape sequences taken out.
fn drawn_lines(shown: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut chars = shown.chars();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                // CSI: ESC [ parameters, then a final letter.
                if chars.next() == Some('[') {
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            break;
                        }
                    }
                }
            }
            c => plain.push(c),
        }
    }
    plain
        .split(['\r', '\n'])
        .filter(|l| l.contains("files"))
        .map(str::to_string)
        .collect()
}

/// The bar fits a terminal of 80 columns and of 40 (it was 30 cells and
/// the words, which wrapped), and never moves the cursor up a line (as
/// indicatif does to clear a bar that wrapped).
#[test]
fn the_progress_bar_never_wraps() {
    let env = TestEnv::new();
    env.file(b"a", b"a");
    env.file(b"b", b"b");
    for columns in [80u16, 40] {
        let shown = on_a_terminal(&env, "a b", Some((24, columns)));
        let lines = drawn_lines(&shown);
        assert!(!lines.is_empty(), "{columns}: no bar drawn: {shown:?}");
        for line in &lines {
            assert!(
                line.trim_end().chars().count() < usize::from(columns),
                "{columns} columns: {line:?}"
            );
        }
        assert!(!shown.contains("\x1b[1A"), "{columns}: {shown:?}");
        // Two of three done in a moment and the last held 1.6 s: the
        // files' pace says "0 seconds" left, which is not said.
        assert!(!shown.contains("ETA 0 seconds"), "{shown:?}");
        // The bar is cleared at the end: nothing of it is left on the line.
        assert!(shown.ends_with("\r\x1b[2K"), "{shown:?}");
    }
}

/// A pseudo-terminal of 0x0 (as `script` makes from a pipe, and some CI
/// runners) gets no bar: no escape sequence at all.
#[test]
fn a_terminal_of_no_size_gets_no_cursor_motion() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let shown = on_a_terminal(&env, "", None);
    assert!(!shown.contains('\x1b'), "{shown:?}");
    let out = std::fs::read_to_string(env.path().join("out")).unwrap();
    assert_eq!(
        out,
        format!("{}  slow\n", testenv::reference_hex("md5sum", b"abc"))
    );
}
