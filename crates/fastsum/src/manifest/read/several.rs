//! A list of several digests a file (`fastsum -a md5 -a sha256`)
//! read with every digest, for `--update` to write it back whole:
//! BSD-tagged lines (each file's lines one after another, one per
//! algorithm), `--json` records with `"digests"`, or a hashdeep list of
//! several columns. Every file must have the same algorithms in the same
//! order as the first: a list that does not (a file's line of one
//! algorithm missing, or its algorithms in another order) is refused with
//! the line that breaks it, as is any line that cannot be read, for the
//! list would be written back without it.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::super::gnu::{CheckParser, TagPolicy};
use super::super::json_read::{number_field, record_head, text_field, Value};
use super::super::lines::Lines;
use super::json_stamp;
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::fs::{FileStamp, FsId};

/// One listed file with each of its digests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeveralEntry {
    /// The path as listed (unescaped bytes).
    pub path: Vec<u8>,
    /// Its digests, in the order of [`Several::algorithms`].
    pub digests: Vec<Digest>,
    /// Its size, where the format gives it (JSON, hashdeep).
    pub size: Option<u64>,
    /// The stamp it was hashed under (`--json --stamps`).
    pub stamp: Option<Box<FileStamp>>,
    /// The id of the file system the stamp was taken on (0: none given).
    pub fsid: u64,
}

/// A list of several digests a file, read whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Several {
    /// Every file's algorithms, in the list's order.
    pub algorithms: Vec<Algorithm>,
    /// The entries, in the list's order.
    pub entries: Vec<SeveralEntry>,
}

/// What a file's digests were read from so far: its first line's number,
/// its entry, and the algorithms of its lines.
struct Group {
    line: u64,
    entry: SeveralEntry,
    algorithms: Vec<Algorithm>,
}

impl Several {
    /// Reads a list of tagged lines, `--json` records or hashdeep lines,
    /// every digest of every file. `Err` names the first line that cannot
    /// be read, or whose file's algorithms are not the first file's.
    pub fn read(reader: impl BufRead) -> Result<Several, String> {
        let mut lines = Lines::new(reader);
        let first = lines
            .first_entry()?
            .ok_or("no entries: the list is empty")?;
        let mut several = Several {
            algorithms: Vec::new(),
            entries: Vec::new(),
        };
        if first == super::super::hashdeep::MAGIC {
            several.read_hashdeep(&mut lines)?;
        } else if first.starts_with(b"{") {
            several.read_json(&mut lines)?;
        } else {
            several.read_tagged(&mut lines)?;
        }
        if several.entries.is_empty() {
            return Err("no entries".into());
        }
        Ok(several)
    }

