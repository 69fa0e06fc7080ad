//! The terminal side shared by every personality: glibc's option rules
//! ([`getopt`]), gnulib's quoting of names in messages ([`quote`]), standard
//! output buffered as the originals buffer it ([`output`]), and the
//! progress bar ([`progress`]).

pub mod getopt;
pub mod output;
pub mod progress;
pub mod quote;

/// `n` and the noun agreeing with it: "1 hit", "2 hits".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
