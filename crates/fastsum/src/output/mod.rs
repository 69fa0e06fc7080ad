//! What fastsum writes for its callers, above the pipeline: a run's
//! records rendered as lines, JSON or messages ([`render`], for the CLI
//! and the Python package alike), a line of text and names for every
//! report ([`LinePart`]), names in messages quoted as coreutils quotes
//! them ([`quote`]), and a list checked against its files on every core
//! ([`check`]). The formats themselves (how a line or a record reads)
//! are `crate::manifest`'s; the escaping of a name is `crate::escape`'s.

#[cfg(feature = "tree")]
pub mod check;
#[cfg(feature = "tree")]
mod json_record;
mod line;
pub mod quote;
#[cfg(feature = "tree")]
pub mod render;

pub use line::LinePart;
