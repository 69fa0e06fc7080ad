//! Where an interrupted scrub stands, kept in the cache's notes under the
//! key of the scrub (its paths and algorithm): the time the interrupted
//! scrub started. A resumed scrub passes over exactly the files whose
//! entries were stored since then (by the interrupted scrub's reads, or a
//! later read) and whose stamp is still the stored one; every other file
//! is read, whatever the order of the operands. The place was once
//! kept as the last path verified and compared as bytes, while the
//! operands were walked in the order given, so `scrub b a` resumed past
//! the whole of `a`, and a note set by hand to `ff` passed over
//! everything.

use std::path::PathBuf;

use crate::algo::Algorithm;
use crate::cache::Cache;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::name;

/// Where the scrub of these paths with this algorithm keeps its place.
pub(super) fn place_key(algorithm: Algorithm, absolute: &[PathBuf]) -> String {
    let mut paths = Vec::new();
    for path in absolute {
        paths.extend_from_slice(name::path_bytes(path));
        paths.push(0);
    }
    format!(
        "scrub {algorithm} {}",
        Algorithm::Xxh128.hash_bytes(&paths).to_hex()
    )
}

/// The word a note starts with: a note without it was not written by
/// this version (an older place, damage, a hand edit) and is refused.
const WORD: &str = "started-ns";

/// The note of a scrub that started at `started_ns`.
pub(super) fn note(started_ns: i64) -> String {
    format!("{WORD} {started_ns}")
}

/// The start time a note holds, if it is a note this scrub writes and the
/// time is in the past (at or before `now_ns`) and after the epoch; the
/// reason otherwise.
pub(crate) fn started_at(note: &str, now_ns: i64) -> Result<i64, String> {
    let time = note
        .strip_prefix(WORD)
        .and_then(|rest| rest.strip_prefix(' '))
        // Canonical digits only: the one spelling a scrub writes.
        .filter(|digits| !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit()))
        .filter(|digits| !digits.is_empty())
        .and_then(|digits| digits.parse::<i64>().ok())
        .ok_or_else(|| format!("'{}' is not a start time", note.escape_debug()))?;
    match time {
        0 => Err("a start time of 0".into()),
        t if t > now_ns => Err("a start time in the future".into()),
        t => Ok(t),
    }
}

/// When the interrupted scrub under `key` started (`None`: no scrub of
/// these paths was interrupted, so there is nothing to pass over). A note
/// this version did not write, or a time not in the past, is refused:
/// trusting it could pass over files never verified.
pub(super) fn resume_state(cache: &Cache, key: &str, now_ns: i64) -> Result<Option<i64>> {
    let Some(note) = cache.note(key)? else {
        return Ok(None);
    };
    match started_at(&note, now_ns) {
        Ok(since) => Ok(Some(since)),
        Err(why) => Err(Error::new(ErrorKind::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "cannot resume: the place kept for this scrub holds {why}, not one this version wrote; scrub again without --resume"
            ),
        )))),
    }
}

/// The files scrubs found corrupted and nothing has verified or
/// rewritten since (a corrupted entry is left
/// as it was, so its time said "verified recently" and `--older-than`
/// called it not due). Kept in the cache's notes per algorithm, as hex of
/// their absolute paths; such a file is read by every scrub, never passed
/// over, until it is verified (its bytes are the record's again) or its
/// stamp moves (a person rewrote it).
pub(crate) struct Corrupted {
    key: String,
    paths: std::collections::BTreeSet<Vec<u8>>,
    changed: bool,
}

impl Corrupted {
    /// The set kept for `algorithm` (a note that cannot be read is an
    /// error: it could hide a corrupted file).
    pub(super) fn load(cache: &Cache, algorithm: Algorithm) -> Result<Corrupted> {
        let key = format!("scrub-corrupted {algorithm}");
        let mut paths = std::collections::BTreeSet::new();
        if let Some(note) = cache.note(&key)? {
            for hex in note.split(' ').filter(|h| !h.is_empty()) {
                let path = unhex(hex).ok_or_else(|| {
                    Error::new(ErrorKind::Io(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "the cache's list of corrupted files is damaged: fastsum cache clear, then record and scrub again",
                    )))
                })?;
                paths.insert(path);
            }
        }
        Ok(Corrupted {
            key,
            paths,
            changed: false,
        })
    }

    /// Whether the file at `absolute` was found corrupted.
    pub(super) fn holds(&self, absolute: &std::path::Path) -> bool {
        self.paths.contains(name::path_bytes(absolute))
    }

    /// Remembers what a read of the file at `absolute` found. A file newly
    /// found corrupted is stored in `cache` at once, before the finding is
    /// said: kept only at the end, a scrub killed after saying it lost it,
    /// and the next `--older-than` scrub called the file not due (exit 0).
    /// The whole set is written each time, so past [`SAVED_AT_ONCE`] files
    /// it is written with each batch instead (`Run::keep`): a disk with
    /// 100,000 rotted files would otherwise write the set 100,000 times.
    pub(super) fn note(
        &mut self,
        cache: &mut Cache,
        absolute: &std::path::Path,
        finding: &super::Finding,
    ) -> Result<()> {
        use super::Finding;
        let bytes = name::path_bytes(absolute);
        match finding {
            Finding::Corrupted { .. } if self.paths.insert(bytes.to_vec()) => {
                self.changed = true;
                if self.paths.len() <= SAVED_AT_ONCE {
                    return self.save(cache);
                }
            }
            Finding::Verified | Finding::Changed | Finding::New | Finding::OtherFileSystem => {
                self.changed |= self.paths.remove(bytes)
            }
            _ => {}
        }
        Ok(())
    }

    /// Stores the set, if it changed.
    pub(super) fn save(&mut self, cache: &mut Cache) -> Result<()> {
        if !std::mem::take(&mut self.changed) {
            return Ok(());
        }
        let value: Vec<String> = self.paths.iter().map(|p| hex(p)).collect();
        match value.is_empty() {
            true => cache.set_note(&self.key, None),
            false => cache.set_note(&self.key, Some(&value.join(" "))),
        }
    }
}

/// Corrupted files kept in the cache as each is found, at most; more are
/// kept with each batch's entries.
const SAVED_AT_ONCE: usize = 256;

/// Bytes as hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex as bytes; `None` for text that is not hex.
fn unhex(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_past_start_time_in_this_form_is_trusted() {
        let now = 2_000_000_000_000_000_000;
        assert_eq!(started_at(&note(5), now), Ok(5));
        assert_eq!(started_at(&note(now), now), Ok(now));
        for bad in [
            "ff",
            "",
            "started-ns",
            "started-ns ",
            "started-ns -5",
            "started-ns 0",
            "started-ns +5",
            "started-ns 5 ",
            "started-ns 99999999999999999999",
            "2f746d70",
            "started-ns 05",
            "started-ns 00000000000000000001",
        ] {
            assert!(started_at(bad, now).is_err(), "{bad:?} was trusted");
        }
        assert!(started_at(&note(now + 1), now).is_err());
    }
}
