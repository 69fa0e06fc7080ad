//! What of a JSON Lines or hashdeep list fastsum's own writer would not
//! write back: `--update` writes every line again, so a list holding
//! something else is refused with nothing changed, never rewritten
//! without it (a record's unknown members, a comment after hashdeep's
//! header and a second run's section were dropped, exit 0). The readers
//! read past all of these; only a rewrite must not.

use std::io::BufRead;

use super::super::hashdeep::MAGIC;
use super::super::json_read::{parse_object, Value};
#[cfg(feature = "tree")]
use super::super::json::write_string;
use super::super::lines::read_line;
use super::Manifest;

/// The members of a record fastsum writes (docs/JSON.md): any other is
/// one a rewrite would drop.
const WRITTEN_MEMBERS: &[&str] = &[
    "path",
    "path_base64",
    "algorithm",
    "digest",
    "digests",
    "size",
    "device",
    "inode",
    "mtime_ns",
    "ctime_ns",
    "fsid",
    "error",
    "skipped",
    "directory_digest",
];

/// The format a list's first line that is neither blank nor a comment
/// says, and for hashdeep, whether its header is still being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    Nothing,
    Json,
    HashdeepHeader,
    HashdeepFiles,
}

impl Manifest {
    /// Whether fastsum's writer writes this list back line for line, as
    /// `--update` must: `Err` names the first line holding what it would
    /// not (`line N has the member "owner"`, `line N is a comment`,
    /// `line N starts another section`, `line N ends in CR LF`, a record
    /// written otherwise than fastsum writes it: spaces, other escapes,
    /// upper-case hex). Past
    /// its comments and blank lines, a list of neither JSON records nor
    /// hashdeep lines is not judged here (GNU and BSD lines have their
    /// own rule where they are rewritten). Lines neither reader can read
    /// are left to the readers.
    pub fn rewritable(mut reader: impl BufRead, terminator: u8) -> Result<(), String> {
        let mut line = Vec::new();
        let mut seen = Seen::Nothing;
        let mut number = 0u64;
        let mut columns = Vec::new();
        loop {
            let read = read_line(&mut reader, terminator, &mut line)
                .map_err(|e| crate::error::Error::os_message(&e))?;
            if read == 0 {
                return Ok(());
            }
            number += 1;
            if line.last() == Some(&terminator) {
                line.pop();
            }
            let unkept = |what: &str| Err(format!("line {number} {what}"));
            if terminator == b'\n' && line.last() == Some(&b'\r') {
                return unkept("ends in CR LF");
            }
            if line.is_empty() {
                continue;
            }
            seen = match seen {
                Seen::Nothing | Seen::Json if line.starts_with(b"#") => {
                    return unkept("is a comment")
                }
                Seen::Nothing if line == MAGIC => Seen::HashdeepHeader,
                Seen::Nothing if line.starts_with(b"{") => Seen::Json,
                Seen::Nothing => return Ok(()),
                Seen::Json => Seen::Json,
                // hashdeep's header: its magic, its columns and the `##`
                // lines after them, kept as they are.
                Seen::HashdeepHeader if line.starts_with(b"%%%%") && number <= 2 => {
                    columns = super::super::hashdeep::columns(&line).unwrap_or_default();
                    seen
                }
                Seen::HashdeepHeader if line.starts_with(b"##") => seen,
                Seen::HashdeepHeader | Seen::HashdeepFiles if line.starts_with(b"%%%%") => {
                    return unkept("starts another section (a second hashdeep run's)")
                }
                Seen::HashdeepFiles if line.starts_with(b"##") => return unkept("is a comment"),
                Seen::HashdeepHeader | Seen::HashdeepFiles => Seen::HashdeepFiles,
            };
            if seen == Seen::Json {
                let Ok(fields) = std::str::from_utf8(&line).map_err(drop).and_then(|l| parse_object(l).map_err(drop))
                else {
                    continue;
                };
                if let Some((name, _)) = fields.iter().find(|(k, _)| !WRITTEN_MEMBERS.contains(&k.as_str())) {
                    return unkept(&format!("has the member {name:?}"));
                }
                if let Some(how) = written_otherwise(&fields, &line) {
                    return unkept(how);
                }
            }
            if seen == Seen::HashdeepFiles && hashdeep_written_otherwise(&columns, &line) {
                return unkept("is a hashdeep line written otherwise than fastsum writes it (upper-case hex, a size with leading zeros)");
            }
        }
    }
}

/// How a record (`fields`, read from `line`) is written unlike the
/// record fastsum writes for what it says, which a rewrite would change
/// with nothing changed (a list once came back without its spaces and
/// with its digests in lower case, "0 modified", exit 0): JSON written
/// otherwise (spaces between members, `\u0061` for `a`, `1e3` ...)
/// or a digest in upper-case hex (fastsum writes lower case).
#[cfg(feature = "tree")]
fn written_otherwise(fields: &[(String, Value)], line: &[u8]) -> Option<&'static str> {
    fn object(out: &mut Vec<u8>, fields: &[(String, Value)]) {
        out.push(b'{');
        for (i, (name, value)) in fields.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_string(out, name);
            out.push(b':');
            match value {
                Value::Text(text) => write_string(out, text),
                Value::Number(number) => out.extend_from_slice(number.as_bytes()),
                Value::Null => out.extend_from_slice(b"null"),
                Value::Bool(yes) => out.extend_from_slice(if *yes { b"true" } else { b"false" }),
                Value::Object(inner) => object(out, inner),
            }
        }
        out.push(b'}');
    }
    let upper_hex = |value: &Value| {
        matches!(value, Value::Text(t) if t.bytes().all(|b| b.is_ascii_hexdigit())
            && t.bytes().any(|b| b.is_ascii_uppercase()))
    };
    let upper = fields.iter().any(|(name, value)| match (name.as_str(), value) {
        ("digest", value) => upper_hex(value),
        ("digests", Value::Object(inner)) => inner.iter().any(|(_, v)| upper_hex(v)),
        _ => false,
    });
    if upper {
        return Some("has a digest in upper-case hex (fastsum writes lower case)");
    }
    let mut written = Vec::with_capacity(line.len());
    object(&mut written, fields);
    (written != line).then_some("is JSON written otherwise than fastsum writes it (spaces, escapes or numbers)")
}

