//! `fastsum diff --plan`: the comparison as one JSON object that says how
//! to make the old side equal the new one (docs/JSON.md, "plan"): what to
//! send, what the old side already has under another name, what only the
//! old side has. A deploy tool reads it with `diff --plan HOST:DEST ./site`.

use std::io::Write as _;
use std::path::Path;

use fastsum::diff::{Change, ChangeKind, DiffSummary, Entry, EntryKind};
use fastsum::output::render::Renderer;

use crate::term::json_string;

/// The plan's schema version (its `plan` field).
const VERSION: u32 = 1;

/// The changes and problems of one comparison, held until it ends (a plan
/// is only written for a comparison that finished).
#[derive(Default)]
pub struct Plan {
    send: Vec<u8>,
    moved: Vec<u8>,
    only_old: Vec<u8>,
    problems: Vec<u8>,
    directories: Vec<u8>,
    only_old_directories: Vec<u8>,
    left_out: Vec<u8>,
}

/// `,` before every item of a list but its first.
fn item(list: &mut Vec<u8>) -> &mut Vec<u8> {
    if !list.is_empty() {
        list.push(b',');
    }
    list
}

/// `"label":"name"` (and `label_base64` for a name that is not UTF-8).
fn name(buf: &mut Vec<u8>, label: &str, path: &Path) {
    Renderer::write_json_name(buf, label, path.as_os_str().as_encoded_bytes());
}

/// `,"size":N,"digest":"..."` where known.
fn facts(buf: &mut Vec<u8>, entry: &Entry) {
    if let Some(size) = entry.size {
        let _ = write!(buf, ",\"size\":{size}");
    }
    if let Some(digest) = entry.digest {
        let _ = write!(buf, ",\"digest\":\"{digest}\"");
    }
}

impl Plan {
    /// Files the new side has and the old one lacks or holds other bytes of
    /// go to `send`; a move to `moved`; what only the old side has to
    /// `only_old`.
    pub fn change(&mut self, change: &Change) {
        // Directories in lists of their own (two trees only): a reader of
        // `send` and `only_old` meets files, as schema v1 promised.
        let directory =
            |e: &Option<Entry>| e.as_ref().is_some_and(|e| e.kind == EntryKind::Directory);
        let list = match change.kind {
            ChangeKind::Added if directory(&change.new) => {
                Some((&mut self.directories, &change.new))
            }
            ChangeKind::Removed if directory(&change.old) => {
                Some((&mut self.only_old_directories, &change.old))
            }
            _ => None,
        };
        if let Some((list, Some(entry))) = list {
            let buf = item(list);
            buf.push(b'{');
            name(buf, "path", &entry.path);
            buf.push(b'}');
            return;
        }
        match (change.kind, &change.old, &change.new) {
            (ChangeKind::Moved, Some(old), Some(new)) => {
                let buf = item(&mut self.moved);
                buf.push(b'{');
                name(buf, "from", &old.path);
                buf.push(b',');
                name(buf, "to", &new.path);
                facts(buf, new);
                buf.push(b'}');
            }
            (ChangeKind::Removed, Some(old), _) => {
                let buf = item(&mut self.only_old);
                buf.push(b'{');
                name(buf, "path", &old.path);
                facts(buf, old);
                buf.push(b'}');
            }
            (
                ChangeKind::Added
                | ChangeKind::Modified
                | ChangeKind::Typechange
                | ChangeKind::Unverifiable,
                _,
                Some(new),
            ) => {
                let buf = item(&mut self.send);
                buf.push(b'{');
                name(buf, "path", &new.path);
                let _ = write!(buf, ",\"change\":\"{}\"", change.kind.name());
                facts(buf, new);
                buf.push(b'}');
            }
            _ => {}
        }
    }

    /// An entry the comparison left out (a FIFO, socket or device; a
    /// symbolic link against a side of regular files): listed, so that a
    /// complete plan has left nothing out unsaid.
    pub fn left_out(&mut self, path: &Path, what: &str) {
        let buf = item(&mut self.left_out);
        buf.push(b'{');
        name(buf, "path", path);
        buf.extend_from_slice(b",\"what\":");
        buf.extend_from_slice(json_string(what).as_bytes());
        buf.push(b'}');
    }

    /// Something that could not be compared.
    pub fn problem(&mut self, path: &Path, error: &str) {
        let buf = item(&mut self.problems);
        buf.push(b'{');
        name(buf, "path", path);
        buf.extend_from_slice(b",\"error\":");
        buf.extend_from_slice(json_string(error).as_bytes());
        buf.push(b'}');
    }

    /// The plan, one line. `complete`: every path was compared or is
    /// listed in `left_out` (by name; those a remote host only counted, in
    /// `symlinks_left_out`), with no problem.
    pub fn render(&self, summary: &DiffSummary) -> Vec<u8> {
        let mut out = format!(
            "{{\"plan\":{VERSION},\"complete\":{},\"symlinks_left_out\":{}",
            summary.problems == 0,
            summary.symlinks_left_out
        )
        .into_bytes();
        for (label, list) in [
            ("send", &self.send),
            ("moved", &self.moved),
            ("only_old", &self.only_old),
            ("problems", &self.problems),
            ("directories", &self.directories),
            ("only_old_directories", &self.only_old_directories),
            ("left_out", &self.left_out),
        ] {
            let _ = write!(out, ",\"{label}\":[");
            out.extend_from_slice(list);
            out.push(b']');
        }
        out.extend_from_slice(b"}\n");
        out
    }
}
