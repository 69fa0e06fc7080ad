//! The subcommands (`fastsum diff`, `dupes`, `audit` ...): each parses its
//! own arguments with clap and calls the library; `main.rs` lists them.

pub(crate) mod args;
pub(crate) mod audit;
pub(crate) mod bench;
pub(crate) mod cache;
pub(crate) mod contained;
pub(crate) mod diff;
pub(crate) mod dupes;
pub(crate) mod help;
pub(crate) mod manual;
pub(crate) mod remote;
pub(crate) mod scrub;
pub(crate) mod tree_digest;
