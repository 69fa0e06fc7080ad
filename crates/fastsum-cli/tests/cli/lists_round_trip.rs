//! fastsum reads every list it writes. On random small trees
//! (a seeded xorshift: the same trees on every run), for each format
//! fastsum writes: `-c` of the list passes; `--update` on the unchanged
//! tree leaves it byte for byte; after random changes (an edit, a
//! same-size edit with the mtime put back, a file added, one deleted)
//! `--update` writes what a fresh run writes; `diff LIST DIR` reads it
//! (and finds nothing) and, for hashdeep's, so does `audit`. Every other
//! tree's first name (in path order) holds a backslash, so its line is
//! escaped.

use std::fs;

use crate::testenv::{Outcome, TestEnv};

/// Trees per format: a few dozen runs of each command, seconds in all.
const TREES: u64 = 6;

/// A format fastsum writes: its options, and `-c`'s for it.
struct Format {
    write: &'static [&'static str],
    check: &'static [&'static str],
    /// `--update` keeps it (else it refuses it, the list untouched).
    updates: bool,
}

const FORMATS: &[Format] = &[
    Format {
        write: &[],
        check: &[],
        updates: true,
    },
    Format {
        write: &["--tag"],
        check: &[],
        updates: true,
    },
    Format {
        write: &["-a", "sha256"],
        check: &[],
        updates: true,
    },
    Format {
        write: &["-a", "md5", "-a", "sha256"],
        check: &[],
        updates: true,
    },
    Format {
        write: &["-a", "sha1", "-a", "crc32b"],
        check: &[],
        updates: true,
    },
    Format {
        write: &["--dirs"],
        check: &["--dirs"],
        updates: true,
    },
    Format {
        write: &["--json"],
        check: &[],
        updates: true,
    },
    Format {
        write: &["--json", "-a", "md5", "-a", "sha1"],
        check: &[],
        updates: true,
    },
    Format {
        write: &["--json", "--stamps"],
        check: &[],
        updates: true,
    },
    Format {
        write: &["--format=hashdeep"],
        check: &[],
        updates: true,
    },
    Format {
        write: &["--format=hashdeep", "-a", "md5", "-a", "sha256"],
        check: &[],
        updates: true,
    },
    // Several -a with stamps: --update must keep every digest and the stamps.
    Format {
        write: &["--json", "--stamps", "-a", "md5", "-a", "sha1"],
        check: &[],
        updates: true,
    },
    // Kept NUL-terminated by --update.
    Format {
        write: &["-z"],
        check: &["-z"],
        updates: true,
    },
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, len: u64) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Names with what each format must carry: blanks, a comma (hashdeep's
/// separator), a backslash (GNU's escape), UTF-8.
const NAMES: &[&str] = &[
    "a",
    "b c",
    "d,e",
    "f\\g",
    "caf\u{e9}",
    "h.txt",
    "-i",
    "j  k",
];

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum("fastsum", &args, b"")
}

/// A random tree under `t`: 1 to 10 files in up to three directories.
fn make_tree(env: &TestEnv, rng: &mut Rng) -> Vec<String> {
    let mut files = Vec::new();
    for _ in 0..1 + rng.below(10) {
        let dir = ["t", "t/s", "t/s/u"][rng.below(3) as usize];
        let name = format!(
            "{dir}/{}{}",
            NAMES[rng.below(NAMES.len() as u64) as usize],
            rng.below(4)
        );
        if files.contains(&name) {
            continue;
        }
        env.mkdir(dir);
        let len = rng.below(300);
        env.file(name.as_bytes(), &rng.bytes(len));
        files.push(name);
    }
    files
}

/// One random change: an edit, a same-size edit with the mtime put back,
/// a file added, or one deleted (never the last).
fn change(env: &TestEnv, rng: &mut Rng, files: &mut Vec<String>) -> String {
    let pick = rng.below(files.len() as u64) as usize;
    let path = env.path().join(&files[pick]);
    match rng.below(4) {
        0 => {
            let len = 1 + rng.below(200);
            fs::write(&path, rng.bytes(len)).unwrap();
            format!("edit {}", files[pick])
        }
        1 => {
            let old = fs::read(&path).unwrap();
            let mtime = fs::metadata(&path).unwrap().modified().unwrap();
            let mut new = old.clone();
            match new.first_mut() {
                Some(b) => *b ^= 0x55,
                None => return change(env, rng, files),
            }
            fs::write(&path, &new).unwrap();
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(mtime)
                .unwrap();
            format!("same-size edit {}", files[pick])
        }
        2 => {
            let name = format!("t/s/added{}", rng.below(1000));
            env.mkdir("t/s");
            let len = rng.below(100);
            env.file(name.as_bytes(), &rng.bytes(len));
            files.push(name.clone());
            format!("add {name}")
        }
        _ if files.len() > 1 => {
            fs::remove_file(&path).unwrap();
            format!("delete {}", files.remove(pick))
        }
        _ => change(env, rng, files),
    }
}

