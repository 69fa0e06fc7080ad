//! What an update changed, said as `diff` says it (`A`, `D`, `M` and the
//! path), and the old lists it refuses to change: a path listed twice, a
//! listed file still there that the run did not read, a file the run read
//! twice.

use std::io::Write;
use std::path::Path;

use crate::mode::options::Listed;
use crate::mode::run::{Run, Written};
use crate::mode::update::file;

/// A path the old list names twice (its lines disagree or repeat): the
/// update cannot tell which line was the list's word, so it changes
/// nothing (as diff and audit refuse such a list).
pub(super) fn listed_twice(old: &Listed) -> Option<String> {
    let mut paths: Vec<&[u8]> = old.entries().into_iter().map(|(path, ..)| path).collect();
    paths.sort_unstable();
    let twice = paths.windows(2).find(|pair| pair[0] == pair[1])?;
    let name = crate::term::named(twice[0]);
    Some(format!("{} is listed twice", name))
}

/// A file the run read twice (operands that overlap: `t t/sub`, `t ./t`):
/// the new list would name it twice, which no reader takes back. Refused,
/// naming it; nothing is changed.
pub(super) fn written_twice(new: &Written) -> Option<String> {
    let mut names: Vec<&[u8]> = new.iter().map(|(name, ..)| name).collect();
    names.sort_unstable();
    let twice = names.windows(2).find(|pair| pair[0] == pair[1])?;
    let name = crate::term::named(twice[0]);
    Some(format!(
        "{} was read twice (the operands overlap: name each directory once)",
        name
    ))
}

/// A file the old list names that this run did not read, though it is
/// still there (operands narrower than the list's, `--update=SITE.md5
/// site/img`): writing the list without it would drop its record and say
/// it deleted. Refused, naming it; nothing is changed.
pub(super) fn not_read_but_there(old: &Listed, new: &Written) -> Option<String> {
    let read: std::collections::HashSet<&[u8]> = new.iter().map(|(name, ..)| name).collect();
    let there = old.entries().into_iter().find(|(path, ..)| {
        !read.contains(path) && std::fs::symlink_metadata(fastsum::name::path(path)).is_ok()
    })?;
    let name = crate::term::named(there.0);
    Some(format!(
        "{} is listed and still there, but was not read (give the operands the list was made of)",
        name
    ))
}

/// `A\tPATH`, `D\tPATH`, `M\tPATH` in path order on stdout, and the
/// counts: the old list and the new entries merged in path order (a file
/// of several digests is modified when any of them changed; a record of
/// a size is when the size did, as `-c` and `diff` fail it: a record of
/// the right digest and a wrong size was rewritten and said unchanged).
pub(super) fn say_changes(run: &mut Run, old: &Listed, new: Written, path: &Path) {
    let mut old = old.entries();
    old.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut new: Vec<(&[u8], u64, &[fastsum::Digest])> = new.iter().collect();
    new.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut counts = [0u64; 4];
    let mut lines = Vec::new();
    let (mut o, mut n) = (old.iter().peekable(), new.iter().peekable());
    loop {
        let (letter, name) = match (o.peek(), n.peek()) {
            (None, None) => break,
            (Some(a), Some(b)) if a.0 == b.0 => {
                let changed = a.2 != b.2 || a.1.is_some_and(|size| size != b.1);
                let name = a.0;
                o.next();
                n.next();
                match changed {
                    true => (b'M', name),
                    false => {
                        counts[3] += 1;
                        continue;
                    }
                }
            }
            (Some(a), Some(b)) if a.0 < b.0 => (b'D', o.next().map_or(&[][..], |a| a.0)),
            (Some(_), None) => (b'D', o.next().map_or(&[][..], |a| a.0)),
            (_, Some(_)) => (b'A', n.next().map_or(&[][..], |b| b.0)),
        };
        counts[usize::from(letter == b'D') + 2 * usize::from(letter == b'M')] += 1;
        // Names escaped as every report line escapes them: no forged lines.
        let parts = [
            fastsum::output::line::LinePart::Text(&[letter, b'\t']),
            fastsum::output::line::LinePart::Name(name),
        ];
        fastsum::output::line::LinePart::write_line(&mut lines, &parts, true);
    }
    run.out.out(&lines);
    let [added, removed, modified, unchanged] = counts;
    let m = format!(
        "{}: updated: {added} added, {removed} removed, {modified} modified, {unchanged} unchanged",
        file::named(path)
    );
    let _ = std::io::stderr().flush();
    run.error(m.as_bytes());
}
