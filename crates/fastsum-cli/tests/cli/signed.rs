//! Signed lists in one step: `fastsum -c LIST --signature SIG
//! --key KEY` (and a list carrying its signature, `--key` alone) against
//! the reference verifiers on keys made here: `minisign -V`, `signify -V`
//! and `-C`, `ssh-keygen -Y verify`, `gpgv`. Each case (good, another
//! key, the list changed after signing, and the format's own refusals)
//! gets the same verdict from both; a refused list checks no file
//! (exit 2, no line on stdout). Where gpgv accepts what fastsum refuses
//! (a revoked key, REVKEYSIG; unsigned text after the block) the test
//! says so and README documents it.

use std::fs;
use std::process::Command;

use crate::testenv::{Outcome, TestEnv};

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// A shell script in the test's directory (the reference tools, with
/// fixed names only): its exit status.
fn sh(env: &TestEnv, script: &str) -> i32 {
    let out = Command::new("bash")
        .args(["-c", script])
        .current_dir(env.path())
        .env("GNUPGHOME", env.path().join("gnupg"))
        .output()
        .expect("bash runs");
    if !out.status.success() {
        eprintln!("{script}: {}", String::from_utf8_lossy(&out.stderr));
    }
    out.status.code().unwrap_or(-1)
}

/// Two files and their list (`sha256sum --tag`, which `signify -C` reads).
fn tree(env: &TestEnv) {
    env.file(b"a", b"hello\n");
    env.file(b"b", b"world\n");
    assert_eq!(sh(env, "sha256sum --tag a b > SUMS"), 0);
}

/// fastsum's verdict on a signed list: Ok(stdout) when the signature held
/// (files checked, all OK), Err(stderr) when refused (exit 2, nothing
/// checked).
fn verdict(env: &TestEnv, args: &[&str]) -> Result<String, String> {
    let out = fastsum(env, args);
    match out.status {
        0 => Ok(out.stdout_str()),
        2 => {
            assert_eq!(out.stdout_str(), "", "a refused list checks no file");
            Err(out.stderr_str())
        }
        s => panic!("exit {s}: {}", out.stderr_str()),
    }
}

/// The list changed after signing: a line for a third file.
fn change(env: &TestEnv, list: &str) {
    let mut bytes = fs::read(env.path().join(list)).unwrap();
    bytes.extend_from_slice(
        b"SHA256 (a) = e258d248fda94c63753607f7c4494ee0fcbe92f1a76bfdac795c9d84101eb317\n",
    );
    fs::write(env.path().join(list), bytes).unwrap();
}

