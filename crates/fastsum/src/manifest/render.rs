//! The one renderer of hashing results: a [`Record`] as fastsum prints it
//! (a checksum line in the tool's shape, or a JSON object) on stdout, or
//! as a message on stderr in the GNU form `PROGRAM: NAME: CAUSE`. The CLI
//! and the Python package's Dask runner both print through it, so their
//! output cannot drift apart (as grep-printer is ripgrep's one printer).

use super::quote::Quoting;
use super::{gnu, json};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::pipeline::{Outcome, Record};
use crate::stage::Hashed;
use crate::walk::SpecialKind;

/// How records are written.
#[derive(Clone, Debug)]
pub struct Renderer {
    /// The digests' algorithm.
    pub algorithm: Algorithm,
    /// JSON Lines (docs/JSON.md) instead of checksum lines.
    pub json: bool,
    /// Tagged or untagged lines (not for cksum's and sum's own lines).
    pub style: gnu::LineStyle,
    /// Hex, base64, or the raw bytes (`cksum --base64`, `--raw`).
    pub encoding: gnu::Encoding,
    /// `\n`, or NUL for `-z` (names are then not escaped).
    pub terminator: u8,
    /// cksum's and sum's lines end with the name only when names were
    /// given (`cksum < f` prints none).
    pub names_given: bool,
    /// Messages start with this and `: ` (`md5sum`, `fastsum`).
    pub program: Vec<u8>,
    /// How names in messages are quoted (gnulib's quotef, for the locale).
    pub quoting: Quoting,
    /// hashdeep's lines (`SIZE,HEX,NAME`, [`super::hashdeep`]) instead of
    /// checksum lines.
    pub hashdeep: bool,
    /// JSON records carry each file's stamp (device, inode, mtime, ctime)
    /// where it was settled before this moment (ns since the epoch: the
    /// run's start), so that `fastsum scrub --manifest` can tell a change
    /// from corruption; a stamp as recent as the read proves nothing.
    pub stamps_before: Option<i64>,
}

/// What a record was, for the caller's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    /// It failed (read or walk error): the run's exit status is 1.
    pub failure: bool,
    /// A symbolic link the walk left out (said once, at the end, by the
    /// caller: nothing was written for it but its JSON record).
    pub symlink_left_out: bool,
}

impl Renderer {
    /// The version of the JSON records' schema (docs/JSON.md), written in
    /// each record as `"v"`.
    pub const JSON_SCHEMA_VERSION: u32 = json::SCHEMA_VERSION;

    /// fastsum's own lines: MD5 untagged as md5sum prints them, every
    /// other algorithm BSD-tagged (so that `-c` knows what wrote it).
    pub fn fastsum(algorithm: Algorithm, json: bool) -> Renderer {
        Renderer {
            algorithm,
            json,
            style: match algorithm {
                Algorithm::Md5 => gnu::LineStyle::Untagged { binary: false },
                _ => gnu::LineStyle::Tagged,
            },
            encoding: gnu::Encoding::Hex,
            terminator: b'\n',
            names_given: true,
            program: b"fastsum".to_vec(),
            quoting: Quoting::from_locale(),
            hashdeep: false,
            stamps_before: None,
        }
    }

    /// JSON records carry each file's stamp where it was settled before
    /// now (see [`Renderer::stamps_before`]).
    pub fn with_stamps(mut self) -> Renderer {
        self.stamps_before = Some(crate::fs::stat::now_ns());
        self
    }

    /// `"label":"name"` for a file name, and `"label_base64":"..."` beside
    /// it with its exact bytes when it is not UTF-8 (the name itself then
    /// shows U+FFFD): the one way every JSON output of fastsum writes a
    /// name, records and the CLI's other JSON lines alike.
    pub fn write_json_name(out: &mut Vec<u8>, label: &str, name: &[u8]) {
        json::write_name(out, label, name)
    }

    /// A JSON string literal: quotes, backslashes and control characters
    /// escaped, everything else as UTF-8 (the one escaper of fastsum's
    /// JSON).
    pub fn write_json_string(out: &mut Vec<u8>, text: &str) {
        json::write_string(out, text)
    }

    /// Writes `record`: its line or JSON object to `out`, its message to
    /// `err`.
    pub fn render(&self, record: &Record, out: &mut Vec<u8>, err: &mut Vec<u8>) -> Rendered {
        let mut done = Rendered {
            failure: record.is_failure(),
            symlink_left_out: matches!(record.outcome, Outcome::Skipped(SpecialKind::Symlink)),
        };
        let name = record.path.as_os_str().as_encoded_bytes();
        if self.json && !matches!(record.outcome, Outcome::Directory(None)) {
            json::write_record_stamped(out, self.algorithm, record, self.stamps_before);
        }
        if done.symlink_left_out {
            return done;
        }
        match &record.outcome {
            Outcome::Hashed(_) | Outcome::Directory(_) if self.json => {}
            Outcome::Hashed(hashed) if self.hashdeep => {
                match super::hashdeep::line(hashed.size, &[&hashed.digest], name) {
                    Some(line) => out.extend_from_slice(&line),
                    None => {
                        done.failure = true;
                        let why = "a name with a newline cannot be written in hashdeep's format";
                        self.message(err, name, why);
                    }
                }
            }
            Outcome::Hashed(Hashed { digest, .. }) | Outcome::Directory(Some(digest)) => {
                self.line(out, digest, name)
            }
            Outcome::Directory(None) => {}
            Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
                self.message(err, name, &kind.to_string())
            }
            Outcome::Skipped(kind) => self.message(
                err,
                name,
                &format!("skipped {} (not a regular file)", kind.describe()),
            ),
        }
        done
    }

    /// A digest's line in the tool's shape.
    fn line(&self, out: &mut Vec<u8>, digest: &Digest, name: &[u8]) {
        if self.encoding == gnu::Encoding::Raw {
            // The old checksums' digests end with the size (8 bytes).
            let bytes = digest.as_bytes();
            let len = bytes.len() - if self.algorithm.is_legacy() { 8 } else { 0 };
            out.extend_from_slice(&bytes[..len]);
            return;
        }
        match crate::algo::legacy_fields(self.algorithm, digest) {
            // cksum's and sum's lines: the name as it is, no escaping,
            // and none at all for standard input read by default.
            Some(fields) => {
                out.extend_from_slice(fields.as_bytes());
                if self.names_given {
                    out.push(b' ');
                    out.extend_from_slice(name);
                }
                out.push(self.terminator);
            }
            None => gnu::write_line(
                out,
                self.algorithm,
                (digest, self.encoding),
                name,
                self.style,
                self.terminator,
            ),
        }
    }

    /// `PROGRAM: NAME: CAUSE`, the name quoted as GNU quotes it.
    pub fn message(&self, err: &mut Vec<u8>, name: &[u8], cause: &str) {
        err.extend_from_slice(&self.program);
        err.extend_from_slice(b": ");
        err.extend_from_slice(&self.quoting.quotef(name));
        err.extend_from_slice(b": ");
        err.extend_from_slice(cause.as_bytes());
        err.push(b'\n');
    }
}
