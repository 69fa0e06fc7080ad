//! File names as bytes, on every platform.
//!
//! Two conversions are public: [`path`] (bytes to a path) and
//! [`path_bytes`] (a path to its bytes); the rest serve the library.
//!
//! fastsum matches, sorts, escapes and prints names as bytes. On Unix a
//! name is its bytes. Elsewhere (Windows: UTF-16) the bytes are the
//! standard library's encoding of the name (`as_encoded_bytes`, WTF-8 on
//! Windows, which is UTF-8 for every name that is valid Unicode), so a name
//! prints as UTF-8; bytes turn back into a name through UTF-8, and a name
//! that is not valid Unicode (an unpaired surrogate) is replaced lossily
//! there, with no `unsafe`.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The bytes of a name.
pub(crate) fn bytes(name: &OsStr) -> &[u8] {
    name.as_encoded_bytes()
}

/// The bytes of a path.
pub fn path_bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// The name made of `bytes`.
pub(crate) fn os_str(bytes: &[u8]) -> Cow<'_, OsStr> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        match String::from_utf8_lossy(bytes) {
            Cow::Borrowed(text) => Cow::Borrowed(OsStr::new(text)),
            Cow::Owned(text) => Cow::Owned(OsString::from(text)),
        }
    }
}

/// The name made of `bytes`, owned.
pub(crate) fn os_string(bytes: Vec<u8>) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        OsString::from_vec(bytes)
    }
    #[cfg(not(unix))]
    {
        match String::from_utf8(bytes) {
            Ok(text) => OsString::from(text),
            Err(e) => OsString::from(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        }
    }
}

/// The path made of `bytes`.
pub fn path(bytes: &[u8]) -> Cow<'_, Path> {
    match os_str(bytes) {
        Cow::Borrowed(name) => Cow::Borrowed(Path::new(name)),
        Cow::Owned(name) => Cow::Owned(PathBuf::from(name)),
    }
}

/// The path made of `bytes`, owned.
pub(crate) fn path_buf(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(os_string(bytes))
}

/// Whether `byte` separates path components here (`/`; on Windows `\` too).
/// A listed path as the file it names, whatever its spelling: `./a`,
/// `a`, `./././a`, `a//b` and `a/./b` name one file under the list's
/// root, so they are one key wherever a list's entries are told apart
/// (a list giving `one` and `./one` two digests said two things of one
/// file, and `contained` believed one of them). `..` is left as it is
/// (through a symbolic link it is not its parent's).
pub(crate) fn listed_key(path: &[u8]) -> Cow<'_, [u8]> {
    let plain = !path.starts_with(b"./")
        && !path.windows(2).any(|w| w == b"//")
        && !path.windows(3).any(|w| w == b"/./")
        && !path.ends_with(b"/.");
    if plain {
        return Cow::Borrowed(path);
    }
    let absolute = path.first() == Some(&b'/');
    let parts: Vec<&[u8]> = path
        .split(|&b| b == b'/')
        .filter(|part| !part.is_empty() && *part != b".")
        .collect();
    let mut key = Vec::with_capacity(path.len());
    if absolute {
        key.push(b'/');
    }
    key.extend_from_slice(&parts.join(&b'/'));
    if path.ends_with(b"/") && !key.ends_with(b"/") {
        key.push(b'/');
    }
    Cow::Owned(key)
}

pub(crate) fn is_separator(byte: u8) -> bool {
    byte == b'/' || (cfg!(windows) && byte == b'\\')
}

/// The separator a walk puts between a directory and its entries.
pub(crate) const SEPARATOR: u8 = std::path::MAIN_SEPARATOR as u8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_listed_file_are_one_key() {
        for spelling in ["one", "./one", "././one", ".//one"] {
            assert_eq!(&*listed_key(spelling.as_bytes()), b"one", "{spelling}");
        }
        for spelling in ["a/b", "a//b", "./a/./b", "a/b/."] {
            assert_eq!(&*listed_key(spelling.as_bytes()), b"a/b", "{spelling}");
        }
        assert_eq!(&*listed_key(b"/abs//x"), b"/abs/x");
        assert_eq!(&*listed_key(b"d/"), b"d/");
        assert_eq!(&*listed_key(b"a/../b"), b"a/../b");
        assert_ne!(&*listed_key(b"one"), &*listed_key(b"one."));
    }

    #[test]
    fn names_round_trip_through_bytes() {
        for name in ["plain", "sp ace", "ünï\u{1F600}", "a\\b", ""] {
            let b = bytes(OsStr::new(name)).to_vec();
            assert_eq!(os_str(&b), OsStr::new(name));
            assert_eq!(os_string(b.clone()), OsString::from(name));
            assert_eq!(path(&b), Path::new(name));
        }
    }

    #[cfg(unix)]
    #[test]
    fn unix_names_are_any_bytes() {
        let raw = b"\xff\xfe name".to_vec();
        assert_eq!(bytes(&os_string(raw.clone())), &raw[..]);
    }
}
