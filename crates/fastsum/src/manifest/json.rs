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

#[cfg(feature = "tree")]
use crate::algo::Algorithm;

/// The version of every JSON fastsum writes (`--json` records, `fastsum
/// bench --json`), documented in docs/JSON.md: fields may be added within
/// a version; renaming, removing or changing the meaning of one bumps it.
/// `fastsum --version` prints it; `bench --json` carries it as `schema`.
#[cfg(feature = "tree")]
pub(crate) const SCHEMA_VERSION: u32 = 1;
#[cfg(feature = "tree")]
use crate::pipeline::{Outcome, Record};

/// Appends `record` as one JSON object and a newline to `out` (the
/// tests' shorthand: every output passes its stamps' rule).
#[cfg(all(test, feature = "tree"))]
pub(crate) fn write_record(out: &mut Vec<u8>, algorithm: Algorithm, record: &Record) {
    write_record_stamped(out, algorithm, record, None);
}

/// [`write_record`], a hashed file's stamp included (`"device"`,
/// `"inode"`, `"mtime_ns"`, `"ctime_ns"`) when it has one settled before
/// `stamps_before` (ns since the epoch).
#[cfg(feature = "tree")]
pub(crate) fn write_record_stamped(
    out: &mut Vec<u8>,
    algorithm: Algorithm,
    record: &Record,
    stamps_before: Option<i64>,
) {
    out.push(b'{');
    write_name(out, "path", record.path.as_os_str().as_encoded_bytes());
    out.extend_from_slice(b",\"algorithm\":");
    write_string(out, &algorithm.to_string());
    match &record.outcome {
        Outcome::Hashed(hashed) => {
            use std::io::Write as _;
            out.extend_from_slice(b",\"digest\":\"");
            hashed.digest.push_hex(out);
            let _ = write!(out, "\",\"size\":{}", hashed.size);
            // A stamp vouches only when settled, on a file system written
            // back (issue 51.4).
            let settled =
                |s: &&crate::fs::FileStamp| stamps_before.is_some_and(|t| s.vouches_at(t));
            if let Some(s) = hashed.stamp.as_ref().filter(settled) {
                let _ = write!(
                    out,
                    ",\"device\":{},\"inode\":{},\"mtime_ns\":{},\"ctime_ns\":{}",
                    s.dev, s.ino, s.mtime_ns, s.ctime_ns
                );
            }
        }
        Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
            out.extend_from_slice(b",\"error\":");
            write_string(out, &kind.to_string());
        }
        Outcome::Skipped(kind) => {
            out.extend_from_slice(b",\"skipped\":");
            write_string(out, kind.describe());
        }
        // A directory's digest (docs/DIRECTORY-DIGEST.md); a directory
        // met on the way down has no record.
        Outcome::Directory(Some(digest)) => {
            out.extend_from_slice(b",\"directory_digest\":\"");
            digest.push_hex(out);
            out.push(b'"');
        }
        Outcome::Directory(None) => {}
    }
    out.extend_from_slice(b"}\n");
}

/// One file's several digests from one read (`fastsum -a md5 -a sha256
/// --json`): `{"path":...,"digests":{"md5":"HEX",...},"size":N}`.
pub(crate) fn write_digests(
    out: &mut Vec<u8>,
    name: &[u8],
    size: u64,
    digests: &[(Algorithm, crate::digest::Digest)],
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
    out.extend_from_slice(format!("}},\"size\":{size}}}\n").as_bytes());
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
            // them), so no name reaches a terminal raw (issue 51.17).
            c if c.is_control() => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
            c => {
                let mut utf8 = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Standard base64 (RFC 4648, with padding).
fn write_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    crate::digest::push_base64(bytes, out);
}

#[cfg(all(test, feature = "tree"))]
mod tests {
    use super::*;
    use crate::stage::Hashed;
    use crate::walk::SpecialKind;
    use crate::ErrorKind;

    fn line(path: &[u8], outcome: Outcome) -> String {
        let record = Record {
            operand: 0,
            seq: 0,
            path: crate::fs::name::path(path).into_owned(),
            outcome,
        };
        let mut out = Vec::new();
        write_record(&mut out, Algorithm::Md5, &record);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn records_as_json_lines() {
        let digest = Algorithm::Md5.hash_bytes(b"abc");
        assert_eq!(
            line(b"d/a \"q\"\\\n", Outcome::Hashed(Hashed::new(digest, 3))),
            "{\"path\":\"d/a \\\"q\\\"\\\\\\n\",\"algorithm\":\"md5\",\
             \"digest\":\"900150983cd24fb0d6963f7d28e17f72\",\"size\":3}\n"
        );
        assert_eq!(
            line(b"x\x01", Outcome::Skipped(SpecialKind::Fifo)),
            "{\"path\":\"x\\u0001\",\"algorithm\":\"md5\",\"skipped\":\"fifo\"}\n"
        );
        let gone = ErrorKind::Io(std::io::Error::from_raw_os_error(libc::ENOENT));
        assert_eq!(
            line(b"gone", Outcome::Failed(gone)),
            "{\"path\":\"gone\",\"algorithm\":\"md5\",\"error\":\"No such file or directory\"}\n"
        );
    }

    #[test]
    fn non_utf8_names_carry_their_exact_bytes() {
        let out = line(b"caf\xe9", Outcome::Skipped(SpecialKind::Socket));
        assert!(out.starts_with("{\"path\":\"caf\u{fffd}\",\"path_base64\":\"Y2Fm6Q==\","));
        for (input, expected) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foobar", "Zm9vYmFy"),
        ] {
            let mut out = Vec::new();
            write_base64(&mut out, input);
            assert_eq!(out, expected.as_bytes());
        }
    }
}
