use super::*;
use super::several::Several;
use super::compare::deciding;
use crate::digest::decode_base64;

fn read(text: &str, algorithm: Option<Algorithm>) -> Result<Manifest, String> {
    read_manifest(text.as_bytes(), algorithm)
}

#[test]
fn every_format_reads_to_the_same_entries() {
    let md5 = "900150983cd24fb0d6963f7d28e17f72";
    let gnu = read(&format!("{md5}  a b\n{md5} *c\n"), None).unwrap();
    assert_eq!(gnu.algorithm, Algorithm::Md5);
    assert_eq!(gnu.entries[0].path, b"a b");
    assert_eq!(gnu.entries[1].path, b"c");
    let tagged = read(&format!("MD5 (a b) = {md5}\n"), None).unwrap();
    assert_eq!(tagged.entries[0].path, b"a b");
    let json = read(
        &format!("{{\"path\":\"caf\\ufffd\",\"path_base64\":\"Y2Fm6Q==\",\"algorithm\":\"md5\",\"digest\":\"{md5}\",\"size\":3}}\n{{\"path\":\"l\",\"algorithm\":\"md5\",\"skipped\":\"symbolic link\"}}\n"),
        None,
    )
    .unwrap();
    assert_eq!(json.entries.len(), 1);
    assert_eq!(json.entries[0].path, b"caf\xe9");
    assert_eq!(json.entries[0].size, Some(3));
    let escaped = read(&format!("\\{md5}  a\\nb\n"), None).unwrap();
    assert_eq!(escaped.entries[0].path, b"a\nb");
}

/// Lines before the first entry (comments, blank lines) are read
/// once to find the format, then read by it with their numbers; a
/// list that is only comments is empty. (The first streaming reader
/// handed its first comment back forever: found by the fuzz target.)
#[test]
fn leading_comments_and_blank_lines_are_read_once_in_every_format() {
    let md5 = "900150983cd24fb0d6963f7d28e17f72";
    let gnu = read(&format!("# made by hand\n\n#\n{md5}  a\r\n{md5}  b"), None).unwrap();
    let paths: Vec<&[u8]> = gnu.entries.iter().map(|e| e.path.as_slice()).collect();
    assert_eq!(paths, [b"a".as_slice(), b"b"]);
    assert!(gnu.problems.is_empty());
    // fastsum's JSON has no comments: a `#` line after the first record
    // is a problem, numbered; before it, read past as in every format
    // (the lines a format is found by: counted, never held).
    let record = format!("{{\"path\":\"a\",\"algorithm\":\"md5\",\"digest\":\"{md5}\"}}");
    let json = read(&format!("\n# note\n{record}\n# late\n{record}\n"), None).unwrap();
    assert_eq!(json.entries.len(), 2);
    assert_eq!(json.problems.len(), 1);
    assert_eq!(json.problems[0].0, 4);
    let hashdeep = read(
        &format!("#\n%%%% HASHDEEP-1.0\n%%%% size,md5,filename\n## run\n3,{md5},a\nbad\n"),
        None,
    )
    .unwrap();
    assert_eq!(hashdeep.entries.len(), 1);
    assert_eq!(hashdeep.entries[0].size, Some(3));
    assert_eq!(hashdeep.problems.iter().map(|p| p.0).collect::<Vec<_>>(), [6]);
    for empty in ["", "# only\n\n# comments\n"] {
        let e = read(empty, None).unwrap_err();
        assert!(e.contains("empty"), "{empty:?}: {e}");
    }
}

