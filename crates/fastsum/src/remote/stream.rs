//! What the remote host sends back, read as it streams. Nothing in it is
//! trusted: fields are bounded, one trailer closes the stream and nothing
//! follows it, every path lies under the requested root, once.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

use std::io::BufRead;

use super::script::library_name;
use super::{Method, RemoteListing, RemoteRecord};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::manifest::json_read::{parse_object, Value};
use crate::manifest::read::decode_base64;

const END: &[u8] = b"\0fastsum-remote-end\0";
const FAILED: &[u8] = b"\0fastsum-remote-failed\0";
const HASHES: &[u8] = b"\0fastsum-remote-hashes\0";

fn digest_of(hex: &[u8], algorithm: Algorithm) -> Result<Digest, String> {
    std::str::from_utf8(hex)
        .ok()
        .and_then(|h| Digest::from_hex(h).ok())
        .filter(|d| d.len() == algorithm.output_len())
        .ok_or_else(|| format!("bad digest from the remote: {}", shown(hex)))
}

/// The longest field (a path, a digest line, a JSON record) a host may
/// send: far past any `PATH_MAX`; a longer one is refused, not buffered.
const FIELD_LIMIT: u64 = 1 << 20;

/// The stream from the host, read a field at a time: nothing in it is
/// trusted (sizes are bounded, every shape is checked).
struct Stream<R> {
    input: R,
}

impl<R: std::io::BufRead> Stream<R> {
    /// The next field up to `end` (which is dropped) and whether `end`
    /// closed it (not at the end of the stream); `None` at the end.
    fn raw(&mut self, end: u8) -> Result<Option<(Vec<u8>, bool)>, String> {
        let mut field = Vec::new();
        let read = std::io::Read::take(&mut self.input, FIELD_LIMIT + 1)
            .read_until(end, &mut field)
            .map_err(|e| format!("reading from the remote: {e}"))?;
        if read == 0 {
            return Ok(None);
        }
        let closed = field.last() == Some(&end);
        if closed {
            field.pop();
        } else if field.len() as u64 > FIELD_LIMIT {
            return Err("a field of more than 1 MiB from the remote".into());
        }
        Ok(Some((field, closed)))
    }

    /// The next field up to `end`, `None` at the end of the stream; a last
    /// field without `end` is an error.
    fn field(&mut self, end: u8) -> Result<Option<Vec<u8>>, String> {
        match self.raw(end)? {
            None => Ok(None),
            Some((field, true)) => Ok(Some(field)),
            Some((_, false)) => Err(INCOMPLETE.into()),
        }
    }

    /// A field that must be there.
    fn expect(&mut self, end: u8) -> Result<Vec<u8>, String> {
        self.field(end)?.ok_or_else(|| INCOMPLETE.to_string())
    }

    /// After the separator that opens a trailer: the trailer, then
    /// nothing. `Ok` only for the end trailer.
    fn trailer(&mut self, method: Method) -> Result<(), String> {
        let word = self.expect(0)?;
        if word == self::word(END) {
            if self.field(0)?.is_some() {
                return Err("the remote sent more after its end trailer".into());
            }
            return Ok(());
        }
        if word == self::word(FAILED) {
            return Err(format!(
                "the {} method failed on the remote host: the listing is incomplete",
                method.name()
            ));
        }
        Err(format!(
            "an unexpected field from the remote: {}",
            shown(&word)
        ))
    }
}

/// The start of what a host sent, for a message (at most 200 bytes).
fn shown(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes.get(..200).unwrap_or(bytes))
}

/// A trailer's word: the marker without the NULs around it.
fn word(marker: &[u8]) -> &[u8] {
    marker
        .strip_prefix(b"\0")
        .and_then(|m| m.strip_suffix(b"\0"))
        .unwrap_or(marker)
}

const INCOMPLETE: &str =
    "the connection ended before the listing did: the result would be incomplete";

/// Reads what the script sent back for the tree at `root` (as the script
/// spelled it). Every path must lie under `root`, once.
pub(crate) fn parse(
    input: impl std::io::BufRead,
    algorithm: Algorithm,
    root: &[u8],
) -> Result<RemoteListing, String> {
    let mut stream = Stream { input };
    let first = stream.field(b'\n')?.unwrap_or_default();
    let method = method_line(&first, algorithm)?;
    let mut records = match method {
        Method::Fastsum => parse_json(&mut stream, algorithm)?,
        Method::Coreutils => parse_coreutils(&mut stream, algorithm)?,
        Method::Bsd | Method::Perl | Method::Python => {
            parse_tagged(&mut stream, algorithm, method)?
        }
    };
    records.sort_by(|a, b| a.path.cmp(&b.path));
    for record in &records {
        under(root, &record.path)?;
    }
    if let Some([twice, _]) = records
        .windows(2)
        .find(|p| matches!(p, [a, b] if a.path == b.path))
    {
        return Err(format!("the remote listed {} twice", shown(&twice.path)));
    }
    Ok(RemoteListing {
        method,
        records,
        uploaded: false,
        upload_failed: None,
    })
}

