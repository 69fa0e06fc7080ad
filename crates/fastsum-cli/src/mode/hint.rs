//! What fastsum's own mode adds to a failed operand's message, for the
//! mistakes of a first hour: a directory given without `-r`
//! (`fastsum: doc: Is a directory (use -r)`), and a subcommand mistyped
//! (`fastsum dif a b`: `dif` is read as a file, and when there is none the
//! message is followed by `fastsum: did you mean the subcommand 'diff'?`).
//! The GNU personalities add nothing: their messages are coreutils' own.

use std::io;

use fastsum::ErrorKind;

/// The hints a run gives (none unless set: the personalities, `-c`).
#[derive(Default)]
pub(super) struct Hints {
    /// A directory operand is hashed only with `-r`: say so.
    directories: bool,
    /// The first argument, when it is one edit away from a subcommand's
    /// word, and that word.
    typo: Option<(Vec<u8>, &'static str)>,
}

impl Hints {
    /// The hints for fastsum's own hashing mode: `first` is the command
    /// line's first argument, `subcommands` the words that start one.
    pub(super) fn new(
        recursive: bool,
        first: Option<&[u8]>,
        subcommands: &[&'static str],
    ) -> Hints {
        let typo = first
            .filter(|a| !a.starts_with(b"-"))
            .and_then(|a| closest(a, subcommands).map(|word| (a.to_vec(), word)));
        Hints {
            directories: !recursive,
            typo,
        }
    }

    /// Amends `message` (the `PROGRAM: NAME: CAUSE\n` said of `name`, which
    /// failed with `kind`): `(use -r)` at the end of its line, and the
    /// subcommand meant on a line of its own after it.
    pub(super) fn amend(
        &self,
        program: &[u8],
        name: &[u8],
        kind: &ErrorKind,
        message: &mut Vec<u8>,
    ) {
        let ErrorKind::Io(e) = kind else { return };
        if message.is_empty() {
            return; // said elsewhere (a format that keeps errors in its records)
        }
        if self.directories && e.kind() == io::ErrorKind::IsADirectory {
            let end = message.len() - usize::from(message.ends_with(b"\n"));
            message.splice(end..end, *b" (use -r)");
        }
        match &self.typo {
            Some((typed, word)) if typed == name && e.kind() == io::ErrorKind::NotFound => {
                message.extend_from_slice(program);
                message.extend_from_slice(
                    format!(": did you mean the subcommand '{word}'?\n").as_bytes(),
                );
            }
            _ => {}
        }
    }
}

/// The subcommand `typed` is one edit from (a letter left out, added,
/// changed, or two swapped; case aside), if exactly one is.
fn closest(typed: &[u8], words: &[&'static str]) -> Option<&'static str> {
    let typed = typed.to_ascii_lowercase();
    let mut near = words
        .iter()
        .filter(|w| typed.len() >= 2 && edit_distance(&typed, w.as_bytes()) <= 1);
    match (near.next(), near.next()) {
        (Some(word), None) => Some(word),
        _ => None,
    }
}

/// The optimal string alignment distance: insertions, deletions,
/// substitutions and transpositions of neighbours, one each.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    rows[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: [&str; 4] = ["diff", "dupes", "bench", "man"];

    #[test]
    fn one_edit_away_is_a_hint_and_two_or_a_tie_is_not() {
        assert_eq!(closest(b"dif", &WORDS), Some("diff"));
        assert_eq!(closest(b"Diff", &WORDS), Some("diff"));
        assert_eq!(closest(b"dupe", &WORDS), Some("dupes"));
        assert_eq!(closest(b"becnh", &WORDS), Some("bench"));
        assert_eq!(closest(b"diffs", &WORDS), Some("diff"));
        assert_eq!(closest(b"df", &WORDS), None);
        assert_eq!(closest(b"README.md", &WORDS), None);
        assert_eq!(closest(b"m", &WORDS), None);
        assert_eq!(closest(b"dupes", &["dupes", "dupe"]), None);
    }
}
