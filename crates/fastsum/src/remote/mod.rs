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
//! quotes (`sh_quote`) and come back NUL-separated, so no file name is
//! ever read as shell syntax.

mod captured;
mod rsh;
mod script;
mod session;
parsers! {
    pub(crate) mod stream;
    pub(crate) mod text;
}

use std::io::BufRead;

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};

pub(crate) use script::sh_quote;

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

impl std::fmt::Display for Remote {
    /// `host:path` (a path that is not UTF-8 shown lossily).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, String::from_utf8_lossy(&self.path))
    }
}

/// How the remote host computes digests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `fastsum` on the remote `PATH`, speaking JSON Lines.
    Fastsum,
    /// GNU `find -print0 | xargs -0 md5sum -z` (or sha*sum, b2sum).
    Coreutils,
    /// BSD and macOS: `md5 -q`, `shasum -a N` (or FreeBSD's `sha256 -q`)
    /// on each batch `xargs -0` makes, one digest line per file in order,
    /// the names kept from `find -print0`; a batch whose tool failed or
    /// answered a line short goes again one file at a time.
    Bsd,
    /// Perl's core `Digest::MD5` / `Digest::SHA`, streamed with `addfile`.
    Perl,
    /// `python3` with `hashlib`, streamed.
    Python,
}

impl Method {
    /// Every method, in the order they are tried.
    pub const ALL: [Method; 5] = [
        Method::Fastsum,
        Method::Coreutils,
        Method::Bsd,
        Method::Perl,
        Method::Python,
    ];

    /// Its name (`--remote-method NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Fastsum => "fastsum",
            Method::Coreutils => "coreutils",
            Method::Bsd => "bsd",
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
    /// Copy this fastsum binary (the running one, say) to a private
    /// temporary directory on the host when `uname -sm` there matches
    /// this machine's, run it, and remove it; other hosts fall back to
    /// the methods they have.
    pub upload_self: Option<std::path::PathBuf>,
    /// Let a remote fastsum answer from its own checksum cache (its
    /// default path there), which is never stale: a file whose stamp
    /// moved is read again.
    pub cache: bool,
    /// Read the listing from this file (`-`: standard input) instead of
    /// running the transport: the output of [`RemoteOptions::command`] run on the
    /// host by someone else (a deploy tool over its own connection).
    pub listing: Option<std::path::PathBuf>,
    /// Directory digests this side has (relative to the remote path): a
    /// remote fastsum sends a matching directory as one record
    /// ([`RemoteRecord::directory`]) instead of its files. Set when they
    /// are ready: the host is reached meanwhile, and they are sent on its
    /// standard input (so not with `upload_self`) once set.
    pub offers: Option<std::sync::Arc<std::sync::OnceLock<crate::dirdigest::Offers>>>,
}

impl RemoteOptions {
    /// Reach the host through `command` as `-e` / `FASTSUM_RSH` give it
    /// (`ssh -p 2222`): words split at white space, as rsync splits `-e`,
    /// where single quotes keep text whole, double quotes too (a backslash
    /// escapes `"` and `\` in them), and a backslash outside quotes
    /// escapes the next character.
    pub fn set_transport(&mut self, command: &str) {
        self.rsh = rsh::split_command(command);
    }

    /// The command that lists and hashes the tree at each of `paths` on a
    /// host, for a caller that runs it there over its own connection (the
    /// stable interface a deploy tool uses: docs/REMOTE.md). It is one
    /// line of text for the host's login shell (`sh -c '...'`), whatever
    /// that shell is. With `text`, everything it prints is printable ASCII
    /// lines (a header, hex, a marker, hex), so a runner that reads lines,
    /// turns `\n` into `\r\n` or gives it a terminal loses nothing; several
    /// paths (text only) give one such listing after another, in their
    /// order. Read its output back with [`RemoteOptions::listing`].
    /// `upload_self` does not apply (the runner's channel carries no
    /// binary).
    pub fn command(
        &self,
        paths: &[&[u8]],
        algorithm: Algorithm,
        text: bool,
    ) -> std::result::Result<Vec<u8>, String> {
        captured::remote_command(paths, algorithm, self, text)
    }
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            rsh: vec!["ssh".into()],
            method: None,
            remote_fastsum: None,
            upload_self: None,
            cache: false,
            listing: None,
            offers: None,
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
    /// A directory whose digest matched the one offered for it
    /// ([`RemoteOptions::offers`]): its files are the offering side's. Its
    /// path ends with `/`.
    pub directory: bool,
}

