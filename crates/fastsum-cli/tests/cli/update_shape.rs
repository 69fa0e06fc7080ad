//! Issue 63.9: `--update` writes a list back in the shape its lines were
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
