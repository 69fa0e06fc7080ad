//! `fastsum -r --update MANIFEST DIR...`: an existing manifest brought up
//! to date in place. It is written again in its own shape (untagged or
//! tagged lines, `--json`, a hashdeep list) and algorithm, the files read
//! through the checksum cache, so only those whose stamp changed are read
//! again; a list of several digests a file keeps them all (`several.rs`).
//! The new list is written aside and renamed over the old one, and what
//! changed is said as `diff` says it (`A`, `D`, `M` and the path). Nothing
//! is replaced when a file could not be read: a list must never lose a
//! file's record because of a bad read.

use crate::mode::run::Ended;
use std::path::Path;

use fastsum::manifest::read::Manifest;
use fastsum::Algorithm;

use crate::mode::options::{Listed, Options, Update};
use crate::mode::remote::hash_operands_and_remotes;
use crate::mode::run::Run;
use crate::mode::update::style::{style_of, Style};
use file::Aside;
use shape::{head_of, shape_of, Shape};

mod changes;
pub(super) mod file;
mod several;
mod shape;
pub(super) mod style;

/// `--update=MANIFEST`: reads the manifest and takes its shape and
/// algorithm(s) for the run; the cache is used (the default one unless
/// `--cache=PATH`). `Err` is the exit status, said.
pub(super) fn adopt(run: &mut Run, o: &mut Options, manifest: &[u8]) -> Result<(), Ended> {
    run.working = true;
    let path = fastsum::name::path(manifest).into_owned();
    let failed = |run: &mut Run, why: &str| {
        let mut m = crate::term::named(manifest).into_bytes();
        m.extend_from_slice(format!(": {why}").as_bytes());
        run.error(&m);
        Err(Ended(1))
    };
    // A regular file only: it is renamed over at the end. A FIFO was
    // waited on without end, and a link to a pipe (`/dev/stdin`) read
    // twice, then replaced by the new list.
    let file = match fastsum::open_regular(&path) {
        Ok(file) => file,
        Err(e) => return failed(run, &e.kind().to_string()),
    };
    let given = o.algorithms.specified().then_some(o.algorithms.one());
    let (head, terminator) = match head_of(file) {
        Ok(read) => read,
        Err(e) => return failed(run, &fastsum::Error::os_message(&e)),
    };
    let shape = match shape_of(&head, terminator) {
        Ok(shape) => shape,
        Err(why) => return failed(run, &why),
    };
    // JSON records and hashdeep lines: what fastsum does not write (a
    // member of its own, a comment, a second section) is not dropped.
    if matches!(shape, Shape::Json | Shape::Hashdeep) {
        let looked = fastsum::open_regular(&path)
            .map_err(|e| e.kind().to_string())
            .and_then(|f| Manifest::rewritable(std::io::BufReader::new(f), terminator));
        if let Err(why) = looked {
            let why = format!("{why}, which an update would not write back: nothing was changed");
            return failed(run, &why);
        }
    }
    // Base64 digests kept; a look no rewrite keeps (comments, CR LF)
    // refused. Every tagged line says its algorithm: several of them are
    // several digests a file.
    let tagged_style = match shape {
        Shape::Tagged => match style_of(&path, terminator, given.unwrap_or(Algorithm::Md5)) {
            Ok(style) => Some(style),
            Err(why) => return failed(run, &why),
        },
        _ => None,
    };
    let algorithms = tagged_style.as_ref().map_or(&[][..], |s| &s.algorithms[..]);
    match shape::gives_several(&path, &head, shape, algorithms) {
        Ok(false) => {}
        Ok(true) => {
            let style = tagged_style.unwrap_or_default();
            let mut notices = Vec::new();
            let adopted = several::adopt(o, &mut notices, path, shape, &style, terminator, given);
            for notice in notices {
                run.notice(notice.as_bytes());
            }
            return adopted.or_else(|why| failed(run, &why));
        }
        Err(why) => return failed(run, &why),
    }
    let old = match read_old(&path, manifest, &head, shape, given) {
        Ok(read) => read,
        Err(why) => return failed(run, &why),
    };
    if let Err(why) = keep_directory_lines(o, &old) {
        return failed(run, &why);
    }
    // The binary mark kept too (untagged lines, read in the list's
    // algorithm).
    let style = match (shape, tagged_style) {
        (_, Some(style)) => style,
        (Shape::Untagged, None) => match style_of(&path, terminator, old.algorithm) {
            Ok(style) => style,
            Err(why) => return failed(run, &why),
        },
        _ => Style::default(),
    };
    adopt_one(run, o, path, shape, &style, terminator, &old)
}

