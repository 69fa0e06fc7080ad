//! Lists `openssl dgst` writes (`SHA2-256(NAME)= HEX`: OpenSSL 3 names
//! SHA-256 `SHA2-256`, and writes no space before the parenthesis), read
//! by every command that reads a list: `-c` as coreutils' `cksum -c`
//! reads them, and `diff`, `contained` and `audit` as lists at all (their
//! first line was taken for no checksum line). `--update` refuses them,
//! the list byte-identical, for it would write them back in another look.
//! The digests come from openssl itself, the independent reference.

use crate::testenv::{lacks, Outcome, TestEnv};

/// The digests `openssl dgst` knows under the tags it writes, and the
/// algorithms fastsum reads them as.
const DIGESTS: [&str; 7] = [
    "sha224", "sha256", "sha384", "sha512", "md5", "sha1", "sha3-256",
];

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// fastsum run in the tree, where the lists' names are.
fn in_tree(env: &TestEnv, args: &[&str]) -> Outcome {
    let mut cmd = env.command("fastsum");
    cmd.args(args).current_dir(env.path().join("t"));
    cmd.output().unwrap().into()
}

/// What `openssl dgst -DIGEST` prints for `files`, in `dir`.
fn openssl(env: &TestEnv, dir: &str, digest: &str, files: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("openssl")
        .arg("dgst")
        .arg(format!("-{digest}"))
        .args(files)
        .current_dir(env.path().join(dir))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn tree(env: &TestEnv) {
    env.mkdir("t");
    env.file(b"t/a", b"first\n");
    env.file(b"t/b", b"second\n");
    env.file(b"t/c", b"third\n");
}

#[test]
fn check_reads_openssl_dgst_lists_of_every_digest_it_writes() {
    if lacks(&["openssl"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    for digest in DIGESTS {
        let list = openssl(&env, "t", digest, &["a", "b", "c"]);
        let text = String::from_utf8_lossy(&list).into_owned();
        if digest.starts_with("sha2") || digest == "sha384" || digest == "sha512" {
            assert!(text.starts_with("SHA2-"), "OpenSSL 3 writes SHA2-N: {text}");
        }
        std::fs::write(env.path().join("t/list"), &list).unwrap();
        let out = in_tree(&env, &["-c", "list"]);
        assert_eq!(
            (out.status, out.stdout_str()),
            (0, "a: OK\nb: OK\nc: OK\n".to_string()),
            "{digest}: {text}\n{}",
            out.stderr_str()
        );
        // One byte changed: FAILED, never OK.
        env.file(b"t/b", b"seconD\n");
        let out = in_tree(&env, &["-c", "list"]);
        assert_eq!(out.status, 1, "{digest}: {}", out.stderr_str());
        assert!(out.stdout_str().contains("b: FAILED"), "{digest}");
        env.file(b"t/b", b"second\n");
    }
}

#[test]
fn diff_contained_and_audit_read_openssl_dgst_lists() {
    if lacks(&["openssl"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let list = openssl(&env, "t", "sha256", &["a", "b", "c"]);
    std::fs::write(env.path().join("list"), &list).unwrap();
    let unchanged = fastsum(&env, &["diff", "list", "t"]);
    assert_eq!(
        (unchanged.status, unchanged.stdout_str()),
        (0, String::new()),
        "{}",
        unchanged.stderr_str()
    );
    env.file(b"t/b", b"secoNd\n");
    let changed = fastsum(&env, &["diff", "list", "t"]);
    assert_eq!(
        (changed.status, changed.stdout_str()),
        (1, "M\tb\n".to_string()),
        "{}",
        changed.stderr_str()
    );
    let contained = fastsum(&env, &["contained", "t", "--in", "list"]);
    assert_eq!(
        (contained.status, contained.stdout_str()),
        (1, "t/b\n".to_string()),
        "{}",
        contained.stderr_str()
    );
    let audit = fastsum(&env, &["audit", "list", "t"]);
    assert_eq!(audit.status, 1, "{}", audit.stderr_str());
    assert!(
        audit.stdout_str().contains("Files modified: 1"),
        "{}",
        audit.stdout_str()
    );
}

#[test]
fn update_refuses_openssl_looks_and_leaves_the_list_as_it_was() {
    if lacks(&["openssl"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    for digest in ["sha256", "md5"] {
        let list = openssl(&env, "t", digest, &["a", "b", "c"]);
        std::fs::write(env.path().join("t/list"), &list).unwrap();
        env.file(b"t/b", format!("changed for {digest}\n").as_bytes());
        let out = in_tree(&env, &["-r", "--update=list", "a", "b", "c"]);
        assert_ne!(out.status, 0, "{digest}");
        assert!(
            out.stderr_str().contains("nothing was changed"),
            "{digest}: {}",
            out.stderr_str()
        );
        assert_eq!(
            std::fs::read(env.path().join("t/list")).unwrap(),
            list,
            "{digest}"
        );
    }
}
