//! `fastsum -r --update MANIFEST DIR...`: an existing manifest brought up
//! to date in place. It is written again in its own shape (untagged or
//! tagged lines, `--json`, a one-column hashdeep list) and algorithm, the
//! files read through the checksum cache, so only those whose stamp
//! changed are read again; the new list is written aside and renamed over
//! the old one, and what changed is said as `diff` says it (`A`, `D`, `M`
//! and the path). Nothing is replaced when a file could not be read: a
//! list must never lose a file's record because of a bad read.

use std::io::{BufRead, Read, Write};
use std::path::Path;

use fastsum::manifest::read::Manifest;
use fastsum::Algorithm;

use super::options::{Options, Update};
use super::remote::hash_operands_and_remotes;
use super::run::Run;
use super::update_file::{self, Aside};

/// The start of a list read to learn its shape and algorithm: its lines
/// up to here, whole.
const HEAD: u64 = 64 << 10;

/// How a manifest's lines look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Untagged,
    Tagged,
    Json,
    Hashdeep,
}

/// The shape of a list, the one decision `--update` writes it back by
/// (issue 63.9): hashdeep's header or JSON records from its first line
/// that is not a comment; checksum lines from how the list reader parses
/// them, never from their raw look: an escaped first name
/// (`\SHA256 (a\\b) = ...`) starts a tagged line all the same. A list
/// whose lines are of both shapes is refused: one shape would be written
/// for all of them.
fn shape_of(head: &[u8], terminator: u8) -> Result<Shape, String> {
    let first = first_line(&mut &head[..], terminator);
    if first.starts_with(fastsum::manifest::hashdeep::Columns::MAGIC) {
        return Ok(Shape::Hashdeep);
    }
    if first.starts_with(b"{") {
        return Ok(Shape::Json);
    }
    use fastsum::manifest::gnu::{CheckParser, TagPolicy};
    // Untagged lines of any digest length parse (BLAKE2b's reading), so
    // a line that does not parse is one -c would not read either.
    let mut parser = CheckParser::new(TagPolicy::Any(Algorithm::Blake2b { output_len: 64 }));
    let mut shapes = head
        .split(|&b| b == terminator)
        .filter(|line| !line.is_empty() && !line.starts_with(b"#"))
        .filter_map(|line| parser.parse(line.strip_suffix(b"\r").unwrap_or(line)))
        .map(|line| match line.tagged {
            true => Shape::Tagged,
            false => Shape::Untagged,
        });
    let shape = shapes.next().unwrap_or(Shape::Untagged);
    match shapes.all(|s| s == shape) {
        true => Ok(shape),
        false => Err("its lines are tagged and untagged both: it cannot be written back in one shape; nothing was changed".into()),
    }
}

/// `--update=MANIFEST`: reads the manifest and takes its shape and
/// algorithm for the run; the cache is used (the default one unless
/// `--cache=PATH`). `Err` is the exit status, said.
pub(super) fn adopt(run: &mut Run, o: &mut Options, manifest: &[u8]) -> Result<(), i32> {
    run.working = true;
    let path = fastsum::name::path(manifest).into_owned();
    let failed = |run: &mut Run, why: &str| {
        let mut m = crate::term::Quoting { utf8: true }.quotef(manifest);
        m.extend_from_slice(format!(": {why}").as_bytes());
        run.error(&m);
        Err(1)
    };
    // A regular file only: it is renamed over at the end. A FIFO was
    // waited on without end, and a link to a pipe (`/dev/stdin`) read
    // twice, then replaced by the new list.
    let file = match fastsum::read::open_regular(&path) {
        Ok(file) => file,
        Err(e) => return failed(run, &e.kind().to_string()),
    };
    let given = o.algorithms.specified().then_some(o.algorithms.one());
    let (head, terminator) = match head_of(file) {
        Ok(read) => read,
        Err(e) => return failed(run, &fastsum::Error::os_message(&e)),
    };
    let (shape, old) = match read_old(&path, manifest, &head, terminator, given) {
        Ok(read) => read,
        Err(why) => return failed(run, &why),
    };
    if let Err(why) = keep_directory_lines(o, &old) {
        return failed(run, &why);
    }
    // Base64 digests and the binary mark kept; a look no rewrite keeps
    // (comments, CR LF) refused.
    let style = match shape {
        Shape::Tagged | Shape::Untagged => {
            match super::update_style::style_of(&path, terminator, old.algorithm) {
                Ok(style) => style,
                Err(why) => return failed(run, &why),
            }
        }
        Shape::Json | Shape::Hashdeep => Default::default(),
    };
    o.algorithms.adopt(old.algorithm, style.base64);
    if style.binary {
        o.binary = 1;
    }
    o.terminator = terminator;
    o.json = shape == Shape::Json;
    // A list with stamps keeps them (scrub --manifest reads them).
    o.stamps = o.json && old.entries.iter().any(|e| e.stamp.is_some());
    o.tree.verify |= o.stamps;
    o.hashdeep = shape == Shape::Hashdeep;
    o.tag = shape == Shape::Tagged && old.algorithm == Algorithm::Md5;
    o.untagged = shape == Shape::Untagged && old.algorithm != Algorithm::Md5;
    let mut read = None;
    match (o.stamps && o.cache.is_none(), &path) {
        // The list's own stamps answer for unchanged files.
        (true, path) => {
            let (answers, list) = listed_answers(run, path, old.algorithm)?;
            o.answers = Some(answers);
            read = Some(list);
        }
        // The cache --update uses unasked: with no home for it, said, and
        // the run goes on without it.
        (false, _) if o.cache.is_none() => match crate::term::cache::path(None) {
            Ok(path) => o.cache = Some(path),
            Err(m) => run.error(format!("{m}; going on without it").as_bytes()),
        },
        (false, _) => {}
    }
    o.update = Some(Update {
        path,
        read: std::sync::Mutex::new(read),
    });
    Ok(())
}

