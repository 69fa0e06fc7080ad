//! Checking a manifest read whole ([`Manifest::read`])
//! against the files it lists, on every core: what `-c` does, for callers
//! that want results rather than lines (the Python binding's `check`).

use std::path::{Path, PathBuf};

use crate::error::{ErrorKind, Result};
use crate::manifest::read::Manifest;
use crate::pipeline::{Outcome, TreeHasher, TreeOptions};
use crate::stage::Source;

/// How one listed file compared.
#[derive(Debug)]
pub enum CheckStatus {
    /// The digest matches.
    Ok,
    /// The file was read; its digest differs.
    Failed,
    /// The file could not be read (missing, unreadable, a directory, a
    /// FIFO or device: anything but a regular file).
    Unreadable(ErrorKind),
}

/// One listed file, checked.
#[derive(Debug)]
pub struct Checked {
    /// The path as listed, joined to the base when one was given.
    pub path: PathBuf,
    /// The outcome.
    pub status: CheckStatus,
}

impl Manifest {
    /// Hashes every file the manifest lists (relative paths taken from
    /// `base`, or from the working directory as md5sum -c takes them) in
    /// the manifest's algorithm, and hands `sink` one result per entry, in
    /// the list's order. `options` gives the threads and read strategy;
    /// its algorithm and recursion are the manifest's business and are
    /// ignored. `stop`, once set, ends the run early.
    pub fn check(
        &self,
        base: Option<&Path>,
        options: &TreeOptions,
        stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
        mut sink: impl FnMut(Checked),
    ) -> Result<()> {
        let operands: Vec<Source> = self
            .entries
            .iter()
            .map(|e| {
                let listed = crate::fs::name::path(&e.path);
                let listed: &Path = &listed;
                Source::Path(match base {
                    Some(base) => base.join(listed),
                    None => listed.to_path_buf(),
                })
            })
            .collect();
        // A list's paths: regular files only, never waiting (a FIFO,
        // /dev/zero, a directory are unreadable).
        let mut hasher = TreeHasher::with_options(
            self.algorithm,
            TreeOptions {
                recursive: false,
                listed: true,
                ..options.clone()
            },
        );
        if let Some(stop) = stop {
            hasher = hasher.stop_when(stop);
        }
        hasher.run(&operands, |record| {
            let expected = &self.entries[record.operand].digest;
            let status = match record.outcome {
                // All of it, or (a CRC-32 listed alone, `rhash --simple`)
                // crc32b's first bytes, the size following them.
                Outcome::Hashed(h)
                    if !expected.is_empty()
                        && h.digest.as_bytes().starts_with(expected.as_bytes()) =>
                {
                    CheckStatus::Ok
                }
                Outcome::Hashed(_) => CheckStatus::Failed,
                Outcome::Failed(kind) | Outcome::WalkFailed(kind) => CheckStatus::Unreadable(kind),
                Outcome::Skipped(_) | Outcome::Directory(_) => {
                    unreachable!("operands are never skipped, and not walked")
                }
            };
            sink(Checked {
                path: record.path,
                status,
            })
        })
    }
}

#[cfg(feature = "cache")]
impl Manifest {
    /// The list's stamped entries (written by `fastsum --stamps`) as a
    /// cache session's answers, in the list's algorithm, for a run that
    /// starts now: an entry whose file's stamp moved since is read again,
    /// as the cache's would be. Paths are relative to the working
    /// directory.
    pub fn stamped_answers(&self) -> crate::cache::CacheRun {
        let stamped = self.entries.iter().filter_map(|e| {
            let file = crate::fs::name::path(&e.path);
            let stamp = *e.stamp.as_deref()?;
            Some((file.into_owned(), stamp, crate::fs::FsId(e.fsid), e.digest))
        });
        let snapshot = crate::cache::Snapshot::of_entries(self.algorithm, stamped);
        crate::cache::CacheRun::answering(crate::cache::CacheSession::new(snapshot, self.algorithm))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::Algorithm;

    #[test]
    fn ok_failed_and_missing_in_list_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), b"abc").unwrap();
        std::fs::write(dir.path().join("b"), b"changed").unwrap();
        let abc = Algorithm::Sha256.hash_bytes(b"abc").to_hex();
        let list = format!("{abc}  b\n{abc}  a\n{abc}  gone\n");
        let manifest = Manifest::read(list.as_bytes(), Some(Algorithm::Sha256)).unwrap();
        let mut got = Vec::new();
        let options = TreeOptions::new();
        manifest
            .check(Some(dir.path()), &options, None, |c| {
                let name = c.path.file_name().unwrap().to_string_lossy().into_owned();
                let status = match c.status {
                    CheckStatus::Ok => "ok".to_string(),
                    CheckStatus::Failed => "failed".to_string(),
                    CheckStatus::Unreadable(k) => k.to_string(),
                };
                got.push(format!("{name}: {status}"));
            })
            .unwrap();
        assert_eq!(
            got,
            ["b: failed", "a: ok", "gone: No such file or directory"]
        );
    }

    /// A list naming a FIFO, a device or a directory: each is
    /// unreadable at once, never waited on or read without end.
    #[cfg(unix)]
    #[test]
    fn fifos_devices_and_directories_are_unreadable_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = std::ffi::CString::new(dir.path().join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let empty = Algorithm::Md5.hash_bytes(b"").to_hex();
        let list = format!("{empty}  fifo\n{empty}  /dev/zero\n{empty}  /dev/null\n{empty}  .\n");
        let manifest = Manifest::read(list.as_bytes(), Some(Algorithm::Md5)).unwrap();
        let (done, wait) = std::sync::mpsc::channel();
        let base = dir.path().to_path_buf();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            let options = TreeOptions::new();
            let checked = manifest.check(Some(&base), &options, None, |c| {
                got.push(match c.status {
                    CheckStatus::Unreadable(kind) => kind.to_string(),
                    _ => "read".into(),
                })
            });
            done.send((checked.is_ok(), got)).unwrap();
        });
        let (ok, got) = wait
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("a listed FIFO or device made the check wait");
        assert!(ok);
        assert_eq!(
            got,
            [
                "not a regular file",
                "not a regular file",
                "not a regular file",
                "Is a directory"
            ]
        );
    }
}