/// Whether a hashdeep file line (under `columns`) is written unlike
/// the line fastsum writes for what it says (hashdeep and fastsum write
/// lower-case hex and a plain size: `--update` rewrote an upper-case list
/// in lower case, "0 modified", exit 0). A line the reader cannot read is
/// left to the reader.
#[cfg(feature = "tree")]
fn hashdeep_written_otherwise(columns: &[Option<crate::Algorithm>], line: &[u8]) -> bool {
    use super::super::hashdeep;
    let Ok((size, digests, name)) = hashdeep::parse_line_all(line, columns) else {
        return false;
    };
    if digests.len() != columns.len() {
        return false; // columns fastsum does not compute: refused where it reads them
    }
    let digests: Vec<_> = digests.iter().map(|(_, d)| d).collect();
    hashdeep::line(size, &digests, &name).is_some_and(|written| written.strip_suffix(b"\n") != Some(line))
}

#[cfg(not(feature = "tree"))]
fn hashdeep_written_otherwise(_: &[Option<crate::Algorithm>], _: &[u8]) -> bool {
    false
}

#[cfg(not(feature = "tree"))]
fn written_otherwise(_: &[(String, Value)], _: &[u8]) -> Option<&'static str> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(list: &str) -> Result<(), String> {
        Manifest::rewritable(list.as_bytes(), b'\n')
    }

    #[test]
    fn what_fastsum_writes_is_rewritable() {
        let json = "{\"path\":\"a\",\"algorithm\":\"md5\",\"digest\":\"00\",\"size\":1,\"device\":1,\"inode\":2,\"mtime_ns\":3,\"ctime_ns\":4,\"fsid\":5}\n\
                    {\"path\":\"b\",\"path_base64\":\"Yg==\",\"digests\":{\"md5\":\"00\",\"whatever\":\"1\"},\"size\":1}\n\
                    \n{\"path\":\"c\",\"algorithm\":\"md5\",\"skipped\":\"fifo\"}\n";
        assert_eq!(said(json), Ok(()));
        let hashdeep = "%%%% HASHDEEP-1.0\n%%%% size,md5,filename\n## Invoked from: /t\n## $ hashdeep -r t\n##\n1,00,/t/a\n1,00,/t/b\n";
        assert_eq!(said(hashdeep), Ok(()));
        // GNU lines: only the comments before the first.
        assert_eq!(said("# a comment after\n00  a\n# here\n"), Err("line 1 is a comment".into()));
        assert_eq!(said("00  a\n# here\n"), Ok(()));
    }

    #[test]
    fn what_a_rewrite_would_drop_is_named() {
        let record = "{\"path\":\"a\",\"algorithm\":\"md5\",\"digest\":\"00\",\"size\":1}\n";
        let owner = format!("{record}{{\"path\":\"b\",\"algorithm\":\"md5\",\"digest\":\"00\",\"owner\":\"alice\"}}\n");
        assert_eq!(
            said(&owner),
            Err("line 2 has the member \"owner\"".into())
        );
        assert_eq!(said(&format!("{record}# note\n")), Err("line 2 is a comment".into()));
        assert_eq!(said(&format!("# note\n{record}")), Err("line 1 is a comment".into()));
        assert_eq!(said(&format!("{record}{}", record.replace('\n', "\r\n"))), Err("line 2 ends in CR LF".into()));
        let head = "%%%% HASHDEEP-1.0\n%%%% size,md5,filename\n## $ hashdeep\n##\n1,00,/t/a\n";
        assert_eq!(said(&format!("{head}## reviewed\n")), Err("line 6 is a comment".into()));
        assert_eq!(
            said(&format!("{head}{head}")),
            Err("line 6 starts another section (a second hashdeep run's)".into())
        );
        // A record read as a list's first line with a NUL terminator.
        assert_eq!(
            Manifest::rewritable(owner.replace('\n', "\0").as_bytes(), 0),
            Err("line 2 has the member \"owner\"".into())
        );
    }

    #[cfg(feature = "tree")]
    #[test]
    fn a_hashdeep_line_written_otherwise_is_named() {
        let head = "%%%% HASHDEEP-1.0\n%%%% size,md5,filename\n## $ hashdeep\n##\n";
        let says = |line: &str| said(&format!("{head}{line}\n"));
        let otherwise = Err("line 5 is a hashdeep line written otherwise than fastsum writes it (upper-case hex, a size with leading zeros)".to_string());
        let md5 = "d41d8cd98f00b204e9800998ecf8427e";
        assert_eq!(says(&format!("0,{md5},/t/b")), Ok(()));
        assert_eq!(says(&format!("0,{},/t/b", md5.to_uppercase())), otherwise);
        assert_eq!(says(&format!("00,{md5},/t/b")), otherwise);
        // tiger: not rebuilt here (the reader refuses or reads it).
        let tiger = "%%%% HASHDEEP-1.0\n%%%% size,md5,tiger,filename\n";
        assert_eq!(said(&format!("{tiger}0,{},AB,/t/b\n", md5.to_uppercase())), Ok(()));
    }
}
