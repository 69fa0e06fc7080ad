//! The one bound on every loop over a server's answers: a
//! server that lies must end the run with an error naming what it said,
//! never keep it asking. Pages of a listing must make progress (no token
//! given twice, however far apart: A, B, A, B ... cycled forever where
//! only a token equal to the last was caught; no empty page after empty
//! page; no page whose keys do not come after the last page's); a part
//! count is at most S3's own limit, so that neither `HEX-999999999` nor
//! ever-new `GetObjectAttributes` markers make a request per part without
//! end.

use std::collections::HashSet;

/// S3's limit on the parts of one upload: a count above it is a lie.
pub(crate) const MAX_PARTS: u64 = 10_000;

/// Empty pages in a row a listing may give before it is said to make no
/// progress (S3 may return one while it skips deleted keys; never many).
pub(crate) const EMPTY_PAGES: u32 = 3;

/// `n` parts of `what`, if S3 could have made that many.
pub(crate) fn part_count(n: u64, what: &str) -> Result<u64, String> {
    match n {
        1..=MAX_PARTS => Ok(n),
        _ => Err(format!(
            "{what}: {n} parts (S3 allows 1 to {MAX_PARTS}): not believed"
        )),
    }
}

/// `n` parts or fewer (0 too: a page that lists none) of `what`.
pub(crate) fn at_most_parts(n: u64, what: &str) -> Result<(), String> {
    match n {
        0 => Ok(()),
        n => part_count(n, what).map(|_| ()),
    }
}

/// The progress of a paged answer, checked page by page.
#[derive(Default)]
pub(crate) struct Pages {
    tokens: HashSet<String>,
    empty_in_a_row: u32,
    last_key: Option<Vec<u8>>,
}

impl Pages {
    /// A page of `keys` (in its order) came, with `next` as its
    /// continuation token (`None`: the last page). `Ok(true)`: ask for
    /// the next page; `Ok(false)`: stop here, the page gave a key again or
    /// one before the last (the listing's order check, `listing.rs`, then
    /// names that key); `Err` names the lie.
    pub(crate) fn page<'a>(
        &mut self,
        keys: impl IntoIterator<Item = &'a [u8]>,
        next: Option<&str>,
    ) -> Result<bool, String> {
        let mut empty = true;
        for key in keys {
            empty = false;
            if self.last_key.as_deref().is_some_and(|last| key <= last) {
                return Ok(false);
            }
            self.last_key = Some(key.to_vec());
        }
        let Some(next) = next else {
            return Ok(false);
        };
        self.empty_in_a_row = match empty {
            true => self.empty_in_a_row + 1,
            false => 0,
        };
        if self.empty_in_a_row > EMPTY_PAGES {
            return Err(format!(
                "the listing: {} empty pages in a row, each with a new token (no progress)",
                self.empty_in_a_row
            ));
        }
        if !self.tokens.insert(next.to_string()) {
            return Err("the listing: a continuation token given again (a cycle)".into());
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_of_tokens_ends_however_long() {
        let mut pages = Pages::default();
        let mut said = None;
        for (i, token) in ["A", "B", "C", "A"].into_iter().enumerate() {
            let key = format!("k{i}");
            match pages.page([key.as_bytes()], Some(token)) {
                Ok(more) => assert!(more, "page {i}"),
                Err(why) => {
                    said = Some(i);
                    assert!(why.contains("cycle"), "{why}");
                    break;
                }
            }
        }
        assert_eq!(said, Some(3));
        let mut pages = Pages::default();
        let none: [&[u8]; 0] = [];
        let ended = (0..100).find(|i| pages.page(none, Some(&format!("t{i}"))).is_err());
        assert_eq!(ended, Some(EMPTY_PAGES as usize));
    }

    #[test]
    fn pages_must_move_forward() {
        let mut pages = Pages::default();
        assert_eq!(pages.page([&b"a"[..], b"b"], Some("1")), Ok(true));
        assert_eq!(pages.page([&b"b"[..]], Some("2")), Ok(false));
        let mut pages = Pages::default();
        assert_eq!(pages.page([&b"b"[..]], Some("1")), Ok(true));
        assert_eq!(pages.page([&b"a"[..]], Some("2")), Ok(false));
        let mut pages = Pages::default();
        assert_eq!(pages.page([&b"a"[..]], Some("1")), Ok(true));
        assert_eq!(pages.page([&b"c"[..]], None), Ok(false));
    }

    #[test]
    fn part_counts_are_s3s() {
        assert_eq!(part_count(1, "x"), Ok(1));
        assert_eq!(part_count(MAX_PARTS, "x"), Ok(MAX_PARTS));
        assert!(part_count(0, "x").is_err());
        assert!(part_count(999_999_999, "x")
            .unwrap_err()
            .contains("999999999"));
    }
}
