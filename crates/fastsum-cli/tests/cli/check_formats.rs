//! `fastsum -c` of the lists its peers write, differential
//! against each tool's own verify on the same tree: rhash (`--sfv`,
//! `--bsd`, `--simple`), cksfv, hashdeep (every column), `sha256sum
//! --tag`, md5sum's lines with CRLF ends. The verdicts agree on the tree
//! as listed, after a byte of one file is flipped, and with a file gone.

use std::fs;
use std::process::Command;

use crate::testenv::{Outcome, TestEnv};

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// `tool ARGS` in the test's directory: its exit status and stdout.
fn tool(env: &TestEnv, tool: &str, args: &[&str]) -> (i32, Vec<u8>) {
    let out = Command::new(tool)
        .args(args)
        .current_dir(env.path())
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap_or_else(|e| panic!("{tool} runs (scripts/tests/install-peers installs it): {e}"));
    (out.status.code().unwrap_or(-1), out.stdout)
}

fn tree(env: &TestEnv) {
    env.mkdir("t/sub");
    env.file(b"t/plain", b"plain\n");
    env.file(b"t/with spaces", b"spaces\n");
    env.file(b"t/empty", b"");
    env.file(b"t/sub/big", &vec![7u8; 300_000]);
}

/// A peer's list: how it is made (written to `list`), and how the peer
/// verifies it.
struct Peer {
    list: &'static str,
    make: (&'static str, &'static [&'static str]),
    verify: (&'static str, &'static [&'static str]),
    /// fastsum's options beside `-c`.
    check: &'static [&'static str],
}

const PEERS: &[Peer] = &[
    Peer {
        list: "L.sfv",
        make: ("rhash", &["--sfv", "-r", "t"]),
        verify: ("rhash", &["-c", "L.sfv"]),
        check: &[],
    },
    Peer {
        list: "C.sfv",
        make: (
            "cksfv",
            &["t/plain", "t/with spaces", "t/empty", "t/sub/big"],
        ),
        verify: ("cksfv", &["-q", "-f", "C.sfv"]),
        check: &[],
    },
    Peer {
        list: "L.bsd",
        make: ("rhash", &["--bsd", "--md5", "--sha256", "-r", "t"]),
        verify: ("rhash", &["-c", "L.bsd"]),
        check: &[],
    },
    Peer {
        list: "L.crc",
        make: ("rhash", &["--simple", "-r", "t"]),
        verify: ("rhash", &["-c", "L.crc"]),
        check: &["-a", "crc32b"],
    },
    Peer {
        list: "L.sha256",
        make: ("rhash", &["--simple", "--sha256", "-r", "t"]),
        verify: ("rhash", &["-c", "L.sha256"]),
        check: &[],
    },
    Peer {
        list: "L.tag",
        make: (
            "sha256sum",
            &["--tag", "t/plain", "t/with spaces", "t/empty", "t/sub/big"],
        ),
        verify: ("sha256sum", &["-c", "L.tag"]),
        check: &[],
    },
    Peer {
        list: "L.hd",
        make: ("hashdeep", &["-l", "-c", "md5,sha256", "-r", "t"]),
        verify: ("hashdeep", &["-l", "-a", "-k", "L.hd", "-r", "t"]),
        check: &[],
    },
];

/// The peer's verdict and fastsum's on the tree as it is now: both pass or
/// both fail, and fastsum names `failing` when one is expected.
fn agree(env: &TestEnv, peer: &Peer, state: &str, failing: Option<&str>) {
    let (status, _) = tool(env, peer.verify.0, peer.verify.1);
    let mut args = vec!["-c"];
    args.extend(peer.check);
    args.push(peer.list);
    let out = fastsum(env, &args);
    let said = format!(
        "{} {state}: {}{}",
        peer.list,
        out.stdout_str(),
        out.stderr_str()
    );
    assert_eq!(status == 0, out.status == 0, "{said}");
    assert_eq!(out.status == 0, failing.is_none(), "{said}");
    if let Some(name) = failing {
        assert!(
            out.stdout_str().contains(&format!("{name}: FAILED")),
            "{said}"
        );
    }
}

#[test]
fn fastsum_checks_the_lists_its_peers_write_as_they_do() {
    if crate::testenv::lacks(&["rhash", "cksfv", "hashdeep"]) {
        return;
    }
    for peer in PEERS {
        let env = TestEnv::new();
        tree(&env);
        let (status, list) = tool(&env, peer.make.0, peer.make.1);
        assert_eq!(status, 0, "{}", peer.list);
        env.file(peer.list.as_bytes(), &list);
        agree(&env, peer, "as listed", None);
        let big = env.path().join("t/sub/big");
        let mut bytes = fs::read(&big).unwrap();
        bytes[123_456] ^= 1;
        fs::write(&big, &bytes).unwrap();
        agree(&env, peer, "a byte flipped", Some("t/sub/big"));
        bytes[123_456] ^= 1;
        fs::write(&big, &bytes).unwrap();
        fs::remove_file(env.path().join("t/plain")).unwrap();
        agree(&env, peer, "a file gone", Some("t/plain"));
    }
}

/// CRLF ends (a list made on Windows) read as md5sum reads them.
#[test]
fn crlf_lists_check_as_md5sum_checks_them() {
    let env = TestEnv::new();
    tree(&env);
    let (_, list) = tool(&env, "md5sum", &["t/plain", "t/with spaces"]);
    let crlf: Vec<u8> = list
        .iter()
        .flat_map(|&b| match b {
            b'\n' => vec![b'\r', b'\n'],
            b => vec![b],
        })
        .collect();
    env.file(b"L.md5", &crlf);
    let (status, reference) = tool(&env, "md5sum", &["-c", "L.md5"]);
    let out = fastsum(&env, &["-c", "L.md5"]);
    assert_eq!((out.status, out.stdout), (status, reference));
}

/// md5 and sha256 of `bytes`, by the GNU tools (independent of fastsum).
fn digests_of(env: &TestEnv, name: &str) -> (String, String) {
    let hex = |tool_name: &str| {
        let (_, out) = tool(env, tool_name, &[name]);
        String::from_utf8_lossy(&out)[..]
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    };
    (hex("md5sum"), hex("sha256sum"))
}

/// Debian's Release files: each section's digest and the size checked,
/// paths relative to the file's directory, an `InRelease`'s armour read
/// past (its signature is not verified: said with -v).
#[test]
fn release_files_check_every_section_and_the_size() {
    let env = TestEnv::new();
    env.mkdir("mirror/main");
    env.file(b"mirror/main/Packages", b"Package: x\n");
    env.file(b"mirror/main/Sources", b"Package: y\n");
    let (md5, sha) = digests_of(&env, "mirror/main/Packages");
    let (_, sha_s) = digests_of(&env, "mirror/main/Sources");
    let release = format!(
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nOrigin: Test\nMD5Sum:\n {md5}       11 main/Packages\n\
         SHA256:\n {sha}       11 main/Packages\n {sha_s}       11 main/Sources\n {sha}       11 main/absent\n\
         -----BEGIN PGP SIGNATURE-----\n\nxx\n-----END PGP SIGNATURE-----\n"
    );
    env.file(b"mirror/InRelease", release.as_bytes());
    let out = fastsum(&env, &["-c", "-v", "--ignore-missing", "mirror/InRelease"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(
        out.stdout_str(),
        "mirror/main/Packages: OK\nmirror/main/Sources: OK\n"
    );
    assert!(out
        .stderr_str()
        .contains("read as a Debian Release file (its signature is not verified)"));
    // Same bytes, one more: the digest and the size both tell.
    env.file(b"mirror/main/Sources", b"Package: yy\n");
    let out = fastsum(&env, &["-c", "--ignore-missing", "mirror/InRelease"]);
    assert_eq!(out.status, 1);
    assert!(out.stdout_str().contains("mirror/main/Sources: FAILED"));
    // A size that lies, digests right.
    let lying = release.replace(&format!("{md5}       11"), &format!("{md5}       12"));
    let lying = lying.replace(
        &format!("{sha}       11 main/Packages"),
        &format!("{sha}       12 main/Packages"),
    );
    env.file(b"mirror/Release", lying.as_bytes());
    let out = fastsum(&env, &["-c", "--ignore-missing", "mirror/Release"]);
    assert!(
        out.stdout_str().contains("mirror/main/Packages: FAILED"),
        "{}",
        out.stdout_str()
    );
    assert!(
        out.stderr_str().contains("11 bytes, 12 listed"),
        "{}",
        out.stderr_str()
    );
}

/// A hashdeep list whose sha256 column lies for one file: md5 matches,
/// the file still fails (hashdeep's audit calls it partially matched).
#[test]
fn a_file_whose_digests_do_not_all_match_fails() {
    let env = TestEnv::new();
    tree(&env);
    let out = fastsum(
        &env,
        &["-r", "--format=hashdeep", "-a", "md5", "-a", "sha256", "t"],
    );
    let (_, sha) = digests_of(&env, "t/plain");
    let lied = out.stdout_str().replace(&sha, &"0".repeat(64));
    env.file(b"L.hd", lied.as_bytes());
    let out = fastsum(&env, &["-c", "L.hd"]);
    assert_eq!(out.status, 1);
    assert!(
        out.stdout_str().contains("t/plain: FAILED\n"),
        "{}",
        out.stdout_str()
    );
    assert!(out.stdout_str().contains("t/empty: OK\n"));
    assert!(out
        .stderr_str()
        .contains("t/plain: its sha256 digest does not match"));
    let out = fastsum(&env, &["-c", "--status", "L.hd"]);
    let said = (out.status, out.stdout_str(), out.stderr_str());
    assert_eq!(said, (1, String::new(), String::new()));
}

/// The format is told from the content; --format forces one; a list in
/// none names the closest and what did not fit; 8 hex digits read as the
/// CRC they are.
#[test]
fn formats_are_told_forced_and_explained() {
    if crate::testenv::lacks(&["rhash"]) {
        return;
    }
    let env = TestEnv::new();
    tree(&env);
    let json = fastsum(&env, &["-r", "--json", "--dirs", "t"]).stdout;
    env.file(b"L", &json);
    let out = fastsum(&env, &["-c", "--debug", "L"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let said = out.stderr_str();
    assert!(said.contains("L: read as fastsum --json records"), "{said}");
    assert!(
        said.contains("L: 2 directory digests not checked (-c --dirs checks them)"),
        "{said}"
    );
    let out = fastsum(&env, &["-c", "--dirs", "L"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert!(out.stdout_str().contains("t/sub/: OK"));
    let out = fastsum(&env, &["-c", "--format=sfv", "L"]);
    assert_eq!(out.status, 1);
    assert!(
        out.stderr_str().contains("L: 1: not an SFV line"),
        "{}",
        out.stderr_str()
    );
    env.file(b"bad", b"FOO (t/plain) = 00\n");
    let out = fastsum(&env, &["-c", "bad"]);
    assert!(
        out.stderr_str()
            .contains("closest format: GNU/BSD checksum lines; the tag \"FOO\""),
        "{}",
        out.stderr_str()
    );
    let (_, crc) = tool(&env, "rhash", &["--simple", "t/plain"]);
    env.file(b"crc", &crc);
    // Read as the CRC its file matches: zlib's CRC-32 is
    // crc32b's checksum too.
    let out = fastsum(&env, &["-c", "crc"]);
    assert_eq!(
        (out.status, out.stdout_str(), out.stderr_str()),
        (
            0,
            "t/plain: OK\n".to_string(),
            "fastsum: crc: untagged 8-digit digests read as CRC32 \
             (the smallest listed file matched CRC32 and CRC32B alike)\n"
                .to_string()
        )
    );
    let out = fastsum(&env, &["-c", "-a", "crc32b", "crc"]);
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, "t/plain: OK\n".to_string())
    );
    // The personalities keep GNU's reading and words.
    let out = env.fastsum("md5sum", &[b"-c", b"L"], b"");
    assert_eq!(
        out.stderr_str(),
        "md5sum: L: no properly formatted checksum lines found\n"
    );
}

/// Several -a with --stamps was silently written without stamps, then
/// refused; each record now carries its stamp, and `-c`
/// reads the list.
#[test]
fn stamps_with_several_digests_are_written() {
    let env = TestEnv::new();
    tree(&env);
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let args = ["-r", "--json", "--stamps", "-a", "md5", "-a", "sha1", "t"];
    let out = fastsum(&env, &args);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    let records = out.stdout_str().lines().count();
    assert!(records > 0);
    for field in ["\"digests\":{", "\"mtime_ns\":", "\"fsid\":"] {
        let text = out.stdout_str();
        assert_eq!(text.matches(field).count(), records, "{field}: {text}");
    }
    env.file(b"L", &out.stdout);
    let check = fastsum(&env, &["-c", "L"]);
    assert_eq!(check.status, 0, "{}", check.stderr_str());
}

/// A lone digest in `x.sha256` checks `x`; SHA256SUMS means sha256.
#[test]
fn a_list_named_for_its_algorithm_reads_as_that_algorithm() {
    let env = TestEnv::new();
    tree(&env);
    let (_, sha) = digests_of(&env, "t/plain");
    env.file(b"t/plain.sha256", format!("{sha}\n").as_bytes());
    let out = fastsum(&env, &["-c", "t/plain.sha256"]);
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, "t/plain: OK\n".to_string())
    );
    env.file(b"SHA256SUMS", format!("{sha}  t/plain\n").as_bytes());
    let out = fastsum(&env, &["-c", "SHA256SUMS"]);
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, "t/plain: OK\n".to_string())
    );
}

/// A Release file's paths are relative to its directory and stay below
/// it, as apt fetches them: an entry naming `../outside.txt`, a path with
/// a `..` inside, or an absolute path is refused by name and fails the
/// list, even with the right digest (read, it would say OK and let an
/// unsigned list test guessed digests of any file); the entries inside
/// are still checked.
#[test]
fn release_entries_that_leave_the_directory_are_refused_by_name() {
    let env = TestEnv::new();
    env.mkdir("mirror/main");
    env.file(b"mirror/main/Packages", b"Package: x\n");
    env.file(b"outside.txt", b"secret\n");
    let (_, inside) = digests_of(&env, "mirror/main/Packages");
    let (_, outside) = digests_of(&env, "outside.txt");
    let absolute = env.path().join("outside.txt");
    let release = format!(
        "Origin: Test\nSHA256:\n {inside} 11 main/Packages\n {outside} 7 ../outside.txt\n \
         {outside} 7 main/../../outside.txt\n {outside} 7 {}\n",
        absolute.display()
    );
    env.file(b"mirror/Release", release.as_bytes());
    for json in [false, true] {
        let mut args = vec!["-c", "mirror/Release"];
        if json {
            args.push("--json");
        }
        let out = fastsum(&env, &args);
        assert_eq!(out.status, 1, "{}{}", out.stdout_str(), out.stderr_str());
        let said = out.stderr_str();
        for name in [
            "../outside.txt",
            "main/../../outside.txt",
            &absolute.display().to_string(),
        ] {
            assert!(
                said.lines().any(
                    |l| l.contains(&format!(": {name}: refused: outside the list's directory"))
                ),
                "{name}: {said}"
            );
        }
        let printed = out.stdout_str();
        assert!(!printed.contains("outside.txt: OK"), "{printed}");
        if json {
            assert_eq!(
                printed.matches("\"status\":\"refused\"").count(),
                3,
                "{printed}"
            );
        } else {
            assert_eq!(printed, "mirror/main/Packages: OK\n");
        }
    }
}

/// Real data nobody here wrote: this machine's Debian `InRelease` and a
/// `Packages` it lists (apt keeps it lz4-compressed and its path
/// flattened: laid out again as the archive has it). Checked OK, then
/// FAILED with a byte flipped. SKIPPED where apt has no lists or lz4 is
/// missing.
#[test]
fn a_debian_inrelease_checks_the_packages_file_it_lists() {
    let lists = std::path::Path::new("/var/lib/apt/lists");
    let found = fs::read_dir(lists)
        .into_iter()
        .flatten()
        .flatten()
        .find_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let (prefix, rest) = name.split_once("_dists_")?;
            let (suite, packages) = rest.split_once('_')?;
            let packages = packages.strip_suffix("_Packages.lz4")?;
            let release = lists.join(format!("{prefix}_dists_{suite}_InRelease"));
            release
                .exists()
                .then(|| (e.path(), release, packages.replace('_', "/")))
        });
    let Some((compressed, release, dir)) = found else {
        crate::testenv::skip("no InRelease with its Packages.lz4 in /var/lib/apt/lists");
        return;
    };
    let env = TestEnv::new();
    let packages = format!("m/{dir}/Packages");
    env.mkdir(&format!("m/{dir}"));
    let lz4 = Command::new("lz4")
        .arg("-dqf")
        .arg(&compressed)
        .arg(env.path().join(&packages))
        .status();
    if !lz4.is_ok_and(|s| s.success()) {
        crate::testenv::skip(&format!(
            "lz4 could not decompress {}",
            compressed.display()
        ));
        return;
    }
    fs::copy(&release, env.path().join("m/InRelease")).unwrap();
    let out = fastsum(&env, &["-c", "--ignore-missing", "m/InRelease"]);
    assert_eq!(
        (out.status, out.stdout_str()),
        (0, format!("{packages}: OK\n")),
        "{}",
        out.stderr_str()
    );
    let mut bytes = fs::read(env.path().join(&packages)).unwrap();
    bytes[0] ^= 1;
    fs::write(env.path().join(&packages), bytes).unwrap();
    let out = fastsum(&env, &["-c", "--ignore-missing", "m/InRelease"]);
    assert_eq!(out.status, 1);
    assert!(out.stdout_str().contains(&format!("{packages}: FAILED")));
}
