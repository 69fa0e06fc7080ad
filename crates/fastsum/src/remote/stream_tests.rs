//! The stream reader against every shape a lying or broken host sends.

use super::*;

const A: &str = "900150983cd24fb0d6963f7d28e17f72";

fn md5(stream: &[u8], root: &str) -> Result<Vec<RemoteRecord>, String> {
    let mut records = Vec::new();
    parse(stream, Algorithm::Md5, root.as_bytes(), None, &mut |r| {
        records.push(r)
    })?;
    Ok(records)
}

fn tagged(records: &[(&str, &str)], tail: &[u8]) -> Vec<u8> {
    let mut s = b"fastsum-remote-method perl\n".to_vec();
    for (d, p) in records {
        s.extend_from_slice(format!("{d}\0{p}\0").as_bytes());
    }
    s.extend_from_slice(tail);
    s
}

#[test]
fn a_stream_without_its_trailer_is_never_complete() {
    let good = tagged(&[(&format!("D{A}"), "r/a")], END);
    assert_eq!(md5(&good, "r").unwrap().len(), 1);
    // Cut anywhere: never a listing.
    for cut in 0..good.len() {
        assert!(md5(&good[..cut], "r").is_err(), "cut at {cut}");
    }
    assert!(md5(&good[..good.len() - 5], "r")
        .unwrap_err()
        .contains("incomplete"));
    // Nothing applies: the message says what was looked for.
    let none = |a| parse(&b"fastsum-remote-none\n"[..], a, b"r", None, &mut |_| {}).unwrap_err();
    assert!(none(Algorithm::Md5).contains("BSD md5/shasum, perl"));
    assert!(none(Algorithm::Xxh128).contains("only fastsum can"));
}

#[test]
fn a_lying_host_is_refused_with_a_message() {
    // Each of these was once accepted (or panicked).
    let d = format!("D{A}");
    let twice_end = [END, END].concat();
    let failed_then_end = [FAILED, END].concat();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"fastsum-remote-method perl".to_vec(), "ended"),
        (tagged(&[(&d, "r/a")], b"\0\0"), ""),
        (tagged(&[(&d, "r/a"), ("", "r/b"), (&d, "r/c")], END), ""),
        (tagged(&[(&d, "r/a")], &twice_end), "after its end"),
        (tagged(&[(&d, "r/a")], &failed_then_end), "failed"),
        (tagged(&[(&d, "r/a"), (&d, "r/a")], END), "twice"),
        (tagged(&[(&d, "")], END), "empty path"),
        (tagged(&[(&d, "/etc/passwd")], END), "outside"),
        (tagged(&[(&d, "r/../../etc/x")], END), "outside"),
        (tagged(&[(&d, "r/./a")], END), "outside"),
        (tagged(&[(&d, "r//a")], END), "outside"),
        (tagged(&[(&d, "rx/a")], END), "outside"),
        (tagged(&[("Dnothex", "r/a")], END), "bad digest"),
        (tagged(&[(&format!("D{A}00"), "r/a")], END), "bad digest"),
        (tagged(&[("Xwhat", "r/a")], END), "unexpected"),
    ];
    for (stream, says) in cases {
        let e = md5(&stream, "r").expect_err(&String::from_utf8_lossy(&stream));
        assert!(
            e.contains(says),
            "{e} for {:?}",
            String::from_utf8_lossy(&stream)
        );
    }
    // A field past the limit is refused without being held whole.
    let mut long = b"fastsum-remote-method perl\nD".to_vec();
    long.resize(long.len() + (FIELD_LIMIT as usize) + 10, b'a');
    assert!(md5(&long, "r").unwrap_err().contains("1 MiB"));
}

