//! A fuzzer for every parser of outside input, run as tests: here
//! checksum lines (GNU, BSD-tagged, cksum's, b3sum's, xxhsum's), manifests
//! (any format, `--json` records), base64 names, the remote stream and
//! S3's answers (XML listings, attributes, errors, checksum headers); the
//! CLI's option parsing in its own crate. Each target starts from a
//! checked-in seed corpus (`fuzz-seeds/TARGET/`) and
//! mutates it with the formats' own tokens for a time budget; a panic is
//! a failure that prints the seed to replay and saves the input under
//! `$TMPDIR/fastsum-fuzz-failures/`.
//!
//! `FASTSUM_FUZZ_SECONDS` is the budget of each target (1 s by default;
//! CI gives more), `FASTSUM_FUZZ_SEED` replays a run. Stable Rust, no
//! instrumentation: mutational, not coverage-guided (cargo-fuzz would
//! need a nightly toolchain and its own build in CI).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Tokens the formats give meaning to: a mutation inserts one.
const TOKENS: &[&[u8]] = &[
    b"\0",
    b"\n",
    b"\r\n",
    b"\\",
    b" ",
    b"  ",
    b" *",
    b"=",
    b"====",
    b"(",
    b") = ",
    b"MD5",
    b"SHA256",
    b"BLAKE2b-256",
    b"BLAKE3",
    b"XXH64",
    b"XXH3",
    b"SHA3-256",
    b"{",
    b"}",
    b"\"",
    b"\\u0000",
    b"\\ud800",
    b"path_base64",
    b"digest",
    b"error",
    b"skipped",
    b"directory_digest",
    b"/\"",
    b":",
    b",",
    b"fastsum-remote-method ",
    b"fastsum-remote-end",
    b"fastsum-remote-links",
    b"%%%% HASHDEEP-1.0",
    b"%%%% size,md5,sha256,filename",
    b"18446744073709551616",
    b"fastsum-remote-failed",
    b"fastsum-remote-hashes",
    b"fastsum-remote-none",
    b"D",
    b"E",
    b"/",
    b"..",
    b"r/",
    b"900150983cd24fb0d6963f7d28e17f72",
    b"\xff",
    b"\xc3\xa9",
    b"-",
    b"%%%% ",
    b"<Contents><Key>",
    b"</Key>",
    b"<Size>",
    b"<IsTruncated>true</IsTruncated>",
    b"&amp;",
    b"&#x",
    b"%2F",
    b"%",
    b"-0",
    b";",
    b" 363A3020",
    b"CRC32 (",
    b"SHA256:\n ",
    b"MD5Sum:\n ",
    b"-----BEGIN PGP SIGNED MESSAGE-----\n",
    b"-----BEGIN PGP SIGNATURE-----\n",
    b"- ",
    b"\"digests\":{",
    b"\"md5\":\"",
];

/// xorshift64*: enough for mutations, and replayable from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of `input`, another seed at hand for splicing.
fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    let at = rng.below(input.len() + 1);
    match rng.below(9) {
        0 if !input.is_empty() => {
            let i = rng.below(input.len());
            input[i] ^= 1 << rng.below(8);
        }
        1 if !input.is_empty() => {
            let i = rng.below(input.len());
            input[i] = rng.next() as u8;
        }
        2 => input.insert(at, rng.next() as u8),
        3 if !input.is_empty() => {
            let end = (at + 1 + rng.below(16)).min(input.len());
            input.drain(at.min(end)..end);
        }
        4 => {
            let token = TOKENS[rng.below(TOKENS.len())];
            input.splice(at..at, token.iter().copied());
        }
        5 => input.truncate(at),
        6 if !input.is_empty() => {
            let start = rng.below(input.len());
            let end = (start + 1 + rng.below(64)).min(input.len());
            let piece = input[start..end].to_vec();
            input.splice(at..at, piece);
        }
        7 if !other.is_empty() => {
            let from = rng.below(other.len());
            input.truncate(at);
            input.extend_from_slice(&other[from..]);
        }
        _ => {
            // A long run of one byte: lengths and limits.
            let byte = [b'a', b'0', b'/', b'\\', b' '][rng.below(5)];
            let n = 1 + rng.below(4096);
            input.splice(at..at, std::iter::repeat_n(byte, n));
        }
    }
}

fn seeds(dir: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a seed").path())
        .collect();
    files.sort();
    let seeds: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).expect("a seed"))
        .collect();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds
}

