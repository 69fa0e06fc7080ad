//! Remote trees over SSH: `[user@]host:path` operands hashed on the remote
//! host by whatever it has, the answers streamed back as data.
//!
//! The transport is the system `ssh` (or the command the caller gives, as
//! rsync's `-e`), so `~/.ssh/config`, agents, jump hosts and known_hosts
//! work as users expect; host-key checking is never weakened. One POSIX
//! `sh` script goes over: it picks a method (or runs the one forced),
//! says which on its first line, streams NUL-separated records, and ends
//! with a trailer. A stream without the trailer is a dropped connection,
//! never a shorter tree. Paths reach the remote shell only inside single
//! quotes ([`sh_quote`]) and come back NUL-separated, so no file name is
//! ever read as shell syntax.

mod script;

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStringExt;
use std::process::{Command, Stdio};

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};

pub use script::sh_quote;

/// A remote operand: `[user@]host:path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// `host` or `user@host`, as given.
    pub host: String,
    /// The path on the host (relative paths are from the login directory).
    pub path: Vec<u8>,
}

impl Remote {
    /// The remote an operand names, by scp's rule: a colon before the
    /// first slash makes it remote (`host:/srv`, `user@host:data`);
    /// `./a:b`, `/x:y` and names without a colon are local.
    pub fn parse(operand: &[u8]) -> Option<Remote> {
        let colon = operand.iter().position(|&b| b == b':')?;
        let slash = operand.iter().position(|&b| b == b'/');
        if colon == 0 || slash.is_some_and(|s| s < colon) {
            return None;
        }
        let host = std::str::from_utf8(&operand[..colon]).ok()?;
        if host.starts_with('-') || host.chars().any(|c| c.is_whitespace()) {
            return None;
        }
        Some(Remote {
            host: host.to_string(),
            path: operand[colon + 1..].to_vec(),
        })
    }
}

/// How the remote host computes digests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `fastsum` on the remote `PATH`, speaking JSON Lines.
    Fastsum,
    /// GNU `find -print0 | xargs -0 md5sum -z` (or sha*sum, b2sum).
    Coreutils,
    /// Perl's core `Digest::MD5` / `Digest::SHA`, streamed with `addfile`.
    Perl,
    /// `python3` with `hashlib`, streamed.
    Python,
}

impl Method {
    /// Every method, in the order they are tried.
    pub const ALL: [Method; 4] = [
        Method::Fastsum,
        Method::Coreutils,
        Method::Perl,
        Method::Python,
    ];

    /// Its name (`--remote-method NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Fastsum => "fastsum",
            Method::Coreutils => "coreutils",
            Method::Perl => "perl",
            Method::Python => "python",
        }
    }

    /// The method called `name`.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// How to reach the host.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// The transport command and its arguments (default `ssh`).
    pub rsh: Vec<String>,
    /// Run only this method.
    pub method: Option<Method>,
    /// The remote fastsum to run (default: `fastsum` on the remote PATH).
    pub remote_fastsum: Option<String>,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            rsh: vec!["ssh".into()],
            method: None,
            remote_fastsum: None,
        }
    }
}

/// One remote file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteRecord {
    /// Its path, starting with the path as given.
    pub path: Vec<u8>,
    /// Its digest, or why it could not be hashed.
    pub digest: std::result::Result<Digest, String>,
}

/// What a remote run answered.
#[derive(Debug)]
pub struct RemoteListing {
    /// The method that ran.
    pub method: Method,
    /// Every regular file under the path, sorted by path bytes.
    pub records: Vec<RemoteRecord>,
}

fn failure(remote: &Remote, why: String) -> Error {
    let name = format!("{}:{}", remote.host, String::from_utf8_lossy(&remote.path));
    Error::with_path(name, ErrorKind::Io(std::io::Error::other(why)))
}

/// Hashes every regular file under `remote` on its host. Errors: the
/// transport failed (unreachable host, refused authentication), no method
/// applies, or the stream ended before its trailer (a dropped connection:
/// a partial listing is never returned as complete). A missing remote
/// path is an error naming it.
pub fn hash_remote(
    remote: &Remote,
    algorithm: Algorithm,
    options: &RemoteOptions,
) -> Result<RemoteListing> {
    let script = script::build(remote, algorithm, options).map_err(|why| failure(remote, why))?;
    let (program, args) = options
        .rsh
        .split_first()
        .ok_or_else(|| failure(remote, "no transport command".into()))?;
    let mut child = Command::new(program)
        .args(args)
        .arg("--")
        .arg(&remote.host)
        .arg(OsString::from_vec(script))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failure(remote, format!("cannot run {program}: {e}")))?;
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let _ = stderr.read_to_end(&mut err);
        err
    });
    let read = stdout.read_to_end(&mut out);
    let err = reader.join().unwrap_or_default();
    let status = child.wait().map_err(|e| failure(remote, e.to_string()))?;
    let said = String::from_utf8_lossy(&err).trim().to_string();
    if let Err(e) = read {
        return Err(failure(remote, format!("reading from {program}: {e}")));
    }
    let mut listing = script::parse(&out, algorithm).map_err(|why| {
        let why = match (status.code(), said.is_empty()) {
            (Some(255), false) => format!("{program}: {said}"),
            (_, false) => format!("{why} ({said})"),
            _ => why,
        };
        failure(remote, why)
    })?;
    for record in &mut listing.records {
        record.path = script::as_given(remote, std::mem::take(&mut record.path));
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_remote_by_scps_rule() {
        let r = Remote::parse(b"web1:/srv/www").unwrap();
        assert_eq!((r.host.as_str(), &r.path[..]), ("web1", &b"/srv/www"[..]));
        let r = Remote::parse(b"deploy@web1:site").unwrap();
        assert_eq!(
            (r.host.as_str(), &r.path[..]),
            ("deploy@web1", &b"site"[..])
        );
        assert_eq!(Remote::parse(b"host:").unwrap().path, b"");
        for local in [
            &b"./a:b"[..],
            b"/x:y",
            b"plain",
            b":leading",
            b"dir/a:b",
            b"-e:x",
        ] {
            assert_eq!(
                Remote::parse(local),
                None,
                "{}",
                String::from_utf8_lossy(local)
            );
        }
    }
}
