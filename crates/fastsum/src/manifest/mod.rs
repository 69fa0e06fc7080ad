//! Checksum lists, the formats alone: the lines that md5sum, sha*sum,
//! b2sum, b3sum, xxhsum and hashdeep write and read back with `-c`, and
//! fastsum's JSON Lines, each parsed and written. Nothing here hashes,
//! walks or prints: formats sit low in the layers (on `algo`, `digest`,
//! `fs` and `escape` only), so that every part of the library can read a
//! list, and a new format (S3's checksums, a signed list) lands here
//! beside the others. What a run prints, and a list checked against its
//! files, are `crate::output`'s.
//!
//! * `gnu`: coreutils' `HEX  NAME` / `HEX *NAME` lines and BSD-tagged
//!   `MD5 (NAME) = HEX` lines, with GNU's name escaping (the rule is
//!   `crate::escape`'s).
//! * `xxhsum`: xxhsum 0.8.1's reading of the same shapes.
//! * `b3sum`: b3sum's stricter reading.
//! * `hashdeep`: hashdeep's `%%%% HASHDEEP-1.0` lists (size, several
//!   digests, name), read and written.
//! * `json`: the pieces of fastsum's JSON Lines (a name, a string, one
//!   file's several digests), and `json_read`, reading records back.
//! * [`list`]: every list `fastsum -c` reads, its format told from its
//!   content (fastsum's JSON, hashdeep's, SFV, Debian's Release files).
//! * [`read`]: any of them read, a line at a time, into path → digest
//!   entries, for `fastsum diff`, `scrub` and `-c`.
//!
//! Each parser is a literal port of the reference tool's rules, because a
//! drop-in must accept and reject exactly the lines the original does.

// Every module here parses outside input (lib.rs declares this one
// through `parsers!`, so its lints hold for each).
pub(crate) mod json_read;
pub mod list;
pub mod read;
// Each format's own line parser, and a bounded line of a list: reached
// through `list::ListReader` and `read::Manifest` by a library user, by
// the personalities (which read as their tool reads) directly.
internal! { mod b3sum; }
internal! { mod gnu; }
internal! { mod hashdeep; }
internal! { mod lines; }
internal! { mod xxhsum; }
#[cfg(feature = "tree")]
pub(crate) mod json;

#[cfg(test)]
mod properties;
