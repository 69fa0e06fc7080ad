//! What the remote host sends back, read as it streams. Nothing in it is
//! trusted: fields are bounded, one trailer closes the stream and nothing
//! follows it, every path lies under the requested root, once.

use std::io::BufRead;

use super::script::library_name;
use super::{Method, RemoteRecord};
use crate::dirdigest::Offers;
use crate::algo::Algorithm;
use crate::digest::Digest;

const END: &[u8] = b"\0fastsum-remote-end\0";
const FAILED: &[u8] = b"\0fastsum-remote-failed\0";
const HASHES: &[u8] = b"\0fastsum-remote-hashes\0";
const BATCH: &[u8] = b"\0fastsum-remote-batch\0";
/// Before the end trailer of a listing made with `find`: how many symbolic
/// links it left out (fastsum's own method says so in its records).
const LINKS: &[u8] = b"\0fastsum-remote-links\0";

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

    /// After the separator that opens a trailer: the trailer (the count of
    /// links left out, then the end), then nothing. `Ok` (with the count)
    /// only for the end trailer.
    fn trailer(&mut self, method: Method) -> Result<u64, String> {
        let mut word = self.expect(0)?;
        let mut links = 0;
        if word == self::word(LINKS) {
            links = count(&self.expect(0)?)?;
            word = self.expect(0)?;
        }
        if word == self::word(END) {
            if self.field(0)?.is_some() {
                return Err("the remote sent more after its end trailer".into());
            }
            return Ok(links);
        }
        if word == self::word(FAILED) {
            return Err(format!(
                "the {} method failed on the remote host: {HOST_FAILED}",
                method.name()
            ));
        }
        Err(format!(
            "an unexpected field from the remote: {}",
            shown(&word)
        ))
    }
}

/// A count the host sent: decimal digits that fit in 64 bits.
fn count(field: &[u8]) -> Result<u64, String> {
    std::str::from_utf8(field)
        .ok()
        .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("a bad count from the remote: {}", shown(field)))
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

pub(crate) const INCOMPLETE: &str =
    "the connection ended before the listing did: the result would be incomplete";

/// How a refusal ends when the host's own trailer said its method failed
/// (its stderr says why).
const HOST_FAILED: &str = "the listing is incomplete";

/// The host ended its listing with its failure trailer: it is finishing,
/// and what it says on stderr is the reason.
pub(crate) fn host_failed(why: &str) -> bool {
    why.ends_with(HOST_FAILED)
}

/// What a whole listing said besides its records.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// The method that made it.
    pub(crate) method: Method,
    /// The symbolic links under the root it left out (as `-r` does).
    pub(crate) symlinks: u64,
}

/// Reads what the script sent back for the tree at `root` (as the script
/// spelled it), handing each record to `sink` in path order: as it
/// arrives when the host sends its listing sorted, else all at the end.
/// Every path must lie under `root`, once. An error can come after some
/// records went out: the caller decides what they were worth.
pub(crate) fn parse(
    input: impl std::io::BufRead,
    algorithm: Algorithm,
    root: &[u8],
    offers: Option<&Offers>,
    sink: &mut dyn FnMut(RemoteRecord),
) -> Result<Parsed, String> {
    let mut stream = Stream { input };
    let first = stream.field(b'\n')?.unwrap_or_default();
    let (first, sorted) = match first.strip_suffix(b" sorted") {
        Some(method) => (method.to_vec(), true),
        None => (first, false),
    };
    let method = method_line(&first, algorithm)?;
    let mut emit = Emit {
        root,
        sorted,
        last: None,
        held: Vec::new(),
        sink,
    };
    let symlinks = match method {
        Method::Fastsum => parse_json(&mut stream, algorithm, offers, &mut emit)?,
        Method::Coreutils => parse_coreutils(&mut stream, algorithm, &mut emit)?,
        Method::Bsd | Method::Perl | Method::Python => {
            parse_tagged(&mut stream, algorithm, method, &mut emit)?
        }
    };
    emit.finish()?;
    Ok(Parsed { method, symlinks })
}

/// Records on their way to the sink: each checked to lie under the root;
/// in a sorted stream each after the last (so none twice), handed on at
/// once; otherwise held, then sorted and checked at the end.
struct Emit<'a> {
    root: &'a [u8],
    sorted: bool,
    last: Option<Vec<u8>>,
    held: Vec<RemoteRecord>,
    sink: &'a mut dyn FnMut(RemoteRecord),
}

impl Emit<'_> {
    fn push(&mut self, record: RemoteRecord) -> Result<(), String> {
        // A directory's record (`root/`, `root/sub/`) names it with a
        // separator after it.
        let named = match record.path.strip_suffix(b"/") {
            Some(dir) if record.directory && !dir.is_empty() => dir,
            _ => &record.path[..],
        };
        under(self.root, named)?;
        if !self.sorted {
            self.held.push(record);
            return Ok(());
        }
        match self.last.as_deref() {
            Some(last) if last == record.path.as_slice() => {
                return Err(format!("the remote listed {} twice", shown(last)))
            }
            Some(last) if last > record.path.as_slice() => {
                return Err(format!(
                    "the remote said its listing was sorted, and {} came after {}",
                    shown(&record.path),
                    shown(last)
                ))
            }
            _ => {}
        }
        self.last = Some(record.path.clone());
        (self.sink)(record);
        Ok(())
    }

    fn finish(mut self) -> Result<(), String> {
        let mut held = std::mem::take(&mut self.held);
        held.sort_by(|a, b| a.path.cmp(&b.path));
        if let Some([twice, _]) = held
            .windows(2)
            .find(|p| matches!(p, [a, b] if a.path == b.path))
        {
            return Err(format!("the remote listed {} twice", shown(&twice.path)));
        }
        held.into_iter().for_each(|r| (self.sink)(r));
        Ok(())
    }
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
        b"fastsum-remote-special" => Err(
            "neither a regular file nor a directory (a FIFO, socket or device is never read: \
             it could wait forever)"
                .into(),
        ),
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

