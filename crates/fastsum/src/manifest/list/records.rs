//! fastsum's `--json` records as list entries: one digest
//! (`"algorithm"`, `"digest"`), several (`"digests": {"md5": ...}`, from
//! several `-a`), or a directory's (`"directory_digest"`, from `--dirs`);
//! `--stamps`' fields are read past (a check compares contents).

use super::{ListEntry, ListLine};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::manifest::json_read::{number_field, record_head, text_field, Value};

/// One line of a `--json` list.
pub(super) fn json_line(line: &[u8]) -> ListLine {
    if line.is_empty() {
        return ListLine::Nothing;
    }
    // A record that cannot be read or checked fails the check: a list
    // fastsum wrote holds none, and passed over as an improperly
    // formatted line (GNU's rule for text lines) its file went unchecked
    // with exit 0 (a member given twice, an empty digest, a "tiger"). A
    // line that is no record at all stays a problem (a checksum line
    // there is refused as a list joined: `joined_list`).
    match json_entry(line) {
        Ok(Some(entry)) => ListLine::Entry(entry),
        Ok(None) => ListLine::Nothing,
        Err(why) if line.starts_with(b"{") => ListLine::Refused(why),
        Err(why) if super::super::lines::out_of_memory(&why) => ListLine::Refused(why),
        Err(why) => ListLine::Problem(why),
    }
}

fn json_entry(line: &[u8]) -> Result<Option<ListEntry>, String> {
    let Some((fields, path)) = record_head(line)? else {
        return Ok(None);
    };
    if let Some(why) = uncomputed(&fields) {
        return Err(why);
    }
    let (digests, directory) = record_digests(&fields)?;
    if directory && path.last() != Some(&b'/') {
        return Err("a directory digest for a name without '/'".into());
    }
    Ok(Some(ListEntry {
        path,
        digests,
        size: number_field(&fields, "size"),
        directory,
    }))
}

/// Why a record's file cannot be checked, where its `"digests"` name one
/// fastsum does not compute (tiger, `sha2-256`): the file is refused,
/// never an improperly formatted line passed over with exit 0 (its other
/// digests unchecked, or a wrong tiger beside them), as under hashdeep's
/// tiger column.
fn uncomputed(fields: &[(String, Value)]) -> Option<String> {
    let inner = fields.iter().find_map(|(k, v)| match v {
        Value::Object(inner) if k == "digests" => Some(inner),
        _ => None,
    })?;
    let names: Vec<String> = inner
        .iter()
        .filter(|(name, _)| name.parse::<Algorithm>().is_err())
        .map(|(name, _)| format!("{name:?}"))
        .collect();
    (!names.is_empty()).then(|| {
        let names = names.join(" and ");
        format!("its {names} digest cannot be checked: fastsum does not compute it")
    })
}

/// A record's digests, and whether it is a directory's.
fn record_digests(fields: &[(String, Value)]) -> Result<(Vec<(Algorithm, Digest)>, bool), String> {
    let several = fields.iter().find_map(|(k, v)| match v {
        Value::Object(inner) if k == "digests" => Some(inner),
        _ => None,
    });
    if let Some(inner) = several {
        let mut digests = Vec::with_capacity(inner.len());
        for (name, value) in inner {
            let Value::Text(hex) = value else {
                return Err(format!("a {name} digest that is not a string"));
            };
            digests.push(checked_digest(name, hex)?);
        }
        if digests.is_empty() {
            return Err("a record with no digests".into());
        }
        return Ok((digests, false));
    }
    let text = |key: &str| text_field(fields, key);
    let algorithm = text("algorithm").ok_or("a record without an algorithm")?;
    let (hex, directory) = match text("directory_digest") {
        Some(d) => (d, true),
        None => (text("digest").ok_or("a record without a digest")?, false),
    };
    Ok((vec![checked_digest(algorithm, hex)?], directory))
}

/// The digest `hex` of the algorithm named `name`, of its length.
fn checked_digest(name: &str, hex: &str) -> Result<(Algorithm, Digest), String> {
    let algorithm: Algorithm = name
        .parse()
        .map_err(|_| format!("an algorithm fastsum does not know: {name:?}"))?;
    let not_hex = || format!("a {algorithm} digest that is not hex");
    // `HEX-N`: a digest of N parts (s3etag, crc32c/8MiB ...).
    let (hex, parts) = match algorithm.part_layout() {
        Some(_) => crate::digest::split_parts(hex).ok_or_else(not_hex)?,
        None => (hex, 0),
    };
    let digest = Digest::from_hex(hex).map_err(|_| not_hex())?.with_parts(parts);
    if digest.len() != algorithm.output_len() {
        return Err(format!("a digest of the wrong length for {algorithm}"));
    }
    Ok((algorithm, digest))
}
