//! `--update` of a list of several digests a file (several `-a`): tagged lines of several algorithms, `--json` records with
//! `"digests"`, a hashdeep list of several columns. The whole list is read
//! first, every file's digests, and refused (nothing changed) where one
//! file's algorithms are not the first's; the run then hashes as several
//! `-a` in the list's order do (`multi.rs`), so every digest is kept and
//! the list comes out as a fresh run writes it. A `--json --stamps` list's
//! stamps answer for unchanged files; the cache holds one algorithm's
//! digests, so without stamps every file is read again.

use std::path::PathBuf;

use fastsum::manifest::read::several::Several;
use fastsum::Algorithm;

use crate::mode::options::{Listed, Options, Update};
use crate::mode::update::style::Style;
use crate::mode::update::Shape;

/// The run takes the list's shape and algorithms; what it should say is
/// pushed to `notices`; `Err` says why the list cannot be updated (it is
/// left as it was).
pub(super) fn adopt(
    o: &mut Options,
    notices: &mut Vec<String>,
    path: PathBuf,
    shape: Shape,
    style: &Style,
    terminator: u8,
    given: Option<Algorithm>,
) -> Result<(), String> {
    let list = fastsum::open_regular(&path)
        .map_err(|e| e.kind().to_string())
        .and_then(|f| Several::read(std::io::BufReader::new(f)))
        .map_err(|why| format!("{why}; nothing was changed"))?;
    let names: Vec<String> = list.algorithms.iter().map(|a| a.to_string()).collect();
    if let Some(given) = given {
        return Err(format!(
            "its files have several digests ({}): the list says its algorithms, -a {given} cannot choose one; nothing was changed",
            names.join(", ")
        ));
    }
    o.algorithms.adopt(&list.algorithms, style.base64);
    o.terminator = terminator;
    o.json = shape == Shape::Json;
    o.hashdeep = shape == Shape::Hashdeep;
    // A list with stamps keeps them, and they answer for unchanged files.
    o.stamps = o.json && list.entries.iter().any(|e| e.stamp.is_some());
    if o.stamps {
        o.several_answers = Some(std::sync::Arc::new(list.stamped_answers()));
    }
    // The cache holds one algorithm's digests: never asked, and said so
    // where it was asked for.
    if o.cache.take().is_some() && !o.stamps {
        notices.push("the cache holds one algorithm's digests: every file of a list of several digests a file is read again".into());
    }
    o.update = Some(Update {
        stamp: crate::mode::update::list_stamp(&path),
        path,
        read: Some(std::sync::Arc::new(Listed::Several(list))),
    });
    Ok(())
}
