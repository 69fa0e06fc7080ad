//! fastsum's own `-c` of lists that are not GNU/BSD lines: the format told
//! from the list's first entry line (or `--format`), its entries read by
//! the library (`fastsum::manifest::list`) and checked as check lines are,
//! every digest an entry carries and its size included: a file matches
//! only when all of them do.

use std::io::{self, BufRead, BufReader, Read};

use fastsum::manifest::list::{ListFormat, ListLine, ListReader};
use fastsum::{Algorithm, Digest, ErrorKind};

use crate::mode::check::digests::{prefetch_digests, report_hashed, CheckItem};
use crate::mode::check::verdict::{self, Tally, Verdict};
use crate::mode::hash::{digest_named, Hashed};
use crate::mode::options::Options;
use crate::mode::run::Run;

/// A list read entry by entry.
pub(in crate::mode) struct Entries {
    reader: ListReader<BufReader<Box<dyn Read>>>,
    format: ListFormat,
    /// Prefixed to relative paths (a Release file's directory).
    base: Vec<u8>,
    /// Directory digests left unchecked (no `-c --dirs`).
    pub(in crate::mode) directories_skipped: u64,
}

/// A list read up to its first entry line (neither blank nor a `#`
/// comment), to be read again from the start by whatever reads the list.
pub(in crate::mode) struct ReadAhead {
    /// The lines before it, all skipped by every reader: counted, not
    /// held.
    pub(in crate::mode) skipped: u64,
    /// The first entry line as read (with its end), or nothing.
    pub(in crate::mode) line: Vec<u8>,
    /// What the format is told by: the line without its end, or, for a
    /// line over [`EXCERPT`] bytes twice, its first and last [`EXCERPT`]
    /// bytes (every format is told by a line's start or end; a 200 MB
    /// first line is not held twice).
    pub(in crate::mode) first: Option<Vec<u8>>,
}

/// See [`ReadAhead::first`].
const EXCERPT: usize = 64 * 1024;

/// Reads `reader` up to and including its first entry line.
pub(in crate::mode) fn first_entry(
    reader: &mut impl BufRead,
    terminator: u8,
) -> io::Result<ReadAhead> {
    let mut line = Vec::new();
    let mut skipped = 0;
    loop {
        if fastsum::manifest::lines::read_line(reader, terminator, &mut line)? == 0 {
            return Ok(ReadAhead {
                skipped,
                line: Vec::new(),
                first: None,
            });
        }
        let trimmed = trimmed(&line, terminator);
        if !trimmed.is_empty() && trimmed[0] != b'#' {
            let first = match trimmed.len() > 2 * EXCERPT {
                true => [&trimmed[..EXCERPT], &trimmed[trimmed.len() - EXCERPT..]].concat(),
                false => trimmed.to_vec(),
            };
            return Ok(ReadAhead {
                skipped,
                line,
                first: Some(first),
            });
        }
        skipped += 1;
    }
}

impl Entries {
    pub(in crate::mode) fn new(
        reader: Box<dyn Read>,
        format: ListFormat,
        checkfile: &[u8],
    ) -> Entries {
        let base = match checkfile.iter().rposition(|&b| b == b'/') {
            Some(slash) if format.paths_relative_to_list() && checkfile != b"-" => {
                checkfile[..=slash].to_vec()
            }
            _ => Vec::new(),
        };
        Entries {
            reader: ListReader::new(BufReader::with_capacity(64 * 1024, reader), format),
            base,
            format,
            directories_skipped: 0,
        }
    }

    /// Why no entry was checked.
    pub(in crate::mode) fn explain_none(&self) -> String {
        let format = self.format;
        match format {
            ListFormat::Release => format!(
                "read as {}: no checksum section (MD5Sum:, SHA1:, SHA256:, SHA512:) lists a file",
                format.describe()
            ),
            _ => format!(
                "read as {}: none of its entries could be read",
                format.describe()
            ),
        }
    }

