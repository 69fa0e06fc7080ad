//! Every list `fastsum -c` reads, told from its content: GNU and BSD
//! lines (read by `super::gnu`, line by line, as the coreutils tools
//! read them), and the formats here, read whole entries at a time:
//!
//! * fastsum's `--json` records (one digest or several `"digests"`, with
//!   `--stamps` or `--dirs`), see docs/JSON.md;
//! * hashdeep's `%%%% HASHDEEP-1.0` lists (every column);
//! * SFV (`rhash --sfv`, cksfv): `NAME CRC32` lines, `;` comments;
//! * Debian's `Release`/`InRelease` checksum sections (`SHA256:` then
//!   ` HASH SIZE PATH`, paths relative to the list's directory).
//!
//! An entry carries every digest its line gives and the size where the
//! format has one: a file matches only when all of them do.

internal! {
    /// What a list's name says (its algorithm, the file a one-digest list
    /// names) and why a list could not be read: `-c`'s words.
    mod names;
}
mod records;
mod release;
mod sfv;
#[cfg(test)]
mod tests;

use std::io::BufRead;

use super::lines::Lines;
use crate::algo::Algorithm;
use crate::digest::Digest;

/// A list format `fastsum -c` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListFormat {
    /// GNU (`HEX  NAME`) and BSD-tagged (`MD5 (NAME) = HEX`) lines, as
    /// md5sum, sha*sum, b3sum, xxhsum, `rhash --simple`/`--bsd` and
    /// fastsum write them: read by `super::gnu::CheckParser`.
    Lines,
    /// fastsum's `--json` records.
    Json,
    /// hashdeep's lists.
    Hashdeep,
    /// Simple File Verification: `NAME CRC32` lines.
    Sfv,
    /// Debian's `Release` and `InRelease` files (the signature is not
    /// verified here).
    Release,
}

impl ListFormat {
    /// The names `--format` takes, with the format each means.
    pub const NAMES: &'static [(&'static str, ListFormat)] = &[
        ("gnu", ListFormat::Lines),
        ("bsd", ListFormat::Lines),
        ("json", ListFormat::Json),
        ("hashdeep", ListFormat::Hashdeep),
        ("sfv", ListFormat::Sfv),
        ("release", ListFormat::Release),
    ];

    /// The format `--format NAME` names.
    pub fn from_name(name: &str) -> Option<ListFormat> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    /// What the format is, in a message.
    pub fn describe(self) -> &'static str {
        match self {
            ListFormat::Lines => "GNU/BSD checksum lines",
            ListFormat::Json => "fastsum --json records",
            ListFormat::Hashdeep => "a hashdeep list",
            ListFormat::Sfv => "an SFV list",
            ListFormat::Release => "a Debian Release file",
        }
    }

    /// Whether the list's paths are relative to the list's own directory
    /// (a Release file's), not to where the check runs.
    pub fn paths_relative_to_list(self) -> bool {
        self == ListFormat::Release
    }

    /// The format of a list whose first line that is neither blank nor a
    /// `#` comment is `first`.
    pub fn detect(first: &[u8]) -> ListFormat {
        if first == super::hashdeep::MAGIC {
            ListFormat::Hashdeep
        } else if first.starts_with(b"{") {
            ListFormat::Json
        } else if first.starts_with(b";") {
            ListFormat::Sfv
        } else if release::starts_release(first) {
            ListFormat::Release
        } else if looks_like_lines(first) || !sfv::looks_like_sfv(first) {
            ListFormat::Lines
        } else {
            ListFormat::Sfv
        }
    }
}

/// Whether `line` starts as a GNU line (a hex digest and a blank) or a
/// BSD-tagged one (`TAG (` or `TAG(`), optionally `\`-escaped.
fn looks_like_lines(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"\\").unwrap_or(line);
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let after = line.get(digits..).unwrap_or_default();
    if digits >= 8 && matches!(after.first(), Some(b' ' | b'\t')) {
        return true;
    }
    let tag = tag_len(line);
    let after = line.get(tag..).unwrap_or_default();
    tag > 0 && (after.starts_with(b" (") || after.starts_with(b"("))
}

