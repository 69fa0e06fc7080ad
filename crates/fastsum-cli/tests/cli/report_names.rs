//! Names that forge report lines or drive the terminal: a
//! file named `evil\nmissing\tpasswd`, one holding ESC `[2J`, one holding
//! U+009B (CSI), through every report that names files (`--update`'s
//! changes, `audit -v`, `diff`, `scrub -v`, `dupes`). Each line comes out
//! as one line, with no control byte but its tab separators and its end.

use crate::testenv::{Outcome, TestEnv};

const HOSTILE: [&[u8]; 3] = [
    b"evil\nmissing\tpasswd",
    b"a\x1b[2Jb",
    "c\u{9b}d".as_bytes(),
];

fn run(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// Every line of `out` is free of control bytes (but tabs), C1 included;
/// and there are `lines` of them that name a hostile file.
fn clean(what: &str, out: &[u8], lines: usize) {
    let text = out.strip_suffix(b"\n").unwrap_or(out);
    for line in text.split(|&b| b == b'\n') {
        // The names here are UTF-8: a line that is not lost a byte to raw
        // output of a lone C1 byte.
        let line = std::str::from_utf8(line).unwrap_or_else(|_| panic!("{what}: {line:?}"));
        let raw = line.chars().any(|c| c.is_control() && c != '\t');
        assert!(!raw, "{what}: a raw control character in {line:?}");
    }
    let named = text
        .split(|&b| b == b'\n')
        .filter(|l| {
            let l = String::from_utf8_lossy(l);
            l.contains("evil\\nmissing\\tpasswd")
                || l.contains("a\\x1b[2Jb")
                || l.contains("c\\xc2\\x9bd")
        })
        .count();
    assert_eq!(named, lines, "{what}: {}", String::from_utf8_lossy(out));
}

#[test]
fn no_name_forges_a_report_line_or_reaches_the_terminal_raw() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.mkdir("u");
    for name in HOSTILE {
        let mut path = b"t/".to_vec();
        path.extend_from_slice(name);
        env.file(&path, b"same\n");
    }
    env.file(b"t/plain", b"plain\n");
    env.file(b"u/plain", b"plain\n");
    // --update: the hostile names added, then modified.
    let list = run(&env, &["-r", "u"]);
    env.file(b"SUMS", &list.stdout);
    // u moved away: the list of u updated to t (a file the list names
    // that is still there, unread, would refuse the update; -a, as no
    // listed file is left to tell the algorithm).
    let (u, away) = (env.path().join("u"), env.path().join("u.away"));
    std::fs::rename(&u, &away).unwrap();
    let out = run(&env, &["-r", "-a", "md5", "--update=SUMS", "t"]);
    std::fs::rename(&away, &u).unwrap();
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    clean("--update", &out.stdout, 3);
    // audit -vv of a list of u against t: every hostile name is new.
    let made = run(&env, &["-r", "--format=hashdeep", "u"]);
    env.file(b"u.hd", &made.stdout);
    let out = run(&env, &["audit", "-vv", "u.hd", "t"]);
    clean("audit", &out.stdout, 3);
    // diff u t: added.
    let out = run(&env, &["diff", "u", "t"]);
    clean("diff", &out.stdout, 3);
    // scrub -v: new, then verified.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let out = run(&env, &["scrub", "-v", "--cache=c.db", "t"]);
    clean("scrub", &out.stdout, 3);
    // dupes: the three are one group.
    let out = run(&env, &["dupes", "t"]);
    clean("dupes", &out.stdout, 3);
    // dupes' action lines (the hostile review: printed raw).
    let out = run(&env, &["dupes", "--link", "--dry-run", "t"]);
    clean("dupes --link --dry-run", &out.stdout, 2);
    // JSON: C1 escaped too (U+009B, CSI).
    let out = run(&env, &["diff", "--json", "u", "t"]);
    assert!(!out.stdout_str().contains('\u{9b}'), "{}", out.stdout_str());
    assert!(
        out.stdout_str().contains("c\\u009bd"),
        "{}",
        out.stdout_str()
    );
    // A path listed twice: the message escapes it.
    let mut twice = run(&env, &["-r", "t"]).stdout;
    twice.extend(twice.clone());
    env.file(b"TWICE", &twice);
    for command in ["audit", "diff"] {
        let out = run(&env, &[command, "TWICE", "t"]);
        let said = out.stderr_str();
        assert!(said.contains("is listed twice"), "{command}: {said}");
        assert!(!out.stderr.contains(&0x1b), "{command}: {said}");
        assert_eq!(
            said.lines()
                .filter(|l| l.contains("is listed twice"))
                .count(),
            4,
            "{said}"
        );
    }
    // Messages on stderr quote names as coreutils does: no raw control
    // byte there either.
    let out = run(&env, &["diff", "u", "t/a\x1b[2Jb"]);
    assert!(!out.stderr.contains(&0x1b), "{}", out.stderr_str());
}

