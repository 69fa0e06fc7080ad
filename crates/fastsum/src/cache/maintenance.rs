//! What `fastsum cache stats|prune|clear` asks of the store.

use std::path::{Path, PathBuf};

use rusqlite::params;

use super::dir_entries::DirEntries;
use super::store::{cache_error, Cache};
use crate::algo::Algorithm;
use crate::error::{Error, ErrorKind, Result};

/// Figures for `fastsum cache stats`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Entries stored.
    pub entries: u64,
    /// Bytes on disk (database, WAL and shared-memory files).
    pub bytes_on_disk: u64,
    /// Hits and misses of the last run that used the cache.
    pub last_run: Option<(u64, u64)>,
}

impl Cache {
    /// Entries, size on disk and the last run's hits and misses. Folds the
    /// write-ahead log into the file first, so the size is the file's.
    pub fn summary(&self) -> Result<Summary> {
        let _ = self
            .connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        let entries: i64 = self
            .connection
            .query_row("SELECT coalesce(sum(count), 0) FROM dirs", [], |r| r.get(0))
            .map_err(|e| cache_error(&self.path, e))?;
        let bytes_on_disk = ["", "-wal", "-shm"]
            .iter()
            .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", self.path.display())).ok())
            .map(|m| m.len())
            .sum();
        let last_run = self
            .connection
            .query_row("SELECT value FROM meta WHERE key = 'last_run'", [], |r| {
                r.get::<_, String>(0)
            })
            .ok()
            .and_then(|v| {
                let (h, m) = v.split_once(' ')?;
                Some((h.parse().ok()?, m.parse().ok()?))
            });
        Ok(Summary {
            entries: entries as u64,
            bytes_on_disk,
            last_run,
        })
    }

    /// Drops entries whose file is gone (and rows that fail their check);
    /// returns how many entries were dropped.
    pub fn prune(&mut self) -> Result<u64> {
        let error = |path: &Path, e: rusqlite::Error| cache_error(path, e);
        type Stored = (Vec<u8>, Vec<u8>, String, i64, Vec<u8>);
        let rows: Vec<Stored> = {
            let mut statement = self
                .connection
                .prepare("SELECT dir, part, algorithm, count, entries FROM dirs")
                .map_err(|e| error(&self.path, e))?;
            let rows = statement
                .query_map([], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })
                .map_err(|e| error(&self.path, e))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(|e| error(&self.path, e))?
        };
        let transaction = self
            .connection
            .transaction()
            .map_err(|e| error(&self.path, e))?;
        let mut removed = 0;
        for (dir, part, algorithm_name, count, blob) in rows {
            let entries = algorithm_name
                .parse::<Algorithm>()
                .ok()
                .and_then(|algorithm| {
                    Some((algorithm, DirEntries::decode(&dir, algorithm, &part, blob)?))
                });
            let Some((algorithm, entries)) = entries else {
                removed += count.max(0) as u64;
                transaction
                    .execute(
                        "DELETE FROM dirs WHERE dir = ?1 AND algorithm = ?2 AND part = ?3",
                        params![dir, algorithm_name, part],
                    )
                    .map_err(|e| error(&self.path, e))?;
                continue;
            };
            let mut kept = entries.to_map();
            let before = kept.len();
            let dir_path = crate::fs::name::path(&dir);
            kept.retain(|name, _| {
                std::fs::symlink_metadata(dir_path.join(crate::fs::name::os_str(name))).is_ok()
            });
            if kept.len() == before {
                continue;
            }
            removed += (before - kept.len()) as u64;
            // An emptied row stays: its range is still the directory's.
            let range = (entries.lo(), entries.hi());
            transaction
                .execute(
                    "UPDATE dirs SET count = ?4, entries = ?5
                     WHERE dir = ?1 AND algorithm = ?2 AND part = ?3",
                    params![
                        dir,
                        algorithm_name,
                        part,
                        kept.len() as i64,
                        DirEntries::encode(&dir, algorithm, range, &kept)
                    ],
                )
                .map_err(|e| error(&self.path, e))?;
        }
        transaction.commit().map_err(|e| error(&self.path, e))?;
        Ok(removed)
    }

    /// Drops every entry; returns how many there were.
    pub fn clear(&mut self) -> Result<u64> {
        let removed: i64 = self
            .connection
            .query_row("SELECT coalesce(sum(count), 0) FROM dirs", [], |r| r.get(0))
            .map_err(|e| cache_error(&self.path, e))?;
        self.connection
            .execute("DELETE FROM dirs", [])
            .map_err(|e| cache_error(&self.path, e))?;
        // Nothing is left that the last run's hits and misses describe.
        self.connection
            .execute("DELETE FROM meta WHERE key = 'last_run'", [])
            .map_err(|e| cache_error(&self.path, e))?;
        let _ = self.connection.execute_batch("VACUUM");
        Ok(removed as u64)
    }
}

impl Cache {
    /// A note kept in the cache under `key` (`scrub`'s place in a tree),
    /// if any.
    pub fn note(&self, key: &str) -> Result<Option<String>> {
        use rusqlite::OptionalExtension;
        self.connection
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| cache_error(&self.path, e))
    }

    /// Keeps `value` under `key` (`None`: forgets it).
    pub fn set_note(&mut self, key: &str, value: Option<&str>) -> Result<()> {
        let done = match value {
            Some(value) => self.connection.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)",
                params![key, value],
            ),
            None => self
                .connection
                .execute("DELETE FROM meta WHERE key = ?1", [key]),
        };
        done.map(drop).map_err(|e| cache_error(&self.path, e))
    }
}

impl Cache {
    /// The algorithms that hold entries at or below one of the absolute
    /// `prefixes` when `own` holds none there (none otherwise): a scrub
    /// that finds nothing recorded in its own algorithm says which one the
    /// recording runs used.
    pub(crate) fn recorded_only_in_others(
        &self,
        own: Algorithm,
        prefixes: &[PathBuf],
    ) -> Result<Vec<Algorithm>> {
        let failed = |e| cache_error(&self.path, e);
        let mut any = self
            .connection
            .prepare_cached(
                "SELECT 1 FROM dirs WHERE algorithm = ?1 AND dir >= ?2 AND dir < ?3 LIMIT 1",
            )
            .map_err(failed)?;
        let candidates = Algorithm::ALL
            .into_iter()
            .chain((1..=64).map(|n| Algorithm::Blake2b { output_len: n }));
        let mut found = Vec::new();
        for algorithm in candidates {
            for prefix in prefixes {
                let (low, high) = super::store::range_of(prefix.as_os_str().as_encoded_bytes());
                let name = algorithm.to_string();
                if !found.contains(&algorithm)
                    && any.exists(params![name, low, high]).map_err(failed)?
                {
                    found.push(algorithm);
                }
            }
        }
        if found.contains(&own) {
            found.clear();
        }
        Ok(found)
    }

    /// Where a run's cache is: `given`, else the default,
    /// `$XDG_CACHE_HOME/fastsum/cache.sqlite` or `~/.cache/...`; with
    /// neither variable set, [`ErrorKind::NoCacheHome`]. The one place a
    /// cache path is resolved (every command of the CLI goes through it).
    pub fn resolve_path(given: Option<PathBuf>) -> Result<PathBuf> {
        given
            .or_else(Self::default_path)
            .ok_or_else(|| Error::new(ErrorKind::NoCacheHome))
    }

    /// `$XDG_CACHE_HOME/fastsum/cache.sqlite`, or `~/.cache/...`.
    fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("fastsum").join("cache.sqlite"))
    }
}
