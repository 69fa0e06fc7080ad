//! A tree on another host (`[user@]host:path`) as an archive: hashed
//! there by `diff`'s remote side (`crate::remote`), in the algorithm
//! `-a` names (md5 by default, as `diff`'s), its records matched as a
//! list's (`manifests::match_listed`). The remote protocol's records give
//! a path and a digest, no size, and it cannot be asked to hash only the
//! files of some sizes: the host hashes its whole tree, and every open
//! source file is hashed here in that algorithm. Its symbolic links are
//! left out (never followed there), a file it could not read is a
//! problem, and a listing that did not arrive whole is an error: a
//! shorter listing would make a false "not contained" (or, with the
//! records held until the end, none at all).

use super::answers::{Answers, Problems};
use super::manifests::{match_listed, Listed};
use super::ContainedOptions;
use crate::algo::Algorithm;
use crate::dupes::items::Candidates;
use crate::error::Result;
use crate::remote::{Remote, RemoteRecord};

/// Matches the open source files against the tree `remote`, archive
/// number `archive` (its symbolic links hold nothing, as a local tree's).
pub(super) fn match_remote(
    remote: &Remote,
    archive: usize,
    src: &Candidates,
    options: &ContainedOptions,
    answers: &mut Answers,
    problems: &Problems,
) -> Result<()> {
    let algorithm = options.algorithm.unwrap_or(Algorithm::Md5);
    if let Some(why) = super::manifests::too_weak(algorithm) {
        let why = std::io::Error::other(why);
        let mut spec = format!("{}:", remote.host).into_bytes();
        spec.extend_from_slice(&remote.path);
        let spec = std::path::PathBuf::from(crate::fs::name::os_string(spec));
        return Err(crate::error::Error::with_path(
            &spec,
            crate::error::ErrorKind::Io(why),
        ));
    }
    let mut records: Vec<RemoteRecord> = Vec::new();
    remote.hash(algorithm, &options.remote, &mut |r: RemoteRecord| {
        records.push(r)
    })?;
    let shown = |path: &[u8]| {
        let mut name = format!("{}:", remote.host).into_bytes();
        name.extend_from_slice(path);
        crate::fs::name::path_buf(name)
    };
    let entries = |each: &mut dyn FnMut(Listed)| {
        for record in records {
            match record.digest {
                Ok(digest) if !record.directory => each(Listed {
                    size: None,
                    digest,
                    path: shown(&record.path),
                }),
                Ok(_) => {}
                Err(why) => problems.add(&shown(&record.path), why),
            }
        }
        Ok(())
    };
    match_listed(
        archive,
        src,
        algorithm,
        &|_| true,
        options,
        answers,
        problems,
        entries,
    )
}
