//! `fastsum dupes --dirs`: the library's groups of identical directories
//! (`fastsum::dupes::dirs`), printed as `dupes` prints groups of files.

use std::path::PathBuf;
use std::sync::Arc;

use fastsum::dupes::dirs::DirGroup;
use fastsum::output::render::Renderer;
use fastsum::{Algorithm, TreeHasher, TreeOptions};

use crate::term::count;
use crate::term::output::{Buffering, Output};

/// What `--dirs` takes from dupes' options.
pub struct DirsRun<'a> {
    pub paths: &'a [PathBuf],
    pub algorithm: Algorithm,
    pub options: TreeOptions,
    pub cache: crate::term::cache::CacheChoice,
    pub json: bool,
    pub progress: bool,
}

/// Finds and prints the groups; the exit status (0, 1 when something
/// could not be read, 2 when the run could not be made).
pub fn run(r: DirsRun<'_>) -> i32 {
    const NAME: &str = "fastsum dupes";
    if let Some(why) = r.algorithm.directory_digest_refusal() {
        eprintln!("{NAME}: {why}");
        return 2;
    }
    let Some(cache) = crate::term::cache::open(NAME, &r.cache, r.algorithm, r.paths) else {
        return 2;
    };
    let hasher = crate::term::cached(
        NAME,
        TreeHasher::with_options(r.algorithm, r.options),
        &cache,
    );
    let counters = Arc::new(fastsum::Progress::default());
    let hasher = hasher.progress(counters.clone());
    let display = crate::term::progress::Display::default();
    let show = r.progress;
    let found = std::thread::scope(|scope| {
        if show {
            scope.spawn(|| display.run(&counters));
        }
        let found = hasher.duplicate_directories(r.paths);
        display.finish();
        found
    });
    crate::term::cache::finish(NAME, cache);
    let report = match found {
        Ok(report) => report,
        Err(e) => {
            eprintln!("{NAME}: {e}");
            return 2;
        }
    };
    let mut out = Output::new(Buffering::Line);
    for problem in &report.problems {
        let (path, why) = (crate::term::named_path(&problem.path), &problem.error);
        out.err_raw(format!("{NAME}: {path}: {why}\n").as_bytes());
    }
    for group in &report.groups {
        match r.json {
            true => write_json(out.stdout_buf(), group, r.algorithm),
            false => write_group(out.stdout_buf(), group, r.algorithm),
        }
        out.commit();
    }
    let dirs: usize = report.groups.iter().map(|g| g.members.len()).sum();
    let bytes = report.redundant_bytes();
    out.notice(
        format!(
            "{NAME}: {} of {}, {} redundant\n",
            count(report.groups.len() as u64, "group", "groups"),
            count(dirs as u64, "directory", "directories"),
            count(bytes, "byte", "bytes"),
        )
        .as_bytes(),
    );
    if let Err(e) = out.finish() {
        eprintln!("{NAME}: write error: {}", fastsum::Error::os_message(&e));
        return 1;
    }
    i32::from(!report.problems.is_empty())
}

/// `SIZE bytes, N files each, M directories, ALGO DIGEST`, then the
/// directories, indented (names escaped as fastsum's lines escape them).
fn write_group(buf: &mut Vec<u8>, group: &DirGroup, algorithm: Algorithm) {
    buf.extend_from_slice(
        format!(
            "{}, {} each, {}, {algorithm} {}\n",
            count(group.size, "byte", "bytes"),
            count(group.files, "file", "files"),
            count(group.members.len() as u64, "directory", "directories"),
            group.digest
        )
        .as_bytes(),
    );
    for member in &group.members {
        crate::term::write_name(buf, fastsum::name::path_bytes(member), "  ");
    }
}

/// `{"size":…,"files":…,"digest":…,"algorithm":…,"directories":[{"path":…}]}`.
fn write_json(buf: &mut Vec<u8>, group: &DirGroup, algorithm: Algorithm) {
    buf.extend_from_slice(
        format!(
            "{{\"size\":{},\"files\":{},\"digest\":\"{}\",\"algorithm\":\"{algorithm}\",\"directories\":[",
            group.size, group.files, group.digest
        )
        .as_bytes(),
    );
    for (i, member) in group.members.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.push(b'{');
        Renderer::write_json_name(buf, "path", fastsum::name::path_bytes(member));
        buf.push(b'}');
    }
    buf.extend_from_slice(b"]}\n");
}
