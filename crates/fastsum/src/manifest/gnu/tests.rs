//! The line readers and writer against hand-made lines.
use super::*;

const ABC_MD5: &str = "900150983cd24fb0d6963f7d28e17f72";

fn parse_one(policy: TagPolicy, line: &str) -> Option<(Algorithm, String, String, bool)> {
    CheckParser::new(policy).parse(line.as_bytes()).map(|l| {
        (
            l.algorithm,
            l.expected.to_hex(),
            String::from_utf8_lossy(&l.name).into_owned(),
            l.binary,
        )
    })
}

#[test]
fn reads_text_binary_and_tagged_lines() {
    let md5 = TagPolicy::Only(Algorithm::Md5);
    assert_eq!(parse_one(md5, &format!("{ABC_MD5}  a b")).unwrap().2, "a b");
    assert!(parse_one(md5, &format!("{ABC_MD5} *a")).unwrap().3);
    assert_eq!(
        parse_one(md5, &format!("MD5 (x) y) = {}", ABC_MD5.to_uppercase()))
            .unwrap()
            .2,
        "x) y"
    );
    assert_eq!(
        parse_one(md5, &format!("\\MD5 (a\\nb) = {ABC_MD5}"))
            .unwrap()
            .2,
        "a\nb"
    );
    assert!(parse_one(md5, &format!("SHA1 (a) = {ABC_MD5}")).is_none());
    assert!(parse_one(md5, ABC_MD5).is_none());
    assert!(parse_one(md5, &format!("{}  a", &ABC_MD5[1..])).is_none());
    assert!(parse_one(md5, &format!("\\{ABC_MD5}  a\\tb")).is_none());
}

#[test]
fn any_tag_takes_the_algorithm_from_the_tag() {
    let any = TagPolicy::Any(Algorithm::Md5);
    let (a, ..) = parse_one(any, "XXH32 (f) = 32d153ff").unwrap();
    assert_eq!(a, Algorithm::Xxh32);
    let (a, ..) = parse_one(any, "XXH3 (f) = 78af5f94892f3950").unwrap();
    assert_eq!(a, Algorithm::Xxh3);
    let (a, ..) = parse_one(any, &format!("BLAKE2b-128 (f) = {ABC_MD5}")).unwrap();
    assert_eq!(a, Algorithm::Blake2b { output_len: 16 });
    // SHA2-N, as `cksum -c` reads it and OpenSSL 3's `dgst` writes it,
    // BSD's look or OpenSSL's; never a longer or an unknown width.
    let abc_sha256 = Algorithm::Sha256.hash_bytes(b"abc").to_hex();
    for line in [format!("SHA2-256 (f) = {abc_sha256}"), format!("SHA2-256(f)= {abc_sha256}")] {
        let (a, hex, name, _) = parse_one(any, &line).unwrap();
        assert_eq!((a, hex.as_str(), name.as_str()), (Algorithm::Sha256, abc_sha256.as_str(), "f"), "{line}");
    }
    let abc_sha512 = Algorithm::Sha512.hash_bytes(b"abc").to_hex();
    let (a, ..) = parse_one(any, &format!("SHA2-512(f)= {abc_sha512}")).unwrap();
    assert_eq!(a, Algorithm::Sha512);
    for bad in ["SHA2-2560 (f) = ", "SHA2-128 (f) = ", "SHA2-256x (f) = "] {
        assert!(parse_one(any, &format!("{bad}{abc_sha256}")).is_none(), "{bad}");
    }
}

#[test]
fn b2sum_lines_carry_their_length() {
    let b2 = TagPolicy::Only(Algorithm::BLAKE2B);
    let (a, ..) = parse_one(b2, &format!("{ABC_MD5}  f")).unwrap();
    assert_eq!(a, Algorithm::Blake2b { output_len: 16 });
    let (a, ..) = parse_one(b2, &format!("BLAKE2b-0x80 (f) = {ABC_MD5}")).unwrap();
    assert_eq!(a, Algorithm::Blake2b { output_len: 16 });
    assert!(parse_one(b2, &format!("BLAKE2b-12 (f) = {ABC_MD5}")).is_none());
}

