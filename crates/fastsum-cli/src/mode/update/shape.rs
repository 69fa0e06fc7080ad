//! What an old list looks like: its shape (tagged or untagged lines,
//! `--json`, hashdeep), its terminator, and whether it gives several
//! digests a file, each decided from its parsed lines.

use std::io::{BufRead, Read};
use std::path::Path;

use fastsum::Algorithm;

/// The start of a list read to learn its shape and algorithm: its lines
/// up to here, whole.
pub(super) const HEAD: u64 = 64 << 10;

/// How a manifest's lines look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    Untagged,
    Tagged,
    Json,
    Hashdeep,
}

/// The shape of a list, the one decision `--update` writes it back by:
/// hashdeep's header or JSON records from its first line
/// that is not a comment; checksum lines from how the list reader parses
/// them, never from their raw look: an escaped first name
/// (`\SHA256 (a\\b) = ...`) starts a tagged line all the same. A list
/// whose lines are of both shapes is refused: one shape would be written
/// for all of them.
pub(super) fn shape_of(head: &[u8], terminator: u8) -> Result<Shape, String> {
    let first = first_line(&mut &head[..], terminator);
    if first.starts_with(fastsum::manifest::hashdeep::Columns::MAGIC) {
        return Ok(Shape::Hashdeep);
    }
    if first.starts_with(b"{") {
        return Ok(Shape::Json);
    }
    use fastsum::manifest::gnu::{CheckParser, TagPolicy};
    // Untagged lines of any digest length parse (BLAKE2b's reading), so
    // a line that does not parse is one -c would not read either.
    let mut parser = CheckParser::new(TagPolicy::Any(Algorithm::Blake2b { output_len: 64 }));
    let mut shapes = head
        .split(|&b| b == terminator)
        .filter(|line| !line.is_empty() && !line.starts_with(b"#"))
        .filter_map(|line| parser.parse(line.strip_suffix(b"\r").unwrap_or(line)))
        .map(|line| match line.tagged {
            true => Shape::Tagged,
            false => Shape::Untagged,
        });
    let shape = shapes.next().unwrap_or(Shape::Untagged);
    match shapes.all(|s| s == shape) {
        true => Ok(shape),
        false => Err("its lines are tagged and untagged both: it cannot be written back in one shape; nothing was changed".into()),
    }
}

/// The list's first whole records (up to `HEAD` bytes) and their
/// terminator: records written with -z are kept NUL-terminated (their
/// names unescaped, as -z writes them).
pub(super) fn head_of(file: std::fs::File) -> std::io::Result<(Vec<u8>, u8)> {
    let mut head = Vec::new();
    file.take(HEAD).read_to_end(&mut head)?;
    let terminator = match nul_terminated(&head) {
        true => 0,
        false => b'\n',
    };
    if head.len() as u64 == HEAD {
        let whole = head
            .iter()
            .rposition(|&b| b == terminator)
            .map_or(0, |at| at + 1);
        head.truncate(whole);
    }
    Ok((head, terminator))
}

/// Whether a list's records are NUL-terminated (-z): a NUL in its first
/// block, as the list reader tells them (a checksum line holds no NUL; a
/// -z record's name may hold newlines).
fn nul_terminated(head: &[u8]) -> bool {
    head.contains(&0)
}

/// The list's first line that is not a comment (`#`), with its
/// terminator; what was read before it is dropped (comments only).
fn first_line(reader: &mut impl BufRead, terminator: u8) -> Vec<u8> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if fastsum::manifest::lines::read_line(reader, terminator, &mut line).unwrap_or(0) == 0
            || !line.starts_with(b"#")
        {
            return line;
        }
    }
}

/// How many digest columns a hashdeep list's header names.
pub(super) fn columns_in(head: &[u8]) -> usize {
    let header = head.split(|&b| b == b'\n').nth(1).unwrap_or_default();
    fastsum::manifest::hashdeep::Columns::read(header).map_or(0, |c| c.len())
}

/// The header lines (`%%%%` and `##`) a hashdeep list at `path` starts
/// with, as they are.
pub(super) fn hashdeep_header_of(path: &Path) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let file = fastsum::open_regular(path).ok()?;
    file.take(HEAD).read_to_end(&mut head).ok()?;
    let mut end = 0;
    for line in head.split_inclusive(|&b| b == b'\n') {
        if !line.ends_with(b"\n") || !(line.starts_with(b"%%%%") || line.starts_with(b"##")) {
            break;
        }
        end += line.len();
    }
    head.starts_with(fastsum::manifest::hashdeep::Columns::MAGIC)
        .then(|| head[..end].to_vec())
}

/// Whether the list at `path` gives several digests a file (several
/// `-a`): a hashdeep header of several columns, a `--json` record with
/// `"digests"` anywhere in it (the text `"digests":` is in no name: a
/// name's quotes are escaped), or tagged lines of more than one
/// algorithm (`algorithms`, from every line).
pub(super) fn gives_several(
    path: &Path,
    head: &[u8],
    shape: Shape,
    algorithms: &[Algorithm],
) -> Result<bool, String> {
    match shape {
        Shape::Hashdeep => Ok(columns_in(head) > 1),
        Shape::Tagged => Ok(algorithms.len() > 1),
        Shape::Untagged => Ok(false),
        Shape::Json => {
            let file = fastsum::open_regular(path).map_err(|e| e.kind().to_string())?;
            for line in std::io::BufReader::new(file).split(b'\n') {
                let line = line.map_err(|e| fastsum::Error::os_message(&e))?;
                if line.windows(11).any(|w| w == b"\"digests\":{") {
                    return Ok(true);
                }
            }
            Ok(false)
        }
    }
}
