//! Any manifest fastsum reads, as entries (path bytes → digest): GNU and
//! BSD-tagged lines (md5sum, sha*sum, b2sum, `fastsum`), b3sum and xxhsum
//! lines (with `-a`), and fastsum's `--json` records. The format is
//! detected from the first line, never guessed per line: a list that
//! cannot be read, or that mixes algorithms, is an error that says why;
//! a bad line is a problem with its number, and the rest is read.

use std::io::BufRead;

use super::gnu::{CheckParser, TagPolicy};
use super::lines::Lines;
use super::json_read::{number_field, record_head, text_field, Value};
use crate::algo::Algorithm;
use crate::digest::Digest;
pub(crate) use compare::{compared_by, digest_as};
use compare::{among, decides_beside_unknown};

/// One listed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestEntry {
    /// The path as listed (unescaped bytes).
    pub path: Vec<u8>,
    /// Its digest.
    pub digest: Digest,
    /// Its size, where the format gives it (fastsum's JSON).
    pub size: Option<u64>,
    /// The stamp it was hashed under, where the list gives it (`fastsum
    /// -r --json --stamps`): what `fastsum scrub --manifest` checks. Boxed:
    /// most lists have none, and a list of millions is held whole.
    pub stamp: Option<Box<crate::fs::FileStamp>>,
    /// The id of the file system the stamp was taken on (`"fsid"` beside
    /// it; 0 where the list gives none): a stamp vouches only on that file
    /// system, as the cache's do (`fs::identity`).
    pub fsid: u64,
}

/// A manifest read whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The one algorithm of every entry.
    pub algorithm: Algorithm,
    /// The entries, in the list's order.
    pub entries: Vec<ManifestEntry>,
    /// The directory digests it lists (`fastsum -r --dirs`: a name that
    /// ends in `/`, docs/DIRECTORY-DIGEST.md), kept apart from the files.
    pub directories: Vec<ManifestEntry>,
    /// Lines that could not be read: (line number, why), the first
    /// [`Manifest::PROBLEMS_KEPT`] of them.
    pub problems: Vec<(u64, String)>,
    /// Lines that could not be read beyond those in `problems`: counted,
    /// not held (a list of a valid line and then 10M bad ones took 787 MB).
    pub problems_unkept: u64,
}

impl Manifest {
    /// Reads a manifest. `algorithm` is what untagged lines mean (`-a`);
    /// without it, their digest length decides where only one algorithm
    /// has it among those whose tools write untagged lines by default (32
    /// digits: MD5, as md5sum and fastsum write; 40: SHA-1; 16: XXH64),
    /// and any other length is an error naming the `-a` to give.
    pub fn read(reader: impl BufRead, algorithm: Option<Algorithm>) -> Result<Manifest, String> {
        read_manifest(reader, algorithm)
    }
}

/// [`Manifest::read`].
pub(crate) fn read_manifest(
    reader: impl BufRead,
    algorithm: Option<Algorithm>,
) -> Result<Manifest, String> {
    let mut entries = Vec::new();
    let mut manifest = read_manifest_each(reader, algorithm, &mut |e| entries.push(e))?;
    manifest.entries = entries;
    Ok(manifest)
}

/// [`Manifest::read`], each file's entry handed to `on_entry` as it is
/// read instead of held (the manifest returned has none in `entries`):
/// a list of millions read in passes (`diff`) without holding it.
pub(crate) fn read_manifest_each(
    reader: impl BufRead,
    algorithm: Option<Algorithm>,
    on_entry: &mut dyn FnMut(ManifestEntry),
) -> Result<Manifest, String> {
    let mut lines = Lines::new(reader);
    let first = lines
        .first_entry()?
        .ok_or("no entries: the list is empty")?;
    if first == super::hashdeep::MAGIC {
        read_hashdeep(&mut lines, algorithm, on_entry)
    } else if first.starts_with(b"{") {
        read_json(&mut lines, algorithm, on_entry)
    } else {
        let default = match algorithm {
            Some(a) => a,
            None => untagged_default(first)?,
        };
        read_lines(&mut lines, default, algorithm, on_entry)
    }
}

