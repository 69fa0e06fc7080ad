//! The `cksum` and `sum` personalities, byte-exact with GNU
//! coreutils 9.1 (`cksum`, `sum` on PATH are the oracle), and every
//! personality's write error with standard output on a full device.

use crate::testenv;

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};

use testenv::{pattern, reference_path, TestEnv};

/// Files with every kind of name and size the checksums care about: empty,
/// one byte, around the 512-byte and 1 KiB block edges, large enough for
/// the CRC's folding loop and its length bytes, names with a newline, a
/// backslash, a space, and bytes that are not UTF-8.
fn files(env: &TestEnv) -> Vec<Vec<u8>> {
    let mut names = Vec::new();
    let mut add = |name: &[u8], bytes: &[u8]| {
        env.file(name, bytes);
        names.push(name.to_vec());
    };
    add(b"empty", b"");
    add(b"one", b"x");
    add(b"hello", b"hello\n");
    for len in [
        511usize, 512, 513, 1023, 1024, 1025, 65_535, 65_536, 1_000_003,
    ] {
        add(format!("p{len}").as_bytes(), &pattern(len));
    }
    add(b"all-ff", &[0xff; 70_000]);
    add(b"new\nline", b"named with a newline\n");
    add(b"back\\slash", b"named with a backslash\n");
    add(b"with space", b"named with a space\n");
    add(b"caf\xe9", b"not UTF-8\n");
    names
}

fn refs(names: &[Vec<u8>]) -> Vec<&[u8]> {
    names.iter().map(Vec::as_slice).collect()
}

#[test]
fn cksum_hashes_as_coreutils_does_with_every_algorithm() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    let names = files(&env);
    let all = refs(&names);
    // The default CRC, and every -a, tagged (the default) and untagged.
    env.assert_same("cksum", &all, b"");
    for algorithm in [
        "crc", "bsd", "sysv", "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b",
        "sm3",
    ] {
        let mut args: Vec<&[u8]> = vec![b"-a", algorithm.as_bytes()];
        args.extend(&all);
        env.assert_same("cksum", &args, b"");
        args.insert(0, b"--untagged");
        env.assert_same("cksum", &args, b"");
        args.insert(0, b"--tag");
        env.assert_same("cksum", &args, b"");
        args.insert(0, b"-z");
        env.assert_same("cksum", &args, b"");
        // Standard input: unnamed by default, "-" when named.
        env.assert_same("cksum", &[b"-a", algorithm.as_bytes()], b"from stdin\n");
        env.assert_same(
            "cksum",
            &[b"-a", algorithm.as_bytes(), b"-"],
            b"from stdin\n",
        );
    }
    // BLAKE2b's lengths, and where -l is refused.
    for args in [
        &[&b"-a"[..], b"blake2b", b"-l", b"128", b"hello"][..],
        &[b"-a", b"blake2b", b"-l", b"8", b"hello"],
        &[b"-a", b"blake2b", b"-l", b"0", b"hello"],
        &[b"-a", b"blake2b", b"-l", b"7", b"hello"],
        &[b"-a", b"blake2b", b"-l", b"520", b"hello"],
        &[b"-a", b"sm3", b"-l", b"256", b"hello"],
        &[b"-l", b"32", b"hello"],
        &[b"--untagged", b"-a", b"blake2b", b"-l", b"256", b"hello"],
    ] {
        env.assert_same("cksum", args, b"");
    }
}

