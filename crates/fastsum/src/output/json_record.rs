//! A hashing run's [`Record`] as one object of fastsum's JSON Lines
//! (docs/JSON.md; the format's pieces are `crate::manifest::json`'s):
//! a digest and size, an error, a skip or a directory's digest.

use crate::algo::Algorithm;
use crate::manifest::json::{write_name, write_string};
use crate::pipeline::{Outcome, Record};

/// Appends `record` as one JSON object and a newline to `out` (the
/// tests' shorthand: every output passes its stamps' rule).
#[cfg(test)]
pub(crate) fn write_record(out: &mut Vec<u8>, algorithm: Algorithm, record: &Record) {
    write_record_stamped(out, algorithm, record, None);
}

/// [`write_record`], a hashed file's stamp included (`"device"`,
/// `"inode"`, `"mtime_ns"`, `"ctime_ns"`, and `"fsid"`, the file system's
/// identity by the cache's rule, `fs::identity`) when it has one settled
/// before `stamps_before` (ns since the epoch).
pub(crate) fn write_record_stamped(
    out: &mut Vec<u8>,
    algorithm: Algorithm,
    record: &Record,
    stamps_before: Option<i64>,
) {
    out.push(b'{');
    write_name(out, "path", record.path.as_os_str().as_encoded_bytes());
    out.extend_from_slice(b",\"algorithm\":");
    write_string(out, &algorithm.to_string());
    match &record.outcome {
        Outcome::Hashed(hashed) => {
            use std::io::Write as _;
            out.extend_from_slice(b",\"digest\":\"");
            hashed.digest.push_hex(out);
            let _ = write!(out, "\",\"size\":{}", hashed.size);
            write_stamp(out, hashed.stamp.as_ref(), &record.path, stamps_before);
        }
        Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
            out.extend_from_slice(b",\"error\":");
            write_string(out, &kind.to_string());
        }
        Outcome::Skipped(kind) => {
            out.extend_from_slice(b",\"skipped\":");
            write_string(out, kind.describe());
        }
        // A directory's digest (docs/DIRECTORY-DIGEST.md); a directory
        // met on the way down has no record.
        Outcome::Directory(Some(digest)) => {
            out.extend_from_slice(b",\"directory_digest\":\"");
            digest.push_hex(out);
            out.push(b'"');
        }
        Outcome::Directory(None) => {}
    }
    out.extend_from_slice(b"}\n");
}

/// A record's stamp fields (`"device"`, `"inode"`, `"mtime_ns"`,
/// `"ctime_ns"`, `"fsid"`) for the file at `path`, when its stamp vouches
/// at `stamps_before`; nothing otherwise. Every record with a stamp, of one
/// digest or several, writes it here.
pub(crate) fn write_stamp(
    out: &mut Vec<u8>,
    stamp: Option<&crate::fs::FileStamp>,
    path: &std::path::Path,
    stamps_before: Option<i64>,
) {
    use std::io::Write as _;
    // A stamp vouches only when settled, on a file system written back
    // (a write through a shared mapping may leave it unmoved).
    let settled = |s: &&crate::fs::FileStamp| stamps_before.is_some_and(|t| s.vouches_at(t));
    if let Some(s) = stamp.filter(settled) {
        // The file system's id beside the stamp: two images of one shape
        // mounted in turn give every stamp field alike, and a
        // list is trusted as the cache is.
        let fsid = run_fs_id(stamps_before, s.dev, path).0;
        let _ = write!(
            out,
            ",\"device\":{},\"inode\":{},\"mtime_ns\":{},\"ctime_ns\":{},\"fsid\":{fsid}",
            s.dev, s.ino, s.mtime_ns, s.ctime_ns
        );
    }
}

thread_local! {
    /// The file systems' ids met by the run that started at the moment
    /// kept beside them (its `stamps_before`): `statfs` once per device and
    /// run, not once per record (a stamped list of /usr/share is nearly
    /// all one device). A run with another start asks again, so a file
    /// system mounted in another's place between runs is never given the
    /// other's id.
    static RUN_FS_IDS: std::cell::RefCell<(Option<i64>, crate::fs::FsIds)> =
        std::cell::RefCell::default();
}

/// The id of the file system on `dev`, where `path` lies, asked once per
/// device in the run that started at `run`.
fn run_fs_id(run: Option<i64>, dev: u64, path: &std::path::Path) -> crate::fs::FsId {
    RUN_FS_IDS.with_borrow_mut(|(started, ids)| {
        if *started != run {
            *started = run;
            *ids = crate::fs::FsIds::default();
        }
        ids.of(dev, path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::json::write_base64;
    use crate::stage::Hashed;
    use crate::walk::SpecialKind;
    use crate::ErrorKind;

    fn line(path: &[u8], outcome: Outcome) -> String {
        let record = Record {
            operand: 0,
            seq: 0,
            path: crate::fs::name::path(path).into_owned(),
            outcome,
        };
        let mut out = Vec::new();
        write_record(&mut out, Algorithm::Md5, &record);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn records_as_json_lines() {
        let digest = Algorithm::Md5.hash_bytes(b"abc");
        assert_eq!(
            line(b"d/a \"q\"\\\n", Outcome::Hashed(Hashed::new(digest, 3))),
            "{\"path\":\"d/a \\\"q\\\"\\\\\\n\",\"algorithm\":\"md5\",\
             \"digest\":\"900150983cd24fb0d6963f7d28e17f72\",\"size\":3}\n"
        );
        assert_eq!(
            line(b"x\x01", Outcome::Skipped(SpecialKind::Fifo)),
            "{\"path\":\"x\\u0001\",\"algorithm\":\"md5\",\"skipped\":\"fifo\"}\n"
        );
        let gone = ErrorKind::Io(std::io::Error::from_raw_os_error(libc::ENOENT));
        assert_eq!(
            line(b"gone", Outcome::Failed(gone)),
            "{\"path\":\"gone\",\"algorithm\":\"md5\",\"error\":\"No such file or directory\"}\n"
        );
    }

    #[test]
    fn non_utf8_names_carry_their_exact_bytes() {
        let out = line(b"caf\xe9", Outcome::Skipped(SpecialKind::Socket));
        assert!(out.starts_with("{\"path\":\"caf\u{fffd}\",\"path_base64\":\"Y2Fm6Q==\","));
        for (input, expected) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foobar", "Zm9vYmFy"),
        ] {
            let mut out = Vec::new();
            write_base64(&mut out, input);
            assert_eq!(out, expected.as_bytes());
        }
    }

    /// statfs once per device and run: a second path of a device known to
    /// the run gets the device's id without asking, and a run that starts
    /// later asks again (its file systems may have been swapped).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_systems_id_is_asked_once_per_device_and_run() {
        use crate::fs::FsId;
        let dir = tempfile::tempdir().unwrap();
        let here = FsId::of_path(dir.path());
        let proc = FsId::of_path(std::path::Path::new("/proc/self"));
        assert_ne!(here, proc);
        let dev = 4242;
        assert_eq!(run_fs_id(Some(1), dev, dir.path()), here);
        assert_eq!(
            run_fs_id(Some(1), dev, std::path::Path::new("/proc/self")),
            here
        );
        assert_eq!(
            run_fs_id(Some(2), dev, std::path::Path::new("/proc/self")),
            proc
        );
        assert_eq!(run_fs_id(Some(2), dev + 1, dir.path()), here);
    }
}
