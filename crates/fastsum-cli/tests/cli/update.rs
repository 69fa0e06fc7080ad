//! `fastsum -r --update=MANIFEST DIR` (issue 34.2): the manifest brought up
//! to date in place in its own shape, equal to a fresh run's, only the
//! changed files read again, atomically, and never with a file's record
//! lost to a bad read.

use crate::testenv::{Outcome, TestEnv};

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2200));
}

#[test]
fn a_manifest_is_brought_up_to_date_in_its_own_shape() {
    let env = TestEnv::new();
    env.mkdir("t/sub");
    for i in 0..20 {
        env.file(
            format!("t/f{i:02}").as_bytes(),
            format!("file {i}\n").as_bytes(),
        );
    }
    env.file(b"t/sub/back\\slash", b"escaped name\n");
    let shapes: [(&str, &[&str]); 4] = [
        ("SUMS", &[]),
        ("TAGGED", &["-a", "sha256"]),
        ("LIST.json", &["--json"]),
        ("LIST.hd", &["--format=hashdeep", "-a", "sha1"]),
    ];
    for (name, shape) in shapes {
        let mut args = vec!["-r", "--cache=c.db"];
        args.extend(shape);
        args.push("t");
        env.file(name.as_bytes(), &fastsum(&env, &args).stdout);
    }
    settle();
    // Every entry now settled in the cache; then a change of each kind.
    let _ = fastsum(&env, &["-r", "--cache=c.db", "t"]);
    let p = env.path();
    std::fs::write(p.join("t/f03"), b"changed\n").unwrap();
    std::fs::remove_file(p.join("t/f07")).unwrap();
    std::fs::write(p.join("t/sub/new"), b"new\n").unwrap();
    for (name, shape) in shapes {
        let out = fastsum(
            &env,
            &[
                "-r",
                &format!("--update={name}"),
                "--cache=c.db",
                "--cache-stats",
                "t",
            ],
        );
        assert_eq!(out.status, 0, "{name}: {}", out.stderr_str());
        assert_eq!(
            out.stdout_str(),
            "M\tt/f03\nD\tt/f07\nA\tt/sub/new\n",
            "{name}"
        );
        let said = out.stderr_str();
        assert!(
            said.contains(&format!(
                "{name}: updated: 1 added, 1 removed, 1 modified, 19 unchanged"
            )),
            "{said}"
        );
        // Only the changed and new files were read (MD5's entries were
        // settled above; the others' at their first run).
        if name == "SUMS" {
            assert!(said.contains("19 hits, 2 misses"), "{said}");
        }
        // The list is what a fresh run of that shape writes.
        let mut args = vec!["-r"];
        args.extend(shape);
        args.push("t");
        let fresh = fastsum(&env, &args).stdout_str();
        let updated = std::fs::read_to_string(p.join(name)).unwrap();
        let body = |s: &str| -> String { s.lines().filter(|l| !l.starts_with("##")).collect() };
        assert_eq!(body(&updated), body(&fresh), "{name}");
    }
    // GNU's md5sum and sha256sum check the updated lists.
    for (tool, list) in [("md5sum", "SUMS"), ("sha256sum", "TAGGED")] {
        let out = env.reference(tool, &[b"-c", list.as_bytes()], b"");
        assert_eq!(out.status, 0, "{tool}: {}", out.stderr_str());
    }
    // Replaced by a rename, nothing left beside it.
    let left: Vec<String> = std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("fastsum-update"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_bad_read_leaves_the_manifest_as_it_was() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/fine", b"fine");
    env.file(b"t/secret", b"secret");
    use std::os::unix::fs::PermissionsExt;
    for dir in [env.path().to_path_buf(), env.path().join("t")] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let list = fastsum(&env, &["-r", "t"]).stdout;
    env.file(b"SUMS", &list);
    std::fs::set_permissions(
        env.path().join("SUMS"),
        std::fs::Permissions::from_mode(0o666),
    )
    .unwrap();
    std::fs::set_permissions(
        env.path().join("t/secret"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = (unsafe { libc::getuid() } == 0).then_some(65534);
    let out = env.fastsum_within_as(
        uid,
        std::time::Duration::from_secs(30),
        &[b"-r", b"--update=SUMS", b"--cache=c.db", b"t"],
    );
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("t/secret: Permission denied"),
        "{}",
        out.stderr_str()
    );
    assert!(
        out.stderr_str().contains("SUMS: left as it was"),
        "{}",
        out.stderr_str()
    );
    assert_eq!(std::fs::read(env.path().join("SUMS")).unwrap(), list);
    // What does not go with it, said.
    for (args, said) in [
        (
            &["--update=SUMS", "t"][..],
            "meaningful only with --recursive",
        ),
        (&["-r", "--update=SUMS", "--json", "t"], "in its own shape"),
        (
            &["-r", "--update=nothing", "t"],
            "nothing: No such file or directory",
        ),
    ] {
        let out = fastsum(&env, args);
        assert_eq!(out.status, 1, "{args:?}");
        assert!(
            out.stderr_str().contains(said),
            "{args:?}: {}",
            out.stderr_str()
        );
    }
}

#[test]
fn a_list_with_stamps_is_its_own_cache() {
    let env = TestEnv::new();
    env.mkdir("t");
    for i in 0..5 {
        env.file(
            format!("t/f{i}").as_bytes(),
            format!("file {i}\n").as_bytes(),
        );
    }
    settle();
    let list = fastsum(&env, &["-r", "--json", "--stamps", "t"]);
    let text = list.stdout_str();
    assert_eq!(text.matches("\"mtime_ns\":").count(), 5, "{text}");
    // The list says f1 holds other bytes under its true stamp: an update
    // that answers from the list keeps its word (it does not read f1),
    // while f2, whose stamp moved, is read again.
    let md5 = |b: &[u8]| fastsum::Algorithm::Md5.hash_bytes(b).to_hex();
    let told = text.replace(&md5(b"file 1\n"), &md5(b"told\n"));
    env.file(b"LIST.json", told.as_bytes());
    std::fs::write(env.path().join("t/f2"), b"changed\n").unwrap();
    settle();
    let out = fastsum(&env, &["-r", "--update=LIST.json", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "M\tt/f2\n");
    let now = std::fs::read_to_string(env.path().join("LIST.json")).unwrap();
    assert!(now.contains(&md5(b"told\n")), "{now}");
    assert!(now.contains(&md5(b"changed\n")), "{now}");
    // Stamps kept, the changed file's new one included.
    assert_eq!(now.matches("\"mtime_ns\":").count(), 5, "{now}");
    // With --cache the cache answers instead, and reads f1 (not in it).
    let out = fastsum(&env, &["-r", "--update=LIST.json", "--cache=c.db", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "M\tt/f1\n");
}