/// Runs `target` on the seeds in `seeds/NAME/` and on mutations of them
/// for the budget; panics (the test fails) when `target` panics.
pub fn fuzz(seeds_dir: &Path, name: &str, target: impl Fn(&[u8])) {
    let budget = std::env::var("FASTSUM_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let seed = std::env::var("FASTSUM_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| crate::fs::stat::now_ns() as u64 | 1);
    let corpus = seeds(&seeds_dir.join(name));
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs_f64(budget);
    let mut runs = 0u64;
    let mut input = Vec::new();
    while runs < corpus.len() as u64 || Instant::now() < deadline {
        input.clear();
        // Each seed once as it is first (a failure saved into the seeds
        // is replayed by every run), then mutations of random ones.
        let base = match runs < corpus.len() as u64 {
            true => &corpus[runs as usize],
            false => &corpus[rng.below(corpus.len())],
        };
        input.extend_from_slice(base);
        if runs >= corpus.len() as u64 {
            for _ in 0..1 + rng.below(8) {
                let other = &corpus[rng.below(corpus.len())];
                mutate(&mut rng, &mut input, other);
            }
        }
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            let dir = std::env::temp_dir().join("fastsum-fuzz-failures");
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(format!("{name}-{seed}"));
            let _ = std::fs::write(&file, &input);
            panic!(
                "{name} panicked on {:?} (FASTSUM_FUZZ_SEED={seed}; saved as {})",
                String::from_utf8_lossy(&input[..input.len().min(400)]),
                file.display()
            );
        }
        runs += 1;
    }
    eprintln!("fuzz {name}: {runs} inputs in {budget} s, seed {seed}, no panic");
}

#[cfg(test)]
mod targets {
    use super::fuzz;
    use crate::algo::Algorithm;
    use crate::manifest::gnu::{CheckParser, Family, TagPolicy};