/// Names that display as other names or break their line without a
/// control character: a right-to-left override (`x\u{202E}txt.exe` shows
/// as `xexe.txt`), an isolate, a right-to-left mark, the line and
/// paragraph separators. Every report escapes them as it escapes controls
/// (`\xHH` a byte; `\uXXXX` in JSON), and stderr's messages too.
#[test]
fn no_name_reorders_or_splits_a_report_line() {
    const NAMES: [&str; 5] = [
        "x\u{202E}txt.exe",
        "y\u{2067}z",
        "m\u{200F}n",
        "line\u{2028}sep",
        "para\u{2029}sep",
    ];
    const SHOWN: [&str; 5] = [
        "x\\xe2\\x80\\xaetxt.exe",
        "y\\xe2\\x81\\xa7z",
        "m\\xe2\\x80\\x8fn",
        "line\\xe2\\x80\\xa8sep",
        "para\\xe2\\x80\\xa9sep",
    ];
    let raw = |c: char| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{2028}' | '\u{2029}');
    let env = TestEnv::new();
    env.mkdir("t");
    env.mkdir("u");
    for name in NAMES {
        env.file(format!("t/{name}").as_bytes(), b"same\n");
    }
    env.file(b"t/plain", b"plain\n");
    env.file(b"u/plain", b"plain\n");
    let shown = |what: &str, out: &Outcome, want: usize| {
        let text = out.stdout_str();
        assert!(
            !text.chars().any(raw),
            "{what}: a raw character in {text:?}"
        );
        let named = text
            .lines()
            .filter(|l| SHOWN.iter().any(|s| l.contains(s)))
            .count();
        assert_eq!(named, want, "{what}: {text}");
    };
    let list = run(&env, &["-r", "u"]);
    env.file(b"SUMS", &list.stdout);
    let (u, away) = (env.path().join("u"), env.path().join("u.away"));
    std::fs::rename(&u, &away).unwrap();
    shown(
        "--update",
        &run(&env, &["-r", "-a", "md5", "--update=SUMS", "t"]),
        5,
    );
    std::fs::rename(&away, &u).unwrap();
    shown("diff", &run(&env, &["diff", "u", "t"]), 5);
    shown("dupes", &run(&env, &["dupes", "t"]), 5);
    let made = run(&env, &["-r", "--format=hashdeep", "u"]);
    env.file(b"u.hd", &made.stdout);
    shown("audit", &run(&env, &["audit", "-vv", "u.hd", "t"]), 5);
    // JSON: \uXXXX, which every JSON reader turns back into the name.
    let out = run(&env, &["diff", "--json", "u", "t"]);
    let text = out.stdout_str();
    assert!(!text.chars().any(raw), "{text}");
    assert!(
        text.contains("x\\u202etxt.exe") && text.contains("line\\u2028sep"),
        "{text}"
    );
    // A message on stderr names the path escaped too.
    let out = run(&env, &["diff", "u", "t/x\u{202E}txt.exe/nope"]);
    assert!(!out.stderr_str().chars().any(raw), "{}", out.stderr_str());
}
