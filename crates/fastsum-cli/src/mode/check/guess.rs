//! The algorithm of an untagged list in fastsum's own mode, in one place:
//! [`untagged_algorithm`] decides it for `-c` from the
//! list's name, then its digests' length and a probe of one listed file;
//! `--update` checks its own guess with [`confirm_guess`] from the same
//! candidates and the same matching. The personalities never guess: they
//! keep GNU's reading.

use std::io::{self, BufReader, Read};
use std::path::Path;

use fastsum::manifest::gnu::{CheckParser, TagPolicy};
use fastsum::manifest::read::Manifest;
use fastsum::{Algorithm, Digest};

/// Lines of a list read ahead to find the file to probe (then read again
/// by the check): as many as `-c` reads in its first chunk.
const PROBE_LINES: usize = 4096;

/// Bytes read ahead at most (the lines up to the one that crosses it).
const PROBE_BYTES: usize = 1 << 20;

/// How an untagged list is read.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::mode) enum Reading {
    /// Named for its algorithm (`XXH128SUMS`, `x.xxh128`, `x.b3`): that
    /// algorithm, no probe.
    Named(Algorithm),
    /// The one candidate under which the probed file matched its line.
    Matched(Algorithm),
    /// No probed file matched its line under any candidate: the
    /// smallest, and how many were probed.
    NoneMatched {
        candidates: Vec<Algorithm>,
        probed: (Vec<u8>, usize),
    },
    /// The probed file matched under several (none of which tells).
    Several(Vec<Algorithm>),
    /// Nothing to decide from (a tagged first line, no readable listed
    /// file): read as without a guess.
    Unprobed,
}

/// The one decision of an untagged list's algorithm (`fastsum -c` without
/// `-a`): a list named for its algorithm (`list`'s basename, never `-`)
/// reads as it; otherwise, when its first entry line is untagged with a
/// `digits`-digit digest, the smallest readable regular file among
/// `listed` (name, digest) is hashed under each algorithm of that length,
/// and the one it matches under is the list's.
pub(in crate::mode) fn untagged_algorithm(
    list: &[u8],
    digits: Option<usize>,
    listed: &[(Vec<u8>, Digest)],
) -> Reading {
    let named = (list != b"-")
        .then(|| fastsum::manifest::list::names::algorithm_of_list_name(list))
        .flatten();
    if let Some(algorithm) = named {
        return Reading::Named(algorithm);
    }
    let Some(digits) = digits else {
        return Reading::Unprobed;
    };
    let candidates = candidates(digits);
    if candidates.is_empty() {
        return Reading::Unprobed;
    }
    let probes = smallest_readable(listed);
    let Some(&(smallest, _)) = probes.first() else {
        return Reading::Unprobed;
    };
    let mut hasher = fastsum::FileHasher::new();
    // The smallest decides; the next ones only when it matches under no
    // candidate (it changed since the list: a real FAILED, not a wrong
    // algorithm, when another file tells the list's).
    for (name, expected) in &probes {
        let mut matched = matching(&mut hasher, name, expected, &candidates);
        match matched.len() {
            0 => continue,
            1 => return Reading::Matched(matched.remove(0)),
            _ => return Reading::Several(matched),
        }
    }
    Reading::NoneMatched {
        candidates,
        probed: (smallest.to_vec(), probes.len()),
    }
}

/// Why a list whose probed files matched under no candidate is not
/// checked: `smallest` is the first probed, quoted; `count` how many.
pub(in crate::mode) fn none_matched(
    digits: usize,
    candidates: &[Algorithm],
    smallest: &str,
    count: usize,
) -> String {
    let options = as_options(candidates);
    let found = match count {
        1 => format!("the smallest listed file, {smallest}, matches its line under none of {options}"),
        n => format!("none of the {n} smallest listed files ({smallest} first) matches its line under {options}"),
    };
    format!(": untagged {digits}-digit digests, but {found}: give -a to check every file as one of them")
}

/// A name rule for `--update` (`XXH128SUMS`): the algorithm the list's
/// name gives an untagged list without `-a`.
pub(in crate::mode) fn named(list: &[u8]) -> Option<Algorithm> {
    match untagged_algorithm(list, None, &[]) {
        Reading::Named(algorithm) => Some(algorithm),
        _ => None,
    }
}

/// The listed files probed at most, smallest first.
const PROBES: usize = 8;