/// A list's text to compare: hashdeep's header says how and where it was
/// made (`--update` keeps it as it was), so only its file lines count.
fn comparable(list: &[u8]) -> Vec<u8> {
    match list.starts_with(b"%%%% HASHDEEP") {
        false => list.to_vec(),
        true => list
            .split(|&b| b == b'\n')
            .filter(|l| !l.starts_with(b"##"))
            .collect::<Vec<_>>()
            .join(&b'\n'),
    }
}

/// `-c` passes, `diff` finds nothing, `audit` passes a hashdeep list.
fn reads_back(env: &TestEnv, format: &Format, what: &str) {
    let mut args = vec!["-c"];
    args.extend(format.check);
    args.push("L");
    let out = fastsum(env, &args);
    assert_eq!(
        out.status,
        0,
        "{what}: -c: {}{}",
        out.stdout_str(),
        out.stderr_str()
    );
    assert!(
        !out.stdout_str().contains("FAILED"),
        "{what}: {}",
        out.stdout_str()
    );
    let out = fastsum(env, &["diff", "L", "t"]);
    assert_eq!(
        out.status,
        0,
        "{what}: diff: {}{}",
        out.stdout_str(),
        out.stderr_str()
    );
    if format.write.contains(&"--format=hashdeep") {
        let out = fastsum(env, &["audit", "L", "t"]);
        assert_eq!(
            out.status,
            0,
            "{what}: audit: {}{}",
            out.stdout_str(),
            out.stderr_str()
        );
    }
}

/// One format on one tree: written, read back, updated unchanged, changed,
/// updated, compared with a fresh run, read back again.
fn round_trip(format: &Format, seed: u64) {
    let env = TestEnv::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (seed + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut files = make_tree(&env, &mut rng);
    if seed % 2 == 1 {
        // A first name with a backslash: its line is escaped, and the
        // list's shape must still be read from its lines.
        env.file(b"t/0\\first", &rng.bytes(seed * 7));
        files.push("t/0\\first".into());
    }
    let write = |env: &TestEnv| {
        let mut args = vec!["-r"];
        args.extend(format.write);
        args.push("t");
        let out = fastsum(env, &args);
        assert_eq!(out.status, 0, "{:?}: {}", format.write, out.stderr_str());
        out.stdout
    };
    let list = write(&env);
    env.file(b"L", &list);
    let what = format!("{:?} seed {seed} {files:?}", format.write);
    reads_back(&env, format, &what);
    let update = ["-r", "--update=L", "--cache=c.db", "t"];
    let out = fastsum(&env, &update);
    assert_eq!(
        fs::read(env.path().join("L")).unwrap(),
        list,
        "{what}: --update changed it"
    );
    if !format.updates {
        assert_ne!(out.status, 0, "{what}: --update of it should be refused");
        assert!(
            out.stderr_str().contains("cannot be updated"),
            "{what}: {}",
            out.stderr_str()
        );
        return;
    }
    assert_eq!(out.status, 0, "{what}: --update: {}", out.stderr_str());
    let changes: Vec<String> = (0..1 + rng.below(3))
        .map(|_| change(&env, &mut rng, &mut files))
        .collect();
    let what = format!("{what} after {changes:?}");
    let out = fastsum(&env, &update);
    assert_eq!(out.status, 0, "{what}: --update: {}", out.stderr_str());
    let updated = fs::read(env.path().join("L")).unwrap();
    let fresh = write(&env);
    assert_eq!(
        String::from_utf8_lossy(&comparable(&updated)),
        String::from_utf8_lossy(&comparable(&fresh)),
        "{what}: --update is not a fresh run"
    );
    reads_back(&env, format, &what);
}

#[test]
fn every_list_fastsum_writes_reads_back_and_updates_to_a_fresh_run() {
    for format in FORMATS {
        for seed in 0..TREES {
            round_trip(format, seed);
        }
    }
}
