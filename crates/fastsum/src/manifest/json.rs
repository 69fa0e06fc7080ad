//! JSON Lines output: one object per file, for programs that consume
//! fastsum.
//!
//! ```text
//! {"path":"dir/a.txt","algorithm":"md5","digest":"900150983cd24fb0d6963f7d28e17f72","size":3}
//! {"path":"dir/gone","algorithm":"md5","error":"No such file or directory"}
//! {"path":"dir/pipe","algorithm":"md5","skipped":"fifo"}
//! {"path":"caf\ufffd","path_base64":"Y2Fm6Q==","algorithm":"md5","digest":"...","size":0}
//! ```
//!
//! `path` is always text. A name that is not UTF-8 (Unix names are bytes)
//! cannot be JSON text faithfully, so it gets `path` with U+FFFD in place
//! of the bad bytes, for people, and `path_base64` with the exact bytes,
//! for programs (the choice ripgrep's JSON output makes, as a field).

use crate::algo::Algorithm;

/// The version of every JSON fastsum writes (`--json` records, `fastsum
/// bench --json`), documented in docs/JSON.md: fields may be added within
/// a version; renaming, removing or changing the meaning of one bumps it.
/// `fastsum --version` prints it; `bench --json` carries it as `schema`.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// One file's several digests from one read (`fastsum -a md5 -a sha256
/// --json`): `{"path":...,"digests":{"md5":"HEX",...},"size":N}`, and the
/// stamp's fields after the size where `stamp` writes them (`--stamps`).
pub(crate) fn write_digests(
    out: &mut Vec<u8>,
    name: &[u8],
    size: u64,
    digests: &[(Algorithm, crate::digest::Digest)],
    stamp: &mut dyn FnMut(&mut Vec<u8>),
) {
    out.push(b'{');
    write_name(out, "path", name);
    out.extend_from_slice(b",\"digests\":{");
    for (i, (algorithm, digest)) in digests.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(out, &algorithm.to_string());
        out.extend_from_slice(b":\"");
        digest.push_hex(out);
        out.push(b'"');
    }
    out.extend_from_slice(format!("}},\"size\":{size}").as_bytes());
    stamp(out);
    out.extend_from_slice(b"}\n");
}

/// [`Renderer::write_json_name`](crate::output::render::Renderer::write_json_name).
pub(crate) fn write_name(out: &mut Vec<u8>, label: &str, name: &[u8]) {
    write_string(out, label);
    out.push(b':');
    write_string(out, &String::from_utf8_lossy(name));
    if std::str::from_utf8(name).is_err() {
        out.push(b',');
        write_string(out, &format!("{label}_base64"));
        out.extend_from_slice(b":\"");
        write_base64(out, name);
        out.push(b'"');
    }
}

/// [`Renderer::write_json_string`](crate::output::render::Renderer::write_json_string).
pub(crate) fn write_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            // Every control character, C1 too (U+0080-U+009F: CSI among
            // them), and the bidirectional and separator characters, so no
            // name reaches a terminal raw or displays as another.
            c if crate::escape::unsafe_in_report(c) => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut utf8 = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Standard base64 (RFC 4648, with padding).
pub(crate) fn write_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    crate::digest::push_base64(bytes, out);
}
