//! Known-answer vectors from reference implementations (see
//! `scripts/tests/make-kat`): every algorithm, lengths around every padding and
//! block boundary (0..=200 bytes, 4 KiB, 64 KiB, 1 MiB), the RFC 1321 and
//! FIPS 180 strings; hashed in one piece, through the streaming reader with
//! awkward read sizes, and through the mmap path.

use std::io::Write;

use fastsum::{Algorithm, FileHasher, ReadStrategy};

fn input(label: &str) -> Vec<u8> {
    if let Some(n) = label.strip_prefix("pattern:") {
        let n: usize = n.parse().unwrap();
        (0..n).map(|i| (i % 251) as u8).collect()
    } else {
        label
            .strip_prefix("text:")
            .expect("input label")
            .as_bytes()
            .to_vec()
    }
}

fn vectors() -> Vec<(Algorithm, String, String)> {
    include_str!("data/kat.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut fields = l.split('\t');
            let algorithm = fields.next().unwrap().parse().unwrap();
            (
                algorithm,
                fields.next().unwrap().to_string(),
                fields.next().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn in_memory() {
    let vectors = vectors();
    assert!(vectors.len() > 2500, "the vector file lost rows");
    for (algorithm, label, expected) in vectors {
        assert_eq!(
            algorithm.hash_bytes(&input(&label)).to_hex(),
            expected,
            "{algorithm} {label}"
        );
    }
}

#[test]
fn streamed_with_odd_read_sizes() {
    for (algorithm, label, expected) in vectors() {
        let data = input(&label);
        if data.len() < 1000 && !label.ends_with(":0") && !data.len().is_multiple_of(7) {
            continue; // every small length is covered in_memory; sample here
        }
        for size in [1, 63, 64, 65, 4096] {
            if size == 1 && data.len() > 70_000 {
                continue;
            }
            let mut hasher = FileHasher::with_strategy(ReadStrategy::Read { buffer_size: size });
            let got = hasher
                .hash_reader(algorithm, std::io::Cursor::new(&data))
                .unwrap();
            assert_eq!(
                got.to_hex(),
                expected,
                "{algorithm} {label} read size {size}"
            );
        }
    }
}

#[test]
fn through_files_and_maps() {
    let dir = tempfile::tempdir().unwrap();
    for (algorithm, label, expected) in vectors() {
        let data = input(&label);
        if data.len() < 4095 {
            continue;
        }
        let path = dir.path().join("input");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(&data)
            .unwrap();
        for strategy in [
            ReadStrategy::Auto,
            ReadStrategy::Mmap,
            ReadStrategy::Read { buffer_size: 4096 },
        ] {
            let got = FileHasher::with_strategy(strategy)
                .hash_path(algorithm, &path)
                .unwrap();
            assert_eq!(got.to_hex(), expected, "{algorithm} {label} {strategy:?}");
        }
    }
}
