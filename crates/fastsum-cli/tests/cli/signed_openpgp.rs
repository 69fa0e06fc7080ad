//! OpenPGP signed lists against `gpgv` on keys made here
//! (detached and clearsigned: good, another key, changed, an expired
//! signature, a revoked key, two signed blocks, unsigned text around the
//! block), and on real data nobody here wrote: this machine's Debian
//! `InRelease` files with the archive keyring, and the `Packages` files
//! they list that apt keeps (lz4, laid out again as the archive has them).

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::testenv::{Outcome, TestEnv};

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// A script in the test's directory with its own GnuPG home: status, stdout.
fn sh(env: &TestEnv, script: &str) -> (i32, String) {
    let out = Command::new("bash")
        .args(["-c", script])
        .current_dir(env.path())
        .env("GNUPGHOME", env.path().join("g"))
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), stdout)
}

/// 0: checked, all OK; 2: refused (and nothing checked).
fn ours(env: &TestEnv, args: &[&str]) -> (i32, String) {
    let out = fastsum(env, args);
    if out.status == 2 {
        assert_eq!(out.stdout_str(), "", "a refused list checks no file");
    }
    (out.status, out.stderr_str())
}

const KEYS: &str = "mkdir -m 700 g o && gpg -q --batch --passphrase '' --quick-gen-key 'Alice <alice@example.org>' ed25519 sign never \
    && gpg -q --export > k.gpg \
    && gpg -q --homedir o --batch --passphrase '' --quick-gen-key 'Other <o@example.org>' ed25519 sign never \
    && gpg -q --homedir o --export > other.gpg \
    && gpg -q --batch --faked-system-time 20200101T000000! --passphrase '' --quick-gen-key 'Old <old@example.org>' ed25519 sign never \
    && gpg -q --export > both.gpg \
    && sed 's/^:-----/-----/' g/openpgp-revocs.d/$(gpg --with-colons -k alice@example.org | awk -F: '/^fpr/{print $10; exit}').rev > rev.asc \
    && cp -r g r && gpg -q --homedir r --batch --import rev.asc && gpg -q --homedir r --export alice@example.org > revoked.gpg";

/// A test's directory holding `a`, its tagged SHA-256 list `SUMS` and
/// the keys KEYS makes; `None` (skipped) without gpg and gpgv.
fn signed_sums() -> Option<TestEnv> {
    if crate::testenv::lacks(&["gpg", "gpgv"]) {
        return None;
    }
    let env = TestEnv::new();
    env.file(b"a", b"hello\n");
    assert_eq!(sh(&env, "sha256sum --tag a > SUMS").0, 0);
    assert_eq!(sh(&env, KEYS).0, 0, "keys made");
    Some(env)
}