#[test]
fn bsd_reversed_and_gnu_lines_do_not_mix() {
    let mut p = CheckParser::new(TagPolicy::Only(Algorithm::Md5));
    assert!(p.parse(format!("{ABC_MD5} f").as_bytes()).is_some());
    let line = format!("{ABC_MD5}  g");
    let l = p.parse(line.as_bytes()).unwrap();
    assert_eq!(l.name.as_ref(), b" g");
    let mut p = CheckParser::new(TagPolicy::Only(Algorithm::Md5));
    assert!(p.parse(format!("{ABC_MD5}  f").as_bytes()).is_some());
    assert!(p.parse(format!("{ABC_MD5} fg").as_bytes()).is_none());
}

#[cfg(feature = "tree")]
#[test]
fn writes_lines_as_md5sum_does() {
    let d = Algorithm::Md5.hash_bytes(b"abc");
    let mut out = Vec::new();
    let hex = (&d, Encoding::Hex);
    write_line(
        &mut out,
        Algorithm::Md5,
        hex,
        b"a\nb",
        LineStyle::Untagged { binary: false },
        b'\n',
    );
    write_line(&mut out, Algorithm::Md5, hex, b"a", LineStyle::Tagged, b'\n');
    write_line(
        &mut out,
        Algorithm::Md5,
        hex,
        b"a\nb",
        LineStyle::Untagged { binary: true },
        0,
    );
    let expected = format!("\\{ABC_MD5}  a\\nb\nMD5 (a) = {ABC_MD5}\n{ABC_MD5} *a\nb\0");
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[test]
fn cksum_reads_base64_and_infers_the_family_member() {
    // SHA-256 of "abc" (FIPS 180-2), hex and base64.
    let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let b64 = "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=";
    let sha2 = TagPolicy::Cksum(Family::Sha2);
    for line in [format!("{hex}  f"), format!("{b64}  f"), format!("SHA2-256 (f) = {b64}")] {
        let mut p = CheckParser::new(sha2);
        let l = p.parse(line.as_bytes()).unwrap();
        assert_eq!(l.algorithm, Algorithm::Sha256, "{line}");
        assert!(l.matches(&Algorithm::Sha256.hash_bytes(b"abc")), "{line}");
        assert!(!l.matches(&Algorithm::Sha256.hash_bytes(b"abd")), "{line}");
    }
    // Stray bits under the padding: a line, but one that matches nothing.
    let odd = format!("{}1=  f", &b64[..b64.len() - 2]);
    let l = CheckParser::new(sha2).parse(odd.as_bytes()).unwrap();
    assert!(!l.matches(&Algorithm::Sha256.hash_bytes(b"abc")));
    // A SHA3 line under -a sha2 is no line; md5sum reads no base64.
    assert!(CheckParser::new(sha2)
        .parse(format!("SHA3-256 (f) = {hex}").as_bytes())
        .is_none());
    let md5 = TagPolicy::Only(Algorithm::Md5);
    assert!(CheckParser::new(md5).parse(b"kAFQmDzST7DWlj99KOF/cg==  f").is_none());
}

#[test]
fn a_header_line_leaves_the_format_open() {
    let mut p = CheckParser::new(TagPolicy::Only(Algorithm::Md5));
    assert!(p.parse(b"____not_all_hex_so_no_match_____ blah").is_none());
    assert!(p.parse(format!("{ABC_MD5}  g").as_bytes()).is_some());
}

#[test]
fn cksum_without_a_takes_each_line_s_tag_and_refuses_the_crcs() {
    let mut p = CheckParser::new(TagPolicy::CoreutilsTagged);
    let sha3 = Algorithm::Sha3_256.hash_bytes(b"");
    let line = format!("SHA3-256 (f) = {}", sha3.to_hex());
    assert_eq!(p.parse(line.as_bytes()).unwrap().algorithm, Algorithm::Sha3_256);
    assert_eq!(p.type_string(), "SHA3");
    assert!(p.parse(b"CRC32B (f) = 0").is_none());
    assert!(p.parse(format!("{ABC_MD5}  f").as_bytes()).is_none());
}