    /// A file's digests, its algorithms checked against the first file's
    /// (the first file sets them).
    fn push(&mut self, group: Group) -> Result<(), String> {
        if self.entries.is_empty() {
            self.algorithms = group.algorithms;
        } else if group.algorithms != self.algorithms {
            let names = |all: &[Algorithm]| {
                all.iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "line {}: {} has {}, the first file {} (every file must have the same algorithms in the same order)",
                group.line,
                crate::escape::display_path(&crate::fs::name::path(&group.entry.path)),
                names(&group.algorithms),
                names(&self.algorithms)
            ));
        }
        if super::Manifest::is_directory_name(&group.entry.path) {
            return Err(format!(
                "line {}: a directory's digest, which several -a does not write",
                group.line
            ));
        }
        self.entries.push(group.entry);
        Ok(())
    }

    /// Tagged lines, a file's one after another; untagged ones name no
    /// algorithm, so they cannot tell one file's digests apart.
    fn read_tagged(&mut self, lines: &mut Lines<impl BufRead>) -> Result<(), String> {
        let mut parser = CheckParser::new(TagPolicy::Any(Algorithm::Md5));
        let mut group: Option<Group> = None;
        while let Some((number, line)) = lines.next_line()? {
            if line.first().is_none_or(|&b| b == b'#') {
                continue;
            }
            let parsed = match parser.parse(line) {
                Some(parsed) if parsed.tagged => parsed,
                Some(_) => return Err(format!("line {number} is untagged")),
                None => return Err(format!("line {number} is not a checksum line")),
            };
            if parsed.expected.len() != parsed.algorithm.output_len() {
                return Err(format!("line {number}: a digest cut short"));
            }
            let same_file = group.as_ref().is_some_and(|g| {
                *g.entry.path == *parsed.name && !g.algorithms.contains(&parsed.algorithm)
            });
            if let Some(done) = group.take_if(|_| !same_file) {
                self.push(done)?;
            }
            let g = group.get_or_insert_with(|| Group {
                line: number,
                entry: entry(parsed.name.to_vec(), None),
                algorithms: Vec::new(),
            });
            g.algorithms.push(parsed.algorithm);
            g.entry.digests.push(parsed.expected);
        }
        match group {
            Some(last) => self.push(last),
            None => Ok(()),
        }
    }

    /// `--json` records with `"digests"`: the object's members in order.
    fn read_json(&mut self, lines: &mut Lines<impl BufRead>) -> Result<(), String> {
        while let Some((number, line)) = lines.next_line()? {
            if line.is_empty() {
                continue;
            }
            let said = |why: String| format!("line {number}: {why}");
            let (fields, path) = record_head(line)
                .map_err(said)?
                .ok_or_else(|| said("a skipped file's record".into()))?;
            let digests = fields.iter().find_map(|(k, v)| match v {
                Value::Object(inner) if k == "digests" => Some(inner),
                _ => None,
            });
            let Some(digests) = digests else {
                let one = text_field(&fields, "algorithm").unwrap_or("no");
                return Err(said(format!("a record of one algorithm ({one}), not \"digests\"")));
            };
            let size = number_field(&fields, "size");
            let mut group = Group {
                line: number,
                entry: entry(path, size),
                algorithms: Vec::new(),
            };
            for (name, value) in digests {
                let (Ok(algorithm), Value::Text(hex)) = (name.parse::<Algorithm>(), value) else {
                    return Err(said(format!("a digest of no known algorithm ({name})")));
                };
                let digest = Digest::from_hex(hex)
                    .ok()
                    .filter(|d| d.len() == algorithm.output_len())
                    .ok_or_else(|| said(format!("a bad {algorithm} digest")))?;
                group.algorithms.push(algorithm);
                group.entry.digests.push(digest);
            }
            group.entry.stamp = size.and_then(|s| json_stamp(&fields, s)).map(Box::new);
            group.entry.fsid = number_field(&fields, "fsid").unwrap_or(0);
            self.push(group)?;
        }
        Ok(())
    }

    /// hashdeep's lines: every column one fastsum computes.
    fn read_hashdeep(&mut self, lines: &mut Lines<impl BufRead>) -> Result<(), String> {
        use super::super::hashdeep;
        while let Some((_, line)) = lines.next_line()? {
            if line == hashdeep::MAGIC {
                break;
            }
        }
        let (number, header) = lines
            .next_line()?
            .ok_or("no column line after %%%% HASHDEEP-1.0")?;
        let columns = hashdeep::columns(header)?;
        if columns.iter().any(Option::is_none) {
            return Err(format!(
                "line {number}: a column fastsum does not compute (md5, sha1 and sha256 only)"
            ));
        }
        let algorithms: Vec<Algorithm> = columns.iter().flatten().copied().collect();
        while let Some((number, line)) = lines.next_line()? {
            if line.is_empty() || line.starts_with(b"##") || line.starts_with(b"%%%%") {
                continue;
            }
            let (size, digests, path) =
                hashdeep::parse_line_all(line, &columns).map_err(|why| format!("line {number}: {why}"))?;
            let mut entry = entry(path, Some(size));
            entry.digests = digests.into_iter().map(|(_, d)| d).collect();
            self.push(Group {
                line: number,
                entry,
                algorithms: algorithms.clone(),
            })?;
        }
        Ok(())
    }

    /// The stamped entries as answers: a file whose stamp (and file
    /// system) is the listed one has the listed digests.
    pub fn stamped_answers(&self) -> SeveralAnswers {
        let answers = self.entries.iter().filter_map(|e| {
            let stamp = *e.stamp.as_deref()?;
            let path = crate::fs::name::path(&e.path).into_owned();
            Some((path, (stamp, FsId(e.fsid), e.digests.clone())))
        });
        SeveralAnswers {
            answers: answers.collect(),
        }
    }
}

/// An entry of `path` with no digest yet.
fn entry(path: Vec<u8>, size: Option<u64>) -> SeveralEntry {
    SeveralEntry {
        path,
        digests: Vec::new(),
        size,
        stamp: None,
        fsid: 0,
    }
}

/// The digests a list of several digests a file vouches for by their
/// stamps (`--update` of a `--json --stamps` list, as
/// [`Manifest::stamped_answers`](super::Manifest) for one algorithm).
#[derive(Debug, Default)]
pub struct SeveralAnswers {
    answers: std::collections::HashMap<PathBuf, (FileStamp, FsId, Vec<Digest>)>,
}

impl SeveralAnswers {
    /// The listed digests of the file at `path`, whose stamp is `stamp`
    /// now: where the list has that stamp on that file system (the
    /// cache's rule; a list that gives no file system vouches for none).
    pub fn answer(&self, path: &Path, stamp: &FileStamp) -> Option<&[Digest]> {
        let (listed, fs, digests) = self.answers.get(path)?;
        let settled = listed.is_settled_at(crate::fs::stat::now_ns());
        let same = listed == stamp && settled && *fs == FsId::of_path(path);
        same.then_some(digests.as_slice())
    }
}
