//! What S3 said of an object, kept so that an unchanged re-run costs one
//! listing: keyed by bucket, key, ETag, size and LastModified (an object
//! rewritten changes at least its LastModified, and its ETag with its
//! bytes), in an SQLite file of its own beside the digest cache.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

use super::claim::{Claim, Kind};
use super::xml::Listed;

/// An open claim cache. New claims are held and written in one
/// transaction when it is dropped: one autocommit `INSERT` each cost a
/// 10,000-object first run 1.5 s (docs/BENCHMARKS.md, "S3"). A run killed
/// before that loses only what it would have saved a later run.
pub(crate) struct ClaimCache {
    db: Mutex<Connection>,
    pending: Mutex<Vec<Row>>,
}

/// One claim to keep: bucket, key, ETag, size, LastModified, claim.
type Row = (String, Vec<u8>, String, i64, String, String);

fn encode(claim: &Claim) -> String {
    let hex = |v: &[u8]| v.iter().map(|b| format!("{b:02x}")).collect::<String>();
    match claim {
        Claim::Whole { kind, value } => format!("whole {} {}", kind.name(), hex(value)),
        Claim::Parts { kind, value, parts } => {
            let parts: Vec<String> = parts.iter().map(u64::to_string).collect();
            format!("parts {} {} {}", kind.name(), hex(value), parts.join(","))
        }
        Claim::Opaque(why) => format!("opaque {why}"),
    }
}

fn decode(text: &str) -> Option<Claim> {
    let unhex = |h: &str| {
        (0..h.len() / 2)
            .map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()
    };
    let mut words = text.splitn(4, ' ');
    let claim = match words.next()? {
        "opaque" => Claim::Opaque(text.strip_prefix("opaque ")?.to_string()),
        "whole" => Claim::Whole {
            kind: Kind::from_name(words.next()?)?,
            value: unhex(words.next()?)?,
        },
        "parts" => Claim::Parts {
            kind: Kind::from_name(words.next()?)?,
            value: unhex(words.next()?)?,
            parts: words
                .next()?
                .split(',')
                .map(|p| p.parse().ok())
                .collect::<Option<Vec<u64>>>()?,
        },
        _ => return None,
    };
    match &claim {
        Claim::Whole { kind, value } | Claim::Parts { kind, value, .. }
            if value.len() != kind.len() =>
        {
            None
        }
        _ => Some(claim),
    }
}

impl ClaimCache {
    /// The cache at `path`, made if absent; `None` if it cannot be opened
    /// (the comparison then asks S3 every time).
    pub(crate) fn open(path: &Path) -> Option<ClaimCache> {
        let db = Connection::open(path).ok()?;
        db.busy_timeout(std::time::Duration::from_secs(10)).ok()?;
        db.execute_batch(
            "CREATE TABLE IF NOT EXISTS s3_claims (
                bucket TEXT NOT NULL, key BLOB NOT NULL, etag TEXT NOT NULL,
                size INTEGER NOT NULL, last_modified TEXT NOT NULL, claim TEXT NOT NULL,
                PRIMARY KEY (bucket, key));
             PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
        )
        .ok()?;
        Some(ClaimCache {
            db: Mutex::new(db),
            pending: Mutex::new(Vec::new()),
        })
    }

    /// The claim kept for `object`, if it is the same object.
    pub(crate) fn get(&self, bucket: &str, object: &Listed) -> Option<Claim> {
        let db = self.db.lock().ok()?;
        let text: Option<String> = db
            .query_row(
                "SELECT claim FROM s3_claims WHERE bucket = ?1 AND key = ?2 AND etag = ?3
                 AND size = ?4 AND last_modified = ?5",
                params![
                    bucket,
                    object.key,
                    object.etag,
                    object.size as i64,
                    object.last_modified
                ],
                |row| row.get(0),
            )
            .optional()
            .ok()?;
        decode(&text?)
    }

    /// Keeps `claim` for `object` (written when the cache is dropped).
    pub(crate) fn put(&self, bucket: &str, object: &Listed, claim: &Claim) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.push((
                bucket.to_owned(),
                object.key.clone(),
                object.etag.clone(),
                object.size as i64,
                object.last_modified.clone(),
                encode(claim),
            ));
        }
    }

    /// Writes the held claims in one transaction.
    fn flush(&mut self) -> rusqlite::Result<()> {
        let rows = std::mem::take(self.pending.get_mut().unwrap_or_else(|e| e.into_inner()));
        if rows.is_empty() {
            return Ok(());
        }
        let db = self.db.get_mut().unwrap_or_else(|e| e.into_inner());
        let tx = db.transaction()?;
        {
            let mut insert =
                tx.prepare("INSERT OR REPLACE INTO s3_claims VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
            for row in &rows {
                insert.execute(params![row.0, row.1, row.2, row.3, row.4, row.5])?;
            }
        }
        tx.commit()
    }
}

impl Drop for ClaimCache {
    fn drop(&mut self) {
        // A claim not kept is asked of S3 again next time: nothing is lost.
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_round_trip_and_bad_rows_are_no_answer() {
        for claim in [
            Claim::Whole {
                kind: Kind::Crc32,
                value: vec![1, 2, 3, 4],
            },
            Claim::Parts {
                kind: Kind::Md5,
                value: vec![7; 16],
                parts: vec![5, 5, 1],
            },
            Claim::Opaque("an SSE-KMS object's ETag is not its MD5".into()),
        ] {
            assert_eq!(decode(&encode(&claim)), Some(claim));
        }
        assert_eq!(decode("whole crc32 0102"), None);
        assert_eq!(decode("parts md5 00 x"), None);
        assert_eq!(decode("nonsense"), None);
    }

    #[test]
    fn claims_held_are_written_at_drop_and_found_only_for_the_same_object() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claims");
        let object = |i: usize, etag: &str| Listed {
            key: format!("k{i}").into_bytes(),
            size: i as u64,
            etag: etag.to_owned(),
            last_modified: "2026-11-28T00:00:00.000Z".to_owned(),
        };
        let claim = |i: usize| Claim::Whole {
            kind: Kind::Crc32,
            value: (i as u32).to_be_bytes().to_vec(),
        };
        {
            let cache = ClaimCache::open(&path).unwrap();
            for i in 0..300 {
                cache.put("b", &object(i, "e"), &claim(i));
            }
            assert_eq!(
                cache.get("b", &object(7, "e")),
                None,
                "held, not yet written"
            );
        }
        let cache = ClaimCache::open(&path).unwrap();
        for i in [0, 7, 299] {
            assert_eq!(cache.get("b", &object(i, "e")), Some(claim(i)));
        }
        assert_eq!(cache.get("b", &object(7, "other etag")), None);
        assert_eq!(cache.get("other bucket", &object(7, "e")), None);
    }
}
