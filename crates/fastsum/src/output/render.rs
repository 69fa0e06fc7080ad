//! The one renderer of hashing results: a [`Record`] as fastsum prints it
//! (a checksum line in the tool's shape, or a JSON object) on stdout, or
//! as a message on stderr in the GNU form `PROGRAM: NAME: CAUSE`. The CLI
//! and the Python package's Dask runner both print through it, so their
//! output cannot drift apart (as grep-printer is ripgrep's one printer).

use super::json_record;
use super::quote::Quoting;
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::manifest::{gnu, hashdeep, json};
use crate::pipeline::{Outcome, Record};
use crate::stage::Hashed;
use crate::walk::SpecialKind;

/// The shape of what a [`Renderer`] writes for each digest. One choice:
/// JSON, hashdeep's lines, the raw bytes and the two GNU line shapes
/// exclude each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// GNU's `HEX  NAME` (text mode) or `HEX *NAME` (`binary` mode); with
    /// `base64`, the digest in padded base64 (`cksum --base64`).
    Untagged {
        /// Binary mode: `*` before the name.
        binary: bool,
        /// The digest in base64.
        base64: bool,
    },
    /// BSD-tagged `TAG (NAME) = HEX` (with `base64`, in base64).
    Tagged {
        /// The digest in base64.
        base64: bool,
    },
    /// The digest's bytes alone: no name, no line end (`cksum --raw`; for
    /// the old checksums, the checksum big-endian without the size).
    Raw,
    /// JSON Lines (docs/JSON.md).
    Json,
    /// hashdeep's `SIZE,HEX,NAME` lines ([`crate::manifest::hashdeep`]).
    Hashdeep,
}

impl Format {
    /// The GNU line shape and the digest's encoding it means. `Raw`,
    /// `Json` and `Hashdeep` write no GNU line for a file; a directory's
    /// digest in hashdeep's format (which lists files) is written tagged.
    fn gnu_line(self) -> (gnu::LineStyle, gnu::Encoding) {
        let encoding = |base64| match base64 {
            true => gnu::Encoding::Base64,
            false => gnu::Encoding::Hex,
        };
        match self {
            Format::Untagged { binary, base64 } => {
                (gnu::LineStyle::Untagged { binary }, encoding(base64))
            }
            Format::Tagged { base64 } => (gnu::LineStyle::Tagged, encoding(base64)),
            Format::Raw | Format::Json | Format::Hashdeep => {
                (gnu::LineStyle::Tagged, gnu::Encoding::Hex)
            }
        }
    }
}

/// How records are written.
#[derive(Clone, Debug)]
pub struct Renderer {
    /// The digests' algorithm.
    pub algorithm: Algorithm,
    /// Lines in a tool's shape, or JSON.
    pub format: Format,
    /// `\n`, or NUL for `-z` (names are then not escaped).
    pub terminator: u8,
    /// cksum's and sum's lines end with the name only when names were
    /// given (`cksum < f` prints none).
    pub names_given: bool,
    /// Messages start with this and `: ` (`md5sum`, `fastsum`).
    pub program: Vec<u8>,
    /// How names in messages are quoted (gnulib's quotef, for the locale).
    pub quoting: Quoting,
    /// JSON records carry each file's stamp (device, inode, mtime, ctime)
    /// where it was settled before this moment (ns since the epoch: the
    /// run's start), so that `fastsum scrub --manifest` can tell a change
    /// from corruption; a stamp as recent as the read proves nothing.
    pub stamps_before: Option<i64>,
}