/// The [`PROBES`] listed files with the fewest bytes that open as regular
/// files (the safe open of `-c`'s list paths: never a FIFO waited on),
/// smallest first, the first of equals first.
fn smallest_readable(listed: &[(Vec<u8>, Digest)]) -> Vec<(&[u8], &Digest)> {
    let mut readable: Vec<(u64, &[u8], &Digest)> = listed
        .iter()
        .filter_map(|(name, digest)| {
            let file = fastsum::open_regular(&fastsum::name::path(name)).ok()?;
            let size = file.metadata().ok()?.len();
            Some((size, &name[..], digest))
        })
        .collect();
    readable.sort_by_key(|(size, ..)| *size);
    readable.truncate(PROBES);
    readable
        .into_iter()
        .map(|(_, name, digest)| (name, digest))
        .collect()
}

/// The algorithms whose untagged lines carry `digits`-digit digests, in
/// `Algorithm::ALL`'s order (MD5 first for 32), then `rhash --simple`'s
/// CRC-32 for 8 and BLAKE2b of that length: never cksum's and sum's
/// numbers nor digests of parts.
pub(in crate::mode) fn candidates(digits: usize) -> Vec<Algorithm> {
    let mut all: Vec<Algorithm> = Algorithm::ALL
        .into_iter()
        .filter(|a| {
            !matches!(a, Algorithm::Blake2b { .. })
                && !a.is_legacy()
                && a.part_layout().is_none()
                && 2 * a.output_len() == digits
        })
        .collect();
    if digits == 8 {
        all.push(Algorithm::Crc32b);
    }
    if digits.is_multiple_of(2) && (2..=128).contains(&digits) {
        let output_len = (digits / 2) as u8;
        all.push(Algorithm::Blake2b { output_len });
    }
    all
}