/// The old list's shape and entries, from its first block `head`: read
/// in the algorithm `-a` gives, else the one its name says, else its
/// digests' (guessed, then confirmed by its files); refused where it
/// cannot be written back whole.
fn read_old(
    path: &Path,
    manifest: &[u8],
    head: &[u8],
    terminator: u8,
    given: Option<Algorithm>,
) -> Result<(Shape, Manifest), String> {
    let shape = shape_of(head, terminator)?;
    let untagged = shape == Shape::Untagged && given.is_none();
    let named = untagged.then(|| super::guess::named(manifest)).flatten();
    let old = Manifest::read(head, given.or(named))?;
    if shape == Shape::Hashdeep && columns_in(head) > 1 {
        return Err("a hashdeep list of several columns cannot be updated yet".into());
    }
    if several_digests(head, shape) {
        return Err("a list of several digests a file (several -a) cannot be updated yet".into());
    }
    if untagged && named.is_none() {
        super::guess::confirm_guess(path, &old)?;
    }
    Ok((shape, old))
}

/// The stamped entries of the list at `path` as a cache session's
/// answers (an entry whose file's stamp moved is read again, as the
/// cache's would be), and the list. `Err` is the exit status, said.
fn listed_answers(
    run: &mut Run,
    path: &Path,
    algorithm: Algorithm,
) -> Result<(std::sync::Arc<fastsum::cache::CacheSession>, Manifest), i32> {
    let read = fastsum::read::open_regular(path)
        .map_err(|e| e.kind().to_string())
        .and_then(|f| Manifest::read(std::io::BufReader::new(f), Some(algorithm)));
    let list = match read {
        Ok(list) => list,
        Err(why) => {
            run.error(format!("{}: {why}", update_file::named(path)).as_bytes());
            return Err(1);
        }
    };
    let session = list.stamped_answers();
    Ok((std::sync::Arc::new(session), list))
}

/// The header lines (`%%%%` and `##`) a hashdeep list at `path` starts
/// with, as they are.
fn hashdeep_header_of(path: &Path) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let file = fastsum::read::open_regular(path).ok()?;
    file.take(HEAD).read_to_end(&mut head).ok()?;
    let mut end = 0;
    for line in head.split_inclusive(|&b| b == b'\n') {
        if !line.ends_with(b"\n") || !(line.starts_with(b"%%%%") || line.starts_with(b"##")) {
            break;
        }
        end += line.len();
    }
    head.starts_with(fastsum::manifest::hashdeep::Columns::MAGIC)
        .then(|| head[..end].to_vec())
}

/// A path the old list names twice (its lines disagree or repeat): the
/// update cannot tell which line was the list's word, so it changes
/// nothing (as diff and audit refuse such a list).
fn listed_twice(old: &Manifest) -> Option<String> {
    let mut paths: Vec<&[u8]> = old.entries.iter().map(|e| &e.path[..]).collect();
    paths.sort_unstable();
    let twice = paths.windows(2).find(|pair| pair[0] == pair[1])?;
    let name = crate::term::Quoting { utf8: true }.quotef(twice[0]);
    Some(format!(
        "{} is listed twice",
        String::from_utf8_lossy(&name)
    ))
}

