//! The pipeline's order, streaming and batching, on real files.

use super::*;
use crate::stage::{ScalarBatchHasher, MAX_BATCH_FILES};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (name, len) in [
        ("b/z", 10),
        ("b/a", 0),
        ("a.txt", 3),
        ("a/b", 4_000_000),
        ("a b/c", 7),
        ("c", 65),
    ] {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

fn run(
    (algorithm, options): &(Algorithm, TreeOptions),
    operands: &[Source],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    TreeHasher::with_options(*algorithm, options.clone())
        .run(operands, |r| {
            let what = match r.outcome {
                Outcome::Hashed(h) => h.digest.to_hex(),
                Outcome::Failed(k) | Outcome::WalkFailed(k) => format!("error: {k}"),
                Outcome::Skipped(k) => format!("skipped {}", k.describe()),
                Outcome::Directory(_) => "directory".into(),
            };
            out.push((r.path.display().to_string(), what));
        })
        .unwrap();
    out
}

#[test]
fn walked_files_come_sorted_by_path_bytes_with_correct_digests() {
    let dir = tree();
    let root = dir.path();
    let mut options = TreeOptions::new();
    options.recursive = true;
    for threads in [1, 2, 8] {
        options.threads = threads;
        let out = run(
            &(Algorithm::Md5, options.clone()),
            &[Source::Path(root.to_path_buf())],
        );
        let names: Vec<_> = out
            .iter()
            .map(|(p, _)| {
                Path::new(p)
                    .strip_prefix(root)
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        // '/' (0x2f) sorts after ' ' and '.', before letters.
        assert_eq!(
            names,
            ["a b/c", "a.txt", "a/b", "b/a", "b/z", "c"],
            "-j {threads}"
        );
        for (path, digest) in &out {
            let bytes = std::fs::read(path).unwrap();
            assert_eq!(*digest, Algorithm::Md5.hash_bytes(&bytes).to_hex());
        }
    }
}

#[test]
fn operands_keep_their_order_and_failures_their_place() {
    let dir = tree();
    let root = dir.path();
    let operands = [
        Source::Path(root.join("c")),
        Source::Path(root.join("missing")),
        Source::Path(root.join("b")),
        Source::Path(root.join("a.txt")),
    ];
    let mut options = TreeOptions::new();
    options.threads = 4;
    let out = run(&(Algorithm::Sha256, options.clone()), &operands);
    let names: Vec<_> = out.iter().map(|(p, _)| p.clone()).collect();
    let expected: Vec<_> = ["c", "missing", "b", "a.txt"]
        .iter()
        .map(|n| root.join(n).display().to_string())
        .collect();
    assert_eq!(names, expected);
    assert_eq!(out[1].1, "error: No such file or directory");
    assert_eq!(out[2].1, "error: Is a directory");
}

#[test]
fn unordered_gives_the_same_set() {
    let dir = tree();
    let mut options = TreeOptions::new();
    options.recursive = true;
    let sorted = run(
        &(Algorithm::Xxh3, options.clone()),
        &[Source::Path(dir.path().to_path_buf())],
    );
    options.order = Order::Unordered;
    let mut unordered = run(
        &(Algorithm::Xxh3, options.clone()),
        &[Source::Path(dir.path().to_path_buf())],
    );
    unordered.sort();
    assert_eq!(sorted, unordered);
}

/// A hashing stage taking one file at a time that holds the file named
/// `last` until `seen` says the sink has had an earlier record (or ten
/// seconds pass).
struct HoldingLast {
    last: &'static str,
    seen: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    waited_in_vain: Arc<std::sync::atomic::AtomicBool>,
    files: ScalarBatchHasher,
}

impl BatchHasher for HoldingLast {
    fn max_batch(&self) -> usize {
        1
    }

    fn hash_batch(
        &mut self,
        batch: &mut Vec<Job>,
        done: &mut dyn FnMut(Job, crate::stage::StageResult),
    ) {
        let is_last = batch
            .iter()
            .any(|job| matches!(&job.source, Source::Path(p) if p.ends_with(self.last)));
        if is_last {
            let (seen, signal) = &*self.seen;
            let guard = seen.lock().unwrap();
            let (guard, _) = signal
                .wait_timeout_while(guard, std::time::Duration::from_secs(10), |seen| !*seen)
                .unwrap();
            if !*guard {
                self.waited_in_vain.store(true, Ordering::Relaxed);
            }
        }
        self.files.hash_batch(batch, done);
    }
}

#[test]
fn sorted_output_streams_before_the_walk_is_hashed() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..100 {
        std::fs::write(dir.path().join(format!("f{i:03}")), i.to_string()).unwrap();
    }
    let seen = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let waited_in_vain = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut options = TreeOptions::new();
    options.recursive = true;
    options.threads = 2;
    let mut names = Vec::new();
    hash_operands_with(
        &options,
        &[Source::Path(dir.path().to_path_buf())],
        &Progress::default(),
        |r: Record| {
            if r.path.ends_with("f050") {
                *seen.0.lock().unwrap() = true;
                seen.1.notify_all();
            }
            names.push(r.path);
        },
        |_| HoldingLast {
            last: "f099",
            seen: seen.clone(),
            waited_in_vain: waited_in_vain.clone(),
            files: ScalarBatchHasher::new(Algorithm::Md5, FileHasher::new()),
        },
    )
    .unwrap();
    assert!(
        !waited_in_vain.load(Ordering::Relaxed),
        "f050 was held back until the whole directory was hashed"
    );
    assert_eq!(names.len(), 100);
    assert!(names.windows(2).all(|w| w[0] < w[1]));
}

/// A hashing stage that records the batches it was given.
struct Recording(Arc<std::sync::Mutex<Vec<usize>>>, ScalarBatchHasher);

impl BatchHasher for Recording {
    fn hash_batch(
        &mut self,
        batch: &mut Vec<Job>,
        done: &mut dyn FnMut(Job, crate::stage::StageResult),
    ) {
        self.0.lock().unwrap().push(batch.len());
        // Finish them in reverse, as a lane hasher might.
        batch.reverse();
        self.1.hash_batch(batch, done);
    }
}

#[test]
fn the_hashing_stage_receives_batches_and_order_survives_any_completion_order() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..500 {
        std::fs::write(dir.path().join(format!("f{i:03}")), i.to_string()).unwrap();
    }
    let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut options = TreeOptions::new();
    options.recursive = true;
    options.threads = 1;
    let mut names = Vec::new();
    hash_operands_with(
        &options,
        &[Source::Path(dir.path().to_path_buf())],
        &Progress::default(),
        |r: Record| names.push(r.path),
        |_| {
            Recording(
                sizes.clone(),
                ScalarBatchHasher::new(Algorithm::Md5, FileHasher::new()),
            )
        },
    )
    .unwrap();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(names.len(), 500);
    let sizes = sizes.lock().unwrap();
    assert_eq!(sizes.iter().sum::<usize>(), 500);
    assert!(sizes.iter().all(|&n| n <= MAX_BATCH_FILES));
}

/// A stage that notes the paths in the order it is handed them.
struct Seen(Arc<std::sync::Mutex<Vec<PathBuf>>>, ScalarBatchHasher);

impl BatchHasher for Seen {
    fn hash_batch(
        &mut self,
        batch: &mut Vec<Job>,
        done: &mut dyn FnMut(Job, crate::stage::StageResult),
    ) {
        let mut seen = self.0.lock().unwrap();
        for job in batch.iter() {
            if let Source::Path(path) = &job.source {
                seen.push(path.clone());
            }
        }
        drop(seen);
        self.1.hash_batch(batch, done);
    }
}

#[cfg(unix)]
#[test]
fn on_a_rotational_disk_files_are_read_in_inode_order_and_printed_in_walk_order() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    // Created in an order far from the names' (reversed, and the two
    // directories interleaved), so inode order is not walk order.
    let mut names: Vec<String> = (0..300)
        .map(|i| format!("{}/f{:03}", ["a", "b"][i % 2], i))
        .collect();
    std::fs::create_dir(dir.path().join("a")).unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    names.reverse();
    for name in &names {
        std::fs::write(dir.path().join(name), name.as_bytes()).unwrap();
    }
    let mut walk_order: Vec<PathBuf> = names.iter().map(|n| dir.path().join(n)).collect();
    walk_order.sort();
    // Expected independently: each file's inode from the standard library.
    let mut inode_order = walk_order.clone();
    inode_order.sort_by_key(|p| std::fs::metadata(p).unwrap().ino());
    assert_ne!(
        inode_order, walk_order,
        "the test needs the two orders apart"
    );

    for (disk, expected) in [
        (DiskKind::Rotational, &inode_order),
        (DiskKind::Solid, &walk_order),
    ] {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut options = TreeOptions::new();
        options.recursive = true;
        options.threads = 1;
        options.disk = disk;
        let mut printed = Vec::new();
        hash_operands_with(
            &options,
            &[Source::Path(dir.path().to_path_buf())],
            &Progress::default(),
            |r: Record| {
                let Outcome::Hashed(h) = r.outcome else {
                    panic!("{:?}", r.outcome)
                };
                let bytes = std::fs::read(&r.path).unwrap();
                assert_eq!(h.digest, Algorithm::Md5.hash_bytes(&bytes));
                printed.push(r.path);
            },
            |_| {
                Seen(
                    seen.clone(),
                    ScalarBatchHasher::new(Algorithm::Md5, FileHasher::new()),
                )
            },
        )
        .unwrap();
        assert_eq!(*seen.lock().unwrap(), *expected, "read order, {disk:?}");
        assert_eq!(printed, walk_order, "printed order, {disk:?}");
    }
}