#[test]
fn ambiguity_and_mixtures_are_errors_that_say_why() {
    let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let e = read(&format!("{sha256}  a\n"), None).unwrap_err();
    assert!(e.contains("-a (sha256, blake3"), "{e}");
    let ok = read(&format!("{sha256}  a\n"), Some(Algorithm::Blake3)).unwrap();
    assert_eq!(ok.algorithm, Algorithm::Blake3);
    let md5 = "900150983cd24fb0d6963f7d28e17f72";
    let e = read(&format!("MD5 (a) = {md5}\nSHA256 (b) = {sha256}\n"), None).unwrap_err();
    assert!(e.contains("mixes md5 and sha256"), "{e}");
    let e = read("hello world\n", None).unwrap_err();
    assert!(e.contains("not a checksum list"), "{e}");
    let some_bad = read(&format!("{md5}  a\nnonsense\n"), None).unwrap();
    assert_eq!(
        some_bad.problems,
        vec![(2, "improperly formatted checksum line".to_string())]
    );
}

#[test]
fn base64_is_strict_and_never_panics() {
    // "====" once panicked, and "A===" decoded to nothing.
    for bad in [
        "====",
        "A===",
        "AB=C",
        "AB==AB==",
        "QQ=",
        "QR==",
        "QUI=QUI=",
        "Q Q=",
        "\u{e9}AAA",
    ] {
        assert_eq!(decode_base64(bad), None, "{bad}");
    }
    for (good, bytes) in [
        ("", &b""[..]),
        ("QQ==", b"A"),
        ("QUI=", b"AB"),
        ("QUJD", b"ABC"),
        ("/w==", b"\xff"),
    ] {
        assert_eq!(decode_base64(good).as_deref(), Some(bytes), "{good}");
    }
}

/// The BLAKE3 of `hex` digests' bytes one after another (what a joint
/// digest must be, computed apart from `Algorithm::joined`).
fn blake3_of(hex: &[&str]) -> Digest {
    let bytes: Vec<u8> = hex.iter().flat_map(|h| Digest::from_hex(h).unwrap().as_bytes().to_vec()).collect();
    Digest::from_bytes(blake3::hash(&bytes).as_bytes())
}

