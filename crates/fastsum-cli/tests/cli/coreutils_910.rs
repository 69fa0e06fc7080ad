//! What changed in md5sum, sha*sum, b2sum, cksum and sum from
//! coreutils 9.2 to 9.10, one case (or several) a NEWS entry, each run by
//! the 9.10 programs scripts/tests/gnu-reference builds and by fastsum's
//! personalities, with stdout, stderr and status compared byte for byte.

use crate::testenv;

use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};

use testenv::{pattern, reference_path, TestEnv};

/// Files of the sizes and names the new options care about: empty, short,
/// the base64 padding's three remainders, a name with a backslash.
fn files(env: &TestEnv) -> Vec<&'static [u8]> {
    env.file(b"empty", b"");
    env.file(b"one", b"x");
    env.file(b"two", b"xy");
    env.file(b"big", &pattern(70_001));
    env.file(b"a\\b", b"named with a backslash\n");
    vec![b"empty", b"one", b"two", b"big", b"a\\b"]
}

const CKSUM_NAMES: [&str; 14] = [
    "bsd", "sysv", "crc", "crc32b", "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha2",
    "sha3", "blake2b", "sm3",
];

/// `-a NAME`, with the `-l` sha2 and sha3 need.
fn algorithm_args(name: &'static str) -> Vec<&'static [u8]> {
    match name {
        "sha2" | "sha3" => vec![b"-a", name.as_bytes(), b"-l", b"256"],
        _ => vec![b"-a", name.as_bytes()],
    }
}

/// 9.2 `--base64` (tagged and untagged; ignored by the old checksums) and
/// 9.6 `crc32b`, 9.8 `sha2`/`sha3` with every length.
#[test]
fn base64_and_the_new_algorithms_print_as_9_10_does() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    let names = files(&env);
    for name in CKSUM_NAMES {
        for extra in [
            &[][..],
            &[&b"--base64"[..]],
            &[b"--base64", b"--untagged"],
            &[b"--untagged"],
        ] {
            let mut args = algorithm_args(name);
            args.extend_from_slice(extra);
            args.extend(&names);
            env.assert_same("cksum", &args, b"");
        }
    }
    for family in ["sha2", "sha3"] {
        for bits in ["224", "256", "384", "512"] {
            let mut args: Vec<&[u8]> = vec![b"-a", family.as_bytes(), b"-l", bits.as_bytes()];
            args.extend(&names);
            env.assert_same("cksum", &args, b"");
        }
    }
    for bits in ["8", "24", "128", "504"] {
        let args: &[&[u8]] = &[
            b"-a",
            b"blake2b",
            b"-l",
            bits.as_bytes(),
            b"--base64",
            b"big",
        ];
        env.assert_same("cksum", args, b"");
    }
}

/// 9.2 `--raw`: the digest's bytes (the CRCs and sums big-endian); refused
/// with several files and with `--base64`.
#[test]
fn raw_digests_and_their_refusals() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    files(&env);
    for name in CKSUM_NAMES {
        let mut args = algorithm_args(name);
        args.extend([&b"--raw"[..], b"big"]);
        env.assert_same("cksum", &args, b"");
        env.assert_same("cksum", &args[..args.len() - 1], b"from standard input");
    }
    env.assert_same("cksum", &[b"--raw", b"one", b"two"], b"");
    env.assert_same("cksum", &[b"--raw", b"--base64", b"one"], b"");
    env.assert_same("cksum", &[b"--base64", b"--raw", b"one"], b"");
}