/// The length of the tag `line` starts with: letters, digits and `-`
/// (`BLAKE2b-256`), and a part size after `/` (`S3ETAG/8MiB`).
pub(super) fn tag_len(line: &[u8]) -> usize {
    let word = |s: &[u8]| {
        s.iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
            .count()
    };
    let tag = word(line);
    let Some(size) = line.get(tag..).and_then(|s| s.strip_prefix(b"/")) else {
        return tag;
    };
    let size = size.get(..word(size)).unwrap_or_default();
    let is_size = std::str::from_utf8(size)
        .ok()
        .and_then(crate::algo::parts::parse_part_size)
        .is_some();
    match is_size && tag > 0 {
        true => tag + 1 + size.len(),
        false => tag,
    }
}

/// One listed file (or, in fastsum's `--dirs` JSON, directory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListEntry {
    /// The path as listed (unescaped bytes).
    pub path: Vec<u8>,
    /// Every digest the entry gives, in the list's order.
    pub digests: Vec<(Algorithm, Digest)>,
    /// The size it lists, if the format gives one.
    pub size: Option<u64>,
    /// A directory's digest (`"directory_digest"`, docs/DIRECTORY-DIGEST.md).
    pub directory: bool,
}

/// What one line of a list comes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListLine {
    /// A file to check.
    Entry(ListEntry),
    /// A line with nothing to check (a header, a comment, a file the run
    /// that wrote the list skipped).
    Nothing,
    /// A line that could not be read, and why.
    Problem(String),
    /// A file the list may not name, and why (a Release file's path that
    /// leaves its directory, the rule `confined` names), or one whose
    /// digests cannot all be checked (a hashdeep column fastsum does not
    /// compute): refused, never read, and a check that meets one fails.
    Refused(String),
}

/// The one rule of which paths a list whose paths are relative to its own
/// directory may name: a relative path that stays below it. An absolute
/// path or one with a `..` component is refused, named in the reason (a
/// Release file: apt fetches no path outside the archive's directory, so
/// an entry naming `../../etc/shadow` could only test guessed digests of a
/// file the list has no say over, signed or not).
pub(crate) fn confined(path: &[u8]) -> Result<(), String> {
    let leaves = path.starts_with(b"/") || path.split(|&b| b == b'/').any(|c| c == b"..");
    if !leaves {
        return Ok(());
    }
    let mut shown = Vec::new();
    crate::escape::write_report_escaped(path, &mut shown);
    Err(format!(
        "{}: refused: outside the list's directory (its paths are relative to it and stay below it)",
        String::from_utf8_lossy(&shown)
    ))
}

/// A list in one of the formats read entry by entry (every one but
/// [`ListFormat::Lines`]), read a line at a time.
pub struct ListReader<R> {
    lines: Lines<R>,
    format: ListFormat,
    hashdeep: Option<Vec<Option<Algorithm>>>,
    /// A hashdeep list's columns fastsum does not compute, by name.
    hashdeep_unchecked: Option<String>,
    release: release::Sections,
}

impl<R: BufRead> ListReader<R> {
    /// A reader of `reader` as `format`.
    pub fn new(reader: R, format: ListFormat) -> ListReader<R> {
        ListReader {
            lines: Lines::new(reader),
            format,
            hashdeep: None,
            hashdeep_unchecked: None,
            release: release::Sections::default(),
        }
    }

