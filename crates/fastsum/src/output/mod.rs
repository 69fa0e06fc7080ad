//! What the CLI and the Python package write, above the pipeline (a
//! library user takes [`crate::Record`]s and their digests; this is the
//! front ends' shared presentation, `internal!`): a run's
//! records rendered as lines, JSON or messages ([`render`]), a line of text and names for every
//! report ([`line`]), names in messages quoted as coreutils quotes
//! them ([`quote`]), and a list checked against its files on every core
//! ([`check`]). The formats themselves (how a line or a record reads)
//! are `crate::manifest`'s; the escaping of a name is `crate::escape`'s.

#[cfg(feature = "tree")]
pub mod check;
#[cfg(feature = "tree")]
mod json_record;
pub mod line;
pub mod quote;
#[cfg(feature = "tree")]
pub mod render;