/// `-c` of what each algorithm wrote (hex and base64, tagged and
/// untagged), and 9.9's untagged base64 lines whose length is inferred.
#[test]
fn check_reads_what_every_form_wrote() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    let names = files(&env);
    for name in [
        "md5", "sha1", "sha256", "sha512", "sha2", "sha3", "blake2b", "sm3",
    ] {
        for form in [
            &[][..],
            &[&b"--base64"[..]],
            &[b"--untagged"],
            &[b"--untagged", b"--base64"],
        ] {
            let mut args = algorithm_args(name);
            args.extend_from_slice(form);
            args.extend(&names);
            let list = env.reference("cksum", &args, b"");
            env.file(b"list", &list.stdout);
            // With -a (untagged lines need it) and, for tagged ones, without.
            let mut check: Vec<&[u8]> = vec![b"-a", name.as_bytes(), b"-c", b"list"];
            env.assert_same("cksum", &check, b"");
            check.drain(..2);
            env.assert_same("cksum", &check, b"");
        }
    }
    for bits in ["8", "16", "24", "32", "256", "384"] {
        let list = env.reference(
            "cksum",
            &[
                b"-a",
                b"blake2b",
                b"-l",
                bits.as_bytes(),
                b"--untagged",
                b"--base64",
                b"big",
            ],
            b"",
        );
        env.file(b"list", &list.stdout);
        env.assert_same("cksum", &[b"-a", b"blake2b", b"-c", b"list"], b"");
    }
}

/// Hand-written lists of what 9.8 to 9.10 read: SHA2-N and SHA3-N tags,
/// `-a sha2` taking SHA256 tags, base64 that starts like a tag, bad
/// padding, a shortened tag, a header line before reversed lines.
#[test]
fn check_reads_the_new_tags_and_digests_as_9_10_does() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    files(&env);
    let line = |tool: &str, args: &[&[u8]]| {
        String::from_utf8(env.reference(tool, args, b"").stdout).expect("ASCII")
    };
    let sha256 = line("cksum", &[b"-a", b"sha256", b"big"]);
    let sha3 = line("cksum", &[b"-a", b"sha3", b"-l", b"384", b"big"]);
    let b64 = line(
        "cksum",
        &[
            b"-a",
            b"sha2",
            b"-l",
            b"256",
            b"--base64",
            b"--untagged",
            b"big",
        ],
    );
    let md5 = line("cksum", &[b"-a", b"md5", b"big"]);
    let hex256 = sha256
        .rsplit(' ')
        .next()
        .expect("digest")
        .trim_end()
        .to_string();
    let lists = [
        sha256.replace("SHA256", "SHA2-256"),
        sha256.replace("SHA256", "SHA2-0x100"),
        sha256.replace("SHA256", "SHA2"),
        sha3.clone(),
        sha3.replace("SHA3-384", "SHA3-383"),
        sha3.replace("SHA3-384", "SHA3"),
        b64.clone(),
        b64.replacen(|c: char| c.is_ascii_alphanumeric(), "S", 1),
        format!("SHA{}", &b64[3..]),
        b64.replace('=', ""),
        md5.replace("MD5", "MD5-64")
            .replace(&md5[md5.len() - 17..md5.len() - 1], ""),
        format!("{sha256}{md5}{sha3}"),
        format!("____not_all_hex_so_no_match_____ blah\n{hex256} big\n"),
        format!("\\{sha256}"),
    ];
    for (i, list) in lists.iter().enumerate() {
        let name = format!("list{i}");
        env.file(name.as_bytes(), list.as_bytes());
        for a in [
            &[][..],
            &[&b"-a"[..], b"sha2"],
            &[b"-a", b"sha3"],
            &[b"-a", b"md5"],
        ] {
            let mut args: Vec<&[u8]> = a.to_vec();
            args.extend([&b"-c"[..], b"-w", name.as_bytes()]);
            env.assert_same("cksum", &args, b"");
        }
    }
}

