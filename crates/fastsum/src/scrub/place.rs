//! Where an interrupted scrub stopped, kept in the cache's notes: the
//! key of the scrub (its paths and algorithm) and the last path verified.

use std::path::PathBuf;

use crate::algo::Algorithm;
use crate::fs::name;

/// Where the scrub of these paths with this algorithm keeps its place.
pub(super) fn place_key(algorithm: Algorithm, absolute: &[PathBuf]) -> String {
    let mut paths = Vec::new();
    for path in absolute {
        paths.extend_from_slice(name::path_bytes(path));
        paths.push(0);
    }
    format!(
        "scrub {algorithm} {}",
        Algorithm::Xxh128.hash_bytes(&paths).to_hex()
    )
}

/// A path's bytes as the cache's note keeps them (hex: any bytes).
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A note's path bytes; `None` for a note that is not hex.
pub(super) fn unhex(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}
