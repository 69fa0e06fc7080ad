//! What S3 said of an object, kept so that an unchanged re-run costs one
//! listing: keyed by bucket, key, ETag, size and LastModified (an object
//! rewritten changes at least its LastModified, and its ETag with its
//! bytes), in an SQLite file of its own beside the digest cache.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

use super::claim::{Claim, Kind};
use super::xml::Listed;

/// An open claim cache.
pub(crate) struct ClaimCache {
    db: Mutex<Connection>,
}

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
        Some(ClaimCache { db: Mutex::new(db) })
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

    /// Keeps `claim` for `object`.
    pub(crate) fn put(&self, bucket: &str, object: &Listed, claim: &Claim) {
        if let Ok(db) = self.db.lock() {
            let _ = db.execute(
                "INSERT OR REPLACE INTO s3_claims VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    bucket,
                    object.key,
                    object.etag,
                    object.size as i64,
                    object.last_modified,
                    encode(claim)
                ],
            );
        }
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
}
