//! `-c` of the directory lines `fastsum -r --dirs` writes (a name ending
//! in `/`, docs/DIRECTORY-DIGEST.md): each directory's digest made again
//! from its tree as it is now. A chunk's directories are walked from the
//! top down, and every digest a walk makes is kept for the run, so a
//! directory listed under one already walked costs nothing more.

use std::collections::HashMap;

use fastsum::{Algorithm, Digest, ErrorKind, TreeHasher};

use crate::mode::check::digests::{is_directory_line, CheckItem};
use crate::mode::options::Options;
use crate::mode::run::Run;

/// Directory digests made so far in this run, by algorithm and path as
/// the walk spelled it (with its final `/`); `Err` for one that could not
/// be made, with why.
#[derive(Default)]
pub(in crate::mode) struct Made {
    digests: HashMap<(Algorithm, Vec<u8>), Result<Digest, String>>,
}

/// Fills in the digests of a chunk's directory lines: walked from the top
/// down (a parent before what is under it), each line answered from what
/// a walk above it made when it can be.
pub(in crate::mode) fn fill(
    run: &mut Run,
    o: &Options,
    items: &[CheckItem],
    prefetched: &mut [Option<Result<Digest, ErrorKind>>],
    made: &mut Made,
) {
    let mut lines: Vec<(usize, &[u8], Algorithm)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match item {
            CheckItem::Entry {
                name, algorithm, ..
            } if is_directory_line(run, o, name) => Some((i, &name[..], *algorithm)),
            _ => None,
        })
        .collect();
    lines.sort_by_key(|(_, name, _)| name.len());
    for (i, name, algorithm) in lines {
        let key = (algorithm, name.to_vec());
        if !made.digests.contains_key(&key) {
            walk(run, o, algorithm, name, made);
        }
        let answer = made
            .digests
            .get(&key)
            .cloned()
            .unwrap_or_else(|| Err("no directory digest".into()));
        prefetched[i] = Some(answer.map_err(|why| ErrorKind::Io(std::io::Error::other(why))));
    }
}

/// Walks the directory `name`, keeping every digest made under it.
fn walk(run: &mut Run, o: &Options, algorithm: Algorithm, name: &[u8], made: &mut Made) {
    let mut options = o.tree.clone();
    options.walk = Default::default();
    let mut hasher = TreeHasher::with_options(algorithm, options);
    if run.check_cache_serves(algorithm) {
        hasher = run.check_cached(hasher);
    }
    let root = fastsum::name::path(name).into_owned();
    let mut first_problem = None;
    let walked = hasher.tree_digests(
        root,
        &mut |path, digest| {
            let key = (algorithm, fastsum::name::path_bytes(path).to_vec());
            made.digests.insert(key, Ok(*digest));
        },
        &mut |path, why| {
            first_problem.get_or_insert_with(|| {
                format!(
                    "{}: {why}",
                    String::from_utf8_lossy(fastsum::name::path_bytes(&path))
                )
            });
        },
    );
    let key = (algorithm, name.to_vec());
    let answer = match (walked, first_problem) {
        (Err(why), _) => Err(why),
        (Ok(_), Some(problem)) => Err(format!("no directory digest: {problem}")),
        (Ok(None), None) => Err("no directory digest".into()),
        (Ok(Some(_)), None) if !std::path::Path::new(&*fastsum::name::path(name)).is_dir() => {
            Err("Not a directory".into())
        }
        (Ok(Some(digest)), None) => Ok(digest),
    };
    made.digests.entry(key).or_insert(answer);
}