    /// The next chunk of entries as check items; `Err` if the list could
    /// not be read; an empty chunk at its end.
    pub(in crate::mode) fn next_chunk(
        &mut self,
        o: &Options,
        most: usize,
    ) -> Result<Vec<CheckItem>, String> {
        let mut items = Vec::new();
        while items.len() < most {
            let Some((number, line)) = self.reader.next_line()? else {
                break;
            };
            let mut entry = match line {
                ListLine::Nothing => continue,
                ListLine::Problem(why) => {
                    items.push(CheckItem::Problem(number, why));
                    continue;
                }
                ListLine::Refused(why) => {
                    items.push(CheckItem::Refused(number, why));
                    continue;
                }
                ListLine::Entry(entry) => entry,
            };
            if entry.directory && !o.tree.walk.directories {
                self.directories_skipped += 1;
                continue;
            }
            if !self.base.is_empty() && !entry.path.starts_with(b"/") {
                let mut path = self.base.clone();
                path.append(&mut entry.path);
                entry.path = path;
            }
            if self.format.paths_relative_to_list() {
                if let Some(why) = leaves_through_a_link(&self.base, &entry.path) {
                    items.push(CheckItem::Refused(number, why));
                    continue;
                }
            }
            let mut digests = entry.digests.into_iter();
            let Some((algorithm, expected)) = digests.next() else {
                continue;
            };
            items.push(CheckItem::Entry {
                name: entry.path,
                algorithm,
                expected,
                matchable: true,
                also: digests.collect(),
                size: entry.size,
            });
        }
        Ok(items)
    }
}

/// Why `path` (a list's entry, joined to the list's directory `base`)
/// leaves that directory through a symbolic link (`repo/link -> ../out`:
/// `link/s` was read outside the archive, OK, where `../out/s` is
/// refused): its real path (or its directory's, where it is not there)
/// is not below `base`'s. `None` when it stays below, or when neither is
/// there (nothing to read). Checked before the file is opened: a link
/// made in between is not seen (the open is the one safe open's).
fn leaves_through_a_link(base: &[u8], path: &[u8]) -> Option<String> {
    let path = fastsum::name::path(path);
    let base = match base.is_empty() {
        true => std::path::PathBuf::from("."),
        false => fastsum::name::path(base).into_owned(),
    };
    // The file's own real path (a link itself), or its directory's.
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let real = path
        .canonicalize()
        .ok()
        .or_else(|| dir.and_then(|d| d.canonicalize().ok()))?;
    if real.starts_with(base.canonicalize().ok()?) {
        return None;
    }
    Some(format!(
        "{}: refused: outside the list's directory (through a symbolic link)",
        crate::term::named_path(&path)
    ))
}

