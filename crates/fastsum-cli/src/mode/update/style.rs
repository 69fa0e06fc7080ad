//! How the lines of a GNU or BSD list `--update` rewrites are written,
//! beyond their shape (tagged or untagged): digests in base64 (tagged
//! lines of `--base64`), the binary marker (`HEX *NAME`), and what no
//! rewrite keeps: comment lines, CR LF line ends, lines that are not
//! checksum lines (a single space between digest and name). The update writes every line again, so a look it
//! cannot write back is refused with nothing changed, never dropped: a
//! list once lost its comments and its base64 and `*` marks, exit 0.
//! The whole list is read (its head decides the shape; a comment or a
//! CR can come anywhere).

use std::io::{BufRead, BufReader};
use std::path::Path;

use fastsum::manifest::gnu::{CheckParser, TagPolicy};
use fastsum::Algorithm;

/// What every line of a list says about how it is written.
#[derive(Debug, Default, PartialEq, Eq)]
pub(in crate::mode) struct Style {
    /// Tagged lines with base64 digests (`--base64`).
    pub(in crate::mode) base64: bool,
    /// Untagged lines with the binary marker (`HEX *NAME`, `-b`).
    pub(in crate::mode) binary: bool,
    /// The algorithms its tagged lines name, each once, in the order met:
    /// more than one is a list of several digests a file (several `-a`).
    pub(in crate::mode) algorithms: Vec<Algorithm>,
}

/// The style of the list at `path` (`terminator`-separated lines, read in
/// `algorithm`), or why it cannot be written back as it is.
pub(in crate::mode) fn style_of(
    path: &Path,
    terminator: u8,
    algorithm: Algorithm,
) -> Result<Style, String> {
    let file = fastsum::open_regular(path).map_err(|e| e.kind().to_string())?;
    let mut parser = CheckParser::new(TagPolicy::Any(algorithm));
    let (mut base64, mut binary) = (Seen::default(), Seen::default());
    let mut algorithms = Vec::new();
    for (number, line) in BufReader::new(file).split(terminator).enumerate() {
        let line = line.map_err(|e| fastsum::Error::os_message(&e))?;
        let refuse = |what: &str| {
            Err(format!(
                "line {} {what}, which an update would not write back: nothing was changed",
                number + 1
            ))
        };
        if line.starts_with(b"#") {
            return refuse("is a comment");
        }
        if terminator == b'\n' && line.ends_with(b"\r") {
            return refuse("ends in CR LF");
        }
        if line.is_empty() {
            continue;
        }
        // A line -c would warn of (one space between digest and name, a
        // digest cut short): kept by no rewrite.
        let Some(parsed) = parser.parse(&line) else {
            return refuse("is not a checksum line");
        };
        if parsed.tagged {
            if let Some(look) = foreign_tagged_look(&line) {
                return refuse(look);
            }
        }
        if !parsed.written_as_fastsum_writes(&line, terminator) {
            return refuse("is not written as fastsum writes it (lower-case hex, `HEX  NAME` or `TAG (NAME) = HEX`, a name escaped only if it must be)");
        }
        if parsed.tagged && !algorithms.contains(&parsed.algorithm) {
            algorithms.push(parsed.algorithm);
        }
        // A tagged line's digest is of the algorithm it names.
        match parsed.tagged {
            true => base64.saw(!is_hex_digest(&line, parsed.algorithm)),
            false => binary.saw(parsed.binary),
        }
    }
    let mixed = |what: &str| {
        Err(format!(
            "some of its lines {what} and some not: one way would be written for all of them; nothing was changed"
        ))
    };
    if base64.mixed() {
        return mixed("have base64 digests");
    }
    if binary.mixed() {
        return mixed("have the binary mark (*)");
    }
    Ok(Style {
        base64: base64.all(),
        binary: binary.all(),
        algorithms,
    })
}

/// Whether lines had a mark: none, all or some.
#[derive(Default)]
struct Seen {
    with: usize,
    without: usize,
}

impl Seen {
    fn saw(&mut self, marked: bool) {
        match marked {
            true => self.with += 1,
            false => self.without += 1,
        }
    }

    fn mixed(&self) -> bool {
        self.with > 0 && self.without > 0
    }

    fn all(&self) -> bool {
        self.with > 0 && self.without == 0
    }
}

/// How a tagged line that `-c` reads is written unlike the BSD lines an
/// update writes (`TAG (NAME) = DIGEST`, the tag fastsum's): OpenSSL's
/// `dgst` form, `TAG(NAME)= DIGEST`, or the `SHA2-N` tag coreutils reads
/// beside SHA256 (OpenSSL writes both). Rewritten, such a list would
/// change its look under its tools' feet, so it is refused as a comment
/// is.
fn foreign_tagged_look(line: &[u8]) -> Option<&'static str> {
    let line = line.strip_prefix(b"\\").unwrap_or(line);
    if line.starts_with(b"SHA2-") {
        return Some("names SHA-2 as SHA2-N (OpenSSL's and coreutils' spelling, not the SHA256 an update writes)");
    }
    let open = line.iter().position(|&b| b == b'(')?;
    (open == 0 || line[open - 1] != b' ').then_some("is in OpenSSL's form, TAG(NAME)= DIGEST")
}

/// Whether a tagged line's digest (after its last ` = `) is hexadecimal
/// of `algorithm`'s length (else it is base64).
fn is_hex_digest(line: &[u8], algorithm: Algorithm) -> bool {
    let digest = line
        .windows(3)
        .rposition(|w| w == b" = ")
        .map_or(&line[..0], |at| &line[at + 3..]);
    digest.len() == 2 * algorithm.output_len() && digest.iter().all(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openssl_looks_are_told_from_bsd_lines() {
        let hex = "d41d8cd98f00b204e9800998ecf8427e";
        for bsd in [
            format!("MD5 (a(b)) = {hex}"),
            format!("\\MD5 (a\\nb) = {hex}"),
            format!("BLAKE2b-128 (x) = {hex}"),
        ] {
            assert_eq!(foreign_tagged_look(bsd.as_bytes()), None, "{bsd}");
        }
        for openssl in [
            format!("MD5(a) = {hex}"),
            format!("MD5(a (b))= {hex}"),
            format!("SHA2-256 (a) = {hex}"),
        ] {
            assert!(
                foreign_tagged_look(openssl.as_bytes()).is_some(),
                "{openssl}"
            );
        }
    }

    #[test]
    fn hex_and_base64_digests_are_told_apart() {
        let md5 = Algorithm::Md5;
        assert!(is_hex_digest(
            b"MD5 (a = b) = d41d8cd98f00b204e9800998ecf8427e",
            md5
        ));
        assert!(!is_hex_digest(b"MD5 (a) = 1B2M2Y8AsgTpgAmY7PhCfg==", md5));
    }
}