/// Why a name is not written in hashdeep's format.
const NOT_HASHDEEP: &str = "a name with a newline cannot be written in hashdeep's format";

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
            format: match (json, algorithm) {
                (true, _) => Format::Json,
                (false, Algorithm::Md5) => Format::Untagged {
                    binary: false,
                    base64: false,
                },
                (false, _) => Format::Tagged { base64: false },
            },
            terminator: b'\n',
            names_given: true,
            program: b"fastsum".to_vec(),
            quoting: Quoting::from_locale(),
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
        let json = self.format == Format::Json;
        if json && !matches!(record.outcome, Outcome::Directory(None)) {
            json_record::write_record_stamped(out, self.algorithm, record, self.stamps_before);
        }
        if done.symlink_left_out {
            return done;
        }
        match &record.outcome {
            Outcome::Hashed(_) | Outcome::Directory(_) if json => {}
            Outcome::Hashed(hashed) if self.format == Format::Hashdeep => {
                match hashdeep::line(hashed.size, &[&hashed.digest], name) {
                    Some(line) => out.extend_from_slice(&line),
                    None => {
                        done.failure = true;
                        self.message(err, name, NOT_HASHDEEP);
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
        if self.format == Format::Raw {
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
            None => {
                let (style, encoding) = self.format.gnu_line();
                let digest = (digest, encoding);
                gnu::write_line(out, self.algorithm, digest, name, style, self.terminator)
            }
        }
    }

    /// One file's several digests from one read (`fastsum -a md5 -a
    /// sha256`), in the order given: hashdeep's one line, one JSON record
    /// with a `digests` object, or else one BSD-tagged hex line a digest
    /// (as `cksum -a` writes them, so that `-c` checks them all). `Err`
    /// says why the file cannot be written in the format (nothing is).
    pub fn render_digests(
        &self,
        name: &[u8],
        size: u64,
        digests: &[(Algorithm, Digest)],
        out: &mut Vec<u8>,
    ) -> Result<(), &'static str> {
        self.render_digests_stamped(name, size, digests, None, out)
    }

    /// [`Renderer::render_digests`], the JSON record carrying the file's
    /// `stamp` (taken before and after the read) as a record of one digest
    /// does, where it vouches ([`Renderer::stamps_before`]).
    pub fn render_digests_stamped(
        &self,
        name: &[u8],
        size: u64,
        digests: &[(Algorithm, Digest)],
        stamp: Option<&crate::fs::FileStamp>,
        out: &mut Vec<u8>,
    ) -> Result<(), &'static str> {
        match self.format {
            Format::Hashdeep => {
                if digests.iter().any(|(a, _)| hashdeep::name_of(*a).is_none()) {
                    return Err("hashdeep's format names md5, sha1 and sha256 only");
                }
                if digests.iter().any(|(a, d)| d.len() != a.output_len()) {
                    return Err("a digest of another length than its algorithm's");
                }
                let only: Vec<&Digest> = digests.iter().map(|(_, d)| d).collect();
                out.extend_from_slice(&hashdeep::line(size, &only, name).ok_or(NOT_HASHDEEP)?);
            }
            Format::Json => {
                let path = crate::fs::name::path(name);
                let stamp = &mut |out: &mut Vec<u8>| {
                    json_record::write_stamp(out, stamp, &path, self.stamps_before)
                };
                json::write_digests(out, name, size, digests, stamp)
            }
            format => {
                // Tagged lines, in base64 with `--base64`.
                let (_, encoding) = format.gnu_line();
                for (algorithm, digest) in digests {
                    let tagged = gnu::LineStyle::Tagged;
                    let digest = (digest, encoding);
                    gnu::write_line(out, *algorithm, digest, name, tagged, self.terminator);
                }
            }
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// hashdeep's format holds md5, sha1 and sha256 only, each digest of
    /// its algorithm's length, and no name with a newline: anything else
    /// is an error and nothing is written.
    #[test]
    fn several_digests_in_hashdeep_need_its_algorithms_and_a_name_it_can_hold() {
        let mut renderer = Renderer::fastsum(Algorithm::Md5, false);
        renderer.format = Format::Hashdeep;
        let md5 = Algorithm::Md5.hash_bytes(b"abc");
        let blake3 = Algorithm::Blake3.hash_bytes(b"abc");
        let mut out = Vec::new();
        let both = [(Algorithm::Md5, md5), (Algorithm::Blake3, blake3)];
        assert!(renderer.render_digests(b"a", 3, &both, &mut out).is_err());
        let md5_only = [(Algorithm::Md5, md5)];
        assert!(renderer
            .render_digests(b"a\nb", 3, &md5_only, &mut out)
            .is_err());
        let sha256 = Algorithm::Sha256.hash_bytes(b"abc");
        let mislabelled = [(Algorithm::Md5, sha256)];
        assert!(renderer
            .render_digests(b"a", 3, &mislabelled, &mut out)
            .is_err());
        assert!(out.is_empty());
        renderer
            .render_digests(b"a", 3, &md5_only, &mut out)
            .unwrap();
        assert_eq!(out, format!("3,{},a\n", md5.to_hex()).into_bytes());
    }

    /// Lines for several digests are tagged whatever the single-digest
    /// shape, so that `-c` knows each line's algorithm; `--base64` is
    /// honoured there too (S3's form), and `-c` reads it back.
    #[test]
    fn several_digests_as_lines_are_tagged() {
        let mut renderer = Renderer::fastsum(Algorithm::Md5, false);
        renderer.format = Format::Untagged {
            binary: true,
            base64: true,
        };
        let md5 = Algorithm::Md5.hash_bytes(b"abc");
        let mut out = Vec::new();
        renderer
            .render_digests(b"a", 3, &[(Algorithm::Md5, md5)], &mut out)
            .unwrap();
        assert_eq!(out, format!("MD5 (a) = {}\n", md5.to_base64()).into_bytes());
    }
}
