//! Check mode (`-c`): lists read a chunk at a time, their files hashed
//! together (`check_hash`; directories' lines: `check_dirs`), each line
//! reported as coreutils reports it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use fastsum::manifest::gnu as gnu_lines;
use fastsum::{Algorithm, ErrorKind};

use super::check_dirs;
use super::check_hash::{prefetch_digests, report_hashed, CheckItem};
use super::hash::{digest_named, Hashed};
use super::options::Options;
use super::run::Run;
use super::verdict::{self, Tally, Verdict};
use crate::personality::ToolKind;

/// coreutils' `digest_check`: verifies every line of one checksum file.
/// Lines of a check list read (and their files hashed together) at once.
pub(super) const CHECK_CHUNK_LINES: usize = 4096;

/// One checksum list, read a chunk of lines at a time.
struct List {
    reader: BufReader<Box<dyn Read>>,
    is_stdin: bool,
    line: Vec<u8>,
    line_number: u64,
    /// fastsum's own mode: the digest length of the first misformatted
    /// line that looks like an untagged line of another algorithm, for a hint.
    other_length: Option<usize>,
    at_end: bool,
    read_failed: bool,
}

/// `-c LIST`: every line of the list checked and said as coreutils says
/// it, then its warnings; true when everything listed matched.
/// The reading of check lines for this run: coreutils keeps its state
/// from list to list, and so does the parser.
pub(super) fn parser(run: &Run, o: &Options) -> gnu_lines::CheckParser {
    let policy = match (run.tool.kind, o.family) {
        (ToolKind::Fastsum, _) => gnu_lines::TagPolicy::Any(o.tree.algorithm),
        (ToolKind::Cksum, None) => gnu_lines::TagPolicy::CoreutilsTagged,
        (ToolKind::Cksum, Some(family)) => gnu_lines::TagPolicy::Cksum(family),
        _ => gnu_lines::TagPolicy::Only(o.tree.algorithm),
    };
    gnu_lines::CheckParser::new(policy)
}

pub(super) fn check_file(
    run: &mut Run,
    o: &Options,
    parser: &mut gnu_lines::CheckParser,
    checkfile: &[u8],
) -> bool {
    let is_stdin = checkfile == b"-";
    let display_name: &[u8] = if is_stdin {
        b"standard input"
    } else {
        checkfile
    };
    let Some(mut list) = List::open(run, checkfile) else {
        return false;
    };
    let mut tally = Tally::default();
    let mut made = check_dirs::Made::default();
    // The list is read a chunk of lines at a time; the chunk's files are
    // hashed together through the pipeline (every core, multi-buffer MD5),
    // then its lines are reported in order exactly as one at a time.
    while !list.at_end && !list.read_failed {
        let items = list.next_chunk(run, parser);
        let mut prefetched = prefetch_digests(run, o, &items);
        check_dirs::fill(run, o, &items, &mut prefetched, &mut made);
        for (index, item) in items.into_iter().enumerate() {
            report_item(
                run,
                o,
                item,
                prefetched[index].take(),
                display_name,
                &mut tally,
            );
        }
    }
    if list.read_failed {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(b": read error");
        run.error(&m);
        return false;
    }
    summarize(run, o, display_name, &tally, list.other_length);
    tally.any_properly_formatted
        && tally.any_matched
        && tally.mismatched == 0
        && tally.unreadable == 0
        && (!o.strict || tally.misformatted == 0)
}

impl List {
    /// The list at `checkfile` (`-`: standard input); `None` (said) if it
    /// cannot be opened.
    fn open(run: &mut Run, checkfile: &[u8]) -> Option<List> {
        let is_stdin = checkfile == b"-";
        let reader: Box<dyn Read> = if is_stdin {
            Box::new(io::stdin())
        } else {
            match File::open(&*fastsum::name::path(checkfile)) {
                Ok(f) => Box::new(f),
                Err(e) => {
                    run.file_error(checkfile, &fastsum::Error::os_message(&e));
                    return None;
                }
            }
        };
        Some(List {
            reader: BufReader::with_capacity(64 * 1024, reader),
            is_stdin,
            line: Vec::new(),
            line_number: 0,
            other_length: None,
            at_end: false,
            read_failed: false,
        })
    }

    /// The next chunk of lines, parsed (comments and empty lines skipped).
    fn next_chunk(&mut self, run: &Run, parser: &mut gnu_lines::CheckParser) -> Vec<CheckItem> {
        let mut items: Vec<CheckItem> = Vec::new();
        while items.len() < CHECK_CHUNK_LINES {
            self.line.clear();
            self.line_number += 1;
            match self.reader.read_until(b'\n', &mut self.line) {
                Ok(0) => {
                    self.at_end = true;
                    break;
                }
                Ok(_) => {}
                Err(_) => {
                    self.read_failed = true;
                    break;
                }
            }
            let line = &self.line;
            if line[0] == b'#' {
                continue;
            }
            let mut len = line.len();
            if line[len - 1] == b'\n' {
                len -= 1;
            }
            if len > 0 && line[len - 1] == b'\r' {
                len -= 1;
            }
            if len == 0 {
                continue;
            }
            let parsed = parser
                .parse(&line[..len])
                .filter(|l| !(self.is_stdin && l.name.as_ref() == b"-"));
            if parsed.is_none() && self.other_length.is_none() && run.tool.kind == ToolKind::Fastsum
            {
                self.other_length = untagged_digest_len(&line[..len]);
            }
            items.push(match parsed {
                // The tag coreutils names (cksum -c: the last line's).
                None => CheckItem::Misformatted(self.line_number, parser.type_string()),
                Some(entry) => CheckItem::Entry {
                    name: entry.name.into_owned(),
                    algorithm: entry.algorithm,
                    expected: entry.expected,
                    matchable: entry.matchable,
                },
            });
        }
        items
    }
}

