//! `--update` killed at random points, and run twice at once: the manifest
//! is always the old list or the new one, byte for byte, never a mix or a
//! truncation; a run after a killed one converges to a fresh run's list and
//! leaves no temporary file behind. Also `--files0-from` read as a stream:
//! a list longer than one batch hashes every name, in order, with its empty
//! names numbered across batches.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::testenv::{reference_hex, TestEnv};

/// xorshift64*: the same random choices on every run (a seed from
/// FASTSUM_TEST_SEED replays another).
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("FASTSUM_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x005e_ed51_u64);
        Rng(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn fastsum(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(crate::testenv::fastsum_bin());
    command
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn run(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = fastsum(dir, args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A tree of `n` files of up to 96 KiB in a few directories.
fn random_tree(root: &Path, rng: &mut Rng, n: usize) {
    for i in 0..n {
        let dir = root.join(format!("d{}", rng.below(6)));
        std::fs::create_dir_all(&dir).unwrap();
        let len = rng.below(96 << 10) as usize;
        let byte = rng.below(256) as u8;
        std::fs::write(dir.join(format!("f{i}")), vec![byte; len]).unwrap();
    }
}

/// Edits, removals and additions in the tree `root` made by `random_tree`.
fn random_changes(root: &Path, rng: &mut Rng, n: usize) {
    for i in 0..n {
        let path = root
            .join(format!("d{}", rng.below(6)))
            .join(format!("f{i}"));
        match rng.below(3) {
            0 if path.exists() => std::fs::write(&path, b"edited\n").unwrap(),
            1 if path.exists() => std::fs::remove_file(&path).unwrap(),
            _ => {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path.with_file_name(format!("new{i}")), b"new\n").unwrap();
            }
        }
    }
}

fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("fastsum-update"))
        .collect()
}

#[test]
fn an_update_killed_anywhere_leaves_the_old_list_or_the_new_one() {
    let env = TestEnv::new();
    let dir = env.path();
    let mut rng = Rng::new();
    random_tree(&dir.join("t"), &mut rng, 400);
    let old = run(dir, &["-r", "--cache=warm.db", "t"]);
    std::thread::sleep(Duration::from_millis(2200));
    random_changes(&dir.join("t"), &mut rng, 400);
    let new = run(dir, &["-r", "--cache=fresh.db", "t"]);
    assert_ne!(old, new, "the changes change the list");
    // How long a whole update takes with a cold cache: the kills fall
    // anywhere in it (and a little after).
    std::fs::write(dir.join("SUMS"), &old).unwrap();
    let started = Instant::now();
    run(dir, &["-r", "--update=SUMS", "--cache=calibrate.db", "t"]);
    let whole = started.elapsed().as_micros() as u64;
    let (mut old_seen, mut new_seen) = (0, 0);
    for round in 0..16 {
        std::fs::write(dir.join("SUMS"), &old).unwrap();
        let cache = format!("--cache=c{round}.db");
        let mut child = fastsum(dir, &["-r", "--update=SUMS", &cache, "t"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(whole * 6 / 5 + 1)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let now = std::fs::read(dir.join("SUMS")).unwrap();
        assert!(
            now == old || now == new,
            "round {round}: the list is neither the old one nor the new one:\n{}",
            String::from_utf8_lossy(&now)
        );
        if now == old {
            old_seen += 1;
        } else {
            new_seen += 1;
        }
    }
    eprintln!("killed updates: {old_seen} left the old list, {new_seen} the new one");
    // A run after a killed one converges, and takes away what the killed
    // one left beside the list.
    std::fs::write(dir.join("SUMS"), &old).unwrap();
    run(dir, &["-r", "--update=SUMS", "--cache=last.db", "t"]);
    assert_eq!(std::fs::read(dir.join("SUMS")).unwrap(), new);
    assert_eq!(temporaries(dir), Vec::<String>::new());
}

#[test]
fn two_updates_at_once_leave_a_whole_list() {
    let env = TestEnv::new();
    let dir = env.path();
    let mut rng = Rng::new();
    random_tree(&dir.join("t"), &mut rng, 200);
    let old = run(dir, &["-r", "--cache=warm.db", "t"]);
    std::fs::write(dir.join("SUMS"), &old).unwrap();
    std::thread::sleep(Duration::from_millis(2200));
    random_changes(&dir.join("t"), &mut rng, 200);
    let new = run(dir, &["-r", "--cache=fresh.db", "t"]);
    let children: Vec<_> = (0..2)
        .map(|i| {
            let cache = format!("--cache=c{i}.db");
            fastsum(dir, &["-r", "--update=SUMS", &cache, "t"])
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        child.wait_with_output().unwrap();
    }
    assert_eq!(std::fs::read(dir.join("SUMS")).unwrap(), new);
    assert_eq!(temporaries(dir), Vec::<String>::new());
}

#[test]
fn a_files0_list_longer_than_a_batch_is_hashed_whole_and_in_order() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    let env = TestEnv::new();
    let dir = env.path();
    env.file(b"a", b"a\n");
    env.file(b"b", b"b\n");
    let digests = [b"a\n", b"b\n"].map(|bytes| reference_hex("md5sum", bytes));
    // 70,000 names (the stream reads 65,536 a batch), an empty one in the
    // second batch.
    let mut list = Vec::new();
    let mut expected = Vec::new();
    for i in 0..70_000 {
        if i == 66_000 {
            list.push(0);
        }
        let (name, digest) = [("a", &digests[0]), ("b", &digests[1])][i % 2];
        list.extend_from_slice(name.as_bytes());
        list.push(0);
        expected.extend_from_slice(format!("{digest}  {name}\n").as_bytes());
    }
    std::fs::write(dir.join("names"), &list).unwrap();
    let out = fastsum(dir, &["--files0-from=names"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "an empty name fails the run");
    assert!(out.stdout == expected, "every name, in order");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("names") && stderr.ends_with(":66001: invalid zero-length file name\n"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// Files rewritten in place while `--update` reads them (a writer that
/// never stops): the list it leaves names, for each such file, bytes the
/// file really had (all `a`s or all `b`s, never a torn mix), or the run
/// fails and leaves the old list.
#[test]
fn an_update_beside_a_writer_records_only_bytes_a_file_had() {
    if crate::testenv::lacks(&["md5sum"]) {
        return;
    }
    use std::io::{Seek, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    let env = TestEnv::new();
    let dir = env.path();
    std::fs::create_dir(dir.join("t")).unwrap();
    let size = 4 << 20;
    let (all_a, all_b) = (vec![b'a'; size], vec![b'b'; size]);
    for i in 0..4 {
        std::fs::write(dir.join(format!("t/f{i}")), &all_a).unwrap();
    }
    let old = run(dir, &["-r", "--cache=warm.db", "t"]);
    let digests = [&all_a, &all_b].map(|bytes| reference_hex("md5sum", bytes));
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // In place, a 64 KiB write at a time: a reader racing it
            // sees a mix unless it notices the write.
            let mut round = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let path = dir.join(format!("t/f{}", round % 4));
                let fill = [&all_a, &all_b][round / 4 % 2];
                let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                file.rewind().unwrap();
                for chunk in fill.chunks(64 << 10) {
                    file.write_all(chunk).unwrap();
                }
                round += 1;
            }
        });
        for round in 0..6 {
            std::fs::write(dir.join("SUMS"), &old).unwrap();
            let cache = format!("--cache=c{round}.db");
            let out = fastsum(dir, &["-r", "--update=SUMS", &cache, "t"])
                .output()
                .unwrap();
            let now = std::fs::read(dir.join("SUMS")).unwrap();
            if !out.status.success() {
                assert_eq!(now, old, "a failed update leaves the old list");
                continue;
            }
            for line in String::from_utf8_lossy(&now).lines() {
                let digest = line.split(' ').next().unwrap();
                assert!(
                    digests.iter().any(|d| d == digest),
                    "round {round}: {line}: bytes the file never had"
                );
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}