/// `algorithms` as the `-a` a user would type: "md5, xxh128 or blake2b
/// -l 128".
pub(in crate::mode) fn as_options(algorithms: &[Algorithm]) -> String {
    let names: Vec<String> = algorithms
        .iter()
        .map(|a| match a {
            Algorithm::Blake2b { output_len: 64 } => "blake2b".to_string(),
            Algorithm::Blake2b { output_len } => {
                format!("blake2b -l {}", u32::from(*output_len) * 8)
            }
            a => a.name().to_string(),
        })
        .collect();
    match names.split_last() {
        None => "(no algorithm has that length)".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// `algorithm` as its tag says it, BLAKE2b with its length: `XXH128`,
/// `BLAKE2b-128`.
pub(in crate::mode) fn shown(algorithm: Algorithm) -> String {
    match algorithm {
        Algorithm::Blake2b { output_len } if output_len != 64 => {
            format!("BLAKE2b-{}", u32::from(output_len) * 8)
        }
        a => a.tag().to_string(),
    }
}

/// The algorithms of `among` under which the listed file `name` hashes to
/// `expected` (all of it, or the CRC a line writes alone), opened as `-c`
/// opens a list's path.
pub(in crate::mode) fn matching(
    hasher: &mut fastsum::FileHasher,
    name: &[u8],
    expected: &Digest,
    among: &[Algorithm],
) -> Vec<Algorithm> {
    let path = fastsum::name::path(name);
    among
        .iter()
        .copied()
        .filter(|a| {
            hasher
                .hash_listed(*a, &path)
                .is_ok_and(|d| d.as_bytes().starts_with(expected.as_bytes()))
        })
        .collect()
}

/// The length of the hex digest an untagged line (`HEX  NAME` or
/// `HEX *NAME`, optionally `\`-escaped) starts with, if it is one.
pub(in crate::mode) fn untagged_digest_len(line: &[u8]) -> Option<usize> {
    let line = line.strip_prefix(b"\\").unwrap_or(line);
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let rest = &line[digits..];
    (digits >= 8 && (rest.starts_with(b"  ") || rest.starts_with(b" *"))).then_some(digits)
}

/// The untagged `digits`-digit entries (name, digest) of the first lines
/// of `reader` (up to [`PROBE_LINES`] or [`PROBE_BYTES`]), which are put
/// back to be read again: a list on standard input is probed too.
pub(in crate::mode) fn read_ahead(
    reader: &mut BufReader<Box<dyn Read>>,
    terminator: u8,
    digits: usize,
) -> io::Result<Vec<(Vec<u8>, Digest)>> {
    let Some(&first) = candidates(digits).first() else {
        return Ok(Vec::new());
    };
    let mut parser = CheckParser::new(TagPolicy::Any(first));
    let (mut prefix, mut listed, mut lines) = (Vec::new(), Vec::new(), 0);
    let mut line = Vec::new();
    while lines < PROBE_LINES && prefix.len() < PROBE_BYTES {
        let start = prefix.len();
        if fastsum::manifest::lines::read_line(reader, terminator, &mut line)? == 0 {
            break;
        }
        // The line is held once: moved, not copied, when it is the first.
        match prefix.is_empty() {
            true => std::mem::swap(&mut prefix, &mut line),
            false => prefix.extend_from_slice(&line),
        }
        lines += 1;
        let line = crate::mode::check::list::trimmed(&prefix[start..], terminator);
        if line.first().is_none_or(|&b| b == b'#') || untagged_digest_len(line) != Some(digits) {
            continue;
        }
        if let Some(parsed) = parser.parse(line).filter(|l| *l.name != *b"-") {
            listed.push((parsed.name.into_owned(), parsed.expected));
        }
    }
    let rest = std::mem::replace(reader, BufReader::new(Box::new(io::empty())));
    let again: Box<dyn Read> = Box::new(crate::mode::check::replay::Replay::new(
        0, terminator, prefix, rest,
    ));
    *reader = BufReader::with_capacity(64 * 1024, again);
    Ok(listed)
}

/// Files of an untagged list checked against the algorithm its digests'
/// length suggests, at most.
const GUESS_CHECKS: usize = 8;

/// `--update` of an untagged list without `-a` has its algorithm guessed
/// from its digests' length (32 hex digits: MD5, though XXH128 and
/// BLAKE2b-128 write them too; 40: SHA-1 or BLAKE2b-160). A file that
/// hashes to its line under another algorithm of that length, and not
/// under the guess, shows the guess wrong, whatever its age; a file older
/// than the list cannot have changed since the list was written, so one
/// that matches no algorithm shows it wrong too unless another file
/// matches it. Rewriting the list in a wrong guess would replace every
/// line: refused, with the algorithms that do match, and nothing changed.
/// Only files older than the list were looked at once, so a
/// list whose files were all touched since (restored from a backup,
/// copied, checked out) was turned from XXH128 into MD5, every file said
/// modified, exit 0. Unlike `-c`, the update does not take what matches
/// on its own: a list rewritten under an algorithm a forged file chose
/// would be lost.
pub(in crate::mode) fn confirm_guess(list: &Path, old: &Manifest) -> Result<(), String> {
    let Ok(written) = std::fs::metadata(list).and_then(|m| m.modified()) else {
        return Ok(());
    };
    let guess = old.algorithm;
    let mut hasher = fastsum::FileHasher::new();
    let files = old.entries.iter().filter_map(|entry| {
        let path = fastsum::name::path(&entry.path).into_owned();
        let file = fastsum::open_regular(&path).ok()?;
        let modified = file.metadata().and_then(|m| m.modified()).ok()?;
        Some((entry, modified < written))
    });
    let others: Vec<Algorithm> = candidates(2 * guess.output_len())
        .into_iter()
        .filter(|a| *a != guess)
        .collect();
    // A file older than the list that matches no algorithm was changed
    // since (a same-size edit, its mtime put back), which
    // --update is for; the guess is wrong when another algorithm matches,
    // or when no file at all matches it.
    let (mut confirmed, mut unmatched) = (false, None);
    for (entry, older) in files.take(GUESS_CHECKS) {
        if !matching(&mut hasher, &entry.path, &entry.digest, &[guess]).is_empty() {
            confirmed = true;
            continue;
        }
        let matched = matching(&mut hasher, &entry.path, &entry.digest, &others);
        let names: Vec<String> = matched.iter().map(|a| a.to_string()).collect();
        let said = match names.is_empty() {
            true => "no other algorithm of that length matches either".to_string(),
            false => format!("{} matches", names.join(", ")),
        };
        let age = match older {
            true => " (older than the list)",
            false => "",
        };
        let why = format!(
            "its untagged digests were taken for {guess}, but {}{age} does not hash to its line in {guess} ({said}): give -a; nothing was changed",
            crate::term::named(&entry.path)
        );
        match (matched.is_empty(), older) {
            (false, _) => return Err(why),
            (true, true) => unmatched = unmatched.or(Some(why)),
            (true, false) => {} // changed since the list: no evidence
        }
    }
    match (confirmed, unmatched) {
        (false, Some(why)) => Err(why),
        // No listed file hashes to its line under the guess (each changed
        // since the list, or is gone): nothing tells the guess from the
        // other algorithms of that length, and rewriting the list under
        // a wrong one would lose it, exit 0.
        (false, None) if !old.entries.is_empty() && !others.is_empty() => {
            let mut all = vec![guess];
            all.extend(others);
            Err(format!(
                "its untagged digests could be {}, and no listed file hashes to its line under {guess} (each was changed since the list or cannot be read), so nothing tells which: give -a; nothing was changed",
                as_options(&all)
            ))
        }
        _ => Ok(()),
    }
}