fn read_lines(
    lines: &mut Lines<impl BufRead>,
    default: Algorithm,
    given: Option<Algorithm>,
    on_entry: &mut dyn FnMut(ManifestEntry),
) -> Result<Manifest, String> {
    let mut files = 0u64;
    let mut parser = CheckParser::new(TagPolicy::Any(default));
    let mut manifest = Manifest {
        algorithm: default,
        entries: Vec::new(),
        directories: Vec::new(),
        problems: Vec::new(),
        problems_unkept: 0,
    };
    // Several -a: each file's lines one after another, one per algorithm
    // (a file's lines are its group); the first file's algorithms are the
    // list's, and each file is read by the one that decides among them.
    let mut algorithms: Vec<Algorithm> = Vec::new();
    let mut decided: Option<Algorithm> = None;
    let mut group: Option<FileLines> = None;
    while let Some((number, line)) = lines.next_line()? {
        if line.first().is_none_or(|&b| b == b'#') {
            continue;
        }
        let Some(parsed) = parser.parse(line) else {
            manifest.problem(number, "improperly formatted checksum line");
            continue;
        };
        let same_file = group.as_ref().is_some_and(|g| {
            *g.path == *parsed.name && !g.digests.iter().any(|(a, _)| *a == parsed.algorithm)
        });
        if decided.is_some() && !algorithms.contains(&parsed.algorithm) {
            return Err(mixes(&algorithms, parsed.algorithm, number));
        }
        if !same_file {
            // The same file again, by an algorithm its lines gave: a file
            // listed twice, or one digest given twice (then the group it
            // starts lacks a member, and its problem says which line).
            let again = group
                .as_ref()
                .filter(|g| *g.path == *parsed.name)
                .and_then(|g| g.line_of(parsed.algorithm))
                .map(|first| (parsed.algorithm, first, number));
            if let Some(done) = group.take() {
                let decider = done.decider(&mut decided, &mut algorithms, given, default)?;
                done.hand_on(decider, &mut manifest, &mut files, on_entry);
            }
            if !algorithms.contains(&parsed.algorithm) && decided.is_some() {
                return Err(mixes(&algorithms, parsed.algorithm, number));
            }
            group = Some(FileLines {
                number,
                path: held(parsed.name)?,
                digests: Vec::new(),
                numbers: Vec::new(),
                again,
            });
        }
        if let Some(g) = group.as_mut() {
            g.digests.push((parsed.algorithm, parsed.expected));
            g.numbers.push(number);
        }
        lines.let_go();
    }
    if let Some(done) = group.take() {
        let decider = done.decider(&mut decided, &mut algorithms, given, default)?;
        done.hand_on(decider, &mut manifest, &mut files, on_entry);
    }
    finish(manifest, decided, files)
}

/// A list's algorithms as words: `md5 and sha256`.
fn names(algorithms: &[Algorithm]) -> String {
    let words: Vec<String> = algorithms.iter().map(|a| a.to_string()).collect();
    words.join(" and ")
}

/// Line `number`'s algorithm is none of the list's.
fn mixes(algorithms: &[Algorithm], other: Algorithm, number: u64) -> String {
    format!(
        "it mixes {} and {other} lines (line {number}): one algorithm per list, or the same several for every file",
        names(algorithms)
    )
}

/// One file's consecutive tagged lines (one line, or one a `-a`): where
/// they start, the name, and each digest with its algorithm.
struct FileLines {
    number: u64,
    path: Vec<u8>,
    digests: Vec<(Algorithm, Digest)>,
    /// Each digest's line number.
    numbers: Vec<u64>,
    /// Where this group began by giving the file before's digest again:
    /// its algorithm, the earlier line and this one.
    again: Option<(Algorithm, u64, u64)>,
}

impl FileLines {
    /// The line that gave this file's `algorithm` digest, if one did.
    fn line_of(&self, algorithm: Algorithm) -> Option<u64> {
        let at = self.digests.iter().position(|(a, _)| *a == algorithm)?;
        self.numbers.get(at).copied()
    }