/// A file the old list names that this run did not read, though it is
/// still there (operands narrower than the list's, `--update=SITE.md5
/// site/img`): writing the list without it would drop its record and say
/// it deleted. Refused, naming it; nothing is changed.
fn not_read_but_there(old: &Manifest, new: &super::run::Written) -> Option<String> {
    let read: std::collections::HashSet<&[u8]> = new.iter().map(|(name, _)| name).collect();
    let there = old.entries.iter().find(|e| {
        !read.contains(&e.path[..])
            && std::fs::symlink_metadata(fastsum::name::path(&e.path)).is_ok()
    })?;
    let name = crate::term::Quoting { utf8: true }.quotef(&there.path);
    Some(format!(
        "{} is listed and still there, but was not read (give the operands the list was made of)",
        String::from_utf8_lossy(&name)
    ))
}

/// The list's first whole records (up to `HEAD` bytes) and their
/// terminator: records written with -z are kept NUL-terminated (their
/// names unescaped, as -z writes them).
fn head_of(file: std::fs::File) -> std::io::Result<(Vec<u8>, u8)> {
    let mut head = Vec::new();
    file.take(HEAD).read_to_end(&mut head)?;
    let terminator = match nul_terminated(&head) {
        true => 0,
        false => b'\n',
    };
    if head.len() as u64 == HEAD {
        let whole = head
            .iter()
            .rposition(|&b| b == terminator)
            .map_or(0, |at| at + 1);
        head.truncate(whole);
    }
    Ok((head, terminator))
}

/// Whether a list's records are NUL-terminated (-z): a NUL in its first
/// block, as the list reader tells them (a checksum line holds no NUL; a
/// -z record's name may hold newlines).
fn nul_terminated(head: &[u8]) -> bool {
    head.contains(&0)
}

/// A --dirs list keeps its directory lines (each directory's digest after
/// its files): the run walks with directories.
fn keep_directory_lines(o: &mut Options, old: &Manifest) -> Result<(), String> {
    if old.directories.is_empty() {
        return Ok(());
    }
    if o.tree.walk.max_depth.is_some() {
        return Err("a list with directory lines and --max-depth do not go together".into());
    }
    if let Some(why) = old.algorithm.directory_digest_refusal() {
        return Err(why.to_string());
    }
    o.tree.walk.directories = true;
    Ok(())
}

/// The list's first line that is not a comment (`#`), with its
/// terminator; what was read before it is dropped (comments only).
fn first_line(reader: &mut impl BufRead, terminator: u8) -> Vec<u8> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(terminator, &mut line).unwrap_or(0) == 0 || !line.starts_with(b"#") {
            return line;
        }
    }
}

/// How many digest columns a hashdeep list's header names.
fn columns_in(head: &[u8]) -> usize {
    let header = head.split(|&b| b == b'\n').nth(1).unwrap_or_default();
    fastsum::manifest::hashdeep::Columns::read(header).map_or(0, |c| c.len())
}

