use super::*;

/// The definition, spelt out: cut, hash each part, hash the joined
/// digests; `-N` unless `plain_single` and there is one part.
fn by_definition(of: Algorithm, data: &[u8], size: usize, plain_single: bool) -> Digest {
    let mut pieces: Vec<&[u8]> = data.chunks(size).collect();
    if pieces.is_empty() {
        pieces.push(&[]);
    }
    let joined: Vec<u8> = pieces
        .iter()
        .flat_map(|p| of.hash_bytes(p).as_bytes().to_vec())
        .collect();
    if plain_single && pieces.len() == 1 {
        return of.hash_bytes(data);
    }
    of.hash_bytes(&joined).with_parts(pieces.len() as u32)
}

fn data(len: usize) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

#[test]
fn parts_at_and_around_the_boundaries_match_the_definition() {
    let ofs = [
        Algorithm::Md5,
        Algorithm::Crc32,
        Algorithm::Crc32c,
        Algorithm::Sha1,
        Algorithm::Sha256,
    ];
    for size in [1usize, 7, 64, 1000] {
        let all = data(3 * size + 2);
        for len in [
            0,
            1,
            size - 1,
            size,
            size + 1,
            2 * size,
            2 * size + 1,
            3 * size + 2,
        ] {
            let bytes = &all[..len];
            for of in ofs {
                let algorithm = of.in_parts(size as u64).unwrap();
                // In uneven pieces: the cut does not depend on the reads.
                let mut h = Hasher::new(algorithm);
                for piece in bytes.chunks(size / 2 + 3) {
                    h.update(piece);
                }
                let want = by_definition(of, bytes, size, true);
                assert_eq!(h.digest(), want, "{algorithm} {len}");
                assert_eq!(algorithm.hash_bytes(bytes), want);
                let mut p = PartHasher::new(of, PartLayout::Every(size as u64));
                p.update(bytes);
                let multipart = by_definition(of, bytes, size, false);
                assert_eq!(p.finish().unwrap(), multipart, "{of} {len}");
            }
        }
    }
}

#[test]
fn one_part_is_the_plain_digest_and_two_say_so() {
    let etag = Algorithm::S3Etag { part_size: 4 };
    assert_eq!(etag.hash_bytes(b"abcd"), Algorithm::Md5.hash_bytes(b"abcd"));
    assert_eq!(etag.hash_bytes(b""), Algorithm::Md5.hash_bytes(b""));
    let two = etag.hash_bytes(b"abcde");
    assert_eq!(two.parts(), Some(2));
    assert!(two.to_hex().ends_with("-2"), "{two}");
    // The layout form says -1 for one part, as S3 does for a multipart
    // upload of one part.
    let one = hash_reader(Algorithm::Md5, PartLayout::Every(4), &b"abcd"[..]).unwrap();
    assert_eq!(one.parts(), Some(1));
    assert_ne!(one, Algorithm::Md5.hash_bytes(b"abcd"));
}

#[test]
fn listed_sizes_cut_there_and_must_hold_the_input() {
    let bytes = data(10);
    let sizes = [3u64, 5, 2];
    let got = hash_reader(Algorithm::Sha256, PartLayout::Sizes(&sizes), &bytes[..]).unwrap();
    let joined: Vec<u8> = [&bytes[..3], &bytes[3..8], &bytes[8..]]
        .iter()
        .flat_map(|p| Algorithm::Sha256.hash_bytes(p).as_bytes().to_vec())
        .collect();
    assert_eq!(got, Algorithm::Sha256.hash_bytes(&joined).with_parts(3));
    for wrong in [&[3u64, 5][..], &[3, 5, 3], &[10, 0]] {
        let e = hash_reader(Algorithm::Sha256, PartLayout::Sizes(wrong), &bytes[..]).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::PartsMismatch { .. }),
            "{wrong:?}: {e}"
        );
    }
}

#[test]
fn names_and_part_sizes_round_trip() {
    for (text, bytes) in [
        ("8MiB", 8 << 20),
        ("8m", 8 << 20),
        ("8MB", 8 << 20),
        ("5242880", 5 << 20),
        ("64KiB", 64 << 10),
        ("1G", 1 << 30),
        ("1000", 1000),
    ] {
        assert_eq!(parse_part_size(text), Some(bytes), "{text}");
    }
    for bad in ["", "0", "0MiB", "8 MiB", "-1", "8XB", "MiB", "99999999999T"] {
        assert_eq!(parse_part_size(bad), None, "{bad}");
    }
    assert_eq!(PartSize(8 << 20).to_string(), "8MiB");
    assert_eq!(PartSize(1000).to_string(), "1000");
    assert_eq!(PartSize(3 << 30).to_string(), "3GiB");
    for a in [
        Algorithm::S3ETAG,
        Algorithm::S3Etag { part_size: 1000 },
        Algorithm::Composite {
            of: PartChecksum::Crc32c,
            part_size: 16 << 20,
        },
    ] {
        assert_eq!(a.to_string().parse::<Algorithm>().unwrap(), a, "{a}");
    }
    assert_eq!(Algorithm::S3ETAG.to_string(), "s3etag");
    assert_eq!(
        "sha256/8MiB".parse::<Algorithm>().unwrap().to_string(),
        "sha256/8MiB"
    );
    assert_eq!(
        "md5/16M".parse::<Algorithm>().unwrap(),
        Algorithm::S3Etag {
            part_size: 16 << 20
        }
    );
    // CRC-64/NVME is kept of whole objects only; BLAKE3 not at all.
    for bad in ["crc64nvme/8MiB", "blake3/8MiB", "crc32c/0", "crc32c/"] {
        assert!(bad.parse::<Algorithm>().is_err(), "{bad}");
    }
}

#[test]
fn s3_forms_are_read_strictly() {
    let etag = Digest::from_etag("\"9b2cf535f27731c974343645a3985328-3\"").unwrap();
    assert_eq!(etag.parts(), Some(3));
    assert_eq!(etag.to_hex(), "9b2cf535f27731c974343645a3985328-3");
    let plain = Digest::from_etag("9B2CF535F27731C974343645A3985328").unwrap();
    assert_eq!(plain.parts(), None);
    for bad in [
        "", "\"\"", "xyz", "9b2c-0", "9b2c-01", "9b2c-", "9b2c--1", "9b2c-x",
    ] {
        assert!(Digest::from_etag(bad).is_none(), "{bad}");
    }
    // `printf 123456789` uploaded with CRC32C: S3 says 4waSgw==.
    let crc = Digest::from_s3_checksum("4waSgw==").unwrap();
    assert_eq!(crc, Algorithm::Crc32c.hash_bytes(b"123456789"));
    assert_eq!(crc.to_base64(), "4waSgw==");
    let composite = Digest::from_s3_checksum("4waSgw==-2").unwrap();
    assert_eq!(composite.parts(), Some(2));
    assert_eq!(composite.to_base64(), "4waSgw==-2");
    for bad in ["", "4waSgw=", "4waSgw==-", "4waSgw==-0", "!!!!"] {
        assert!(Digest::from_s3_checksum(bad).is_none(), "{bad}");
    }
}