#[test]
fn a_run_told_to_stop_ends_early_and_hands_out_only_true_records() {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..40 {
        let sub = dir.path().join(format!("d{d:02}"));
        std::fs::create_dir(&sub).unwrap();
        for f in 0..50 {
            std::fs::write(sub.join(format!("f{f:02}")), format!("{d} {f}")).unwrap();
        }
    }
    for order in [Order::Sorted, Order::Unordered] {
        let stop = Arc::new(AtomicBool::new(false));
        let mut seen = Vec::new();
        TreeHasher::new(Algorithm::Md5)
            .recursive(true)
            .threads(2)
            .order(order)
            .stop_when(stop.clone())
            .run(&[Source::Path(dir.path().into())], |r| {
                if let Outcome::Hashed(h) = &r.outcome {
                    // Every record handed out is still a true digest.
                    let bytes = std::fs::read(&r.path).unwrap();
                    assert_eq!(h.digest, Algorithm::Md5.hash_bytes(&bytes));
                }
                seen.push(r.path);
                stop.store(true, Ordering::Relaxed);
            })
            .unwrap();
        // The sink stopped the run at its first record: nothing more is
        // handed out, even when the whole tree was hashed before it (a
        // fast machine hashes these 2,000 files before the first record
        // is out).
        assert_eq!(seen.len(), 1, "{order:?}: {} records", seen.len());
    }
}