/// One line's verdict: hashed (or its digest taken from the chunk's
/// prefetch), compared, counted and said.
fn report_item(
    run: &mut Run,
    o: &Options,
    item: CheckItem,
    prefetched: Option<Result<fastsum::Digest, ErrorKind>>,
    display_name: &[u8],
    tally: &mut Tally,
) {
    let (name, algorithm, expected) = match item {
        CheckItem::Misformatted(number, named) => {
            tally.misformatted += 1;
            if o.json && !o.status_only {
                verdict::misformatted(run.out.stdout_buf(), display_name, number);
                run.out.commit();
            }
            if o.warn {
                let mut m = run.quoting.quotef(display_name);
                m.extend_from_slice(
                    format!(": {number}: improperly formatted {named} checksum line").as_bytes(),
                );
                run.error(&m);
            }
            return;
        }
        CheckItem::Entry {
            name,
            algorithm,
            expected,
            matchable,
        } => (name, algorithm, (expected, matchable)),
    };
    tally.any_properly_formatted = true;
    let hashed = match prefetched {
        Some(result) => report_hashed(run, &name, result, o.ignore_missing),
        None => digest_named(run, algorithm, &name, o.ignore_missing),
    };
    let verdict = match &hashed {
        Hashed::Failed(_) => Verdict::Unreadable,
        Hashed::Missing => Verdict::Missing,
        Hashed::Digest(actual)
            if expected.1 && actual.as_bytes().starts_with(expected.0.as_bytes()) =>
        {
            Verdict::Ok
        }
        Hashed::Digest(_) => Verdict::Failed,
    };
    tally.count(verdict);
    if o.json {
        if !o.status_only {
            let actual = match &hashed {
                Hashed::Digest(actual) => Some(actual),
                _ => None,
            };
            let why = match &hashed {
                Hashed::Failed(why) => Some(why.as_str()),
                _ => None,
            };
            let line = (&name[..], algorithm, &expected.0, actual);
            verdict::verdict(run.out.stdout_buf(), line, verdict, why);
            run.out.commit();
        }
        return;
    }
    verdict::say(run, o, &name, verdict);
}

/// After a list: "no properly formatted lines" (with fastsum's hint of
/// the algorithm), or the WARNING counts and "no file was verified".
fn summarize(
    run: &mut Run,
    o: &Options,
    display_name: &[u8],
    tally: &Tally,
    other_length: Option<usize>,
) {
    if o.json && !o.status_only {
        verdict::summary(run.out.stdout_buf(), display_name, tally);
        run.out.commit();
    }
    if !tally.any_properly_formatted {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(b": no properly formatted checksum lines found");
        run.error(&m);
        if let Some(digits) = other_length {
            let mut m = run.quoting.quotef(display_name);
            m.extend_from_slice(
                format!(
                    ": its lines carry {digits}-digit digests with no algorithm tag: give -a {}",
                    algorithms_of_length(digits)
                )
                .as_bytes(),
            );
            run.error(&m);
        }
        return;
    }
    if o.status_only {
        return;
    }
    let warnings = [
        (
            tally.misformatted,
            "line is improperly formatted",
            "lines are improperly formatted",
        ),
        (
            tally.unreadable,
            "listed file could not be read",
            "listed files could not be read",
        ),
        (
            tally.mismatched,
            "computed checksum did NOT match",
            "computed checksums did NOT match",
        ),
    ];
    for (count, one, many) in warnings {
        if count != 0 {
            let text = if count == 1 { one } else { many };
            run.error(format!("WARNING: {count} {text}").as_bytes());
        }
    }
    if o.ignore_missing && !tally.any_matched {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(b": no file was verified");
        run.error(&m);
    }
}

/// The length of the hex digest an untagged line (`HEX  NAME` or
/// `HEX *NAME`, optionally `\`-escaped) starts with, if it is one.
fn untagged_digest_len(line: &[u8]) -> Option<usize> {
    let line = line.strip_prefix(b"\\").unwrap_or(line);
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let rest = &line[digits..];
    (digits >= 8 && (rest.starts_with(b"  ") || rest.starts_with(b" *"))).then_some(digits)
}

/// The `-a` values whose untagged lines have `digits`-digit digests, as a
/// user would type them ("sha256, blake3 or blake2b -l 256").
fn algorithms_of_length(digits: usize) -> String {
    let mut names: Vec<String> = Algorithm::ALL
        .iter()
        .filter(|a| {
            !matches!(a, Algorithm::Blake2b { .. })
                && !a.is_legacy()
                && 2 * a.output_len() == digits
        })
        .map(|a| a.name().to_string())
        .collect();
    if digits.is_multiple_of(2) && digits * 4 <= 512 && digits > 0 {
        names.push(if digits * 4 == 512 {
            "blake2b".to_string()
        } else {
            format!("blake2b -l {}", digits * 4)
        });
    }
    match names.split_last() {
        None => "(no algorithm has that length)".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}