/// The method the first line names, or the error it reports.
fn method_line(first: &[u8], algorithm: Algorithm) -> Result<Method, String> {
    match first {
        b"fastsum-remote-none"
            if library_name(algorithm).is_none() && algorithm.gnu_tool().is_none() =>
        {
            Err(format!(
                "no way to compute {algorithm} there: only fastsum can, and none is on its PATH \
                 (--remote-fastsum PATH names one; --upload-self sends this one)"
            ))
        }
        b"fastsum-remote-none" => Err(format!(
            "no way to compute {algorithm} there: it has neither fastsum, GNU coreutils, \
             BSD md5/shasum, perl with Digest::MD5/SHA, nor python3"
        )),
        b"fastsum-remote-missing" => Err("No such file or directory".into()),
        _ => match first.strip_prefix(b"fastsum-remote-unavailable ") {
            Some(m) => Err(format!(
                "the {} method is not available there",
                String::from_utf8_lossy(m)
            )),
            None => first
                .strip_prefix(b"fastsum-remote-method ")
                .and_then(|m| Method::from_name(std::str::from_utf8(m).ok()?))
                .ok_or_else(|| "the connection ended before the remote answered".into()),
        },
    }
}

/// `path` is `root` itself or below it, with no empty, `.` or `..` step
/// after it: a host cannot slip `/etc/passwd` or `root/../x` into a tree.
fn under(root: &[u8], path: &[u8]) -> Result<(), String> {
    let outside = || {
        Err(format!(
            "the remote listed a path outside {}: {}",
            String::from_utf8_lossy(root),
            shown(path)
        ))
    };
    if path.is_empty() {
        return Err("the remote listed an empty path".into());
    }
    if path == root {
        return Ok(());
    }
    let Some(rest) = path.strip_prefix(root) else {
        return outside();
    };
    let rest = match (root.last(), rest.strip_prefix(b"/")) {
        (Some(b'/'), _) => rest,
        (_, Some(rest)) => rest,
        _ => return outside(),
    };
    if rest
        .split(|&b| b == b'/')
        .any(|step| matches!(step, b"" | b"." | b".."))
    {
        return outside();
    }
    Ok(())
}

fn parse_json<R: std::io::BufRead>(
    stream: &mut Stream<R>,
    algorithm: Algorithm,
) -> Result<Vec<RemoteRecord>, String> {
    let mut records = Vec::new();
    loop {
        match stream.raw(b'\n')? {
            // The trailer closes the stream, with no newline after it.
            Some((last, false)) if last == END => return Ok(records),
            Some((last, false)) if last.starts_with(FAILED) => {
                return Err(format!(
                    "the {} method failed on the remote host: the listing is incomplete",
                    Method::Fastsum.name()
                ))
            }
            None | Some((_, false)) => return Err(INCOMPLETE.into()),
            Some((line, true)) if line.is_empty() || line.contains(&0) => {
                return Err("an unexpected line from the remote".into())
            }
            Some((line, true)) => records.extend(json_record(&line, algorithm)?),
        }
    }
}

/// One `--json` line: a record, or `None` for what `-r` leaves out.
fn json_record(line: &[u8], algorithm: Algorithm) -> Result<Option<RemoteRecord>, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a JSON line that is not UTF-8")?;
    let fields = parse_object(text)?;
    let get = |k: &str| {
        fields
            .iter()
            .find(|(n, _)| n == k)
            .and_then(|(_, v)| match v {
                Value::Text(t) => Some(t.as_str()),
                _ => None,
            })
    };
    if get("skipped").is_some() {
        return Ok(None); // symlinks and special files: left out, as -r does
    }
    let path = match (get("path_base64"), get("path")) {
        (Some(b64), _) => decode_base64(b64).ok_or("bad path_base64 from the remote")?,
        (None, Some(p)) => p.as_bytes().to_vec(),
        _ => return Err("a JSON record without a path".into()),
    };
    let digest = match (get("digest"), get("error")) {
        (Some(hex), _) => Ok(digest_of(hex.as_bytes(), algorithm)?),
        (None, Some(why)) => Err(why.to_string()),
        _ => return Err("a JSON record without a digest or an error".into()),
    };
    Ok(Some(RemoteRecord { path, digest }))
}

