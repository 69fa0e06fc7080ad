//! The digests S3 keeps: crc32, crc32c, crc64nvme, the
//! multipart ETag (s3etag) and the composite checksums of CRC-32, CRC-32C,
//! SHA-1 and SHA-256 for a part size, in hex and in S3's base64, against
//! Python's independent code (zlib, hashlib, and awscrt's CRCs where the
//! interpreter has it — the Python suite's venv does — else a table-driven
//! CRC written here), on sizes around the part boundaries; and `-c`
//! reading back what `-r` wrote with them.

use std::process::Command;

use crate::testenv::TestEnv;

/// Prints, for each file and each tag, the line fastsum should print:
/// `TAG[/NKiB] (FILE) = VALUE[-N]`, VALUE in hex or base64.
const REFERENCE: &str = r#"
import base64, hashlib, sys, zlib
try:
    from awscrt import checksums as crt
except ImportError:
    crt = None

def table(poly):
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t.append(c)
    return t

T32C, T64 = table(0x82F63B78), table(0x9A6C9329AC4BC9B5)

def by_table(t, mask, data):
    c = mask
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ mask

def crc32c(d):
    return crt.crc32c(d) if crt else by_table(T32C, 0xFFFFFFFF, d)

def crc64nvme(d):
    return crt.crc64nvme(d) if crt else by_table(T64, (1 << 64) - 1, d)

ALGORITHMS = {
    "CRC32": lambda d: zlib.crc32(d).to_bytes(4, "big"),
    "CRC32C": lambda d: crc32c(d).to_bytes(4, "big"),
    "CRC64NVME": lambda d: crc64nvme(d).to_bytes(8, "big"),
    "S3ETAG": lambda d: hashlib.md5(d).digest(),
    "SHA1": lambda d: hashlib.sha1(d).digest(),
    "SHA256": lambda d: hashlib.sha256(d).digest(),
}

kib, encoding, tags, files = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4:]
for name in files:
    data = open(name, "rb").read()
    for tag in tags:
        h = ALGORITHMS[tag]
        value, n, label = h(data), 0, tag
        if kib != "whole":
            size = int(kib) * 1024
            parts = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
            if len(parts) > 1:
                value, n = h(b"".join(h(p) for p in parts)), len(parts)
            label = "%s/%sKiB" % (tag, kib)
        text = value.hex() if encoding == "hex" else base64.b64encode(value).decode()
        print("%s (%s) = %s%s" % (label, name, text, "-%d" % n if n else ""))
"#;