#[test]
fn cksum_errors_and_options_as_coreutils_does() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    files(&env);
    env.mkdir("dir");
    for args in [
        &[&b"missing"[..], b"hello"][..],
        &[b"-a", b"md5", b"dir", b"missing", b"hello"],
        &[b"-a", b"sha1", b"--debug", b"hello"],
        &[b"--debug", b"hello", b"empty"],
        &[b"-a", b"foo", b"hello"],
        &[b"-a", b"MD5", b"hello"],
        &[b"-a", b"blake2b-256", b"hello"],
        &[b"-a", b"sm", b"hello"],
        &[b"-b", b"hello"],
        &[b"-t", b"hello"],
        &[b"--binary", b"hello"],
        &[b"--status", b"hello"],
        &[b"--ignore-missing", b"hello"],
        &[b"--strict", b"hello"],
        &[b"--quiet", b"hello"],
        &[b"-w", b"hello"],
        &[b"-c", b"-z", b"hello"],
        &[b"-a", b"crc", b"-c", b"hello"],
        &[b"-c", b"-a", b"bsd", b"hello"],
        &[b"-a", b"sysv", b"-c", b"hello"],
        &[b"--algorithm=sha256", b"--", b"-a"],
        &[b"--bogus"],
        &[b"--help"],
    ] {
        env.assert_same("cksum", args, b"");
    }
    // A directory: coreutils 9.1 printed the CRC of no bytes for it with
    // status 0 (`4294967295 0 dir`); 9.4 on say why, as fastsum does.
    let ours = env.assert_same("cksum", &[b"dir", b"hello"], b"");
    assert_eq!(ours.stderr_str(), "cksum: dir: Is a directory\n");
    assert_eq!(ours.status, 1);
}

#[test]
fn cksum_checks_mixed_lists_as_coreutils_does() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    let names = files(&env);
    // Lines written by coreutils itself, with every digest, tagged and not,
    // plus lines no reader accepts, a mismatch and a missing file.
    let mut list = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let algorithm = [
            "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "sm3",
        ][i % 8];
        let mut args: Vec<&[u8]> = vec![b"-a", algorithm.as_bytes()];
        if i % 3 == 0 {
            args.push(b"--untagged");
        }
        if i % 5 == 0 && algorithm == "blake2b" {
            args.extend([&b"-l"[..], b"160"]);
        }
        args.push(name);
        let out = env.reference("cksum", &args, b"");
        assert_eq!(out.status, 0);
        list.extend_from_slice(&out.stdout);
    }
    list.extend_from_slice(b"3015617425 6 hello\n");
    list.extend_from_slice(b"BSD (hello) = 36979\n");
    list.extend_from_slice(b"not a checksum line\n");
    list.extend_from_slice(b"MD5 (missing) = d41d8cd98f00b204e9800998ecf8427e\n");
    list.extend_from_slice(b"MD5 (one) = d41d8cd98f00b204e9800998ecf8427e\n");
    list.extend_from_slice(b"XXH64 (one) = 0123456789abcdef\n");
    env.file(b"list", &list);
    for args in [
        &[&b"-c"[..], b"list"][..],
        &[b"--check", b"--strict", b"list"],
        &[b"-c", b"--warn", b"list"],
        &[b"-c", b"--quiet", b"list"],
        &[b"-c", b"--status", b"list"],
        &[b"-c", b"--ignore-missing", b"list"],
        &[b"-c", b"--tag", b"list"],
        &[b"-c", b"--untagged", b"list"],
        &[b"-c", b"-a", b"md5", b"list"],
        &[b"-c", b"-a", b"sha256", b"--warn", b"list"],
        &[b"-c", b"-a", b"blake2b", b"-l", b"160", b"list"],
        &[b"-c", b"-a", b"sm3", b"list"],
        &[b"-c", b"missing-list"],
    ] {
        env.assert_same("cksum", args, b"");
    }
    // A list on standard input.
    env.assert_same("cksum", &[b"-c"], &list);
    env.assert_same("cksum", &[b"-c", b"-"], &list);
}