fn parse_coreutils<R: std::io::BufRead>(
    stream: &mut Stream<R>,
    algorithm: Algorithm,
) -> Result<Vec<RemoteRecord>, String> {
    // The listing, up to an empty field and the hashes' marker.
    let mut listed = Vec::new();
    loop {
        let path = stream.expect(0)?;
        if path.is_empty() {
            break;
        }
        listed.push(path);
    }
    let marker = stream.expect(0)?;
    if marker != word(HASHES) {
        return Err(match marker.as_slice() {
            b"fastsum-remote-failed" => format!(
                "the {} method failed on the remote host: the listing is incomplete",
                Method::Coreutils.name()
            ),
            _ => "the listing ended early".into(),
        });
    }
    let width = 2 * algorithm.output_len();
    let mut hashed = std::collections::HashMap::new();
    loop {
        let line = stream.expect(0)?;
        if line.is_empty() {
            stream.trailer(Method::Coreutils)?;
            break;
        }
        let (hex, rest) = line.split_at_checked(width).unwrap_or((&line, &[]));
        let name = match rest {
            [b' ', b' ' | b'*', name @ ..] => name,
            _ => {
                return Err(format!(
                    "unexpected line from the remote tool: {}",
                    shown(&line)
                ))
            }
        };
        let digest = digest_of(hex, algorithm)?;
        if hashed.insert(name.to_vec(), digest).is_some() {
            return Err("the remote tool hashed a file twice".into());
        }
    }
    // A listed file the tool did not answer for could not be read (its
    // message went to the remote's stderr); an answer for a file that was
    // not listed is a lie.
    let records: Vec<RemoteRecord> = listed
        .into_iter()
        .map(|path| {
            let digest = hashed
                .remove(&path)
                .ok_or_else(|| "could not be read on the remote host".to_string());
            RemoteRecord { path, digest }
        })
        .collect();
    if let Some(extra) = hashed.keys().next() {
        return Err(format!(
            "the remote tool hashed a file it did not list: {}",
            shown(extra)
        ));
    }
    Ok(records)
}