#[test]
fn gpgv_verdicts_are_fastsums() {
    if crate::testenv::lacks(&["gpg", "gpgv"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"a", b"hello\n");
    env.file(b"b", b"world\n");
    assert_eq!(sh(&env, "sha256sum --tag a b > SUMS").0, 0);
    assert_eq!(sh(&env, KEYS).0, 0, "keys made");
    let sign = "gpg -q --batch -u alice@example.org --detach-sign -o SUMS.gpg SUMS \
        && gpg -q --batch -u alice@example.org --armor --detach-sign -o SUMS.asc SUMS \
        && gpg -q --batch -u alice@example.org --clearsign -o SUMS.clear SUMS \
        && gpg -q --batch -u old@example.org --faked-system-time 20200102T000000! --default-sig-expire 1d --detach-sign -o old.gpg SUMS";
    assert_eq!(sh(&env, sign).0, 0, "signed");
    // (keyring, list, signature or "" for clearsigned): the same verdict.
    let cases = [
        ("k.gpg", "SUMS", "SUMS.gpg"),
        ("k.gpg", "SUMS", "SUMS.asc"),
        ("other.gpg", "SUMS", "SUMS.gpg"),
        ("both.gpg", "SUMS", "old.gpg"),
        ("k.gpg", "SUMS.clear", ""),
        ("other.gpg", "SUMS.clear", ""),
    ];
    for (keyring, list, signature) in cases {
        let (reference, _) = sh(
            &env,
            &format!("gpgv -q --keyring ./{keyring} {signature} {list}"),
        );
        let mut args = vec!["-c", list, "--key", keyring];
        if !signature.is_empty() {
            args.extend(["--signature", signature]);
        }
        let (status, stderr) = ours(&env, &args);
        assert_eq!(
            (status == 0),
            (reference == 0),
            "{keyring} {list} {signature}: {stderr}"
        );
        if status == 0 {
            assert!(
                stderr.contains("good OpenPGP signature by key "),
                "{stderr}"
            );
            assert!(stderr.contains("(Alice <alice@example.org>)"), "{stderr}");
        }
    }
    // Changed after signing: detached and clearsigned.
    assert_eq!(
        sh(
            &env,
            "cp SUMS.clear SUMS.bad && sed -i 's/^SHA256 (a)/SHA256 (b)/' SUMS.bad"
        )
        .0,
        0
    );
    let (reference, _) = sh(&env, "gpgv -q --keyring ./k.gpg SUMS.bad");
    assert_eq!(
        (
            reference != 0,
            ours(&env, &["-c", "SUMS.bad", "--key", "k.gpg"]).0
        ),
        (true, 2)
    );
    fs::write(env.path().join("SUMS"), b"SHA256 (a) = 00\n").unwrap();
    let (reference, _) = sh(&env, "gpgv -q --keyring ./k.gpg SUMS.gpg SUMS");
    let refused = ours(
        &env,
        &["-c", "SUMS", "--signature", "SUMS.gpg", "--key", "k.gpg"],
    );
    assert_eq!((reference != 0, refused.0), (true, 2), "{}", refused.1);
}

/// Where gpgv accepts what a signed list must be refused for, fastsum is
/// stricter (README says so): a revoked key (gpgv exits 0, REVKEYSIG on its
/// status line). Two signed blocks in one file: both refuse. Text outside
/// the block is checked by neither: gpgv ignores it, fastsum says it.
#[test]
fn fastsum_is_stricter_than_gpgv_where_the_issue_says() {
    let Some(env) = signed_sums() else {
        return;
    };
    let sign = "gpg -q --batch -u alice@example.org --detach-sign -o SUMS.gpg SUMS \
        && gpg -q --batch -u alice@example.org --clearsign -o SUMS.clear SUMS \
        && (echo 'SHA256 (a) = 0000'; cat SUMS.clear; echo 'SHA256 (a) = 0000') > around \
        && cat SUMS.clear SUMS.clear > twice";
    assert_eq!(sh(&env, sign).0, 0);
    let (reference, status) = sh(
        &env,
        "gpgv --status-fd 1 --keyring ./revoked.gpg SUMS.gpg SUMS 2>/dev/null",
    );
    assert_eq!(reference, 0);
    assert!(status.contains("[GNUPG:] REVKEYSIG"), "{status}");
    let (ours_status, stderr) = ours(
        &env,
        &[
            "-c",
            "SUMS",
            "--signature",
            "SUMS.gpg",
            "--key",
            "revoked.gpg",
        ],
    );
    assert_eq!(ours_status, 2, "{stderr}");
    assert!(stderr.contains("revoked"), "{stderr}");

    assert_ne!(sh(&env, "gpgv -q --keyring ./k.gpg twice 2>/dev/null").0, 0);
    let (status, stderr) = ours(&env, &["-c", "twice", "--key", "k.gpg"]);
    assert_eq!(status, 2);
    assert!(
        stderr.contains("a second signed block at line "),
        "{stderr}"
    );

    assert_eq!(
        sh(&env, "gpgv -q --keyring ./k.gpg around 2>/dev/null").0,
        0
    );
    let out = fastsum(&env, &["-c", "around", "--key", "k.gpg"]);
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, "a: OK\n".to_owned()),
        "{}",
        out.stderr_str()
    );
    assert!(
        out.stderr_str()
            .contains("2 line(s) outside the signed block (lines 1-"),
        "{}",
        out.stderr_str()
    );
}