/// fastsum reads every list it writes, `diff` and `--update`
/// included: several -a's lines (a file's lines one after another) and
/// records (`"digests"`) read as one algorithm's, `-a`'s if given, else
/// all of them at once, whatever their order (when one decided, a pair
/// colliding in it passed beside a digest that told them apart).
#[test]
fn several_digests_read_as_all_at_once_or_as_asked() {
    let md5 = "900150983cd24fb0d6963f7d28e17f72";
    let sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let xxh = "44bc2cf5ad770999";
    let two = Algorithm::Joint { set: 0b1001, blake2b: 0 };
    let three = Algorithm::Joint { set: 0b10_0000_1001, blake2b: 0 };
    for (order, algorithm, digest) in [
        (format!("MD5 (a) = {md5}\nSHA256 (a) = {sha}\nMD5 (b) = {md5}\nSHA256 (b) = {sha}\n"), two, blake3_of(&[md5, sha])),
        (format!("SHA256 (a) = {sha}\nMD5 (a) = {md5}\nSHA256 (b) = {sha}\nMD5 (b) = {md5}\n"), two, blake3_of(&[md5, sha])),
        (format!("XXH64 (a) = {xxh}\nSHA256 (a) = {sha}\nMD5 (a) = {md5}\nXXH64 (b) = {xxh}\nSHA256 (b) = {sha}\nMD5 (b) = {md5}\n"), three, blake3_of(&[md5, sha, xxh])),
    ] {
        let lines = read(&order, None).unwrap();
        assert_eq!(lines.algorithm, algorithm, "{order}");
        assert_eq!(lines.entries.len(), 2);
        assert!(lines.entries.iter().all(|e| e.digest == digest));
        assert_eq!(algorithm.hash_bytes(b"abc"), digest, "a file of these bytes has it");
        assert!(lines.problems.is_empty());
        let asked = read(&order, Some(Algorithm::Md5)).unwrap();
        assert_eq!(asked.algorithm, Algorithm::Md5);
        assert_eq!(asked.entries[1].digest.to_hex(), md5);
    }
    // A file without the deciding line is a problem of its line, never
    // read by its MD5; a file listed twice stays two entries.
    let missing = format!("MD5 (a) = {md5}\nSHA256 (a) = {sha}\nMD5 (b) = {md5}\nMD5 (c) = {md5}\nSHA256 (c) = {sha}\n");
    let m = read(&missing, None).unwrap();
    let paths: Vec<&[u8]> = m.entries.iter().map(|e| e.path.as_slice()).collect();
    assert_eq!(paths, [b"a".as_slice(), b"c"]);
    assert_eq!(m.problems, vec![(3, "no sha256 line, which the list's first file has".into())]);
    // A shorter BLAKE2b is a member too (deciding alone, it passed a
    // wrong MD5 beside it).
    let b2 = "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319";
    let short = read(&format!("MD5 (a) = {md5}\nBLAKE2b-256 (a) = {b2}\n"), None).unwrap();
    assert_eq!(short.algorithm.to_string(), "md5+blake2b-256");
    assert_eq!(short.entries[0].digest, blake3_of(&[md5, b2]));
    assert_eq!(short.algorithm.hash_bytes(b"abc"), blake3_of(&[md5, b2]));
    let twice = read(&format!("MD5 (a) = {md5}\nMD5 (a) = {md5}\n"), None).unwrap();
    assert_eq!(twice.entries.len(), 2);
    // One digest given twice (a file's lines MD5, SHA256, SHA256) is its
    // line's problem, named as such, never the file's second entry; the
    // file listed twice whole stays two entries.
    let repeated = format!("MD5 (a) = {md5}\nSHA256 (a) = {sha}\nSHA256 (a) = {sha}\nMD5 (b) = {md5}\nSHA256 (b) = {sha}\n");
    let m = read(&repeated, None).unwrap();
    let paths: Vec<&[u8]> = m.entries.iter().map(|e| e.path.as_slice()).collect();
    assert_eq!(paths, [b"a".as_slice(), b"b"]);
    let why = "its sha256 digest is given twice (lines 2 and 3), and no md5 line follows the second: one line per digest a file";
    assert_eq!(m.problems, vec![(3, why.into())]);
    let whole = format!("MD5 (a) = {md5}\nSHA256 (a) = {sha}\nSHA256 (a) = {sha}\nMD5 (a) = {md5}\n");
    let m = read(&whole, None).unwrap();
    assert_eq!((m.entries.len(), m.problems.len()), (2, 0));
    // Blake2b-512 is longer than SHA-256; SHA-1 beats MD5; any
    // cryptographic digest beats xxHash's 128 bits.
    assert_eq!(deciding([Algorithm::Sha256, Algorithm::BLAKE2B]), Some(Algorithm::BLAKE2B));
    assert_eq!(deciding([Algorithm::Md5, Algorithm::Sha1]), Some(Algorithm::Sha1));
    assert_eq!(deciding([Algorithm::Xxh128, Algorithm::Md5]), Some(Algorithm::Md5));
    assert_eq!(deciding([Algorithm::Sha256, Algorithm::Blake3]), Some(Algorithm::Sha256));
    // A sound function cut short is as weak as its length (BLAKE2b-8
    // once decided over MD5).
    let cut = |bytes: u8| Algorithm::Blake2b { output_len: bytes };
    assert_eq!(deciding([Algorithm::Md5, cut(1)]), Some(Algorithm::Md5));
    assert_eq!(deciding([cut(15), Algorithm::Sha1]), Some(Algorithm::Sha1));
    assert_eq!(deciding([Algorithm::Md5, cut(16)]), Some(cut(16)));
    assert_eq!(deciding([Algorithm::Sha256, cut(28)]), Some(Algorithm::Sha256));
    assert_eq!(deciding([cut(16), cut(28)]), Some(cut(28)));
    for json in [
        format!("{{\"path\":\"a\",\"digests\":{{\"md5\":\"{md5}\",\"sha256\":\"{sha}\"}},\"size\":3}}\n"),
        format!("{{\"path\":\"a\",\"digests\":{{\"sha256\":\"{sha}\",\"md5\":\"{md5}\"}},\"size\":3}}\n"),
    ] {
        let decided = read(&json, None).unwrap();
        assert_eq!(decided.algorithm, two);
        assert_eq!(decided.entries[0].digest, blake3_of(&[md5, sha]));
        assert_eq!(decided.entries[0].size, Some(3));
        let given = read(&json, Some(Algorithm::Md5)).unwrap();
        assert_eq!(given.algorithm, Algorithm::Md5);
        assert_eq!(given.entries[0].digest.to_hex(), md5);
        assert!(read(&json, Some(Algorithm::Sha1)).is_err());
    }
}

