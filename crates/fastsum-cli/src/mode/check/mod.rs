//! Check mode (`-c`): lists read a chunk at a time, their files hashed
//! together (`digests`; directories' lines: `dirs`), each line
//! reported as coreutils reports it.

pub(super) mod digests;
pub(super) mod dirs;
pub(super) mod guess;
pub(super) mod list;
pub(super) mod read;
pub(super) mod replay;
pub(super) mod signed;
pub(super) mod verdict;

use fastsum::manifest::gnu as gnu_lines;
use fastsum::ErrorKind;

use crate::mode::check::digests::{known_bytes, prefetch_digests, report_hashed, CheckItem};
use crate::mode::check::read::{List, CHECK_CHUNK_LINES};
use crate::mode::hash::{digest_named, Hashed};
use crate::mode::options::Options;
use crate::mode::run::Run;
use crate::personality::ToolKind;
use verdict::{Tally, Verdict};

/// The reading of check lines for this run: coreutils keeps its state
/// from list to list, and so does the parser.
pub(super) fn parser(run: &Run, o: &Options) -> gnu_lines::CheckParser {
    let policy = match (run.tool.kind, o.algorithms.family()) {
        _ if run.tool.policy().own_lists => gnu_lines::TagPolicy::Any(o.algorithms.one()),
        (ToolKind::Cksum, None) => gnu_lines::TagPolicy::CoreutilsTagged,
        (ToolKind::Cksum, Some(family)) => gnu_lines::TagPolicy::Cksum(family),
        _ => gnu_lines::TagPolicy::Only(o.algorithms.one()),
    };
    gnu_lines::CheckParser::new(policy)
}

/// `-c LIST` (coreutils' `digest_check`): every line of the list checked
/// and said as coreutils says it, then its warnings; true when everything
/// listed matched.
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
    let mut made = dirs::Made::default();
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
        let mut also = list::prefetch_also(run, o, &items);
        dirs::fill(run, o, &items, &mut prefetched, &mut made);
        for (index, item) in items.into_iter().enumerate() {
            let rest = also.iter_mut().map(|c| c[index].take()).collect();
            let hashed = (prefetched[index].take(), rest);
            report_item(run, o, item, hashed, display_name, &mut tally);
        }
    }
    if list.read_failed {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(b": ");
        let why = list.read_why.as_deref().unwrap_or("read error");
        m.extend_from_slice(why.as_bytes());
        run.error(&m);
        return false;
    }
    summarize(run, o, display_name, &tally, &list);
    if list.changed_while_read() {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(
            b": the list changed while it was read (another writer?): what was checked may be only part of it",
        );
        run.error(&m);
        return false;
    }
    tally.any_properly_formatted
        && tally.any_matched
        && tally.mismatched == 0
        && tally.unreadable == 0
        && tally.refused == 0
        && (!o.strict || tally.misformatted == 0)
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
            return list::report_problem(run, o, display_name, tally, (number, &why))
        }
        CheckItem::Refused(number, why) => {
            return list::report_refused(run, o, display_name, tally, (number, &why))
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
                false => list::verdict_of_the_rest(run, o, &name, (&also, size), rest),
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
                Some(fastsum::manifest::list::names::explain(first))
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
