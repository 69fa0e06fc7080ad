//! Where an interrupted scrub stands, kept in the cache's notes under the
//! key of the scrub (its paths and algorithm): the time the interrupted
//! scrub started. A resumed scrub passes over exactly the files whose
//! entries were stored since then (by the interrupted scrub's reads, or a
//! later read) and whose stamp is still the stored one; every other file
//! is read, whatever the order of the operands. Issue 51: the place was
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
pub(super) fn started_at(note: &str, now_ns: i64) -> Result<i64, String> {
    let time = note
        .strip_prefix(WORD)
        .and_then(|rest| rest.strip_prefix(' '))
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
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
        ] {
            assert!(started_at(bad, now).is_err(), "{bad:?} was trusted");
        }
        assert!(started_at(&note(now + 1), now).is_err());
    }
}