/// A list written with -z (NUL-terminated, names not
/// escaped) reads as one written with newlines.
#[test]
fn nul_terminated_lists_read() {
    let md5 = "900150983cd24fb0d6963f7d28e17f72";
    let list = read(&format!("{md5}  a\n b\0{md5}  c\r\0"), None).unwrap();
    let paths: Vec<&[u8]> = list.entries.iter().map(|e| e.path.as_slice()).collect();
    assert_eq!(paths, [&b"a\n b"[..], b"c\r"]);
}

/// A list's lines cost one line at a time, whatever their number: a
/// billion empty `-z` records read ahead to find the format were each
/// held (100 MB of NULs took 3.1 GB, 1 GiB aborted); unreadable lines
/// past the first thousand are counted, not held (a valid line and 10M
/// bad ones took 787 MB). Entries and numbers stay as they were.
#[test]
fn blank_and_bad_lines_are_counted_not_held() {
    let md5 = "900150983cd24fb0d6963f7d28e17f72";
    let mut nuls = vec![0u8; 1_000_000];
    nuls.extend_from_slice(format!("{md5}  a\0").as_bytes());
    let m = Manifest::read(&nuls[..], None).unwrap();
    assert_eq!(m.entries.len(), 1);
    assert_eq!(m.entries[0].path, b"a");
    let mut bad = format!("{md5}  a\n");
    bad.push_str(&"x\n".repeat(Manifest::PROBLEMS_KEPT + 5));
    bad.push_str(&format!("{md5}  b\n"));
    let m = Manifest::read(bad.as_bytes(), None).unwrap();
    assert_eq!(m.entries.len(), 2);
    assert_eq!(m.problems.len(), Manifest::PROBLEMS_KEPT);
    assert_eq!(m.problems_unkept, 5);
    assert_eq!(m.problems.last().map(|p| p.0), Some(Manifest::PROBLEMS_KEPT as u64 + 1));
}