/// A Release whose Valid-Until has passed: refused, as apt refuses it,
/// whatever the case of the field's name (deb822 names are
/// case-insensitive); two Valid-Until fields are refused too.
#[test]
fn a_release_past_its_valid_until_is_refused() {
    if crate::testenv::lacks(&["gpg", "gpgv"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"a", b"hello\n");
    assert_eq!(sh(&env, KEYS).0, 0, "keys made");
    let release = |fields: &str| {
        format!("Origin: Test\n{fields}SHA256:\n 5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 6 a\n")
    };
    let future = "Valid-Until: Fri, 01 Jan 2100 00:00:00 UTC\n";
    for (name, fields) in [
        (
            "past",
            "Valid-Until: Sat, 01 Jan 2022 00:00:00 UTC\n".to_owned(),
        ),
        ("future", future.to_owned()),
        (
            "lower",
            "valid-until: Sat, 01 Jan 2022 00:00:00 UTC\n".to_owned(),
        ),
        (
            "twice",
            format!("{future}Valid-Until: Sat, 01 Jan 2022 00:00:00 UTC\n"),
        ),
        (
            "spaced",
            "Valid-Until : Sat, 01 Jan 2022 00:00:00 UTC\n".to_owned(),
        ),
    ] {
        env.file(
            format!("{name}.txt").as_bytes(),
            release(&fields).as_bytes(),
        );
        let sign = format!(
            "mkdir {name} && cp a {name}/ && gpg -q --batch -u alice@example.org --clearsign -o {name}/InRelease {name}.txt"
        );
        assert_eq!(sh(&env, &sign).0, 0, "{name} signed");
    }
    let out = fastsum(&env, &["-c", "future/InRelease", "--key", "k.gpg"]);
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, "future/a: OK\n".to_owned()),
        "{}",
        out.stderr_str()
    );
    for (name, why) in [
        (
            "past",
            "Valid-Until Sat, 01 Jan 2022 00:00:00 UTC has passed",
        ),
        (
            "lower",
            "Valid-Until Sat, 01 Jan 2022 00:00:00 UTC has passed",
        ),
        ("twice", "two Valid-Until fields"),
        (
            "spaced",
            "Valid-Until Sat, 01 Jan 2022 00:00:00 UTC has passed",
        ),
    ] {
        let (status, stderr) = ours(
            &env,
            &["-c", &format!("{name}/InRelease"), "--key", "k.gpg"],
        );
        assert_eq!(status, 2, "{name}: {stderr}");
        assert!(stderr.contains(why), "{name}: {stderr}");
    }
}

/// This machine's Debian InRelease files (copied first: apt-get update may
/// change them), each verified with the archive keyring (gpgv agrees),
/// the Packages it lists that apt keeps checked OK, refused with a byte of
/// its signed text flipped. SKIPPED without apt's lists or lz4.
#[test]
fn debian_inrelease_files_verify_with_the_archive_keyring() {
    if crate::testenv::lacks(&["gpgv"]) {
        return;
    }
    let lists = Path::new("/var/lib/apt/lists");
    let keyring = Path::new("/usr/share/keyrings/debian-archive-keyring.gpg");
    let releases: Vec<_> = fs::read_dir(lists)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix("_InRelease").map(str::to_owned))
        .collect();
    if releases.is_empty() || !keyring.exists() {
        crate::testenv::skip(&format!(
            "no InRelease in /var/lib/apt/lists or no {}",
            keyring.display()
        ));
        return;
    }
    let env = TestEnv::new();
    fs::copy(keyring, env.path().join("debian.gpg")).unwrap();
    let mut packages_checked = 0;
    for (n, prefix) in releases.iter().enumerate() {
        let dir = format!("m{n}");
        env.mkdir(&dir);
        let release = format!("{dir}/InRelease");
        if fs::copy(
            lists.join(format!("{prefix}_InRelease")),
            env.path().join(&release),
        )
        .is_err()
        {
            continue;
        }
        // Its Packages files apt keeps, laid out again (path `_` → `/`).
        let mut expected = String::new();
        for entry in fs::read_dir(lists).into_iter().flatten().flatten() {
            let name = entry.file_name().into_string().unwrap_or_default();
            let Some(rest) = name.strip_prefix(&format!("{prefix}_")) else {
                continue;
            };
            let Some(path) = rest.strip_suffix("_Packages.lz4") else {
                continue;
            };
            let path = format!("{}/Packages", path.replace('_', "/"));
            env.mkdir(&format!("{dir}/{}", path.rsplit_once('/').unwrap().0));
            let (lz4, _) = sh(
                &env,
                &format!("lz4 -dqf '{}' '{dir}/{path}'", entry.path().display()),
            );
            if lz4 == 0 {
                expected.push_str(&format!("{dir}/{path}: OK\n"));
            }
        }
        let (reference, _) = sh(
            &env,
            &format!("gpgv -q --keyring ./debian.gpg {release} 2>/dev/null"),
        );
        let out = fastsum(
            &env,
            &["-c", &release, "--key", "debian.gpg", "--ignore-missing"],
        );
        assert_eq!(reference, 0, "gpgv verifies {release}");
        assert_eq!(
            (out.status, out.stdout_str()),
            (0, expected.clone()),
            "{}",
            out.stderr_str()
        );
        assert!(
            out.stderr_str().contains("good OpenPGP signature by key "),
            "{}",
            out.stderr_str()
        );
        packages_checked += expected.lines().count();
        // A byte of the signed text flipped: refused, by gpgv too.
        let mut bytes = fs::read(env.path().join(&release)).unwrap();
        let at = bytes.windows(7).position(|w| w == b"SHA256:").unwrap() + 20;
        bytes[at] ^= 1;
        fs::write(env.path().join(&release), bytes).unwrap();
        let (reference, _) = sh(
            &env,
            &format!("gpgv -q --keyring ./debian.gpg {release} 2>/dev/null"),
        );
        let (status, stderr) = ours(
            &env,
            &["-c", &release, "--key", "debian.gpg", "--ignore-missing"],
        );
        assert_eq!((reference != 0, status), (true, 2), "{stderr}");
    }
    eprintln!(
        "{} InRelease files, {packages_checked} Packages files checked",
        releases.len()
    );
}

