//! hashdeep's file format (hashdeep 4.4, `%%%% HASHDEEP-1.0`), read and
//! written so that fastsum and hashdeep check each other's lists:
//!
//! ```text
//! %%%% HASHDEEP-1.0
//! %%%% size,md5,sha256,filename
//! ## Invoked from: /srv
//! ## $ fastsum -r --format=hashdeep -a md5 -a sha256 data
//! ##
//! 4,5bbf5a52…,2c8b08da…,data/a
//! ```
//!
//! A line is the size, one digest per algorithm of the header in its
//! order, then the file name: everything after that many commas (a name
//! may hold commas; it cannot hold a newline, and is not escaped).

use crate::algo::Algorithm;
use crate::digest::Digest;

/// The first line of every hashdeep file.
pub(crate) const MAGIC: &[u8] = b"%%%% HASHDEEP-1.0";

/// The digest columns of a hashdeep list: algorithms hashdeep has a name
/// for, in their order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    algorithms: Vec<Algorithm>,
}

impl Columns {
    /// The first line of every hashdeep file.
    pub const MAGIC: &'static [u8] = MAGIC;

    /// Columns for `algorithms`; `Err` is the first that hashdeep's format
    /// has no name for (of fastsum's, it names md5, sha1 and sha256).
    pub fn new(algorithms: &[Algorithm]) -> Result<Columns, Algorithm> {
        match algorithms.iter().find(|a| name_of(**a).is_none()) {
            Some(a) => Err(*a),
            None => Ok(Columns {
                algorithms: algorithms.to_vec(),
            }),
        }
    }

    /// The columns a hashdeep file's second header line names: the
    /// algorithms in order (`None` for one fastsum does not compute).
    pub fn read(header: &[u8]) -> Result<Vec<Option<Algorithm>>, String> {
        columns(header)
    }

    /// The header, written from the directory `cwd` by `command`.
    pub fn header(&self, cwd: &[u8], command: &[u8]) -> Vec<u8> {
        header(&self.algorithms, cwd, command)
    }
}

/// The algorithms hashdeep names that fastsum computes, by hashdeep's
/// names (it also knows tiger and whirlpool).
pub(crate) fn algorithm_of(name: &str) -> Option<Algorithm> {
    match name {
        "md5" => Some(Algorithm::Md5),
        "sha1" => Some(Algorithm::Sha1),
        "sha256" => Some(Algorithm::Sha256),
        _ => None,
    }
}

/// The names, joined by " and ", of a column line's columns fastsum does
/// not compute (`tiger`, `whirlpool`); `None` when it computes each.
/// Names are matched as hashdeep matches them: in any case.
pub(crate) fn uncomputed_names(column_line: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(column_line.strip_prefix(b"%%%% ")?);
    let names: Vec<&str> = text
        .split(',')
        .filter(|n| {
            let n = n.to_ascii_lowercase();
            !matches!(n.as_str(), "size" | "filename") && algorithm_of(&n).is_none()
        })
        .collect();
    (!names.is_empty()).then(|| names.join(" and "))
}

/// hashdeep's name for `algorithm`, if it has one.
pub(crate) fn name_of(algorithm: Algorithm) -> Option<&'static str> {
    match algorithm {
        Algorithm::Md5 => Some("md5"),
        Algorithm::Sha1 => Some("sha1"),
        Algorithm::Sha256 => Some("sha256"),
        _ => None,
    }
}

/// The header for `algorithms` (each with a hashdeep name), written from
/// the directory `cwd` by `command`.
fn header(algorithms: &[Algorithm], cwd: &[u8], command: &[u8]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(b"\n%%%% size,");
    for algorithm in algorithms {
        out.extend_from_slice(name_of(*algorithm).unwrap_or("?").as_bytes());
        out.push(b',');
    }
    out.extend_from_slice(b"filename\n## Invoked from: ");
    out.extend_from_slice(cwd);
    out.extend_from_slice(b"\n## $ ");
    out.extend_from_slice(command);
    out.extend_from_slice(b"\n## \n");
    out
}

/// One file's line; `None` for a name hashdeep's format cannot hold (a
/// newline or a carriage return in it). Written by the renderer (`tree`).
#[cfg(any(feature = "tree", test))]
pub(crate) fn line(size: u64, digests: &[&Digest], name: &[u8]) -> Option<Vec<u8>> {
    if name.iter().any(|&b| b == b'\n' || b == b'\r') {
        return None;
    }
    let mut out = size.to_string().into_bytes();
    for digest in digests {
        out.push(b',');
        digest.push_hex(&mut out);
    }
    out.push(b',');
    out.extend_from_slice(name);
    out.push(b'\n');
    Some(out)
}

/// The columns a hashdeep file's second header line names: the
/// algorithms in order (`None` for one fastsum does not compute).
///
/// The rule for names: in any case, as hashdeep 4.4 reads them (it audits
/// `%%%% SIZE,MD5,SHA256,FILENAME` as it audits its own lower-case
/// header; fastsum refused such a list whole, with a message that
/// differed between `-c` and `diff`).
pub(crate) fn columns(header: &[u8]) -> Result<Vec<Option<Algorithm>>, String> {
    let text = std::str::from_utf8(header).map_err(|_| "a header that is not UTF-8")?;
    let fields = text
        .strip_prefix("%%%% ")
        .ok_or("no column line after %%%% HASHDEEP-1.0")?;
    let lower = fields.to_ascii_lowercase();
    let names: Vec<&str> = lower.split(',').collect();
    match (names.first(), names.last()) {
        (Some(&"size"), Some(&"filename")) if names.len() >= 3 => {}
        _ => return Err(format!("a column line that is not size,...,filename: {fields}")),
    }
    let algorithms = names.get(1..names.len() - 1).unwrap_or(&[]);
    // hashdeep writes each of its five algorithms once at most: a column
    // named twice could carry a wrong digest beside a right one of the
    // same name (only one was read: `audit` passed), and 80,000 columns
    // made `-c` hash each file 80,000 times.
    if algorithms.len() > HASHDEEP_ALGORITHMS {
        return Err(format!(
            "a column line of {} digest columns (hashdeep writes at most {HASHDEEP_ALGORITHMS})",
            algorithms.len()
        ));
    }
    if let Some(twice) = algorithms
        .iter()
        .enumerate()
        .find_map(|(i, name)| algorithms.get(..i)?.contains(name).then_some(name))
    {
        return Err(format!("a column line that names {twice} twice"));
    }
    Ok(algorithms.iter().map(|name| algorithm_of(name)).collect())
}

