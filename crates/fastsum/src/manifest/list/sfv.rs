//! Simple File Verification lists (`rhash --sfv`, cksfv): `NAME CRC32`,
//! the CRC-32 of zlib (fastsum's `crc32b`) as 8 hex digits after the last
//! blank; `;` starts a comment (both tools write their banner and, rhash,
//! each file's size and time that way).

use super::{ListEntry, ListLine};
use crate::algo::Algorithm;
use crate::digest::Digest;

/// Whether `line` has SFV's shape: a name, a blank, 8 hex digits.
pub(super) fn looks_like_sfv(line: &[u8]) -> bool {
    split(line).is_some()
}

/// The name and the CRC's 8 hex digits of an SFV line.
fn split(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let blank = line.iter().rposition(|&b| b == b' ' || b == b'\t')?;
    let (name, crc) = (line.get(..blank)?, line.get(blank + 1..)?);
    let name = trim_end(name);
    let ok = crc.len() == 8 && crc.iter().all(u8::is_ascii_hexdigit) && !name.is_empty();
    ok.then_some((name, crc))
}

fn trim_end(name: &[u8]) -> &[u8] {
    let keep = name
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |i| i + 1);
    name.get(..keep).unwrap_or_default()
}

/// One line of an SFV list.
pub(super) fn sfv_line(line: &[u8]) -> ListLine {
    if line.is_empty() || line.starts_with(b";") {
        return ListLine::Nothing;
    }
    let Some((name, crc)) = split(line) else {
        return ListLine::Problem("not an SFV line (NAME then 8 hex digits)".into());
    };
    let Ok(digest) = std::str::from_utf8(crc)
        .map_err(|_| ())
        .and_then(|hex| Digest::from_hex(hex).map_err(|_| ()))
    else {
        return ListLine::Problem("a CRC that is not hex".into());
    };
    ListLine::Entry(ListEntry {
        path: name.to_vec(),
        // The CRC alone: crc32b's digest starts with it (its size follows).
        digests: vec![(Algorithm::Crc32b, digest)],
        size: None,
        directory: false,
    })
}
