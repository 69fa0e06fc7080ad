//! fastsum's own interface (`-a`, checking lists that mix algorithms), the
//! personality links, and files past 4 GiB against the GNU tools.

use crate::testenv;

use std::process::Command;

use testenv::{pattern, TestEnv};

#[test]
fn algorithm_option_matches_each_reference_tool() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "b3sum",
        "xxhsum",
    ]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"data", &pattern(123_457));
    env.file(b"new\nline", b"x");
    for (algorithm, tool, extra) in [
        ("md5", "md5sum", &[][..]),
        ("sha1", "sha1sum", &[]),
        ("sha224", "sha224sum", &[]),
        ("sha256", "sha256sum", &[]),
        ("sha384", "sha384sum", &[]),
        ("sha512", "sha512sum", &[]),
        ("blake2b", "b2sum", &[]),
        ("blake3", "b3sum", &[]),
        ("xxh64", "xxhsum", &[]),
        ("xxh32", "xxhsum", &[&b"-H0"[..]]),
        ("xxh128", "xxhsum", &[b"-H2"]),
        ("xxh3", "xxhsum", &[b"-H3"]),
    ] {
        let mut ref_args = extra.to_vec();
        ref_args.push(b"data");
        let expected = env.reference(tool, &ref_args, b"");
        let ours = env.fastsum(
            "fastsum",
            &[b"-a", algorithm.as_bytes(), b"--untagged", b"data"],
            b"",
        );
        assert_eq!(ours.status, 0, "{algorithm}: {}", ours.stderr_str());
        assert_eq!(
            ours.stdout_str(),
            expected.stdout_str(),
            "fastsum -a {algorithm} --untagged vs {tool}"
        );
    }
}

#[test]
fn check_reads_lists_that_mix_algorithms() {
    if crate::testenv::lacks(&["md5sum", "sha256sum", "b2sum", "b3sum", "xxhsum"]) {
        return;
    }
    let env = TestEnv::new();
    env.file(b"a", b"alpha");
    env.file(b"b", b"beta");
    let mut list = Vec::new();
    for (tool, args) in [
        ("sha256sum", &[&b"--tag"[..], b"a"][..]),
        ("b3sum", &[b"--tag", b"b"]),
        ("xxhsum", &[b"-H3", b"a"]),
        ("b2sum", &[b"--tag", b"-l", b"128", b"b"]),
        ("md5sum", &[b"a"]),
    ] {
        list.extend(env.reference(tool, args, b"").stdout);
    }
    env.file(b"list", &list);
    let ok = env.fastsum("fastsum", &[b"-c", b"list"], b"");
    assert_eq!(
        ok.stdout_str(),
        "a: OK\nb: OK\na: OK\nb: OK\na: OK\n",
        "{}",
        ok.stderr_str()
    );
    assert_eq!(ok.status, 0);
    env.file(b"b", b"changed");
    let bad = env.fastsum("fastsum", &[b"-c", b"list"], b"");
    assert_eq!(
        bad.stdout_str(),
        "a: OK\nb: FAILED\na: OK\nb: FAILED\na: OK\n"
    );
    assert_eq!(
        bad.stderr_str(),
        "fastsum: WARNING: 2 computed checksums did NOT match\n"
    );
    assert_eq!(bad.status, 1);
}

#[test]
fn unknown_algorithm_is_a_usage_error_listing_the_choices() {
    let env = TestEnv::new();
    // crc32 is one now (zlib's CRC-32, as S3 keeps it): a name that is none.
    let out = env.fastsum("fastsum", &[b"-a", b"crc31", b"x"], b"");
    assert_eq!(out.status, 2);
    let err = out.stderr_str();
    assert!(err.starts_with("fastsum: invalid argument ‘crc31’ for ‘--algorithm’\nValid arguments are:\n  - ‘md5’\n"), "{err}");
    assert!(
        err.contains("‘xxh128’") && err.ends_with("Try 'fastsum --help' for more information.\n"),
        "{err}"
    );
}

#[test]
fn personality_comes_from_the_link_name() {
    let env = TestEnv::new();
    env.file(b"abc", b"abc");
    for (link, expected) in [
        ("md5sum", "900150983cd24fb0d6963f7d28e17f72  abc\n"),
        ("sha1sum", "a9993e364706816aba3e25717850c26c9cd0d89d  abc\n"),
        ("xxhsum", "44bc2cf5ad770999  abc\n"),
        (
            "b3sum",
            "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85  abc\n",
        ),
    ] {
        let path = env.path().join(link);
        std::os::unix::fs::symlink(crate::testenv::fastsum_bin(), &path).unwrap();
        let out = Command::new(&path)
            .arg("abc")
            .current_dir(env.path())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{link}");
    }
}

/// Files over 4 GiB hash correctly. A sparse file with data at
/// both ends, past the 32-bit length boundary, against md5sum and xxhsum.
#[test]
fn files_over_4_gib_match_the_reference_tools() {
    if crate::testenv::lacks(&["md5sum", "xxhsum"]) {
        return;
    }
    let env = TestEnv::new();
    let path = env.path().join("over4g");
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&pattern(1 << 20)).unwrap();
        f.set_len((4u64 << 30) + 12_345).unwrap();
        f.seek(SeekFrom::Start((4u64 << 30) + 12_345 - 4096))
            .unwrap();
        f.write_all(&pattern(4096)).unwrap();
    }
    env.assert_same("md5sum", &[b"over4g"], b"");
    env.assert_same("xxhsum", &[b"-H2", b"over4g"], b"");
}