/// md5, sha1, sha256, tiger and whirlpool.
const HASHDEEP_ALGORITHMS: usize = 5;

/// One file line under `columns`: its size, the digest of column `pick`,
/// and its name; `Err` says what is wrong with it.
pub(crate) fn parse_line(
    line: &[u8],
    columns: &[Option<Algorithm>],
    pick: usize,
) -> Result<(u64, Digest, Vec<u8>), String> {
    let mut fields = line.splitn(columns.len() + 2, |&b| b == b',');
    let size = fields
        .next()
        .and_then(|s| std::str::from_utf8(s).ok())
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or("a line without a size")?;
    let mut picked = None;
    for (i, column) in columns.iter().enumerate() {
        let hex = fields.next().ok_or("a line with too few fields")?;
        if i == pick {
            let algorithm = column.ok_or("a column fastsum does not compute")?;
            let digest = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| Digest::from_hex(h).ok())
                .filter(|d| d.len() == algorithm.output_len())
                .ok_or_else(|| format!("a bad {algorithm} digest"))?;
            picked = Some(digest);
        }
    }
    let name = fields.next().filter(|n| !n.is_empty()).ok_or("a line without a file name")?;
    let digest = picked.ok_or("a line without the digest")?;
    Ok((size, digest, super::lines::held(name)?))
}

/// A line's digests, each with its column's algorithm.
pub(crate) type Digests = Vec<(Algorithm, Digest)>;

/// One file line under `columns` with every column's digest: its size,
/// the digests of the columns fastsum computes (in their order: tiger and
/// whirlpool are left out), and its name; `Err` says what is wrong with it.
pub(crate) fn parse_line_all(
    line: &[u8],
    columns: &[Option<Algorithm>],
) -> Result<(u64, Digests, Vec<u8>), String> {
    let mut digests = Vec::with_capacity(columns.len());
    let mut rest = (0, Vec::new());
    for (pick, column) in columns.iter().enumerate() {
        let Some(algorithm) = *column else {
            continue;
        };
        let (size, digest, name) = parse_line(line, columns, pick)?;
        digests.push((algorithm, digest));
        rest = (size, name);
    }
    if digests.is_empty() {
        return Err("none of its columns is md5, sha1 or sha256".into());
    }
    Ok((rest.0, digests, rest.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_bad_ones_say_why() {
        let md5 = Algorithm::Md5.hash_bytes(b"abc");
        let sha = Algorithm::Sha256.hash_bytes(b"abc");
        let line = line(3, &[&md5, &sha], b"dir/a,b").unwrap();
        let both = columns(b"%%%% size,md5,sha256,filename").unwrap();
        let text = &line[..line.len() - 1];
        assert_eq!(parse_line(text, &both, 1).unwrap(), (3, sha, b"dir/a,b".to_vec()));
        assert_eq!(parse_line(text, &both, 0).unwrap().1, md5);
        assert!(super::line(1, &[&md5], b"new\nline").is_none());
        let tiger = columns(b"%%%% size,tiger,md5,filename").unwrap();
        assert_eq!(tiger, [None, Some(Algorithm::Md5)]);
        // Names in any case, as hashdeep reads them; twice in two cases is twice.
        let upper = columns(b"%%%% SIZE,MD5,Sha256,TIGER,FileName").unwrap();
        assert_eq!(upper, [Some(Algorithm::Md5), Some(Algorithm::Sha256), None]);
        assert_eq!(uncomputed_names(b"%%%% SIZE,MD5,TIGER,Whirlpool,FILENAME").as_deref(), Some("TIGER and Whirlpool"));
        assert_eq!(uncomputed_names(b"%%%% Size,MD5,SHA1,filename"), None);
        assert!(columns(b"%%%% size,MD5,md5,filename").unwrap_err().contains("twice"));
        for bad in [&b"x,abc,name"[..], b"3,zz,name", b"3,", b"3", b"", b"3,900150983cd24fb0d6963f7d28e17f72,"] {
            assert!(parse_line(bad, &columns(b"%%%% size,md5,filename").unwrap(), 0).is_err());
        }
        for bad in [&b"size,md5,filename"[..], b"%%%% md5,filename", b"%%%% size,filename"] {
            assert!(columns(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn columns_take_only_hashdeep_algorithms() {
        assert_eq!(Columns::new(&[Algorithm::Md5, Algorithm::Blake3]), Err(Algorithm::Blake3));
        let columns = Columns::new(&[Algorithm::Md5, Algorithm::Sha256]).unwrap();
        let head = columns.header(b"/srv", b"fastsum -r x");
        let second = head.split(|&b| b == b'\n').nth(1).unwrap();
        assert_eq!(Columns::read(second).unwrap(), [Some(Algorithm::Md5), Some(Algorithm::Sha256)]);
        assert!(head.starts_with(Columns::MAGIC));
    }
}
