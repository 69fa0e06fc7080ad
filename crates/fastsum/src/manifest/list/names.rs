//! What a list's name says and why a list is in no format: the words of
//! `fastsum -c` when `-a` is not given or a list cannot be read.

use super::{tag_len, ListFormat};
use crate::algo::Algorithm;

/// The algorithm a list's file name gives its untagged lines, its
/// basename read case-insensitively: `ALGOSUMS` (`SHA256SUMS`,
/// `XXH128SUMS`, Debian's `pkg.md5sums`), `algosums.txt`, `algosum.txt`,
/// or a name ending `.ALGO` (`x.iso.sha256`, `x.xxh128`, `x.b3`, `x.b2`),
/// ALGO any name or alias `-a` takes but cksum's and sum's checksums
/// (`crc`, `bsd`, `sysv`, `crc32b`): what `-c` reads them as when `-a` is
/// not given.
pub fn algorithm_of_list_name(name: &[u8]) -> Option<Algorithm> {
    let base = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
    let base = String::from_utf8_lossy(base).to_ascii_lowercase();
    let (stem, txt) = match base.strip_suffix(".txt") {
        Some(stem) => (stem, true),
        None => (base.as_str(), false),
    };
    let word = match (stem.strip_suffix("sums"), stem.strip_suffix("sum")) {
        (Some(word), _) => word,
        (None, Some(word)) if txt => word,
        _ => stem.rsplit_once('.')?.1,
    };
    // `pkg.md5sums`: the word after the last dot.
    let word = word.rsplit('.').next().unwrap_or(word);
    let algorithm: Algorithm = word.parse().ok()?;
    (!algorithm.is_legacy()).then_some(algorithm)
}

/// The file a one-digest list (`x.iso.sha256` holding only the digest)
/// names: the list's name without its algorithm's extension.
pub fn file_of_list_name(name: &[u8]) -> Option<&[u8]> {
    let dot = name.iter().rposition(|&b| b == b'.')?;
    let (file, ext) = (name.get(..dot)?, name.get(dot..)?);
    // `bash.md5sums` (Debian's) is a list of many files, not of `bash`.
    let many = ext.to_ascii_lowercase().ends_with(b"sums");
    let named = !ext.contains(&b'/') && !file.is_empty() && !file.ends_with(b"/") && !many;
    (named && algorithm_of_list_name(ext).is_some()).then_some(file)
}

/// Why a list whose first entry line is `first` is in no format fastsum
/// reads: the closest format, and what of it did not fit.
pub fn explain(first: &[u8]) -> String {
    let format = ListFormat::detect(first);
    let why = match format {
        ListFormat::Lines => lines_misfit(first),
        ListFormat::Sfv => "its lines are not NAME then 8 hex digits".to_string(),
        _ => "its first entry could not be read".to_string(),
    };
    format!("closest format: {}; {why}", format.describe())
}

/// What in `line` is not a GNU or BSD checksum line.
fn lines_misfit(line: &[u8]) -> String {
    let bare = line.strip_prefix(b"\\").unwrap_or(line);
    let digits = bare.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let tag = tag_len(bare);
    let word = String::from_utf8_lossy(bare.get(..tag).unwrap_or_default()).into_owned();
    let after_tag = bare.get(tag..).unwrap_or_default();
    if tag > 0 && (after_tag.starts_with(b" (") || after_tag.starts_with(b"(")) {
        let known = Algorithm::ALL.iter().find(|a| a.tag() == word);
        return match known {
            None => format!("the tag {word:?} names no algorithm fastsum checks"),
            Some(a) => format!(
                "{word} lines are TAG (NAME) = HEX with {} hex digits",
                2 * a.output_len()
            ),
        };
    }
    if digits > 0 && bare.get(digits).is_some_and(|b| *b == b' ' || *b == b'\t') {
        return format!("{digits} hex digits are the digest of no algorithm given (see -a)");
    }
    "the line starts with neither a hex digest (HEX  NAME) nor a tag (TAG (NAME) = HEX)".to_string()
}
