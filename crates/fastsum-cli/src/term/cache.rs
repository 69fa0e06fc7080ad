//! The checksum cache as every command uses it, in one way: its path
//! resolved ([`path`], the library's `Cache::resolve_path`: one message
//! when there is no home for the default), the file opened ([`open`]), a
//! session for the run's algorithm ([`session`]), and what it learnt
//! stored ([`finish`]). The clap subcommands and the coreutils front end
//! differ only in how they say things (`say`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fastsum::cache::{Cache, CacheSession, RunStats};
use fastsum::Algorithm;

/// The cache file a command uses: `given` (`--cache=PATH`), else the
/// default; `Err` is the message (`cache: no $XDG_CACHE_HOME ...`) when
/// there is no home for the default.
pub fn path(given: Option<PathBuf>) -> Result<PathBuf, String> {
    Cache::resolve_path(given).map_err(|e| format!("cache: {e}"))
}

/// Where what S3 said of its objects is kept: beside the digest cache at
/// `path`, as `PATH.s3` (`diff s3://` and `-r s3://` share it).
pub fn s3_claims(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".s3");
    PathBuf::from(name)
}

/// Opens the cache at `path`, saying once if it had to be rebuilt; a cache
/// that cannot be opened at all is said and the run goes on without it.
pub fn open(path: &Path, say: &mut dyn FnMut(&str)) -> Option<Cache> {
    match Cache::open(path) {
        Ok(mut cache) => {
            notice(&mut cache, say);
            Some(cache)
        }
        Err(e) => {
            say(&format!("cache: {e}; going on without it"));
            None
        }
    }
}

/// A session of `cache` for a run of `algorithm` over `roots` (the one
/// algorithm value the command resolved: the stages are built for it too,
/// and the library refuses a session of another); one that cannot be
/// loaded is said, and the run goes on without it.
pub fn session(
    cache: &mut Cache,
    algorithm: Algorithm,
    roots: &[PathBuf],
    say: &mut dyn FnMut(&str),
) -> Option<Arc<CacheSession>> {
    let loaded = cache.session(algorithm, roots);
    notice(cache, say);
    match loaded {
        Ok(session) => Some(Arc::new(session)),
        Err(e) => {
            say(&format!("cache: {e}; going on without it"));
            None
        }
    }
}

/// Stores what `session` learnt (once every other holder of it is gone:
/// the run is over) and gives the run's counts.
pub fn finish(
    cache: &mut Cache,
    session: Arc<CacheSession>,
    say: &mut dyn FnMut(&str),
) -> Option<RunStats> {
    let session = Arc::into_inner(session)?;
    let finished = session.finish(cache);
    notice(cache, say);
    finished.map_err(|e| say(&format!("cache: {e}"))).ok()
}

/// Says, once, that the cache file was damaged and moved aside (found on
/// opening, loading or storing).
pub fn notice(cache: &mut Cache, say: &mut dyn FnMut(&str)) {
    if let Some(notice) = cache.take_notice() {
        say(&notice);
    }
}

/// A subcommand's cache for one run: the file and the session, each
/// `None` when not asked for or when it could not be opened (said with
/// `who`, `fastsum diff`, and the run goes on uncached).
pub type Opened = (Option<Cache>, Option<Arc<CacheSession>>);

/// `--cache[=PATH]` of a subcommand (`asked`): the cache and a session for
/// `algorithm` under `roots`; see [`Opened`]. `None` when `--cache` asks
/// for the default and there is no home for it: said, and the command
/// ends with its trouble status.
pub fn open_session(
    who: &str,
    asked: &Option<Option<PathBuf>>,
    algorithm: Algorithm,
    roots: &[PathBuf],
) -> Option<Opened> {
    let Some(given) = asked else {
        return Some((None, None));
    };
    let mut say = |m: &str| eprintln!("{who}: {m}");
    let path = path(given.clone()).map_err(|m| say(&m)).ok()?;
    let Some(mut cache) = open(&path, &mut say) else {
        return Some((None, None));
    };
    let session = session(&mut cache, algorithm, roots, &mut say);
    Some((Some(cache), session))
}

/// Stores what a subcommand's session learnt (see [`finish`]).
pub fn close_session(who: &str, opened: Opened) {
    if let (Some(mut cache), Some(session)) = opened {
        finish(&mut cache, session, &mut |m| eprintln!("{who}: {m}"));
    }
}