#[test]
fn sum_as_coreutils_does() {
    if crate::testenv::lacks(&["sum"]) {
        return;
    }
    let env = TestEnv::new();
    let names = files(&env);
    let all = refs(&names);
    env.mkdir("dir");
    env.assert_same("sum", &all, b"");
    for flags in [
        &[&b"-r"[..]][..],
        &[b"-s"],
        &[b"--sysv"],
        &[b"-r", b"-s"],
        &[b"-s", b"-r"],
        &[b"-rs"],
    ] {
        let mut args = flags.to_vec();
        args.extend(&all);
        env.assert_same("sum", &args, b"");
        // One named file, stdin unnamed, stdin as "-".
        env.assert_same("sum", &[flags, &[&b"hello"[..]]].concat(), b"");
        env.assert_same("sum", flags, b"from stdin\n");
        env.assert_same("sum", &[flags, &[&b"-"[..]]].concat(), b"from stdin\n");
    }
    for args in [
        &[&b"dir"[..], b"missing", b"hello"][..],
        &[b"-x"],
        &[b"--bogus"],
        &[b"-c", b"hello"],
        &[b"--help"],
        &[b"--", b"-r"],
    ] {
        env.assert_same("sum", args, b"");
    }
}

/// stdout on /dev/full: the tool's stderr and status.
fn to_full(
    program: &std::path::Path,
    argv0: &str,
    args: &[&[u8]],
    dir: &std::path::Path,
) -> (String, i32) {
    use std::os::unix::process::CommandExt as _;
    let out = Command::new(program)
        .arg0(argv0)
        .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .current_dir(dir)
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(
            File::options()
                .write(true)
                .open("/dev/full")
                .expect("/dev/full"),
        )
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    (
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn write_errors_as_each_original_prints_them() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
    ]) {
        return;
    }
    let env = TestEnv::new();
    // One line, and far more than a stdio buffer (300 files, ~30 KB of
    // lines with sha512).
    env.file(b"one", b"one file\n");
    let mut many: Vec<Vec<u8>> = Vec::new();
    for i in 0..300 {
        let name = format!("many-{i:03}").into_bytes();
        env.file(&name, format!("{i}\n").as_bytes());
        many.push(name);
    }
    let many = refs(&many);
    let ours = std::path::Path::new(crate::testenv::fastsum_bin());
    for tool in testenv::COREUTILS_TOOLS {
        let reference = reference_path(tool);
        let mut cases: Vec<Vec<&[u8]>> = vec![vec![b"one"], many.clone()];
        if tool == "cksum" {
            cases.push([&[&b"-a"[..], b"sha512"][..], &many].concat());
        }
        for args in &cases {
            let expected = to_full(&reference, tool, args, env.path());
            assert_eq!(expected.1, 1, "{tool}: the reference fails too");
            assert_eq!(
                to_full(ours, tool, args, env.path()),
                expected,
                "{tool} {} operands",
                args.len()
            );
        }
        if tool != "sum" && tool != "cksum" {
            // -c: "one: OK" lines to a full device.
            let list = env.reference(tool, &many, b"");
            env.file(b"list", &list.stdout);
            let args: &[&[u8]] = &[b"-c", b"list"];
            let expected = to_full(&reference, tool, args, env.path());
            assert_eq!(to_full(ours, tool, args, env.path()), expected, "{tool} -c");
        }
        let help: &[&[u8]] = &[b"--help"];
        let expected = to_full(&reference, tool, help, env.path());
        assert_eq!(
            to_full(ours, tool, help, env.path()),
            expected,
            "{tool} --help"
        );
    }
}

/// fastsum's own `-a crc|bsd|sysv` prints the lines `cksum -a` prints
/// (on every core, in operand order).
#[test]
fn fastsum_mode_speaks_the_old_checksums() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    let names = files(&env);
    let all = refs(&names);
    for algorithm in ["crc", "bsd", "sysv"] {
        let mut args: Vec<&[u8]> = vec![b"-a", algorithm.as_bytes()];
        args.extend(&all);
        let expected = env.reference("cksum", &args, b"");
        let ours = env.fastsum("fastsum", &args, b"");
        assert_eq!(ours.stdout_str(), expected.stdout_str(), "{algorithm}");
        assert_eq!(ours.status, 0);
    }
}
