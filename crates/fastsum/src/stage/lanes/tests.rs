//! The lane stage against the reference crates: every width, block
//! edges, refills, failures injected through the reader seam.

use super::*;
use crate::digest::Digest;
use crate::simd::Width;
use crate::stage::Span;
use md5::Digest as _;
use proptest::prelude::*;
use std::collections::HashMap;
use std::io::{self, Read, Write as _};
use std::path::PathBuf;

/// Lanes that fail the read covering a given byte of given files, as a
/// disk error mid-file would.
struct FailingRead {
    fail_at: HashMap<PathBuf, u64>,
}

impl LaneRead for FailingRead {
    /// A failing file must fail in the lanes, not be read whole elsewhere.
    fn whole_to_scalar(&self, job: &Job) -> bool {
        !matches!(&job.source, Source::Path(path) if self.fail_at.contains_key(path))
    }

    fn read(
        &mut self,
        job: &Job,
        file: &mut File,
        offset: u64,
        buffer: &mut [u8],
    ) -> io::Result<usize> {
        let Source::Path(path) = &job.source else {
            return file.read(buffer);
        };
        match self.fail_at.get(path) {
            Some(&at) if offset + buffer.len() as u64 > at => {
                Err(io::Error::other("injected read failure"))
            }
            _ => file.read(buffer),
        }
    }
}

fn reference(data: &[u8]) -> Digest {
    Digest::from_bytes(&md5::Md5::digest(data))
}

/// The digest of `data` by the reference crate for `kernel`.
fn reference_for(kernel: Kernel, data: &[u8]) -> Digest {
    match kernel {
        Kernel::Md5(_) => reference(data),
        Kernel::Sha1(_) => Digest::from_bytes(&sha1::Sha1::digest(data)),
    }
}

/// Every kernel this CPU runs: MD5 at each width, SHA-1 at each width.
fn kernels() -> Vec<Kernel> {
    let sha1 = crate::simd::sha1::supported_widths()
        .into_iter()
        .map(Kernel::Sha1);
    crate::simd::md5::supported_widths()
        .into_iter()
        .map(Kernel::Md5)
        .chain(sha1)
        .collect()
}

/// Hashes `files` (contents) with MD5 at `width`, in batches taken
/// while earlier ones are in flight; each job's result by index.
fn run(width: Width, dir: &std::path::Path, files: &[Vec<u8>]) -> Vec<Result<Hashed, String>> {
    let files: Vec<(Vec<u8>, Option<u64>)> = files.iter().map(|f| (f.clone(), None)).collect();
    run_with_failures(Kernel::Md5(width), dir, &files)
}

#[test]
fn with_verification_a_file_changed_in_flight_fails_and_the_rest_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let steady = dir.path().join("steady");
    let moving = dir.path().join("moving");
    std::fs::write(&steady, vec![1u8; 100_000]).unwrap();
    std::fs::write(&moving, vec![2u8; 100_000]).unwrap();
    for kernel in kernels() {
        let mut hasher = MultiBufferHasher::new(kernel, FileHasher::new());
        let mut results = [None, None];
        let mut record = |job: Job, result: StageResult| {
            results[job.operand] = Some(result);
        };
        let mut batch = vec![
            Job {
                verify: true,
                ..Job::new(0, 0, Source::Path(steady.clone()))
            },
            Job {
                verify: true,
                ..Job::new(1, 0, Source::Path(moving.clone()))
            },
        ];
        // Both files are opened into lanes and held (fewer than the
        // lanes: the stage waits for more before reading).
        hasher.hash_batch(&mut batch, &mut record);
        assert!(hasher.in_flight());
        std::fs::OpenOptions::new()
            .append(true)
            .open(&moving)
            .unwrap()
            .write_all(b"more")
            .unwrap();
        hasher.flush(&mut record);
        let steady_result = results[0].take().unwrap().unwrap();
        assert_eq!(
            steady_result.digest,
            reference_for(kernel, &vec![1u8; 100_000])
        );
        let stamp = steady_result
            .stamp
            .expect("a verified read carries its stamp");
        let expected = std::fs::metadata(&steady).unwrap();
        assert_eq!(stamp.size, 100_000, "{kernel:?}");
        assert_eq!(
            stamp.ino,
            std::os::unix::fs::MetadataExt::ino(&expected),
            "{kernel:?}"
        );
        assert!(matches!(
            results[1].take().unwrap(),
            Err(ErrorKind::ChangedWhileReading)
        ));
        // The moving file is rewritten back to its old size for the next kernel.
        std::fs::write(&moving, vec![2u8; 100_000]).unwrap();
    }
}

