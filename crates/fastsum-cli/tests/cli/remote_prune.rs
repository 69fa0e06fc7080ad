//! `fastsum diff` of a tree against a remote host with the cache: the local tree's directory digests go to the host, and a remote
//! fastsum answers a matching sub-tree with one record instead of its
//! listing. Against a real OpenSSH server on 127.0.0.1: the answer must be
//! the one a full listing gives (and a local diff of the same trees), in
//! fewer bytes; a host that lies about what matched is refused.

use crate::sshd::{self, shim, Sshd};
use crate::testenv::TestEnv;

use std::path::Path;
use std::process::{Command, Output};

use crate::sshd::sh_quote;

const FASTSUM: &str = env!("CARGO_BIN_EXE_fastsum");

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, bytes) in files {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), bytes).unwrap();
    }
}

/// A tree of a few levels, a link among them; `remote` its copy.
fn trees(env: &TestEnv) -> (String, String) {
    let local = env.path().join("local");
    let mut files = vec![("c", "4"), ("a/y", "2"), ("b/z", "3")];
    let names: Vec<String> = (0..200).map(|i| format!("a/deep/f{i:03}")).collect();
    files.extend(names.iter().map(|n| (n.as_str(), "same bytes")));
    write(&local, &files);
    std::os::unix::fs::symlink("y", local.join("a/link")).unwrap();
    let remote = env.path().join("remote");
    let copied = Command::new("cp")
        .arg("-a")
        .arg(&local)
        .arg(&remote)
        .status()
        .unwrap();
    assert!(copied.success());
    let shown = |p: &Path| p.display().to_string();
    (shown(&local), shown(&remote))
}

/// A transport line that keeps a copy of what the host sent in `copy`.
fn counting_rsh(sshd: &Sshd, env: &TestEnv, copy: &Path) -> String {
    let script = env.path().join("count.sh");
    std::fs::write(&script, "out=$1; shift; \"$@\" | tee \"$out\"\n").unwrap();
    let mut words = vec!["sh".to_string(), script.display().to_string()];
    words.push(copy.display().to_string());
    words.extend(sshd.ssh());
    let quoted: Vec<String> = words
        .iter()
        .map(|w| String::from_utf8(sh_quote(w.as_bytes())).unwrap())
        .collect();
    quoted.join(" ")
}

fn diff(env: &TestEnv, args: &[&str]) -> Output {
    Command::new(FASTSUM)
        .arg("diff")
        .args(args)
        .current_dir(env.path())
        .output()
        .unwrap()
}

/// The diff of `local` against `remote` on the host: with the cache (so
/// pruned) or not, through `remote_fastsum`; and the bytes the host sent.
fn remote_diff(
    env: &TestEnv,
    sshd: &Sshd,
    local: &str,
    remote: &str,
    cache: bool,
    remote_fastsum: &str,
) -> (Output, u64) {
    let copy = env.path().join("sent");
    let rsh = counting_rsh(sshd, env, &copy);
    let db = env.path().join("cache.db").display().to_string();
    let cache_arg = format!("--cache={db}");
    let operand = format!("{}:{remote}", sshd.host());
    let mut args = vec![
        local,
        &operand,
        "-e",
        &rsh,
        "--remote-fastsum",
        remote_fastsum,
    ];
    if cache {
        args.push(&cache_arg);
    }
    let out = diff(env, &args);
    let sent = std::fs::metadata(&copy).map_or(0, |m| m.len());
    (out, sent)
}

