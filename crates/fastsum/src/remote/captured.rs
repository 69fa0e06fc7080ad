//! The remote side run by someone else: the command a deploy tool sends
//! over its own connection ([`RemoteOptions::command`]), and the listing it
//! captured, read back and checked as one from the transport is.

use std::io::Read;

use super::{
    failure, script, sh_quote, stream, text, Remote, RemoteOptions, RemoteRun, RemoteSink,
};
use crate::algo::Algorithm;
use crate::error::{Error, ErrorKind, Result};

/// [`RemoteOptions::command`].
pub(super) fn remote_command(
    paths: &[&[u8]],
    algorithm: Algorithm,
    options: &RemoteOptions,
    text: bool,
) -> std::result::Result<Vec<u8>, String> {
    match (paths, text) {
        ([_], false) => script::build(paths, algorithm, options, false, false),
        ([_], true) => {
            let command = script::build(paths, algorithm, options, false, false)?;
            let mut outer = b"sh -c ".to_vec();
            outer.extend_from_slice(&sh_quote(&text::wrap(&command)));
            Ok(outer)
        }
        (_, false) => Err("several paths need the text form (each its own listing)".into()),
        (_, true) => script::build(paths, algorithm, options, false, true),
    }
}

/// A listing captured from [`RemoteOptions::command`]'s output (raw or text),
/// read from `file` (`-`: standard input) and checked as one from the
/// transport is: complete, under the root, each path once.
pub(super) fn read_listing(
    remote: &Remote,
    algorithm: Algorithm,
    file: &std::path::Path,
    sink: &mut dyn RemoteSink,
) -> Result<RemoteRun> {
    let input: Box<dyn Read> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| Error::with_path(file, ErrorKind::Io(e)))?)
    };
    let mut listing = text::Listing::new(std::io::BufReader::with_capacity(1 << 16, input))
        .map_err(|e| Error::with_path(file, ErrorKind::Io(e)))?;
    let (path, _) = script::spelled(&remote.path);
    let parsed = stream::parse(&mut listing, algorithm, &path, None, &mut |mut record| {
        record.path = script::as_given(remote, std::mem::take(&mut record.path));
        sink.record(record)
    });
    let said = String::from_utf8_lossy(&listing.into_stderr())
        .trim()
        .to_string();
    let parsed = parsed.map_err(|why| match said.is_empty() {
        true => failure(remote, why),
        false => failure(remote, format!("{why} ({said})")),
    })?;
    Ok(RemoteRun {
        method: parsed.method,
        uploaded: false,
        upload_failed: None,
        symlinks_left_out: parsed.symlinks,
    })
}
