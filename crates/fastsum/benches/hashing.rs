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

/// The multi-buffer MD5 kernel at every width this CPU runs, one core,
/// lanes × 16 KiB in memory per call: bytes per second across all lanes,
/// next to the single-stream compression on the same bytes ("scalar").
#[cfg(feature = "bench-internals")]
#[divan::bench(args = ["scalar", "sse2", "avx2", "avx2x2", "avx512", "avx512x2", "neon", "neonx2"])]
fn md5_lanes(bencher: Bencher, width: &str) {
    use fastsum::simd::{md5::compress_lanes, Width};
    const PER_LANE: usize = 16 * 1024;
    let Some(width) = Width::ALL.into_iter().find(|w| w.name() == width) else {
        let data = vec![0x5au8; 32 * PER_LANE];
        return bencher
            .counter(BytesCount::new(data.len()))
            .bench(|| Algorithm::Md5.hash_bytes(divan::black_box(&data)));
    };
    if !width.is_supported() {
        return;
    }
    let lanes = width.lanes();
    let data: Vec<Vec<u8>> = (0..lanes).map(|l| vec![l as u8; PER_LANE]).collect();
    let slices: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let mut states = vec![[0u32; 4]; lanes];
    bencher
        .counter(BytesCount::new(lanes * PER_LANE))
        .bench_local(|| {
            compress_lanes(width, &mut states, divan::black_box(&slices), PER_LANE / 64);
        });
}

/// The multi-buffer SHA-1 kernel at each width, next to the
/// single stream (SHA-NI where the CPU has it) on the same bytes.
#[cfg(feature = "bench-internals")]
#[divan::bench(args = ["single", "avx2", "avx2x2", "avx512", "avx512x2", "neon", "neonx2"])]
fn sha1_lanes(bencher: Bencher, width: &str) {
    use fastsum::simd::sha1::{compress_lanes, supported_widths, INIT};
    const PER_LANE: usize = 16 * 1024;
    let width = match fastsum::simd::Width::ALL
        .into_iter()
        .find(|w| w.name() == width)
    {
        Some(width) => width,
        None => {
            let data = vec![0x5au8; 16 * PER_LANE];
            return bencher
                .counter(BytesCount::new(data.len()))
                .bench(|| Algorithm::Sha1.hash_bytes(divan::black_box(&data)));
        }
    };
    if !supported_widths().contains(&width) {
        return;
    }
    let lanes = width.lanes();
    let data: Vec<Vec<u8>> = (0..lanes).map(|l| vec![l as u8; PER_LANE]).collect();
    let slices: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let mut states = vec![INIT; lanes];
    bencher
        .counter(BytesCount::new(lanes * PER_LANE))
        .bench_local(|| {
            compress_lanes(width, &mut states, divan::black_box(&slices), PER_LANE / 64);
        });
}

/// The raw primitives the overhead benchmarks compare against: the hash
/// crate called directly, one-shot, its output returned by value (no
/// allocation, so the comparison charges fastsum's layers alone).
fn raw_primitive(name: &str) -> fn(&[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    match name {
        "sha256" => |b| sha2::Sha256::digest(b).into(),
        "blake3" => |b| *blake3::hash(b).as_bytes(),
        "xxh3" => |b| {
            let mut out = [0u8; 32];
            out[..8].copy_from_slice(&xxhash_rust::xxh3::xxh3_64(b).to_be_bytes());
            out
        },
        other => unreachable!("no raw primitive for {other}"),
    }
}

const OVERHEAD_ALGORITHMS: [&str; 3] = ["sha256", "blake3", "xxh3"];

/// fastsum's overhead over the raw hash primitive on the same in-memory
/// buffer (target: within 5%). `overhead_raw` calls the hash
/// crate directly; `overhead_hash_bytes` goes through the `Algorithm`
/// dispatch, the `StreamHasher` wrapper and `Digest`;
/// `overhead_hash_reader` adds `FileHasher`'s read loop over a `Cursor`
/// (one copy into the buffer, as `read(2)` makes).
#[divan::bench(args = OVERHEAD_ALGORITHMS, consts = [4096, 1048576])]
fn overhead_raw<const N: usize>(bencher: Bencher, name: &str) {
    let (data, hash) = (vec![0x3cu8; N], raw_primitive(name));
    bencher
        .counter(BytesCount::new(N))
        .bench_local(|| hash(divan::black_box(&data)));
}

/// See [`overhead_raw`].
#[divan::bench(args = OVERHEAD_ALGORITHMS, consts = [4096, 1048576])]
fn overhead_hash_bytes<const N: usize>(bencher: Bencher, name: &str) {
    let (data, algorithm) = (vec![0x3cu8; N], name.parse::<Algorithm>().unwrap());
    bencher
        .counter(BytesCount::new(N))
        .bench_local(|| algorithm.hash_bytes(divan::black_box(&data)));
}

/// See [`overhead_raw`].
#[divan::bench(args = OVERHEAD_ALGORITHMS, consts = [4096, 1048576])]
fn overhead_hash_reader<const N: usize>(bencher: Bencher, name: &str) {
    let (data, algorithm) = (vec![0x3cu8; N], name.parse::<Algorithm>().unwrap());
    let mut hasher = FileHasher::new();
    bencher.counter(BytesCount::new(N)).bench_local(|| {
        hasher
            .hash_reader(algorithm, std::io::Cursor::new(divan::black_box(&data)))
            .unwrap()
    });
}