#[test]
fn the_block_edges_for_sha1_at_every_width() {
    let dir = tempfile::tempdir().unwrap();
    let lengths = [
        0usize, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 70_000,
    ];
    let files: Vec<(Vec<u8>, Option<u64>)> = lengths
        .iter()
        .map(|&n| ((0..n).map(|i| (i * 13 + n) as u8).collect(), None))
        .collect();
    for kernel in kernels()
        .into_iter()
        .filter(|k| k.algorithm() == Algorithm::Sha1)
    {
        let results = run_with_failures(kernel, dir.path(), &files);
        for (result, (content, _)) in results.into_iter().zip(&files) {
            let hashed = result.unwrap();
            assert_eq!(hashed.digest, reference_for(kernel, content), "{kernel:?}");
            assert_eq!(hashed.size, content.len() as u64);
        }
    }
}

#[test]
fn the_block_edges_at_every_width() {
    let dir = tempfile::tempdir().unwrap();
    let lengths = [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000];
    let files: Vec<Vec<u8>> = lengths
        .iter()
        .map(|&n| (0..n).map(|i| (i * 13 + n) as u8).collect())
        .collect();
    for width in crate::simd::md5::supported_widths() {
        for (result, content) in run(width, dir.path(), &files).into_iter().zip(&files) {
            let hashed = result.unwrap();
            assert_eq!(
                hashed.digest,
                reference(content),
                "{} len {}",
                width.name(),
                content.len()
            );
            assert_eq!(hashed.size, content.len() as u64);
        }
    }
}

#[test]
fn large_and_small_files_finish_in_any_order_and_refill_lanes() {
    let dir = tempfile::tempdir().unwrap();
    // More files than lanes, multi-MiB ones among them (several lane
    // buffers each), so lanes refill mid-run and the tail goes scalar.
    let sizes = [
        3 * 1024 * 1024 + 17,
        5,
        70_000,
        0,
        64,
        LANE_BUFFER,
        LANE_BUFFER + 1,
        1,
    ];
    let files: Vec<Vec<u8>> = (0..40)
        .map(|i| {
            let n = sizes[i % sizes.len()] + i;
            (0..n).map(|j| (j ^ (j >> 9) ^ i) as u8).collect()
        })
        .collect();
    for width in crate::simd::md5::supported_widths() {
        for (result, content) in run(width, dir.path(), &files).into_iter().zip(&files) {
            assert_eq!(
                result.unwrap().digest,
                reference(content),
                "{}",
                width.name()
            );
        }
    }
}

#[test]
fn a_file_that_fails_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let width = crate::simd::platform::lanes_for(Algorithm::Md5).unwrap_or(Width::Sse2);
    let good = dir.path().join("good");
    std::fs::write(&good, b"good bytes").unwrap();
    let mut batch = vec![
        Job::new(0, 0, Source::Path(dir.path().join("missing"))),
        Job::new(1, 0, Source::Path(good.clone())),
        // A directory opens but cannot be read: EISDIR from the scalar path.
        Job::new(2, 0, Source::Path(dir.path().to_path_buf())),
        // Reading it fails with EIO partway (procfs: length 0, scalar).
        Job::new(3, 0, Source::Path(PathBuf::from("/proc/self/mem"))),
    ];
    let mut hasher = MultiBufferHasher::new(Kernel::Md5(width), FileHasher::new());
    let mut outcomes = vec![None; 4];
    let mut record = |job: Job, result: StageResult| {
        outcomes[job.operand] = Some(result.map(|h| h.digest).map_err(|e| e.to_string()));
    };
    hasher.hash_batch(&mut batch, &mut record);
    hasher.flush(&mut record);
    assert!(outcomes[0]
        .clone()
        .unwrap()
        .unwrap_err()
        .contains("No such file"));
    assert_eq!(
        outcomes[1].clone().unwrap().unwrap(),
        reference(b"good bytes")
    );
    assert!(outcomes[2].clone().unwrap().is_err());
    assert!(outcomes[3].clone().unwrap().is_err());
}

