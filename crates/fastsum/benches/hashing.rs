//! Microbenchmarks: each algorithm across input sizes (in memory), and the
//! read size sweep through `FileHasher` on a file in the page cache.
//!
//! Run: `cargo bench -p fastsum --bench hashing`

use std::io::Write;

use divan::counter::BytesCount;
use divan::Bencher;
use fastsum::{Algorithm, FileHasher, ReadStrategy};

fn main() {
    divan::main();
}

const ALGORITHMS: [&str; 12] = [
    "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake3", "xxh32", "xxh64",
    "xxh3", "xxh128",
];

/// Each algorithm on in-memory inputs from one block to 1 MiB.
#[divan::bench(args = ALGORITHMS, consts = [64, 4096, 65536, 1048576])]
fn in_memory<const N: usize>(bencher: Bencher, name: &str) {
    let algorithm: Algorithm = name.parse().unwrap();
    let data = vec![0xa5u8; N];
    bencher
        .counter(BytesCount::new(N))
        .bench(|| algorithm.hash_bytes(divan::black_box(&data)));
}

const FILE_LEN: usize = 64 << 20;

fn cached_file() -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let chunk: Vec<u8> = (0..1 << 20).map(|i| (i * 31 % 251) as u8).collect();
    for _ in 0..FILE_LEN >> 20 {
        f.write_all(&chunk).unwrap();
    }
    f.flush().unwrap();
    f
}

/// A 64 MiB file in the page cache, read with each buffer size.
#[divan::bench(args = ["md5", "sha256", "xxh3", "blake3"], consts = [4096, 32768, 131072, 262144, 1048576, 4194304], sample_count = 10)]
fn read_size<const SIZE: usize>(bencher: Bencher, name: &str) {
    let algorithm: Algorithm = name.parse().unwrap();
    let file = cached_file();
    let mut hasher = FileHasher::with_strategy(ReadStrategy::Read { buffer_size: SIZE });
    bencher
        .counter(BytesCount::new(FILE_LEN))
        .bench_local(|| hasher.hash_path(algorithm, file.path()).unwrap());
}

/// The same file through bounded mmap windows.
#[divan::bench(args = ["md5", "sha256", "xxh3", "blake3"], sample_count = 10)]
fn mmap_windows(bencher: Bencher, name: &str) {
    let algorithm: Algorithm = name.parse().unwrap();
    let file = cached_file();
    let mut hasher = FileHasher::with_strategy(ReadStrategy::Mmap);
    bencher
        .counter(BytesCount::new(FILE_LEN))
        .bench_local(|| hasher.hash_path(algorithm, file.path()).unwrap());
}

/// fastsum's latency-scheduled MD5 against the `md-5` crate it replaced,
/// on the same in-memory buffer.
#[divan::bench(args = ["fastsum", "md-5"], consts = [4096, 1048576])]
fn md5_implementation<const N: usize>(bencher: Bencher, which: &str) {
    use md5::Digest as _;
    let data = vec![0x5au8; N];
    let bencher = bencher.counter(BytesCount::new(N));
    match which {
        "fastsum" => bencher.bench(|| Algorithm::Md5.hash_bytes(divan::black_box(&data))),
        _ => bencher
            .bench(|| fastsum::Digest::from_bytes(&md5::Md5::digest(divan::black_box(&data)))),
    }
}

/// fastsum's overhead over the raw hash primitive on the same in-memory
/// buffer: `raw` calls the hash crate directly; `hash_bytes` goes through
/// the `Algorithm` dispatch, the `StreamHasher` wrapper and `Digest`;
/// `hash_reader` adds `FileHasher`'s buffered read loop (a `Cursor` in
/// place of the file). Target: within 5% of `raw` (issue 5).
#[divan::bench(args = ["raw", "hash_bytes", "hash_reader"], consts = [4096, 1048576])]
fn overhead_sha256<const N: usize>(bencher: Bencher, layer: &str) {
    use sha2::Digest as _;
    let data = vec![0x3cu8; N];
    let bencher = bencher.counter(BytesCount::new(N));
    let mut hasher = FileHasher::new();
    match layer {
        "raw" => bencher.bench_local(|| sha2::Sha256::digest(divan::black_box(&data))),
        "hash_bytes" => {
            bencher.bench_local(|| Algorithm::Sha256.hash_bytes(divan::black_box(&data)))
        }
        _ => bencher.bench_local(|| {
            hasher
                .hash_reader(
                    Algorithm::Sha256,
                    std::io::Cursor::new(divan::black_box(&data)),
                )
                .unwrap()
        }),
    }
}

/// As [`overhead_sha256`], for BLAKE3 (the `blake3` crate).
#[divan::bench(args = ["raw", "hash_bytes", "hash_reader"], consts = [4096, 1048576])]
fn overhead_blake3<const N: usize>(bencher: Bencher, layer: &str) {
    let data = vec![0x3cu8; N];
    let bencher = bencher.counter(BytesCount::new(N));
    let mut hasher = FileHasher::new();
    match layer {
        "raw" => bencher.bench_local(|| blake3::hash(divan::black_box(&data))),
        "hash_bytes" => {
            bencher.bench_local(|| Algorithm::Blake3.hash_bytes(divan::black_box(&data)))
        }
        _ => bencher.bench_local(|| {
            hasher
                .hash_reader(
                    Algorithm::Blake3,
                    std::io::Cursor::new(divan::black_box(&data)),
                )
                .unwrap()
        }),
    }
}

/// As [`overhead_sha256`], for XXH3-64 (`xxhash-rust`): the fastest
/// algorithm, where a wrapper's cost would show most.
#[divan::bench(args = ["raw", "hash_bytes", "hash_reader"], consts = [4096, 1048576])]
fn overhead_xxh3<const N: usize>(bencher: Bencher, layer: &str) {
    let data = vec![0x3cu8; N];
    let bencher = bencher.counter(BytesCount::new(N));
    let mut hasher = FileHasher::new();
    match layer {
        "raw" => bencher.bench_local(|| xxhash_rust::xxh3::xxh3_64(divan::black_box(&data))),
        "hash_bytes" => bencher.bench_local(|| Algorithm::Xxh3.hash_bytes(divan::black_box(&data))),
        _ => bencher.bench_local(|| {
            hasher
                .hash_reader(
                    Algorithm::Xxh3,
                    std::io::Cursor::new(divan::black_box(&data)),
                )
                .unwrap()
        }),
    }
}
