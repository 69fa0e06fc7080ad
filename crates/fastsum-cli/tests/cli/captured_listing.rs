//! A remote side run by someone else (a deploy tool over its own
//! connection): `fastsum remote-command --text` run through `sh` as a
//! terminal would pass it back, read by `diff --remote-listing`. The
//! corpus generator's own list of changes must come out, by every method;
//! a listing cut short, tampered with or not fastsum's is refused, with no
//! plan printed.

use crate::testenv;

use std::process::Command;

use testenv::{as_expected, changes_corpus, TestEnv};

fn fastsum(env: &TestEnv, args: &[&str]) -> std::process::Output {
    Command::new(crate::testenv::fastsum_bin())
        .args(args)
        .current_dir(env.path())
        .output()
        .unwrap()
}

/// What the host prints for `remote-command --text PATH`, passed through a
/// terminal (every `\n` becomes `\r\n`) and a runner that drops the last one.
fn captured(env: &TestEnv, path: &str, method: &str, algorithm: &str) -> Vec<u8> {
    let binary = crate::testenv::fastsum_bin();
    let made = fastsum(
        env,
        &[
            "remote-command",
            "--text",
            "-a",
            algorithm,
            "--remote-method",
            method,
            "--remote-fastsum",
            binary,
            path,
        ],
    );
    assert!(made.status.success());
    let command = String::from_utf8(made.stdout).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(command.trim_end())
        .output()
        .unwrap();
    assert!(out
        .stdout
        .iter()
        .all(|b| b.is_ascii_graphic() || b" \n".contains(b)));
    let text = String::from_utf8(out.stdout).unwrap().replace('\n', "\r\n");
    text.trim_end().as_bytes().to_vec()
}

