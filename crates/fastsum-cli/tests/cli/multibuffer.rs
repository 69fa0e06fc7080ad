//! Multi-buffer MD5 through the real binary, at every lane width
//! and with the lanes forced off (`FASTSUM_SIMD`), against GNU md5sum:
//! trees of many files of awkward sizes, plain operands with failures
//! among them, and `-c` of the manifest.

use crate::testenv;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output};

use testenv::TestEnv;

/// Every width (an unsupported one falls back to the best below it, so
/// each still runs), and the scalar path.
const WIDTHS: [&str; 9] = [
    "scalar", "sse2", "avx2", "avx2x2", "avx512", "avx512x2", "neon", "neonx2", "",
];

/// Runs the binary as `md5sum` (the drop-in personality).
fn fastsum(env: &TestEnv, width: &str, args: &[&[u8]]) -> Output {
    fastsum_named(env, "md5sum", width, args)
}

fn fastsum_named(env: &TestEnv, name: &str, width: &str, args: &[&[u8]]) -> Output {
    let mut cmd = env.command(name);
    cmd.args(args.iter().map(|a| OsStr::from_bytes(a)));
    if width.is_empty() {
        cmd.env_remove("FASTSUM_SIMD");
    } else {
        cmd.env("FASTSUM_SIMD", width);
    }
    cmd.output().expect("run fastsum")
}

fn md5sum(env: &TestEnv, script: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(env.path())
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("run md5sum")
}

/// A small xorshift, so the tree is the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// 300 files in 6 directories: the block edges, sizes around the lane
/// buffer, a few multi-MiB files among many small ones (lanes finish in
/// every order and refill mid-run), and empty files.
fn make_tree(env: &TestEnv) {
    let edges = [
        0usize, 1, 55, 56, 63, 64, 65, 127, 128, 4095, 65_535, 65_536, 65_537,
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for dir in 0..6 {
        env.mkdir(&format!("t/d{dir}"));
    }
    for i in 0..300usize {
        let len = match i % 10 {
            0..=3 => edges[i % edges.len()],
            4..=8 => (rng.next() % 20_000) as usize,
            _ if i % 50 == 9 => 3 * 1024 * 1024 + (rng.next() % 1000) as usize,
            _ => (rng.next() % 300_000) as usize,
        };
        let content: Vec<u8> = (0..len)
            .map(|j| (j as u64 ^ (j as u64 >> 8) ^ i as u64) as u8)
            .collect();
        env.file(format!("t/d{}/f{i:03}", i % 6).as_bytes(), &content);
    }
}

#[test]
fn a_tree_matches_md5sum_at_every_width() {
    let env = TestEnv::new();
    make_tree(&env);
    let expected = md5sum(
        &env,
        "find t -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum",
    );
    assert!(expected.status.success());
    for width in WIDTHS {
        for threads in ["1", "2"] {
            let ours = fastsum_named(
                &env,
                "fastsum",
                width,
                &[b"-r", b"-j", threads.as_bytes(), b"t"],
            );
            assert_eq!(String::from_utf8_lossy(&ours.stderr), "", "{width}");
            assert!(ours.status.success(), "{width}");
            assert!(
                ours.stdout == expected.stdout,
                "FASTSUM_SIMD={width} -j {threads} differs from md5sum"
            );
        }
    }
}

#[test]
fn operands_with_failures_among_them_match_md5sum_at_every_width() {
    let env = TestEnv::new();
    make_tree(&env);
    env.mkdir("adir");
    let operands = "t/d0/f000 missing t/d1/f001 adir t/d3/f009 t/d5/f005 t/d3/f009";
    let expected = md5sum(&env, &format!("md5sum {operands}"));
    for width in WIDTHS {
        let args: Vec<&[u8]> = operands.split(' ').map(str::as_bytes).collect();
        let ours = fastsum(&env, width, &args);
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&expected.stdout),
            "{width}"
        );
        assert_eq!(
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&expected.stderr),
            "{width}"
        );
        assert_eq!(ours.status.code(), expected.status.code(), "{width}");
    }
}

#[test]
fn checking_the_manifest_passes_and_catches_a_change_at_every_width() {
    let env = TestEnv::new();
    make_tree(&env);
    let manifest = md5sum(
        &env,
        "find t -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum",
    );
    env.file(b"MD5SUMS", &manifest.stdout);
    for width in WIDTHS {
        let ours = fastsum(&env, width, &[b"-c", b"--quiet", b"MD5SUMS"]);
        assert!(
            ours.status.success(),
            "{width}: {}",
            String::from_utf8_lossy(&ours.stdout)
        );
    }
    // One byte changed in a multi-MiB file: that line, and only it, fails.
    let victim = env.path().join("t/d3/f009");
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[2_000_000] ^= 1;
    std::fs::write(&victim, bytes).unwrap();
    for width in WIDTHS {
        let ours = fastsum(&env, width, &[b"-c", b"--quiet", b"MD5SUMS"]);
        assert_eq!(ours.status.code(), Some(1), "{width}");
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            "t/d3/f009: FAILED\n",
            "{width}"
        );
    }
}

#[test]
fn sha1_trees_and_checks_match_sha1sum_at_every_width() {
    let env = TestEnv::new();
    make_tree(&env);
    let expected = md5sum(
        &env,
        "find t -type f -print0 | LC_ALL=C sort -z | xargs -0 sha1sum",
    );
    assert!(expected.status.success());
    env.file(b"SHA1SUMS", &expected.stdout);
    for width in WIDTHS {
        let ours = fastsum_named(
            &env,
            "fastsum",
            width,
            &[b"-a", b"sha1", b"--untagged", b"-r", b"t"],
        );
        assert_eq!(String::from_utf8_lossy(&ours.stderr), "", "{width}");
        assert!(
            ours.stdout == expected.stdout,
            "FASTSUM_SIMD={width}: sha1 differs from sha1sum"
        );
        let check = fastsum_named(&env, "sha1sum", width, &[b"-c", b"--quiet", b"SHA1SUMS"]);
        assert!(
            check.status.success(),
            "{width}: {}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
}

#[test]
fn a_low_open_file_limit_costs_speed_never_files() {
    let env = TestEnv::new();
    make_tree(&env);
    let expected = md5sum(
        &env,
        "find t -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum",
    );
    // A hard limit too low for 4 workers x 32 lanes: one file at a time per
    // worker. A soft one: raised toward the hard limit, lanes kept.
    for limit in ["ulimit -n 64", "ulimit -S -n 64"] {
        let ours = md5sum(
            &env,
            &format!(
                "{limit} && exec '{}' -r -j 4 t",
                crate::testenv::fastsum_bin()
            ),
        );
        assert_eq!(String::from_utf8_lossy(&ours.stderr), "", "{limit}");
        assert!(ours.status.success(), "{limit}");
        assert!(
            ours.stdout == expected.stdout,
            "{limit}: differs from md5sum"
        );
    }
}
