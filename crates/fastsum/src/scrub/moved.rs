//! Roots found again where their file system is now mounted elsewhere
//! (the same disk under another mount point). Each scrub
//! keeps, in the cache's notes, where each root was under the key of its
//! place on its file system (`fs::mount`); a root with nothing recorded
//! under its own path is looked up where it was then, and its files'
//! bytes are compared with those records (their device differs: a
//! remount), never taken as new.

use std::path::PathBuf;

use crate::cache::Cache;
use crate::error::Result;
use crate::fs::mount::mount_key;
use crate::fs::name;

/// Each root's note key (none where the system gives no key) and the
/// other paths it had at earlier scrubs, the latest first. Every place is
/// kept (the last few): a corrupted file's record stays where it was
/// found until someone decides, so a root's first place must still be
/// looked in after a scrub at its second.
pub(super) struct Moved {
    keys: Vec<Option<String>>,
    pub before: Vec<Vec<PathBuf>>,
}

/// The places a note keeps, at most.
const PLACES: usize = 8;

impl Moved {
    /// Where the roots at `absolute` (canonical paths) were.
    pub(super) fn load(cache: &Cache, absolute: &[PathBuf]) -> Result<Moved> {
        let keys: Vec<Option<String>> = absolute.iter().map(|root| note_key(root)).collect();
        let mut before = Vec::with_capacity(absolute.len());
        for (key, root) in keys.iter().zip(absolute) {
            let mut was = match key {
                Some(key) => cache
                    .note(key)?
                    .map(|note| decode(&note))
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            was.retain(|was| was != root);
            before.push(was);
        }
        Ok(Moved { keys, before })
    }

    /// Remembers where the roots are now, before where they were.
    pub(super) fn remember(&self, cache: &mut Cache, absolute: &[PathBuf]) -> Result<()> {
        for ((key, root), before) in self.keys.iter().zip(absolute).zip(&self.before) {
            if let Some(key) = key {
                let places: Vec<String> = std::iter::once(root)
                    .chain(before)
                    .take(PLACES)
                    .map(|p| hex(name::path_bytes(p)))
                    .collect();
                cache.set_note(key, Some(&places.join(" ")))?;
            }
        }
        Ok(())
    }
}

/// `scrub-at FSID WITHIN` (the path within hashed: any bytes, any length).
fn note_key(root: &std::path::Path) -> Option<String> {
    let key = mount_key(root)?;
    let within = crate::algo::Algorithm::Xxh128.hash_bytes(&key.within);
    Some(format!("scrub-at {:016x} {}", key.fsid, within.to_hex()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A note's paths (those this version would write; others left out).
fn decode(note: &str) -> Vec<PathBuf> {
    note.split(' ').filter_map(decode_one).collect()
}

fn decode_one(digits: &str) -> Option<PathBuf> {
    let digits = digits.as_bytes();
    if digits.is_empty() || !digits.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect();
    let path = name::path(&bytes?).into_owned();
    path.is_absolute().then_some(path)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_note_holds_any_path_and_nothing_else() {
        let path = std::path::Path::new("/mnt/a b\n\u{e9}");
        let note = super::hex(crate::fs::name::path_bytes(path));
        let other = super::hex(b"/srv");
        let note = format!("{note} zz {other}");
        assert_eq!(super::decode(&note), [path, std::path::Path::new("/srv")]);
        for bad in ["", "2", "zz", "61", "+1"] {
            assert_eq!(
                super::decode(bad),
                Vec::<std::path::PathBuf>::new(),
                "{bad}"
            );
        }
    }
}