#[test]
fn a_captured_listing_gives_the_corpus_changes_by_every_method() {
    let env = TestEnv::new();
    let (top, expected) = changes_corpus(&env);
    let (old, new) = (
        top.join("old").display().to_string(),
        top.join("new").display().to_string(),
    );
    for (method, algorithm) in [
        ("fastsum", "xxh128"),
        ("coreutils", "md5"),
        ("perl", "sha1"),
        ("python", "md5"),
    ] {
        std::fs::write(
            env.path().join("listing"),
            captured(&env, &old, method, algorithm),
        )
        .unwrap();
        let remote = format!("deploy-host:{old}");
        let out = fastsum(
            &env,
            &[
                "diff",
                "-a",
                algorithm,
                "--remote-listing",
                "listing",
                "-v",
                &remote,
                &new,
            ],
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{method}: {said}");
        assert!(
            said.contains(&format!("hashed there by the {method} method")),
            "{said}"
        );
        assert_eq!(
            as_expected(&String::from_utf8_lossy(&out.stdout)),
            expected,
            "{method}"
        );
    }
}

#[test]
fn the_plan_lists_what_to_send_what_moved_and_what_only_the_remote_has() {
    let env = TestEnv::new();
    let (top, expected) = changes_corpus(&env);
    let (old, new) = (
        top.join("old").display().to_string(),
        top.join("new").display().to_string(),
    );
    std::fs::write(
        env.path().join("listing"),
        captured(&env, &old, "coreutils", "md5"),
    )
    .unwrap();
    let remote = format!("h:{old}");
    let out = fastsum(
        &env,
        &[
            "diff",
            "--plan",
            "--remote-listing",
            "listing",
            &remote,
            &new,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let plan = String::from_utf8(out.stdout).unwrap();
    assert_eq!(plan.lines().count(), 1, "{plan}");
    assert!(plan.starts_with("{\"plan\":1,\"complete\":true,"), "{plan}");
    // Every change of the generator's list is in its place in the plan.
    for line in expected.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let quoted = |p: &str| format!("\"{}\"", p.replace('\\', "\\\\").replace('"', "\\\""));
        let (section, name) = match f[0] {
            "added" | "modified" | "typechange" => ("\"send\":", quoted(f[2])),
            "removed" => ("\"only_old\":", quoted(f[1])),
            "moved" => ("\"moved\":", quoted(f[2])),
            other => panic!("{other}"),
        };
        let at = plan.find(section).unwrap();
        let end = plan[at..].find(']').map_or(plan.len(), |e| at + e);
        assert!(
            plan[at..end].contains(&name),
            "{line} not in {section}: {plan}"
        );
    }
}

#[test]
fn a_listing_cut_short_tampered_with_or_foreign_is_refused_without_a_plan() {
    let env = TestEnv::new();
    let (top, _) = changes_corpus(&env);
    let (old, new) = (
        top.join("old").display().to_string(),
        top.join("new").display().to_string(),
    );
    let whole = captured(&env, &old, "perl", "md5");
    let text = String::from_utf8(whole.clone()).unwrap();
    let stream_end = text.find("fastsum-remote-stderr").unwrap();
    let cut = text[..stream_end]
        .trim_end()
        .rsplit_once("\r\n")
        .unwrap()
        .0
        .to_string();
    let mut tampered = text.clone();
    tampered.replace_range(stream_end - 10..stream_end - 9, "z");
    for (what, listing) in [
        ("cut short", cut.into_bytes()),
        ("a byte that is not hex", tampered.into_bytes()),
        (
            "not a listing",
            b"total 0\r\ndrwxr-xr-x 2 root root\r\n".to_vec(),
        ),
        ("empty", Vec::new()),
    ] {
        std::fs::write(env.path().join("listing"), listing).unwrap();
        let remote = format!("h:{old}");
        let out = fastsum(
            &env,
            &[
                "diff",
                "--plan",
                "--remote-listing",
                "listing",
                &remote,
                &new,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert!(out.stdout.is_empty(), "{what}: a plan was printed");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(&format!("h:{old}")), "{what}: {said}");
    }
    // The option stands for exactly one remote side.
    for args in [
        vec!["diff", "--remote-listing", "listing", &old, &new],
        vec!["diff", "--remote-listing", "listing", "a:/x", "b:/y"],
    ] {
        let out = fastsum(&env, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn several_paths_give_one_listing_each_in_their_order() {
    let env = TestEnv::new();
    let (top, expected) = changes_corpus(&env);
    let (old, new) = (
        top.join("old").display().to_string(),
        top.join("new").display().to_string(),
    );
    let missing = top.join("missing").display().to_string();
    let made = fastsum(&env, &["remote-command", "--text", &missing, &old, &new]);
    assert!(made.status.success());
    let command = String::from_utf8(made.stdout).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(command.trim_end())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts: Vec<String> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("fastsum-remote-text 1") {
            parts.push(String::new());
        }
        parts.last_mut().unwrap().push_str(line);
    }
    assert_eq!(parts.len(), 3, "{text}");
    // The missing path says so; the others are whole listings of their own.
    std::fs::write(env.path().join("listing"), &parts[0]).unwrap();
    let out = fastsum(
        &env,
        &[
            "diff",
            "--remote-listing",
            "listing",
            &format!("h:{missing}"),
            &new,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No such file or directory"));
    std::fs::write(env.path().join("listing"), &parts[1]).unwrap();
    let out = fastsum(
        &env,
        &[
            "diff",
            "--remote-listing",
            "listing",
            &format!("h:{old}"),
            &new,
        ],
    );
    assert_eq!(as_expected(&String::from_utf8_lossy(&out.stdout)), expected);
    std::fs::write(env.path().join("listing"), &parts[2]).unwrap();
    let out = fastsum(
        &env,
        &[
            "diff",
            "--remote-listing",
            "listing",
            &format!("h:{new}"),
            &new,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Raw streams cannot be told apart: several paths need --text.
    let raw = fastsum(&env, &["remote-command", &old, &new]);
    assert_eq!(raw.status.code(), Some(2));
}
