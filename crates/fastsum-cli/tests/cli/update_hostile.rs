//! `fastsum -r --update` tried as a hostile user would: lists
//! whose names are not UTF-8, and what a concurrent or killed update
//! leaves beside them.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::testenv::{Outcome, TestEnv};

/// fastsum run in `dir` with `args` (bytes: names need not be UTF-8).
fn fastsum_in(env: &TestEnv, dir: &std::path::Path, args: &[&[u8]]) -> Outcome {
    env.command("fastsum")
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(dir)
        .output()
        .unwrap()
        .into()
}

/// A process id that is gone (a child that ran and was reaped).
fn a_dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A list named `S\xffS.md5` inside the tree it describes: its temporary
/// file was named lossily (`\u{fffd}` for the byte), not known as the
/// list's own, so the list named it (a file gone once renamed: `-c`
/// failed, each update said `A` and `D`); one a killed update left was
/// never removed.
#[test]
fn a_list_whose_name_is_not_utf8_never_lists_its_temporary_file() {
    let env = TestEnv::new();
    env.mkdir("site");
    env.file(b"site/a", b"a\n");
    env.file(b"site/b", b"b\n");
    let site = env.path().join("site");
    let name: &[u8] = b"S\xffS.md5";
    let first = fastsum_in(&env, &site, &[b"-r", b"."]);
    assert_eq!(first.status, 0, "{}", first.stderr_str());
    std::fs::write(site.join(OsStr::from_bytes(name)), &first.stdout).unwrap();
    let stale = [
        b".",
        name,
        b".fastsum-update.",
        a_dead_pid().to_string().as_bytes(),
    ]
    .concat();
    std::fs::write(site.join(OsStr::from_bytes(&stale)), b"half").unwrap();
    let update = [b"--update=", name].concat();
    for round in 0..2 {
        let out = fastsum_in(&env, &site, &[b"-r", b"--cache=../c.db", &update, b"."]);
        assert_eq!(out.status, 0, "round {round}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "", "round {round}: changes said");
        let listed = std::fs::read(site.join(OsStr::from_bytes(name))).unwrap();
        assert_eq!(listed, first.stdout, "round {round}: the list changed");
    }
    let mut left: Vec<Vec<u8>> = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().file_name().as_bytes().to_vec())
        .collect();
    left.sort();
    assert_eq!(left, [name, b"a", b"b"], "the stale temporary file stays");
    let check = fastsum_in(&env, &site, &[b"-c", name]);
    assert_eq!(check.status, 0, "{}", check.stderr_str());
}

