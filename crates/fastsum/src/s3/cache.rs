//! What S3 said of an object, kept so that an unchanged re-run costs one
//! listing: keyed by the endpoint (with region, addressing and access
//! key, so that a lying endpoint's claims never answer for another),
//! bucket, key, ETag, size and LastModified (an object rewritten changes
//! at least its LastModified, and its ETag with its bytes), in an SQLite
//! file of its own beside the digest cache. Every claim S3 gave is kept
//! (`diff` compares them all), and a kept claim that contradicts this
//! run's listing is no answer.

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
    /// Which S3 answered: [`endpoint_identity`].
    endpoint: String,
}

/// One object's claims to keep: bucket, key, ETag, size, LastModified,
/// the claims.
type Row = (String, Vec<u8>, String, i64, String, String);

/// What names the S3 that answered: its endpoint, region, addressing
/// style and access key id, hashed (the id is not kept in the clear).
pub(crate) fn endpoint_identity(config: &super::S3Config) -> String {
    let said = format!(
        "{}\0{}\0{}\0{}",
        config.endpoint.trim_end_matches('/'),
        config.region,
        config.path_style,
        config.access_key.as_deref().unwrap_or("")
    );
    crate::algo::Algorithm::Sha256
        .hash_bytes(said.as_bytes())
        .to_hex()
}

/// Claims as the cache keeps them, a line each.
fn encode_all(claims: &[Claim]) -> String {
    claims.iter().map(encode).collect::<Vec<_>>().join("\n")
}