/// OpenPGP signs a clearsigned line without its trailing blanks: one space
/// or tab added to a line keeps gpgv's "Good signature", while the name
/// checked would be another (`d ` for `d`: with --ignore-missing the
/// tampered `d` went unchecked, exit 0). fastsum refuses such a list.
#[test]
fn a_clearsigned_line_padded_after_signing_is_refused() {
    if crate::testenv::lacks(&["gpg", "gpgv"]) {
        return;
    }
    let env = TestEnv::new();
    let made = "mkdir -m 700 g && gpg -q --batch --passphrase '' --quick-gen-key 'T <t@x>' ed25519 sign never \
        && gpg -q --export > key.gpg && echo hello > c && echo hello2 > d && sha256sum c d > SHA256SUMS \
        && gpg -q --batch --clearsign -o S.asc SHA256SUMS \
        && sed 's/  d$/  d /' S.asc > space.asc && sed 's/  d$/  d\t/' S.asc > tab.asc \
        && echo TAMPER > d";
    assert_eq!(sh(&env, made).0, 0);
    for list in ["space.asc", "tab.asc"] {
        // The reference still calls it good: the padding is not signed.
        assert_eq!(
            sh(&env, &format!("gpgv -q --keyring ./key.gpg {list}")).0,
            0
        );
        for extra in [&[][..], &["--ignore-missing"][..]] {
            let mut args = vec!["-a", "sha256", "-c", list, "--key", "key.gpg"];
            args.extend_from_slice(extra);
            let (status, stderr) = ours(&env, &args);
            assert_eq!(status, 2, "{list} {extra:?}: {stderr}");
            assert!(stderr.contains("ends in spaces or tabs"), "{stderr}");
        }
    }
    // The list as signed is checked, and the tampered file found.
    let out = fastsum(&env, &["-a", "sha256", "-c", "S.asc", "--key", "key.gpg"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(
        out.stdout_str().contains("d: FAILED"),
        "{}",
        out.stdout_str()
    );
}

/// Two signatures, one by a key the keyring lacks: passed as apt passes
/// Debian's InRelease files (signed by several archive keys, of which a
/// keyring may hold some), the other key named; `gpgv` exits 2 for it,
/// which GUIDE.md says. Every signature by a key held must still hold: a
/// list changed after signing is refused whatever else signed it.
#[test]
fn a_second_signature_by_a_key_the_keyring_lacks_is_named_not_trusted() {
    let Some(env) = signed_sums() else {
        return;
    };
    let sign = "gpg -q --batch -u alice@example.org --detach-sign -o alice.sig SUMS \
        && gpg -q --homedir o --batch -u o@example.org --detach-sign -o other.sig SUMS \
        && cat alice.sig other.sig > two.sig";
    assert_eq!(sh(&env, sign).0, 0, "signed");
    let (gpgv, _) = sh(&env, "gpgv -q --keyring ./k.gpg two.sig SUMS 2>/dev/null");
    assert_eq!(gpgv, 2, "gpgv's verdict, which GUIDE.md names");
    let other = sh(
        &env,
        "gpg --homedir o --with-colons -k o@example.org | awk -F: '/^fpr/{print $10; exit}'",
    )
    .1;
    let out = fastsum(
        &env,
        &["-c", "SUMS", "--signature", "two.sig", "--key", "k.gpg"],
    );
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, "a: OK\n".to_owned()),
        "{}",
        out.stderr_str()
    );
    assert!(
        out.stderr_str().contains(&format!(
            "also signed by key {}, which the keyring does not hold",
            other.trim()
        )),
        "{}",
        out.stderr_str()
    );
    // Only the unknown key's signature: refused.
    let (status, stderr) = ours(
        &env,
        &["-c", "SUMS", "--signature", "other.sig", "--key", "k.gpg"],
    );
    assert_eq!(status, 2, "{stderr}");
    // The list changed after both signed: refused, though one signer is unknown.
    assert_eq!(sh(&env, "sed -i 's/^SHA256/SHA256 /' SUMS").0, 0);
    let (status, stderr) = ours(
        &env,
        &["-c", "SUMS", "--signature", "two.sig", "--key", "k.gpg"],
    );
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("the list changed after signing"),
        "{stderr}"
    );
}

