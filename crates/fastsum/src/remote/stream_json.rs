//! One line of fastsum's own `--json` listing from a host: a file's
//! record, what `-r` left out, or a directory the host says matched what
//! was offered (checked against the offer).

use super::{digest_of, shown, Offers, RemoteRecord};
use crate::algo::Algorithm;
use crate::digest::decode_base64;
use crate::manifest::json_read::{parse_object, text_field};

/// What one `--json` line holds.
pub(super) enum Json {
    Record(RemoteRecord),
    /// What `-r` leaves out: a symbolic link, or a special file.
    Skipped { symlink: bool },
}

/// One `--json` line: a record, or what `-r` left out.
pub(super) fn json_record(line: &[u8], algorithm: Algorithm) -> Result<Json, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a JSON line that is not UTF-8")?;
    let fields = parse_object(text)?;
    let get = |key: &str| text_field(&fields, key);
    if let Some(kind) = get("skipped") {
        let symlink = kind == crate::walk::SpecialKind::Symlink.describe();
        return Ok(Json::Skipped { symlink });
    }
    let path = match (get("path_base64"), get("path")) {
        (Some(b64), _) => decode_base64(b64).ok_or("bad path_base64 from the remote")?,
        (None, Some(p)) => p.as_bytes().to_vec(),
        _ => return Err("a JSON record without a path".into()),
    };
    let (digest, directory) = match (get("digest"), get("error"), get("directory_digest")) {
        (Some(hex), None, None) => (Ok(digest_of(hex.as_bytes(), algorithm)?), false),
        (None, Some(why), None) => (Err(why.to_string()), false),
        (None, None, Some(hex)) => (Ok(digest_of(hex.as_bytes(), algorithm)?), true),
        _ => return Err("a JSON record without one digest or an error".into()),
    };
    Ok(Json::Record(RemoteRecord {
        path,
        digest,
        directory,
    }))
}

/// A directory the host left out as matched must be one offered, with
/// the digest offered: anything else would stand for files never listed.
pub(super) fn matched_offer(record: &RemoteRecord, root: &[u8], offers: Option<&Offers>) -> Result<(), String> {
    let refused = |why: &str| Err(format!("the remote {why}: {}", shown(&record.path)));
    let Some(offers) = offers else {
        return refused("sent a directory record it was not asked for");
    };
    let rest = record.path.strip_prefix(root).filter(|rest| {
        let under = rest.first().is_none_or(|&b| b == b'/') || root.ends_with(b"/");
        under && record.path.ends_with(b"/")
    });
    let Some(rest) = rest else {
        return refused("sent a directory record outside the root");
    };
    let mut key = rest;
    while let Some(shorter) = key.strip_prefix(b"/").or_else(|| key.strip_suffix(b"/")) {
        key = shorter;
    }
    let offered = offers.get(key);
    match offered {
        Some(d) if Ok(d) == record.digest.as_ref() => Ok(()),
        Some(_) => refused("said a directory matched with another digest than the one offered"),
        None => refused("said a directory matched that was not offered"),
    }
}