    /// The next line's number and what it comes to; `None` at the end;
    /// `Err` if the list could not be read (or, for a Release file, whose
    /// entries are gathered from every section, read whole first).
    pub fn next_line(&mut self) -> Result<Option<(u64, ListLine)>, String> {
        if self.format == ListFormat::Release {
            return self.release.next(&mut self.lines);
        }
        let Some((number, line)) = self.lines.next_line()? else {
            return Ok(None);
        };
        let read = match self.format {
            ListFormat::Json => records::json_line(line),
            ListFormat::Sfv => sfv::sfv_line(line),
            ListFormat::Hashdeep => {
                hashdeep_line(&mut self.hashdeep, &mut self.hashdeep_unchecked, line)
            }
            ListFormat::Lines | ListFormat::Release => {
                ListLine::Problem("not a format read entry by entry".into())
            }
        };
        Ok(Some((number, joined_list(self.format, line, read))))
    }
}

/// A line that is not of the list's format but is a checksum line
/// (`HEX  NAME`, `TAG (NAME) = HEX`) is a list of another format joined
/// to this one (`cat *.sfv MD5SUMS`): refused, so that the check fails,
/// never passed over as an improperly formatted line with a warning (a
/// changed file listed there went unchecked, exit 0, where md5sum -c
/// fails it). Lists of two formats are checked one by one.
fn joined_list(format: ListFormat, line: &[u8], read: ListLine) -> ListLine {
    use super::gnu::{CheckParser, TagPolicy};
    let ListLine::Problem(why) = read else {
        return read;
    };
    // Untagged digests of any even length parse under BLAKE2b's reading.
    let any = TagPolicy::Any(Algorithm::Blake2b { output_len: 64 });
    if CheckParser::new(any).parse(line).is_none() {
        return ListLine::Problem(why);
    }
    ListLine::Refused(format!(
        "a checksum line in a list read as {}: lists of two formats joined are not read as one (check each by itself)",
        format.describe()
    ))
}

/// A hashdeep list's line: the magic, the column line (kept in
/// `columns`, the names of those fastsum does not compute in
/// `unchecked`), `#` comments, or a file's line with every column.
///
/// The rule for a column fastsum does not compute (tiger, whirlpool): a
/// file's line under it is refused, never an OK checked on the other
/// columns alone (a wrong whirlpool digest beside a right SHA-256 one
/// was OK, exit 0); `audit` fails such a list too. So is every file's
/// line under a column line that cannot be read (a column named twice),
/// never an improperly formatted line passed over with a warning.
/// `unchecked` holds why the current section's lines are refused.
fn hashdeep_line(
    columns: &mut Option<Vec<Option<Algorithm>>>,
    unchecked: &mut Option<String>,
    line: &[u8],
) -> ListLine {
    use super::hashdeep;
    if line.is_empty() || line == hashdeep::MAGIC || line.starts_with(b"#") {
        return ListLine::Nothing;
    }
    if line.starts_with(b"%%%% ") {
        let (read, refused) = match hashdeep::columns(line) {
            Ok(read) => {
                let why = hashdeep::uncomputed_names(line).map(|names| {
                    format!(
                        "its {names} digest cannot be checked: fastsum does not compute \
                         {names} (a list of md5, sha1 and sha256 columns can be)"
                    )
                });
                (read, why)
            }
            Err(why) => (Vec::new(), Some(format!("under a column line it cannot read: {why}"))),
        };
        let problem = refused.is_some() && read.is_empty();
        *columns = Some(read);
        *unchecked = refused;
        return match (problem, unchecked.as_ref()) {
            (true, Some(why)) => ListLine::Problem(why.clone()),
            _ => ListLine::Nothing,
        };
    }
    let Some(columns) = columns else {
        return ListLine::Problem("a file's line before the column line".into());
    };
    // A file's line under a column fastsum does not compute is refused
    // whatever else it holds (a section of tiger digests alone is no
    // improperly formatted line to pass over: its files were not checked).
    if let Some(why) = unchecked.as_deref() {
        return ListLine::Refused(why.to_string());
    }
    match hashdeep::parse_line_all(line, columns) {
        Ok((size, digests, path)) => ListLine::Entry(ListEntry {
            path,
            digests,
            size: Some(size),
            directory: false,
        }),
        Err(why) if super::lines::out_of_memory(&why) => ListLine::Refused(why),
        Err(why) => ListLine::Problem(why),
    }
}