/// Files (content, fail after this many bytes) as one run at `width`:
/// each result, by index.
fn run_with_failures(
    kernel: Kernel,
    dir: &std::path::Path,
    files: &[(Vec<u8>, Option<u64>)],
) -> Vec<Result<Hashed, String>> {
    let mut fail_at = HashMap::new();
    let mut batch: Vec<Job> = files
        .iter()
        .enumerate()
        .map(|(i, (content, fail))| {
            let path = dir.join(format!("f{i}"));
            std::fs::write(&path, content).unwrap();
            if let Some(at) = fail {
                fail_at.insert(path.clone(), *at);
            }
            Job::new(i, 0, Source::Path(path))
        })
        .collect();
    let mut results = vec![None; files.len()];
    let mut hasher =
        MultiBufferHasher::with_reader(kernel, FileHasher::new(), FailingRead { fail_at });
    let mut record = |job: Job, result: StageResult| {
        assert!(results[job.operand].is_none(), "reported twice");
        results[job.operand] = Some(result.map_err(|e| e.to_string()));
    };
    // Batches of random-ish sizes, as workers take them.
    while !batch.is_empty() {
        let take = (batch.len() / 3).max(1);
        let mut part: Vec<Job> = batch.drain(..take).collect();
        hasher.hash_batch(&mut part, &mut record);
    }
    hasher.flush(&mut record);
    assert!(!hasher.in_flight());
    results
        .into_iter()
        .map(|r| r.expect("every job reported"))
        .collect()
}

fn check_batch(files: &[(Vec<u8>, Option<u64>)]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    for kernel in kernels() {
        let results = run_with_failures(kernel, dir.path(), files);
        for (result, (content, fail)) in results.into_iter().zip(files) {
            match fail {
                Some(at) if (*at as usize) < content.len() => {
                    let error = result.unwrap_err();
                    prop_assert!(error.contains("injected"), "{}", error);
                }
                _ => prop_assert_eq!(
                    result.unwrap().digest,
                    reference_for(kernel, content),
                    "{:?}",
                    kernel
                ),
            }
        }
    }
    Ok(())
}

fn batch_strategy(max_files: usize) -> impl Strategy<Value = Vec<(Vec<u8>, Option<u64>)>> {
    let length = prop_oneof![
        4 => 0usize..200,
        4 => 0usize..5000,
        2 => 60_000usize..140_000,
        1 => 1_000_000usize..3_000_000,
    ];
    let file = (
        length,
        any::<u8>(),
        proptest::option::weighted(0.1, 0u64..150_000),
    )
        .prop_map(|(len, seed, fail)| {
            let content = (0..len)
                .map(|i| {
                    (i as u8)
                        .wrapping_mul(seed | 1)
                        .wrapping_add((i >> 8) as u8)
                })
                .collect();
            (content, fail)
        });
    proptest::collection::vec(file, 0..max_files)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Random numbers of files, random lengths (0 to multi-MiB), lanes
    /// finishing in every order and refilled mid-run, files failing
    /// mid-read: every width against the `md-5` crate.
    #[test]
    fn any_batch_matches_md5_crate(files in batch_strategy(48)) {
        check_batch(&files)?;
    }
}

/// The long-running property target (minutes):
/// `FASTSUM_SOAK_CASES=5000 cargo test --release -p fastsum -- --ignored lanes_soak`.
#[test]
#[ignore]
fn lanes_soak() {
    let cases = std::env::var("FASTSUM_SOAK_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases));
    runner
        .run(&batch_strategy(120), |files| check_batch(&files))
        .unwrap();
}

/// Spans (dupes' prefixes and suffixes): the lanes hand them to the scalar
/// path, and both give the digest of exactly those bytes.
#[test]
fn spans_hash_exactly_their_bytes_in_either_stage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let content: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    std::fs::write(&path, &content).unwrap();
    let spans = [
        (Span::range(0, 4096), &content[..4096]),
        (
            Span::range(300_000 - 4096, 4096),
            &content[300_000 - 4096..],
        ),
        (Span::range(299_000, 10_000), &content[299_000..]),
        (Span::range(400_000, 10), &content[..0]),
        (Span::WHOLE, &content[..]),
    ];
    let jobs = || -> Vec<Job> {
        spans
            .iter()
            .enumerate()
            .map(|(i, (span, _))| Job {
                span: *span,
                ..Job::new(i, i as u64, Source::Path(path.clone()))
            })
            .collect()
    };
    let width = crate::simd::platform::lanes_for(Algorithm::Md5).unwrap_or(Width::Sse2);
    let stages: Vec<Box<dyn BatchHasher>> = vec![
        Box::new(MultiBufferHasher::new(
            Kernel::Md5(width),
            FileHasher::new(),
        )),
        Box::new(ScalarBatchHasher::new(Algorithm::Md5, FileHasher::new())),
    ];
    for mut stage in stages {
        let mut results = vec![None; spans.len()];
        let mut record = |job: Job, result: StageResult| {
            results[job.operand] = Some(result.unwrap());
        };
        stage.hash_batch(&mut jobs(), &mut record);
        stage.flush(&mut record);
        for (result, (span, bytes)) in results.into_iter().zip(&spans) {
            let hashed = result.expect("reported");
            assert_eq!(hashed.digest, reference(bytes), "{span:?}");
            assert_eq!(hashed.size, bytes.len() as u64, "{span:?}");
        }
    }
}
