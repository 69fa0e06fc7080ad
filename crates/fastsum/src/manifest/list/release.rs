//! Debian's `Release` and `InRelease` files (deb822 fields; an
//! `InRelease` is the same, clearsigned): the checksum sections
//! `MD5Sum:`, `SHA1:`, `SHA256:` and `SHA512:` each list ` HASH SIZE
//! PATH` lines, paths relative to the file's directory. A file listed in
//! several sections is one entry with every digest (a check needs them
//! all), and its sizes must agree. The OpenPGP armour is read past: the
//! signature is not verified here.

use std::collections::HashMap;
use std::io::BufRead;

use super::{ListEntry, ListLine};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::manifest::lines::Lines;

const SIGNED: &[u8] = b"-----BEGIN PGP SIGNED MESSAGE-----";
const SIGNATURE: &[u8] = b"-----BEGIN PGP SIGNATURE-----";

/// Whether a list's first entry line starts a Release file: the
/// clearsigned armour, or a deb822 field (`Origin: Debian`).
pub(super) fn starts_release(first: &[u8]) -> bool {
    if first == SIGNED {
        return true;
    }
    let name = first
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
        .count();
    let after = first.get(name..).unwrap_or_default();
    name > 0
        && first.first().is_some_and(u8::is_ascii_alphabetic)
        && (after == b":" || after.starts_with(b": "))
}

/// The algorithm of a checksum section's field line (`SHA256:`), its name
/// matched as apt matches deb822 names: in any case (`sha256:`).
fn section(field: &[u8]) -> Option<Algorithm> {
    let name = field.strip_suffix(b":")?.trim_ascii_end();
    [
        (&b"MD5Sum"[..], Algorithm::Md5),
        (b"SHA1", Algorithm::Sha1),
        (b"SHA256", Algorithm::Sha256),
        (b"SHA512", Algorithm::Sha512),
    ]
    .into_iter()
    .find_map(|(known, algorithm)| name.eq_ignore_ascii_case(known).then_some(algorithm))
}

/// A Release file's entries, gathered from every section, handed out in
/// the order first listed.
#[derive(Default)]
pub(super) struct Sections {
    read: bool,
    entries: std::vec::IntoIter<(u64, ListLine)>,
}

impl Sections {
    pub(super) fn next<R: BufRead>(
        &mut self,
        lines: &mut Lines<R>,
    ) -> Result<Option<(u64, ListLine)>, String> {
        if !self.read {
            self.read = true;
            self.entries = gather(lines)?.into_iter();
        }
        Ok(self.entries.next())
    }
}

/// Every entry of every section, and the lines that could not be read.
fn gather<R: BufRead>(lines: &mut Lines<R>) -> Result<Vec<(u64, ListLine)>, String> {
    let mut out: Vec<(u64, ListLine)> = Vec::new();
    let mut by_path: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut current: Option<Algorithm> = None;
    let mut armour = Armour::Outside;
    while let Some((number, line)) = lines.next_line()? {
        let Some(line) = armour.content(line) else {
            continue;
        };
        if !line.starts_with(b" ") && !line.starts_with(b"\t") {
            current = section(line);
            continue;
        }
        let Some(algorithm) = current else {
            continue;
        };
        let read = entry_line(line, algorithm)
            .map_err(ListLine::Problem)
            .and_then(|entry| match super::confined(&entry.0) {
                Ok(()) => Ok(entry),
                Err(why) => Err(ListLine::Refused(why)),
            });
        match read {
            Err(line) => out.push((number, line)),
            Ok((path, digest, size)) => match by_path.get(&path).and_then(|&i| out.get_mut(i)) {
                Some((_, ListLine::Entry(entry))) => {
                    if entry.size != Some(size) {
                        out.push((number, ListLine::Problem("sizes differ between sections".into())));
                    } else {
                        entry.digests.push((algorithm, digest));
                    }
                }
                _ => {
                    by_path.insert(path.clone(), out.len());
                    let entry = ListEntry {
                        path,
                        digests: vec![(algorithm, digest)],
                        size: Some(size),
                        directory: false,
                    };
                    out.push((number, ListLine::Entry(entry)));
                }
            },
        }
    }
    Ok(out)
}

/// Where a line is in an `InRelease`'s clearsigned armour.
#[derive(PartialEq, Eq)]
enum Armour {
    Outside,
    Headers,
    Signature,
}

impl Armour {
    /// The signed text of `line` (dash-escaping undone), or `None` for the
    /// armour's own lines.
    fn content<'a>(&mut self, line: &'a [u8]) -> Option<&'a [u8]> {
        match self {
            _ if line == SIGNED => *self = Armour::Headers,
            _ if line == SIGNATURE => *self = Armour::Signature,
            Armour::Headers if line.is_empty() => *self = Armour::Outside,
            Armour::Headers => {}
            Armour::Signature if line.starts_with(b"-----END PGP") => *self = Armour::Outside,
            Armour::Signature => {}
            Armour::Outside => return Some(line.strip_prefix(b"- ").unwrap_or(line)),
        }
        None
    }
}

/// ` HASH SIZE PATH`.
fn entry_line(line: &[u8], algorithm: Algorithm) -> Result<(Vec<u8>, Digest, u64), String> {
    let text = std::str::from_utf8(line).map_err(|_| "a line that is not UTF-8".to_string())?;
    let mut fields = text.split_ascii_whitespace();
    let (Some(hex), Some(size), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
        return Err("not HASH SIZE PATH".into());
    };
    if fields.next().is_some() {
        return Err("more than HASH SIZE PATH".into());
    }
    let digest = Digest::from_hex(hex)
        .ok()
        .filter(|d| d.len() == algorithm.output_len())
        .ok_or_else(|| format!("a bad {algorithm} digest"))?;
    let size = size
        .parse::<u64>()
        .map_err(|_| "a size that is not a number".to_string())?;
    Ok((path.as_bytes().to_vec(), digest, size))
}