/// The run takes a list of one digest a file's shape and algorithm: its
/// own stamps answer for unchanged files, or else the cache.
fn adopt_one(
    run: &mut Run,
    o: &mut Options,
    path: std::path::PathBuf,
    shape: Shape,
    style: &Style,
    terminator: u8,
    old: &Manifest,
) -> Result<(), Ended> {
    o.algorithms.adopt(&[old.algorithm], style.base64);
    if style.binary {
        o.read_mode = Some(crate::mode::options::ReadMode::Binary);
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
            read = Some(Listed::One(list));
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
        stamp: list_stamp(&path),
        path,
        read: read.map(std::sync::Arc::new),
    });
    Ok(())
}

/// The old list's entries (of one digest a file), from its first block
/// `head`: read in the algorithm `-a` gives, else the one its name says,
/// else its digests' (guessed, then confirmed by its files).
fn read_old(
    path: &Path,
    manifest: &[u8],
    head: &[u8],
    shape: Shape,
    given: Option<Algorithm>,
) -> Result<Manifest, String> {
    let untagged = shape == Shape::Untagged && given.is_none();
    let named = untagged
        .then(|| crate::mode::check::guess::named(manifest))
        .flatten();
    let old = Manifest::read(head, given.or(named))?;
    if untagged && named.is_none() {
        crate::mode::check::guess::confirm_guess(path, &old)?;
    }
    Ok(old)
}

/// The stamped entries of the list at `path` as a cache session's
/// answers (an entry whose file's stamp moved is read again, as the
/// cache's would be), and the list. `Err` is the exit status, said.
fn listed_answers(
    run: &mut Run,
    path: &Path,
    algorithm: Algorithm,
) -> Result<(fastsum::cache::CacheRun, Manifest), Ended> {
    let read = fastsum::open_regular(path)
        .map_err(|e| e.kind().to_string())
        .and_then(|f| Manifest::read(std::io::BufReader::new(f), Some(algorithm)));
    let list = match read {
        Ok(list) => list,
        Err(why) => {
            run.error(format!("{}: {why}", file::named(path)).as_bytes());
            return Err(Ended(1));
        }
    };
    Ok((list.stamped_answers(), list))
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
    file::clear_stale(&update.path, &mut |said| run.error(said.as_bytes()));
    let (file, aside) = match Aside::create(&update.path) {
        Ok(created) => created,
        Err(why) => {
            run.error(why.as_bytes());
            return false;
        }
    };
    // The old list is read whole while the tree is hashed (unless it was
    // read already: a list of several digests a file always is).
    let (path, algorithm) = (update.path.clone(), o.algorithms.one());
    let read = update.read.clone();
    let reading = std::thread::spawn(move || {
        if let Some(list) = read {
            return Ok(list);
        }
        fastsum::open_regular(&path)
            .map_err(|e| e.kind().to_string())
            .and_then(|f| Manifest::read(std::io::BufReader::new(f), Some(algorithm)))
            .map(|list| std::sync::Arc::new(Listed::One(list)))
    });
    let stdout = std::mem::replace(&mut run.out, crate::term::output::Output::to_file(file));
    if o.hashdeep {
        hashdeep_header(run, o, &update.path, args);
    }
    run.written = Some(Default::default());
    let hashed = match o.algorithms.several() {
        true => crate::mode::multi::hash_operands(run, o, operands),
        false => hash_operands_and_remotes(run, o, operands),
    };
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
        (true, Ok(()), Ok(old)) => changes::listed_twice(old)
            .or_else(|| changes::written_twice(&new))
            .or_else(|| changes::not_read_but_there(old, &new))
            .or_else(|| {
                (list_stamp(&update.path) != update.stamp)
                    .then(|| "it changed while the update ran (another writer?)".to_string())
            }),
    };
    if let Some(why) = problem {
        aside.discard();
        let m = format!("{}: left as it was: {why}", file::named(&update.path));
        run.error(m.as_bytes());
        return false;
    }
    if let Err(e) = aside.commit() {
        let why = fastsum::Error::os_message(&e);
        let named = file::named(&update.path);
        run.error(format!("{named}: left as it was: {why}").as_bytes());
        return false;
    }
    if let Ok(old) = &old {
        changes::say_changes(run, old, new, &update.path);
    }
    true
}

/// The list's stamp (`None` if it cannot be stat-ed).
pub(super) fn list_stamp(path: &Path) -> Option<fastsum::FileStamp> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| fastsum::FileStamp::of(&m))
}

/// The old list's header as it was (its `## $` line names the command
/// that wrote it): an unchanged tree leaves the list byte-identical.
fn hashdeep_header(run: &mut Run, o: &Options, path: &Path, args: &[Vec<u8>]) {
    match shape::hashdeep_header_of(path) {
        Some(header) => {
            run.out.stdout_buf().extend_from_slice(&header);
            run.out.commit();
        }
        None => crate::mode::hash::hashdeep_header(run, o, args),
    }
}