    /// The algorithm the list is read by, set by its first file, whose
    /// algorithms become the list's (every later line must be of one of
    /// them: a list whose first file has only an MD5 line is an MD5 list,
    /// and a SHA-256 line further down is refused, never read past):
    /// `given` (`-a`) among several, else all of them ([`compared_by`]). A list
    /// of one algorithm is read in it whatever `-a` says (its lines name
    /// it); a list of several that lacks `given` is refused.
    fn decider(
        &self,
        decided: &mut Option<Algorithm>,
        algorithms: &mut Vec<Algorithm>,
        given: Option<Algorithm>,
        default: Algorithm,
    ) -> Result<Algorithm, String> {
        if let Some(decided) = *decided {
            return Ok(decided);
        }
        *algorithms = self.digests.iter().map(|(a, _)| *a).collect();
        let decider = match given {
            Some(given) if algorithms.len() > 1 && !among(given, algorithms) => {
                return Err(format!(
                    "its files' digests are {}, not the {given} asked for",
                    names(algorithms)
                ))
            }
            _ => compared_by(algorithms, given).unwrap_or(default),
        };
        *decided = Some(decider);
        Ok(decider)
    }

    /// This file's entry, its `decider` digest (every member's joined,
    /// for a joint one): a directory's kept apart, a file's handed to
    /// `on_entry`; a file without one of them is a problem of its first
    /// line (never read by another algorithm).
    fn hand_on(
        self,
        decider: Algorithm,
        manifest: &mut Manifest,
        files: &mut u64,
        on_entry: &mut dyn FnMut(ManifestEntry),
    ) {
        let digest = match digest_as(decider, &self.digests) {
            Ok(digest) => digest,
            Err(lacked) => {
                let why = match self.again {
                    Some((twice, first, then)) => format!(
                        "its {twice} digest is given twice (lines {first} and {then}), and no \
                         {lacked} line follows the second: one line per digest a file"
                    ),
                    None => format!("no {lacked} line, which the list's first file has"),
                };
                return manifest.problem(self.number, why);
            }
        };
        let entry = ManifestEntry {
            path: self.path,
            digest,
            size: None,
            stamp: None,
            fsid: 0,
        };
        match Manifest::is_directory_name(&entry.path) {
            true => manifest.directories.push(entry),
            false => {
                *files += 1;
                on_entry(entry)
            }
        }
    }
}

/// A listed name, owned ([`super::lines::held`]).
fn held(name: std::borrow::Cow<'_, [u8]>) -> Result<Vec<u8>, String> {
    match name {
        std::borrow::Cow::Owned(name) => Ok(name),
        std::borrow::Cow::Borrowed(name) => super::lines::held(name),
    }
}

/// The algorithm untagged lines mean when `-a` is not given, from the
/// first line (a tagged line names its own: then MD5 is only a default).
fn untagged_default(first: &[u8]) -> Result<Algorithm, String> {
    let first = first.strip_prefix(b"\\").unwrap_or(first);
    let tag = first
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
        .count();
    // `tag` counts bytes of `first`: never past its end.
    let (word, after) = first.split_at_checked(tag).unwrap_or((first, &[]));
    // `TAG (NAME) = ...` (BSD, `--tag`) or `TAG(NAME)= ...` (OpenSSL's
    // `dgst`, which names SHA-256 `SHA2-256`).
    let opens = after.starts_with(b" (") || after.starts_with(b"(");
    if tag > 0 && opens && !word.iter().all(u8::is_ascii_hexdigit) {
        return Ok(Algorithm::Md5);
    }
    let digits = first.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    match digits {
        32 => Ok(Algorithm::Md5),
        40 => Ok(Algorithm::Sha1),
        16 => Ok(Algorithm::Xxh64),
        // xxhsum -H0 writes 8 digits, and so does `rhash --simple` (CRC-32).
        8 => Err("its untagged 8-digit digests need -a (xxh32 or crc32b)".into()),
        56 => Err("its untagged 56-digit digests need -a (sha224 or blake2b -l 224)".into()),
        64 => Err("its untagged 64-digit digests need -a (sha256, blake3 or blake2b -l 256)".into()),
        96 => Err("its untagged 96-digit digests need -a (sha384 or blake2b -l 384)".into()),
        128 => Err("its untagged 128-digit digests need -a (sha512 or blake2b)".into()),
        _ => Err("not a checksum list: its first line is neither a checksum line nor a fastsum --json record".into()),
    }
}