#[test]
fn minisign_verdicts_are_minisigns() {
    if crate::testenv::lacks(&["minisign"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let made = "minisign -G -W -p k.pub -s k.sec && minisign -G -W -p other.pub -s other.sec \
                && minisign -S -s k.sec -m SUMS -x SUMS.minisig";
    assert_eq!(sh(&env, &format!("{made} </dev/null >/dev/null")), 0);
    let id = fs::read_to_string(env.path().join("k.pub")).unwrap();
    let id = id
        .lines()
        .next()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_owned();
    for (key, change_it) in [("k.pub", false), ("other.pub", false), ("k.pub", true)] {
        if change_it {
            change(&env, "SUMS");
        }
        let reference = sh(
            &env,
            &format!("minisign -V -p {key} -m SUMS -x SUMS.minisig"),
        );
        let ours = verdict(
            &env,
            &["-c", "SUMS", "--signature", "SUMS.minisig", "--key", key],
        );
        assert_eq!(
            ours.is_ok(),
            reference == 0,
            "{key} changed={change_it}: {ours:?}"
        );
        if let Ok(stdout) = &ours {
            assert_eq!(stdout, "a: OK\nb: OK\n");
            let err = fastsum(
                &env,
                &["-c", "SUMS", "--signature", "SUMS.minisig", "--key", key],
            );
            assert!(
                err.stderr_str()
                    .contains(&format!("minisign signature by key id {id}")),
                "{}",
                err.stderr_str()
            );
        }
    }
}

#[test]
fn signify_verdicts_are_signifys() {
    if crate::testenv::lacks(&["signify-openbsd"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let made =
        "signify-openbsd -G -n -p k.pub -s k.sec && signify-openbsd -G -n -p o.pub -s o.sec \
                && signify-openbsd -S -s k.sec -m SUMS -x SUMS.sig \
                && signify-openbsd -S -e -s k.sec -m SUMS -x SHA256.sig";
    assert_eq!(sh(&env, made), 0);
    for (key, change_it) in [("k.pub", false), ("o.pub", false), ("k.pub", true)] {
        if change_it {
            change(&env, "SUMS");
            let mut sig = fs::read(env.path().join("SHA256.sig")).unwrap();
            let last = sig.len() - 2;
            sig[last] ^= 1;
            fs::write(env.path().join("SHA256.sig"), sig).unwrap();
        }
        // Detached (-V), then embedded (-C: fastsum replaces signify -C).
        let reference = sh(
            &env,
            &format!("signify-openbsd -V -q -p {key} -m SUMS -x SUMS.sig"),
        );
        let ours = verdict(
            &env,
            &["-c", "SUMS", "--signature", "SUMS.sig", "--key", key],
        );
        assert_eq!(
            ours.is_ok(),
            reference == 0,
            "-V {key} changed={change_it}: {ours:?}"
        );
        let reference = sh(
            &env,
            &format!("signify-openbsd -C -q -p {key} -x SHA256.sig"),
        );
        let ours = verdict(&env, &["-c", "SHA256.sig", "--key", key]);
        assert_eq!(
            ours.is_ok(),
            reference == 0,
            "-C {key} changed={change_it}: {ours:?}"
        );
        if let Ok(stdout) = ours {
            assert_eq!(stdout, "a: OK\nb: OK\n");
        }
    }
}

#[test]
fn ssh_verdicts_are_ssh_keygens() {
    let env = TestEnv::new();
    tree(&env);
    let made = "ssh-keygen -q -t ed25519 -N '' -f id -C alice && ssh-keygen -q -t ed25519 -N '' -f other \
                && ssh-keygen -Y sign -f id -n file SUMS 2>/dev/null \
                && cp SUMS SUMS.orig && ssh-keygen -Y sign -f id -n other SUMS.orig 2>/dev/null \
                && echo \"alice@example.org $(cut -d' ' -f1,2 id.pub)\" > allowed \
                && echo \"alice@example.org namespaces=\\\"git\\\" $(cut -d' ' -f1,2 id.pub)\" > git-only \
                && echo \"bob@example.org $(cut -d' ' -f1,2 other.pub)\" > others";
    assert_eq!(sh(&env, made), 0);
    let cases = [
        ("allowed", "SUMS.sig", "file"),
        ("others", "SUMS.sig", "file"),
        ("allowed", "SUMS.orig.sig", "file"),
        ("allowed", "SUMS.orig.sig", "other"),
        ("git-only", "SUMS.sig", "file"),
    ];
    for (signers, sig, namespace) in cases {
        let reference = sh(
            &env,
            &format!("ssh-keygen -Y verify -f {signers} -I alice@example.org -n {namespace} -s {sig} < SUMS"),
        );
        let mut args = vec!["-c", "SUMS", "--signature", sig, "--key", signers];
        if namespace != "file" {
            args.extend(["--namespace", namespace]);
        }
        let ours = verdict(&env, &args);
        assert_eq!(
            ours.is_ok(),
            reference == 0,
            "{signers} {sig} {namespace}: {ours:?}"
        );
    }
    let out = fastsum(
        &env,
        &["-c", "SUMS", "--signature", "SUMS.sig", "--key", "allowed"],
    );
    assert!(out
        .stderr_str()
        .contains("SSH signature by principal alice@example.org (key SHA256:"));
    change(&env, "SUMS");
    let reference = sh(
        &env,
        "ssh-keygen -Y verify -f allowed -I alice@example.org -n file -s SUMS.sig < SUMS",
    );
    let ours = verdict(
        &env,
        &["-c", "SUMS", "--signature", "SUMS.sig", "--key", "allowed"],
    );
    assert_eq!((ours.is_ok(), reference == 0), (false, false), "{ours:?}");
}