    fn seeds() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz-seeds")
    }

    fn lines(input: &[u8]) -> impl Iterator<Item = &[u8]> {
        input.split(|&b| b == b'\n')
    }

    #[test]
    fn check_lines() {
        fuzz(&seeds(), "check-lines", |input| {
            for policy in [
                TagPolicy::Only(Algorithm::Md5),
                TagPolicy::Only(Algorithm::BLAKE2B),
                TagPolicy::Any(Algorithm::Sha256),
                TagPolicy::Any(Algorithm::Blake2b { output_len: 32 }),
                TagPolicy::CoreutilsTagged,
                TagPolicy::Cksum(Family::Sha2),
                TagPolicy::Cksum(Family::Sha3),
                TagPolicy::Cksum(Family::Blake2b),
                TagPolicy::Cksum(Family::One(Algorithm::Sm3)),
                TagPolicy::Any(Algorithm::S3Etag { part_size: 4 }),
            ] {
                let mut parser = CheckParser::new(policy);
                for line in lines(input) {
                    if let Some(parsed) = parser.parse(line) {
                        let _ = parsed.matches(&parsed.algorithm.hash_bytes(b""));
                    }
                    let _ = parser.type_string();
                }
            }
            for line in lines(input) {
                // S3's answers: ETags and x-amz-checksum values.
                let text = String::from_utf8_lossy(line);
                let _ = crate::Digest::from_etag(&text);
                let _ = crate::Digest::from_s3_checksum(&text);
                let _ = crate::manifest::xxhsum::parse_line(line, false);
                let _ = crate::manifest::xxhsum::parse_line(line, true);
                let _ = crate::manifest::b3sum::parse_line(&String::from_utf8_lossy(line));
            }
        });
    }

    /// The parsers of signed lists: signatures, keys,
    /// allowed_signers, clearsigned text, a Release's Valid-Until; the
    /// input taken as each, against the seeds' real keys and signatures.
    #[cfg(feature = "signed")]
    #[test]
    fn signed() {
        use crate::signed;
        let seed =
            |name: &str| std::fs::read(seeds().join("signed").join(name)).unwrap_or_default();
        let keys = [
            seed("m.pub"),
            seed("s.pub"),
            seed("allowed"),
            seed("key.asc"),
        ];
        let signatures = [
            seed("SUMS.minisig"),
            seed("signify.sig"),
            seed("ssh.sig"),
            seed("detached.asc"),
        ];
        let options = signed::VerifyOptions::default();
        fuzz(&seeds(), "signed", |input| {
            let _ = signed::Scheme::of_signature(input);
            for key in &keys {
                let _ = signed::verify_detached(b"list\n", input, key, &options);
                let _ = signed::open_embedded(input, key, &options);
                let _ = signed::open(input, Some(input), key, &options);
            }
            for signature in &signatures {
                let _ = signed::verify_detached(input, signature, input, &options);
            }
            let _ = signed::clearsigned::split(input);
            let _ = signed::clearsigned::signed_bytes(input);
            let _ = signed::ssh::parse_allowed_signers(input);
            let _ = signed::release::check_valid_until(input, 0);
        });
    }

    #[test]
    fn manifests() {
        fuzz(&seeds(), "manifests", |input| {
            for algorithm in [
                None,
                Some(Algorithm::Md5),
                Some(Algorithm::Blake2b { output_len: 32 }),
            ] {
                let _ = crate::manifest::read::read_manifest(input, algorithm);
            }
            for line in lines(input) {
                let text = String::from_utf8_lossy(line);
                let _ = crate::manifest::json_read::parse_object(&text);
                let _ = crate::digest::decode_base64(&text);
            }
        });
    }

    /// Every list `fastsum -c` reads entry by entry: told
    /// from the content, then read as each format; the explanation of a
    /// list in none, and the names that give an algorithm.
    #[test]
    fn check_lists() {
        use crate::manifest::list::{self, ListFormat, ListReader};
        fuzz(&seeds(), "check-lists", |input| {
            let first = lines(input).find(|l| !l.is_empty()).unwrap_or_default();
            let detected = ListFormat::detect(first);
            let _ = list::names::explain(first);
            let _ = list::names::algorithm_of_list_name(first);
            let _ = list::names::file_of_list_name(first);
            for format in [
                detected,
                ListFormat::Json,
                ListFormat::Hashdeep,
                ListFormat::Sfv,
                ListFormat::Release,
            ] {
                let mut reader = ListReader::new(input, format);
                // Each call reads at least one line: it ends.
                while let Ok(Some(_)) = reader.next_line() {}
            }
        });
    }

    #[test]
    fn offers() {
        fuzz(&seeds(), "offers", |input| {
            for algorithm in [Algorithm::Md5, Algorithm::Sha256] {
                if let Ok(offers) = crate::dirdigest::Offers::parse(input, algorithm) {
                    let again = crate::dirdigest::Offers::parse(&offers.to_bytes(), algorithm);
                    assert_eq!(again, Ok(offers));
                }
            }
        });
    }

    /// A scrub's resume note never panics the parser, and is
    /// trusted only in the one form a scrub writes, with a past time.
    #[test]
    #[cfg(feature = "cache")]
    fn resume_notes() {
        let now = crate::fs::stat::now_ns();
        fuzz(&seeds(), "resume-notes", |input| {
            let text = String::from_utf8_lossy(input);
            if let Ok(t) = crate::scrub::place::started_at(&text, now) {
                assert!(t > 0 && t <= now, "{text:?} gave {t}");
                assert_eq!(
                    text,
                    format!("started-ns {t}"),
                    "a note of another form trusted"
                );
            }
        });
    }

    #[test]
    #[cfg(feature = "cache")]
    fn cache_rows() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let decoded = AtomicUsize::new(0);
        fuzz(&seeds(), "cache-rows", |input| {
            decoded.fetch_add(crate::cache::fuzz_row(input), Ordering::Relaxed);
        });
        // The seeds at least got past the check and the key.
        assert!(decoded.into_inner() >= 3);
    }

    /// S3's answers: ListObjectsV2 pages, GetObjectAttributes,
    /// error bodies, `x-amz-checksum-*` values and ETags, and the keys a
    /// listing gives, taken below a prefix: no panic, and a key accepted
    /// is a plain relative path.
    #[test]
    #[cfg(feature = "s3")]
    fn s3_answers() {
        use crate::s3::claim::{self, Kind};
        let url = crate::s3::S3Url::parse(b"s3://b/p").expect("a bucket and a prefix");
        fuzz(&seeds(), "s3-answers", |input| {
            let text = String::from_utf8_lossy(input);
            if let Ok(page) = crate::s3::xml::parse_listing(&text) {
                for object in page.objects {
                    if let Ok(Some(relative)) = url.relative(&object.key) {
                        assert!(relative.split('/').all(|c| !matches!(c, "" | "." | "..")));
                    }
                }
            }
            let _ = crate::s3::xml::parse_attributes(&text);
            let _ = crate::s3::http::error_code(&text);
            let _ = crate::s3::S3Url::parse(input);
            for line in text.lines() {
                let value = line.rsplit(": ").next().unwrap_or(line);
                for kind in [Kind::Crc64Nvme, Kind::Crc32, Kind::Sha256, Kind::Md5] {
                    if let Ok((digest, _)) = claim::checksum_value(kind, value) {
                        assert_eq!(digest.len(), kind.len(), "{value:?}");
                    }
                }
                let _ = claim::etag_md5(value.trim_matches('"'));
            }
        });
    }

    #[test]
    fn remote_stream() {
        fuzz(&seeds(), "remote-stream", |input| {
            // Offers as diff sends them: the root and one directory.
            let mut offers = crate::dirdigest::Offers::new();
            offers.insert(Vec::new(), Algorithm::Md5.hash_bytes(b""));
            offers.insert(b"d".to_vec(), Algorithm::Md5.hash_bytes(b"d"));
            for (algorithm, root) in [(Algorithm::Md5, &b"r"[..]), (Algorithm::Sha256, b"/")] {
                let _ = crate::remote::stream::parse(input, algorithm, root, None, &mut |_| {});
                let offered = Some(&offers);
                let _ = crate::remote::stream::parse(input, algorithm, root, offered, &mut |_| {});
            }
            // The same bytes as a captured listing in text (a header, then
            // whatever follows read as hex lines), as diff --remote-listing
            // reads it.
            let mut text = crate::remote::text::HEADER.as_bytes().to_vec();
            text.push(b'\n');
            text.extend_from_slice(input);
            for form in [input, &text[..]] {
                if let Ok(mut listing) = crate::remote::text::Listing::new(form) {
                    let _ = crate::remote::stream::parse(
                        &mut listing,
                        Algorithm::Md5,
                        b"r",
                        None,
                        &mut |_| {},
                    );
                    let _ = listing.into_stderr();
                }
            }
        });
    }
}