/// A signature over MD5 or SHA-1 is refused as weak (apt's verdict;
/// gpgv accepts the SHA-1 one, refuses the MD5 one), never reported as a
/// list changed after signing, which it was not. SHA-256 by the same key
/// passes.
#[test]
fn a_signature_over_a_weak_hash_is_refused_as_weak_not_as_changed() {
    let Some(env) = signed_sums() else {
        return;
    };
    let sign = "gpg -q --batch -u alice@example.org --digest-algo SHA1 --detach-sign -o sha1.sig SUMS \
        && gpg -q --batch -u alice@example.org --digest-algo MD5 --allow-weak-digest-algos \
           --detach-sign -o md5.sig SUMS 2>/dev/null \
        && gpg -q --batch -u alice@example.org --digest-algo SHA256 --detach-sign -o sha256.sig SUMS";
    assert_eq!(sh(&env, sign).0, 0, "signed");
    for (signature, gpgv_status, name) in [("sha1.sig", 0, "SHA-1"), ("md5.sig", 2, "MD5")] {
        let (gpgv, _) = sh(
            &env,
            &format!("gpgv -q --keyring ./k.gpg {signature} SUMS 2>/dev/null"),
        );
        assert_eq!(gpgv, gpgv_status, "gpgv on {signature}, as GUIDE.md says");
        let (status, stderr) = ours(
            &env,
            &["-c", "SUMS", "--signature", signature, "--key", "k.gpg"],
        );
        assert_eq!(status, 2, "{signature}: {stderr}");
        assert!(
            stderr.contains(&format!("made over {name}, a hash too weak")),
            "{stderr}"
        );
        assert!(!stderr.contains("changed after signing"), "{stderr}");
    }
    let out = fastsum(
        &env,
        &["-c", "SUMS", "--signature", "sha256.sig", "--key", "k.gpg"],
    );
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, "a: OK\n".to_owned()),
        "{}",
        out.stderr_str()
    );
}

/// A clearsigned list's `Hash:` header must name its signature's hash, as
/// gpgv demands: left out or contradicted, refused by both; two headers,
/// or one naming several, pass both.
#[test]
fn a_clearsigned_hash_header_agrees_with_its_signature_or_is_refused() {
    let Some(env) = signed_sums() else {
        return;
    };
    let make = "gpg -q --batch -u alice@example.org --digest-algo SHA256 --clearsign -o good SUMS \
        && grep -qx 'Hash: SHA256' good \
        && sed '/^Hash:/d' good > none \
        && sed 's/^Hash: SHA256$/Hash: SHA512/' good > wrong \
        && sed 's/^Hash: SHA256$/Hash: SHA1, SHA256/' good > several \
        && sed 's/^Hash: SHA256$/Hash: SHA512\\nHash: SHA256/' good > two \
        && sed 's/^Hash: SHA256$/Hash: sha256/' good > lower \
        && sed 's/^Hash: SHA256$/Hash:SHA256/' good > nospace";
    assert_eq!(sh(&env, make).0, 0, "signed and edited");
    for (list, good, why) in [
        ("good", true, ""),
        ("several", true, ""),
        ("two", true, ""),
        ("none", false, "has no Hash: header"),
        ("wrong", false, "its Hash: header says SHA512"),
        // gpgv reads neither as SHA256 (the hostile pass of 2026-12-02).
        ("lower", false, "its Hash: header says sha256"),
        ("nospace", false, "has no Hash: header"),
    ] {
        let (gpgv, _) = sh(
            &env,
            &format!("gpgv -q --keyring ./k.gpg {list} 2>/dev/null"),
        );
        assert_eq!(gpgv == 0, good, "gpgv on {list}");
        let (status, stderr) = ours(&env, &["-c", list, "--key", "k.gpg"]);
        assert_eq!(status == 0, good, "{list}: {stderr}");
        assert!(stderr.contains(why), "{list}: {stderr}");
    }
}
