//! An OpenPGP clearsigned file (RFC 9580 §7) split in its parts: the
//! unsigned text around the block (never checked; said to the user), the
//! signed text (dash-escapes undone), and the signature's armor. Exactly
//! one signed block: a second one is refused, not checked.

use super::{Refusal, RefusalKind};

const BEGIN: &[u8] = b"-----BEGIN PGP SIGNED MESSAGE-----";
const SIGNATURE: &[u8] = b"-----BEGIN PGP SIGNATURE-----";
const END: &[u8] = b"-----END PGP SIGNATURE-----";

/// A clearsigned file in its parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// The signed text, each line ending in `\n`, dash-escapes undone.
    pub message: Vec<u8>,
    /// The armored signature, its BEGIN and END lines included.
    pub signature: Vec<u8>,
    /// Lines outside the block (1-based number, text).
    pub unsigned: Vec<(u64, Vec<u8>)>,
    /// The hash algorithms its `Hash: ` armor headers name (`SHA256`),
    /// exactly as written: a signature over any other is refused, as gpgv
    /// refuses it (gpgv takes neither `Hash: sha512` nor `Hash:SHA512`
    /// for SHA512).
    pub hashes: Vec<String>,
}

/// Whether a line of `text` opens a clearsigned block.
pub fn has_header(text: &[u8]) -> bool {
    lines(text).any(|line| is(line, BEGIN))
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    body.split(|&b| b == b'\n')
        .filter(move |_| !text.is_empty())
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// `line` is `marker`, trailing white space allowed.
fn is(line: &[u8], marker: &[u8]) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.iter().all(|b| *b == b' ' || *b == b'\t'))
}

#[derive(PartialEq)]
enum Part {
    Before,
    Headers,
    Text,
    Signature,
    After,
}

/// `text` split in its parts; refused when it holds no complete block or
/// more than one.
pub fn split(text: &[u8]) -> Result<Block, Refusal> {
    let mut block = Block::default();
    let mut part = Part::Before;
    for (index, line) in lines(text).enumerate() {
        let number = index as u64 + 1;
        part = match part {
            Part::Before | Part::After if is(line, BEGIN) => {
                if part == Part::After {
                    return Err(Refusal::new(
                        RefusalKind::TwoBlocks,
                        format!("a second signed block at line {number}: one signed block per list"),
                    ));
                }
                Part::Headers
            }
            Part::Before | Part::After => {
                block.unsigned.push((number, line.to_vec()));
                part
            }
            Part::Headers if line.iter().all(|b| b.is_ascii_whitespace()) => Part::Text,
            Part::Headers if line.starts_with(b"Hash:") => {
                if let Some(names) = line.strip_prefix(b"Hash: ") {
                    let names = String::from_utf8_lossy(names);
                    block.hashes.extend(names.split(',').map(|n| n.trim().to_owned()));
                }
                Part::Headers
            }
            Part::Headers => {
                return Err(Refusal::malformed(format!(
                    "line {number}: unexpected armor header in the clearsigned block"
                )))
            }
            Part::Text if is(line, SIGNATURE) => {
                block.signature.extend_from_slice(line);
                block.signature.push(b'\n');
                Part::Signature
            }
            Part::Text => {
                let line = line.strip_prefix(b"- ").unwrap_or(line);
                block.message.extend_from_slice(line);
                block.message.push(b'\n');
                Part::Text
            }
            Part::Signature => {
                block.signature.extend_from_slice(line);
                block.signature.push(b'\n');
                if is(line, END) {
                    Part::After
                } else {
                    Part::Signature
                }
            }
        };
    }
    if part != Part::After {
        return Err(Refusal::malformed(
            "the clearsigned block does not end (no -----END PGP SIGNATURE-----)",
        ));
    }
    Ok(block)
}

/// The bytes a clearsigned block's signature covers: its lines without
/// trailing spaces and tabs, joined by CRLF, without the last line break
/// (OpenPGP's to verify; fuzzed with it).
#[cfg(any(feature = "openpgp", feature = "fuzzing", all(test, feature = "remote")))]
pub fn signed_bytes(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + message.len() / 32);
    let body = message.strip_suffix(b"\n").unwrap_or(message);
    for (index, line) in body.split(|&b| b == b'\n').enumerate() {
        if index > 0 {
            out.extend_from_slice(b"\r\n");
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let end = line
            .iter()
            .rposition(|b| *b != b' ' && *b != b'\t')
            .map_or(0, |p| p + 1);
        out.extend_from_slice(line.get(..end).unwrap_or_default());
    }
    out
}
