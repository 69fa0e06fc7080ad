//! What a checked line comes to, what a list's lines come to, and
//! `fastsum -c --json`: one JSON object per checked line, then one for the
//! list (docs/JSON.md, "-c --json records"), instead of `NAME: OK` lines.
//! The messages on stderr stay as they are.

use std::io::Write as _;

use fastsum::output::line::LinePart;
use fastsum::output::render::Renderer;
use fastsum::{Algorithm, Digest};

use crate::mode::options::Options;
use crate::mode::run::Run;

/// What one checked line came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::mode) enum Verdict {
    Ok,
    Failed,
    Unreadable,
    /// Not there, with --ignore-missing.
    Missing,
}

/// What one list's lines came to.
#[derive(Default)]
pub(in crate::mode) struct Tally {
    pub(in crate::mode) misformatted: u64,
    pub(in crate::mode) mismatched: u64,
    pub(in crate::mode) unreadable: u64,
    pub(in crate::mode) any_properly_formatted: bool,
    pub(in crate::mode) any_matched: bool,
    /// Lines that matched, and files not there (--ignore-missing).
    pub(in crate::mode) matched: u64,
    pub(in crate::mode) missing: u64,
    /// Entries the list may not name (`ListLine::Refused`): any fails it.
    pub(in crate::mode) refused: u64,
}

impl Tally {
    pub(in crate::mode) fn count(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Ok => (self.any_matched, self.matched) = (true, self.matched + 1),
            Verdict::Failed => self.mismatched += 1,
            Verdict::Unreadable => self.unreadable += 1,
            Verdict::Missing => self.missing += 1,
        }
    }
}

/// `NAME: OK`, `NAME: FAILED` or `NAME: FAILED open or read`: under
/// fastsum's own name, the name escaped as coreutils 9.4 to 9.10 escape it
/// (`\\`, `\n`, `\r`); under a coreutils tool's name, quoted as 9.11
/// quotes it (`'sp ace': OK`).
pub(in crate::mode) fn say(run: &mut Run, o: &Options, name: &[u8], verdict: Verdict) {
    let status: &[u8] = match verdict {
        Verdict::Unreadable => b"FAILED open or read",
        Verdict::Missing => return,
        Verdict::Ok if o.quiet => return,
        Verdict::Ok => b"OK",
        Verdict::Failed => b"FAILED",
    };
    if o.status_only {
        return;
    }
    let mut line = Vec::with_capacity(name.len() + 24);
    if run.tool.policy().own_lists {
        let parts = [
            LinePart::Name(name),
            LinePart::Text(b": "),
            LinePart::Text(status),
        ];
        LinePart::write_line(&mut line, &parts, false);
    } else {
        // The personalities follow coreutils 9.11: shell-quoted names.
        line = run.quoting.quotef(name);
        line.extend_from_slice(b": ");
        line.extend_from_slice(status);
        line.push(b'\n');
    }
    if run.progress.is_some() && stdout_is_a_terminal() {
        run.around_the_bar(|out| out.out(&line));
    } else {
        run.out.out(&line);
    }
    run.stop_if_unwritable();
}

fn stdout_is_a_terminal() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stdout())
}

/// `{"path":…,"algorithm":…,"expected":…,"actual":…,"status":…}`;
/// `actual` is absent where the file could not be read (then `error`
/// says why) or was not there (`--ignore-missing`).
pub(in crate::mode) fn verdict(
    out: &mut Vec<u8>,
    (name, algorithm, expected, actual): (&[u8], Algorithm, &Digest, Option<&Digest>),
    verdict: Verdict,
    error: Option<&str>,
) {
    out.push(b'{');
    Renderer::write_json_name(out, "path", name);
    out.extend_from_slice(b",\"algorithm\":");
    Renderer::write_json_string(out, &algorithm.to_string());
    out.extend_from_slice(b",\"expected\":\"");
    expected.push_hex(out);
    out.push(b'"');
    if let Some(actual) = actual {
        out.extend_from_slice(b",\"actual\":\"");
        actual.push_hex(out);
        out.push(b'"');
    }
    let status = match verdict {
        Verdict::Ok => "ok",
        Verdict::Failed => "failed",
        Verdict::Unreadable => "unreadable",
        Verdict::Missing => "missing",
    };
    out.extend_from_slice(b",\"status\":");
    Renderer::write_json_string(out, status);
    if let Some(why) = error {
        out.extend_from_slice(b",\"error\":");
        Renderer::write_json_string(out, why);
    }
    out.extend_from_slice(b"}\n");
}

/// `{"list":…,"line":N,"status":"misformatted"}`: a line that is not a
/// checksum line.
pub(in crate::mode) fn misformatted(out: &mut Vec<u8>, list: &[u8], line: u64) {
    out.push(b'{');
    Renderer::write_json_name(out, "list", list);
    let _ = write!(out, ",\"line\":{line},\"status\":\"misformatted\"}}");
    out.push(b'\n');
}

/// `{"list":…,"line":N,"status":"refused"}`: an entry the list may not
/// name (a path outside its directory).
pub(in crate::mode) fn refused(out: &mut Vec<u8>, list: &[u8], line: u64) {
    out.push(b'{');
    Renderer::write_json_name(out, "list", list);
    let _ = write!(out, ",\"line\":{line},\"status\":\"refused\"}}");
    out.push(b'\n');
}

/// `{"list":…,"summary":{…}}` after each list: its lines counted by verdict.
pub(in crate::mode) fn summary(out: &mut Vec<u8>, list: &[u8], tally: &Tally) {
    out.push(b'{');
    Renderer::write_json_name(out, "list", list);
    let _ = write!(
        out,
        ",\"summary\":{{\"ok\":{},\"failed\":{},\"unreadable\":{},\"missing\":{},\"misformatted\":{}}}}}",
        tally.matched, tally.mismatched, tally.unreadable, tally.missing, tally.misformatted
    );
    out.push(b'\n');
}