fn parse_tagged<R: std::io::BufRead>(
    stream: &mut Stream<R>,
    algorithm: Algorithm,
    method: Method,
) -> Result<Vec<RemoteRecord>, String> {
    let mut records = Vec::new();
    loop {
        let head = stream.expect(0)?;
        let Some((&tag, rest)) = head.split_first() else {
            stream.trailer(method)?;
            return Ok(records);
        };
        let path = stream.expect(0)?;
        let digest = match tag {
            b'D' => Ok(digest_of(rest, algorithm)?),
            b'E' => Err(String::from_utf8_lossy(rest).into_owned()),
            _ => return Err("an unexpected record from the remote script".into()),
        };
        records.push(RemoteRecord { path, digest });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "900150983cd24fb0d6963f7d28e17f72";

    fn md5(stream: &[u8], root: &str) -> Result<RemoteListing, String> {
        parse(stream, Algorithm::Md5, root.as_bytes())
    }

    fn tagged(records: &[(&str, &str)], tail: &[u8]) -> Vec<u8> {
        let mut s = b"fastsum-remote-method perl\n".to_vec();
        for (d, p) in records {
            s.extend_from_slice(format!("{d}\0{p}\0").as_bytes());
        }
        s.extend_from_slice(tail);
        s
    }

    #[test]
    fn a_stream_without_its_trailer_is_never_complete() {
        let good = tagged(&[(&format!("D{A}"), "r/a")], END);
        let listing = md5(&good, "r").unwrap();
        assert_eq!(listing.records.len(), 1);
        // Cut anywhere: never a listing.
        for cut in 0..good.len() {
            assert!(md5(&good[..cut], "r").is_err(), "cut at {cut}");
        }
        assert!(md5(&good[..good.len() - 5], "r")
            .unwrap_err()
            .contains("incomplete"));
        // Nothing applies: the message says what was looked for.
        let none = |a| parse(&b"fastsum-remote-none\n"[..], a, b"r").unwrap_err();
        assert!(none(Algorithm::Md5).contains("BSD md5/shasum, perl"));
        assert!(none(Algorithm::Xxh128).contains("only fastsum can"));
    }

    #[test]
    fn a_lying_host_is_refused_with_a_message() {
        // Issue 30.7: each of these was accepted (or panicked) before.
        let d = format!("D{A}");
        let twice_end = [END, END].concat();
        let failed_then_end = [FAILED, END].concat();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"fastsum-remote-method perl".to_vec(), "ended"),
            (tagged(&[(&d, "r/a")], b"\0\0"), ""),
            (tagged(&[(&d, "r/a"), ("", "r/b"), (&d, "r/c")], END), ""),
            (tagged(&[(&d, "r/a")], &twice_end), "after its end"),
            (tagged(&[(&d, "r/a")], &failed_then_end), "failed"),
            (tagged(&[(&d, "r/a"), (&d, "r/a")], END), "twice"),
            (tagged(&[(&d, "")], END), "empty path"),
            (tagged(&[(&d, "/etc/passwd")], END), "outside"),
            (tagged(&[(&d, "r/../../etc/x")], END), "outside"),
            (tagged(&[(&d, "r/./a")], END), "outside"),
            (tagged(&[(&d, "r//a")], END), "outside"),
            (tagged(&[(&d, "rx/a")], END), "outside"),
            (tagged(&[("Dnothex", "r/a")], END), "bad digest"),
            (tagged(&[(&format!("D{A}00"), "r/a")], END), "bad digest"),
            (tagged(&[("Xwhat", "r/a")], END), "unexpected"),
        ];
        for (stream, says) in cases {
            let e = md5(&stream, "r").expect_err(&String::from_utf8_lossy(&stream));
            assert!(
                e.contains(says),
                "{e} for {:?}",
                String::from_utf8_lossy(&stream)
            );
        }
        // A field past the limit is refused without being held whole.
        let mut long = b"fastsum-remote-method perl\nD".to_vec();
        long.resize(long.len() + (FIELD_LIMIT as usize) + 10, b'a');
        assert!(md5(&long, "r").unwrap_err().contains("1 MiB"));
    }

    #[test]
    fn the_coreutils_and_json_streams_are_checked_alike() {
        let hashes = [
            b"fastsum-remote-method coreutils\nr/a\0\0fastsum-remote-hashes\0".as_slice(),
            format!("{A}  r/a\0").as_bytes(),
        ]
        .concat();
        let ok = [hashes.as_slice(), END].concat();
        assert_eq!(md5(&ok, "r").unwrap().records.len(), 1);
        let unlisted = [
            hashes.as_slice(),
            format!("{A}  /etc/shadow\0").as_bytes(),
            END,
        ]
        .concat();
        assert!(md5(&unlisted, "r").unwrap_err().contains("did not list"));
        let twice = [hashes.as_slice(), format!("{A}  r/a\0").as_bytes(), END].concat();
        assert!(md5(&twice, "r").unwrap_err().contains("twice"));
        let json = |lines: &str, tail: &[u8]| {
            [
                format!("fastsum-remote-method fastsum\n{lines}").as_bytes(),
                tail,
            ]
            .concat()
        };
        let rec = format!("{{\"path\":\"r/a\",\"digest\":\"{A}\"}}\n");
        assert_eq!(md5(&json(&rec, END), "r").unwrap().records.len(), 1);
        for (stream, says) in [
            (json(&rec, b""), "incomplete"),
            (json(&rec, &[END, END].concat()), "incomplete"),
            (json(&rec, &[FAILED, END].concat()), "failed"),
            (json(&format!("{rec}\n"), END), "unexpected line"),
            (
                json("{\"path_base64\":\"====\",\"digest\":\"x\"}\n", END),
                "path_base64",
            ),
            (
                json(
                    &format!("{{\"path\":\"/etc/x\",\"digest\":\"{A}\"}}\n"),
                    END,
                ),
                "outside",
            ),
        ] {
            let e = md5(&stream, "r").expect_err(&String::from_utf8_lossy(&stream));
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn a_root_spelled_with_a_slash_or_a_dot_keeps_its_files() {
        let d = format!("D{A}");
        assert!(md5(&tagged(&[(&d, "/srv/a")], END), "/srv/").is_ok());
        assert!(md5(&tagged(&[(&d, "/a")], END), "/").is_ok());
        assert!(md5(&tagged(&[(&d, "./a")], END), ".").is_ok());
        assert!(md5(&tagged(&[(&d, "f")], END), "f").is_ok());
    }
}
