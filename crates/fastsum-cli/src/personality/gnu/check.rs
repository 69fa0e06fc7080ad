//! Check mode (`-c`): lists read a chunk at a time, their files hashed
//! together (`check_hash`; directories' lines: `check_dirs`), each line
//! reported as coreutils reports it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use fastsum::manifest::gnu as gnu_lines;
use fastsum::manifest::list::ListFormat;
use fastsum::ErrorKind;

use super::check_dirs;
use super::check_hash::{known_bytes, prefetch_digests, report_hashed, CheckItem};
use super::check_list::{self, Entries};
use super::guess::{self, Reading};
use super::hash::{digest_named, Hashed};
use super::options::Options;
use super::run::Run;
use super::signed;
use super::verdict::{self, Tally, Verdict};
use crate::personality::ToolKind;

/// coreutils' `digest_check`: verifies every line of one checksum file.
/// Lines of a check list read (and their files hashed together) at once.
pub(super) const CHECK_CHUNK_LINES: usize = 4096;

/// One checksum list, read a chunk of lines at a time.
struct List {
    reader: BufReader<Box<dyn Read>>,
    /// fastsum's own mode, a list in another format than lines: read by
    /// the library entry by entry (then `reader` is not read).
    entries: Option<Entries>,
    /// fastsum's own mode: its first entry line, to say what did not fit.
    first: Option<Vec<u8>>,
    /// Lines end here: NUL with fastsum's `-c -z`.
    terminator: u8,
    /// fastsum's own mode, a list named for one file (`x.iso.sha256`):
    /// that file, which a line holding only a digest names.
    lone_file: Option<Vec<u8>>,
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
    let policy = match (run.tool.kind, o.algorithms.family()) {
        (ToolKind::Fastsum, _) => gnu_lines::TagPolicy::Any(o.algorithms.one()),
        (ToolKind::Cksum, None) => gnu_lines::TagPolicy::CoreutilsTagged,
        (ToolKind::Cksum, Some(family)) => gnu_lines::TagPolicy::Cksum(family),
        _ => gnu_lines::TagPolicy::Only(o.algorithms.one()),
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
    let Some(mut list) = List::open(run, o, checkfile) else {
        return false;
    };
    let mut guessed = match list.untagged_parser(run, o, (checkfile, display_name)) {
        Ok(guessed) => guessed,
        Err(()) => return false,
    };
    let parser = guessed.as_mut().unwrap_or(parser);
    let mut tally = Tally::default();
    let mut made = check_dirs::Made::default();
    // The list is read a chunk of lines at a time; the chunk's files are
    // hashed together through the pipeline (every core, multi-buffer MD5),
    // then its lines are reported in order exactly as one at a time.
    let mut first = true;
    while !list.at_end && !list.read_failed {
        let items = list.next_chunk(run, o, parser);
        if let Some((counters, _)) = &run.progress {
            // Until the list's last chunk, the files found are no total
            // (it grew in 8,192-line steps): no fraction, no ETA. A list
            // read whole in its first chunk has its bytes known too.
            let more = !list.at_end && items.len() >= CHECK_CHUNK_LINES;
            counters
                .more_to_come
                .store(more, std::sync::atomic::Ordering::Release);
            if let (true, false, Some(bytes)) = (first, more, known_bytes(&items)) {
                counters.begin_stage("", None, Some(bytes));
            }
        }
        first = false;
        let mut prefetched = prefetch_digests(run, o, &items);
        let mut also = check_list::prefetch_also(run, o, &items);
        check_dirs::fill(run, o, &items, &mut prefetched, &mut made);
        for (index, item) in items.into_iter().enumerate() {
            let rest = also.iter_mut().map(|c| c[index].take()).collect();
            let hashed = (prefetched[index].take(), rest);
            report_item(run, o, item, hashed, display_name, &mut tally);
        }
    }
    if list.read_failed {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(b": read error");
        run.error(&m);
        return false;
    }
    summarize(run, o, display_name, &tally, &list);
    tally.any_properly_formatted
        && tally.any_matched
        && tally.mismatched == 0
        && tally.unreadable == 0
        && tally.refused == 0
        && (!o.strict || tally.misformatted == 0)
}

impl List {
    /// The list at `checkfile` (`-`: standard input); `None` (said) if it
    /// cannot be opened. In fastsum's own mode its format is told from its
    /// first entry line (or `--format`): lines, or entries.
    fn open(run: &mut Run, o: &Options, checkfile: &[u8]) -> Option<List> {
        let is_stdin = checkfile == b"-";
        let signed = run.tool.kind == ToolKind::Fastsum && o.signing.wanted();
        let reader: Box<dyn Read> = if signed {
            Box::new(io::Cursor::new(signed::verified_list(run, o, checkfile)?))
        } else if is_stdin {
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
        let mut list = List {
            reader: BufReader::with_capacity(64 * 1024, reader),
            entries: None,
            first: None,
            terminator: b'\n',
            lone_file: None,
            is_stdin,
            line: Vec::new(),
            line_number: 0,
            other_length: None,
            at_end: false,
            read_failed: false,
        };
        if run.tool.kind == ToolKind::Fastsum {
            list.terminator = o.terminator;
            let lone = fastsum::manifest::list::file_of_list_name(checkfile);
            list.lone_file = lone.filter(|f| !f.contains(&b'\\')).map(<[u8]>::to_vec);
            list.tell_format(run, o, checkfile);
        }
        Some(list)
    }

    /// Reads up to the first entry line to tell the list's format; its
    /// bytes are read again by the lines' or the entries' reader.
    fn tell_format(&mut self, run: &mut Run, o: &Options, checkfile: &[u8]) {
        let empty: Box<dyn Read> = Box::new(io::empty());
        let mut reader = std::mem::replace(&mut self.reader, BufReader::new(empty));
        // A NUL in its first block: a list written with -z, read as -c -z.
        if reader.fill_buf().is_ok_and(|head| head.contains(&0)) {
            self.terminator = 0;
        }
        let (prefix, first) = match check_list::first_entry(&mut reader, self.terminator) {
            Ok(read) => read,
            Err(_) => {
                self.read_failed = true;
                return;
            }
        };
        let format = match (o.check_format, &first) {
            (Some(format), _) => format,
            (None, Some(first)) => ListFormat::detect(first),
            (None, None) => ListFormat::Lines,
        };
        let display_name: &[u8] = if self.is_stdin {
            b"standard input"
        } else {
            checkfile
        };
        check_list::say_format(run, o, display_name, format);
        self.first = first;
        let again: Box<dyn Read> = Box::new(io::Cursor::new(prefix).chain(reader));
        match format {
            ListFormat::Lines => self.reader = BufReader::with_capacity(64 * 1024, again),
            _ => self.entries = Some(Entries::new(again, format, checkfile)),
        }
    }

    /// fastsum's own reading of an untagged list without `-a`
    /// ([`guess::untagged_algorithm`]), said unless it is the run's own;
    /// `None`: the run's parser reads it. `Err`: the probed file matched
    /// under no candidate, said; the list is not checked.
    fn untagged_parser(
        &mut self,
        run: &mut Run,
        o: &Options,
        (checkfile, display_name): (&[u8], &[u8]),
    ) -> Result<Option<gnu_lines::CheckParser>, ()> {
        let own = run.tool.kind == ToolKind::Fastsum && !o.algorithms.specified();
        if !own || self.entries.is_some() || self.read_failed {
            return Ok(None);
        }
        let digits = self.first.as_deref().and_then(guess::untagged_digest_len);
        let listed = match digits {
            Some(digits) => guess::read_ahead(&mut self.reader, self.terminator, digits),
            None => Ok(Vec::new()),
        };
        let Ok(listed) = listed else {
            self.read_failed = true;
            return Ok(None);
        };
        let default = o.algorithms.one();
        let digits_said = digits.unwrap_or(0);
        // What the guess found is said where it is not the run's reading
        // (MD5), and always when the probe could not tell.
        let (algorithm, why) = match guess::untagged_algorithm(checkfile, digits, &listed) {
            Reading::Named(a) => (a, None),
            Reading::Matched(a) if a == default => (a, None),
            Reading::Matched(a) => (a, Some("the smallest listed file matched".to_string())),
            Reading::Several(matched) => {
                let a = *matched
                    .iter()
                    .find(|a| **a == default)
                    .unwrap_or(&matched[0]);
                let alike: Vec<String> = matched.into_iter().map(guess::shown).collect();
                let alike = alike.join(" and ");
                (
                    a,
                    Some(format!("the smallest listed file matched {alike} alike")),
                )
            }
            Reading::Unprobed => return Ok(None),
            Reading::NoneMatched { candidates, probed } => {
                let (smallest, count) = probed;
                let name = String::from_utf8_lossy(&run.quoting.quotef(&smallest)).into_owned();
                let mut m = run.quoting.quotef(display_name);
                let why = guess::none_matched(digits_said, &candidates, &name, count);
                m.extend_from_slice(why.as_bytes());
                run.error(&m);
                return Err(());
            }
        };
        if let (Some(why), false) = (why, o.status_only) {
            let mut m = run.quoting.quotef(display_name);
            let shown = guess::shown(algorithm);
            m.extend_from_slice(
                format!(": untagged {digits_said}-digit digests read as {shown} ({why})")
                    .as_bytes(),
            );
            run.notice(&m);
        }
        let policy = gnu_lines::TagPolicy::Any(algorithm);
        Ok(Some(gnu_lines::CheckParser::new(policy)))
    }

    /// The next chunk of lines, parsed (comments and empty lines skipped).
    fn next_chunk(
        &mut self,
        run: &Run,
        o: &Options,
        parser: &mut gnu_lines::CheckParser,
    ) -> Vec<CheckItem> {
        if let Some(entries) = &mut self.entries {
            let chunk = entries.next_chunk(o, CHECK_CHUNK_LINES);
            self.read_failed = chunk.is_err();
            let items = chunk.unwrap_or_default();
            self.at_end = items.is_empty();
            return items;
        }
        let mut items: Vec<CheckItem> = Vec::new();
        while items.len() < CHECK_CHUNK_LINES {
            self.line.clear();
            self.line_number += 1;
            match self.reader.read_until(self.terminator, &mut self.line) {
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
            let line = check_list::trimmed(&self.line, self.terminator);
            if line.first().is_none_or(|&b| b == b'#') {
                continue;
            }
            let len = line.len();
            let lone = check_list::lone_line(self.lone_file.as_deref(), &line[..len]);
            let line = lone.as_deref().unwrap_or(&line[..len]);
            let len = line.len();
            let parsed = parser
                .parse(line)
                .filter(|l| !(self.is_stdin && l.name.as_ref() == b"-"));
            if parsed.is_none() && self.other_length.is_none() && run.tool.kind == ToolKind::Fastsum
            {
                self.other_length = guess::untagged_digest_len(&line[..len]);
            }
            items.push(match parsed {
                // The tag coreutils names (cksum -c: the last line's).
                None => CheckItem::Misformatted(self.line_number, parser.type_string()),
                Some(entry) => CheckItem::Entry {
                    name: entry.name.into_owned(),
                    algorithm: entry.algorithm,
                    expected: entry.expected,
                    matchable: entry.matchable,
                    also: Vec::new(),
                    size: None,
                },
            });
        }
        items
    }
}

/// A digest from the chunk's prefetch, or none (hashed in line).
type Prefetched = Option<Result<fastsum::Digest, ErrorKind>>;

/// One line's verdict: hashed (or its digest taken from the chunk's
/// prefetch: the first, and those of its further digests), compared,
/// counted and said.
fn report_item(
    run: &mut Run,
    o: &Options,
    item: CheckItem,
    (prefetched, rest): (Prefetched, Vec<Prefetched>),
    display_name: &[u8],
    tally: &mut Tally,
) {
    let (name, algorithm, expected, also, size) = match item {
        CheckItem::Problem(number, why) => {
            return check_list::report_problem(run, o, display_name, tally, (number, &why))
        }
        CheckItem::Refused(number, why) => {
            return check_list::report_refused(run, o, display_name, tally, (number, &why))
        }
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
            also,
            size,
        } => (name, algorithm, (expected, matchable), also, size),
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
            match also.is_empty() && size.is_none() {
                true => Verdict::Ok,
                false => check_list::verdict_of_the_rest(run, o, &name, (&also, size), rest),
            }
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
fn summarize(run: &mut Run, o: &Options, display_name: &[u8], tally: &Tally, list: &List) {
    if o.json && !o.status_only {
        verdict::summary(run.out.stdout_buf(), display_name, tally);
        run.out.commit();
    }
    if let Some(skipped) = list.entries.as_ref().map(|e| e.directories_skipped) {
        if skipped > 0 {
            let mut m = run.quoting.quotef(display_name);
            let what = crate::term::count(skipped, "directory digest", "directory digests");
            m.extend_from_slice(format!(": {what} not checked (-c --dirs checks them)").as_bytes());
            run.error(&m);
        }
    }
    if !tally.any_properly_formatted {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(b": no properly formatted checksum lines found");
        run.error(&m);
        let explain = match (&list.entries, &list.first) {
            (None, Some(first)) if list.other_length.is_none() => {
                Some(fastsum::manifest::list::explain(first))
            }
            (Some(entries), _) => Some(entries.explain_none()),
            _ => None,
        };
        if let Some(explain) = explain {
            let mut m = run.quoting.quotef(display_name);
            m.extend_from_slice(b": ");
            m.extend_from_slice(explain.as_bytes());
            run.error(&m);
        }
        if let Some(digits) = list.other_length {
            let mut m = run.quoting.quotef(display_name);
            m.extend_from_slice(
                format!(
                    ": its lines carry {digits}-digit digests with no algorithm tag: give -a {}",
                    guess::as_options(&guess::candidates(digits))
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