/// Hashes `operands` into a new list beside the old one, and puts it in
/// the old one's place when every file was read; says what changed.
pub(super) fn run_update(
    run: &mut Run,
    o: &Options,
    operands: &[Vec<u8>],
    args: &[Vec<u8>],
) -> bool {
    let Some(update) = &o.update else {
        return false;
    };
    update_file::clear_stale(&update.path, &mut |said| run.error(said.as_bytes()));
    let (file, aside) = match Aside::create(&update.path) {
        Ok(created) => created,
        Err(why) => {
            run.error(why.as_bytes());
            return false;
        }
    };
    // The old list is read whole while the tree is hashed (unless it was
    // read already).
    let (path, algorithm) = (update.path.clone(), o.algorithms.one());
    let read = update.read.lock().ok().and_then(|mut r| r.take());
    let reading = std::thread::spawn(move || {
        if let Some(list) = read {
            return Ok(list);
        }
        fastsum::read::open_regular(&path)
            .map_err(|e| e.kind().to_string())
            .and_then(|f| Manifest::read(std::io::BufReader::new(f), Some(algorithm)))
    });
    let stdout = std::mem::replace(&mut run.out, crate::term::output::Output::to_file(file));
    if o.hashdeep {
        // The old list's header as it was (its `## $` line names the
        // command that wrote it): an unchanged tree leaves the list
        // byte-identical.
        match hashdeep_header_of(&update.path) {
            Some(header) => {
                run.out.stdout_buf().extend_from_slice(&header);
                run.out.commit();
            }
            None => super::hash::hashdeep_header(run, o, args),
        }
    }
    run.written = Some(Default::default());
    let hashed = hash_operands_and_remotes(run, o, operands);
    let new = run.written.take().unwrap_or_default();
    let written = std::mem::replace(&mut run.out, stdout)
        .into_file()
        .and_then(|file| file.map_or(Ok(()), |f| f.sync_all()));
    let old = reading
        .join()
        .unwrap_or_else(|_| Err("reading it failed".into()));
    let problem = match (hashed, written, &old) {
        (false, _, _) => Some("some files could not be read".to_string()),
        (true, Err(e), _) => Some(fastsum::Error::os_message(&e)),
        (true, Ok(()), Err(why)) => Some(why.clone()),
        (true, Ok(()), Ok(old)) => listed_twice(old).or_else(|| not_read_but_there(old, &new)),
    };
    if let Some(why) = problem {
        aside.discard();
        let m = format!(
            "{}: left as it was: {why}",
            update_file::named(&update.path)
        );
        run.error(m.as_bytes());
        return false;
    }
    if let Err(e) = aside.commit() {
        let why = fastsum::Error::os_message(&e);
        let named = update_file::named(&update.path);
        run.error(format!("{named}: left as it was: {why}").as_bytes());
        return false;
    }
    if let Ok(old) = &old {
        say_changes(run, old, new, &update.path);
    }
    true
}

/// `A\tPATH`, `D\tPATH`, `M\tPATH` in path order on stdout, and the
/// counts: the old list and the new entries merged in path order.
fn say_changes(run: &mut Run, old: &Manifest, new: super::run::Written, path: &Path) {
    let mut old: Vec<(&[u8], &fastsum::Digest)> = old
        .entries
        .iter()
        .map(|e| (&e.path[..], &e.digest))
        .collect();
    old.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut new: Vec<(&[u8], &fastsum::Digest)> = new.iter().collect();
    new.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut counts = [0u64; 4];
    let mut lines = Vec::new();
    let (mut o, mut n) = (old.iter().peekable(), new.iter().peekable());
    loop {
        let (letter, name) = match (o.peek(), n.peek()) {
            (None, None) => break,
            (Some(a), Some(b)) if a.0 == b.0 => {
                let changed = a.1 != b.1;
                let name = a.0;
                o.next();
                n.next();
                match changed {
                    true => (b'M', name),
                    false => {
                        counts[3] += 1;
                        continue;
                    }
                }
            }
            (Some(a), Some(b)) if a.0 < b.0 => (b'D', o.next().map_or(&[][..], |a| a.0)),
            (Some(_), None) => (b'D', o.next().map_or(&[][..], |a| a.0)),
            (_, Some(_)) => (b'A', n.next().map_or(&[][..], |b| b.0)),
        };
        counts[usize::from(letter == b'D') + 2 * usize::from(letter == b'M')] += 1;
        // Names escaped as every report line escapes them (issue 51.17).
        let parts = [
            fastsum::output::LinePart::Text(&[letter, b'\t']),
            fastsum::output::LinePart::Name(name),
        ];
        fastsum::output::LinePart::write_line(&mut lines, &parts, true);
    }
    run.out.out(&lines);
    let [added, removed, modified, unchanged] = counts;
    let m = format!(
        "{}: updated: {added} added, {removed} removed, {modified} modified, {unchanged} unchanged",
        update_file::named(path)
    );
    let _ = std::io::stderr().flush();
    run.error(m.as_bytes());
}

/// Whether the list gives several digests a file (several -a: tagged lines
/// of two algorithms, or JSON records with `"digests"`): the run would
/// write one algorithm's and lose the others', so it is refused.
fn several_digests(head: &[u8], shape: Shape) -> bool {
    let mut lines = head.split(|&b| b == b'\n');
    match shape {
        Shape::Json => lines.any(|l| l.windows(11).any(|w| w == b"\"digests\":{")),
        Shape::Tagged => {
            use fastsum::manifest::gnu::{CheckParser, TagPolicy};
            let mut parser = CheckParser::new(TagPolicy::Any(Algorithm::Md5));
            let mut seen = None;
            lines
                .filter_map(|l| parser.parse(l).map(|l| l.algorithm))
                .any(|a| {
                    let other = seen.is_some_and(|s| s != a);
                    seen = Some(a);
                    other
                })
        }
        _ => false,
    }
}