/// The digests of the entries' further algorithms (`also`), through the
/// pipeline as the first ones: `[k][i]` is item `i`'s `k`-th further one.
pub(in crate::mode) fn prefetch_also(
    run: &mut Run,
    o: &Options,
    items: &[CheckItem],
) -> Vec<Vec<Option<Result<Digest, ErrorKind>>>> {
    let most = items
        .iter()
        .map(|item| match item {
            CheckItem::Entry { also, .. } => also.len(),
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    (0..most)
        .map(|k| {
            let column: Vec<CheckItem> = items
                .iter()
                .map(|item| match item {
                    CheckItem::Entry { name, also, .. } if k < also.len() => CheckItem::Entry {
                        name: name.clone(),
                        algorithm: also[k].0,
                        expected: also[k].1,
                        matchable: true,
                        also: Vec::new(),
                        size: None,
                    },
                    _ => CheckItem::Problem(0, String::new()),
                })
                .collect();
            prefetch_digests(run, o, &column)
        })
        .collect()
}

/// After the first digest matched: the verdict of the entry's size and
/// its further digests (`prefetched[k]`, or hashed here), each mismatch
/// said on stderr (not with `--status`).
pub(in crate::mode) fn verdict_of_the_rest(
    run: &mut Run,
    o: &Options,
    name: &[u8],
    (also, size): (&[(Algorithm, Digest)], Option<u64>),
    mut prefetched: Vec<Option<Result<Digest, ErrorKind>>>,
) -> Verdict {
    if let Some(size) = size {
        let actual = std::fs::metadata(&*fastsum::name::path(name)).map(|m| m.len());
        match actual {
            Ok(actual) if actual != size => {
                if !o.status_only {
                    run.file_error(name, &format!("{actual} bytes, {size} listed"));
                }
                return Verdict::Failed;
            }
            _ => {}
        }
    }
    let mut verdict = Verdict::Ok;
    for (k, (algorithm, expected)) in also.iter().enumerate() {
        let hashed = match prefetched.get_mut(k).and_then(Option::take) {
            Some(result) => report_hashed(run, name, result, o.ignore_missing),
            None => digest_named(run, *algorithm, name, o.ignore_missing),
        };
        match hashed {
            Hashed::Digest(actual) if actual.as_bytes().starts_with(expected.as_bytes()) => {}
            Hashed::Digest(_) => {
                if !o.status_only {
                    run.file_error(name, &format!("its {algorithm} digest does not match"));
                }
                verdict = Verdict::Failed;
            }
            Hashed::Missing | Hashed::Failed(_) => return Verdict::Unreadable,
        }
    }
    verdict
}

/// `--debug`/`-v`: which format a list was read as.
pub(in crate::mode) fn say_format(
    run: &mut Run,
    o: &Options,
    display_name: &[u8],
    format: ListFormat,
) {
    if o.debug || o.verbose {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(format!(": read as {}", format.describe()).as_bytes());
        if format == ListFormat::Release {
            m.extend_from_slice(b" (its signature is not verified)");
        }
        run.error(&m);
    }
}

/// An entry of a list in another format than lines that could not be
/// read: counted as misformatted, and said with why.
pub(in crate::mode) fn report_problem(
    run: &mut Run,
    o: &Options,
    display_name: &[u8],
    tally: &mut Tally,
    (number, why): (u64, &str),
) {
    tally.misformatted += 1;
    if o.json && !o.status_only {
        verdict::misformatted(run.out.stdout_buf(), display_name, number);
        run.out.commit();
    }
    // The first few said with why, all of them with -w: a file that is no
    // list at all, forced with --format, does not print a line per line.
    if tally.misformatted <= PROBLEMS_SAID || o.warn {
        let mut m = run.quoting.quotef(display_name);
        m.extend_from_slice(format!(": {number}: {why}").as_bytes());
        run.error(&m);
    }
}

/// An entry the list may not name: counted (the list fails), said with
/// why whatever `-w` says, and a `"refused"` record with `--json`.
pub(in crate::mode) fn report_refused(
    run: &mut Run,
    o: &Options,
    display_name: &[u8],
    tally: &mut Tally,
    (number, why): (u64, &str),
) {
    tally.refused += 1;
    if o.json && !o.status_only {
        verdict::refused(run.out.stdout_buf(), display_name, number);
        run.out.commit();
    }
    let mut m = run.quoting.quotef(display_name);
    m.extend_from_slice(format!(": {number}: {why}").as_bytes());
    run.error(&m);
}

/// Unreadable entries of a list said with why before `-w` is needed.
const PROBLEMS_SAID: u64 = 10;

/// A line holding only a digest, in a list named for one file (`file`):
/// the line that names that file (`HEX  FILE`).
pub(in crate::mode) fn lone_line(file: Option<&[u8]>, line: &[u8]) -> Option<Vec<u8>> {
    let file = file?;
    if line.is_empty() || !line.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut named = line.to_vec();
    named.extend_from_slice(b"  ");
    named.extend_from_slice(file);
    Some(named)
}

/// A list's line without its terminator, nor the CR before a newline.
pub(in crate::mode) fn trimmed(line: &[u8], terminator: u8) -> &[u8] {
    let line = line.strip_suffix(&[terminator]).unwrap_or(line);
    match terminator {
        b'\n' => line.strip_suffix(b"\r").unwrap_or(line),
        _ => line,
    }
}