/// A list that is not a regular file: a FIFO was waited on without end,
/// and a link to a pipe (`/dev/stdin` as root) read twice, the second
/// time from where the first stopped, then replaced by a regular file.
/// Refused at once now, named, nothing written.
#[test]
fn a_list_that_is_a_fifo_or_a_pipe_is_refused_not_waited_on_or_replaced() {
    use std::io::Write;
    use std::os::unix::fs::FileTypeExt;
    let env = TestEnv::new();
    env.mkdir("t");
    for i in 0..2000 {
        env.file(format!("t/file{i:05}").as_bytes(), b"x");
    }
    let list = env.fastsum("fastsum", &[b"-r", b"t"], b"");
    assert!(list.stdout.len() > 64 << 10, "a list longer than its head");
    let fifo = std::ffi::CString::new(env.path().join("F").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let limit = std::time::Duration::from_secs(10);
    let out = env.fastsum_within(limit, &[b"-r", b"--cache=c.db", b"--update=F", b"t"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("F: not a regular file"),
        "{}",
        out.stderr_str()
    );
    let kind = std::fs::symlink_metadata(env.path().join("F"))
        .unwrap()
        .file_type();
    assert!(kind.is_fifo());
    std::os::unix::fs::symlink("/proc/self/fd/0", env.path().join("in")).unwrap();
    let mut child = env
        .command("fastsum")
        .args(["-r", "--cache=c.db", "--update=in", "t"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeding = std::thread::spawn(move || {
        let _ = stdin.write_all(&list.stdout);
    });
    let out = child.wait_with_output().unwrap();
    feeding.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("in: not a regular file"), "{stderr}");
    let kind = std::fs::symlink_metadata(env.path().join("in"))
        .unwrap()
        .file_type();
    assert!(kind.is_symlink(), "the link was replaced");
}

/// A list named `L\nfastsum: all good` forged a line of stderr in every
/// message naming it ("fastsum: all good: updated: ..."): named as
/// coreutils names files now, one message a line.
#[test]
fn a_list_name_cannot_forge_a_message_line() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"a\n");
    let name: &[u8] = b"L\nfastsum: all good";
    let first = fastsum_in(&env, env.path(), &[b"-r", b"t"]);
    std::fs::write(env.path().join(OsStr::from_bytes(name)), &first.stdout).unwrap();
    env.file(b"t/b", b"b\n");
    let update = [b"--update=", name].concat();
    let runs: [&[&[u8]]; 3] = [
        &[b"-r", b"--cache=c.db", &update, b"t"],
        &[b"-r", b"--cache=c.db", &update, b"t", b"gone"],
        &[b"-r", b"--cache=c.db", b"--update=L\nfastsum: x", b"t"],
    ];
    for args in runs {
        let out = fastsum_in(&env, env.path(), args);
        let stderr = out.stderr_str();
        assert!(!stderr.is_empty());
        for line in stderr.lines() {
            assert!(
                !line.starts_with("fastsum: all good") && !line.starts_with("fastsum: x"),
                "a forged line: {stderr}"
            );
        }
        assert!(stderr.contains("'L'$'\\n''fastsum: "), "{stderr}");
    }
}

/// An untagged XXH128 list whose files were all touched after it was
/// written (restored from a backup, copied, checked out): the guess (MD5,
/// by the digests' length) was checked against files older than the list
/// only, there were none, and the list was rewritten in MD5 with every
/// file said modified, exit 0. A file that hashes to its line under
/// another algorithm refutes the guess whatever its age now.
#[test]
fn a_wrong_guess_is_refused_when_every_file_is_newer_than_the_list() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"one\n");
    env.file(b"t/b", b"two\n");
    let here = env.path();
    let list = fastsum_in(&env, here, &[b"-r", b"--untagged", b"-a", b"xxh128", b"t"]);
    assert_eq!(list.status, 0, "{}", list.stderr_str());
    let written = std::fs::File::create(here.join("L")).unwrap();
    std::io::Write::write_all(&mut &written, &list.stdout).unwrap();
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    written.set_modified(an_hour_ago).unwrap();
    drop(written);
    let out = fastsum_in(&env, here, &[b"-r", b"--cache=c.db", b"--update=L", b"t"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("(xxh128 matches)"),
        "{}",
        out.stderr_str()
    );
    assert_eq!(out.stdout_str(), "", "changes said");
    assert_eq!(std::fs::read(here.join("L")).unwrap(), list.stdout);
    // With -a it goes on, and an unchanged tree leaves the list as it was.
    let out = fastsum_in(&env, here, &[b"-r", b"-a", b"xxh128", b"--update=L", b"t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(std::fs::read(here.join("L")).unwrap(), list.stdout);
    // An MD5 list whose files all changed since looks the same as an
    // XXH128 one would: refused without -a (nothing tells them apart),
    // gone on with it.
    let md5 = fastsum_in(&env, here, &[b"-r", b"t"]);
    std::fs::write(here.join("M"), &md5.stdout).unwrap();
    env.file(b"t/a", b"ONE\n");
    env.file(b"t/b", b"TWO\n");
    let out = fastsum_in(&env, here, &[b"-r", b"--cache=c.db", b"--update=M", b"t"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("could be md5, xxh128"),
        "{}",
        out.stderr_str()
    );
    assert_eq!(std::fs::read(here.join("M")).unwrap(), md5.stdout);
    let out = fastsum_in(
        &env,
        here,
        &[b"-r", b"-a", b"md5", b"--cache=c.db", b"--update=M", b"t"],
    );
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "M\tt/a\nM\tt/b\n");
}

/// `--update` given operands narrower
/// than the list's (a sub-directory, one of two roots) wrote the list
/// with only what it read and said every other file deleted (`D`), exit
/// 0, though each was still there: their records were lost. Refused by
/// name now, the list untouched; a file really gone is still `D`.
#[test]
fn an_update_of_part_of_a_lists_tree_never_drops_the_rest() {
    let env = TestEnv::new();
    env.mkdir("site/img");
    env.mkdir("site/css");
    env.file(b"site/index.html", b"<h1>\n");
    env.file(b"site/img/logo.png", b"png\n");
    env.file(b"site/css/main.css", b"a{}\n");
    let here = env.path();
    let list = fastsum_in(&env, here, &[b"-r", b"site"]);
    assert_eq!(list.status, 0, "{}", list.stderr_str());
    std::fs::write(here.join("SITE.md5"), &list.stdout).unwrap();
    env.file(b"site/img/logo.png", b"png2\n");
    let update = [&b"-r"[..], b"--cache=c.db", b"--update=SITE.md5"];
    let out = fastsum_in(&env, here, &[update[0], update[1], update[2], b"site/img"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stderr_str()
            .contains("site/css/main.css is listed and still there"),
        "{}",
        out.stderr_str()
    );
    assert_eq!(out.stdout_str(), "", "changes said");
    assert_eq!(std::fs::read(here.join("SITE.md5")).unwrap(), list.stdout);
    // The whole tree: the change, and a file really removed is D.
    std::fs::remove_file(here.join("site/css/main.css")).unwrap();
    let out = fastsum_in(&env, here, &[update[0], update[1], update[2], b"site"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(
        out.stdout_str(),
        "D\tsite/css/main.css\nM\tsite/img/logo.png\n"
    );
}

/// `--update --base64` rewrote a hex `sha256sum` list in untagged base64,
/// which no reader (sha256sum, fastsum -c, the next update) takes back;
/// operands that overlap (`t t/sub`, `t t`) wrote every file under the
/// repeated one twice, and every later update, diff and audit refused the
/// list. Both are refused now, the list left byte for byte.
#[test]
fn an_update_that_would_write_an_unreadable_list_is_refused() {
    let env = TestEnv::new();
    env.mkdir("t/sub");
    env.file(b"t/a", b"a\n");
    env.file(b"t/sub/b", b"b\n");
    let made = fastsum_in(&env, env.path(), &[b"-r", b"-a", b"sha256", b"t"]);
    assert_eq!(made.status, 0, "{}", made.stderr_str());
    std::fs::write(env.path().join("L"), &made.stdout).unwrap();
    // sha256sum reads the list as written: an independent check of it.
    let checked = std::process::Command::new("sha256sum")
        .args(["-c", "L"])
        .current_dir(env.path())
        .output()
        .unwrap();
    assert!(checked.status.success(), "{checked:?}");
    for args in [
        &[&b"-r"[..], b"--base64", b"--update=L", b"t"][..],
        &[b"-r", b"--update=L", b"t", b"t/sub"],
        &[b"-r", b"--update=L", b"t", b"t"],
    ] {
        let out = fastsum_in(&env, env.path(), args);
        assert_ne!(out.status, 0, "{args:?}: {}", out.stderr_str());
        assert_eq!(
            std::fs::read(env.path().join("L")).unwrap(),
            made.stdout,
            "{args:?}"
        );
    }
    let out = fastsum_in(&env, env.path(), &[b"-r", b"--update=L", b"t", b"t/sub"]);
    assert!(
        out.stderr_str()
            .contains("was read twice (the operands overlap"),
        "{}",
        out.stderr_str()
    );
}

/// What a JSON or hashdeep list holds beyond what fastsum writes: a
/// record's member of its own (`"owner"`), a comment, a comment after
/// hashdeep's header, a second hashdeep run's section appended. An update
/// writes every line again, so each is refused, naming its line, and the
/// list is left byte for byte (each was dropped, exit 0; a second
/// section's SHA-1 file was rewritten as MD5 and called added). The lists
/// are written by Python's hashlib, never by fastsum; the same list without
/// the extra is updated unchanged (exit 0), so the refusal is the extra's.
#[test]
fn an_update_never_drops_what_fastsum_does_not_write() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"a\n");
    env.file(b"t/b", b"bb\n");
    env.mkdir("cases");
    let here = env.path().to_str().unwrap();
    crate::testenv::python(
        &format!(
            r###"
import hashlib, json, os
here = {here:?}
root = os.path.join(here, 't')
def h(name, n): return hashlib.new(name, open(os.path.join(root, n), 'rb').read()).hexdigest()
def size(n): return os.path.getsize(os.path.join(root, n))
one = ''.join(json.dumps({{"path": "t/" + n, "algorithm": "md5", "digest": h("md5", n), "size": size(n)}}, separators=(',', ':')) + "\n" for n in "ab")
two = ''.join(json.dumps({{"path": "t/" + n, "digests": {{"md5": h("md5", n), "sha256": h("sha256", n)}}, "size": size(n)}}, separators=(',', ':')) + "\n" for n in "ab")
def deep(cols, names):
    head = "%%%% HASHDEEP-1.0\n%%%% size," + ",".join(cols) + ",filename\n## Invoked from: " + here + "\n## $ hashdeep -r " + root + "\n##\n"
    return head + "".join(",".join([str(size(n))] + [h(c, n) for c in cols] + [os.path.join(root, n)]) + "\n" for n in names)
cases = [
    ("json", "t", one, one.replace('"size":2}}', '"size":2,"owner":"alice"}}', 1), 'line 1 has the member "owner"'),
    ("json-several", "t", two, two.replace('"size":3}}', '"size":3,"note":"x"}}', 1), 'line 2 has the member "note"'),
    ("json-comment", "t", one, one + "# reviewed\n", "line 3 is a comment"),
    ("hashdeep", root, deep(["md5"], "ab"), deep(["md5"], "ab") + "## reviewed by alice\n", "line 8 is a comment"),
    ("hashdeep-sections", root, deep(["md5"], "ab"), deep(["md5"], "a") + deep(["sha1"], "b"), "line 7 starts another section (a second hashdeep run's)"),
    ("hashdeep-several", root, deep(["md5", "sha256"], "ab"), deep(["md5", "sha256"], "ab") + "## x\n", "line 8 is a comment"),
]
for number, case in enumerate(cases):
    for part, text in zip(["what", "operand", "clean", "extra", "said"], case):
        open(os.path.join(here, "cases", f"{{number}}.{{part}}"), "w").write(text)
"###
        ),
        b"",
    );
    let list = env.path().join("L");
    for number in 0..6 {
        let part = |name: &str| {
            std::fs::read_to_string(env.path().join(format!("cases/{number}.{name}"))).unwrap()
        };
        let (what, operand, clean, extra) =
            (part("what"), part("operand"), part("clean"), part("extra"));
        let args: [&[u8]; 3] = [b"-r", b"--update=L", operand.as_bytes()];
        std::fs::write(&list, &extra).unwrap();
        let out = fastsum_in(&env, env.path(), &args);
        assert_eq!(out.status, 1, "{what}: {}", out.stderr_str());
        let said = format!(
            "{}, which an update would not write back: nothing was changed",
            part("said")
        );
        assert!(
            out.stderr_str().contains(&said),
            "{what}: {}",
            out.stderr_str()
        );
        assert_eq!(std::fs::read_to_string(&list).unwrap(), extra, "{what}");
        std::fs::write(&list, &clean).unwrap();
        let out = fastsum_in(&env, env.path(), &args);
        assert_eq!(
            out.status,
            0,
            "{what}, without the extra: {}",
            out.stderr_str()
        );
        assert_eq!(
            std::fs::read_to_string(&list).unwrap(),
            clean,
            "{what}, without the extra"
        );
    }
}
