//! `xxhsum -c`: check lines read and verified as xxhsum 0.8.1 does, with
//! its messages, its summary on stdout, and its verdict.

use std::fs::File;
use std::io::{self, BufReader, Read};

use fastsum::manifest::xxhsum as manifest;

use super::options::Settings;
use super::Run;

/// xxhsum's longest accepted check line, `MAX_LINE_LENGTH` (32 KiB) less
/// the byte its buffer keeps for the terminating NUL.
const MAX_LINE: usize = 32 * 1024 - 1;

/// Every list named (standard input without names); the status.
pub(super) fn check_all(run: &mut Run, files: &[Vec<u8>], settings: &Settings) -> i32 {
    let mut ok = true;
    if files.is_empty() {
        ok &= check_file(run, None, settings);
    }
    for f in files {
        ok &= check_file(run, Some(f), settings);
    }
    i32::from(!ok)
}

/// What a list's lines came to.
#[derive(Default)]
struct Tally {
    proper: u64,
    improper: u64,
    mismatched: u64,
    unreadable: u64,
    /// A line too long ended the list.
    quit: bool,
}

/// Checks one list; whether it passed.
fn check_file(run: &mut Run, name: Option<&Vec<u8>>, settings: &Settings) -> bool {
    let shown: &[u8] = name.map_or(&b"stdin"[..], |n| n.as_slice());
    let reader: Box<dyn Read> = match name {
        None => Box::new(io::stdin()),
        Some(n) => match File::open(&*fastsum::name::path(n)) {
            Ok(f) => Box::new(f),
            Err(e) => {
                run.log(
                    [
                        b"Error: Could not open '",
                        shown,
                        format!("': {}\n", fastsum::Error::os_message(&e)).as_bytes(),
                    ]
                    .concat(),
                );
                return false;
            }
        },
    };
    let mut reader = BufReader::new(reader);
    let mut tally = Tally::default();
    let mut line = Vec::new();
    let mut line_number = 0u64;
    loop {
        line_number += 1;
        line.clear();
        // A read error reads as end of file to xxhsum's fgetc loop.
        let n = fastsum::manifest::lines::read_line(&mut reader, b'\n', &mut line).unwrap_or(0);
        if n == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.len() >= MAX_LINE {
            run.log(
                [
                    shown,
                    format!(":{line_number}: Error: Line too long.\n").as_bytes(),
                ]
                .concat(),
            );
            tally.quit = true;
            break;
        }
        check_line(run, shown, line_number, &line, settings, &mut tally);
    }
    summary(run, shown, &tally, settings.status_only);
    let Tally {
        proper,
        improper,
        mismatched,
        unreadable,
        quit,
    } = tally;
    proper != 0
        && mismatched == 0
        && unreadable == 0
        && (!settings.strict || improper == 0)
        && !quit
}

/// One check line: the file it names hashed and compared, its verdict
/// printed (`OK` only when not quiet), counted in `tally`.
fn check_line(
    run: &mut Run,
    shown: &[u8],
    line_number: u64,
    line: &[u8],
    settings: &Settings,
    tally: &mut Tally,
) {
    let Some(entry) = manifest::XxhLine::parse(line, settings.little_endian) else {
        tally.improper += 1;
        if settings.warn {
            run.log(
                [
                    shown,
                    format!(":{line_number}: Error: Improperly formatted checksum line.\n")
                        .as_bytes(),
                ]
                .concat(),
            );
        }
        return;
    };
    tally.proper += 1;
    let file_name = entry.name.to_vec();
    let actual = if file_name == b"stdin" {
        let stdin = io::stdin();
        let mut lock = stdin.lock();
        Ok(run.hash(entry.algorithm, &mut lock))
    } else {
        File::open(&*fastsum::name::path(&file_name)).map(|mut f| run.hash(entry.algorithm, &mut f))
    };
    let quiet = run.log_level < 2;
    match actual {
        Err(e) => {
            tally.unreadable += 1;
            if !settings.status_only {
                let m = [
                    shown,
                    format!(":{line_number}: Could not open or read '").as_bytes(),
                    &file_name,
                    format!("': {}.\n", fastsum::Error::os_message(&e)).as_bytes(),
                ]
                .concat();
                run.out.out(&m);
            }
        }
        Ok(digest) => {
            let ok = digest == entry.expected;
            if !ok {
                tally.mismatched += 1;
            }
            if (!ok || !quiet) && !settings.status_only {
                let buf = run.out.stdout_buf();
                buf.extend_from_slice(&file_name);
                buf.extend_from_slice(if ok { b": OK\n" } else { b": FAILED\n" });
                run.out.commit();
            }
        }
    }
}

/// The list's summary, as xxhsum prints it (on stdout, but for a list with
/// no proper line).
fn summary(run: &mut Run, shown: &[u8], tally: &Tally, status_only: bool) {
    if tally.proper == 0 {
        run.log(
            [
                shown,
                b": no properly formatted xxHash checksum lines found\n",
            ]
            .concat(),
        );
        return;
    }
    if status_only {
        return;
    }
    let counted = [
        (
            tally.improper,
            "line is",
            "lines are",
            "improperly formatted",
        ),
        (
            tally.unreadable,
            "listed file",
            "listed files",
            "could not be read",
        ),
        (
            tally.mismatched,
            "computed checksum",
            "computed checksums",
            "did NOT match",
        ),
    ];
    for (n, one, many, what) in counted {
        if n != 0 {
            let noun = if n == 1 { one } else { many };
            run.out.out(format!("{n} {noun} {what}\n").as_bytes());
        }
    }
}