#[test]
fn the_coreutils_and_json_streams_are_checked_alike() {
    let hashes = [
        b"fastsum-remote-method coreutils\nr/a\0\0fastsum-remote-hashes\0".as_slice(),
        format!("{A}  r/a\0").as_bytes(),
    ]
    .concat();
    let ok = [hashes.as_slice(), BATCH, END].concat();
    assert_eq!(md5(&ok, "r").unwrap().len(), 1);
    let unlisted = [
        hashes.as_slice(),
        format!("{A}  /etc/shadow\0").as_bytes(),
        BATCH,
        END,
    ]
    .concat();
    assert!(md5(&unlisted, "r").unwrap_err().contains("did not list"));
    let twice = [
        hashes.as_slice(),
        format!("{A}  r/a\0").as_bytes(),
        BATCH,
        END,
    ]
    .concat();
    assert!(md5(&twice, "r").unwrap_err().contains("twice"));
    let json = |lines: &str, tail: &[u8]| {
        [
            format!("fastsum-remote-method fastsum\n{lines}").as_bytes(),
            tail,
        ]
        .concat()
    };
    let rec = format!("{{\"path\":\"r/a\",\"digest\":\"{A}\"}}\n");
    assert_eq!(md5(&json(&rec, END), "r").unwrap().len(), 1);
    for (stream, says) in [
        (json(&rec, b""), "incomplete"),
        (json(&rec, &[END, END].concat()), "incomplete"),
        (json(&rec, &[FAILED, END].concat()), "failed"),
        (json(&format!("{rec}\n"), END), "unexpected line"),
        (
            json("{\"path_base64\":\"====\",\"digest\":\"x\"}\n", END),
            "path_base64",
        ),
        (
            json(
                &format!("{{\"path\":\"/etc/x\",\"digest\":\"{A}\"}}\n"),
                END,
            ),
            "outside",
        ),
    ] {
        let e = md5(&stream, "r").expect_err(&String::from_utf8_lossy(&stream));
        assert!(e.contains(says), "{e}");
    }
}

#[test]
fn a_root_spelled_with_a_slash_or_a_dot_keeps_its_files() {
    let d = format!("D{A}");
    assert!(md5(&tagged(&[(&d, "/srv/a")], END), "/srv/").is_ok());
    assert!(md5(&tagged(&[(&d, "/a")], END), "/").is_ok());
    assert!(md5(&tagged(&[(&d, "./a")], END), ".").is_ok());
    assert!(md5(&tagged(&[(&d, "f")], END), "f").is_ok());
}

#[test]
fn a_sorted_stream_is_handed_on_as_it_comes_and_checked_in_order() {
    let d = format!("D{A}");
    let sorted = |records: &[(&str, &str)], tail: &[u8]| {
        let mut s = tagged(records, tail);
        s.splice(0..26, b"fastsum-remote-method perl sorted".iter().copied());
        s
    };
    let good = sorted(&[(&d, "r/a"), (&d, "r/b"), (&d, "r/c")], END);
    assert_eq!(md5(&good, "r").unwrap().len(), 3);
    let back = sorted(&[(&d, "r/b"), (&d, "r/a")], END);
    assert!(md5(&back, "r").unwrap_err().contains("came after"));
    let twice = sorted(&[(&d, "r/a"), (&d, "r/a")], END);
    assert!(md5(&twice, "r").unwrap_err().contains("twice"));
    // Cut after two records: they were handed on, and it is an error.
    let cut = sorted(&[(&d, "r/a"), (&d, "r/b")], b"");
    let mut seen = 0;
    let result = parse(&cut[..], Algorithm::Md5, b"r", None, &mut |_| seen += 1);
    assert_eq!((seen, result.is_err()), (2, true));
    // Unsorted: nothing is handed on before the end.
    let mut seen = 0;
    let unsorted = tagged(&[(&d, "r/b"), (&d, "r/a")], b"");
    let result = parse(&unsorted[..], Algorithm::Md5, b"r", None, &mut |_| seen += 1);
    assert_eq!((seen, result.is_err()), (0, true));
}

fn links(stream: &[u8]) -> Result<u64, String> {
    parse(stream, Algorithm::Md5, b"r", None, &mut |_| {}).map(|p| p.symlinks)
}

