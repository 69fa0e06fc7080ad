//! `fastsum dupes --dirs` against an oracle that compares
//! directories by their bytes (Python: every path below, its kind, and
//! the bytes or link target of each), a group left out only when it is
//! one relative path inside every member of a group reported
//! (anything else, a copy of a sub-tree elsewhere or two copies
//! inside one member, is reported).

use crate::testenv::{python, TestEnv};

use std::os::unix::fs::symlink;
use std::process::Command;

/// Groups of identical directories by bytes, largest first, none inside
/// a directory of a group kept; one line per group, paths sorted, tab
/// separated.
const ORACLE: &str = r#"
import os, sys
cwd, root = sys.stdin.read().split('\n')[:2]
os.chdir(cwd)
def content(d):
    items = []
    for base, dirs, files in os.walk(d):
        rel = os.path.relpath(base, d)
        for n in dirs + files:
            p = os.path.join(base, n)
            r = os.path.normpath(os.path.join(rel, n))
            if os.path.islink(p):
                items.append((r, 'l', os.readlink(p)))
                if n in dirs: dirs.remove(n)
            elif os.path.isdir(p):
                items.append((r, 'd', ''))
            else:
                items.append((r, 'f', open(p, 'rb').read()))
    return tuple(sorted(items))
def size(c): return sum(len(x[2]) for x in c if x[1] == 'f')
def files(c): return sum(1 for x in c if x[1] == 'f')
dirs = [b for b, _, _ in os.walk(root)]
groups = {}
for d in dirs:
    c = content(d)
    if files(c): groups.setdefault(c, []).append(d + '/')
found = sorted(((size(c), -min(m.count('/') for m in ms), sorted(ms)) for c, ms in groups.items() if len(ms) > 1), reverse=True)
kept = []
def implied(k, ms):
    # ms is one relative path inside every member of k, and nothing more.
    if len(k) != len(ms): return False
    for r in k:
        if ms[0].startswith(r) and ms[0] != r:
            below = ms[0][len(r):]
            return set(x + below for x in k) == set(ms)
    return False
for s, _, ms in found:
    if any(implied(k, ms) for k in kept): continue
    kept.append(ms)
    print('\t'.join(ms))
"#;

fn tree(env: &TestEnv) {
    let p = env.path();
    env.mkdir("t/proj/src/deep");
    env.mkdir("t/proj/empty");
    env.file(b"t/proj/src/main.c", b"int main() { return 0; }\n");
    env.file(b"t/proj/src/deep/data", &vec![9u8; 100_000]);
    env.file(b"t/proj/README", b"readme\n");
    symlink("src/main.c", p.join("t/proj/link")).unwrap();
    let cp = |from: &str, to: &str| {
        assert!(Command::new("cp")
            .args(["-a", from, to])
            .current_dir(p)
            .status()
            .unwrap()
            .success());
    };
    // Identical copies, and near misses that must not group with them.
    cp("t/proj", "t/copy1");
    cp("t/proj", "t/backup");
    cp("t/proj", "t/one-byte");
    std::fs::write(p.join("t/one-byte/README"), b"readmE\n").unwrap();
    cp("t/proj", "t/more-empty");
    std::fs::create_dir(p.join("t/more-empty/empty/x")).unwrap();
    cp("t/proj", "t/other-link");
    std::fs::remove_file(p.join("t/other-link/link")).unwrap();
    symlink("README", p.join("t/other-link/link")).unwrap();
    cp("t/proj", "t/renamed");
    std::fs::rename(p.join("t/renamed/README"), p.join("t/renamed/README.txt")).unwrap();
    // A sub-tree duplicated on its own, elsewhere.
    env.mkdir("t/elsewhere");
    cp("t/proj/src", "t/elsewhere/src-copy");
}

