//! One run of the listing command on a host: the transport started with
//! the script, what goes to its standard input (this fastsum to upload,
//! or the directory digests to offer), its stderr kept for messages, and
//! how it ends (killed when refused part way, let end when it said its
//! method failed, its complaint put beside the parser's).

use std::io::{BufRead, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread::JoinHandle;

use super::stream::{self, Parsed};
use super::{failure, script, Remote, RemoteOptions};
use crate::algo::Algorithm;
use crate::error::Result;

/// The transport running the script, and the threads beside it.
pub(super) struct Host {
    child: Child,
    /// The transport's program, as messages name it.
    program: String,
    stdin: Option<ChildStdin>,
    /// The first 64 KiB of what the host says on stderr.
    stderr: Option<JoinHandle<Vec<u8>>>,
    /// The thread writing to the host's standard input.
    writer: Option<JoinHandle<std::io::Result<()>>>,
    /// Why uploading this fastsum failed (the host went on without it).
    pub upload_failed: Option<String>,
}

impl Host {
    /// Starts the transport with the script for `remote` (its standard
    /// input open only for an upload or offers to send).
    pub(super) fn start(
        remote: &Remote,
        algorithm: Algorithm,
        options: &RemoteOptions,
        upload: bool,
    ) -> Result<Host> {
        let script = script::build(&[&remote.path], algorithm, options, upload, false)
            .map_err(|why| failure(remote, why))?;
        let (program, args) = options
            .rsh
            .split_first()
            .ok_or_else(|| failure(remote, "no transport command".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .arg("--")
            .arg(&remote.host)
            .arg(crate::fs::name::os_string(script))
            .stdin(if upload || options.offers.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failure(remote, format!("cannot run {program}: {e}")))?;
        let stderr = child.stderr.take().expect("piped");
        // What the host says on stderr goes into messages: the first 64 KiB,
        // the rest read and dropped (a chatty host cannot fill memory).
        let reader = std::thread::spawn(move || {
            let mut err = Vec::new();
            let mut stderr = stderr;
            let _ = (&mut stderr).take(64 << 10).read_to_end(&mut err);
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            err
        });
        Ok(Host {
            stdin: child.stdin.take(),
            child,
            program: program.clone(),
            stderr: Some(reader),
            writer: None,
            upload_failed: None,
        })
    }

    /// The host's standard output (once).
    pub(super) fn stdout(&mut self) -> ChildStdout {
        self.child.stdout.take().expect("piped, taken once")
    }

    /// Reads the host's `uname -sm` line and, when it is this machine's,
    /// sends `binary` on its standard input; otherwise closes it (the host
    /// goes on with the methods it has). Whether it was sent.
    pub(super) fn upload_if_it_runs_here(
        &mut self,
        stdout: &mut impl BufRead,
        binary: Vec<u8>,
    ) -> bool {
        let stdin = self.stdin.take().expect("piped for the upload");
        let mut line = Vec::new();
        let _ = stdout.take(4096).read_until(b'\n', &mut line);
        let theirs = line
            .strip_prefix(b"fastsum-remote-uname ")
            .map(<[u8]>::trim_ascii);
        let runs_here = theirs.is_some_and(|t| t == local_uname().as_bytes());
        if !runs_here {
            return false;
        }
        self.writer = Some(std::thread::spawn(move || write_stdin(stdin, &binary)));
        true
    }

    /// Sends the directory digests offered, once they are ready, on the
    /// host's standard input (a host that does not read them, another
    /// method, closes the pipe).
    pub(super) fn send_offers(&mut self, options: &RemoteOptions) {
        if let (Some(offers), Some(stdin)) = (options.offers.clone(), self.stdin.take()) {
            self.writer = Some(std::thread::spawn(move || {
                write_stdin(stdin, &offers.wait().to_bytes())
            }));
        }
    }

    /// Ends the run after the parser's verdict: the host killed if it was
    /// refused part way (before `stdout`, its output, is closed), let end
    /// if it said its method failed; the verdict with what the host or the
    /// transport said beside it.
    pub(super) fn end(
        &mut self,
        remote: &Remote,
        parsed: std::result::Result<Parsed, String>,
        stdout: impl Sized,
        answered: bool,
        uploaded: bool,
    ) -> Result<Parsed> {
        let failed_there = parsed.as_ref().is_err_and(|why| stream::host_failed(why));
        if parsed
            .as_ref()
            .is_err_and(|why| why != stream::INCOMPLETE && !failed_there)
        {
            // Refused part way: whatever it still sends is not read, and it
            // must not block there. (A stream that ended early is at its
            // end: the transport is left to say why, as ssh says "closed".)
            let _ = self.child.kill();
        }
        drop(stdout);
        if failed_there {
            // The host said its method failed: it is finishing, and its
            // stderr (relayed as the transport ends) says why. Killed, the
            // reason was lost under load; a host that does not end is
            // killed after a while.
            end_within(&mut self.child, HOST_ENDS_WITHIN);
        }
        let err = self
            .stderr
            .take()
            .map(|r| r.join().unwrap_or_default())
            .unwrap_or_default();
        let written = self.writer.take().map(JoinHandle::join);
        let status = self
            .child
            .wait()
            .map_err(|e| failure(remote, e.to_string()))?;
        let said = String::from_utf8_lossy(&err).trim().to_string();
        self.upload_failed = match written.filter(|_| uploaded) {
            Some(Ok(Err(e))) => Some(format!("uploading fastsum failed: {e}")),
            _ => None,
        };
        let program = &self.program;
        parsed.map_err(|why| {
            let why = match (&self.upload_failed, status.code(), said.is_empty()) {
                (Some(up), _, _) if !answered => up.clone(),
                (_, Some(255), false) if !answered => said_by(program, &said),
                (_, Some(255), false) => format!("{why} ({})", said_by(program, &said)),
                (_, _, false) => format!("{why} ({said})"),
                _ => why,
            };
            failure(remote, why)
        })
    }
}

/// A reader that says when its caller is about to wait: a `BufReader`
/// over it reads through only when everything received was consumed.
pub(super) struct Notify<R, F> {
    pub inner: R,
    pub before_wait: F,
}

impl<R: Read, F: FnMut()> Read for Notify<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        (self.before_wait)();
        self.inner.read(buf)
    }
}

/// How long a host that sent its failure trailer has to end.
const HOST_ENDS_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits up to `limit` for `child` to end, then kills it.
fn end_within(child: &mut Child, limit: std::time::Duration) {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill();
}

/// The transport's complaint with its name in front, once: ssh already
/// starts its own with "ssh: " (never "ssh: ssh: Could not resolve").
fn said_by(program: &str, said: &str) -> String {
    let name = program.rsplit('/').next().unwrap_or(program);
    match said.starts_with(&format!("{name}: ")) {
        true => said.to_string(),
        false => format!("{program}: {said}"),
    }
}

/// Writes the binary to the host's standard input. A host that stops
/// reading (a full `$TMPDIR`, a closed connection) makes the write fail
/// with `EPIPE`: SIGPIPE, which the CLI restores to its default, is
/// blocked in this thread so that it cannot kill the process.
fn write_stdin(mut stdin: ChildStdin, binary: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    // SAFETY: the set is initialised by sigemptyset before use, and
    // pthread_sigmask changes only this thread's mask; a SIGPIPE left
    // pending on this thread is discarded when it ends.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    stdin.write_all(binary)
}

/// Off Unix: the platform's own names, which no `uname -sm` prints, so
/// this binary is never uploaded to run there.
#[cfg(not(unix))]
fn local_uname() -> String {
    format!("{} {}", std::env::consts::OS, std::env::consts::ARCH)
}

/// `uname -sm` of this machine, as the remote's is compared with it.
#[cfg(unix)]
fn local_uname() -> String {
    // SAFETY: an all-zero utsname is a valid value of that plain C struct,
    // and uname fills it with NUL-terminated strings.
    let mut names: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname writes one utsname through the pointer it is given.
    if unsafe { libc::uname(&mut names) } != 0 {
        return String::new();
    }
    let text = |field: &[libc::c_char]| {
        // SAFETY: uname NUL-terminates every field within its array.
        unsafe { std::ffi::CStr::from_ptr(field.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    format!("{} {}", text(&names.sysname), text(&names.machine))
}