#[test]
fn the_count_of_links_left_out_is_read_once_and_checked() {
    let rec = [(&*format!("D{A}"), "r/a")];
    let with = |tail: &[u8]| tagged(&rec, tail);
    // A find-made listing: the count before the end.
    assert_eq!(links(&with(b"\0fastsum-remote-links\x0007\0fastsum-remote-end\0")), Ok(7));
    // None said (an older script): none counted.
    assert_eq!(links(&with(END)), Ok(0));
    let coreutils = format!(
        "fastsum-remote-method coreutils\nr/a\0\0fastsum-remote-hashes\0{A}  r/a\0\0fastsum-remote-batch\0\0fastsum-remote-links\x002\0fastsum-remote-end\0"
    );
    assert_eq!(links(coreutils.as_bytes()), Ok(2));
    // Hostile counts and shapes: refused, never a listing.
    for bad in [
        &b"\0fastsum-remote-links\0\0fastsum-remote-end\0"[..],
        b"\0fastsum-remote-links\0-1\0fastsum-remote-end\0",
        b"\0fastsum-remote-links\0 1\0fastsum-remote-end\0",
        b"\0fastsum-remote-links\x0099999999999999999999\0fastsum-remote-end\0",
        b"\0fastsum-remote-links\x001\0fastsum-remote-links\x001\0fastsum-remote-end\0",
        b"\0fastsum-remote-links\x001\0",
        b"\0fastsum-remote-links\x001",
        b"\0fastsum-remote-end\0fastsum-remote-links\x001\0",
        b"\0fastsum-remote-links\x001\0fastsum-remote-failed\0",
    ] {
        assert!(links(&with(bad)).is_err(), "{}", String::from_utf8_lossy(bad));
    }
    // fastsum's own method: its records say which it left out (a link
    // counts, a fifo does not), whatever a links field would claim.
    let json = format!(
        "fastsum-remote-method fastsum sorted\n\
         {{\"path\":\"r/a\",\"algorithm\":\"md5\",\"digest\":\"{A}\",\"size\":3}}\n\
         {{\"path\":\"r/l\",\"algorithm\":\"md5\",\"skipped\":\"symbolic link\"}}\n\
         {{\"path\":\"r/m\",\"algorithm\":\"md5\",\"skipped\":\"symbolic link\"}}\n\
         {{\"path\":\"r/p\",\"algorithm\":\"md5\",\"skipped\":\"fifo\"}}\n\0fastsum-remote-end\0"
    );
    assert_eq!(links(json.as_bytes()), Ok(2));
    let lying = json.replace("\0fastsum-remote-end\0", "\0fastsum-remote-links\x009\0fastsum-remote-end\0");
    assert!(links(lying.as_bytes()).is_err());
}

/// A JSON stream of `lines` (each one record) under the root `r`.
fn json(lines: &[String]) -> Vec<u8> {
    let mut s = b"fastsum-remote-method fastsum sorted\n".to_vec();
    for line in lines {
        s.extend_from_slice(line.as_bytes());
        s.push(b'\n');
    }
    s.extend_from_slice(END);
    s
}

fn pruned(stream: &[u8], offers: Option<&Offers>) -> Result<Vec<RemoteRecord>, String> {
    let mut records = Vec::new();
    parse(stream, Algorithm::Md5, b"r", offers, &mut |r| records.push(r))?;
    Ok(records)
}

#[test]
fn a_matched_directory_must_be_one_offered_with_its_digest() {
    let dir = |path: &str, digest: &str| {
        format!("{{\"path\":\"{path}\",\"algorithm\":\"md5\",\"directory_digest\":\"{digest}\"}}")
    };
    let file = |path: &str| format!("{{\"path\":\"{path}\",\"algorithm\":\"md5\",\"digest\":\"{A}\"}}");
    let mut offers = Offers::new();
    let d = Algorithm::Md5.hash_bytes(b"d");
    offers.insert(b"sub".to_vec(), d);
    offers.insert(Vec::new(), Algorithm::Md5.hash_bytes(b"root"));
    let hex = d.to_hex();
    // Offered, same digest: handed on as a directory.
    let good = json(&[file("r/a"), dir("r/sub/", &hex), file("r/z")]);
    let records = pruned(&good, Some(&offers)).unwrap();
    assert_eq!(records.len(), 3);
    assert!(records[1].directory && records[1].path == b"r/sub/");
    assert!(!records[0].directory && !records[2].directory);
    // The root itself.
    let root = json(&[dir("r/", &Algorithm::Md5.hash_bytes(b"root").to_hex())]);
    assert!(pruned(&root, Some(&offers)).unwrap()[0].directory);
    // Lies: never asked, not offered, another digest, outside the root,
    // a directory record without the separator, two digests in one.
    let refused = [
        (pruned(&good, None), "not asked for"),
        (pruned(&json(&[dir("r/other/", &hex)]), Some(&offers)), "not offered"),
        (
            pruned(&json(&[dir("r/sub/", &"0".repeat(32))]), Some(&offers)),
            "another digest",
        ),
        (pruned(&json(&[dir("rsub/", &hex)]), Some(&offers)), "outside"),
        (pruned(&json(&[dir("r/sub", &hex)]), Some(&offers)), "outside"),
        (
            pruned(
                &json(&[format!(
                    "{{\"path\":\"r/sub/\",\"digest\":\"{A}\",\"directory_digest\":\"{hex}\"}}"
                )]),
                Some(&offers),
            ),
            "one digest",
        ),
    ];
    for (result, why) in refused {
        let said = result.unwrap_err();
        assert!(said.contains(why), "{said} (wanted {why})");
    }
}
