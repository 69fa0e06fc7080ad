//! Files an interrupted action left behind. A link replaces a member
//! under a temporary name beside it (`.fastsum-NAME.PID.tmp`, then a
//! rename): a run killed between the two leaves that name. A later run
//! finds them in its walk, never counts them as files, and reports them;
//! with an action it removes those that are provably its own and hold no
//! byte found nowhere else.

use std::path::{Path, PathBuf};

/// A temporary name of an interrupted run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leftover {
    /// Where it is.
    pub path: PathBuf,
    /// The process that made it.
    pub pid: u32,
}

/// The temporary name an action gives the replacement of `member`.
pub(super) fn temporary_name(member: &[u8], pid: u32) -> Vec<u8> {
    let mut name = b".fastsum-".to_vec();
    name.extend_from_slice(&member[..member.len().min(64)]);
    name.extend_from_slice(format!(".{pid}.tmp").as_bytes());
    name
}

/// The process id in a name shaped as an action's temporary names are
/// (`.fastsum-NAME.PID.tmp`), or
/// `None` for any other name.
pub(crate) fn pid_of(name: &[u8]) -> Option<u32> {
    let rest = name.strip_prefix(b".fastsum-")?.strip_suffix(b".tmp")?;
    let dot = rest.iter().rposition(|&b| b == b'.')?;
    let (member, digits) = (&rest[..dot], &rest[dot + 1..]);
    if member.is_empty() || digits.is_empty() || digits.len() > 10 {
        return None;
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// `path` as a leftover, if its name is one.
pub(super) fn leftover(path: &Path) -> Option<Leftover> {
    let name = path.file_name()?.as_encoded_bytes();
    Some(Leftover {
        path: path.to_path_buf(),
        pid: pid_of(name)?,
    })
}

impl Leftover {
    /// Removes it if it is provably an interrupted run's and holds no byte
    /// that only it holds (a symbolic link, or one more name of a file
    /// that has another). `Err` says why it was left where it is.
    pub fn clear(&self) -> Result<(), String> {
        clear(self)
    }
}

fn clear(leftover: &Leftover) -> Result<(), String> {
    if process_alive(leftover.pid) {
        return Err(format!("process {} is still running", leftover.pid));
    }
    let meta = match std::fs::symlink_metadata(&leftover.path) {
        Ok(m) => m,
        Err(e) => return Err(crate::error::ErrorKind::Io(e).to_string()),
    };
    let only_name = meta.is_file() && links(&meta) < 2;
    if !meta.file_type().is_symlink() && !meta.is_file() || only_name {
        return Err("it is the only name of its bytes: look at it and remove it".into());
    }
    match std::fs::remove_file(&leftover.path) {
        Ok(()) => Ok(()),
        Err(e) => Err(crate::error::ErrorKind::Io(e).to_string()),
    }
}

#[cfg(unix)]
fn links(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn links(_meta: &std::fs::Metadata) -> u64 {
    1
}

/// Whether a process with this id runs now (a reused id counts as
/// running: the leftover is then kept).
#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only asks whether the
    // process exists and may be signalled.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Off Unix a leftover's process cannot be asked about: it is kept.
#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_of_the_exact_shape_are_leftovers() {
        assert_eq!(pid_of(&temporary_name(b"a.txt", 4242)), Some(4242));
        assert_eq!(pid_of(b".fastsum-x.y.17.tmp"), Some(17));
        for other in [
            &b".fastsum-.17.tmp"[..],
            b".fastsum-x.tmp",
            b".fastsum-x..tmp",
            b".fastsum-x.1a.tmp",
            b"fastsum-x.17.tmp",
            b".fastsum-x.17.tmp~",
            b".fastsum-x.99999999999.tmp",
            b"",
        ] {
            assert_eq!(pid_of(other), None, "{:?}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn a_dead_runs_links_are_removed_and_a_sole_copy_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        std::fs::write(&kept, b"bytes").unwrap();
        // A pid no process has: above the kernel's pid_max.
        let dead = 4_194_304 + 7;
        let name = |n: &str| {
            dir.path().join(crate::fs::name::os_string(temporary_name(
                n.as_bytes(),
                dead,
            )))
        };
        let (hard, soft, sole) = (name("h"), name("s"), name("o"));
        std::fs::hard_link(&kept, &hard).unwrap();
        std::os::unix::fs::symlink(&kept, &soft).unwrap();
        std::fs::write(&sole, b"only here").unwrap();
        for path in [&hard, &soft] {
            assert_eq!(clear(&leftover(path).unwrap()), Ok(()));
            assert!(path.symlink_metadata().is_err());
        }
        assert!(clear(&leftover(&sole).unwrap()).is_err());
        assert_eq!(std::fs::read(&sole).unwrap(), b"only here");
        // A running process's (ours): kept, whatever it is.
        let ours = dir.path().join(crate::fs::name::os_string(temporary_name(
            b"k",
            std::process::id(),
        )));
        std::fs::hard_link(&kept, &ours).unwrap();
        assert!(matches!(clear(&leftover(&ours).unwrap()), Err(why) if why.contains("running")));
        assert_eq!(std::fs::read(&kept).unwrap(), b"bytes");
    }
}