fn read_json(
    lines: &mut Lines<impl BufRead>,
    given: Option<Algorithm>,
    on_entry: &mut dyn FnMut(ManifestEntry),
) -> Result<Manifest, String> {
    let mut files = 0u64;
    let mut manifest = Manifest {
        algorithm: given.unwrap_or(Algorithm::Md5),
        entries: Vec::new(),
        directories: Vec::new(),
        problems: Vec::new(),
        problems_unkept: 0,
    };
    let mut seen: Option<Algorithm> = None;
    while let Some((number, line)) = lines.next_line()? {
        let record = match json_record(line, given) {
            Ok(Some(record)) => record,
            Ok(None) => continue,
            Err(problem) => {
                manifest.problem(number, problem);
                continue;
            }
        };
        let algorithm = record.algorithm;
        match seen {
            Some(a) if a != algorithm => {
                return Err(format!(
                    "it mixes {a} and {algorithm} records (line {number}): one algorithm per list"
                ))
            }
            _ => seen = Some(algorithm),
        }
        let (entry, directory) = match record.digest {
            Ok(digest) => digest,
            Err(problem) => {
                manifest.problem(number, problem);
                continue;
            }
        };
        lines.let_go();
        match directory && Manifest::is_directory_name(&entry.path) {
            true => manifest.directories.push(entry),
            false if directory => manifest
                .problems
                .push((number, "a directory digest for a name without '/'".into())),
            false => {
                files += 1;
                on_entry(entry)
            }
        }
    }
    if let (Some(given), Some(seen)) = (given, seen) {
        if given != seen {
            return Err(format!("its records are {seen}, not the {given} asked for"));
        }
    }
    finish(manifest, seen, files)
}

/// One `--json` record of a known algorithm.
struct JsonRecord {
    algorithm: Algorithm,
    /// Its entry, and whether it is a `directory_digest` record; or the
    /// problem with its digest (the algorithm still counts: a list that
    /// mixes two is refused whatever the digests).
    digest: Result<(ManifestEntry, bool), String>,
}

/// What one line of a JSON list says: a record of an algorithm, nothing to
/// compare (a blank line, a special file the run skipped), or the problem
/// that makes the line unusable (an unreadable file is one).
fn json_record(line: &[u8], given: Option<Algorithm>) -> Result<Option<JsonRecord>, String> {
    if line.is_empty() {
        return Ok(None);
    }
    let Some((fields, path)) = record_head(line)? else {
        return Ok(None);
    };
    let text = |key: &str| text_field(&fields, key);
    if let Some(digests) = several_digests(&fields) {
        return several_record(&fields, digests, path, given).map(Some);
    }
    let Some(Ok(algorithm)) = text("algorithm").map(str::parse::<Algorithm>) else {
        return Err("a record without a known algorithm".to_string());
    };
    let digest = json_digest(&fields, path, algorithm);
    Ok(Some(JsonRecord { algorithm, digest }))
}

/// A several `-a` record's `"digests"`.
fn several_digests(fields: &[(String, Value)]) -> Option<&[(String, Value)]> {
    fields.iter().find_map(|(k, v)| match v {
        Value::Object(inner) if k == "digests" => Some(inner.as_slice()),
        _ => None,
    })
}