/// 9.4: `cksum -b`/`-t` and their conflicts; escaped names in `-c`
/// output; only the last `-l` validated. 9.10: `--text --tag` refused in
/// either order (md5sum too), `cksum --tag --check` refused, `--binary
/// --tag --untagged` keeping its `*`.
#[test]
fn option_rules_and_their_messages_as_9_10_has_them() {
    if crate::testenv::lacks(&["md5sum", "sha256sum", "b2sum", "cksum"]) {
        return;
    }
    let env = TestEnv::new();
    files(&env);
    let cases: &[&[&[u8]]] = &[
        &[b"-t", b"one"],
        &[b"--text", b"--untagged", b"one"],
        &[b"--binary", b"--untagged", b"one"],
        &[b"--binary", b"--tag", b"--untagged", b"one"],
        &[b"--tag", b"--text", b"--untagged", b"one"],
        &[b"-b", b"-c", b"one"],
        &[b"--tag", b"-c", b"one"],
        &[b"--untagged", b"-c", b"-"],
        &[b"-a", b"md5", b"-l", b"123", b"-l", b"0", b"one"],
        &[b"-a", b"blake2b", b"-l", b"123", b"-l", b"256", b"one"],
        &[b"-a", b"blake2b", b"-l", b"513", b"one"],
        &[b"-a", b"blake2b", b"-l", b"12", b"one"],
        &[b"-a", b"blake2b", b"-l", b"x", b"one"],
        &[b"-a", b"blake2b", b"-l", b"99999999999999999999999", b"one"],
        &[b"-a", b"sha2", b"one"],
        &[b"-a", b"sha3", b"one"],
        &[b"-a", b"sha2", b"-l", b"128", b"one"],
        &[b"-a", b"sha3", b"-l", b"0", b"one"],
        &[b"-a", b"sha3", b"-c", b"-l", b"100", b"one"],
        &[b"-a", b"md5", b"-l", b"256", b"one"],
        &[b"-a", b"crc32b", b"-c", b"one"],
        &[b"-a", b"sha4", b"one"],
        &[b"--zero", b"-c", b"one"],
        &[b"--quiet", b"one"],
    ];
    for args in cases {
        env.assert_same("cksum", args, b"");
    }
    for tool in ["md5sum", "sha256sum", "b2sum"] {
        for args in [
            &[&b"--text"[..], b"--tag", b"one"][..],
            &[b"--tag", b"--text", b"one"],
            &[b"--tag", b"--binary", b"one"],
            &[b"-b", b"one"],
            &[b"--tag", b"-c", b"one"],
            &[b"--bogus"],
        ] {
            env.assert_same(tool, args, b"");
        }
        // A name with a backslash, checked: escaped in the verdict (9.4).
        let list = env.reference(tool, &[b"a\\b", b"one"], b"");
        env.file(b"list", &list.stdout);
        env.assert_same(tool, &[b"-c", b"list"], b"");
    }
    env.assert_same("b2sum", &[b"-l", b"513", b"one"], b"");
    env.assert_same("b2sum", &[b"-l", b"99999999999999999999999", b"one"], b"");
}

/// 9.8's `--help` (sha2, sha3 and crc32b listed) and 9.10's markup: bold,
/// linked option names unless TERM is unset, empty or dumb.
#[test]
fn help_is_9_10_s_with_and_without_markup() {
    if crate::testenv::lacks(&["md5sum", "sha224sum", "sha512sum", "b2sum", "cksum", "sum"]) {
        return;
    }
    let env = TestEnv::new();
    let ours = std::path::Path::new(crate::testenv::fastsum_bin());
    for tool in ["md5sum", "sha224sum", "sha512sum", "b2sum", "cksum", "sum"] {
        for term in [None, Some(""), Some("dumb"), Some("xterm-256color")] {
            let run = |program: &std::path::Path| {
                let mut cmd = Command::new(program);
                cmd.arg0(tool)
                    .arg("--help")
                    .current_dir(env.path())
                    .env("LC_ALL", "C.UTF-8")
                    .stdin(Stdio::null());
                match term {
                    None => cmd.env_remove("TERM"),
                    Some(t) => cmd.env("TERM", t),
                };
                let out = cmd.output().expect("runs");
                (out.stdout, out.stderr, out.status.code())
            };
            let theirs = run(&reference_path(tool));
            let mine = run(ours);
            assert!(
                mine == theirs,
                "{tool} --help with TERM={term:?}\n--- coreutils\n{}\n--- fastsum\n{}",
                String::from_utf8_lossy(&theirs.0),
                String::from_utf8_lossy(&mine.0)
            );
        }
    }
}