#[test]
fn identical_directories_are_those_an_oracle_finds_by_bytes() {
    let env = TestEnv::new();
    tree(&env);
    let want = python(ORACLE, format!("{}\nt", env.path().display()).as_bytes());
    let out = env.fastsum("fastsum", &[b"dupes", b"--dirs", b"--json", b"t"], b"");
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let got = python(
        "import json, sys\nfor l in sys.stdin:\n    print('\\t'.join(d['path'] for d in json.loads(l)['directories']))",
        &out.stdout,
    );
    assert_eq!(got, want);
    assert_eq!(
        got.lines().next().unwrap(),
        "t/backup/\tt/copy1/\tt/proj/",
        "the whole projects first, their sub-trees not again"
    );
    // The text form, and a symlinked operand naming a directory already
    // walked: one directory, not a duplicate of itself.
    symlink("t/copy1", env.path().join("alias")).unwrap();
    let out = env.fastsum("fastsum", &[b"dupes", b"--dirs", b"t", b"alias"], b"");
    let text = out.stdout_str();
    assert!(
        text.starts_with("100032 bytes, 3 files each, 3 directories, blake3 "),
        "{text}"
    );
    let first: Vec<&str> = text.lines().skip(1).take(3).collect();
    assert!(
        first.contains(&"  alias/") != first.contains(&"  t/copy1/"),
        "one name of that directory: {text}"
    );
    // The src/ group is reported (t/elsewhere/src-copy is one more copy,
    // inside no reported member), each directory in it once, under one name.
    assert!(!text.contains("  alias/src/"), "{text}");
    assert_eq!(text.matches("  t/copy1/src/\n").count(), 1, "{text}");
    assert!(text.contains("  t/elsewhere/src-copy/\n"), "{text}");
    assert!(out.stderr_str().contains("redundant"));
    // What applies to single files only is refused.
    let out = env.fastsum("fastsum", &[b"dupes", b"--dirs", b"--remove", b"t"], b"");
    assert_eq!(out.status, 2);
    assert!(out.stderr_str().contains("apply to files only"));
}

/// `Y` identical to `C1/A` while `C1` = `C2`: the group
/// {C1/A, C2/A, Y} is reported (it was hidden); copies inside one member
/// (`C1/A` = `C1/B`) too; overlapping operands count nothing twice.
#[test]
fn a_group_is_hidden_only_when_a_reported_group_implies_it() {
    let env = TestEnv::new();
    env.mkdir("dd2/C1/A");
    env.mkdir("dd2/Y");
    env.file(b"dd2/C1/A/x", b"one\n");
    env.file(b"dd2/Y/x", b"one\n");
    env.file(b"dd2/C1/other", b"two\n");
    let cp = |from: &str, to: &str| {
        let done = Command::new("cp")
            .args(["-a", from, to])
            .current_dir(env.path())
            .status();
        assert!(done.unwrap().success());
    };
    cp("dd2/C1", "dd2/C2");
    let groups = |args: &[&[u8]]| {
        let mut all: Vec<&[u8]> = vec![b"dupes", b"--dirs", b"--json"];
        all.extend_from_slice(args);
        let out = env.fastsum("fastsum", &all, b"");
        assert_eq!(out.status, 0, "{}", out.stderr_str());
        let got = python(
            "import json, sys\nfor l in sys.stdin:\n    d = json.loads(l)\n    print(d['size'], d['files'], '\\t'.join(m['path'] for m in d['directories']))",
            &out.stdout,
        );
        (got, out.stderr_str())
    };
    // The groups' directories, as the byte-comparing oracle finds them.
    let agrees_with_the_oracle = |got: &str| {
        let want = python(ORACLE, format!("{}\ndd2", env.path().display()).as_bytes());
        let names: String = got
            .lines()
            .map(|l| l.splitn(3, ' ').nth(2).unwrap().to_owned() + "\n")
            .collect();
        assert_eq!(names, want);
    };
    let (got, said) = groups(&[b"dd2"]);
    assert_eq!(
        got,
        "8 2 dd2/C1/\tdd2/C2/\n4 1 dd2/C1/A/\tdd2/C2/A/\tdd2/Y/\n"
    );
    agrees_with_the_oracle(&got);
    // Remove C2 and Y: 12 bytes, each counted once.
    assert!(said.contains("12 bytes redundant"), "{said}");
    // Two copies inside one member.
    env.mkdir("dd2/C1/B");
    env.file(b"dd2/C1/B/x", b"one\n");
    std::fs::remove_dir_all(env.path().join("dd2/C2")).unwrap();
    cp("dd2/C1", "dd2/C2");
    let (got, said) = groups(&[b"dd2"]);
    agrees_with_the_oracle(&got);
    assert!(
        got.contains("dd2/C1/A/\tdd2/C1/B/\tdd2/C2/A/\tdd2/C2/B/\tdd2/Y/"),
        "{got}"
    );
    assert!(said.contains("20 bytes redundant"), "{said}");
    // Overlapping operands: the same groups, sizes and counts.
    for args in [
        &[&b"dd2"[..], b"dd2"][..],
        &[b"dd2/C2", b"dd2", b"dd2/C1/A"],
        &[b"dd2", b"dd2/C1"],
    ] {
        let (again, said_again) = groups(args);
        assert_eq!(again, got, "{args:?}");
        assert_eq!(said_again, said, "{args:?}");
    }
}