/// A several `-a` record read as one algorithm's: `given`'s if it has
/// it, else all of them at once ([`compared_by`]).
fn several_record(
    fields: &[(String, Value)],
    digests: &[(String, Value)],
    path: Vec<u8>,
    given: Option<Algorithm>,
) -> Result<JsonRecord, String> {
    let known = |(name, value): &(String, Value)| match (name.parse::<Algorithm>(), value) {
        (Ok(algorithm), Value::Text(hex)) => Some((algorithm, hex.clone())),
        _ => None,
    };
    let all: Vec<(Algorithm, String)> = digests.iter().filter_map(known).collect();
    let algorithms: Vec<Algorithm> = all.iter().map(|(a, _)| *a).collect();
    let pick = match given {
        Some(given) if !algorithms.is_empty() && !among(given, &algorithms) => {
            let names = names(&algorithms);
            return Err(format!("its digests are {names}, not the {given} asked for"));
        }
        _ => compared_by(&algorithms, given),
    };
    let (algorithm, hex) = match pick {
        Some(joint @ Algorithm::Joint { .. }) => (joint, joint_hex(joint, &all)?),
        _ => all
            .into_iter()
            .find(|(a, _)| Some(*a) == pick)
            .ok_or("a record without a digest of a known algorithm")?,
    };
    let unknown: Vec<&str> = digests
        .iter()
        .filter(|member| known(member).is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    if !unknown.is_empty() {
        let unknown = format!("its {} digests", unknown.join(", "));
        decides_beside_unknown(algorithm, &unknown, given)?;
    }
    let mut flat: Vec<(String, Value)> = fields.to_vec();
    flat.push(("digest".to_string(), Value::Text(hex)));
    let digest = json_digest(&flat, path, algorithm);
    Ok(JsonRecord { algorithm, digest })
}

/// The joint digest of a record's `"digests"` (each member's checked for
/// its length), in hex.
fn joint_hex(joint: Algorithm, all: &[(Algorithm, String)]) -> Result<String, String> {
    let mut digests = Vec::with_capacity(all.len());
    for (algorithm, hex) in all {
        match Digest::from_hex(hex) {
            Ok(d) if d.len() == algorithm.output_len() => digests.push((*algorithm, d)),
            _ => return Err(format!("a digest of the wrong length for {algorithm}")),
        }
    }
    let digest = digest_as(joint, &digests).map_err(|a| format!("a record without its {a} digest"))?;
    Ok(digest.to_hex())
}

/// A record's entry (and whether it is a directory's) from its digest,
/// size and stamp fields.
fn json_digest(
    fields: &[(String, Value)],
    path: Vec<u8>,
    algorithm: Algorithm,
) -> Result<(ManifestEntry, bool), String> {
    let text = |key: &str| text_field(fields, key);
    let (digest, directory) = match text("directory_digest") {
        Some(d) => (Some(d), true),
        None => (text("digest"), false),
    };
    let Some(digest) = digest.and_then(|d| Digest::from_hex(d).ok()) else {
        return Err("a record without a digest".to_string());
    };
    if digest.len() != algorithm.output_len() {
        return Err(format!("a digest of the wrong length for {algorithm}"));
    }
    let size = number_field(fields, "size");
    let stamp = size.and_then(|size| json_stamp(fields, size)).map(Box::new);
    let entry = ManifestEntry {
        path,
        digest,
        size,
        stamp,
        fsid: number_field(fields, "fsid").unwrap_or(0),
    };
    Ok((entry, directory))
}

/// A JSON record's stamp: all four fields, or none.
fn json_stamp(fields: &[(String, Value)], size: u64) -> Option<crate::fs::FileStamp> {
    Some(crate::fs::FileStamp {
        kind: crate::fs::stat::kind::FILE,
        size,
        dev: number_field(fields, "device")?,
        ino: number_field(fields, "inode")?,
        mtime_ns: number_field(fields, "mtime_ns")?,
        ctime_ns: number_field(fields, "ctime_ns")?,
    })
}

/// A hashdeep list: the column of `given` (`-a`), else every column
/// fastsum computes at once ([`compared_by`]); sizes kept.
fn read_hashdeep(
    lines: &mut Lines<impl BufRead>,
    given: Option<Algorithm>,
    on_entry: &mut dyn FnMut(ManifestEntry),
) -> Result<Manifest, String> {
    let mut files = 0u64;
    use super::hashdeep;
    while let Some((_, line)) = lines.next_line()? {
        if line == hashdeep::MAGIC {
            break;
        }
    }
    let (_, header) = lines
        .next_line()?
        .ok_or("no column line after %%%% HASHDEEP-1.0")?;
    let header = header.to_vec();
    let header = header.as_slice();
    let columns = hashdeep::columns(header)?;
    let known: Vec<Algorithm> = columns.iter().flatten().copied().collect();
    if let Some(a) = given.filter(|a| !among(*a, &known)) {
        let named = String::from_utf8_lossy(header);
        return Err(format!("its columns ({named}) have no {a}"));
    }
    let algorithm = compared_by(&known, given).ok_or("none of its columns is md5, sha1 or sha256")?;
    // The one column read, or none: a joint digest reads them all.
    let pick = columns.iter().position(|c| *c == Some(algorithm));
    if columns.contains(&None) {
        let named = String::from_utf8_lossy(header);
        let unknown = format!(
            "digests of its column line ({})",
            named.trim_start_matches("%%%% ")
        );
        decides_beside_unknown(algorithm, &unknown, given)?;
    }
    let mut manifest = Manifest {
        algorithm,
        entries: Vec::new(),
        directories: Vec::new(),
        problems: Vec::new(),
        problems_unkept: 0,
    };
    while let Some((number, line)) = lines.next_line()? {
        // Lists joined end to end repeat the header: the same columns
        // read on; others would be read under the first's (a sha256 taken
        // into the name, the file compared by its md5), so they are
        // refused.
        if line.starts_with(b"%%%%") && line != hashdeep::MAGIC && line != header {
            return Err(format!(
                "line {number}: a second column line ({}) unlike the first ({}): one set of columns per list",
                String::from_utf8_lossy(line),
                String::from_utf8_lossy(header)
            ));
        }
        if line.is_empty() || line.starts_with(b"##") || line.starts_with(b"%%%%") {
            continue;
        }
        let parsed = match pick {
            Some(pick) => hashdeep::parse_line(line, &columns, pick),
            None => hashdeep::parse_line_all(line, &columns).and_then(|(size, all, path)| {
                let digest = digest_as(algorithm, &all)
                    .map_err(|a| format!("a line without its {a} digest"))?;
                Ok((size, digest, path))
            }),
        };
        match parsed {
            Ok((size, digest, path)) => {
                lines.let_go();
                files += 1;
                on_entry(ManifestEntry {
                    path,
                    digest,
                    size: Some(size),
                    stamp: None,
                    fsid: 0,
                })
            }
            Err(why) => manifest.problem(number, why),
        }
    }
    finish(manifest, Some(algorithm), files)
}

impl Manifest {
    /// The most unreadable lines a manifest names; the rest are counted
    /// ([`Manifest::problems_unkept`]).
    pub const PROBLEMS_KEPT: usize = 1000;

    /// Line `number` could not be read, for `why`: named among the first
    /// [`Manifest::PROBLEMS_KEPT`], counted after them.
    fn problem(&mut self, number: u64, why: impl Into<String>) {
        match self.problems.len() < Self::PROBLEMS_KEPT {
            true => self.problems.push((number, why.into())),
            false => self.problems_unkept += 1,
        }
    }

    /// A directory's line names it with a `/` at the end, which no file's
    /// name has.
    pub fn is_directory_name(name: &[u8]) -> bool {
        name.last() == Some(&b'/')
    }
}

fn finish(mut manifest: Manifest, seen: Option<Algorithm>, files: u64) -> Result<Manifest, String> {
    if files == 0 {
        return Err(match manifest.problems.first() {
            Some((line, why)) => format!("no properly formatted entries (line {line}: {why})"),
            None => "no entries".to_string(),
        });
    }
    if let Some(algorithm) = seen {
        manifest.algorithm = algorithm;
    }
    Ok(manifest)
}

mod compare;
mod look;
internal! {
    /// A list with several digests a file, read whole for `--update`.
    mod several;
}

#[cfg(test)]
mod tests;