/// A list of several digests a file read with every digest,
/// in every format fastsum writes it; a file whose algorithms are not the
/// first file's is refused with its line.
#[test]
fn several_digests_a_file_are_read_whole_or_refused_by_line() {
    let md5 = Algorithm::Md5.hash_bytes(b"abc").to_hex();
    let sha = Algorithm::Sha256.hash_bytes(b"abc").to_hex();
    let several = |text: &str| Several::read(text.as_bytes());
    let tagged = format!(
        "\\MD5 (a\\nb) = {md5}\n\\SHA256 (a\\nb) = {sha}\nMD5 (c) = {md5}\nSHA256 (c) = {sha}\n"
    );
    let json = format!(
        "{{\"path\":\"a\\nb\",\"digests\":{{\"md5\":\"{md5}\",\"sha256\":\"{sha}\"}},\"size\":3,\
         \"device\":1,\"inode\":2,\"mtime_ns\":3,\"ctime_ns\":4,\"fsid\":5}}\n\
         {{\"path\":\"c\",\"digests\":{{\"md5\":\"{md5}\",\"sha256\":\"{sha}\"}},\"size\":3}}\n"
    );
    let hashdeep = format!(
        "%%%% HASHDEEP-1.0\n%%%% size,md5,sha256,filename\n## \n3,{md5},{sha},a,b\n3,{md5},{sha},c\n"
    );
    for (what, text, first) in [
        ("tagged", &tagged, &b"a\nb"[..]),
        ("json", &json, b"a\nb"),
        ("hashdeep", &hashdeep, b"a,b"),
    ] {
        let list = several(text).unwrap_or_else(|why| panic!("{what}: {why}"));
        assert_eq!(list.algorithms, [Algorithm::Md5, Algorithm::Sha256], "{what}");
        assert_eq!(list.entries.len(), 2, "{what}");
        assert_eq!(list.entries[0].path, first, "{what}");
        let hexes: Vec<String> = list.entries[1].digests.iter().map(|d| d.to_hex()).collect();
        assert_eq!(hexes, [md5.clone(), sha.clone()], "{what}");
    }
    let stamped = several(&json).unwrap();
    assert_eq!(stamped.entries[0].stamp.as_ref().map(|s| s.ino), Some(2));
    assert_eq!((stamped.entries[0].fsid, stamped.entries[1].stamp.is_none()), (5, true));
    let lines: Vec<&str> = tagged.split_inclusive('\n').collect();
    for (what, text, said) in [
        ("a line missing", [lines[0], lines[2], lines[3]].concat(), "line 2:"),
        ("another order", [lines[0], lines[1], lines[3], lines[2]].concat(), "line 3:"),
        ("untagged", format!("{md5}  x\n"), "line 1 is untagged"),
        ("a directory", format!("MD5 (d/) = {md5}\nSHA256 (d/) = {sha}\n"), "line 1:"),
    ] {
        let why = several(&text).expect_err(what);
        assert!(why.starts_with(said), "{what}: {why}");
    }
    let one = json.replace("\"digests\":{\"md5\"", "\"algorithm\":\"md5\",\"digest\"");
    assert!(several(&one).is_err());
}

#[test]
fn a_hashdeep_list_is_read_in_all_its_columns_at_once() {
    // Whatever the columns' order, every column fastsum computes is
    // compared (the SHAttered pair must not pass where the list also
    // gives md5); `-a` still picks a column by name.
    let (md5, sha1, sha256) = ("0".repeat(32), "1".repeat(40), "2".repeat(64));
    let md5_sha256 = blake3_of(&[&md5, &sha256]).to_hex();
    let md5_sha1 = blake3_of(&[&md5, &sha1]).to_hex();
    let all = blake3_of(&[&md5, &sha1, &sha256]).to_hex();
    for (columns, line, want, digest) in [
        ("md5,sha256", format!("3,{md5},{sha256},a"), Algorithm::Joint { set: 0b1001, blake2b: 0 }, &md5_sha256),
        ("sha256,md5", format!("3,{sha256},{md5},a"), Algorithm::Joint { set: 0b1001, blake2b: 0 }, &md5_sha256),
        ("md5,sha1", format!("3,{md5},{sha1},a"), Algorithm::Joint { set: 0b11, blake2b: 0 }, &md5_sha1),
        ("sha1,md5", format!("3,{sha1},{md5},a"), Algorithm::Joint { set: 0b11, blake2b: 0 }, &md5_sha1),
        ("sha256,sha1,md5", format!("3,{sha256},{sha1},{md5},a"), Algorithm::Joint { set: 0b1011, blake2b: 0 }, &all),
        ("md5", format!("3,{md5},a"), Algorithm::Md5, &md5),
    ] {
        let text = format!("%%%% HASHDEEP-1.0\n%%%% size,{columns},filename\n##\n{line}\n");
        let list = read(&text, None).unwrap();
        assert_eq!(list.algorithm, want, "{columns}");
        assert_eq!(&list.entries[0].digest.to_hex(), digest, "{columns}");
    }
    let text = format!("%%%% HASHDEEP-1.0\n%%%% size,md5,sha256,filename\n##\n3,{md5},{sha256},a\n");
    let list = read(&text, Some(Algorithm::Md5)).unwrap();
    assert_eq!(list.entries[0].digest.to_hex(), md5);
}

