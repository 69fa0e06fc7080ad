//! `fastsum -r --update=MANIFEST DIR`: the manifest brought up
//! to date in place in its own shape, equal to a fresh run's, only the
//! changed files read again, atomically, and never with a file's record
//! lost to a bad read.

use crate::testenv::{Outcome, TestEnv};

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// fastsum run in `dir`.
fn fastsum_in(env: &TestEnv, dir: &std::path::Path, args: &[&str]) -> Outcome {
    env.command("fastsum")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
        .into()
}

fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2200));
}

#[test]
fn a_manifest_is_brought_up_to_date_in_its_own_shape() {
    if crate::testenv::lacks(&["md5sum", "sha256sum"]) {
        return;
    }
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
    if uid.is_some() {
        // The list is the user's: an update keeps its owner,
        // and refuses one whose owner it cannot keep.
        let chown = std::process::Command::new("chown")
            .arg("65534:65534")
            .arg(env.path().join("SUMS"))
            .status();
        assert!(chown.is_ok_and(|s| s.success()));
    }
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
    // A usage error is 2; a list that cannot be read, 1.
    for (args, status, said) in [
        (
            &["--update=SUMS", "t"][..],
            2,
            "meaningful only with --recursive",
        ),
        (
            &["-r", "--update=SUMS", "--json", "t"],
            2,
            "in its own shape",
        ),
        (
            &["-r", "--update=nothing", "t"],
            1,
            "nothing: No such file or directory",
        ),
    ] {
        let out = fastsum(&env, args);
        assert_eq!(out.status, status, "{args:?}");
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

/// A manifest kept inside the tree it describes is never one
/// of its own entries, nor is its temporary file (this run's, or one a
/// killed run left): an update of an unchanged tree leaves it
/// byte-identical, `-c` of it passes, and it says nothing changed.
#[test]
fn a_manifest_inside_its_tree_never_lists_itself_or_its_temporary_file() {
    let env = TestEnv::new();
    env.mkdir("site/sub");
    env.file(b"site/index.html", b"<html>\n");
    env.file(b"site/sub/page.html", b"<p>\n");
    let shapes: [(&str, &[&str]); 3] = [
        ("SITE.md5", &[]),
        ("SITE.json", &["--json"]),
        ("SITE.hd", &["--format=hashdeep"]),
    ];
    for (name, shape) in shapes {
        let site = env.path().join("site");
        let mut args = vec!["-r"];
        args.extend(shape);
        args.push(".");
        let first = fastsum_in(&env, &site, &args);
        assert_eq!(first.status, 0, "{name}: {}", first.stderr_str());
        std::fs::write(site.join(name), &first.stdout).unwrap();
        // A temporary file a killed update left behind.
        std::fs::write(site.join(format!(".{name}.fastsum-update.4242")), b"half").unwrap();
        for spelling in [".", "../site", &site.display().to_string()] {
            let update = format!("--update={name}");
            let out = fastsum_in(&env, &site, &["-r", "--cache=../c.db", &update, spelling]);
            // Another spelling of the tree reads no file under the name the
            // list gives it: refused, the list as it was (operands
            // that do not read what a list names never drop its records).
            if spelling != "." && out.status == 1 {
                assert!(
                    out.stderr_str().contains("is listed and still there"),
                    "{name} {spelling}: {}",
                    out.stderr_str()
                );
                assert_eq!(std::fs::read(site.join(name)).unwrap(), first.stdout);
                continue;
            }
            assert_eq!(out.status, 0, "{name} {spelling}: {}", out.stderr_str());
            let text = out.stdout_str();
            assert!(
                !text.contains(name),
                "{name} {spelling}: listed itself: {text}"
            );
            let listed = std::fs::read(site.join(name)).unwrap();
            assert!(
                !String::from_utf8_lossy(&listed).contains("fastsum-update"),
                "{name}"
            );
            if spelling == "." {
                // Byte for byte, hashdeep's header (its `## $` line) too.
                assert_eq!(listed, first.stdout, "{name}: not byte-identical");
                assert!(text.is_empty(), "{name}: changes said: {text}");
                assert!(
                    out.stderr_str().contains("0 added, 0 removed, 0 modified"),
                    "{}",
                    out.stderr_str()
                );
            }
        }
        // (Removed by the update unless a process 4242 runs.)
        let _ = std::fs::remove_file(site.join(format!(".{name}.fastsum-update.4242")));
        std::fs::remove_file(site.join(name)).unwrap();
    }
}

/// The list's link, mode and owner are kept; SIGINT or
/// SIGTERM during an update leaves the old list and no temporary file;
/// one a killed run left is removed once its process is gone.
#[test]
fn an_update_keeps_link_mode_and_owner_and_cleans_up_when_interrupted() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let env = TestEnv::new();
    env.mkdir("t");
    env.mkdir("lists");
    env.file(b"t/a", b"a\n");
    let first = fastsum(&env, &["-r", "t"]);
    env.file(b"lists/SUMS", &first.stdout);
    let real = env.path().join("lists/SUMS");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    // Owned by another user (the test runs as root in CI: a chown works).
    let chowned = std::process::Command::new("chown")
        .args(["65534:65534"])
        .arg(&real)
        .status()
        .is_ok_and(|s| s.success());
    std::os::unix::fs::symlink("lists/SUMS", env.path().join("SUMS")).unwrap();
    env.file(b"t/b", b"b\n");
    let out = fastsum(&env, &["-r", "--update=SUMS", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "A\tt/b\n");
    let link = std::fs::symlink_metadata(env.path().join("SUMS")).unwrap();
    assert!(
        link.file_type().is_symlink(),
        "the link was replaced by a file"
    );
    let meta = std::fs::metadata(&real).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o640);
    if chowned {
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    }
    assert!(String::from_utf8_lossy(&std::fs::read(&real).unwrap()).contains("  t/b\n"));
    // Interrupted while reading a large (sparse) file: the old list stays,
    // no temporary file does.
    let before = std::fs::read(&real).unwrap();
    std::fs::File::create(env.path().join("t/big"))
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let child = env
            .command("fastsum")
            .args(["-r", "--update=SUMS", "t"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(600));
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let status = child.wait_with_output().unwrap().status;
        assert!(!status.success(), "the update finished before the signal");
        let left: Vec<_> = std::fs::read_dir(env.path().join("lists"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["SUMS"], "signal {signal}: {left:?}");
        assert_eq!(std::fs::read(&real).unwrap(), before);
    }
    std::fs::remove_file(env.path().join("t/big")).unwrap();
    // A temporary file a killed run left (its process gone): removed and
    // said; one of a live process: said, kept.
    let stale = env.path().join("lists/.SUMS.fastsum-update.999999999");
    let live = env
        .path()
        .join(format!("lists/.SUMS.fastsum-update.{}", std::process::id()));
    std::fs::write(&stale, b"half").unwrap();
    std::fs::write(&live, b"half").unwrap();
    let out = fastsum(&env, &["-r", "--update=SUMS", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert!(!stale.exists());
    assert!(live.exists());
    assert!(out
        .stderr_str()
        .contains("removed: left by an update that was killed"));
    assert!(out.stderr_str().contains("which still runs"));
}

/// An untagged list's algorithm, guessed from its digests'
/// length, is checked against files older than the list: a wrong guess
/// (XXH128 or BLAKE2b-128 read as MD5, BLAKE2b-160 as SHA-1) stops the
/// update, names what matches, and leaves the list byte-identical; with
/// -a the update goes on and leaves an unchanged tree's list as it was.
#[test]
fn a_guessed_algorithm_that_the_files_contradict_stops_the_update() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"one\n");
    env.file(b"t/b", b"two\n");
    for (args, name) in [
        (&["-a", "xxh128"][..], "xxh128"),
        (&["-a", "blake2b", "-l", "128"], "blake2b-128"),
        (&["-a", "blake2b", "-l", "160"], "blake2b-160"),
    ] {
        let mut make = vec!["-r", "--untagged"];
        make.extend_from_slice(args);
        make.push("t");
        let list = fastsum(&env, &make);
        assert_eq!(list.status, 0, "{}", list.stderr_str());
        env.file(b"L", &list.stdout);
        let out = fastsum(&env, &["-r", "--update=L", "t"]);
        assert_eq!(out.status, 1, "{name}: {}", out.stderr_str());
        assert!(
            out.stderr_str().contains(&format!("({name} matches)")),
            "{}",
            out.stderr_str()
        );
        assert!(out.stderr_str().contains("give -a; nothing was changed"));
        assert_eq!(std::fs::read(env.path().join("L")).unwrap(), list.stdout);
        let mut update = vec!["-r", "--update=L"];
        update.extend_from_slice(args);
        update.push("t");
        let out = fastsum(&env, &update);
        assert_eq!(out.status, 0, "{name}: {}", out.stderr_str());
        assert_eq!(
            std::fs::read(env.path().join("L")).unwrap(),
            list.stdout,
            "{name}"
        );
    }
    // A right guess goes on as before.
    let md5 = fastsum(&env, &["-r", "t"]);
    env.file(b"M", &md5.stdout);
    let out = fastsum(&env, &["-r", "--update=M", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
}

/// An untagged list whose every file changed since it was written (or is
/// gone) shows its algorithm under no candidate: the update cannot tell
/// XXH128 from MD5 (a list was once rewritten from one into the other,
/// exit 0), so it refuses, names the candidates and changes nothing;
/// with -a it goes on in that algorithm.
#[test]
fn a_list_whose_every_file_changed_is_not_rewritten_in_a_guess() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"one\n");
    env.file(b"t/b", b"two\n");
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for algorithm in ["xxh128", "md5"] {
        env.file(b"t/a", b"one\n");
        env.file(b"t/b", b"two\n");
        let list = fastsum(&env, &["-r", "--untagged", "-a", algorithm, "t"]);
        assert_eq!(list.status, 0, "{}", list.stderr_str());
        env.file(b"L", &list.stdout);
        let listed = std::fs::File::options()
            .write(true)
            .open(env.path().join("L"))
            .unwrap();
        listed.set_modified(an_hour_ago).unwrap();
        env.file(b"t/a", b"ONE\n");
        env.file(b"t/b", b"TWO\n");
        let out = fastsum(&env, &["-r", "--update=L", "t"]);
        assert_eq!(out.status, 1, "{algorithm}: {}", out.stderr_str());
        let said = out.stderr_str();
        assert!(said.contains("could be md5, xxh128"), "{said}");
        assert!(said.contains("give -a; nothing was changed"), "{said}");
        assert_eq!(std::fs::read(env.path().join("L")).unwrap(), list.stdout);
        // Every file gone: the same.
        let out = fastsum(&env, &["--update=L", "t/none"]);
        assert_ne!(out.status, 0, "{algorithm}: {}", out.stderr_str());
        assert_eq!(std::fs::read(env.path().join("L")).unwrap(), list.stdout);
        let out = fastsum(&env, &["-r", "--update=L", "-a", algorithm, "t"]);
        assert_eq!(out.status, 0, "{algorithm}: {}", out.stderr_str());
        let fresh = fastsum(&env, &["-r", "--untagged", "-a", algorithm, "t"]);
        assert_eq!(std::fs::read(env.path().join("L")).unwrap(), fresh.stdout);
    }
}

/// A --dirs list keeps its directory lines (byte-identical on
/// an unchanged tree, a fresh --dirs run's lines after a change); a -z
/// list stays NUL-terminated, names with newlines unescaped, never
/// rewritten newline-terminated; a hashdeep list follows links as it was
/// written.
#[test]
fn directory_lines_are_kept_and_a_nul_terminated_list_stays_one() {
    let env = TestEnv::new();
    env.mkdir("t/sub");
    env.mkdir("t/empty");
    env.file(b"t/a", b"a\n");
    env.file(b"t/sub/b", b"b\n");
    let dirs = fastsum(&env, &["-r", "--dirs", "t"]);
    env.file(b"D", &dirs.stdout);
    let out = fastsum(&env, &["-r", "--update=D", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(std::fs::read(env.path().join("D")).unwrap(), dirs.stdout);
    env.file(b"t/sub/c", b"c\n");
    let out = fastsum(&env, &["-r", "--update=D", "t"]);
    assert_eq!(out.stdout_str(), "A\tt/sub/c\n");
    let fresh = fastsum(&env, &["-r", "--dirs", "t"]);
    assert_eq!(std::fs::read(env.path().join("D")).unwrap(), fresh.stdout);
    let check = fastsum(&env, &["-c", "--dirs", "D"]);
    assert_eq!(check.status, 0, "{}", check.stdout_str());
    // -z: unchanged when nothing changed; a fresh -z run's records after
    // a change, a name holding a newline written as it is.
    let z = fastsum(&env, &["-r", "-z", "t"]);
    env.file(b"Z", &z.stdout);
    let out = fastsum(&env, &["-r", "--update=Z", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "");
    assert_eq!(std::fs::read(env.path().join("Z")).unwrap(), z.stdout);
    env.file(b"t/new\nline", b"n\n");
    let out = fastsum(&env, &["-r", "--update=Z", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "\\A\tt/new\\nline\n");
    let fresh = fastsum(&env, &["-r", "-z", "t"]);
    assert_eq!(std::fs::read(env.path().join("Z")).unwrap(), fresh.stdout);
    std::fs::remove_file(env.path().join("t/new\nline")).unwrap();
    // hashdeep: links followed, as --format=hashdeep wrote them.
    std::os::unix::fs::symlink("sub", env.path().join("t/link")).unwrap();
    let hd = fastsum(&env, &["-r", "--format=hashdeep", "t"]);
    env.file(b"H", &hd.stdout);
    let out = fastsum(&env, &["-r", "--update=H", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "", "links dropped: {}", out.stdout_str());
}

/// The hostile review: a list naming a path twice was updated with the
/// path said removed (it exists). Refused, the list left as it was, as
/// diff and audit refuse it.
#[test]
fn a_list_naming_a_path_twice_is_left_as_it_was() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"a\n");
    env.file(b"t/b", b"b\n");
    let list = fastsum(&env, &["-r", "t"]).stdout;
    let first = list.split(|&b| b == b'\n').next().unwrap().to_vec();
    let twice = [list.clone(), first, b"\n".to_vec()].concat();
    env.file(b"S", &twice);
    let out = fastsum(&env, &["-r", "--update=S", "t"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("t/a is listed twice"),
        "{}",
        out.stderr_str()
    );
    assert_eq!(out.stdout_str(), "");
    assert_eq!(std::fs::read(env.path().join("S")).unwrap(), twice);
}
