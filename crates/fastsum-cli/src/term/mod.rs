//! The terminal side shared by every personality: glibc's option rules
//! ([`getopt`]), gnulib's quoting of names in messages ([`quote`]), standard
//! output buffered as the originals buffer it ([`output`]), and the
//! progress bar ([`progress`]).

pub mod getopt;
pub mod output;
pub mod progress;
pub mod quote;