/// [`encode_all`]'s claims; `None` if any line is not one.
fn decode_all(text: &str) -> Option<Vec<Claim>> {
    let claims = text.split('\n').map(decode).collect::<Option<Vec<_>>>()?;
    (!claims.is_empty()).then_some(claims)
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

/// What S3 says of `object`, listed under `key` in `bucket`: the claims
/// `cache` keeps of it for this endpoint, or else asked of S3
/// ([`super::claim::claims_of`]) and kept. The one way `diff` and
/// `contained` ask.
pub(crate) fn claims_kept_or_asked(
    cache: Option<&ClaimCache>,
    client: &super::http::Client,
    bucket: &str,
    key: &str,
    object: &Listed,
) -> Result<Vec<Claim>, String> {
    if let Some(claims) = cache.and_then(|c| c.get(bucket, object)) {
        return Ok(claims);
    }
    let claims = super::claim::claims_of(client, key, object.size, &object.etag)?;
    if let Some(c) = cache {
        c.put(bucket, object, &claims);
    }
    Ok(claims)
}

impl ClaimCache {
    /// The cache at `path`, made if absent; `None` if it cannot be opened
    /// (the comparison then asks S3 every time).
    /// Its answers are those of the S3 `config` reaches; the table of
    /// earlier versions (one claim an object, no endpoint) is not read.
    pub(crate) fn open(path: &Path, config: &super::S3Config) -> Option<ClaimCache> {
        let db = Connection::open(path).ok()?;
        db.busy_timeout(std::time::Duration::from_secs(10)).ok()?;
        db.execute_batch(
            "CREATE TABLE IF NOT EXISTS s3_claims_by_endpoint (
                endpoint TEXT NOT NULL,
                bucket TEXT NOT NULL, key BLOB NOT NULL, etag TEXT NOT NULL,
                size INTEGER NOT NULL, last_modified TEXT NOT NULL, claims TEXT NOT NULL,
                PRIMARY KEY (endpoint, bucket, key));
             PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
        )
        .ok()?;
        Some(ClaimCache {
            db: Mutex::new(db),
            pending: Mutex::new(Vec::new()),
            endpoint: endpoint_identity(config),
        })
    }

    /// The claims kept for `object` by this endpoint, if it is the same
    /// object and every claim agrees with what the listing says of it.
    pub(crate) fn get(&self, bucket: &str, object: &Listed) -> Option<Vec<Claim>> {
        let db = self.db.lock().ok()?;
        let text: Option<String> = db
            .query_row(
                "SELECT claims FROM s3_claims_by_endpoint WHERE endpoint = ?1 AND bucket = ?2
                 AND key = ?3 AND etag = ?4 AND size = ?5 AND last_modified = ?6",
                params![
                    self.endpoint,
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
        let claims = decode_all(&text?)?;
        claims
            .iter()
            .all(|c| c.agrees_with_listing(object.size, &object.etag))
            .then_some(claims)
    }

    /// Keeps every one of `claims` for `object` (written when the cache
    /// is dropped).
    pub(crate) fn put(&self, bucket: &str, object: &Listed, claims: &[Claim]) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.push((
                bucket.to_owned(),
                object.key.clone(),
                object.etag.clone(),
                object.size as i64,
                object.last_modified.clone(),
                encode_all(claims),
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
            let mut insert = tx.prepare(
                "INSERT OR REPLACE INTO s3_claims_by_endpoint VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for row in &rows {
                let e = &self.endpoint;
                insert.execute(params![e, row.0, row.1, row.2, row.3, row.4, row.5])?;
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

    fn config(endpoint: &str) -> crate::s3::S3Config {
        crate::s3::S3Config {
            endpoint: endpoint.into(),
            region: "us-east-1".into(),
            ..Default::default()
        }
    }

    #[test]
    fn claims_round_trip_and_bad_rows_are_no_answer() {
        let claims = vec![
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
        ];
        for claim in &claims {
            assert_eq!(decode(&encode(claim)).as_ref(), Some(claim));
        }
        assert_eq!(decode_all(&encode_all(&claims)), Some(claims.clone()));
        assert_eq!(decode("whole crc32 0102"), None);
        assert_eq!(decode("parts md5 00 x"), None);
        assert_eq!(decode("nonsense"), None);
        let one_bad = encode_all(&claims) + "\nwhole crc32 0102";
        assert_eq!(decode_all(&one_bad), None);
    }

    fn object(i: usize, etag: &str) -> Listed {
        Listed {
            key: format!("k{i}").into_bytes(),
            size: i as u64,
            etag: etag.to_owned(),
            last_modified: "2026-11-28T00:00:00.000Z".to_owned(),
        }
    }

    #[test]
    fn claims_held_are_written_at_drop_and_found_only_for_the_same_object() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claims");
        let claim = |i: usize| {
            vec![Claim::Whole {
                kind: Kind::Crc32,
                value: (i as u32).to_be_bytes().to_vec(),
            }]
        };
        let here = config("http://127.0.0.1:1");
        {
            let cache = ClaimCache::open(&path, &here).unwrap();
            for i in 0..300 {
                cache.put("b", &object(i, "e"), &claim(i));
            }
            assert_eq!(
                cache.get("b", &object(7, "e")),
                None,
                "held, not yet written"
            );
        }
        let cache = ClaimCache::open(&path, &here).unwrap();
        for i in [0, 7, 299] {
            assert_eq!(cache.get("b", &object(i, "e")), Some(claim(i)));
        }
        assert_eq!(cache.get("b", &object(7, "other etag")), None);
        assert_eq!(cache.get("other bucket", &object(7, "e")), None);
        // Another endpoint, region or access key: none of these answers.
        let mut others = vec![config("http://127.0.0.1:2"), config("http://127.0.0.1:1/x")];
        others.push(crate::s3::S3Config {
            region: "eu-west-1".into(),
            ..here.clone()
        });
        others.push(crate::s3::S3Config {
            access_key: Some("AKOTHER".into()),
            ..here.clone()
        });
        for other in others {
            let cache = ClaimCache::open(&path, &other).unwrap();
            assert_eq!(cache.get("b", &object(7, "e")), None, "{other:?}");
        }
    }

    /// A kept claim the listing contradicts (an MD5 that is not the
    /// single-part ETag, parts that do not add up to the size) is no
    /// answer, whoever wrote it.
    #[test]
    fn a_kept_claim_the_listing_contradicts_is_no_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claims");
        let here = config("http://127.0.0.1:1");
        let etag = "0123456789abcdef0123456789abcdef";
        let md5 = |byte: u8| Claim::Whole {
            kind: Kind::Md5,
            value: vec![byte; 16],
        };
        let right = Claim::Whole {
            kind: Kind::Md5,
            value: etag_bytes(etag),
        };
        let parts = |sizes: Vec<u64>| Claim::Parts {
            kind: Kind::Crc32c,
            value: vec![0; 4],
            parts: sizes,
        };
        {
            let cache = ClaimCache::open(&path, &here).unwrap();
            cache.put("b", &object(5, etag), std::slice::from_ref(&right));
            cache.put("b", &object(6, etag), &[right.clone(), md5(9)]);
            cache.put("b", &object(7, etag), &[parts(vec![4, 3])]);
            cache.put("b", &object(8, etag), &[parts(vec![4, 3])]);
        }
        let cache = ClaimCache::open(&path, &here).unwrap();
        assert_eq!(cache.get("b", &object(5, etag)), Some(vec![right]));
        assert_eq!(cache.get("b", &object(6, etag)), None);
        assert_eq!(
            cache.get("b", &object(7, etag)),
            Some(vec![parts(vec![4, 3])])
        );
        assert_eq!(cache.get("b", &object(8, etag)), None);
    }

    fn etag_bytes(etag: &str) -> Vec<u8> {
        crate::s3::claim::etag_md5(etag).unwrap().0
    }
}