fn failure(remote: &Remote, why: String) -> Error {
    Error::with_path(
        remote.to_string(),
        ErrorKind::Io(std::io::Error::other(why)),
    )
}

/// How a remote listing was made.
#[derive(Debug)]
pub struct RemoteRun {
    /// The method that ran.
    pub method: Method,
    /// Whether it ran the fastsum uploaded for this run.
    pub uploaded: bool,
    /// Why `--upload-self` could not send this fastsum (the host went on
    /// with another method).
    pub upload_failed: Option<String>,
    /// The symbolic links under the path it left out (as `-r` does
    /// without `-L`).
    pub symlinks_left_out: u64,
}

/// Where a remote listing's records go as they arrive.
pub trait RemoteSink {
    /// The next record, in path order.
    fn record(&mut self, record: RemoteRecord);

    /// Everything received is handed on and the host has sent nothing
    /// more yet: the listing is about to wait for it (a printer flushes).
    fn idle(&mut self) {}
}

impl<F: FnMut(RemoteRecord)> RemoteSink for F {
    fn record(&mut self, record: RemoteRecord) {
        self(record)
    }
}

/// [`Remote::hash`].
pub(crate) fn hash_remote(
    remote: &Remote,
    algorithm: Algorithm,
    options: &RemoteOptions,
    sink: &mut dyn RemoteSink,
) -> Result<RemoteRun> {
    if let Some(file) = &options.listing {
        return captured::read_listing(remote, algorithm, file, sink);
    }
    let upload = match (&options.upload_self, options.method) {
        (Some(binary), None | Some(Method::Fastsum)) => Some(
            std::fs::read(binary)
                .map_err(|e| failure(remote, format!("{}: {e}", binary.display())))?,
        ),
        _ => None,
    };
    let mut host = session::Host::start(remote, algorithm, options, upload.is_some())?;
    let sink = std::cell::RefCell::new(sink);
    let mut stdout = std::io::BufReader::new(session::Notify {
        inner: host.stdout(),
        before_wait: || sink.borrow_mut().idle(),
    });
    let uploaded = match upload {
        Some(binary) => host.upload_if_it_runs_here(&mut stdout, binary),
        // The offers go only to a host that has no binary to take first.
        None => {
            host.send_offers(options);
            false
        }
    };
    let answered = stdout.fill_buf().is_ok_and(|b| !b.is_empty());
    let (path, _) = script::spelled(&remote.path);
    // The host sends nothing before it has the offers.
    let offers = options.offers.as_deref().map(std::sync::OnceLock::wait);
    let parsed = stream::parse(&mut stdout, algorithm, &path, offers, &mut |mut record| {
        record.path = script::as_given(remote, std::mem::take(&mut record.path));
        sink.borrow_mut().record(record)
    });
    let parsed = host.end(remote, parsed, stdout, answered, uploaded)?;
    Ok(RemoteRun {
        method: parsed.method,
        uploaded: uploaded && parsed.method == Method::Fastsum,
        upload_failed: host.upload_failed,
        symlinks_left_out: parsed.symlinks,
    })
}

impl Remote {
    /// Hashes every regular file under `remote` on its host, each record
    /// handed to `sink` in path order as the host sends it (memory does not
    /// grow with the listing where the host sorts it).
    ///
    /// Errors: the transport failed (unreachable host, refused
    /// authentication), no method applies, or the stream ended before its
    /// trailer (a dropped connection: a partial listing is never complete). A
    /// missing remote path is an error naming it. An error can follow records
    /// already handed on: a caller that must not act on part of a listing
    /// holds them until `Ok`.
    pub fn hash(
        &self,
        algorithm: Algorithm,
        options: &RemoteOptions,
        sink: &mut dyn RemoteSink,
    ) -> Result<RemoteRun> {
        hash_remote(self, algorithm, options, sink)
    }
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