fn said(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_pruned_remote_diff_answers_as_a_full_one_in_fewer_bytes() {
    let sshd = sshd::start_sshd();
    let env = TestEnv::new();
    let (local, remote) = trees(&env);
    // Unchanged: the root's one record (and the link, to be counted on
    // both sides).
    let (full, full_bytes) = remote_diff(&env, &sshd, &local, &remote, false, FASTSUM);
    let (pruned, pruned_bytes) = remote_diff(&env, &sshd, &local, &remote, true, FASTSUM);
    assert_eq!(full.status.code(), Some(0), "{}", said(&full));
    assert_eq!(pruned.status.code(), Some(0), "{}", said(&pruned));
    assert!(pruned.stdout.is_empty());
    assert_eq!(said(&pruned), said(&full));
    assert!(
        said(&pruned).contains("2 symbolic links left out"),
        "{}",
        said(&pruned)
    );
    assert!(
        pruned_bytes * 20 < full_bytes,
        "{pruned_bytes} bytes pruned, {full_bytes} in full"
    );
    // Changed on the host: b/z modified, c removed, e/new added; a/ still
    // matches. Both ways round, the same changes as a full listing and as
    // a local diff of the two trees.
    write(Path::new(&remote), &[("b/z", "33"), ("e/new", "5")]);
    std::fs::remove_file(Path::new(&remote).join("c")).unwrap();
    // (A remote listing holds no directories: the local diff leaves them
    // out too.)
    let local_diff = diff(&env, &["--ignore-directories", &local, &remote]);
    let (full, full_bytes) = remote_diff(&env, &sshd, &local, &remote, false, FASTSUM);
    let (pruned, pruned_bytes) = remote_diff(&env, &sshd, &local, &remote, true, FASTSUM);
    assert_eq!(pruned.status.code(), Some(1), "{}", said(&pruned));
    assert_eq!(pruned.stdout, full.stdout);
    assert_eq!(pruned.stdout, local_diff.stdout);
    assert_eq!(
        String::from_utf8_lossy(&pruned.stdout),
        "M\tb/z\nD\tc\nA\te/new\n"
    );
    assert!(
        pruned_bytes * 10 < full_bytes,
        "{pruned_bytes} vs {full_bytes}"
    );
    // The remote side old, the local new.
    let operand = format!("{}:{remote}", sshd.host());
    let rsh = counting_rsh(&sshd, &env, &env.path().join("sent"));
    let db = format!("--cache={}", env.path().join("cache.db").display());
    let args = [
        &operand,
        &local[..],
        "-e",
        &rsh,
        "--remote-fastsum",
        FASTSUM,
    ];
    let backwards = diff(&env, &[&args[..], &[&db[..]]].concat());
    let full_backwards = diff(&env, &args);
    assert_eq!(backwards.status.code(), Some(1), "{}", said(&backwards));
    assert_eq!(backwards.stdout, full_backwards.stdout);
    assert_eq!(
        String::from_utf8_lossy(&backwards.stdout),
        "M\tb/z\nA\tc\nD\te/new\n"
    );
}

#[test]
fn a_host_that_lies_about_what_matched_is_refused() {
    let sshd = sshd::start_sshd();
    let env = TestEnv::new();
    let (local, remote) = trees(&env);
    write(Path::new(&remote), &[("b/z", "33")]);
    let shims = env.path().join("shims");
    std::fs::create_dir(&shims).unwrap();
    // Each shim is the real fastsum with its answer bent; --version and
    // --help pass through, so the host is taken for a fastsum that prunes.
    let bent = [
        (
            "another-digest",
            r#"sed 's/"directory_digest":"[0-9a-f]*"/"directory_digest":"00000000000000000000000000000000"/'"#,
            "another digest",
        ),
        ("not-offered", r#"sed 's|/a/"|/a0/"|'"#, "not offered"),
        // a/ said to match, and a file inside it listed as well.
        (
            "inside",
            r#"sed 's|^\({"path":"[^"]*/a/\)","algorithm":"md5","directory_digest"|&|; /\/a\/"/a\
{"path":"'"$P"'/a/y","algorithm":"md5","digest":"c81e728d9d4c2f636f067f89cc14862c","size":1}'"#,
            "inside a directory it said matched",
        ),
    ];
    for (name, filter, why) in bent {
        let body = format!(
            "case \"$1\" in --version|--help) exec {FASTSUM} \"$@\";; esac\n\
             for P; do :; done\n\
             {FASTSUM} \"$@\" | {filter}\n"
        );
        shim(&shims, name, &body);
        let fake = shims.join(name).display().to_string();
        let (out, _) = remote_diff(&env, &sshd, &local, &remote, true, &fake);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", said(&out));
        assert!(out.stdout.is_empty(), "{name}");
        assert!(said(&out).contains(why), "{name}: {}", said(&out));
    }
    // Without offers (no cache) a directory record is a lie too.
    let fake = shims.join("not-offered").display().to_string();
    let dir_record = format!(
        "case \"$1\" in --version|--help) exec {FASTSUM} \"$@\";; esac\n\
         for P; do :; done\n\
         printf '{{\"path\":\"%s/\",\"algorithm\":\"md5\",\"directory_digest\":\"%s\"}}\\n' \"$P\" 00000000000000000000000000000000\n"
    );
    shim(&shims, "unasked", &dir_record);
    let unasked = shims.join("unasked").display().to_string();
    let (out, _) = remote_diff(&env, &sshd, &local, &remote, false, &unasked);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("not asked for"), "{}", said(&out));
    drop(fake);
}
