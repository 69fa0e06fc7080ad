//! The row format: entries by name, ranges, merges, splits, damage.

use super::*;

fn entry(i: u64) -> Entry {
    Entry {
        stamp: FileStamp {
            kind: 0o100000,
            size: i,
            ino: 1000 + i,
            dev: 7,
            mtime_ns: -5,
            ctime_ns: i as i64 * 3,
        },
        fs: FsId(0x1234_5678_9abc_def0 ^ i),
        hashed_at_ns: 10_000_000_000,
        digest: Algorithm::Sha256.hash_bytes(&i.to_le_bytes()),
    }
}

fn sample() -> BTreeMap<Vec<u8>, Entry> {
    (0..50u64)
        .map(|i| (format!("name-{}", i * 7919 % 101).into_bytes(), entry(i)))
        .chain([
            (b"\xff\xfe odd".to_vec(), entry(77)),
            (Vec::new(), entry(78)),
        ])
        .collect()
}

const WHOLE: (&[u8], Option<&[u8]>) = (b"", None);

#[test]
fn encoded_entries_come_back_by_name() {
    let map = sample();
    let blob = DirEntries::encode(b"/d", Algorithm::Sha256, WHOLE, &map);
    let entries = DirEntries::decode(b"/d", Algorithm::Sha256, b"", blob).unwrap();
    assert_eq!(entries.len(), map.len());
    for (name, entry) in &map {
        assert_eq!(entries.get(name), Some(*entry), "{name:?}");
    }
    assert_eq!(entries.get(b"name-"), None);
    assert_eq!(entries.get(b"zzz"), None);
    assert_eq!(entries.to_map(), map);
    assert!(entries.covers(b"") && entries.covers(b"\xff\xff"));
    let part = DirEntries::encode(b"/d", Algorithm::Sha256, (b"b", Some(b"m")), &map);
    let part = DirEntries::decode(b"/d", Algorithm::Sha256, b"b", part).unwrap();
    assert_eq!((part.lo(), part.hi()), (&b"b"[..], Some(&b"m"[..])));
    assert!(part.covers(b"b") && part.covers(b"lzz"));
    assert!(!part.covers(b"a") && !part.covers(b"m"));
}

/// A merge gives what inserting into a map of the old entries gives.
#[test]
fn a_merge_equals_a_map_updated() {
    let old_map = sample();
    let old = DirEntries::decode(
        b"/d",
        Algorithm::Sha256,
        b"",
        DirEntries::encode(b"/d", Algorithm::Sha256, WHOLE, &old_map),
    )
    .unwrap();
    let mut new: Vec<(Vec<u8>, Entry)> = (40..70u64)
        .map(|i| {
            (
                format!("name-{}", i * 7919 % 101).into_bytes(),
                entry(i + 1000),
            )
        })
        .chain([(b"a".to_vec(), entry(5)), (b"\xff\xff".to_vec(), entry(6))])
        .collect();
    new.sort_by(|a, b| a.0.cmp(&b.0));
    new.dedup_by(|a, b| a.0 == b.0);
    let borrowed: Vec<(&[u8], Entry)> = new.iter().map(|(n, e)| (n.as_slice(), *e)).collect();
    let mut expected = old_map.clone();
    expected.extend(new.iter().cloned());
    for old in [Some(&old), None] {
        let rows = DirEntries::merged(b"/d", Algorithm::Sha256, WHOLE, old, &borrowed);
        assert_eq!(rows.len(), 1);
        let merged = DirEntries::decode(b"/d", Algorithm::Sha256, b"", rows[0].blob.clone());
        let merged = merged.unwrap();
        let want = match old {
            Some(_) => expected.clone(),
            None => new.iter().cloned().collect(),
        };
        assert_eq!(merged.to_map(), want);
        assert_eq!(rows[0].count, want.len());
    }
}

/// A row never holds more than ROW_MAX entries; one that
/// would is split into rows whose ranges tile the old one, in order,
/// and hold every entry once.
#[test]
fn a_row_over_its_bound_splits_into_rows_that_tile_its_range() {
    let names: Vec<Vec<u8>> = (0..ROW_MAX * 3 + 7)
        .map(|i| format!("f{i:07}").into_bytes())
        .collect();
    let new: Vec<(&[u8], Entry)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_slice(), entry(i as u64)))
        .collect();
    let range: (&[u8], Option<&[u8]>) = (b"e", Some(b"g"));
    let rows = DirEntries::merged::<Vec<u8>>(b"/d", Algorithm::Sha256, range, None, &new);
    assert_eq!(rows.len(), 4);
    let decoded: Vec<DirEntries> = rows
        .iter()
        .map(|r| DirEntries::decode(b"/d", Algorithm::Sha256, &r.lo, r.blob.clone()).unwrap())
        .collect();
    assert_eq!(decoded[0].lo(), b"e");
    assert_eq!(decoded[3].hi(), Some(&b"g"[..]));
    for pair in decoded.windows(2) {
        assert_eq!(pair[0].hi(), Some(pair[1].lo()));
    }
    for (row, decoded) in rows.iter().zip(&decoded) {
        assert!(row.count <= ROW_MAX && row.count == decoded.len());
    }
    for (name, e) in &new {
        let holders: Vec<&DirEntries> = decoded.iter().filter(|d| d.covers(name)).collect();
        assert_eq!(holders.len(), 1, "{name:?}");
        assert_eq!(holders[0].get(name), Some(*e));
    }
}

#[test]
fn any_damage_or_another_key_is_rejected() {
    let blob = DirEntries::encode(b"/d", Algorithm::Sha256, WHOLE, &sample());
    assert!(DirEntries::decode(b"/e", Algorithm::Sha256, b"", blob.clone()).is_none());
    assert!(DirEntries::decode(b"/d", Algorithm::Sha512, b"", blob.clone()).is_none());
    assert!(DirEntries::decode(b"/d", Algorithm::Sha256, b"n", blob.clone()).is_none());
    for at in [0, 5, blob.len() / 2, blob.len() - 1] {
        let mut damaged = blob.clone();
        damaged[at] ^= 0x10;
        assert!(DirEntries::decode(b"/d", Algorithm::Sha256, b"", damaged).is_none());
    }
    for len in [0, 3, 8, blob.len() - 1] {
        let cut = blob[..len].to_vec();
        assert!(DirEntries::decode(b"/d", Algorithm::Sha256, b"", cut).is_none());
    }
}

#[test]
fn an_entry_answers_only_its_own_settled_stamp_on_its_own_file_system() {
    let e = entry(3);
    assert_eq!(e.answer_for(&e.stamp, e.fs), Some(e.digest));
    let mut other = e.stamp;
    other.ino += 1;
    assert_eq!(e.answer_for(&other, e.fs), None);
    // Every stamp field the same, another file system: no answer.
    assert_eq!(e.answer_for(&e.stamp, FsId(e.fs.0 + 1)), None);
    assert_eq!(e.answer_for(&e.stamp, FsId::NONE), None);
    let racy = Entry {
        hashed_at_ns: e.stamp.ctime_ns,
        ..e
    };
    assert_eq!(racy.answer_for(&racy.stamp, racy.fs), None);
}