/// A list is never read as if the digests it
/// gives beyond one algorithm were not there. A first file of MD5 alone
/// makes an MD5 list, and a SHA-256 line further down is refused, not
/// read past (the collision passed `diff` and `audit`); `-a` naming none
/// of several is refused, not answered by another; hashdeep lists joined
/// with other columns are refused (the sha256 was read into the name);
/// a digest fastsum cannot compute beside only MD5 refuses the list
/// unless `-a` asks for the MD5, and beside SHA-256 is read past.
#[test]
fn digests_beyond_the_one_read_are_refused_never_read_past() {
    let md5 = "900150983cd24fb0d6963f7d28e17f72";
    let sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    for later in [
        format!("MD5 (g) = {md5}\nMD5 (f) = {md5}\nSHA256 (f) = {sha}\n"),
        format!("{md5}  g\nMD5 (f) = {md5}\nSHA256 (f) = {sha}\n"),
        format!("MD5 (d/) = {md5}\nMD5 (f) = {md5}\nSHA256 (f) = {sha}\n"),
    ] {
        let why = read(&later, None).expect_err(&later);
        assert!(why.contains("mixes md5 and sha256 lines (line 3)"), "{why}");
        // Asked for SHA-256: refused, or (an untagged MD5 line is not a
        // SHA-256 one) that line a problem.
        let asked = read(&later, Some(Algorithm::Sha256));
        assert!(asked.map_or(true, |m| !m.problems.is_empty()), "{later}");
    }
    let both = format!("MD5 (a) = {md5}\nSHA256 (a) = {sha}\n");
    let why = read(&both, Some(Algorithm::Sha1)).unwrap_err();
    assert!(why.contains("md5 and sha256, not the sha1 asked for"), "{why}");
    // One algorithm: its lines name it, whatever -a says (as before).
    assert_eq!(read(&format!("MD5 (a) = {md5}\n"), Some(Algorithm::Sha1)).unwrap().algorithm, Algorithm::Md5);

    let head = |columns: &str| format!("%%%% HASHDEEP-1.0\n%%%% size,{columns},filename\n");
    let same = format!("{}3,{md5},a\n{}3,{md5},b\n", head("md5"), head("md5"));
    assert_eq!(read(&same, None).unwrap().entries.len(), 2);
    let other = format!("{}3,{md5},a\n{}3,{md5},{sha},b\n", head("md5"), head("md5,sha256"));
    let why = read(&other, None).unwrap_err();
    assert!(why.starts_with("line 5: a second column line"), "{why}");

    let tiger = "0".repeat(48);
    let weak = format!("{}3,{md5},{tiger},a\n", head("md5,tiger"));
    let why = read(&weak, None).unwrap_err();
    assert!(why.contains("cannot be computed here, and md5 alone"), "{why}");
    assert_eq!(read(&weak, Some(Algorithm::Md5)).unwrap().entries.len(), 1);
    let sound = format!("{}3,{md5},{sha},{tiger},a\n", head("md5,sha256,tiger"));
    assert_eq!(read(&sound, None).unwrap().algorithm, Algorithm::Joint { set: 0b1001, blake2b: 0 });
    for member in [format!("\"tiger\":\"{tiger}\""), "\"sha256\":null".to_string()] {
        let json = format!("{{\"path\":\"a\",\"digests\":{{\"md5\":\"{md5}\",{member}}},\"size\":3}}\n");
        let why = read(&json, None).unwrap_err();
        assert!(why.contains("cannot be computed here"), "{member}: {why}");
        assert_eq!(read(&json, Some(Algorithm::Md5)).unwrap().entries.len(), 1);
    }
    let json = format!("{{\"path\":\"a\",\"digests\":{{\"md5\":\"{md5}\",\"sha256\":\"{sha}\",\"tiger\":\"{tiger}\"}}}}\n");
    assert_eq!(read(&json, None).unwrap().algorithm, Algorithm::Joint { set: 0b1001, blake2b: 0 });
}