/// fastsum's `--json` lines, then its trailer; the links its records say
/// it left out are counted.
fn parse_json<R: std::io::BufRead>(
    stream: &mut Stream<R>,
    algorithm: Algorithm,
    offers: Option<&Offers>,
    emit: &mut Emit<'_>,
) -> Result<u64, String> {
    let mut links = 0;
    loop {
        match stream.raw(b'\n')? {
            // The trailer closes the stream, with no newline after it.
            Some((last, false)) if last == END => return Ok(links),
            Some((last, false)) if last.starts_with(FAILED) => {
                return Err(format!(
                    "the {} method failed on the remote host: {HOST_FAILED}",
                    Method::Fastsum.name()
                ))
            }
            None | Some((_, false)) => return Err(INCOMPLETE.into()),
            Some((line, true)) if line.is_empty() || line.contains(&0) => {
                return Err("an unexpected line from the remote".into())
            }
            Some((line, true)) => match json_record(&line, algorithm)? {
                Json::Record(record) if record.directory => {
                    matched_offer(&record, emit.root, offers)?;
                    emit.push(record)?
                }
                Json::Record(record) => emit.push(record)?,
                Json::Skipped { symlink } => links += u64::from(symlink),
            },
        }
    }
}

fn parse_coreutils<R: std::io::BufRead>(
    stream: &mut Stream<R>,
    algorithm: Algorithm,
    emit: &mut Emit<'_>,
) -> Result<u64, String> {
    loop {
        // A batch: its names up to an empty field; an empty field first
        // is the end of the batches and opens the trailer.
        let first = stream.expect(0)?;
        if first.is_empty() {
            return stream.trailer(Method::Coreutils);
        }
        let mut listed = vec![first];
        loop {
            let path = stream.expect(0)?;
            if path.is_empty() {
                break;
            }
            listed.push(path);
        }
        marker(stream, HASHES)?;
        let hashed = batch_hashes(stream, algorithm)?;
        coreutils_records(listed, hashed, emit)?;
    }
}

/// The next field must be `expected`'s word (a failure trailer says so).
fn marker<R: std::io::BufRead>(stream: &mut Stream<R>, expected: &[u8]) -> Result<(), String> {
    let marker = stream.expect(0)?;
    if marker == word(expected) {
        return Ok(());
    }
    Err(match marker.as_slice() {
        b"fastsum-remote-failed" => format!(
            "the {} method failed on the remote host: {HOST_FAILED}",
            Method::Coreutils.name()
        ),
        _ => "the listing ended early".into(),
    })
}

/// A batch's `HEX  NAME` lines, up to its end marker.
fn batch_hashes<R: std::io::BufRead>(
    stream: &mut Stream<R>,
    algorithm: Algorithm,
) -> Result<std::collections::HashMap<Vec<u8>, Digest>, String> {
    let width = 2 * algorithm.output_len();
    let mut hashed = std::collections::HashMap::new();
    loop {
        let line = stream.expect(0)?;
        if line.is_empty() {
            marker(stream, BATCH)?;
            return Ok(hashed);
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
}

/// A batch's records: a listed file the tool did not answer for could not
/// be read (its message went to the remote's stderr); an answer for a
/// file that was not listed is a lie.
fn coreutils_records(
    listed: Vec<Vec<u8>>,
    mut hashed: std::collections::HashMap<Vec<u8>, Digest>,
    emit: &mut Emit<'_>,
) -> Result<(), String> {
    let mut records = Vec::with_capacity(listed.len());
    for path in listed {
        let digest = hashed
            .remove(&path)
            .ok_or_else(|| "could not be read on the remote host".to_string());
        records.push(RemoteRecord {
            path,
            digest,
            directory: false,
        });
    }
    if let Some(extra) = hashed.keys().next() {
        return Err(format!(
            "the remote tool hashed a file it did not list: {}",
            shown(extra)
        ));
    }
    records.into_iter().try_for_each(|r| emit.push(r))
}

fn parse_tagged<R: std::io::BufRead>(
    stream: &mut Stream<R>,
    algorithm: Algorithm,
    method: Method,
    emit: &mut Emit<'_>,
) -> Result<u64, String> {
    loop {
        let head = stream.expect(0)?;
        let Some((&tag, rest)) = head.split_first() else {
            return stream.trailer(method);
        };
        let path = stream.expect(0)?;
        let digest = match tag {
            b'D' => Ok(digest_of(rest, algorithm)?),
            b'E' => Err(String::from_utf8_lossy(rest).into_owned()),
            _ => return Err("an unexpected record from the remote script".into()),
        };
        emit.push(RemoteRecord {
            path,
            digest,
            directory: false,
        })?;
    }
}

#[path = "stream_json.rs"]
mod json;
use json::{json_record, matched_offer, Json};

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