/// 9.10: `--check` stops at the first line it cannot write; endless
/// input to a full disk ends at once, with the cause.
#[test]
fn check_of_endless_input_to_a_full_disk_stops() {
    if crate::testenv::lacks(&["md5sum", "cksum"]) {
        return;
    }
    let env = TestEnv::new();
    files(&env);
    let ours = std::path::Path::new(crate::testenv::fastsum_bin());
    let run = |program: &std::path::Path, tool: &str, line: &str| {
        let script =
            format!("yes '{line}' | timeout 20 \"$0\" --check > /dev/full; echo \"status $?\" >&2");
        let out = Command::new("sh")
            .arg0(tool)
            .args(["-c", &script, program.to_str().expect("UTF-8 path")])
            .current_dir(env.path())
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("runs");
        String::from_utf8_lossy(&out.stderr).replace(program.to_str().expect("path"), tool)
    };
    let md5 = env.reference("md5sum", &[b"one"], b"");
    let md5 = String::from_utf8(md5.stdout).expect("ASCII");
    let sha3 = env.reference("cksum", &[b"-a", b"sha3", b"-l", b"256", b"one"], b"");
    let sha3 = String::from_utf8(sha3.stdout).expect("ASCII");
    for (tool, line) in [("md5sum", md5.trim_end()), ("cksum", sha3.trim_end())] {
        let dir = env.mkdir(&format!("as-{tool}"));
        let link = dir.join(tool);
        std::os::unix::fs::symlink(ours, &link).expect("link");
        let theirs = run(&reference_path(tool), tool, line);
        assert!(theirs.ends_with("status 1\n"), "{theirs}");
        assert_eq!(run(&link, tool, line), theirs, "{tool}");
    }
}

/// `cksum --debug` says which CRC fold runs, and honours glibc's
/// `GLIBC_TUNABLES` switches as 9.10 does.
#[test]
fn debug_names_the_crc_fold_and_honours_glibc_tunables() {
    if crate::testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    files(&env);
    let ours = std::path::Path::new(crate::testenv::fastsum_bin());
    for tunables in [
        None,
        Some("glibc.cpu.hwcaps=-AVX512F"),
        Some("glibc.cpu.hwcaps=-AVX512F,-AVX2"),
        Some("glibc.cpu.hwcaps=-AVX512F,-AVX2,-AVX,-PMULL"),
        Some("glibc.malloc.check=0:glibc.cpu.hwcaps=-AVX512F,-AVX2,-PCLMULQDQ"),
    ] {
        for algorithm in ["crc", "crc32b", "md5"] {
            let run = |program: &std::path::Path| {
                let mut cmd = Command::new(program);
                cmd.arg0("cksum")
                    .args(["--debug", "-a", algorithm, "one", "two"])
                    .current_dir(env.path())
                    .env("LC_ALL", "C.UTF-8");
                match tunables {
                    Some(t) => cmd.env("GLIBC_TUNABLES", t),
                    None => cmd.env_remove("GLIBC_TUNABLES"),
                };
                let out = cmd.output().expect("runs");
                (out.stdout, out.stderr)
            };
            let (theirs, mine) = (run(&reference_path("cksum")), run(ours));
            assert!(
                theirs == mine,
                "cksum --debug -a {algorithm} with {tunables:?}: {:?} vs {:?}",
                String::from_utf8_lossy(&theirs.1),
                String::from_utf8_lossy(&mine.1)
            );
        }
    }
}
