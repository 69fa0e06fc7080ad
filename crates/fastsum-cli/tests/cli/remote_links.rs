//! A remote run counts the symbolic links it leaves out, as a
//! local run does, by every method (against a real OpenSSH server on
//! 127.0.0.1, sshd.rs). The tree holds a known number of links: to a file,
//! to a directory (not followed), dangling, with a newline in its name,
//! two levels down; its root is also reached through a symlink (followed,
//! as an operand is, so not counted).

use crate::sshd;
use crate::testenv::TestEnv;

use std::os::unix::fs::symlink;
use std::process::{Command, Output, Stdio};

use crate::sshd::sh_quote;

/// The links the tree below holds.
const LINKS: usize = 5;

fn tree() -> TestEnv {
    let env = TestEnv::new();
    env.mkdir("t/sub/deep");
    env.file(b"t/a", b"one");
    env.file(b"t/sub/b", b"two");
    env.file(b"t/sub/deep/c", b"three");
    let p = env.path();
    symlink("a", p.join("t/la")).unwrap();
    symlink("sub", p.join("t/ld")).unwrap();
    symlink("nowhere", p.join("t/dangling")).unwrap();
    symlink("../a", p.join("t/sub/new\nline")).unwrap();
    symlink("c", p.join("t/sub/deep/x")).unwrap();
    symlink("t", p.join("tl")).unwrap();
    env
}

fn fastsum(env: &TestEnv, args: &[String]) -> Output {
    Command::new(crate::testenv::fastsum_bin())
        .args(args)
        .current_dir(env.path())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn words(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn said(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_remote_method_counts_the_links_it_leaves_out() {
    let sshd = sshd::start_sshd();
    let env = tree();
    // BSD's md5 is not on Linux: the shim prints `md5 -q FILE`'s digest.
    let shims = tempfile::tempdir().unwrap();
    sshd::shim(
        shims.path(),
        "md5",
        "[ \"$1\" = -q ] || exit 64\nshift\nfor f do r=$(md5sum < \"$f\") || exit 1; printf '%s\\n' \"${r%% *}\"; done\n",
    );
    let rsh: Vec<String> = sshd
        .ssh_with_path(shims.path())
        .iter()
        .map(|w| String::from_utf8(sh_quote(w.as_bytes())).unwrap())
        .collect();
    let rsh = rsh.join(" ");
    let host = sshd.host();
    for root in ["t", "tl"] {
        let path = env.path().join(root).display().to_string();
        let local = fastsum(&env, &words(&["-r", &path]));
        assert_eq!(local.status.code(), Some(0));
        assert_eq!(
            said(&local),
            format!("fastsum: {LINKS} symbolic links left out (-L follows them)\n")
        );
        let want = String::from_utf8_lossy(&local.stdout)
            .replace(&format!("  {path}"), &format!("  {host}:{path}"));
        for method in ["fastsum", "coreutils", "bsd", "perl", "python"] {
            let mut args = words(&["-r", "-e", &rsh, "--remote-method", method]);
            args.extend(words(&["--remote-fastsum", crate::testenv::fastsum_bin()]));
            args.push(format!("{host}:{path}"));
            let out = fastsum(&env, &args);
            let what = format!("{root} {method}: {}", said(&out));
            assert_eq!(out.status.code(), Some(0), "{what}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{what}");
            assert_eq!(
                said(&out),
                format!(
                    "fastsum: {host}:{path}: {LINKS} symbolic links left out \
                     (remote listings hold regular files only)\n"
                ),
                "{what}"
            );
            // diff against the local tree: both sides' links counted, the
            // files unchanged.
            let mut args = words(&["diff", "-e", &rsh, "--remote-method", method]);
            args.extend(words(&[
                "--remote-fastsum",
                crate::testenv::fastsum_bin(),
                "t",
            ]));
            args.push(format!("{host}:{path}"));
            let out = fastsum(&env, &args);
            assert_eq!(out.status.code(), Some(0), "diff {what}");
            assert_eq!(
                said(&out),
                format!(
                    "fastsum diff: {} symbolic links left out (manifests and remote \
                     listings hold regular files only)\n",
                    2 * LINKS
                ),
                "diff {what}"
            );
        }
    }
}
