//! GNU's checksum lines written: `HEX  NAME`, `HEX *NAME` or
//! `TAG (NAME) = HEX`, the name escaped as md5sum escapes it.

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::escape::{needs_escape, write_escaped};

/// How a digest line is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineStyle {
    /// `HEX  NAME` (text mode) or `HEX *NAME` (binary mode).
    Untagged {
        /// Binary mode: `*` before the name.
        binary: bool,
    },
    /// `TAG (NAME) = HEX`.
    Tagged,
}

/// How a digest is written (coreutils' `cksum --base64`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Lower-case hex.
    #[default]
    Hex,
    /// Padded base64 (RFC 4648).
    Base64,
}

/// Appends one output line in this style as GNU `md5sum` prints it.
/// With `terminator` NUL (`-z`), names are not escaped. The digest in
/// hex or base64.
pub(crate) fn write_line(
    out: &mut Vec<u8>,
    algorithm: Algorithm,
    (digest, encoding): (&Digest, Encoding),
    name: &[u8],
    style: LineStyle,
    terminator: u8,
) {
    let push_digest = |out: &mut Vec<u8>| match encoding {
        Encoding::Base64 => digest.push_base64(out),
        Encoding::Hex => digest.push_hex(out),
    };
    let escape = terminator == b'\n' && needs_escape(name);
    if escape {
        out.push(b'\\');
    }
    let write_name = |out: &mut Vec<u8>| {
        if escape {
            write_escaped(name, out);
        } else {
            out.extend_from_slice(name);
        }
    };
    match style {
        LineStyle::Tagged => {
            out.extend_from_slice(algorithm.tag().as_bytes());
            if let Algorithm::Blake2b { output_len } = algorithm {
                if output_len != 64 {
                    out.extend_from_slice(format!("-{}", u32::from(output_len) * 8).as_bytes());
                }
            }
            if let Some((_, part_size)) = algorithm.part_layout() {
                // `S3ETAG/8MiB`, `CRC32C/16MiB`: -c reads the part size back.
                let size = crate::algo::parts::PartSize(part_size);
                out.extend_from_slice(format!("/{size}").as_bytes());
            }
            out.extend_from_slice(b" (");
            write_name(out);
            out.extend_from_slice(b") = ");
            push_digest(out);
        }
        LineStyle::Untagged { binary } => {
            push_digest(out);
            out.push(b' ');
            out.push(if binary { b'*' } else { b' ' });
            write_name(out);
        }
    }
    out.push(terminator);
}