/// A listing's files (the Dask runner's shards) are hashed as a walk's:
/// one that became a FIFO, a directory or nothing since is an error in its
/// place, never waited on (a FIFO with no writer) and never read as empty;
/// the regular ones beside them are hashed as usual, on the scalar stage
/// and on the lanes alike.
#[cfg(unix)]
#[test]
fn listed_files_that_changed_kind_are_errors_and_never_waited_on() {
    let dir = tree();
    let root = dir.path();
    std::fs::remove_file(root.join("c")).unwrap();
    nix_mkfifo(&root.join("c"));
    std::fs::remove_file(root.join("a.txt")).unwrap();
    std::fs::create_dir(root.join("a.txt")).unwrap();
    std::fs::remove_file(root.join("b/z")).unwrap();
    let names = ["a.txt", "a/b", "b/z", "c", "a b/c"];
    let operands: Vec<Source> = names.iter().map(|n| Source::Path(root.join(n))).collect();
    for algorithm in [Algorithm::Md5, Algorithm::Sha256, Algorithm::Xxh3] {
        for verify in [false, true] {
            let mut options = TreeOptions::new();
            options.listed = true;
            options.verify = verify;
            let (done, wait) = std::sync::mpsc::channel();
            let (options2, operands2) = (options.clone(), operands.clone());
            std::thread::spawn(move || done.send(run(&(algorithm, options2), &operands2)));
            let got = wait
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("a listed FIFO made the run wait");
            let what: Vec<&str> = got.iter().map(|(_, w)| w.as_str()).collect();
            // A directory where a file was: "Is a directory", as md5sum
            // says of one; a FIFO: "not a regular file".
            assert_eq!(what[0], "error: Is a directory", "{what:?}");
            let whole =
                algorithm.hash_bytes(&(0..4_000_000).map(|i| (i % 251) as u8).collect::<Vec<_>>());
            assert_eq!(what[1], whole.to_hex());
            assert!(
                what[2].starts_with("error: ") && what[2].contains("No such file"),
                "{what:?}"
            );
            assert_eq!(what[3], "error: not a regular file", "{what:?}");
            assert_eq!(
                what[4],
                algorithm
                    .hash_bytes(&(0..7).map(|i| i as u8).collect::<Vec<_>>())
                    .to_hex()
            );
        }
    }
}

#[cfg(unix)]
fn nix_mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// A run's stages are built for its algorithm, so a cache
/// session for another is refused with an error, never skipped silently
/// or asked for digests of the wrong algorithm.
#[cfg(feature = "cache")]
#[test]
fn a_cache_session_for_another_algorithm_is_refused() {
    let dir = tree();
    let roots = [dir.path().to_path_buf()];
    let sha256 =
        crate::cache::CacheRun::open(&dir.path().join("c.sqlite"), Algorithm::Sha256, &roots);
    assert!(sha256.serves(Algorithm::Sha256));
    let refused = TreeHasher::new(Algorithm::Md5).cache(&sha256);
    let Err(e) = refused else {
        panic!("an MD5 run took a SHA-256 session")
    };
    assert!(
        matches!(
            e.kind(),
            crate::error::ErrorKind::CacheAlgorithm {
                session: "sha256",
                run: "md5"
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "the cache session holds sha256's digests, not md5's"
    );
    // The session's own algorithm: taken, and its answers are right.
    let mut digests = Vec::new();
    TreeHasher::new(Algorithm::Sha256)
        .cache(&sha256)
        .unwrap()
        .run(&[Source::Path(dir.path().join("c"))], |r| {
            if let Outcome::Hashed(h) = r.outcome {
                digests.push(h.digest);
            }
        })
        .unwrap();
    let bytes = std::fs::read(dir.path().join("c")).unwrap();
    assert_eq!(digests, [Algorithm::Sha256.hash_bytes(&bytes)]);
}
