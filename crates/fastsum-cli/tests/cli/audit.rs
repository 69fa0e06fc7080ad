//! hashdeep's lists and `fastsum audit`, differential against
//! hashdeep 4.4 (Debian's `hashdeep`) on the same trees: the lists fastsum
//! writes are hashdeep's lines, hashdeep audits them and passes, and
//! fastsum's audit of hashdeep's lists counts what `hashdeep -a -v` counts.

use crate::testenv::{Outcome, TestEnv};

use std::process::Command;

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

fn hashdeep(env: &TestEnv, args: &[&str]) -> (i32, String) {
    let out = Command::new("hashdeep")
        .args(args)
        .current_dir(env.path())
        .output()
        .expect("hashdeep runs (scripts/tests/install-peers installs it)");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A list's file lines, sorted (hashdeep's order is its threads').
fn file_lines(list: &str) -> Vec<String> {
    let mut lines: Vec<String> = list
        .lines()
        .filter(|l| !l.starts_with("##") && !l.starts_with("%%%%"))
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// The counts of a summary, by label (`Files matched` ...).
fn count(summary: &str, label: &str) -> u64 {
    summary
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(label)?
                .trim()
                .strip_prefix(": ")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {label} in {summary}"))
}

fn tree(env: &TestEnv) {
    env.mkdir("t/sub/deeper");
    env.file(b"t/plain", b"plain\n");
    env.file(b"t/with, a comma", b"comma\n");
    env.file(b"t/with spaces", b"spaces\n");
    env.file(b"t/empty", b"");
    env.file(b"t/sub/big", &vec![7u8; 3 << 20]);
    env.file(b"t/sub/deeper/x", b"x\n");
    env.file(b"t/sub/deeper/y", b"y\n");
}

#[test]
fn fastsum_writes_hashdeeps_lines_and_hashdeep_audits_them() {
    if crate::testenv::lacks(&["hashdeep"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    for (ours, theirs) in [
        (&["-a", "md5", "-a", "sha256"][..], "md5,sha256"),
        (&["-a", "sha1"], "sha1"),
        (&[], "md5"),
    ] {
        let mut args = vec!["-r", "--format=hashdeep"];
        args.extend(ours);
        args.push("t");
        let out = fastsum(&env, &args);
        assert_eq!(out.status, 0, "{}", out.stderr_str());
        let list = out.stdout_str();
        assert!(list.starts_with(&format!("%%%% HASHDEEP-1.0\n%%%% size,{theirs},filename\n")));
        let (status, reference) = hashdeep(&env, &["-c", theirs, "-l", "-r", "t"]);
        assert_eq!(status, 0);
        assert_eq!(file_lines(&list), file_lines(&reference), "{theirs}");
        // hashdeep audits fastsum's list of the same tree: passed.
        env.file(b"ours.hd", list.as_bytes());
        let (status, said) = hashdeep(
            &env,
            &["-c", theirs, "-a", "-v", "-k", "ours.hd", "-l", "-r", "t"],
        );
        assert_eq!(status, 0, "{said}");
        assert_eq!(count(&said, "Files matched"), 7, "{said}");
    }
    // A name hashdeep's format cannot hold: said, the rest written.
    env.file(b"t/new\nline", b"n");
    let out = fastsum(
        &env,
        &["-r", "--format=hashdeep", "-a", "md5", "-a", "sha256", "t"],
    );
    assert_eq!(out.status, 1);
    assert!(out
        .stderr_str()
        .contains("cannot be written in hashdeep's format"));
    assert_eq!(file_lines(&out.stdout_str()).len(), 7);
    // Only hashdeep's algorithms, and its own lines.
    for (args, said) in [
        (
            &["-r", "--format=hashdeep", "-a", "blake3", "t"][..],
            "has no blake3",
        ),
        (
            &["-r", "--format=hashdeep", "--json", "t"],
            "do not go together",
        ),
        (&["-r", "--format=csv", "t"], "format"),
    ] {
        let out = fastsum(&env, args);
        // A usage error: 2 in fastsum's own mode.
        assert_eq!(out.status, 2, "{args:?}");
        assert!(
            out.stderr_str().contains(said),
            "{args:?}: {}",
            out.stderr_str()
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn audit_counts_what_hashdeep_counts_on_its_own_lists() {
    if crate::testenv::lacks(&["hashdeep"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    // hashdeep's lists, with relative (-l) and absolute paths.
    let (_, relative) = hashdeep(&env, &["-c", "md5,sha256", "-l", "-r", "t"]);
    let (_, absolute) = hashdeep(&env, &["-c", "md5,sha256", "-r", "t"]);
    env.file(b"rel.hd", relative.as_bytes());
    env.file(b"abs.hd", absolute.as_bytes());
    for list in ["rel.hd", "abs.hd"] {
        let out = fastsum(&env, &["audit", list, "t"]);
        assert_eq!(
            out.status,
            0,
            "{list}: {}{}",
            out.stdout_str(),
            out.stderr_str()
        );
        assert!(out.stdout_str().contains("Audit passed"));
        assert_eq!(count(&out.stdout_str(), "Files matched"), 7);
    }
    // Every kind of change: one modified, one moved, one new, one gone.
    let p = env.path();
    std::fs::write(p.join("t/plain"), b"changed\n").unwrap();
    std::fs::rename(p.join("t/with spaces"), p.join("t/sub/moved here")).unwrap();
    std::fs::write(p.join("t/sub/new"), b"new\n").unwrap();
    std::fs::remove_file(p.join("t/sub/deeper/y")).unwrap();
    let (status, theirs) = hashdeep(&env, &["-a", "-v", "-k", "rel.hd", "-l", "-r", "t"]);
    assert_eq!(status, 1);
    for list in ["rel.hd", "abs.hd"] {
        let out = fastsum(&env, &["audit", "-v", list, "t"]);
        assert_eq!(out.status, 1, "{}", out.stderr_str());
        let ours = out.stdout_str();
        assert!(ours.contains("Audit failed"));
        let modified = count(&ours, "Files modified");
        assert_eq!(modified, 1);
        assert_eq!(
            count(&ours, "Files matched"),
            count(&theirs, "Files matched")
        );
        assert_eq!(count(&ours, "Files moved"), count(&theirs, "Files moved"));
        // hashdeep counts a modified file as new and as not found.
        assert_eq!(
            count(&ours, "New files found") + modified,
            count(&theirs, "New files found")
        );
        assert_eq!(
            count(&ours, "Known files not found") + modified,
            count(&theirs, "Known files not found")
        );
        for line in [
            "modified\tplain\n",
            "moved\tsub/moved here\tfrom\twith spaces\n",
            "new\tsub/new\n",
            "missing\tsub/deeper/y\n",
        ] {
            assert!(ours.contains(line), "{line}: {ours}");
        }
    }
    // diff reads hashdeep's lists too; a bad line is a problem with its
    // number; a list of algorithms fastsum does not compute says so.
    let out = fastsum(&env, &["diff", "rel.hd", "t"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(out.stdout_str().contains("M\tplain\n"));
    env.file(b"bad.hd", format!("{relative}12,zz,zz,t/odd\n").as_bytes());
    let out = fastsum(&env, &["audit", "bad.hd", "t"]);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str().contains("bad.hd: line 13"),
        "{}",
        out.stderr_str()
    );
    env.file(
        b"tiger.hd",
        b"%%%% HASHDEEP-1.0\n%%%% size,tiger,filename\n1,00,t/plain\n",
    );
    let out = fastsum(&env, &["audit", "tiger.hd", "t"]);
    assert_eq!(out.status, 2);
    assert!(out
        .stderr_str()
        .contains("none of its columns is md5, sha1 or sha256"));
}

/// In a list of several columns, every column is checked: a
/// file whose md5 matches and whose sha256 does not (or the reverse), in
/// place or moved, is partially matched, named, and fails the audit, as
/// hashdeep counts it (hashdeep calls it a hash collision).
#[test]
fn every_column_of_a_hashdeep_list_is_checked() {
    if crate::testenv::lacks(&["hashdeep"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let made = fastsum(
        &env,
        &["-r", "-a", "md5", "-a", "sha256", "--format=hashdeep", "t"],
    );
    assert_eq!(made.status, 0, "{}", made.stderr_str());
    let list = made.stdout_str();
    let sha = |bytes: &[u8]| fastsum::Algorithm::Sha256.hash_bytes(bytes).to_hex();
    let md5 = |bytes: &[u8]| fastsum::Algorithm::Md5.hash_bytes(bytes).to_hex();
    for (what, lied) in [
        (
            "a zeroed sha256",
            list.replace(&sha(b"plain\n"), &"0".repeat(64)),
        ),
        ("a zeroed md5", list.replace(&md5(b"x\n"), &"0".repeat(32))),
        (
            "another file's sha256",
            list.replace(&sha(b"spaces\n"), &sha(b"comma\n")),
        ),
    ] {
        assert_ne!(lied, list, "{what}: the list was changed");
        env.file(b"lied.hd", lied.as_bytes());
        for primary in [&[][..], &["-a", "sha256"], &["-a", "md5"]] {
            let mut args = vec!["audit", "-v"];
            args.extend_from_slice(primary);
            args.extend_from_slice(&["lied.hd", "t"]);
            let out = fastsum(&env, &args);
            let said = out.stdout_str();
            assert_eq!(
                out.status,
                1,
                "{what} {primary:?}: {said}{}",
                out.stderr_str()
            );
            assert!(said.contains("Audit failed"), "{what}: {said}");
            assert_eq!(count(&said, "Files partially matched"), 1, "{what}: {said}");
            assert_eq!(said.matches("partial\t").count(), 1, "{what}: {said}");
            assert_eq!(count(&said, "Files matched"), 6, "{what}: {said}");
        }
        // hashdeep counts one partial match too.
        let (_, theirs) = hashdeep(&env, &["-a", "-vv", "-k", "lied.hd", "-r", "t"]);
        assert_eq!(
            count(&theirs, "Files partially matched"),
            1,
            "{what}: {theirs}"
        );
        // From standard input, the same.
        let out = env.fastsum("fastsum", &[b"audit", b"-", b"t"], lied.as_bytes());
        assert_eq!(out.status, 1, "{what}: {}", out.stdout_str());
        assert_eq!(count(&out.stdout_str(), "Files partially matched"), 1);
    }
    // A moved file whose second column lies: partially matched, not moved.
    std::fs::rename(env.path().join("t/plain"), env.path().join("t/renamed")).unwrap();
    env.file(
        b"lied.hd",
        list.replace(&sha(b"plain\n"), &"0".repeat(64)).as_bytes(),
    );
    let out = fastsum(&env, &["audit", "-v", "lied.hd", "t"]);
    assert_eq!(out.status, 1, "{}", out.stdout_str());
    assert!(
        out.stdout_str().contains("partial\trenamed\tfrom\tplain\n"),
        "{}",
        out.stdout_str()
    );
    assert_eq!(count(&out.stdout_str(), "Files moved"), 0);
    // The true list, moved file aside, still passes every column.
    std::fs::rename(env.path().join("t/renamed"), env.path().join("t/plain")).unwrap();
    env.file(b"true.hd", list.as_bytes());
    let out = fastsum(&env, &["audit", "true.hd", "t"]);
    assert_eq!(out.status, 0, "{}", out.stdout_str());
    assert_eq!(count(&out.stdout_str(), "Files partially matched"), 0);
}

/// hashdeep follows symbolic links, to files and to
/// directories: its list of a tree with links audits clean with fastsum,
/// fastsum's --format=hashdeep list audits clean with hashdeep, and
/// --no-follow (-P) leaves the links out and says how many.
#[test]
fn symbolic_links_are_followed_as_hashdeep_follows_them() {
    if crate::testenv::lacks(&["hashdeep"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("t/sub");
    env.mkdir("elsewhere");
    env.file(b"t/a", b"hello\n");
    env.file(b"t/sub/y", b"y\n");
    env.file(b"elsewhere/x", b"x\n");
    std::os::unix::fs::symlink("a", env.path().join("t/b")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", env.path().join("t/dirlink")).unwrap();
    let (status, theirs) = hashdeep(&env, &["-c", "md5", "-r", "t"]);
    assert_eq!(status, 0);
    env.file(b"theirs.hd", theirs.as_bytes());
    let out = fastsum(&env, &["audit", "theirs.hd", "t"]);
    assert_eq!(out.status, 0, "{}{}", out.stdout_str(), out.stderr_str());
    assert_eq!(count(&out.stdout_str(), "Files matched"), 4);
    let out = fastsum(&env, &["audit", "--no-follow", "theirs.hd", "t"]);
    assert_eq!(out.status, 1, "{}", out.stdout_str());
    assert_eq!(count(&out.stdout_str(), "Known files not found"), 2);
    assert!(
        out.stderr_str().contains("2 symbolic links left out"),
        "{}",
        out.stderr_str()
    );
    // fastsum's list, as hashdeep would write it, and hashdeep audits it.
    let ours = fastsum(
        &env,
        &["-r", "--format=hashdeep", "-a", "md5", "-a", "sha256", "t"],
    );
    assert_eq!(ours.status, 0, "{}", ours.stderr_str());
    assert_eq!(
        file_lines(&ours.stdout_str()).len(),
        4,
        "{}",
        ours.stdout_str()
    );
    env.file(b"ours.hd", &ours.stdout);
    let (status, said) = hashdeep(&env, &["-a", "-l", "-k", "ours.hd", "-r", "t"]);
    assert_eq!(status, 0, "{said}");
    let without = fastsum(&env, &["-r", "-P", "--format=hashdeep", "t"]);
    assert_eq!(file_lines(&without.stdout_str()).len(), 2);
    assert!(without.stderr_str().contains("2 symbolic links left out"));
}

/// A column fastsum does not compute
/// (hashdeep's tiger) cannot be checked, so the audit never passes; nor
/// does `-c` call such a file OK on its other columns (it did, exit 0,
/// with a wrong tiger digest beside a right MD5).
#[test]
fn a_column_fastsum_cannot_compute_fails_the_audit() {
    if crate::testenv::lacks(&["hashdeep"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("t");
    for i in 0..3 {
        env.file(format!("t/f{i}").as_bytes(), format!("f{i}\n").as_bytes());
    }
    let (status, list) = hashdeep(&env, &["-c", "md5,tiger", "-r", "t"]);
    assert_eq!(status, 0);
    let lied = list
        .lines()
        .map(|l| match l.ends_with("t/f1") {
            true => {
                let f: Vec<&str> = l.split(',').collect();
                format!("{},{},{},{}\n", f[0], f[1], "0".repeat(48), f[3])
            }
            false => format!("{l}\n"),
        })
        .collect::<String>();
    for (name, text) in [("T.hd", list.as_str()), ("LIED.hd", lied.as_str())] {
        env.file(name.as_bytes(), text.as_bytes());
        let out = fastsum(&env, &["audit", name, "t"]);
        assert_eq!(out.status, 2, "{name}: {}", out.stdout_str());
        assert!(
            out.stdout_str().contains("Audit failed"),
            "{}",
            out.stdout_str()
        );
        assert!(
            out.stderr_str()
                .contains("1 column fastsum does not compute"),
            "{}",
            out.stderr_str()
        );
        let check = fastsum(&env, &["-c", name]);
        assert_eq!(check.status, 1, "{name}: {}", check.stdout_str());
        assert!(!check.stdout_str().contains("OK"), "{}", check.stdout_str());
        let refused = check
            .stderr_str()
            .matches("its tiger digest cannot be checked")
            .count();
        assert_eq!(refused, 3, "{}", check.stderr_str());
    }
}

/// Anything that leaves the audit incomplete (a path listed twice with two
/// digests, a directory loop under DIR) fails it in the summary too: the
/// summary said "Audit passed" beside exit 2, and a script that reads the
/// summary, as hashdeep's users do, took it for a pass.
#[test]
fn trouble_never_prints_audit_passed() {
    if crate::testenv::lacks(&["hashdeep"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("t/sub");
    env.file(b"t/a", b"a\n");
    env.file(b"t/sub/b", b"b\n");
    let (status, list) = hashdeep(&env, &["-l", "-c", "md5", "-r", "t"]);
    assert_eq!(status, 0);
    let twice = format!("{list}2,{},t/a\n", "0".repeat(32));
    env.file(b"TWICE.hd", twice.as_bytes());
    env.file(b"T.hd", list.as_bytes());
    let out = fastsum(&env, &["audit", "T.hd", "t"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert!(out.stdout_str().contains("Audit passed"));
    let out = fastsum(&env, &["audit", "TWICE.hd", "t"]);
    assert_eq!(out.status, 2, "{}", out.stdout_str());
    assert!(
        out.stderr_str().contains("listed twice"),
        "{}",
        out.stderr_str()
    );
    assert!(
        out.stdout_str().contains("Audit failed"),
        "{}",
        out.stdout_str()
    );
    std::os::unix::fs::symlink("..", env.path().join("t/sub/loop")).unwrap();
    let out = fastsum(&env, &["audit", "T.hd", "t"]);
    assert_eq!(out.status, 2, "{}", out.stdout_str());
    assert!(out.stderr_str().contains("loop"), "{}", out.stderr_str());
    assert!(
        out.stdout_str().contains("Audit failed"),
        "{}",
        out.stdout_str()
    );
}

/// `-a` naming a column the hashdeep list lacks is refused, naming the
/// columns it has, never an audit reported by another column
/// (helper-31's finding 5); naming one it has reports by it.
#[test]
fn audit_refuses_a_column_the_list_lacks() {
    let env = TestEnv::new();
    tree(&env);
    let list = fastsum(
        &env,
        &["-r", "--format=hashdeep", "-a", "md5", "-a", "sha256", "t"],
    );
    assert_eq!(list.status, 0, "{}", list.stderr_str());
    env.file(b"t.hd", &list.stdout);
    let out = fastsum(&env, &["audit", "-a", "sha1", "t.hd", "t"]);
    assert_eq!(out.status, 2, "{}", out.stdout_str());
    assert!(out.stdout.is_empty(), "{}", out.stdout_str());
    assert!(
        out.stderr_str()
            .contains("t.hd: -a sha1: the list has no sha1 column (its columns fastsum computes: md5, sha256)"),
        "{}",
        out.stderr_str()
    );
    for column in ["md5", "sha256"] {
        let out = fastsum(&env, &["audit", "-a", column, "t.hd", "t"]);
        assert_eq!(out.status, 0, "{column}: {}", out.stderr_str());
    }
}

/// hashdeep reads its column names in any case (`%%%% SIZE,MD5,SHA256,
/// FILENAME`): every command that reads a hashdeep list reads such a list
/// as hashdeep audits it, intact and with a file changed (fastsum refused
/// it whole, with a message that differed between `-c` and `diff`:
/// helper-31's finding 8).
#[test]
fn hashdeep_column_names_are_read_in_any_case_as_hashdeep_reads_them() {
    if crate::testenv::lacks(&["hashdeep"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let (status, list) = hashdeep(&env, &["-l", "-c", "md5,sha256", "-r", "t"]);
    assert_eq!(status, 0);
    let upper = list.replacen(
        "%%%% size,md5,sha256,filename",
        "%%%% SIZE,MD5,Sha256,FILENAME",
        1,
    );
    assert_ne!(upper, list, "hashdeep's header changed: {list}");
    env.file(b"UP.hd", upper.as_bytes());
    for changed in [false, true] {
        if changed {
            env.file(b"t/plain", b"plaiN\n");
        }
        let (theirs, _) = hashdeep(&env, &["-a", "-l", "-k", "UP.hd", "-r", "t"]);
        assert_eq!(
            theirs, changed as i32,
            "hashdeep's audit, changed: {changed}"
        );
        let audit = fastsum(&env, &["audit", "UP.hd", "t"]);
        assert_eq!(
            audit.status,
            theirs,
            "{}{}",
            audit.stdout_str(),
            audit.stderr_str()
        );
        let check = fastsum(&env, &["-c", "UP.hd"]);
        assert_eq!(check.status, theirs, "{}", check.stderr_str());
        assert_eq!(
            check.stdout_str().matches(": OK\n").count(),
            7 - changed as usize
        );
        assert_eq!(check.stdout_str().contains("t/plain: FAILED\n"), changed);
        let diff = fastsum(&env, &["diff", "UP.hd", "t"]);
        assert_eq!(diff.status, theirs, "{}", diff.stderr_str());
        assert_eq!(diff.stdout_str(), if changed { "M\tplain\n" } else { "" });
        let contained = fastsum(&env, &["contained", "t", "--in", "UP.hd"]);
        assert_eq!(contained.status, theirs, "{}", contained.stderr_str());
    }
    // A column it does not compute is named as the list writes it.
    let tiger = list.replacen(
        "%%%% size,md5,sha256,filename",
        "%%%% SIZE,MD5,TIGER,FILENAME",
        1,
    );
    env.file(b"TIGER.hd", tiger.as_bytes());
    let check = fastsum(&env, &["-c", "TIGER.hd"]);
    assert_eq!(check.status, 1);
    assert!(
        check
            .stderr_str()
            .contains("its TIGER digest cannot be checked"),
        "{}",
        check.stderr_str()
    );
}