/// The interpreter with awscrt if there is one (the Python suite's venv),
/// else python3.
fn python() -> String {
    let venv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/py-venv/bin/python"
    );
    let has_crt = |python: &str| {
        Command::new(python)
            .args(["-c", "import awscrt.checksums"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    match has_crt(venv) {
        true => venv.to_string(),
        false => "python3".to_string(),
    }
}

fn reference(env: &TestEnv, kib: &str, encoding: &str, tags: &str, files: &[String]) -> String {
    let out = Command::new(python())
        .args(["-c", REFERENCE, kib, encoding, tags])
        .args(files)
        .current_dir(env.path())
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Files of every size that matters for parts of 1, 5 and 64 KiB: 0, 1,
/// each boundary and one byte either side, and a few odd sizes; the
/// bytes from a small LCG, so every part differs.
fn files(env: &TestEnv) -> Vec<String> {
    let mut sizes = vec![0usize, 1, 2, 1000, 77_777];
    for part in [1024usize, 5 * 1024, 64 * 1024] {
        for k in 1..=3 {
            sizes.extend([k * part - 1, k * part, k * part + 1]);
        }
    }
    sizes.sort_unstable();
    sizes.dedup();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    sizes
        .iter()
        .map(|&len| {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (seed >> 56) as u8
                })
                .collect();
            let name = format!("f{len}");
            env.file(name.as_bytes(), &bytes);
            name
        })
        .collect()
}

fn fastsum_lines(env: &TestEnv, args: &[&str], files: &[String]) -> String {
    let mut argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    argv.extend(files.iter().map(|f| f.as_bytes()));
    let out = env.fastsum("fastsum", &argv, b"");
    assert_eq!(out.status, 0, "{args:?}: {}", out.stderr_str());
    out.stdout_str()
}

#[test]
fn whole_crcs_equal_zlib_and_awscrt_in_hex_and_base64() {
    let env = TestEnv::new();
    let files = files(&env);
    let args = ["-a", "crc32", "-a", "crc32c", "-a", "crc64nvme"];
    for (encoding, extra) in [("hex", None), ("base64", Some("--base64"))] {
        let mut a = args.to_vec();
        a.extend(extra);
        let want = reference(&env, "whole", encoding, "CRC32,CRC32C,CRC64NVME", &files);
        assert_eq!(fastsum_lines(&env, &a, &files), want, "{encoding}");
    }
}

#[test]
fn etags_and_composites_equal_hashlib_at_every_boundary() {
    let env = TestEnv::new();
    let files = files(&env);
    let tags = "S3ETAG,CRC32,CRC32C,SHA1,SHA256";
    for kib in ["1", "5", "64"] {
        let size = format!("{kib}KiB");
        let args = [
            "-a",
            "s3etag",
            "-a",
            "crc32",
            "-a",
            "crc32c",
            "-a",
            "sha1",
            "-a",
            "sha256",
            "--part-size",
            &size,
        ];
        let want = reference(&env, kib, "hex", tags, &files);
        assert_eq!(fastsum_lines(&env, &args, &files), want, "{kib} KiB");
        let mut b64 = args.to_vec();
        b64.push("--base64");
        let want = reference(&env, kib, "base64", tags, &files);
        assert_eq!(fastsum_lines(&env, &b64, &files), want, "{kib} KiB base64");
    }
}

#[test]
fn check_reads_back_what_recursive_wrote() {
    let env = TestEnv::new();
    env.mkdir("t");
    for (name, len) in [("t/a", 0), ("t/b", 3000), ("t/c", 2048), ("t/d", 9)] {
        env.file(name.as_bytes(), &crate::testenv::pattern(len));
    }
    let cases: [&[&str]; 7] = [
        &["-a", "crc64nvme"],
        &["-a", "crc32c", "--base64"],
        &["-a", "crc32"],
        &["-a", "s3etag", "--part-size", "1KiB"],
        &["-a", "sha256", "--part-size", "1K", "--base64"],
        &["-a", "crc32c", "--part-size", "1024", "--json"],
        &["-a", "s3etag", "--part-size", "1KiB", "--untagged"],
    ];
    for args in cases {
        let mut write: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        write.extend([&b"-r"[..], b"t"]);
        let list = env.fastsum("fastsum", &write, b"");
        assert_eq!(list.status, 0, "{args:?}: {}", list.stderr_str());
        env.file(b"list", &list.stdout);
        // Untagged lines take the algorithm from -a, as md5sum's do.
        let mut check: Vec<&[u8]> = vec![b"-c", b"list"];
        if args.contains(&"--untagged") {
            check.extend(
                args.iter()
                    .filter(|a| **a != "--untagged")
                    .map(|a| a.as_bytes()),
            );
        }
        let ok = env.fastsum("fastsum", &check, b"");
        assert_eq!(
            ok.status,
            0,
            "{args:?}: {}{}",
            ok.stdout_str(),
            ok.stderr_str()
        );
        assert_eq!(ok.stdout_str().matches(": OK").count(), 4, "{args:?}");
        // A same-size edit in the second part is found.
        let mut b = crate::testenv::pattern(3000);
        b[2500] ^= 1;
        env.file(b"t/b", &b);
        let bad = env.fastsum("fastsum", &check, b"");
        assert_eq!(bad.status, 1, "{args:?}");
        assert!(
            bad.stdout_str().contains("t/b: FAILED"),
            "{args:?}: {}",
            bad.stdout_str()
        );
        env.file(b"t/b", &crate::testenv::pattern(3000));
    }
}

#[test]
fn part_sizes_go_with_s3s_composite_algorithms_only() {
    let env = TestEnv::new();
    env.file(b"f", b"x");
    for (args, says) in [
        (
            &["-a", "crc64nvme", "--part-size", "8MiB", "f"][..],
            "whole objects only",
        ),
        (
            &["-a", "blake3", "--part-size", "8MiB", "f"],
            "s3etag, md5, crc32, crc32c",
        ),
        (
            &["-a", "s3etag", "--part-size", "0", "f"],
            "invalid part size",
        ),
        (
            &["-a", "s3etag", "--part-size", "8XB", "f"],
            "invalid part size",
        ),
    ] {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let out = env.fastsum("fastsum", &argv, b"");
        // A usage error: 2 under fastsum's own name.
        assert_eq!(out.status, 2, "{args:?}");
        assert!(
            out.stderr_str().contains(says),
            "{args:?}: {}",
            out.stderr_str()
        );
        assert!(out.stdout.is_empty());
    }
    // The default part size is 8 MiB: a small file's ETag is its MD5.
    let out = env.fastsum("fastsum", &[b"-a", b"s3etag", b"f"], b"");
    assert_eq!(
        out.stdout_str(),
        "S3ETAG/8MiB (f) = 9dd4e461268c8034f5c8564e155c67a6\n"
    );
}
