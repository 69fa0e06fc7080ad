//! A checksum list as `-c` reads it: opened, its format told from its
//! first entry line, an untagged list's algorithm probed, then its lines
//! parsed a chunk at a time (or its entries read by the library).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use fastsum::manifest::gnu as gnu_lines;
use fastsum::manifest::list::ListFormat;

use crate::mode::check::digests::CheckItem;
use crate::mode::check::guess::{self, Reading};
use crate::mode::check::list::{self, Entries};
use crate::mode::check::replay::Replay;
use crate::mode::check::signed;
use crate::mode::options::Options;
use crate::mode::run::Run;

/// Lines of a check list read (and their files hashed together) at once.
pub(in crate::mode) const CHECK_CHUNK_LINES: usize = 4096;

/// One checksum list, read a chunk of lines at a time.
pub(in crate::mode) struct List {
    pub(in crate::mode) reader: BufReader<Box<dyn Read>>,
    /// fastsum's own mode, a list in another format than lines: read by
    /// the library entry by entry (then `reader` is not read).
    pub(in crate::mode) entries: Option<Entries>,
    /// fastsum's own mode: its first entry line, to say what did not fit.
    pub(in crate::mode) first: Option<Vec<u8>>,
    /// Lines end here: NUL with fastsum's `-c -z`.
    pub(in crate::mode) terminator: u8,
    /// fastsum's own mode, a list named for one file (`x.iso.sha256`):
    /// that file, which a line holding only a digest names.
    pub(in crate::mode) lone_file: Option<Vec<u8>>,
    pub(in crate::mode) is_stdin: bool,
    pub(in crate::mode) line: Vec<u8>,
    pub(in crate::mode) line_number: u64,
    /// fastsum's own mode: the digest length of the first misformatted
    /// line that looks like an untagged line of another algorithm, for a hint.
    pub(in crate::mode) other_length: Option<usize>,
    pub(in crate::mode) at_end: bool,
    pub(in crate::mode) read_failed: bool,
    /// Why the read failed, where it is not an I/O error md5sum would
    /// call a read error: a line more than memory holds.
    pub(in crate::mode) read_why: Option<String>,
    /// fastsum's own mode, a list read from a file: the open file and its
    /// stamp when opened. A list another writer truncated, extended or
    /// rewrote while it was read was checked only in part (or as two
    /// versions): see [`List::changed_while_read`].
    opened: Option<(File, fastsum::FileStamp)>,
}

impl List {
    /// The list at `checkfile` (`-`: standard input); `None` (said) if it
    /// cannot be opened. In fastsum's own mode its format is told from its
    /// first entry line (or `--format`): lines, or entries.
    pub(in crate::mode) fn open(run: &mut Run, o: &Options, checkfile: &[u8]) -> Option<List> {
        let is_stdin = checkfile == b"-";
        let signed = run.tool.policy().own_lists && o.signing.wanted();
        let mut opened = None;
        let reader: Box<dyn Read> = if signed {
            Box::new(io::Cursor::new(signed::verified_list(run, o, checkfile)?))
        } else if is_stdin {
            Box::new(io::stdin())
        } else {
            match File::open(&*fastsum::name::path(checkfile)) {
                Ok(f) => {
                    if run.tool.policy().own_lists {
                        opened = stamp_of(&f).and_then(|s| Some((f.try_clone().ok()?, s)));
                    }
                    Box::new(f)
                }
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
            read_why: None,
            opened,
        };
        if run.tool.policy().own_lists {
            list.terminator = o.terminator;
            let lone = fastsum::manifest::list::names::file_of_list_name(checkfile);
            list.lone_file = lone.filter(|f| !f.contains(&b'\\')).map(<[u8]>::to_vec);
            list.tell_format(run, o, checkfile);
        }
        Some(list)
    }

    /// Whether the list file changed since it was opened (its size, mtime
    /// or ctime moved): then what was checked may be part of it,
    /// or lines of two versions, and a run that found every line it read
    /// matching must not say so with exit 0. A regular file only: a FIFO's
    /// or a device's stamp says nothing of its bytes.
    pub(in crate::mode) fn changed_while_read(&self) -> bool {
        self.opened
            .as_ref()
            .is_some_and(|(file, then)| stamp_of(file).as_ref() != Some(then))
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
        let ahead = match list::first_entry(&mut reader, self.terminator) {
            Ok(read) => read,
            Err(e) => {
                self.failed(&e);
                return;
            }
        };
        let first = ahead.first;
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
        list::say_format(run, o, display_name, format);
        self.first = first;
        let again = Replay::new(ahead.skipped, self.terminator, ahead.line, reader);
        let again: Box<dyn Read> = Box::new(again);
        match format {
            ListFormat::Lines => self.reader = BufReader::with_capacity(64 * 1024, again),
            _ => self.entries = Some(Entries::new(again, format, checkfile)),
        }
    }

    /// The list could not be read on, for `e`.
    fn failed(&mut self, e: &io::Error) {
        self.read_failed = true;
        if e.kind() == io::ErrorKind::OutOfMemory {
            self.read_why = Some(e.to_string());
        }
    }

    /// fastsum's own reading of an untagged list without `-a`
    /// ([`guess::untagged_algorithm`]), said unless it is the run's own;
    /// `None`: the run's parser reads it. `Err`: the probed file matched
    /// under no candidate, said; the list is not checked.
    pub(in crate::mode) fn untagged_parser(
        &mut self,
        run: &mut Run,
        o: &Options,
        (checkfile, display_name): (&[u8], &[u8]),
    ) -> Result<Option<gnu_lines::CheckParser>, ()> {
        let own = run.tool.policy().own_lists && !o.algorithms.specified();
        if !own || self.entries.is_some() || self.read_failed {
            return Ok(None);
        }
        let digits = self.first.as_deref().and_then(guess::untagged_digest_len);
        let listed = match digits {
            Some(digits) => guess::read_ahead(&mut self.reader, self.terminator, digits),
            None => Ok(Vec::new()),
        };
        let listed = match listed {
            Ok(listed) => listed,
            Err(e) => {
                self.failed(&e);
                return Ok(None);
            }
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
    pub(in crate::mode) fn next_chunk(
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
            // A long line's buffer is not kept for the lines after it: its
            // entry owns the name now.
            if self.line.capacity() > 1 << 20 {
                self.line = Vec::new();
            }
            self.line_number += 1;
            match fastsum::manifest::lines::read_line(
                &mut self.reader,
                self.terminator,
                &mut self.line,
            ) {
                Ok(0) => {
                    self.at_end = true;
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    self.failed(&e);
                    break;
                }
            }
            let line = list::trimmed(&self.line, self.terminator);
            if line.first().is_none_or(|&b| b == b'#') {
                continue;
            }
            let len = line.len();
            let lone = list::lone_line(self.lone_file.as_deref(), &line[..len]);
            let line = lone.as_deref().unwrap_or(&line[..len]);
            let len = line.len();
            let parsed = parser
                .parse(line)
                .filter(|l| !(self.is_stdin && l.name.as_ref() == b"-"));
            if parsed.is_none() && self.other_length.is_none() && run.tool.policy().own_lists {
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

/// The stamp of an open regular file (`None` for anything else).
fn stamp_of(file: &File) -> Option<fastsum::FileStamp> {
    file.metadata()
        .ok()
        .filter(|m| m.file_type().is_file())
        .map(|m| fastsum::FileStamp::of(&m))
}
