//! The first hour's setup steps, run as a new user runs them:
//! the guide's manual page step on a fresh `$HOME`, `scripts/install-links`
//! into a directory that is not there yet, `scripts/test` building where
//! `CARGO_TARGET_DIR` says, and `scrub`'s usage line.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::testenv;

use testenv::TestEnv;

/// The repository's top (the CLI crate is two levels down).
fn top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh `$HOME` whose `~/.cargo/bin` holds fastsum (as `cargo install`
/// leaves it), and a `PATH` of that and the system's.
fn fresh_home(env: &TestEnv) -> (PathBuf, String) {
    let home = env.mkdir("home");
    let bin = home.join(".cargo/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(crate::testenv::fastsum_bin(), bin.join("fastsum")).unwrap();
    (
        home,
        format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
    )
}

/// The manual page step for a `cargo install`, taken from docs/GUIDE.md
/// itself (README points there), works on a fresh
/// `$HOME`: `man` finds the page afterwards (the old step wrote it to
/// `~/.local/share/man`, which man does not search unless `~/.local/bin`
/// is on PATH).
#[test]
fn the_guides_manual_page_step_works_on_a_fresh_home() {
    if Command::new("man").arg("-w").arg("man").output().is_err() {
        crate::testenv::skip("no man on this machine");
        return;
    }
    let guide = std::fs::read_to_string(top().join("docs/GUIDE.md")).unwrap();
    let step = guide
        .lines()
        .find(|l| l.contains("fastsum man >"))
        .expect("docs/GUIDE.md has a manual page step")
        .replace("&& man fastsum", "");
    let env = TestEnv::new();
    let (home, path) = fresh_home(&env);
    let run = |line: &str| {
        Command::new("sh")
            .args(["-c", line])
            .env_clear()
            .env("HOME", &home)
            .env("PATH", &path)
            .current_dir(&home)
            .output()
            .unwrap()
    };
    let made = run(&step);
    assert!(made.status.success(), "{step}: {made:?}");
    let found = run("man -w fastsum");
    assert!(found.status.success(), "man does not find it: {found:?}");
    let page = String::from_utf8(found.stdout).unwrap();
    let page = std::fs::read_to_string(page.trim()).unwrap();
    assert!(page.starts_with(".TH FASTSUM 1"), "{page:.200}");
}

/// `scripts/install-links DIR` makes DIR when it is not there, says so
/// and that it is not on PATH, and the links it makes are the tools.
#[test]
fn install_links_makes_the_directory_it_is_given() {
    if crate::testenv::lacks(&["md5sum", "sha256sum", "b2sum", "cksum", "sum"]) {
        return;
    }
    let env = TestEnv::new();
    let (home, path) = fresh_home(&env);
    let dir = home.join("no/such/dir");
    let out = Command::new(top().join("scripts/install-links"))
        .arg(&dir)
        .env("PATH", &path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}{warned}");
    assert!(
        said.starts_with(&format!("made {}\n", dir.display())),
        "{said}"
    );
    assert!(warned.contains("is not on PATH"), "{warned}");
    env.file(b"f", b"some bytes\n");
    for tool in ["md5sum", "sha256sum", "cksum", "sum", "b2sum"] {
        let ours = Command::new(dir.join(tool))
            .arg("f")
            .current_dir(env.path())
            .output()
            .unwrap();
        let theirs = env.reference(tool, &[b"f"], b"");
        assert_eq!(
            (ours.stdout, ours.status.code()),
            (theirs.stdout, Some(theirs.status)),
            "{tool}"
        );
    }
    // A DIR that is a file is refused, and nothing is made.
    let file = env.file(b"a-file", b"");
    let out = Command::new(top().join("scripts/install-links"))
        .arg(&file)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}

/// `scripts/test` runs every step against the binary under
/// `CARGO_TARGET_DIR`: run with each step replaced by a stub that notes
/// what it was given (cargo, the suites, the Python test run).
#[test]
fn scripts_test_honours_cargo_target_dir() {
    let env = TestEnv::new();
    let copy = env.mkdir("repo");
    std::fs::create_dir_all(copy.join("scripts/tests")).unwrap();
    std::fs::create_dir_all(copy.join("scripts/check")).unwrap();
    std::fs::create_dir_all(copy.join("crates/fastsum-py")).unwrap();
    std::fs::create_dir_all(copy.join("target/py-venv/bin")).unwrap();
    std::fs::create_dir_all(copy.join("home/.cargo/bin")).unwrap();
    std::fs::copy(top().join("scripts/test"), copy.join("scripts/test")).unwrap();
    let log = copy.join("log");
    let stub = |path: PathBuf| {
        let text = format!(
            "#!/bin/sh\necho \"$(basename \"$0\") $* FASTSUM=${{FASTSUM:-}}\" >> '{}'\n",
            log.display()
        );
        // Words of the comments too; a folder not made is not a step.
        if std::fs::write(&path, text).is_ok() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    };
    let script = std::fs::read_to_string(top().join("scripts/test")).unwrap();
    for word in script.split_whitespace() {
        if let Some(name) = word.strip_prefix("scripts/").filter(|n| !n.contains('$')) {
            if name != "test" {
                stub(copy.join("scripts").join(name));
            }
        }
    }
    stub(copy.join("home/.cargo/bin/cargo"));
    stub(copy.join("target/py-venv/bin/python"));
    let out = Command::new(copy.join("scripts/test"))
        .env("HOME", copy.join("home"))
        .env("CARGO_TARGET_DIR", "/elsewhere/t")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let log = std::fs::read_to_string(&log).unwrap();
    let given: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("gnu-tests") || l.starts_with("rex") || l.starts_with("ansible"))
        .collect();
    assert_eq!(given.len(), 6, "{log}");
    for line in given {
        assert!(
            line.ends_with("FASTSUM=/elsewhere/t/debug/fastsum"),
            "{line}"
        );
    }
}

/// `scrub`'s usage line shows trees and `--manifest` as the two ways, one
/// at a time (an ArgGroup), and both at once is a usage error.
#[test]
fn scrubs_usage_line_shows_trees_or_a_manifest() {
    let env = TestEnv::new();
    let help = env.fastsum("fastsum", &[b"scrub", b"--help"], b"");
    let usage = help
        .stdout_str()
        .lines()
        .find(|l| l.starts_with("Usage:"))
        .unwrap_or_default()
        .to_string();
    assert!(usage.ends_with(" <PATHS|--manifest <LIST>>"), "{usage}");
    env.mkdir("t");
    env.file(b"list", b"");
    let both = env.fastsum("fastsum", &[b"scrub", b"--manifest", b"list", b"t"], b"");
    assert_eq!(both.status, 2, "{}", both.stderr_str());
    assert!(
        both.stderr_str().contains("cannot be used with"),
        "{}",
        both.stderr_str()
    );
}
